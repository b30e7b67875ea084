/* ledger_carry.h - jobs that leave between two ticks, split on their own.
 *
 * The agent splits the node's energy on its timer.  A job that ends
 * between two ticks must leave with its figures up to that moment, yet
 * reading every other job at that moment (a whole tick) costs a node
 * with 1000 jobs milliseconds inside the ending job's slurmstepd.  So the
 * leaver alone is split: the node's energy and busy time since the last
 * tick are read, the job's own usage too, and the ledger gives it its
 * part of that partial tick, which (the model's shares being the job's
 * own weight over the node's figure) is what a whole tick would have
 * given it.  What it took, and what it held and used, is remembered
 * here; the next tick (or the next leaver) splits the node's figures net
 * of it, so that every domain still balances: leavers + jobs + system +
 * idle = the node's delta (design invariant 2).
 *
 * Pure functions over ledger structures: no I/O. */
#ifndef CEEMS_LEDGER_CARRY_H
#define CEEMS_LEDGER_CARRY_H

#include "model/ledger.h"

struct ceems_ledger_carry {
	/* Held and used by the leavers, integrated over the time they were
	 * there in the tick (x seconds). */
	double core_s;
	double mem_byte_s;
	double rss_byte_s;
	double gpu_s[CEEMS_LEDGER_MAX_GPUS];
	double cpu_s;
	/* What they took, per domain (NODE: the residual). */
	double joules[CEEMS_DOMAIN_COUNT];
	double static_j[CEEMS_DOMAIN_COUNT];
	double gpu_device_j[CEEMS_LEDGER_MAX_GPUS];
	/* Split with the idle power not learned: their held and used
	 * seconds per watt of it (ceems_ledger_job_share's unlearned_*),
	 * which the rest's restatement leaves out as a known idle power
	 * would have. */
	double unlearned_held_s[CEEMS_DOMAIN_COUNT];
	double unlearned_used_s[CEEMS_DOMAIN_COUNT];
};

/* Forget the leavers: a tick has split the rest. */
void ceems_ledger_carry_clear(struct ceems_ledger_carry *carry);

/* Make NODE, the node's figures since the last tick (dt_s of them), net
 * of what the leavers took, held and used. */
void ceems_ledger_carry_apply(const struct ceems_ledger_carry *carry,
			      struct ceems_ledger_node_tick *node);

/* JOB, split over a partial tick of DT_S seconds (its absent_s says how
 * long of it it was not there), leaves with SHARE. */
void ceems_ledger_carry_add(struct ceems_ledger_carry *carry,
			    const struct ceems_ledger_job_tick *job,
			    double dt_s,
			    const struct ceems_ledger_job_share *share);

/* Add what the leavers took back into TICK, the split of the rest, so
 * that it shows the node's whole delta: jobs (leavers included) + system
 * + idle = delta_j. */
void ceems_ledger_carry_restore(const struct ceems_ledger_carry *carry,
				struct ceems_ledger_tick *tick);

#endif
