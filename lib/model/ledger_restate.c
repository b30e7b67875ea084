/* ledger_restate.c - a job's ticks split before the idle power was
 * learned, restated with it (see ledger_restate.h). */
#include "config.h"

#include <math.h>
#include <string.h>


#include "model/ledger_restate.h"
#include "base/tick_path.h"

#define JOULES_PER_KWH 3.6e6

static double
finite_or_0(double x)
{
	return isfinite(x) ? x : 0;
}

CEEMS_TICK_PATH void
ceems_ledger_restate_add(struct ceems_ledger_unlearned *u,
			 const struct ceems_ledger_job_share *share,
			 const struct ceems_emission_factor *factor)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double held = finite_or_0(share->unlearned_held_s[d]);
		double used = finite_or_0(share->unlearned_used_s[d]);

		if (!share->covered[d] || !share->idle_unlearned[d])
			continue;
		u->held_s[d] += held;
		u->used_s[d] += used;
		if (factor == NULL)
			continue;
		u->held_g[d] += ceems_job_figures_emissions_grams(held, factor);
		u->used_g[d] += ceems_job_figures_emissions_grams(used, factor);
	}
}

double
ceems_ledger_restate_account(struct ceems_job_ledger *l,
			     struct ceems_ledger_unlearned *u,
			     enum ceems_energy_domain d, double idle_w)
{
	double before = l->joules[d], after, static_j, grams, energy;

	if (!isfinite(idle_w) || idle_w <= 0)
		return 0;
	after = before + idle_w * (u->held_s[d] - u->used_s[d]);
	/* Below 0 only where the tick's delta was under the idle power
	 * (the split then caps the static part at the delta). */
	l->joules[d] = after > 0 ? after : 0;
	static_j = l->static_j[d] + idle_w * u->held_s[d];
	l->static_j[d] = static_j < l->joules[d] ? static_j : l->joules[d];
	if (l->have_emissions) {
		grams = l->emissions_g + idle_w * (u->held_g[d] - u->used_g[d]);
		l->emissions_g = grams > 0 ? grams : 0;
		/* Once ticks had different factors, the one shown is the
		 * energy-weighted mean: of the restated figures now. */
		energy = ceems_job_figures_ledger_total_j(l);
		if (l->factor_changed && energy > 0 && l->factor.pue > 0)
			l->factor.g_per_kwh = l->emissions_g * JOULES_PER_KWH /
			    (energy * l->factor.pue);
	}
	if (!u->partial[d])
		l->idle_unlearned[d] = false;
	u->held_s[d] = u->used_s[d] = u->held_g[d] = u->used_g[d] = 0;
	return l->joules[d] - before;
}

CEEMS_TICK_PATH double
ceems_ledger_restate_per_w(const struct ceems_ledger_job_share *share,
			   enum ceems_energy_domain d, double part)
{
	if (!share->covered[d] || !share->idle_unlearned[d])
		return 0;
	return finite_or_0((share->unlearned_held_s[d] -
			    share->unlearned_used_s[d]) * part);
}
