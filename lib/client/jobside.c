/* jobside.c - the job-side work of the SPANK plugin, free of Slurm, so
 * that the plugin and its latency benchmark run the same code (see
 * jobside.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/agent_client.h"
#include "base/fileio.h"
#include "client/jobside.h"
#include "record/job_note.h"

/* On v1, slurmstepd is not in the job's cpuacct cgroup (only tasks are):
 * take the controllers it lacks from their siblings, where they exist.
 * Static: mountinfo of a busy node runs to tens of KiB, too much for
 * slurmstepd's stack, and slurmstepd calls this from one thread. */
static void
fill_siblings(struct ceems_cgroup_job *cgroup)
{
	static char text[65536];
	struct ceems_cgroup_mounts mounts;

	if (cgroup->version != CEEMS_CGROUP_V1 ||
	    ceems_fileio_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mounts) < 0)
		return;
	ceems_cgroup_path_job_fill_siblings(cgroup, &mounts, "");
}

int
ceems_jobside_find_cgroup(pid_t pid, uint32_t jobid,
			  struct ceems_cgroup_job *cgroup, char *err,
			  size_t err_size)
{
	char path[64], text[4096];
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = ceems_fileio_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		snprintf(err, err_size, "cannot read %s: %s", path,
			 strerror((int)-n));
		return (int)n;
	}
	ret = ceems_cgroup_path_job_from_proc(text, jobid, cgroup);
	if (ret < 0) {
		snprintf(err, err_size,
			 "%s does not place pid %d in a cgroup of job %u (job_%u, or on cgroup v2 its SLUID above a step's directory) (%s); is ProctrackType=proctrack/cgroup set?",
			 path, (int)pid, jobid, jobid, strerror(-ret));
		return ret;
	}
	fill_siblings(cgroup);
	return 0;
}

int
ceems_jobside_start(const char *socket_path,
		    const struct ceems_agent_job_spec *spec, const char *step,
		    uint32_t tasks, int timeout_ms, char *err, size_t err_size)
{
	char why[256];
	bool registered;
	int r;

	/* One request: one connection and one wait for the agent in the
	 * step's slurmstepd.  An agent that takes no task count refuses it
	 * as invalid: then the same without it (the step's tasks stay
	 * unknown).  An agent that takes no step with a registration
	 * refuses that as invalid too: then two, and no task count, which
	 * is newer than a register's step. */
	r = ceems_agent_client_register_start(socket_path, spec, step, tasks,
					      timeout_ms, why, sizeof(why));
	if (r == -EINVAL && tasks > 0)
		r = ceems_agent_client_register_start(socket_path, spec, step, 0,
						      timeout_ms, why, sizeof(why));
	if (r >= 0)
		return r;
	if (r != -EINVAL) {
		/* The agent's sentence says which of the two it refused. */
		if (r == -EEXIST)
			snprintf(err, err_size, "step %s not started with the node agent: %s",
				 step, why);
		else
			snprintf(err, err_size, "not registered with the node agent at %s: %s",
				 socket_path, why);
		return r;
	}
	r = ceems_agent_client_register_job(socket_path, spec, timeout_ms, why,
					    sizeof(why));
	if (r < 0 && r != -EEXIST) {
		snprintf(err, err_size, "not registered with the node agent at %s: %s",
			 socket_path, why);
		return r;
	}
	registered = r == 0;
	r = ceems_agent_client_step_start(socket_path, spec->jobid, step, 0,
					  timeout_ms, why, sizeof(why));
	if (r < 0) {
		snprintf(err, err_size, "step %s not started with the node agent: %s",
			 step, why);
		return r;
	}
	return registered ? 1 : 0;
}

int
ceems_jobside_end(const char *socket_path, const char *note_dir,
		  const struct ceems_job_meta *meta, const char *by,
		  int timeout_ms, struct ceems_agent_job_report *report,
		  char *err, size_t err_size)
{
	static struct ceems_job_note note;
	char why[256], werr[256];
	int r;

	r = ceems_agent_client_end_job(socket_path, meta, by, timeout_ms, report, why,
				       sizeof(why));
	/* An agent older than the dependency in a job's metadata refuses it
	 * as invalid (during an upgrade, before the agent restarts): then
	 * the same without it; the record then says nothing of a chain. */
	if (r == -EINVAL && meta->dependency == CEEMS_JOB_DEPENDENCY_LISTED) {
		static struct ceems_job_meta plain;

		plain = *meta;
		plain.dependency = CEEMS_JOB_DEPENDENCY_UNKNOWN;
		r = ceems_agent_client_end_job(socket_path, &plain, by, timeout_ms,
					       report, why, sizeof(why));
	}
	if (r == 0)
		return 0;
	memset(&note, 0, sizeof(note));
	note.meta = *meta;
	snprintf(note.by, sizeof(note.by), "%s", by);
	/* The call's own words: a refusal (the agent did not know the
	 * job: it was away when the job started) or the transport's. */
	snprintf(note.why, sizeof(note.why),
		 "the node agent was not told of the job's end (%.200s)", why);
	if (ceems_job_note_write(note_dir, &note, werr, sizeof(werr)) < 0) {
		snprintf(err, err_size, "%s; and no note of the job could be "
			 "left for it: %s", why, werr);
		return r;
	}
	snprintf(err, err_size, "%s; a note of the job is left in %s for it",
		 why, note_dir);
	return 1;
}
