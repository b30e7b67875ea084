/* epilog.c - the job_epilog safety net, in the separate "slurmstepd spank
 * epilog" process slurmd runs after every step of a job has ended on this
 * node; the plugin has the callback only when built with
 * --enable-spank-job-epilog (ceems-jobinfo gives the agent the same
 * word without a process per job).  It asks slurmctld for the job's metadata (its state and exit
 * code are decided by now) and gives them to the agent: normally the
 * extern step has ended the job, with what slurmctld said at its start,
 * and its record waits for this word; when the steps died without ending
 * the job (slurmstepd killed, no PrologFlags=Contain), this ends it.
 * When the agent never knew the job (it was away when the job started),
 * it writes a record of these metadata alone (not measured); when it
 * cannot be reached, a note of the job is left for it (lib/record/job_note.h).  This is no job's start or end path (slurmd runs it
 * after the job), so slurmctld may be asked here. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "base/log.h"
#include "plugin.h"
#include "slurm_compat.h"

#define AGENT_TIMEOUT_MS 500
/* slurmctld answers in milliseconds; a hung one holds up only this
 * epilog, which no job waits for, and never beyond MessageTimeout. */
#define EPILOG_CONTROLLER_WAIT_MS 10000

struct epilog_ask {
	spank_t sp;
	uint32_t jobid;
	const char *cluster;
};

/* In a child (child_call.c): the job's metadata with slurmctld's word.
 * This process ("slurmstepd spank epilog") has loaded none of libslurm's
 * plugins from Slurm 23.11 on, where a call to slurmctld then fatal()s
 * ("No hash plugins loaded"): the epilog would fail and slurmd drain
 * the node.  slurm_init loads them (and does nothing to those already
 * loaded, as in 22.05's epilog); whatever still goes wrong ends the
 * child, not the epilog. */
static void
epilog_meta_main(void *arg, void *answer, size_t size, int fd)
{
	const struct epilog_ask *ask = arg;

	compat_slurm_init();
	ceems_slurm_job_meta(ask->sp, ask->jobid, true, ask->cluster, answer);
	ceems_child_call_answer(fd, answer, size);
}

/* The job's metadata with what slurmctld says of it, if it answers in
 * time; else what the node knows. */
static void
epilog_meta(spank_t sp, uint32_t jobid, const char *cluster,
	    struct ceems_job_meta *meta)
{
	struct epilog_ask ask = { sp, jobid, cluster };
	struct ceems_child_call child;
	int r;

	r = ceems_child_call_start(&child, epilog_meta_main, &ask,
				   sizeof(*meta));
	if (r == 0)
		r = ceems_child_call_finish(&child, meta, sizeof(*meta),
					    EPILOG_CONTROLLER_WAIT_MS);
	if (r == 0)
		return;
	ceems_info("job %u: no word from slurmctld in the epilog (%s); the record has what the node knows",
		   jobid, strerror(-r));
	ceems_slurm_job_meta(sp, jobid, false, cluster, meta);
}

int
ceems_epilog_job(spank_t sp, const struct ceems_plugin_args *args)
{
	static struct ceems_agent_job_report report;
	struct ceems_config config;
	struct ceems_job_meta meta;
	char node_buf[CEEMS_NODE_NAME_MAX];
	const char *node;
	uint32_t jobid;

	if (spank_get_item(sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS)
		return -1;
	ceems_common_load_config(args->config_path, &config);
	/* slurmd sets SLURMD_NODENAME in the epilog's own environment
	 * (this process's, not a job's): the node of several on a host
	 * whose epilog this is. */
	node = getenv("SLURMD_NODENAME");
	if (node == NULL || !ceems_conf_node_name_ok(node))
		node = ceems_common_host_node(node_buf, sizeof(node_buf));
	if (ceems_common_expand_config(&config, node) < 0)
		return 0;
	/* slurmctld has decided the job's state and exit code by now: they
	 * complete the extern step's record, or make the record of a job
	 * whose steps died without ending it. */
	epilog_meta(sp, jobid, config.cluster, &meta);
	if (ceems_finish_end_job(&config, &meta, "epilog", AGENT_TIMEOUT_MS,
				 &report) == 0) {
		ceems_agent_series_free(report.series);
		report.series = NULL;
	}
	return 0;
}
