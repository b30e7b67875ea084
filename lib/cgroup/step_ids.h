/* step_ids.h - which Slurm job and step a cgroup directory or a
 * slurmstepd belongs to, from the names Slurm gives them: a job's
 * directory "job_J" or, from Slurm 26.05 on cgroup v2, the job's SLUID
 * ("sEKNKTV3WPV500", which does not contain the job id); a step's
 * "step_batch", "step_extern", "step_interactive", "step_N"; a
 * slurmstepd's process title "slurmstepd: [J.S]". */
#ifndef CEEMS_STEP_IDS_H
#define CEEMS_STEP_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether NAME (LEN bytes) is a SLUID: 's' and 13 upper-case letters or
 * digits. */
bool ceems_step_ids_is_sluid(const char *name, size_t len);

/* Whether NAME (LEN bytes) is a step's directory: "step_" and "batch",
 * "extern", "interactive" or a number. */
bool ceems_step_ids_is_step_dir(const char *name, size_t len);

/* Whether ID is a step as the agent names it: lower-case letters, digits
 * and '+' ("batch", "0", "0+1" of a heterogeneous step), not empty. */
bool ceems_step_ids_name_ok(const char *id);

/* The job and step of a slurmstepd, from a line of its /proc/self/cgroup
 * (".../job_42/step_batch") or from its process title ("slurmstepd:
 * [42.batch]", as /proc/PID/cmdline holds it).  A SLUID-named path
 * gives no job id: its slurmstepd's title does.  Returns 0, or -EINVAL
 * when TEXT names none.  STEP gets the agent's step id: "batch",
 * "extern", "interactive", "0"... */
int ceems_step_ids_from_cgroup(const char *text, uint32_t *jobid,
			       char *step, size_t step_size);
int ceems_step_ids_from_title(const char *text, uint32_t *jobid,
			      char *step, size_t step_size);

#endif
