/* plugin.h - state and entry points shared by the files of the ceems SPANK
 * plugin: one file per SPANK context, one dispatcher (spank_ceems.c). */
#ifndef CEEMS_PLUGIN_H
#define CEEMS_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "args.h"	/* plugstack.conf arguments, key=value */
#include "child_call.h"
#include "slurm_ctld.h"
#include "cgroup/cgroup_path.h"
#include "base/conf.h"
#include "sources/gres.h"
#include "model/job.h"
#include "model/job_spec.h"
#include "model/measure.h"
#include "summary/summary.h"


/* CEEMS_AGENT_PATH ($(sbindir)/ceems-agent) and CEEMS_AGENT_LOG
 * ($(localstatedir)/log/ceems/agent.log) come from Makefile.am. */

/* Parse plugstack.conf arguments into ARGS (defaults first).  Returns 0,
 * or -1 after logging every bad argument (the plugin keeps the default). */
int ceems_common_parse_args(int ac, char **av, struct ceems_plugin_args *args);

/* Load the configuration file PATH into CONFIG; a missing default file
 * means defaults, anything else wrong is logged and defaults are used. */
void ceems_common_load_config(const char *path, struct ceems_config *config);

/* Replace %n in CONFIG's paths by NODE, this node's Slurm name
 * (base/conf.h); NULL when it is not known.  Returns 0, or -1 after
 * logging why (the paths then keep their %n: no agent answers there, so
 * nothing on this node is measured). */
int ceems_common_expand_config(struct ceems_config *config, const char *node);

/* This node's Slurm name when nothing more precise says it: the host's
 * short name (base/node_name.h), NULL when it cannot go into a path. */
const char *ceems_common_host_node(char *buf, size_t size);

/* Route libceems log lines to Slurm's logs. */
void ceems_common_log_to_slurm(void);

/* Readable name of a step id: "batch", "extern", "interactive", "12". */
const char *ceems_common_step_name(uint32_t stepid, char *buf, size_t size);

/* User options (options.c): --ceems-summary, --ceems-perf, --ceems-series. */
struct ceems_user_options {
	bool summary_given;
	enum ceems_summary_style summary;
	bool perf;
	bool series;
};
void ceems_options_register(spank_t sp);
const struct ceems_user_options *ceems_options_user(void);

/* Job metadata from Slurm (slurm_job.c).  ASK_CONTROLLER: RPCs to
 * slurmctld for what only it knows (account, times, state, and the
 * cluster when not configured); without, no RPC at all.  What
 * accounting goes by (cluster, account, partition, QOS) never comes from
 * the step's environment, which the job's user controls: the cluster is
 * CONFIGURED_CLUSTER when not empty, else Slurm's ClusterName. */
void ceems_slurm_job_meta(spank_t sp, uint32_t jobid, bool ask_controller,
			   const char *configured_cluster,
			   struct ceems_job_meta *meta);
/* This node's Slurm name into META->node when empty: the job's node
 * list (META->nodes) at this node's index, else the host name. */
void ceems_slurm_job_node(spank_t sp, struct ceems_job_meta *meta);
/* job_gpus.c: the identifiers of the GPUs in G (lib/sources/gres.h), the device
 * files of their GRES indices from GRES_CONF, into SPEC's gpu_ids.
 * Returns how many. */
int ceems_job_gpus_ids(const char *gres_conf,
			 const struct ceems_plugin_job_gpus *g,
			 struct ceems_agent_job_spec *spec);
/* Settle the job's exit code and state from a task's wait status (when
 * HAVE_STATUS) and its OOM kills, unless slurmctld decided the state. */
void ceems_slurm_job_outcome(struct ceems_job_meta *meta, int status,
			      bool have_status, uint64_t oom_kills);

/* A job is over on this node (finish.c): end it with the agent in one
 * call, with META, BY "extern" (its last step) or "epilog" (the safety
 * net, when its steps ended without doing so); the agent writes the
 * record, REPORT gets the final figures.  0; 1 when the agent could not
 * be told and a note of the job was left for it; -1 (logged) when not
 * even that. */
int ceems_finish_end_job(const struct ceems_config *config,
			 const struct ceems_job_meta *meta, const char *by,
			 int timeout_ms, struct ceems_agent_job_report *report);

/* How long a step's end waits for slurmctld's answer (child_call.c):
 * slurmctld answers in milliseconds; this bounds a stopped or hung
 * one. */
#define CEEMS_CONTROLLER_WAIT_MS 300

/* What slurmctld says of the job SPEC is about (its metadata, start
 * time and cluster), looked up in a child process off the job's start
 * path (job_start.c); when REGISTERED, the start time and cluster are
 * sent to the agent.  The step's exit collects the answer, waiting
 * CEEMS_CONTROLLER_WAIT_MS at most. */
void ceems_job_start_lookup(const struct ceems_config *config,
			    const struct ceems_agent_job_spec *spec,
			    uint32_t nodeid, bool registered, int timeout_ms);
void ceems_job_start_join(void);
/* After the join: fill what META lacks from what slurmctld said when the
 * job started, if the lookup ran in this process and had an answer.
 * Returns whether it did. */
bool ceems_job_start_fill(struct ceems_job_meta *meta);

/* job_script context (epilog.c): finalize a job still registered. */
int ceems_epilog_job(spank_t sp, const struct ceems_plugin_args *args);

/* slurmstepd (remote) context: remote.c */
/* gather.c: the whole job's summary of a multi-node job's batch step on
 * node SELF, with its other nodes' figures: its length in TEXT, or -1
 * (one node, the gather off or not done in time): print this node's
 * then. */
int ceems_gather_summary(spank_t sp, const struct ceems_config *config,
			 const struct ceems_job_meta *meta, const char *self,
			 const struct ceems_agent_job_report *own,
			 enum ceems_summary_style style, char *text,
			 size_t size);

int ceems_remote_init(spank_t sp, const struct ceems_plugin_args *args);
int ceems_remote_user_init(spank_t sp);
int ceems_remote_task_post_fork(spank_t sp);
int ceems_remote_task_exit(spank_t sp);
int ceems_remote_exit(spank_t sp);

/* slurmd context: slurmd.c.  Adopt the node agent's running supervisor
 * or start one; at slurmd's exit, leave it running.  Both return 0, or
 * -1 after logging why (slurmd goes on regardless). */
int ceems_slurmd_init(spank_t sp, const struct ceems_plugin_args *args);
int ceems_slurmd_exit(void);

#endif
