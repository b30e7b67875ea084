/* jobside.c - the job-side work of the SPANK plugin, free of Slurm, so
 * that the plugin and its latency benchmark run the same code (see
 * jobside.h). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fileio.h"
#include "jobside.h"
#include "storage.h"

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
	    ceems_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_mounts_from_mountinfo(text, &mounts) < 0)
		return;
	ceems_cgroup_job_fill_siblings(cgroup, &mounts, "");
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
	n = ceems_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		snprintf(err, err_size, "cannot read %s: %s", path,
			 strerror((int)-n));
		return (int)n;
	}
	ret = ceems_cgroup_job_from_proc(text, jobid, cgroup);
	if (ret < 0) {
		snprintf(err, err_size,
			 "%s does not place pid %d in a job_%u cgroup (%s); is ProctrackType=proctrack/cgroup set?",
			 path, (int)pid, jobid, strerror(-ret));
		return ret;
	}
	fill_siblings(cgroup);
	return 0;
}

int
ceems_jobside_start(const char *socket_path,
		    const struct ceems_agent_job_spec *spec, const char *step,
		    int timeout_ms, char *err, size_t err_size)
{
	char why[256];
	bool registered;
	int r;

	r = ceems_agent_register_job(socket_path, spec, timeout_ms, why,
				     sizeof(why));
	if (r < 0 && r != -EEXIST) {
		snprintf(err, err_size, "not registered with the node agent at %s: %s",
			 socket_path, why);
		return r;
	}
	registered = r == 0;
	r = ceems_agent_step_start_call(socket_path, spec->jobid, step,
					timeout_ms, why, sizeof(why));
	if (r < 0) {
		snprintf(err, err_size, "step %s not started with the node agent: %s",
			 step, why);
		return r;
	}
	return registered ? 1 : 0;
}

int
ceems_jobside_finish(const struct ceems_config *config,
		     const struct ceems_job_meta *meta,
		     const struct ceems_agent_job_report *report,
		     const char *by, int64_t now,
		     struct ceems_job_record *record, char *err,
		     size_t err_size)
{
	ceems_record_build(record, meta, report, by, now);
	return ceems_storage_store(config, record, err, err_size);
}
