/* agent_gpu.h - the node's GPUs in the node agent: the backends opened
 * once (NVML, ROCm SMI), their energy as the GPU source of the ledger,
 * which devices (or MIG instances) each job holds, each device's usage
 * read once per tick, and each job's account of what its GPUs did.  Not
 * installed.
 *
 * A job's GPUs are what the plugin says Slurm gave it (struct
 * ceems_agent_job_spec gpu_ids), matched to the devices by the identity
 * that survives renumbering: the device file (major:minor), the UUID, the
 * PCI bus id.  "gres:N" alone (a GRES index whose file is unknown) is the
 * N-th device in the order Slurm numbers them, by device minor number. */
#ifndef CEEMS_AGENT_GPU_H
#define CEEMS_AGENT_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "sources/gpu.h"
#include "model/ledger.h"

struct ceems_agent;
struct agent_job;

/* The usage figures a job's account keeps as time means. */
enum agent_gpu_figure {
	GPU_FIG_UTIL = 0,
	GPU_FIG_MEM_UTIL,
	GPU_FIG_SM_ACTIVE,
	GPU_FIG_SM_OCCUPANCY,
	GPU_FIG_TENSOR,
	GPU_FIG_FP,
	GPU_FIG_POWER,		/* the device's (instance's part of its) power */
	GPU_NFIGURES,
};

/* What one GPU of a job did: fixed layout, kept in the state file. */
struct agent_gpu_account {
	int32_t device;			/* the agent's device index */
	int32_t instance;		/* in the device's inst[], -1: whole */
	double share;			/* of the device: 1, or the slices' */
	uint32_t power_integrated;	/* 1: the device has no counter */
	uint32_t have_energy;
	double energy_j;
	/* Σ figure × seconds, and the seconds a tick read the figure. */
	double sum[GPU_NFIGURES];
	double secs[GPU_NFIGURES];
	uint64_t mem_peak_bytes;
	uint32_t have_mem_peak;
	uint32_t pad;
	uint64_t mem_total_bytes;
	/* The device's identity (a hash of its UUID and bus id): after an
	 * agent restart, the account is kept only for the same device. */
	uint64_t device_key;
};

struct agent_gpu_job {
	uint32_t n;
	uint32_t pad;
	struct agent_gpu_account acc[CEEMS_LEDGER_MAX_GPUS];
};

/* The agent's GPUs (in struct ceems_agent). */
struct agent_gpus {
	int source;			/* in the agent's sources, -1: none */
	size_t n;			/* devices, all backends */
	struct {
		struct ceems_gpu_backend *backend;
		size_t index;		/* in the backend */
		bool integrated;
	} dev[CEEMS_GPU_MAX_DEVICES];
	/* This tick's reading of each device. */
	bool have_usage[CEEMS_GPU_MAX_DEVICES];
	struct ceems_gpu_usage usage[CEEMS_GPU_MAX_DEVICES];
	bool lost_logged[CEEMS_GPU_MAX_DEVICES];
	/* MIG: the nvidia-caps files that grant each instance (its GPU
	 * instance's and its compute instances' access files), from the
	 * driver's mig-minors: what gres.conf names a slice by. */
	size_t ncaps;
	struct {
		int major, minor;
		uint8_t dev, inst;
	} caps[4 * CEEMS_GPU_MAX_DEVICES * CEEMS_GPU_MAX_INSTANCES];
};

/* Open the backends the configuration names and add the GPU energy
 * source to the agent's sources.  A node without GPUs (no library, no
 * driver, no device) logs one line and goes on: never an error. */
void ceems_agent_gpu_open(struct ceems_agent *a, uint64_t now_ns);

/* Match SPEC's GPU identifiers to the devices into OUT.  Returns how many
 * GPUs the job holds (0 when it names none, or none matched: each
 * identifier that matches nothing is logged). */
int ceems_agent_gpu_resolve(const struct ceems_agent *a,
		      const struct ceems_agent_job_spec *spec,
		      struct agent_gpu_job *out);

/* Read every device's usage for the tick ending now. */
void ceems_agent_gpu_read_usage(struct ceems_agent *a);

/* The job's share of each device this tick (the ledger's f_j,g): a whole
 * device 1; a MIG instance its slices among the device's instances,
 * weighted by their activity this tick (doc/attribution.md). */
void ceems_agent_gpu_shares(const struct ceems_agent *a,
		      const struct agent_gpu_job *g,
		      double share[CEEMS_LEDGER_MAX_GPUS]);

/* Add this tick (DT_S seconds the job was there) to the job's GPU
 * accounts: its energy per device from SHARE, its usage from the
 * devices' readings. */
void ceems_agent_gpu_charge(const struct ceems_agent *a, struct agent_gpu_job *g,
		      const struct ceems_ledger_node_tick *node,
		      const struct ceems_ledger_job_share *share, double dt_s);

/* The job's GPUs for its report. */
void ceems_agent_gpu_fill_report(const struct ceems_agent *a,
		      const struct agent_gpu_job *g,
		      struct ceems_agent_job_report *r);

/* The job's mean GPU power and utilisation this tick, for its series:
 * NaN when it holds no GPU or nothing was read. */
void ceems_agent_gpu_series_figures(const struct ceems_agent *a,
			      const struct agent_gpu_job *g,
			      double *power_w, double *util_pct);

/* The identity key of the agent's device I (agent_gpu_account). */
uint64_t ceems_agent_gpu_device_key(const struct ceems_agent *a, size_t i);

/* An account read back from the state file is sane. */
bool ceems_agent_gpu_job_sane(const struct agent_gpu_job *g);

#endif
