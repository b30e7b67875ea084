/* job_figures.c - reading a job's figures: the names of the energy
 * domains, a job ledger's coverage and total, energy into emissions.
 * Pure functions on the structures of ledger.h, energy.h and
 * emissions.h, kept apart from the ledger's split, the energy sources and
 * the carbon table so that the job-side plugin, which formats a job's
 * summary from the agent's report, links none of those (Makefile.am:
 * LIBCEEMS_CLIENT_SOURCES). */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "model/emissions.h"
#include "model/energy.h"
#include "model/ledger.h"
#include "base/tick_path.h"

#define JOULES_PER_KWH 3.6e6

static const char *const domain_names[] = {
	[CEEMS_DOMAIN_PACKAGE] = "package",
	[CEEMS_DOMAIN_DRAM] = "dram",
	[CEEMS_DOMAIN_GPU] = "gpu",
	[CEEMS_DOMAIN_NODE] = "node",
};

const char *
ceems_job_figures_energy_domain_name(enum ceems_energy_domain d)
{
	if ((unsigned int)d >= CEEMS_DOMAIN_COUNT)
		return "unknown";
	return domain_names[d];
}

void
ceems_job_figures_ledger_init(struct ceems_job_ledger *l)
{
	memset(l, 0, sizeof(*l));
}

bool
ceems_job_figures_ledger_coverage(const struct ceems_job_ledger *l,
			  enum ceems_energy_domain d, double *fraction)
{
	double f;

	if (l == NULL || (int)d < 0 || d >= CEEMS_DOMAIN_COUNT ||
	    !l->measured[d] || l->lifetime_s <= 0)
		return false;
	f = l->covered_s[d] / l->lifetime_s;
	*fraction = f > 1 ? 1 : f;
	return true;
}

bool
ceems_job_figures_ledger_energy_known(const struct ceems_job_ledger *l)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (l->measured[d] && l->covered_s[d] > 0)
			return true;
	return false;
}

CEEMS_TICK_PATH double
ceems_job_figures_ledger_total_j(const struct ceems_job_ledger *l)
{
	double sum = 0;
	int d;

	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		sum += l->joules[d];
	return sum;
}

CEEMS_TICK_PATH bool
ceems_job_figures_emission_factor_valid(const struct ceems_emission_factor *f)
{
	return f != NULL && isfinite(f->g_per_kwh) && f->g_per_kwh >= 0 &&
	    f->g_per_kwh <= CEEMS_EMISSIONS_MAX_G_PER_KWH && isfinite(f->pue) &&
	    f->pue >= 1 && f->pue <= CEEMS_EMISSIONS_MAX_PUE;
}

CEEMS_TICK_PATH double
ceems_job_figures_emissions_grams(double joules, const struct ceems_emission_factor *f)
{
	return joules / JOULES_PER_KWH * f->pue * f->g_per_kwh;
}
