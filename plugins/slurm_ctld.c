/* slurm_ctld.c - what slurmctld says of a job (slurm_ctld.h): its record
 * in slurmctld, one slurm_load_job.  The state comes from slurmctld when
 * it has decided one (CANCELLED, TIMEOUT, ...): a cancelled and a
 * timed-out job both end on a signal, and only slurmctld knows which it
 * was; the end time too, then, so that a node that completes the job
 * late does not end it late.  Linked into the SPANK plugin and into
 * ceems-jobinfo: no SPANK call here. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "base/log.h"
#include "base/text.h"
#include "model/job.h"
#include "slurm_compat.h"
#include "slurm_ctld.h"

/* ceems_slurm_ctld_quiet */
static bool quiet;

void
ceems_slurm_ctld_quiet(bool on)
{
	quiet = on;
}

/* Every string Slurm or the system gives enters here: Slurm accepts any
 * bytes but NUL in names, and the record takes only text (text.h). */
void
ceems_slurm_ctld_copy(char *dst, size_t size, const char *src)
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


void
ceems_slurm_ctld_outcome(struct ceems_job_meta *meta, int status)
{
	if (WIFEXITED(status)) {
		meta->exit_code = WEXITSTATUS(status);
		meta->exit_signal = 0;
	} else if (WIFSIGNALED(status)) {
		meta->exit_code = 0;
		meta->exit_signal = WTERMSIG(status);
	}
}


/* The index of node NODE in the job's node list NODES, UINT32_MAX when
 * it is not there. */
static uint32_t
node_index(const char *nodes, const char *node)
{
	uint32_t found = UINT32_MAX;
	ceems_hostlist_t hl = slurm_hostlist_create(nodes);
	char *host;

	if (hl == NULL)
		return found;
	for (uint32_t i = 0; (host = slurm_hostlist_shift(hl)) != NULL; i++) {
		if (found == UINT32_MAX && strcmp(host, node) == 0)
			found = i;
		free(host);
	}
	slurm_hostlist_destroy(hl);
	return found;
}

/* The job's GPUs on its node NODE, else of index NODEID, from
 * slurmctld's answer J. */
static void
gpus_from_controller(const slurm_job_info_t *j, uint32_t nodeid,
		     const char *node, struct ceems_plugin_job_gpus *gpus)
{
	ceems_hostlist_t hl;
	char *host;

	if (node != NULL && j->nodes != NULL)
		nodeid = node_index(j->nodes, node);
	if (j->gres_detail_str == NULL || nodeid >= j->gres_detail_cnt ||
	    j->gres_detail_str[nodeid] == NULL || j->nodes == NULL)
		return;
	ceems_slurm_ctld_copy(gpus->gres_detail, sizeof(gpus->gres_detail),
		    j->gres_detail_str[nodeid]);
	hl = slurm_hostlist_create(j->nodes);
	if (hl == NULL)
		return;
	for (uint32_t i = 0; (host = slurm_hostlist_shift(hl)) != NULL; i++) {
		if (i == nodeid)
			ceems_slurm_ctld_copy(gpus->node, sizeof(gpus->node), host);
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

static int
from_controller(struct ceems_job_meta *meta, uint32_t jobid, uint32_t nodeid,
		const char *node, struct ceems_plugin_job_gpus *gpus)
{
	job_info_msg_t *msg = NULL;
	const slurm_job_info_t *j;
	const char *state;
	bool completing;

	/* No retry: one call can already block for MessageTimeout. */
	if (compat_load_job(&msg, jobid, SHOW_DETAIL) != SLURM_SUCCESS)
		msg = NULL;
	if (msg == NULL) {
		int err = errno;

		ceems_log(quiet ? CEEMS_LOG_DEBUG : CEEMS_LOG_INFO,
			  "job %u: slurmctld did not answer (%s)",
			   jobid, slurm_strerror(err));
		errno = err;
		return -1;
	}
	j = job_in_answer(msg, jobid);
	if (j == NULL) {
		ceems_info("job %u: slurmctld's answer has no record of it",
			   jobid);
		slurm_free_job_info_msg(msg);
		errno = ESLURM_INVALID_JOB_ID;
		return -1;
	}
	completing = (j->job_state & JOB_COMPLETING) != 0;
	ceems_slurm_ctld_copy(meta->cluster, sizeof(meta->cluster), j->cluster);
	ceems_slurm_ctld_copy(meta->account, sizeof(meta->account), j->account);
	ceems_slurm_ctld_copy(meta->partition, sizeof(meta->partition), j->partition);
	ceems_slurm_ctld_copy(meta->qos, sizeof(meta->qos), j->qos);
	ceems_slurm_ctld_copy(meta->name, sizeof(meta->name), j->name);
	/* While a job completes, slurmctld's NodeList and NumNodes are
	 * the nodes still completing it (the last node's epilog sees
	 * itself alone), not the job's: then the node list comes from
	 * the environment, the count from the TRES, which keeps it. */
	if (!completing)
		ceems_slurm_ctld_copy(meta->nodes, sizeof(meta->nodes), j->nodes);
	meta->gid = j->group_id;
	meta->submit_time = (int64_t)j->submit_time;
	/* slurmctld lists the dependencies it still waits on, and those
	 * that keep a record: none listed is no proof of none. */
	if (meta->dependency != CEEMS_JOB_DEPENDENCY_LISTED)
		meta->dependency = j->dependency != NULL && j->dependency[0] != '\0' ?
				   CEEMS_JOB_DEPENDENCY_LISTED : CEEMS_JOB_DEPENDENCY_NONE;
	state = decided_state(j->job_state);
	/* A requeued job's times are its next run's, not this one's. */
	if (state == NULL || strcmp(state, "REQUEUED") != 0)
		meta->start_time = (int64_t)j->start_time;
	if (j->time_limit == INFINITE)
		meta->time_limit_min = CEEMS_TIME_LIMIT_UNLIMITED;
	else if (j->time_limit == NO_VAL)
		meta->time_limit_min = CEEMS_TIME_LIMIT_PARTITION;
	else
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
		gpus_from_controller(j, nodeid, node, gpus);
	if (state != NULL) {
		ceems_slurm_ctld_copy(meta->state, sizeof(meta->state), state);
		/* Once slurmctld has decided, its exit code (a wait status,
		 * as sacct's ExitCode shows it) is the job's: the extern
		 * step, which writes the record, has no status of its own. */
		if (j->exit_code != NO_VAL)
			ceems_slurm_ctld_outcome(meta, (int)j->exit_code);
		/* And its end time is the job's: a node that completes the
		 * job late (its slurmd was down) asks after it. */
		if (strcmp(state, "REQUEUED") != 0 && j->end_time > 0)
			meta->end_time = (int64_t)j->end_time;
	}
	slurm_free_job_info_msg(msg);
	return state != NULL ? 1 : 0;
}


/* The cluster: the configured name, else the one slurmctld gave with the
 * job, else slurm.conf's ClusterName as slurmctld has it (ANSWERED: it
 * answered for the job; else it is not asked again). */
static void
cluster_name(const char *configured, struct ceems_job_meta *meta,
	     bool answered)
{
	slurm_conf_t *conf = NULL;

	if (configured != NULL && configured[0] != '\0') {
		ceems_slurm_ctld_copy(meta->cluster, sizeof(meta->cluster), configured);
		return;
	}
	if (meta->cluster[0] != '\0' || !answered)
		return;	/* a slurmctld silent for the job is for this too */
	if (slurm_load_ctl_conf((time_t)0, &conf) == SLURM_SUCCESS &&
	    conf != NULL) {
		ceems_slurm_ctld_copy(meta->cluster, sizeof(meta->cluster),
			    conf->cluster_name);
		compat_free_conf(conf);
	}
}

int
ceems_slurm_ctld_fill(uint32_t jobid, const char *configured_cluster,
		      struct ceems_job_meta *meta, uint32_t nodeid,
		      const char *node, struct ceems_plugin_job_gpus *gpus)
{
	int r;

	if (gpus != NULL)
		memset(gpus, 0, sizeof(*gpus));
	r = from_controller(meta, jobid, nodeid, node, gpus);
	cluster_name(configured_cluster, meta, r >= 0);
	return r;
}

int
ceems_slurm_ctld_meta(uint32_t jobid, const char *configured_cluster,
		      struct ceems_job_meta *meta, uint32_t nodeid,
		      const char *node, struct ceems_plugin_job_gpus *gpus)
{
	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	return ceems_slurm_ctld_fill(jobid, configured_cluster, meta, nodeid,
				     node, gpus);
}
