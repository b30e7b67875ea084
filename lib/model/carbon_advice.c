/* carbon_advice.c - the emissions a finished job would have had at
 * another start, by the recorded intensities, and whether the saving is
 * worth a note (carbon_advice.h; doc/attribution.md, "Carbon-aware
 * advice").  The job's power is taken as its mean over its life: its
 * energy is what it needs, whenever it runs. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/carbon_advice.h"
#include "model/measure.h"

#define JOULES_PER_KWH 3.6e6

/* The emissions, g, of W watts over [FROM, FROM + D) by S's rows, or
 * false when some of that time has no row (nothing is made up). */
static bool
emissions_at(const struct ceems_intensity_series *s, int64_t from, double d,
	     double w, double pue, double *g)
{
	double t = (double)from, end = (double)from + d, sum = 0;

	while (t < end) {
		const struct ceems_intensity_row *r =
		    ceems_intensity_at(s, (int64_t)floor(t));
		double to;

		if (r == NULL)
			return false;
		to = fmin((double)r->valid_to, end);
		sum += w * (to - t) * r->g_per_kwh;
		t = to;
	}
	*g = sum / JOULES_PER_KWH * pue;
	return true;
}

static bool
job_sane(const struct ceems_advice_job *j)
{
	return isfinite(j->duration_s) && j->duration_s > 0 &&
	    isfinite(j->energy_j) && j->energy_j > 0 && isfinite(j->pue) &&
	    j->pue >= 1 && j->start > 0 && j->start < CEEMS_INTENSITY_MAX_TIME;
}

/* The greenest start: the job's own, or the start of a row of the
 * series within the window whose hours the series covers. */
static void
find_best(const struct ceems_intensity_series *s,
	  const struct ceems_advice_job *j, const struct ceems_advice_opts *o,
	  double w, struct ceems_advice *out)
{
	int64_t last = j->start + (o->window_s > 0 ? o->window_s : 0);
	double g;

	out->best_start = j->start;
	out->best_g = out->actual_g;
	/* The rows that begin after its start: the next hours. */
	for (size_t i = ceems_intensity_rows_from(s, j->start);
	     i < s->nrows && s->rows[i].valid_from <= last; i++)
		if (emissions_at(s, s->rows[i].valid_from, j->duration_s, w,
				 j->pue, &g) && g < out->best_g) {
			out->best_g = g;
			out->best_start = s->rows[i].valid_from;
		}
}

int
ceems_carbon_advice(const struct ceems_intensity_series *s,
		    const struct ceems_advice_job *j,
		    const struct ceems_advice_opts *o, struct ceems_advice *out)
{
	double w;

	if (s == NULL || j == NULL || o == NULL || out == NULL)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!job_sane(j)) {
		out->verdict = CEEMS_ADVICE_BAD_JOB;
		return 0;
	}
	w = j->energy_j / j->duration_s;
	if (!emissions_at(s, j->start, j->duration_s, w, j->pue,
			  &out->actual_g)) {
		out->verdict = CEEMS_ADVICE_NO_SERIES;
		return 0;
	}
	find_best(s, j, o, w, out);
	out->saving_g = out->actual_g - out->best_g;
	out->saving_frac = out->actual_g > 0 ?
	    out->saving_g / out->actual_g : 0;
	if (j->duration_s < o->min_duration_s)
		out->verdict = CEEMS_ADVICE_SHORT;
	else if (j->in_chain)
		out->verdict = CEEMS_ADVICE_CHAIN;
	else if (!(out->saving_g >= o->min_saving_g &&
		   out->saving_frac >= o->min_saving_frac && out->saving_g > 0))
		out->verdict = CEEMS_ADVICE_SMALL;
	else
		out->verdict = CEEMS_ADVICE_WORTH;
	return 0;
}

int
ceems_carbon_advice_of_report(const struct ceems_intensity_series *s,
			      const struct ceems_agent_job_report *r,
			      int64_t start, bool in_chain,
			      const struct ceems_advice_opts *o,
			      struct ceems_advice *out)
{
	const struct ceems_job_ledger *l;
	struct ceems_advice_job j;

	if (s == NULL || r == NULL || o == NULL || out == NULL)
		return -EINVAL;
	l = &r->ledger;
	memset(&j, 0, sizeof(j));
	/* The energy the Carbon line priced, at the PUE it used: a job
	 * without emissions has no advice (no zone, nothing measured). */
	if (!l->have_emissions ||
	    !ceems_job_figures_emission_factor_valid(&l->factor) ||
	    !ceems_job_figures_ledger_energy_known(l)) {
		ceems_advice_none(out);
		return 0;
	}
	j.start = start;
	j.duration_s = r->elapsed_s;
	j.energy_j = ceems_job_figures_ledger_total_j(l);
	j.pue = l->factor.pue;
	j.in_chain = in_chain;
	return ceems_carbon_advice(s, &j, o, out);
}
