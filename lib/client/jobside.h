/* jobside.h - the work the SPANK plugin does inside slurmstepd at a job's
 * start and end, without Slurm: finding the job's cgroup, registering it
 * and its step with the node agent, and ending it (the agent writes the
 * record).  It lives
 * here, not in plugins/, so that tests/bench/bench_plugin times exactly
 * the calls the plugin makes (the job-start and job-end latency budget of
 * design invariant 1), and so that Slurm stays in plugins/. */
#ifndef CEEMS_JOBSIDE_H
#define CEEMS_JOBSIDE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup/cgroup_path.h"
#include "base/conf.h"
#include "model/job.h"
#include "model/job_spec.h"
#include "model/measure.h"

/* Find job JOBID's cgroup from the kernel's /proc/PID/cgroup of one of its
 * processes; on cgroup v1, fill the controllers PID is not in (slurmstepd
 * is not in cpuacct) from their siblings, as /proc/self/mountinfo shows
 * them.  Returns 0, or a negative errno with ERR saying why. */
int ceems_jobside_find_cgroup(pid_t pid, uint32_t jobid,
			      struct ceems_cgroup_job *cgroup, char *err,
			      size_t err_size);

/* Register SPEC's job with the agent at SOCKET_PATH (a job an earlier
 * step registered is fine) and start its step STEP, which runs TASKS
 * tasks on this node (0: not known).  Each call waits at most
 * TIMEOUT_MS.  Returns 1 when this call registered the job, 0 when it
 * was registered already, or a negative errno with ERR saying which
 * call failed and why. */
int ceems_jobside_start(const char *socket_path,
			const struct ceems_agent_job_spec *spec,
			const char *step, uint32_t tasks, int timeout_ms,
			char *err, size_t err_size);

/* The job is over on this node: deregister it with its metadata META,
 * ended BY "extern" or "epilog", in one call; the agent writes the
 * record, REPORT (the caller's: it is large) gets the final figures.
 * When the agent cannot be told (not reachable, or it does not know the
 * job), a note of the job is left in NOTE_DIR, which the agent turns
 * into a record when it is back (job_note.h).  Returns 0 (the agent took
 * the job), 1 (a note was left; ERR says why), or a negative errno (not
 * even a note: ERR says why). */
int ceems_jobside_end(const char *socket_path, const char *note_dir,
		      const struct ceems_job_meta *meta, const char *by,
		      int timeout_ms, struct ceems_agent_job_report *report,
		      char *err, size_t err_size);

#endif
