/* agent_state.h - the node agent's per-job state on disk, so that an agent
 * restart in the middle of a job loses only the interval it was down (or
 * nothing, when the counters allow it: lib/agent/agent_recover.c).
 *
 * The file is an array of slots written with pwrite, never mapped: the
 * agent's memory holds only what it uses, and a full disk is an error
 * the agent logs and outlives, not a SIGBUS.  The file holds as many
 * slots as are in use (space reserved with posix_fallocate when a slot
 * is claimed, given back when the last ones are released).  Each slot
 * keeps two copies of the running figures, written alternately with a
 * sequence number and a checksum, so an agent killed in the middle of a
 * write still leaves the other copy.  When no space can be had, the job
 * is measured all the same and its slot written as soon as there is. */
#ifndef CEEMS_AGENT_STATE_H
#define CEEMS_AGENT_STATE_H

#include <stdint.h>

#include "agent/agent.h"
#include "agent/agent_gpu.h"
#include "model/job.h"

/* The running figures of a job, as of one tick. */
struct state_figures {
	uint64_t tick_ns;		/* monotonic time of the tick */
	uint64_t cpu_base_ns;		/* cgroup CPU usage at registration */
	/* What recovering the interval after a restart needs: the
	 * cgroup's cumulative CPU usage as of tick_ns (have_cpu), and the
	 * identity of the job's cgroup directory (its inode, 0 unknown). */
	uint64_t cpu_last_ns;
	uint64_t cgroup_ino;
	uint32_t have_cpu;
	uint32_t pad;
	double cpu_s;			/* CPU time accounted so far */
	double gap_s;
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	double recovered_s;
	uint32_t nrecovered;
	struct ceems_agent_gap recovered[CEEMS_AGENT_MAX_GAPS];
	struct agent_gpu_job gpu;	/* what its GPUs did */
	/* What its eBPF programs and perf events counted: their counts die
	 * with the agent (the kernel frees its maps and events), so a
	 * restarted agent adds its own to these. */
	struct ceems_agent_io_report io;
	struct ceems_perf_report perf;
	/* Last: only the steps in use are written. */
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
};

/* The node's cumulative counters as of the tick the jobs' figures were
 * taken at: with them, an agent restarted in the same boot can account
 * the interval it was down (lib/agent/agent_recover.c). */
#define STATE_MAX_COUNTERS 24

struct state_counter {
	char name[56];		/* as the source names it */
	/* The run of the counter raw belongs to (struct
	 * ceems_energy_reader), 0 none or unknown.  It took the last 8
	 * bytes of name, which earlier agents left 0: the layout is
	 * unchanged. */
	uint64_t identity;
	uint64_t raw;		/* the last good reading, in counts */
	uint64_t range;		/* it wraps after this, 0: never */
	uint64_t read_ns;	/* monotonic time of that reading */
	uint32_t domain;	/* enum ceems_energy_domain */
	uint32_t have;		/* raw is a reading */
};

_Static_assert(sizeof(struct state_counter) == 96,
	       "a node counter keeps the size version 5 files have");

struct state_node {
	uint64_t check;		/* ceems_agent_state_checksum_lanes of what follows */
	uint64_t tick_ns;	/* the tick; 0: no snapshot */
	uint64_t busy_ns;	/* node busy CPU time (/proc/stat) */
	/* 1: busy_ns holds it; 0: not read.  STATE_NODE_JOB_LEFT: a job
	 * left after this tick, charged for its part of the interval, and
	 * that part is not in the snapshot: the interval since is not to
	 * be recovered (agent_recover.c). */
	uint32_t have_busy;
	uint32_t ncounters;
	struct state_counter counters[STATE_MAX_COUNTERS];
};

#define STATE_NODE_JOB_LEFT 2

struct state_file;

/* Open (creating it if needed) DIR/jobs.state with NSLOTS slots, for the
 * boot BOOT_ID (a checkpoint from another boot describes dead jobs and is
 * discarded).  NULL with *ERR = -errno; a damaged or foreign file is
 * renamed to jobs.state.bad, logged, and a fresh one created. */
struct state_file *ceems_agent_state_file_open(const char *dir, uint32_t nslots,
				   const char *boot_id, int *err);
void ceems_agent_state_file_close(struct state_file *sf);

/* Claim a free slot for a new job and write its registration.  Returns
 * the slot index, or -ENOSPC. */
int ceems_agent_state_slot_claim(struct state_file *sf,
		     const struct ceems_agent_job_spec *spec,
		     uint64_t registered_ns);
/* The job's Slurm start time and cluster, learned after its claim
 * (ceems_agent_register). */
void ceems_agent_state_slot_identity(struct state_file *sf, int slot,
			 const struct ceems_agent_job_spec *spec);
/* The job's --ceems-series and --ceems-perf, turned on by a later step
 * than the one that registered it: a restarted agent keeps its series
 * and opens its hardware events again. */
void ceems_agent_state_slot_options(struct state_file *sf, int slot,
			const struct ceems_agent_job_spec *spec);
/* The hierarchies of the job's v1 cgroup a later step named, that the
 * registration lacked (ceems_agent_register): a restarted agent reads
 * the job there.  Paths already in the slot are left as they are. */
void ceems_agent_state_slot_cgroup(struct state_file *sf, int slot,
		   const struct ceems_agent_job_spec *spec);
/* Only the steps in use are copied: most jobs have a few. */
void ceems_agent_state_slot_update(struct state_file *sf, int slot,
		       const struct state_figures *fig);
void ceems_agent_state_slot_release(struct state_file *sf, int slot);

/* The node's snapshot in the file as it was opened (tick_ns 0 when it
 * held none), and the writing of a new one. */
const struct state_node *ceems_agent_state_file_node(const struct state_file *sf);
/* The boot the file was written in. */
const char *ceems_agent_state_file_boot_id(const struct state_file *sf);
void ceems_agent_state_file_set_node(struct state_file *sf, const struct state_node *node);

/* 0, or the -errno of the last write when the file is not up to date
 * (the problem was logged once when it began). */
int ceems_agent_state_file_flush(struct state_file *sf);

/* Call FN for every job the file holds (after a restart), with its
 * latest complete figures.  FN returns 0 to keep the slot, or non-zero
 * to release it.  Returns the number of jobs kept. */
typedef int (*state_restore_fn)(void *arg, int slot,
				const struct ceems_agent_job_spec *spec,
				uint64_t registered_ns,
				const struct state_figures *fig);
int ceems_agent_state_file_restore(struct state_file *sf, state_restore_fn fn,
		       void *arg);

/* A deregistered job waiting for its release ("finishing"): its slot
 * keeps the final report and the times its record would have, so that
 * an agent restarted before the release can still write the record.
 * Such a slot is never restored as a live job (ceems_agent_state_file_restore skips
 * it); ceems_agent_state_slot_release frees it. */
void ceems_agent_state_slot_finishing(struct state_file *sf, int slot,
			  const struct ceems_agent_job_report *report,
			  int64_t start_time, int64_t end_time);
/* The plugin's metadata of a finishing job, kept with it. */
void ceems_agent_state_slot_finishing_meta(struct state_file *sf, int slot,
			       const struct ceems_job_meta *meta);

/* Call FN for every finishing job the file holds, META NULL when the
 * plugin sent none.  FN returns 0 to keep the slot, or non-zero to
 * release it.  Returns the number kept. */
typedef int (*state_finish_fn)(void *arg, int slot,
			       const struct ceems_agent_job_spec *spec,
			       const struct ceems_agent_job_report *report,
			       int64_t start_time, int64_t end_time,
			       const struct ceems_job_meta *meta);
int ceems_agent_state_file_restore_finishing(struct state_file *sf, state_finish_fn fn,
				 void *arg);

#endif
