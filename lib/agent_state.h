/* agent_state.h - the node agent's per-job state on disk, so that an agent
 * restart in the middle of a job loses only the interval it was down.
 * The file is a fixed array of slots mapped into memory: registering a
 * job writes its slot once, every tick copies the job's running figures
 * into it (a memcpy, no system call), and the kernel writes the pages
 * back.  Each slot keeps two copies of the running figures, written
 * alternately; a copy is marked incomplete while it is written, so an
 * agent killed in the middle of a copy still leaves the other one. */
#ifndef CEEMS_AGENT_STATE_H
#define CEEMS_AGENT_STATE_H

#include <stdint.h>

#include "agent.h"
#include "job.h"

/* The running figures of a job, as of one tick. */
struct state_figures {
	uint64_t tick_ns;		/* monotonic time of the tick */
	uint64_t cpu_base_ns;		/* cgroup CPU usage at registration */
	double cpu_s;			/* CPU time accounted so far */
	double gap_s;
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
};

struct state_file;

/* Open (creating it if needed) DIR/jobs.state with NSLOTS slots, for the
 * boot BOOT_ID (a checkpoint from another boot describes dead jobs and is
 * discarded).  NULL with *ERR = -errno; a damaged or foreign file is
 * renamed to jobs.state.bad, logged, and a fresh one created. */
struct state_file *state_file_open(const char *dir, uint32_t nslots,
				   const char *boot_id, int *err);
void state_file_close(struct state_file *sf);

/* Claim a free slot for a new job and write its registration.  Returns
 * the slot index, or -ENOSPC. */
int state_slot_claim(struct state_file *sf,
		     const struct ceems_agent_job_spec *spec,
		     uint64_t registered_ns);
/* The job's Slurm start time and cluster, learned after its claim
 * (ceems_agent_register). */
void state_slot_identity(struct state_file *sf, int slot,
			 const struct ceems_agent_job_spec *spec);
/* Only the steps in use are copied: most jobs have a few. */
void state_slot_update(struct state_file *sf, int slot,
		       const struct state_figures *fig);
void state_slot_release(struct state_file *sf, int slot);

/* Ask the kernel to write the mapped state back now (asynchronously). */
int state_file_flush(struct state_file *sf);

/* Call FN for every job the file holds (after a restart), with its
 * latest complete figures.  FN returns 0 to keep the slot, or non-zero
 * to release it.  Returns the number of jobs kept. */
typedef int (*state_restore_fn)(void *arg, int slot,
				const struct ceems_agent_job_spec *spec,
				uint64_t registered_ns,
				const struct state_figures *fig);
int state_file_restore(struct state_file *sf, state_restore_fn fn,
		       void *arg);

/* A deregistered job waiting for its release ("finishing"): its slot
 * keeps the final report and the times its record would have, so that
 * an agent restarted before the release can still write the record.
 * Such a slot is never restored as a live job (state_file_restore skips
 * it); state_slot_release frees it. */
void state_slot_finishing(struct state_file *sf, int slot,
			  const struct ceems_agent_job_report *report,
			  int64_t start_time, int64_t end_time);
/* The plugin's metadata of a finishing job, kept with it. */
void state_slot_finishing_meta(struct state_file *sf, int slot,
			       const struct ceems_job_meta *meta);

/* Call FN for every finishing job the file holds, META NULL when the
 * plugin sent none.  FN returns 0 to keep the slot, or non-zero to
 * release it.  Returns the number kept. */
typedef int (*state_finish_fn)(void *arg, int slot,
			       const struct ceems_agent_job_spec *spec,
			       const struct ceems_agent_job_report *report,
			       int64_t start_time, int64_t end_time,
			       const struct ceems_job_meta *meta);
int state_file_restore_finishing(struct state_file *sf, state_finish_fn fn,
				 void *arg);

#endif
