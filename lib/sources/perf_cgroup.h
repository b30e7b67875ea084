/* perf_cgroup.h - the perf_event cgroup of a job, which perf_event_open
 * counts in cgroup mode.
 *
 * On cgroup v2 it is the job's own directory.  On v1 it is the job's
 * path in the perf_event hierarchy when something made one there; Slurm
 * does not (its v1 plugins use cpuset, cpuacct, memory, devices,
 * freezer).  Then, when adoption is on, the agent makes one itself,
 * ceems_perf/job_J under the perf_event hierarchy's root (the v1
 * perf_event mount, or the unified tree, where perf_event lives when no
 * v1 hierarchy holds it), and moves the job's processes there, at the
 * job's registration and at each step's start (Slurm calls the plugin
 * after forking a step's tasks and before they run the user's program:
 * what they start later follows them).  slurmstepd stays where it is.  That tree holds no other
 * controller on such a node: the move changes only what perf counts. */
#ifndef CEEMS_PERF_CGROUP_H
#define CEEMS_PERF_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_path.h"

#define CEEMS_PERF_ADOPT_DIR "ceems_perf"

/* Where perf_event cgroups are: the mount point of a v1 hierarchy with
 * the perf_event controller, "" when none (then the unified tree, when
 * mounted).  From the text of /proc/self/mountinfo.  0, or -EINVAL. */
int ceems_perf_cgroup_mount_from_mountinfo(const char *text, char *v1_mount,
				    size_t size);

/* The root directory perf_event cgroups are made in (absolute, PREFIX
 * first) for adoption: the v1 perf_event mount, else the unified mount.
 * 0, -ENOENT when neither, -ENAMETOOLONG. */
int ceems_perf_cgroup_root(const struct ceems_cgroup_mounts *mounts,
		    const char *perf_v1_mount, const char *prefix,
		    char *out, size_t size);

/* Open (O_DIRECTORY) the perf_event cgroup of job JOB (id JOBID).  When
 * no hierarchy holds one and ADOPT is set, make ROOT/ceems_perf/job_J
 * and move the job's processes there; its path goes into ADOPTED (else
 * ADOPTED is "").  The descriptor, or -errno (-ENOENT: none holds the
 * job and adoption is off or impossible). */
int ceems_perf_cgroup_open(const struct ceems_cgroup_job *job, uint32_t jobid,
			   const struct ceems_cgroup_mounts *mounts,
			   const char *perf_v1_mount, const char *prefix,
			   bool adopt, char *adopted, size_t adopted_size);

/* Move every process of job JOB's v1 cgroups (its steps' included) into
 * the cgroup directory ADOPTED, but Slurm's own (slurmstepd): they are
 * not the job's work.  Returns how many were moved, or -errno
 * when ADOPTED cannot be written. */
int ceems_perf_cgroup_adopt(const char *adopted,
			    const struct ceems_cgroup_job *job,
			    const struct ceems_cgroup_mounts *mounts,
			    const char *prefix);

/* Remove every job_* directory under ROOT (the adoption directory) that
 * holds no process any more: what an agent stopped or restarted while
 * jobs ran left behind.  Returns how many went. */
int ceems_perf_cgroup_sweep(const char *root);

/* Remove ADOPTED once the job's processes are gone (a directory still
 * holding processes stays; the next job of that id reuses it). */
void ceems_perf_cgroup_remove(const char *adopted);

#endif
