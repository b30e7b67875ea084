/* agent_recover.h - the rule that decides whether the interval an agent
 * restart left unaccounted can be accounted after all, from the node's
 * cumulative counters (RAPL, hwmon energy and pm_counters energy,
 * /proc/stat busy time, each job's
 * cgroup CPU time) as the last checkpoint held them and as they read
 * now.  Recovered only when that is unambiguous; otherwise it stays a
 * gap.  doc/attribution.md states the rule. */
#ifndef CEEMS_AGENT_RECOVER_H
#define CEEMS_AGENT_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent_state.h"
#include "model/energy.h"

enum ceems_recover_verdict {
	CEEMS_RECOVER_OK = 0,
	/* No checkpoint of the node, or the job's figures are not of the
	 * checkpoint's tick, or a counter was not read then or now. */
	CEEMS_RECOVER_NO_CHECKPOINT,
	CEEMS_RECOVER_OTHER_BOOT,	/* another boot (or an unknown one) */
	/* A counter restarted: it went backwards, its range changed, or
	 * its delta needs more than its maximum power. */
	CEEMS_RECOVER_RESET,
	/* Longer than a counter's wrap period: how many times it wrapped
	 * cannot be known. */
	CEEMS_RECOVER_TOO_LONG,
	/* A source whose readings are not cumulative (power sensors). */
	CEEMS_RECOVER_NOT_CUMULATIVE,
	/* The job's cgroup is not the one checkpointed (another cgroup of
	 * the same name), or is gone. */
	CEEMS_RECOVER_CGROUP_REPLACED,
	/* A counter whose readings cannot tell a reset (hwmon,
	 * pm_counters) is of another run than the one checkpointed: its
	 * device was made again, or the controller restarted. */
	CEEMS_RECOVER_OTHER_RUN,
	/* Which run such a counter is of was not known then or now. */
	CEEMS_RECOVER_UNIDENTIFIED,
	/* A job left after the checkpoint: its share of the interval up to
	 * its departure is in its record already, and the checkpoint does
	 * not hold it to take it out of the split. */
	CEEMS_RECOVER_JOB_LEFT,
};

const char *ceems_agent_recover_verdict_name(enum ceems_recover_verdict v);

/* The boot the checkpoint was written in against this one. */
enum ceems_recover_verdict ceems_agent_recover_boot(const char *saved,
					      const char *now);

/* One energy counter: SAVED as checkpointed, RAW_NOW read at NOW_NS with
 * limits LIM.  OK with *JOULES the energy in between (one wrap at most
 * counted), or why not. */
enum ceems_recover_verdict ceems_agent_recover_counter(
	const struct state_counter *saved,
	const struct ceems_energy_counter_limits *lim, uint64_t raw_now,
	uint64_t now_ns, double *joules);

/* Whether counter R, now, is of the run SAVED was checkpointed in
 * (struct ceems_energy_reader's identity): OK, OTHER_RUN or
 * UNIDENTIFIED.  Always OK for a counter that needs no identity. */
enum ceems_recover_verdict ceems_agent_recover_identity(
	const struct state_counter *saved,
	const struct ceems_energy_reader *r);

/* What is known of one job, then and now. */
struct ceems_recover_job {
	uint64_t figures_tick_ns;	/* its checkpointed figures' tick */
	uint64_t node_tick_ns;		/* the node snapshot's tick */
	bool have_cpu_then, have_cpu_now;
	uint64_t cpu_then_ns, cpu_now_ns;	/* cgroup CPU usage */
	uint64_t cgroup_ino_then, cgroup_ino_now;	/* 0: unknown */
	bool gone;			/* its cgroup is gone now */
};

enum ceems_recover_verdict ceems_agent_recover_job_verdict(
	const struct ceems_recover_job *job);

#endif
