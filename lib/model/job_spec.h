/* job_spec.h - what the job-side plugin tells the node agent of a job
 * when it starts: who it is, where its cgroup is, what it holds, what to
 * keep of it.  The engine (agent.h) registers jobs from it, the protocol
 * (agent_proto.h) carries it, the state file keeps it; what the agent
 * then measures of the job is in measure.h. */
#ifndef CEEMS_JOB_SPEC_H
#define CEEMS_JOB_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroup/cgroup_path.h"
#include "model/ledger.h"

/* As struct ceems_job_meta's cluster. */
#define CEEMS_AGENT_CLUSTER_MAX 64
/* GPU identifiers a job spec carries, and their length (with the NUL). */
#define CEEMS_AGENT_MAX_GPU_IDS CEEMS_LEDGER_MAX_GPUS
#define CEEMS_AGENT_GPU_ID_MAX 64
/* Latest start time a spec may carry: 9999-12-31, any later is garbage. */
#define CEEMS_AGENT_START_TIME_MAX 253402300799LL

/* What the job-side plugin tells the agent when a job starts. */
struct ceems_agent_job_spec {
	uint32_t jobid;
	uint32_t uid;
	/* The job's cgroup as /proc/PID/cgroup of one of its processes
	 * shows it (relative to each hierarchy's root). */
	struct ceems_cgroup_job cgroup;
	uint32_t alloc_cores;		/* 0: count the cgroup's cpuset */
	uint64_t alloc_mem_bytes;	/* 0: the cgroup's memory limit */
	double gpu_share[CEEMS_LEDGER_MAX_GPUS];	/* per device, 0..1 */
	bool series;			/* keep the job's time series
					 * (--ceems-series; lib/model/agent_series.h) */
	/* Hardware perf counters asked for (--ceems-perf; lib/sources/perf_job.h).
	 * Here, in what was padding, so that the state file's version 4
	 * slots keep their size (lib/agent/agent_state_migrate.c). */
	bool perf;
	/* The job's identity in the database as the plugin's record will
	 * have it (cluster, jobid, start time): Slurm's start time in Unix
	 * seconds and the cluster name, 0 and "" when not known (yet).  A
	 * record the agent writes itself uses them, so that it is the same
	 * job as the plugin's record, not a second one (lib/agent/agent_finish.c). */
	int64_t start_time;
	char cluster[CEEMS_AGENT_CLUSTER_MAX];
	/* The GPUs Slurm gave the job on this node, as the plugin found
	 * them (lib/sources/gres.h): "dev:MAJOR:MINOR" (the device file of one of
	 * its GRES indices), "gres:N" (a GRES index whose file is not
	 * known), a UUID ("GPU-...", "MIG-...") or a PCI bus id.  The agent
	 * matches them to its devices (lib/agent/agent_gpu.c); when it finds
	 * any, they replace gpu_share.  Fields added later go after these:
	 * the state file's migration reads the older layout as a prefix. */
	uint32_t ngpu_ids;
	char gpu_ids[CEEMS_AGENT_MAX_GPU_IDS][CEEMS_AGENT_GPU_ID_MAX];
};

#endif
