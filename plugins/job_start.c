/* job_start.c - Slurm's start time and cluster of a job, given to the
 * node agent soon after the job starts, by the extern step itself: with
 * jobinfo = no only.  With jobinfo = yes (the default) the agent's
 * ceems-jobinfo (tools/jobinfo) asks slurmctld instead, outside every
 * step of the job, and this file's child never runs.  The database keys a job by
 * cluster, id and start time; a record the agent writes itself (the
 * plugin never came back for the job: lib/agent/agent_finish.c) must carry the
 * same key as the plugin's record of the job, or the job gets two rows.
 *
 * Where the start time comes from, and why from there (Slurm 22.05, the
 * version on the test machines, checked in its source and on the test
 * cluster):
 *   - no SPANK item carries it;
 *   - SLURM_JOB_START_TIME exists only from Slurm 23.02 (from the job
 *     credential, which in 22.05 has no start time at all: no process
 *     on the node knows it), in the job prolog's environment and in each
 *     task's, set in the task's process just before exec
 *     (slurmstepd/task.c exec_task), where no step callback of the
 *     plugin sees it; the extern step, which registers the job first,
 *     has no task;
 *   - the job's cgroup creation time is seconds after Slurm's start, not
 *     equal to it: useless for a key;
 * so slurmctld is asked, one slurm_load_job per job and node.  The same
 * answer is the job's metadata in its record (account, partition, QOS,
 * times, TRES): the job's end asks slurmctld nothing, so that a
 * slurmctld stopped or hung then adds nothing to it.  That RPC may block for
 * MessageTimeout when slurmctld is slow, and a job must never wait for
 * measurement (design invariant 1): it runs in a child process of
 * the step that registered the job (child_call.c says why not a
 * thread), after the registration, and the job starts meanwhile.  The
 * answer goes to the agent as a second register of the job, with the
 * start time and cluster (the agent fills in what it did not know), and
 * back to the step through a pipe.  The extern step's exit waits
 * CEEMS_CONTROLLER_WAIT_MS at most for it, then kills the child.  The
 * lookup also runs for an extern step whose registration failed: the
 * note of the job it then leaves for the agent (finish.c) carries the
 * metadata.  If slurmctld never answers, the agent falls back to the
 * job's registration time and says so in the record.
 *
 * The same answer says which GPUs the job holds on this node (its GRES
 * indices): the child turns them into device identifiers (job_gpus.c)
 * and they go to the agent with the start time.  No step's environment
 * is trusted for that: the job's user sets it.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "model/job.h"
#include "base/log.h"
#include "plugin.h"

static struct {
	struct ceems_child_call child;
	bool running;
	bool answered;
	int timeout_ms;
	char socket_path[CEEMS_CONFIG_PATH_MAX];
	char configured_cluster[CEEMS_AGENT_CLUSTER_MAX];
	bool registered;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta;
	uint32_t nodeid;
	char gres_conf[CEEMS_CONFIG_PATH_MAX];
} lookup;

/* In the child: ask slurmctld, hand the answer back first, then tell
 * the agent. */
static void
lookup_main(void *arg, void *answer, size_t size, int fd)
{
	struct ceems_agent_job_spec *spec = &lookup.spec;
	struct ceems_job_meta *meta = answer;
	struct ceems_plugin_job_gpus gpus;
	char err[256];
	int r;

	(void)arg;
	(void)ceems_slurm_ctld_meta(spec->jobid, lookup.configured_cluster,
				    meta, lookup.nodeid, NULL, &gpus);
	ceems_child_call_answer(fd, meta, size);
	if (meta->start_time > 0 &&
	    meta->start_time <= CEEMS_AGENT_START_TIME_MAX)
		spec->start_time = meta->start_time;
	snprintf(spec->cluster, sizeof(spec->cluster), "%s", meta->cluster);
	ceems_job_gpus_ids(lookup.gres_conf, &gpus, spec);
	if (!lookup.registered ||
	    (spec->start_time == 0 && spec->cluster[0] == '\0' &&
	     spec->ngpu_ids == 0))
		return;	/* no agent to tell, or nothing learned */
	r = ceems_agent_client_register_job(lookup.socket_path, spec,
					    lookup.timeout_ms, err, sizeof(err));
	if (r == -EEXIST || r == 0)
		ceems_debug("job %u: start time %lld, cluster '%s' and %u GPU%s given to the node agent",
			    spec->jobid, (long long)spec->start_time,
			    spec->cluster, spec->ngpu_ids,
			    spec->ngpu_ids == 1 ? "" : "s");
	else
		ceems_info("job %u: start time not given to the node agent (%s); "
			   "a record it writes itself would have its own",
			   spec->jobid, err);
}

void
ceems_job_start_lookup(const struct ceems_config *config,
		       const struct ceems_agent_job_spec *spec, uint32_t nodeid,
		       bool registered, int timeout_ms)
{
	int r;

	if (lookup.running || spec->start_time > 0)
		return;
	lookup.registered = registered;
	lookup.timeout_ms = timeout_ms;
	snprintf(lookup.socket_path, sizeof(lookup.socket_path), "%s",
		 config->socket_path);
	snprintf(lookup.configured_cluster, sizeof(lookup.configured_cluster),
		 "%s", config->cluster);
	lookup.spec = *spec;
	lookup.nodeid = nodeid;
	snprintf(lookup.gres_conf, sizeof(lookup.gres_conf), "%s",
		 config->gres_conf);
	r = ceems_child_call_start(&lookup.child, lookup_main, NULL,
				   sizeof(lookup.meta));
	if (r < 0) {
		ceems_warning("job %u: cannot start the start time lookup: %s",
			      spec->jobid, strerror(-r));
		return;
	}
	lookup.running = true;
}

void
ceems_job_start_join(void)
{
	int r;

	if (!lookup.running)
		return;
	lookup.running = false;
	r = ceems_child_call_finish(&lookup.child, &lookup.meta,
				    sizeof(lookup.meta),
				    CEEMS_CONTROLLER_WAIT_MS);
	lookup.answered = r == 0;
	if (r == -ETIMEDOUT)
		ceems_info("job %u: slurmctld did not answer within %d ms; "
			   "the job's record has what the node knows of it",
			   lookup.spec.jobid, CEEMS_CONTROLLER_WAIT_MS);
}

bool
ceems_job_start_fill(struct ceems_job_meta *meta)
{
	if (!lookup.answered || lookup.meta.start_time <= 0)
		return false;
	ceems_job_meta_fill_from(meta, &lookup.meta);
	return true;
}
