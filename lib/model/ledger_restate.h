/* ledger_restate.h - re-split, with an idle power learned later, the
 * ticks a job was split with none (all of the static power by use).
 *
 * A fresh agent that is to learn the node's idle power splits everything
 * by use until it has (doc/attribution.md): a job that holds cores and
 * uses none is charged nothing of their static power, and a busy one
 * all of the node's.  The split is linear in the idle power P: per tick,
 * a job's share is its use's part of the delta plus P x dt x (its part
 * of what is held - its part of the use).  So a job keeps, per domain,
 * the sums of dt x its held part and dt x its used part over those
 * ticks (ceems_ledger_job_share's unlearned_*), and once P is learned
 * its account is restated at once: every tick it was there as if P had
 * been known then.  Jobs that ended before keep their split, flagged
 * idle_unlearned. */
#ifndef CEEMS_LEDGER_RESTATE_H
#define CEEMS_LEDGER_RESTATE_H

#include <stdbool.h>

#include "model/emissions.h"
#include "model/ledger.h"

/* One job's ticks split with the idle power not learned, per watt of
 * it: the static joules its held part would have had, the active joules
 * its used part would have had fewer, and both as emissions (grams at
 * each tick's own factor).  PARTIAL: some of those ticks are not here
 * (the job was restored after an agent restart), so a restated account
 * keeps its idle_unlearned flag. */
struct ceems_ledger_unlearned {
	double held_s[CEEMS_DOMAIN_COUNT];
	double used_s[CEEMS_DOMAIN_COUNT];
	double held_g[CEEMS_DOMAIN_COUNT];
	double used_g[CEEMS_DOMAIN_COUNT];
	bool partial[CEEMS_DOMAIN_COUNT];
};

/* Add SHARE's tick (charged under FACTOR, NULL for none) to U. */
void ceems_ledger_restate_add(struct ceems_ledger_unlearned *u,
			      const struct ceems_ledger_job_share *share,
			      const struct ceems_emission_factor *factor);

/* Restate domain D of account L with IDLE_W watts of idle power over
 * the ticks in U, and empty U's D.  Returns the joules added to L (less
 * than 0 when the job gives back active power it was charged). */
double ceems_ledger_restate_account(struct ceems_job_ledger *l,
				    struct ceems_ledger_unlearned *u,
				    enum ceems_energy_domain d, double idle_w);

/* PART (0 to 1) of SHARE's restatement per watt of idle power: the
 * whole for the job's series, a step's part of the job's use this tick
 * for the step. */
double ceems_ledger_restate_per_w(const struct ceems_ledger_job_share *share,
				  enum ceems_energy_domain d, double part);

#endif
