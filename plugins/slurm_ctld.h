/* slurm_ctld.h - what slurmctld says of a job, asked with libslurm's
 * slurm_load_job (slurm_ctld.c).  No SPANK header and no SPANK call: the
 * plugin (slurm_job.c) and ceems-jobinfo, a program of its own
 * (tools/jobinfo), share it. */
#ifndef CEEMS_SLURM_CTLD_H
#define CEEMS_SLURM_CTLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/job.h"
#include "sources/gres.h"

/* Slurm's GPUs of a job on one node, as slurmctld gives them. */
struct ceems_plugin_job_gpus {
	char node[CEEMS_GRES_PATH_MAX];	/* the node's Slurm name */
	char gres_detail[512];		/* its gres_detail_str, "" none */
};

/* Any byte string Slurm or the system gives, made text (base/text.h)
 * into DST; SRC NULL leaves DST as it is. */
void ceems_slurm_ctld_copy(char *dst, size_t size, const char *src);

/* A wait status into META's exit code and signal. */
void ceems_slurm_ctld_outcome(struct ceems_job_meta *meta, int status);

/* What slurmctld says of job JOBID (one RPC, which may block for
 * MessageTimeout), over META (not reset); the cluster is
 * CONFIGURED_CLUSTER when not empty, else slurmctld's.  GPUS, when not
 * NULL, gets the job's GPUs on its node NODE (its Slurm name) when NODE
 * is not NULL, else on its node of index NODEID.  Fields slurmctld did
 * not give stay as they were.  Returns 1 when slurmctld has decided the
 * job's state (its end: META->state set), 0 when it answered while the
 * job runs, -1 when it did not answer or knows no such job: errno then
 * says which (Slurm's error numbers; ESLURM_INVALID_JOB_ID: no such
 * job). */
int ceems_slurm_ctld_fill(uint32_t jobid, const char *configured_cluster,
			  struct ceems_job_meta *meta, uint32_t nodeid,
			  const char *node, struct ceems_plugin_job_gpus *gpus);

/* ON: a slurmctld that does not answer is logged at debug level only
 * (a caller that asks again and says so itself). */
void ceems_slurm_ctld_quiet(bool on);

/* ceems_slurm_ctld_fill on a META reset first (jobid set). */
int ceems_slurm_ctld_meta(uint32_t jobid, const char *configured_cluster,
			  struct ceems_job_meta *meta, uint32_t nodeid,
			  const char *node, struct ceems_plugin_job_gpus *gpus);

#endif
