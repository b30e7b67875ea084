/* slurm_job.c - fill a job's metadata (lib/model/job.h) from Slurm: the job's
 * record in slurmctld (one RPC, in a child process at the job's start: job_start.c;
 * in the epilog), the SPANK
 * items, and the step's environment where slurmctld cannot be reached
 * (for the name and nodes only: never for what jobs are accounted by).
 * The state comes from slurmctld when it has decided one (CANCELLED,
 * TIMEOUT, ...): a cancelled and a timed-out job both end on a signal,
 * and only slurmctld knows which it was; the end time too, then, so that
 * a node that completes the job late does not end it late. */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "model/job.h"
#include "base/log.h"
#include "plugin.h"
#include "slurm_compat.h"
#include "base/text.h"

/* Every string Slurm or the system gives enters here: Slurm accepts any
 * bytes but NUL in names, and the record takes only text (text.h). */
static void
copy_string(char *dst, size_t size, const char *src)
{
	if (src != NULL)
		ceems_text_set(dst, size, src);
}

/* A state that slurmctld has decided for the job's run, or NULL while
 * the job is still running as far as it knows.  A run that ended while
 * its job waits again (or is being requeued) was requeued: by scontrol
 * requeue, a node failure or a preemption that requeues. */
static const char *
decided_state(uint32_t job_state)
{
	if (job_state & (JOB_REQUEUE | JOB_REQUEUE_HOLD))
		return "REQUEUED";
	switch (job_state & JOB_STATE_BASE) {
	case JOB_PENDING: return "REQUEUED";
	case JOB_CANCELLED: return "CANCELLED";
	case JOB_TIMEOUT: return "TIMEOUT";
	case JOB_NODE_FAIL: return "NODE_FAIL";
	case JOB_PREEMPTED: return "PREEMPTED";
	case JOB_BOOT_FAIL: return "BOOT_FAIL";
	case JOB_DEADLINE: return "DEADLINE";
	case JOB_OOM: return "OUT_OF_MEMORY";
	case JOB_FAILED: return "FAILED";
	case JOB_COMPLETE: return "COMPLETED";
	default: return NULL;
	}
}

/* A wait status into the record's exit code and signal. */
static void
outcome_from_status(struct ceems_job_meta *meta, int status)
{
	if (WIFEXITED(status)) {
		meta->exit_code = WEXITSTATUS(status);
		meta->exit_signal = 0;
	} else if (WIFSIGNALED(status)) {
		meta->exit_code = 0;
		meta->exit_signal = WTERMSIG(status);
	}
}

/* The job's GPUs on its node NODEID, from slurmctld's answer J. */
static void
gpus_from_controller(const slurm_job_info_t *j, uint32_t nodeid,
		     struct ceems_plugin_job_gpus *gpus)
{
	ceems_hostlist_t hl;
	char *host;

	if (j->gres_detail_str == NULL || nodeid >= j->gres_detail_cnt ||
	    j->gres_detail_str[nodeid] == NULL || j->nodes == NULL)
		return;
	copy_string(gpus->gres_detail, sizeof(gpus->gres_detail),
		    j->gres_detail_str[nodeid]);
	hl = slurm_hostlist_create(j->nodes);
	if (hl == NULL)
		return;
	for (uint32_t i = 0; (host = slurm_hostlist_shift(hl)) != NULL; i++) {
		if (i == nodeid)
			copy_string(gpus->node, sizeof(gpus->node), host);
		free(host);
		if (i >= nodeid)
			break;
	}
	slurm_hostlist_destroy(hl);
}

/* Job JOBID's record in slurmctld's answer MSG, NULL when it has none.
 * Asked for an array's job id or a heterogeneous job's leader,
 * slurmctld answers with every task or component: the job asked for
 * comes first in Slurm 22.05, which nothing promises. */
static const slurm_job_info_t *
job_in_answer(const job_info_msg_t *msg, uint32_t jobid)
{
	for (uint32_t i = 0; i < msg->record_count; i++)
		if (msg->job_array[i].job_id == jobid)
			return &msg->job_array[i];
	return NULL;
}

static void
from_controller(struct ceems_job_meta *meta, uint32_t jobid, uint32_t nodeid,
		struct ceems_plugin_job_gpus *gpus)
{
	job_info_msg_t *msg = NULL;
	const slurm_job_info_t *j;
	const char *state;
	bool completing;

	/* No retry: one call can already block for MessageTimeout. */
	if (compat_load_job(&msg, jobid, SHOW_DETAIL) != SLURM_SUCCESS)
		msg = NULL;
	if (msg == NULL) {
		ceems_info("job %u: slurmctld did not answer (%s); the record has what the node knows",
			   jobid, slurm_strerror(errno));
		return;
	}
	j = job_in_answer(msg, jobid);
	if (j == NULL) {
		ceems_info("job %u: slurmctld's answer has no record of it; the record has what the node knows",
			   jobid);
		slurm_free_job_info_msg(msg);
		return;
	}
	completing = (j->job_state & JOB_COMPLETING) != 0;
	copy_string(meta->cluster, sizeof(meta->cluster), j->cluster);
	copy_string(meta->account, sizeof(meta->account), j->account);
	copy_string(meta->partition, sizeof(meta->partition), j->partition);
	copy_string(meta->qos, sizeof(meta->qos), j->qos);
	copy_string(meta->name, sizeof(meta->name), j->name);
	/* While a job completes, slurmctld's NodeList and NumNodes are
	 * the nodes still completing it (the last node's epilog sees
	 * itself alone), not the job's: then the node list comes from
	 * the environment, the count from the TRES, which keeps it. */
	if (!completing)
		copy_string(meta->nodes, sizeof(meta->nodes), j->nodes);
	meta->gid = j->group_id;
	meta->submit_time = (int64_t)j->submit_time;
	state = decided_state(j->job_state);
	/* A requeued job's times are its next run's, not this one's. */
	if (state == NULL || strcmp(state, "REQUEUED") != 0)
		meta->start_time = (int64_t)j->start_time;
	if (j->time_limit != INFINITE && j->time_limit != NO_VAL)
		meta->time_limit_min = j->time_limit;
	if (!completing)
		meta->nnodes = j->num_nodes;
	meta->alloc_cpus = j->num_cpus;
	if (j->array_task_id != NO_VAL && j->array_job_id != 0) {
		meta->array_job_id = j->array_job_id;
		meta->array_task_id = j->array_task_id;
	}
	if (j->tres_alloc_str != NULL &&
	    ceems_job_meta_parse_tres(meta, j->tres_alloc_str) < 0)
		ceems_warning("job %u: cannot parse TRES '%s'", jobid,
			      j->tres_alloc_str);
	/* The node's index into a completing job's shorter node list
	 * would name another node. */
	if (gpus != NULL && !completing)
		gpus_from_controller(j, nodeid, gpus);
	if (state != NULL) {
		copy_string(meta->state, sizeof(meta->state), state);
		/* Once slurmctld has decided, its exit code (a wait status,
		 * as sacct's ExitCode shows it) is the job's: the extern
		 * step, which writes the record, has no status of its own. */
		if (j->exit_code != NO_VAL)
			outcome_from_status(meta, (int)j->exit_code);
		/* And its end time is the job's: a node that completes the
		 * job late (its slurmd was down) asks after it. */
		if (strcmp(state, "REQUEUED") != 0 && j->end_time > 0)
			meta->end_time = (int64_t)j->end_time;
	}
	slurm_free_job_info_msg(msg);
}

/* The step's environment, for what slurmctld could not tell and what no
 * one is accounted by (the job's name, its nodes, this node's name). */
static void
from_environment(spank_t sp, struct ceems_job_meta *meta)
{
	static const struct {
		const char *name;
		size_t offset, size;
	} vars[] = {
#define VAR(n, f) { n, offsetof(struct ceems_job_meta, f), sizeof(((struct ceems_job_meta *)0)->f) }
		/* Not the cluster, account, partition or QOS: the job's
		 * user sets its environment, and accounting goes by them. */
		VAR("SLURM_JOB_NAME", name),
		VAR("SLURM_JOB_NODELIST", nodes),
		VAR("SLURMD_NODENAME", node),
#undef VAR
	};
	char value[512];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char *field = (char *)meta + vars[i].offset;

		if (field[0] != '\0')
			continue;
		if (spank_getenv(sp, vars[i].name, value, sizeof(value)) ==
		    ESPANK_SUCCESS)
			copy_string(field, vars[i].size, value);
		else if (spank_context() == S_CTX_JOB_SCRIPT)
			/* The epilog's environment is its own: slurmd's. */
			copy_string(field, vars[i].size, getenv(vars[i].name));
	}
	/* Slurm 22.05 gives the epilog the job's nodes as SLURM_NODELIST
	 * only (later ones SLURM_JOB_NODELIST too). */
	if (meta->nodes[0] == '\0' && spank_context() == S_CTX_JOB_SCRIPT)
		copy_string(meta->nodes, sizeof(meta->nodes), getenv("SLURM_NODELIST"));
}

/* This node's Slurm name: the job's node list at this node's index.
 * The extern step's environment does not carry SLURMD_NODENAME, and
 * the host name may not be the node name (NodeName=... NodeHostname=). */
static void
node_from_nodelist(spank_t sp, struct ceems_job_meta *meta)
{
	ceems_hostlist_t hl;
	uint32_t nodeid;
	char *host;

	if (meta->node[0] != '\0' || meta->nodes[0] == '\0' ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return;
	hl = slurm_hostlist_create(meta->nodes);
	if (hl == NULL)
		return;
	for (uint32_t i = 0; (host = slurm_hostlist_shift(hl)) != NULL; i++) {
		if (i == nodeid)
			copy_string(meta->node, sizeof(meta->node), host);
		free(host);
		if (i >= nodeid)
			break;
	}
	slurm_hostlist_destroy(hl);
}

/* The cluster: the configured name, else the one slurmctld gave with the
 * job, else slurm.conf's ClusterName as slurmctld has it. */
static void
cluster_name(const char *configured, struct ceems_job_meta *meta)
{
	slurm_conf_t *conf = NULL;

	if (configured != NULL && configured[0] != '\0') {
		copy_string(meta->cluster, sizeof(meta->cluster), configured);
		return;
	}
	if (meta->cluster[0] != '\0')
		return;
	if (slurm_load_ctl_conf((time_t)0, &conf) == SLURM_SUCCESS &&
	    conf != NULL) {
		copy_string(meta->cluster, sizeof(meta->cluster),
			    conf->cluster_name);
		compat_free_conf(conf);
	}
}

void
ceems_slurm_job_controller_meta(uint32_t jobid, const char *configured_cluster,
			     struct ceems_job_meta *meta, uint32_t nodeid,
			     struct ceems_plugin_job_gpus *gpus)
{
	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	if (gpus != NULL)
		memset(gpus, 0, sizeof(*gpus));
	from_controller(meta, jobid, nodeid, gpus);
	cluster_name(configured_cluster, meta);
}

void
ceems_slurm_job_node(spank_t sp, struct ceems_job_meta *meta)
{
	char host[256];

	node_from_nodelist(sp, meta);
	if (meta->node[0] == '\0' && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		copy_string(meta->node, sizeof(meta->node), host);
	}
}

void
ceems_slurm_job_meta(spank_t sp, uint32_t jobid, bool ask_controller,
		      const char *configured_cluster,
		      struct ceems_job_meta *meta)
{
	uint32_t uid = CEEMS_UNKNOWN_U32;
	struct passwd pw, *found = NULL;
	char pwbuf[1024];

	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS)
		meta->uid = uid;
	if (ask_controller) {
		from_controller(meta, jobid, 0, NULL);
		cluster_name(configured_cluster, meta);
	} else if (configured_cluster != NULL) {
		/* No RPC at all: the lookup child asks (job_start.c). */
		copy_string(meta->cluster, sizeof(meta->cluster),
			    configured_cluster);
	}
	from_environment(sp, meta);
	ceems_slurm_job_node(sp, meta);
	if (uid != CEEMS_UNKNOWN_U32 &&
	    getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 &&
	    found != NULL)
		copy_string(meta->user, sizeof(meta->user), pw.pw_name);
	if (meta->end_time == 0)
		meta->end_time = (int64_t)time(NULL);
}

void
ceems_slurm_job_outcome(struct ceems_job_meta *meta, int status,
			 bool have_status, uint64_t oom_kills)
{
	if (have_status)
		outcome_from_status(meta, status);
	/* slurmctld's decision stands; else what the tasks did says it. */
	if (meta->state[0] != '\0' && strcmp(meta->state, "COMPLETED") != 0 &&
	    strcmp(meta->state, "FAILED") != 0)
		return;
	if (oom_kills > 0)
		snprintf(meta->state, sizeof(meta->state), "OUT_OF_MEMORY");
	else if (have_status)
		snprintf(meta->state, sizeof(meta->state), "%s",
			 WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
			 "COMPLETED" : "FAILED");
}
