/* cgroup_stepd.h - on cgroup v2, the CPU time of Slurm's own step daemons
 * inside a job's (or a step's) cgroup, to be taken out of the job's.
 *
 * Slurm's v2 plugin puts each step's slurmstepd in step_S/slurm, beside
 * the user's tasks in step_S/user, so a job's cpu.stat (and a step's)
 * counts slurmstepd's CPU time too; on v1 slurmstepd is outside the
 * job's cpuacct cgroup.  A reader of a v2 cgroup keeps the cpu.stat of
 * each slurm/ sub-cgroup open (D/slurm and D/step_* /slurm) and gives the
 * cgroup's CPU time less theirs.  A step's cgroup goes away with the
 * step while the job's cpu.stat keeps what it used: the last reading of a
 * removed slurm/ stays subtracted.  Internal to cgroup_stats.c. */
#ifndef CEEMS_CGROUP_STEPD_H
#define CEEMS_CGROUP_STEPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_stats.h"

/* The slurm/ sub-cgroups one reader follows at most: a job's steps
 * running at once (the agent follows as many steps per job). */
#define CEEMS_CGROUP_STEPD_MAX 64

struct ceems_cgroup_stepd;

/* Look below the cgroup directory DIR for slurm/ sub-cgroups not yet
 * followed (DIR/slurm, DIR/step_* /slurm) and open their cpu.stat.  *SP
 * is allocated at the first one found (it stays NULL where there is
 * none, as on any tree that is not Slurm's v2 one).  Returns how many
 * were added. */
unsigned ceems_cgroup_stepd_scan(struct ceems_cgroup_stepd **sp,
				 const char *dir);

/* Read the followed cpu.stat files (BUF, SIZE: the caller's scratch), a
 * removed cgroup's last reading kept, and take their CPU time out of
 * ST's present CPU fields.  What is given never goes below what this
 * set gave before: reads of the job and of its slurm/ cgroups are not
 * one instant, and a slurm/ found late takes out CPU time already
 * given. */
void ceems_cgroup_stepd_subtract(struct ceems_cgroup_stepd *s, char *buf,
				 size_t size, struct ceems_cgroup_stats *st);

/* The files S keeps open (0 for NULL). */
unsigned ceems_cgroup_stepd_nfiles(const struct ceems_cgroup_stepd *s);

void ceems_cgroup_stepd_free(struct ceems_cgroup_stepd *s);

#endif
