/* agent_err.c - the agent's side of a job's energy error bound
 * (lib/model/energy_err.h, doc/attribution.md "How sure a figure is"):
 * what each take of the node's counters may be off by, as its source
 * says; how sure the idle power in use is; and each job's account,
 * charged with its share every tick and with what a gap could have
 * held. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "base/tick_path.h"
#include "model/idle_fit.h"

/* A power-reading source: its error is a reading's, not a count's. */
static bool
is_power(const struct ceems_energy_counter *c)
{
	return c->power_res_w > 0 || c->power_lag_s > 0;
}

CEEMS_TICK_PATH void
ceems_agent_err_take(struct ceems_agent *a, struct ceems_energy_counter *c,
		     const struct ceems_energy_take *t, double dt_s)
{
	struct ceems_energy_err_node_tick *e = &a->err_pending;
	double source_j = c->resolution_j, lag_j = 0, w;
	bool gpu = c->domain == CEEMS_DOMAIN_GPU;

	if ((unsigned)c->domain >= CEEMS_DOMAIN_COUNT ||
	    (gpu && (c->device < 0 || c->device >= CEEMS_LEDGER_MAX_GPUS)))
		return;
	if (t->gap != CEEMS_GAP_NONE) {
		c->err_have_prev = false;
		return;
	}
	/* A power's take needs its length; the first has none known. */
	if (is_power(c) && !(dt_s > 0))
		return;
	if (is_power(c)) {
		w = t->joules / dt_s;
		ceems_energy_err_power(c->power_res_w, c->power_lag_s, dt_s, w,
				       c->err_have_prev ? c->err_prev_w : w,
				       &source_j, &lag_j);
		c->err_prev_w = w;
		c->err_have_prev = true;
	}
	if (gpu) {
		e->gpu_source_j[c->device] += source_j;
		e->gpu_lag_j[c->device] += lag_j;
	} else {
		e->source_j[c->domain] += source_j;
		e->lag_j[c->domain] += lag_j;
	}
}

/* How far the median of the quiet ticks L may be off, at about 95%: the
 * spread of the order statistics around it (ranks n/2 -+ sqrt(n)). */
static double
quiet_spread(const struct idle_learner *l)
{
	double sorted[IDLE_SAMPLES], med;
	unsigned n = l->n, lo, hi, k;

	if (n == 0)
		return 0;
	memcpy(sorted, l->w, n * sizeof(double));
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			double x = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = x;
		}
	k = (unsigned)ceil(sqrt((double)n));
	lo = n / 2 > k ? n / 2 - k : 0;
	hi = n / 2 + k < n ? n / 2 + k : n - 1;
	med = l->value;
	return fmax(med - sorted[lo], sorted[hi] - med);
}

void
ceems_agent_err_idle(struct ceems_agent *a,
		     const struct ceems_ledger_node_tick *node)
{
	const double configured[2] = { a->config.idle_power_package_w,
				       a->config.idle_power_dram_w };
	const int domains[2] = { CEEMS_DOMAIN_PACKAGE, CEEMS_DOMAIN_DRAM };
	double w;

	for (int i = 0; i < 2; i++) {
		int d = domains[i];
		double *out = &a->err_pending.idle_w[d];

		/* In the order set_idle_power chooses the value. */
		if (configured[i] >= 0 || node->idle_power_unlearned[d])
			*out = 0;
		else if (a->idle[d].value > 0)
			*out = quiet_spread(&a->idle[d]);
		else if (ceems_idle_fit_uncertainty(&a->idle_fit[d], &w))
			*out = w;
		else	/* an earlier agent's: a trusted fit's most */
			*out = 2 * CEEMS_IDLE_FIT_MAX_REL_SE *
			    node->idle_power_w[d];
	}
}

void
ceems_agent_err_tick(struct ceems_agent *a, double dt_s)
{
	ceems_energy_err_node_observe(&a->err_view, &a->last_tick, dt_s);
	a->err_tick = a->err_pending;
	memset(&a->err_pending, 0, sizeof(a->err_pending));
	/* The idle power's is a level: it holds until the next tick's. */
	memcpy(a->err_pending.idle_w, a->err_tick.idle_w,
	       sizeof(a->err_pending.idle_w));
}

void
ceems_agent_err_charge(struct ceems_agent *a, struct agent_job *j,
		       const struct ceems_energy_err_node_tick *err,
		       const struct ceems_ledger_job_share *share, size_t ngpus,
		       double dt_s)
{
	ceems_energy_err_add_tick(&j->err, &a->err_view, err, share, ngpus,
				  dt_s);
}

void
ceems_agent_err_gap(const struct ceems_agent *a, struct agent_job *j,
		    double dt_s)
{
	ceems_energy_err_add_gap(&j->err, &a->err_view, a->last_node.ngpus,
				 dt_s);
}

void
ceems_agent_err_report_partial(const struct ceems_agent *a,
			       const struct agent_job *j,
			       const struct ceems_ledger_job_share *share,
			       size_t ngpus, double dt_s,
			       struct ceems_energy_err_report *out)
{
	struct ceems_energy_err_account acc = j->err;

	ceems_energy_err_add_tick(&acc, &a->err_view, &a->err_pending, share,
				  ngpus, dt_s);
	ceems_energy_err_report_fill(&acc, out);
}
