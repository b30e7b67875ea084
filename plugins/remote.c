/* remote.c - the plugin inside slurmstepd, one process per job step.
 *
 *   task_post_fork (first task)  find the job's cgroup from the kernel's
 *                                /proc/PID/cgroup, register the job with
 *                                the node agent (the first step to come
 *                                does it; later ones are told it exists)
 *                                and start this step's accounting;
 *   task_exit (last local task)  end the step's accounting; in the batch
 *                                step, and in an srun step of a job with
 *                                no batch script, print the summary while
 *                                the user's output is still connected;
 *   exit (extern step)           the job is over on this node: one
 *                                deregister with the metadata taken at
 *                                the step's start; the agent writes the
 *                                record (or a note is left for it).
 *
 * Everything that talks to the agent has a short timeout, and every
 * failure is logged and ignored: measurement never fails, delays or kills
 * a job (design invariant 1).  slurmctld, which can block a call
 * for MessageTimeout, is asked only in a child process with a deadline
 * (child_call.c): at the batch step's task exit when a task was killed
 * by a signal, to tell CANCELLED from TIMEOUT; and, with jobinfo = no
 * only, at the extern step's start for the job's metadata (job_start.c).
 * With jobinfo = yes (the default) the agent's ceems-jobinfo asks
 * slurmctld for the job's start time and metadata, and for its final
 * state at its end, outside every step.
 * User-visible text is printed with slurm_spank_log, which reaches the
 * job's output only from batch and srun steps. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "cgroup/cgroup_path.h"
#include "base/conf.h"
#include "base/fileio.h"
#include "base/node_name.h"
#include "model/job.h"
#include "client/jobside.h"
#include "base/log.h"
#include "plugin.h"
#include "summary/summary.h"

/* The agent answers in about a millisecond; this bounds the cost of an
 * agent that hangs, not the normal case.  A busy node (or a sanitizer
 * build) can take a few hundred milliseconds at a job's end, when many
 * jobs end together. */
#define AGENT_TIMEOUT_MS 1000

static struct {
	bool active;
	uint32_t jobid;
	uint32_t stepid;
	char step[CEEMS_STEP_ID_MAX];
	uint32_t uid;
	struct ceems_plugin_args args;
	struct ceems_config config;
	bool cgroup_found;
	bool node_known;		/* config's %n expanded (node_config) */
	bool node_ok;			/* ... and it could be */
	struct ceems_cgroup_job cgroup;
	bool step_started;
	bool have_meta;			/* extern step: META taken at start */
	struct ceems_job_meta meta;
	uint32_t local_tasks;
	bool tasks_known;	/* local_tasks is Slurm's, not the default */
	uint32_t tasks_exited;
	int exit_status;		/* of the last task that failed, else 0 */
	bool have_exit_status;
} step;

int
ceems_remote_init(spank_t sp, const struct ceems_plugin_args *args)
{
	char name[16];

	memset(&step, 0, sizeof(step));
	step.args = *args;
	if (spank_get_item(sp, S_JOB_ID, &step.jobid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step.stepid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &step.uid) != ESPANK_SUCCESS) {
		ceems_error("cannot read the job and step ids; this step is not measured");
		return -1;
	}
	snprintf(step.step, sizeof(step.step), "%s",
		 ceems_common_step_name(step.stepid, name, sizeof(name)));
	/* Unknown, the step's tasks are not sent to the agent (NTasks
	 * stays empty); the end of the step is still seen at its one task's
	 * exit. */
	step.tasks_known = spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT,
					  &step.local_tasks) == ESPANK_SUCCESS &&
			   step.local_tasks > 0;
	if (!step.tasks_known)
		step.local_tasks = 1;
	ceems_common_load_config(step.args.config_path, &step.config);
	step.active = true;
	return 0;
}

/* The job's tasks learn where the node agent listens
 * (CEEMS_AGENT_SOCKET), so that ceems-mark and libceems_mark reach it
 * wherever the site put it (doc/marks.md).  A value the job set itself
 * stays: it only points the job's own marks elsewhere. */
int
ceems_remote_user_init(spank_t sp)
{
	static struct ceems_config config;
	char node[CEEMS_NODE_NAME_MAX];

	if (!step.active)
		return 0;
	/* The tasks' cgroup is not known yet: a %n in the path is this
	 * host's node, as for a step that finds no cgroup. */
	config = step.config;
	if (ceems_common_expand_config(&config,
			ceems_common_host_node(node, sizeof(node))) < 0)
		return 0;
	if (spank_setenv(sp, "CEEMS_AGENT_SOCKET", config.socket_path, 0) !=
	    ESPANK_SUCCESS)
		ceems_debug("job %u: CEEMS_AGENT_SOCKET not set for its tasks",
			    step.jobid);
	return 0;
}

/* This node's name into the config's paths, once: the node whose slurmd
 * made the job's cgroup (slurm_NODE: the node of the slurmd that started
 * this slurmstepd, which may be one of several on the host), else the
 * host's.  Not from the job's environment: its user controls that.
 * False when the paths cannot be made (logged): the step then talks to
 * no agent and leaves no note, which would go to a literal %n path. */
static bool
node_config(void)
{
	char node[CEEMS_NODE_NAME_MAX];
	const char *name = NULL;

	if (step.node_known)
		return step.node_ok;
	step.node_known = true;
	for (int c = 0; step.cgroup_found && name == NULL && c <= CEEMS_CG_NCONTROLLERS; c++) {
		const char *path = c < CEEMS_CG_NCONTROLLERS ? step.cgroup.v1[c] :
				   step.cgroup.unified;

		if (ceems_node_name_from_cgroup(path, node, sizeof(node)) == 0)
			name = node;
	}
	if (name == NULL)
		name = ceems_common_host_node(node, sizeof(node));
	step.node_ok = ceems_common_expand_config(&step.config, name) == 0;
	return step.node_ok;
}

/* Find the job's cgroup from the cgroup membership of PID, register the
 * job (harmless when an earlier step did) and start this step's
 * accounting: lib/client/jobside.c, which tests/bench/bench_plugin times. */
static int
start_accounting(spank_t sp, pid_t pid)
{
	struct ceems_agent_job_spec spec;
	uint64_t mem_mb = 0;
	char err[512];
	int r;

	if (ceems_jobside_find_cgroup(pid, step.jobid, &step.cgroup, err,
				      sizeof(err)) < 0) {
		ceems_warning("job %u: %s", step.jobid, err);
		return -1;
	}
	step.cgroup_found = true;
	if (!node_config())
		return -1;
	memset(&spec, 0, sizeof(spec));
	spec.jobid = step.jobid;
	spec.uid = step.uid;
	spec.cgroup = step.cgroup;
	/* The node's share of the job's memory; cores come from the job's
	 * cpuset, which the agent reads itself. */
	if (spank_get_item(sp, S_JOB_ALLOC_MEM, &mem_mb) == ESPANK_SUCCESS)
		spec.alloc_mem_bytes = mem_mb << 20;
	spec.series = ceems_options_user()->series;
	spec.perf = ceems_options_user()->perf;
	r = ceems_jobside_start(step.config.socket_path, &spec, step.step,
				step.tasks_known ? step.local_tasks : 0,
				AGENT_TIMEOUT_MS, err, sizeof(err));
	if (r < 0)
		ceems_warning("job %u step %s: %s", step.jobid, step.step, err);
	else
		step.step_started = true;
	/* The extern step ends the job: its metadata are taken now, in the
	 * step's own time, what the node knows here and what slurmctld
	 * says in a child process (job_start.c), so that the job's end asks no one.
	 * The step that registered the job tells the agent its Slurm start
	 * time from the same answer. */
	if (step.stepid == SLURM_EXTERN_CONT) {
		ceems_slurm_job_meta(sp, step.jobid, false, step.config.cluster,
				      &step.meta);
		/* The extern step's environment has no node list: the node's
		 * Slurm name comes from slurmctld's, at the end. */
		if (step.meta.nodes[0] == '\0')
			step.meta.node[0] = '\0';
		step.have_meta = true;
	}
	/* With jobinfo = yes the agent asks slurmctld through
	 * ceems-jobinfo (tools/jobinfo): no child of this step does,
	 * unless the agent could not be told of the job (it is away):
	 * then the note of the job the extern step leaves at its end
	 * carries what slurmctld said. */
	if ((!step.config.jobinfo && r > 0) ||
	    (step.stepid == SLURM_EXTERN_CONT &&
	     (!step.config.jobinfo || r < 0))) {
		uint32_t nodeid = 0;

		spank_get_item(sp, S_JOB_NODEID, &nodeid);
		ceems_job_start_lookup(&step.config, &spec, nodeid, r > 0,
				       AGENT_TIMEOUT_MS);
	}
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
	return start_accounting(sp, pid);
}

/* The summary the user asked for, else the site's default. */
static enum ceems_summary_style
summary_style(void)
{
	const struct ceems_user_options *o = ceems_options_user();

	return o->summary_given ? o->summary : step.args.summary;
}

/* Is this the step that speaks for the job to its user?  The batch step
 * does; an srun step only when the job has no batch script (an srun or
 * salloc job), where srun's stderr is the user's terminal. */
static bool
prints_summary(spank_t sp)
{
	char value[16];

	if (step.stepid == SLURM_BATCH_SCRIPT)
		return true;
	if (step.stepid == SLURM_EXTERN_CONT || step.stepid > SLURM_MAX_NORMAL_STEP_ID)
		return false;
	/* Steps launched from a batch script inherit its environment. */
	return spank_getenv(sp, "SLURM_JOB_CPUS_PER_NODE", value, sizeof(value)) !=
		       ESPANK_SUCCESS ||
	       spank_getenv(sp, "ENVIRONMENT", value, sizeof(value)) !=
		       ESPANK_SUCCESS ||
	       strcmp(value, "BATCH") != 0;
}

/* In a child (child_call.c): the job's metadata with slurmctld's word. */
static void
controller_meta_main(void *arg, void *answer, size_t size, int fd)
{
	ceems_slurm_job_meta(arg, step.jobid, true, step.config.cluster,
			      answer);
	ceems_child_call_answer(fd, answer, size);
}

/* The job's metadata with what slurmctld says of it, if it says it
 * within CEEMS_CONTROLLER_WAIT_MS; else the node's alone (the state
 * then comes from the task's status). */
static void
controller_meta(spank_t sp, struct ceems_job_meta *meta)
{
	struct ceems_child_call child;
	int r;

	r = ceems_child_call_start(&child, controller_meta_main, sp,
				   sizeof(*meta));
	if (r == 0)
		r = ceems_child_call_finish(&child, meta, sizeof(*meta),
					    CEEMS_CONTROLLER_WAIT_MS);
	if (r == 0)
		return;
	ceems_info("job %u: slurmctld did not say within %d ms how the job ended (%s); "
		   "the summary says what its tasks did", step.jobid,
		   CEEMS_CONTROLLER_WAIT_MS, strerror(-r));
	ceems_slurm_job_meta(sp, step.jobid, false, step.config.cluster, meta);
}

/* This node's Slurm name, as it stands in the job's node list: the
 * SLURMD_NODENAME slurmstepd sets in the step's environment (over the
 * user's), else the name its paths took. */
static const char *
self_node(const struct ceems_job_meta *meta)
{
	if (meta->node[0] != '\0')
		return meta->node;
	return step.config.node[0] != '\0' ? step.config.node : NULL;
}

/* The work the job reported, after the block (the full style only):
 * this node's energy over this node's marks. */
static void
print_work(const struct ceems_agent_job_report *report,
	   const struct ceems_agent_client_work *work)
{
	static char text[2048];
	char *line, *save = NULL;

	if (summary_style() != CEEMS_SUMMARY_FULL ||
	    ceems_summary_work_format_history(report, &work->marks,
			&work->history, work->job_name, text, sizeof(text)) <= 0)
		return;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		slurm_spank_log("%s", line);
}

static void
print_summary(spank_t sp, const struct ceems_agent_job_report *report,
	      const struct ceems_agent_client_work *work)
{
	static char text[8192];
	struct ceems_job_meta meta;
	enum ceems_summary_style style = summary_style();
	char *line, *save = NULL;
	int n;

	if (style == CEEMS_SUMMARY_NONE || !prints_summary(sp))
		return;
	/* A task that exited says COMPLETED or FAILED itself: no RPC at
	 * the step's end, where slurmctld may hang.  A task killed by a
	 * signal was cancelled, timed out, preempted...: only slurmctld,
	 * which has just decided it, knows which; asked with a deadline. */
	if (step.have_exit_status && WIFSIGNALED(step.exit_status))
		controller_meta(sp, &meta);
	else
		ceems_slurm_job_meta(sp, step.jobid, false,
				      step.config.cluster, &meta);
	ceems_slurm_job_outcome(&meta, step.exit_status, step.have_exit_status,
				 (report->usage.present & CEEMS_CGF_OOM_KILLS) ?
				 report->usage.oom_kills : 0);
	/* A job of several nodes: the whole job's figures, gathered from
	 * its other nodes' agents now, else this node's. */
	n = node_config() ?
	    ceems_gather_summary(sp, &step.config, &meta, self_node(&meta),
				 report, style, text, sizeof(text)) : -1;
	if (n < 0)
		n = ceems_summary_format_advice(&meta, report, &work->advice,
						style, text, sizeof(text));
	if (n < 0) {
		ceems_warning("job %u: summary does not fit in %zu bytes",
			      step.jobid, sizeof(text));
		return;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		slurm_spank_log("%s", line);
	print_work(report, work);
}

int
ceems_remote_task_exit(spank_t sp)
{
	static struct ceems_agent_job_report report;
	static struct ceems_agent_client_work work;
	char err[256];
	int status = 0;

	if (!step.active)
		return 0;
	if (spank_get_item(sp, S_TASK_EXIT_STATUS, &status) == ESPANK_SUCCESS &&
	    (!step.have_exit_status || status != 0)) {
		step.exit_status = status;
		step.have_exit_status = true;
	}
	if (++step.tasks_exited < step.local_tasks)
		return 0;
	/* A step the agent was away for at its start is still asked: the
	 * agent adopts the jobs that started while it was away, and gives
	 * their figures from its return on. */
	if (!step.step_started && !step.cgroup_found)
		return 0;
	if (!node_config())
		return 0;
	step.step_started = false;
	/* The job's name, for the step that prints the summary: its work is
	 * compared with its user's earlier runs of that name.  The user's
	 * own runs only, so the step's environment serves. */
	memset(&work, 0, sizeof(work));
	if (!prints_summary(sp) ||
	    spank_getenv(sp, "SLURM_JOB_NAME", work.job_name,
			 sizeof(work.job_name)) != ESPANK_SUCCESS)
		work.job_name[0] = '\0';
	/* The step's status goes with it: the agent settles the job's
	 * exit code and state from it (slurmctld is asked at the start). */
	if (ceems_agent_client_step_end_marks(step.config.socket_path,
			step.jobid, step.step, step.have_exit_status,
			step.exit_status, AGENT_TIMEOUT_MS, &report, &work,
			err, sizeof(err)) < 0) {
		ceems_warning("job %u step %s: no figures from the node agent: %s",
			      step.jobid, step.step, err);
		if (summary_style() != CEEMS_SUMMARY_NONE && prints_summary(sp))
			slurm_spank_log("ceems: job %u was not measured on this node (node agent unavailable)",
					step.jobid);
		return 0;
	}
	print_summary(sp, &report, &work);
	return 0;
}

int
ceems_remote_exit(spank_t sp)
{
	static struct ceems_agent_job_report report;
	struct ceems_job_meta meta;

	/* slurmctld's answer, if it came within the deadline; the child
	 * is gone after this. */
	ceems_job_start_join();
	if (!step.active)
		return 0;
	step.active = false;
	if (step.stepid != SLURM_EXTERN_CONT)
		return 0;
	/* The extern step is the last of the job on this node: one call
	 * ends it with the agent, with the metadata taken at its start
	 * (what slurmctld said then fills what the node did not know). */
	if (step.have_meta)
		meta = step.meta;
	else
		ceems_slurm_job_meta(sp, step.jobid, false, step.config.cluster,
				      &meta);
	(void)ceems_job_start_fill(&meta);
	ceems_slurm_job_node(sp, &meta);
	meta.end_time = (int64_t)time(NULL);
	if (!node_config())
		return 0;
	if (ceems_finish_end_job(&step.config, &meta, "extern", AGENT_TIMEOUT_MS,
				 &report) == 0) {
		ceems_agent_series_free(report.series);
		report.series = NULL;
	}
	return 0;
}
