/* energy_err.c - a job's energy error bound, domain by domain: what the
 * node's figures may be off by each tick, carried to the job through the
 * split's own parts (energy_err.h; the model is in doc/attribution.md,
 * "How sure a figure is"). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "model/energy_err.h"

static const char *const part_names[] = {
	[CEEMS_ERR_SOURCE] = "source",
	[CEEMS_ERR_LAG] = "lag",
	[CEEMS_ERR_IDLE] = "idle_power",
	[CEEMS_ERR_GAPS] = "gaps",
};

const char *
ceems_energy_err_part_name(enum ceems_energy_err_part p)
{
	if ((unsigned)p >= CEEMS_ERR_PARTS)
		return "unknown";
	return part_names[p];
}

/* A figure of the node's or the job's, garbage (NaN, negative) as 0:
 * an error bound is never negative. */
static double
nonneg(double x)
{
	return isfinite(x) && x > 0 ? x : 0;
}

static double
max2(double a, double b)
{
	return a > b ? a : b;
}

void
ceems_energy_err_account_init(struct ceems_energy_err_account *a)
{
	memset(a, 0, sizeof(*a));
	a->known = true;
}

void
ceems_energy_err_node_init(struct ceems_energy_err_node *n)
{
	memset(n, 0, sizeof(*n));
}

void
ceems_energy_err_node_observe(struct ceems_energy_err_node *n,
			      const struct ceems_ledger_tick *tick, double dt_s)
{
	if (!(isfinite(dt_s) && dt_s > 0))
		return;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (tick->measured[d] && tick->gap[d] == CEEMS_GAP_NONE)
			n->max_w[d] = max2(n->max_w[d],
					   nonneg(tick->delta_j[d]) / dt_s);
	for (size_t g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++)
		n->gpu_max_w[g] = max2(n->gpu_max_w[g],
				       nonneg(tick->gpu_device_j[g]) / dt_s);
}

void
ceems_energy_err_power(double res_w, double lag_s, double dt_s, double w_now,
		       double w_prev, double *source_j, double *lag_j)
{
	double change = isfinite(w_now) && isfinite(w_prev) ?
	    w_now - w_prev : 0;

	*source_j = nonneg(res_w) * nonneg(dt_s);
	*lag_j = nonneg(lag_s) * change;
}

/* A signed figure, garbage as 0. */
static double
finite_or_0(double x)
{
	return isfinite(x) ? x : 0;
}

/* A gap of DT_S seconds in domain D: what it could have held for the
 * job, its largest part of the domain's largest power; unknown before
 * the node showed that power. */
static void
add_gap_bound(struct ceems_energy_err_account *a,
	const struct ceems_energy_err_node *n, enum ceems_energy_domain d,
	size_t ngpus, double dt_s)
{
	double j = 0;
	bool seen = false, parts = a->parts_seen[d];

	if (d != CEEMS_DOMAIN_GPU) {
		j = (parts ? a->max_part[d] : 1) * n->max_w[d] * dt_s;
		seen = n->max_w[d] > 0;
	}
	for (size_t g = 0; d == CEEMS_DOMAIN_GPU && g < ngpus &&
	     g < CEEMS_LEDGER_MAX_GPUS; g++) {
		j += (parts ? a->gpu_max_part[g] : 1) * n->gpu_max_w[g] * dt_s;
		seen = seen || n->gpu_max_w[g] > 0;
	}
	a->gaps_j[d] += j;
	if (!seen)
		a->unbounded[d] = true;
}

/* The job's parts of this tick into its largest parts. */
static void
note_parts(struct ceems_energy_err_account *a,
	   const struct ceems_ledger_job_share *share, size_t ngpus)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		a->max_part[d] = max2(a->max_part[d],
				      max2(nonneg(share->held_part[d]),
					   nonneg(share->used_part[d])));
	for (size_t g = 0; g < ngpus && g < CEEMS_LEDGER_MAX_GPUS; g++)
		a->gpu_max_part[g] = max2(a->gpu_max_part[g],
					  nonneg(share->gpu_part[g]));
}

/* The errors of the domains inside the node source this tick: their
 * resolutions' sum into *SOURCE_J, their lags' into *LAG_J. */
static void
inner_errors(const struct ceems_energy_err_node_tick *err, size_t ngpus,
	     double *source_j, double *lag_j)
{
	*source_j = nonneg(err->source_j[CEEMS_DOMAIN_PACKAGE]) +
	    nonneg(err->source_j[CEEMS_DOMAIN_DRAM]);
	*lag_j = finite_or_0(err->lag_j[CEEMS_DOMAIN_PACKAGE]) +
	    finite_or_0(err->lag_j[CEEMS_DOMAIN_DRAM]);
	for (size_t g = 0; g < ngpus && g < CEEMS_LEDGER_MAX_GPUS; g++) {
		*source_j += nonneg(err->gpu_source_j[g]);
		*lag_j += finite_or_0(err->gpu_lag_j[g]);
	}
}

/* One covered tick of domain D: the source's error through the job's
 * part of the use, the idle power's through held less used. */
static void
add_covered(struct ceems_energy_err_account *a,
	    const struct ceems_energy_err_node *n,
	    const struct ceems_energy_err_node_tick *err,
	    const struct ceems_ledger_job_share *share,
	    enum ceems_energy_domain d, size_t ngpus, double dt_s)
{
	double idle_w, part;

	if (d == CEEMS_DOMAIN_GPU) {
		for (size_t g = 0; g < ngpus && g < CEEMS_LEDGER_MAX_GPUS; g++) {
			part = nonneg(share->gpu_part[g]);
			a->source_j[d] += part * nonneg(err->gpu_source_j[g]);
			a->gpu_lag_signed_j[g] +=
			    part * finite_or_0(err->gpu_lag_j[g]);
		}
		return;
	}
	/* A change of the delta reaches the job by its part of the use,
	 * or of what is held when the static part took the whole delta
	 * (an idle power above the tick's energy): the larger bounds both. */
	part = max2(nonneg(share->held_part[d]), nonneg(share->used_part[d]));
	a->source_j[d] += part * nonneg(err->source_j[d]);
	a->lag_signed_j[d] += part * finite_or_0(err->lag_j[d]);
	if (d == CEEMS_DOMAIN_NODE) {
		/* The residual is the node source less the inner domains:
		 * their errors are its errors too, their lag against it. */
		double inner_j, inner_lag_j;

		inner_errors(err, ngpus, &inner_j, &inner_lag_j);
		a->source_j[d] += part * inner_j;
		a->lag_signed_j[d] -= part * inner_lag_j;
		return;
	}
	idle_w = share->idle_unlearned[d] ? n->max_w[d] : nonneg(err->idle_w[d]);
	a->idle_signed_j[d] += dt_s * (nonneg(share->held_part[d]) -
				       nonneg(share->used_part[d])) * idle_w;
}

void
ceems_energy_err_add_tick(struct ceems_energy_err_account *a,
			  const struct ceems_energy_err_node *n,
			  const struct ceems_energy_err_node_tick *err,
			  const struct ceems_ledger_job_share *share,
			  size_t ngpus, double dt_s)
{
	if (!(isfinite(dt_s) && dt_s > 0))
		return;
	note_parts(a, share, ngpus);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!share->measured[d])
			continue;
		a->measured[d] = true;
		if (share->covered[d]) {
			add_covered(a, n, err, share, d, ngpus, dt_s);
			a->parts_seen[d] = true;
		}
		else
			add_gap_bound(a, n, d, ngpus, dt_s);
	}
}

void
ceems_energy_err_add_gap(struct ceems_energy_err_account *a,
			 const struct ceems_energy_err_node *n, size_t ngpus,
			 double dt_s)
{
	if (!(isfinite(dt_s) && dt_s > 0))
		return;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (a->measured[d])
			add_gap_bound(a, n, d, ngpus, dt_s);
}

bool
ceems_energy_err_domain(const struct ceems_energy_err_account *a,
			enum ceems_energy_domain d,
			enum ceems_energy_err_part part, double *j)
{
	double v[CEEMS_ERR_PARTS];

	if ((unsigned)d >= CEEMS_DOMAIN_COUNT || !a->known || !a->measured[d] ||
	    a->unbounded[d] || (unsigned)part > CEEMS_ERR_PARTS)
		return false;
	v[CEEMS_ERR_SOURCE] = a->source_j[d];
	v[CEEMS_ERR_LAG] = fabs(a->lag_signed_j[d]);
	for (size_t g = 0; d == CEEMS_DOMAIN_GPU && g < CEEMS_LEDGER_MAX_GPUS; g++)
		v[CEEMS_ERR_LAG] += fabs(a->gpu_lag_signed_j[g]);
	v[CEEMS_ERR_IDLE] = fabs(a->idle_signed_j[d]);
	v[CEEMS_ERR_GAPS] = a->gaps_j[d];
	if (part != CEEMS_ERR_PARTS) {
		*j = v[part];
		return true;
	}
	*j = 0;
	for (int k = 0; k < CEEMS_ERR_PARTS; k++)
		*j += v[k];
	return true;
}

bool
ceems_energy_err_total(const struct ceems_energy_err_account *a, double *j)
{
	double sum = 0, x;
	bool any = false;

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (ceems_energy_err_domain(a, d, CEEMS_ERR_PARTS, &x)) {
			sum += x;
			any = true;
		}
	if (any)
		*j = sum;
	return any;
}

void
ceems_energy_err_report_fill(const struct ceems_energy_err_account *a,
			     struct ceems_energy_err_report *r)
{
	memset(r, 0, sizeof(*r));
	r->known = a->known;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		for (int k = 0; k < CEEMS_ERR_PARTS; k++)
			r->have[d] = ceems_energy_err_domain(a, d, k,
							     &r->part_j[d][k]);
}

bool
ceems_energy_err_report_domain(const struct ceems_energy_err_report *r,
			       enum ceems_energy_domain d, double *j)
{
	double sum = 0;

	if ((unsigned)d >= CEEMS_DOMAIN_COUNT || !r->known || !r->have[d])
		return false;
	for (int k = 0; k < CEEMS_ERR_PARTS; k++)
		sum += nonneg(r->part_j[d][k]);
	*j = sum;
	return true;
}

bool
ceems_energy_err_report_total(const struct ceems_energy_err_report *r,
			      double *j)
{
	double sum = 0, x;
	bool any = false;

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (ceems_energy_err_report_domain(r, d, &x)) {
			sum += x;
			any = true;
		}
	if (any)
		*j = sum;
	return any;
}
