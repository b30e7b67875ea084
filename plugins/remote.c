/* remote.c - the plugin inside slurmstepd (one process per job step):
 * resolve the job's cgroup from a task's /proc/PID/cgroup when the task
 * starts, and report on it when the step's tasks end.  Output printed with
 * slurm_spank_log reaches the user only from batch and srun steps, and for
 * srun steps only until task_exit (research/slurm.md section 1.8). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "cgroup_path.h"
#include "fileio.h"
#include "log.h"
#include "plugin.h"

static struct {
	bool active;
	uint32_t jobid;
	uint32_t stepid;
	bool cgroup_found;
	bool reported;
	struct ceems_cgroup_job cgroup;
	struct ceems_plugin_args args;
} step;

int
ceems_remote_init(spank_t sp, const struct ceems_plugin_args *args)
{
	memset(&step, 0, sizeof(step));
	step.args = *args;
	if (spank_get_item(sp, S_JOB_ID, &step.jobid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step.stepid) != ESPANK_SUCCESS) {
		ceems_error("cannot read the job and step ids; this step is not measured");
		return -1;
	}
	step.active = true;
	return 0;
}

/* Find the job's cgroup from the cgroup membership of PID. */
static int
resolve_cgroup(pid_t pid)
{
	char path[64], text[4096];
	ssize_t n;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = ceems_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		ceems_warning("job %u: cannot read %s: %s", step.jobid, path,
			      strerror((int)-n));
		return -1;
	}
	ret = ceems_cgroup_job_from_proc(text, step.jobid, &step.cgroup);
	if (ret < 0) {
		ceems_warning("job %u: %s does not place pid %d in a job_%u cgroup (%s); is ProctrackType=proctrack/cgroup set?",
			      step.jobid, path, (int)pid, step.jobid,
			      strerror(-ret));
		return -1;
	}
	step.cgroup_found = true;
	return 0;
}

int
ceems_remote_task_post_fork(spank_t sp)
{
	pid_t pid;
	spank_err_t err;

	if (!step.active || step.cgroup_found)
		return 0;
	err = spank_get_item(sp, S_TASK_PID, &pid);
	/* The extern step has no task: slurmstepd itself is in the job. */
	if (err == ESPANK_NOT_TASK)
		pid = getpid();
	else if (err != ESPANK_SUCCESS)
		return -1;
	return resolve_cgroup(pid);
}

static const char *
job_cgroup_path(void)
{
	if (step.cgroup.version == CEEMS_CGROUP_V2)
		return step.cgroup.unified;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (step.cgroup.v1[c][0] != '\0')
			return step.cgroup.v1[c];
	return "";
}

int
ceems_remote_task_exit(spank_t sp)
{
	char namebuf[16];
	const char *name;

	(void)sp;
	if (!step.active || step.reported ||
	    step.args.summary == CEEMS_SUMMARY_NONE)
		return 0;
	step.reported = true;
	name = ceems_plugin_step_name(step.stepid, namebuf, sizeof(namebuf));
	if (!step.cgroup_found) {
		slurm_spank_log("ceems: job %u step %s not measured: job cgroup not found",
				step.jobid, name);
		return 0;
	}
	slurm_spank_log("ceems: job %u step %s cgroup %s (v%d)", step.jobid,
			name, job_cgroup_path(), (int)step.cgroup.version);
	return 0;
}

int
ceems_remote_exit(spank_t sp)
{
	(void)sp;
	step.active = false;
	return 0;
}
