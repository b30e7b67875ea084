/* agent_status.h - the node agent's `status' reply: the node's energy
 * since the agent started, as of the last tick, and the agent's own
 * figures.  Built from what the ticks left: answering it reads nothing
 * and ticks nothing, so any number of requests from any user cost the
 * agent only the reply. */
#ifndef CEEMS_AGENT_STATUS_H
#define CEEMS_AGENT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "base/conf.h"

/* The node's energy since the agent started, per domain. */
struct agent_totals {
	uint64_t ticks;
	bool measured[CEEMS_DOMAIN_COUNT];
	double delta_j[CEEMS_DOMAIN_COUNT];
	double system_j[CEEMS_DOMAIN_COUNT];
	double idle_j[CEEMS_DOMAIN_COUNT];
	uint64_t gap_ticks[CEEMS_DOMAIN_COUNT];
	double residual_clamped_j;
	/* What a restatement would have taken from the system beyond its
	 * total (agent_status.c): jobs that ended before the idle power was
	 * learned kept a split by use that charged them more than their
	 * share; the system's total stops at 0 and this says by how much
	 * the node's figures then exceed its energy. */
	double restated_over_j[CEEMS_DOMAIN_COUNT];
	uint64_t last_ns;	/* the tick last added */
};

/* What the reply shows besides the engine's own figures. */
struct agent_status_in {
	const struct ceems_config *config;
	const struct ceems_agent *agent;
	const struct agent_totals *totals;
	uint64_t uptime_ns;
	unsigned clients;
	uint64_t requests, refusals, clients_refused;
	uint64_t tick_period_ns;	/* the tick now: idle_interval or interval */
};

/* Add TICK, taken at NOW_NS, to TOT (once: a tick already added is not). */
void agent_status_totals_add(struct agent_totals *tot,
		      const struct ceems_ledger_tick *tick, uint64_t now_ns);

/* The status reply into BUF of SIZE: its length, or -ENOMEM, -ENOSPC. */
int agent_status_reply(const struct agent_status_in *in, char *buf, size_t size);

#endif
