/* ledger.c - split a tick's node energy, domain by domain, into job,
 * system and idle shares, and keep each job's running account.  The model
 * (doc/attribution.md) in one sentence: static power goes by what a job
 * holds, active power by what it uses, and whatever no job holds or uses
 * goes to `idle` or `system`, so that every domain balances.
 *
 * Every part is split the same way: part x over weights w_j with a
 * denominator W >= sum(w_j); job j gets x * w_j / W and the rest,
 * x * (W - sum w_j) / W, goes to system or idle.  Taking W as the larger
 * of the node's own figure and the jobs' sum keeps every share >= 0 even
 * when job and node samples disagree (sampling skew, oversubscription). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "model/intensity.h"
#include "model/ledger.h"
#include "base/tick_path.h"

#define JOULES_PER_KWH 3.6e6

/* What a job's weight in a split is. */
enum weight_kind {
	WEIGHT_CORES,		/* allocated cores */
	WEIGHT_CPU,		/* CPU time used */
	WEIGHT_ALLOC_MEM,	/* allocated memory */
	WEIGHT_RSS,		/* memory used */
	WEIGHT_GPU,		/* fraction of one GPU device */
};

/* A measured quantity, with garbage (NaN, infinities, negatives) as 0 so
 * that no share can come out negative or absurd. */
static double
nonneg(double x)
{
	return isfinite(x) && x > 0 ? x : 0;
}

static double
gpu_fraction(const struct ceems_ledger_job_tick *job, size_t dev)
{
	double f = nonneg(job->gpu_share[dev]);

	return f > 1 ? 1 : f;
}

/* The part of a tick of DT_S seconds the job was there: what it holds
 * (a level, not an amount) counts for that part only. */
static double
presence(const struct ceems_ledger_job_tick *job, double dt_s)
{
	double absent = nonneg(job->absent_s);

	return absent >= dt_s ? 0 : (dt_s - absent) / dt_s;
}

CEEMS_TICK_PATH static double
weight(const struct ceems_ledger_job_tick *job, enum weight_kind kind,
       size_t dev, double dt_s)
{
	switch (kind) {
	case WEIGHT_CORES:
		return (double)job->alloc_cores * presence(job, dt_s);
	case WEIGHT_CPU:
		return nonneg(job->cpu_s);
	case WEIGHT_ALLOC_MEM:
		return (double)job->alloc_mem_bytes * presence(job, dt_s);
	case WEIGHT_RSS:
		return (double)job->rss_bytes * presence(job, dt_s);
	case WEIGHT_GPU:
		return gpu_fraction(job, dev) * presence(job, dt_s);
	}
	return 0;
}

static double
weight_sum(const struct ceems_ledger_job_tick *jobs, size_t njobs,
	   enum weight_kind kind, size_t dev, double dt_s)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < njobs; i++)
		sum += weight(&jobs[i], kind, dev, dt_s);
	return sum;
}

/* A node's own figure less what jobs that left during the tick held. */
static double
held_less_left(double node_figure, double left)
{
	double x = node_figure - nonneg(left);

	return x > 0 ? x : 0;
}

/* Give each job X * w_j / DENOM of domain D (also counted as static when
 * IS_STATIC) and return the rest, X * (DENOM - SUM_W) / DENOM.  SUM_W must
 * be weight_sum() of the same kind, and DENOM >= SUM_W.  With DENOM 0
 * there is nothing to split by: everything is rest. */
CEEMS_TICK_PATH static double
distribute(double x, enum weight_kind kind, size_t dev, double dt_s,
	   double sum_w, double denom, const struct ceems_ledger_job_tick *jobs,
	   size_t njobs, struct ceems_ledger_job_share *shares,
	   enum ceems_energy_domain d, bool is_static)
{
	size_t i;

	if (x <= 0 || denom <= 0 || sum_w <= 0)
		return x > 0 ? x : 0;
	for (i = 0; i < njobs; i++) {
		double w = weight(&jobs[i], kind, dev, dt_s);
		double part;

		if (w <= 0)
			continue;
		part = x * (w / denom);
		shares[i].joules[d] += part;
		if (kind == WEIGHT_GPU)
			shares[i].gpu_device_j[dev] += part;
		if (is_static)
			shares[i].static_j[d] += part;
	}
	return x * ((denom - sum_w) / denom);
}

static double
max2(double a, double b)
{
	return a > b ? a : b;
}

/* The gap of a reading, with a "measurement" that is no number (NaN,
 * negative) reported as a read error rather than trusted. */
static enum ceems_energy_gap
reading_gap(const struct ceems_ledger_reading *r)
{
	if (r->gap != CEEMS_GAP_NONE)
		return r->gap;
	if (!isfinite(r->joules) || r->joules < 0)
		return CEEMS_GAP_READ_ERROR;
	return CEEMS_GAP_NONE;
}

/* A job's part of WEIGHT_KIND as distribute() gives it: 0 when it gives
 * everything to the rest. */
static double
part_of(const struct ceems_ledger_job_tick *job, enum weight_kind kind,
	double dt_s, double sum_w, double denom)
{
	if (denom <= 0 || sum_w <= 0)
		return 0;
	return weight(job, kind, 0, dt_s) / denom;
}

/* A tick split with the idle power not learned (all of it by use): per
 * watt of that power, what each job and idle would have had of the
 * static part and each job fewer of the active part.  Jobs that left
 * during the tick took their part of both already (ledger_carry.h): a
 * known idle power's static part for the rest would have been net of
 * theirs, and the active part net of the energy they took. */
static void
note_unlearned(const struct ceems_ledger_node_tick *node,
	       enum ceems_energy_domain d,
	       enum weight_kind held, double sum_held, double denom_held,
	       enum weight_kind used, double sum_used, double denom_used,
	       const struct ceems_ledger_job_tick *jobs, size_t njobs,
	       struct ceems_ledger_job_share *shares,
	       struct ceems_ledger_tick *tick)
{
	double dt_s = node->dt_s, idle_part = 1;
	double static_s = nonneg(dt_s - nonneg(node->left_unlearned_held_s[d]));
	double active_s = nonneg(dt_s - nonneg(node->left_unlearned_used_s[d]));

	for (size_t i = 0; i < njobs; i++) {
		double h = part_of(&jobs[i], held, dt_s, sum_held, denom_held);

		shares[i].unlearned_held_s[d] = static_s * h;
		shares[i].unlearned_used_s[d] =
		    active_s * part_of(&jobs[i], used, dt_s, sum_used, denom_used);
		idle_part -= h;
	}
	tick->unlearned_idle_s[d] = idle_part > 0 ? static_s * idle_part : 0;
}

/* Package or DRAM: a static part, min(idle power x dt, delta), by what
 * jobs hold, the rest (the active part) by what they use. */
CEEMS_TICK_PATH static void
split_static_active(const struct ceems_ledger_node_tick *node,
		    const struct ceems_ledger_reading *r,
		    enum ceems_energy_domain d, enum weight_kind held,
		    double node_held, enum weight_kind used,
		    double node_used, const struct ceems_ledger_job_tick *jobs,
		    size_t njobs, struct ceems_ledger_job_share *shares,
		    struct ceems_ledger_tick *tick)
{
	double delta, static_j, active_j, sum_held, sum_used;
	size_t i;

	tick->measured[d] = r->measured;
	if (!r->measured)
		return;
	tick->gap[d] = reading_gap(r);
	if (tick->gap[d] != CEEMS_GAP_NONE)
		return;
	for (i = 0; i < njobs; i++) {
		shares[i].covered[d] = true;
		shares[i].idle_unlearned[d] = node->idle_power_unlearned[d];
	}

	delta = r->joules;
	static_j = nonneg(node->idle_power_w[d]) * node->dt_s;
	if (static_j > delta)
		static_j = delta;
	active_j = delta - static_j;
	tick->delta_j[d] = delta;

	sum_held = weight_sum(jobs, njobs, held, 0, node->dt_s);
	sum_used = weight_sum(jobs, njobs, used, 0, node->dt_s);
	for (i = 0; i < njobs; i++) {
		shares[i].held_part[d] = part_of(&jobs[i], held, node->dt_s,
						 sum_held,
						 max2(node_held, sum_held));
		shares[i].used_part[d] = part_of(&jobs[i], used, node->dt_s,
						 sum_used,
						 max2(node_used, sum_used));
	}
	tick->idle_j[d] += distribute(static_j, held, 0, node->dt_s, sum_held,
				      max2(node_held, sum_held), jobs, njobs,
				      shares, d, true);

	/* Busy time (or used memory) outside every job is the system's;
	 * with no use at all, the active part is the system's too. */
	tick->system_j[d] += distribute(active_j, used, 0, node->dt_s, sum_used,
					max2(node_used, sum_used), jobs, njobs,
					shares, d, false);
	if (node->idle_power_unlearned[d])
		note_unlearned(node, d, held, sum_held,
			       max2(node_held, sum_held), used, sum_used,
			       max2(node_used, sum_used), jobs, njobs, shares,
			       tick);
}

/* GPU: each device's delta to the jobs owning it, by their fraction;
 * what no job owns goes to idle. */
static void
split_gpus(const struct ceems_ledger_node_tick *node,
	   const struct ceems_ledger_job_tick *jobs, size_t njobs,
	   struct ceems_ledger_job_share *shares,
	   struct ceems_ledger_tick *tick)
{
	const enum ceems_energy_domain d = CEEMS_DOMAIN_GPU;
	size_t dev, i;

	for (i = 0; i < njobs; i++)
		shares[i].covered[d] = true;
	for (dev = 0; dev < node->ngpus; dev++) {
		const struct ceems_ledger_reading *r = &node->gpu[dev];
		enum ceems_energy_gap gap;
		double owned, denom;

		if (!r->measured) {
			/* A device without a counter: its owners are not
			 * covered, and nothing of it is in the delta. */
			for (i = 0; i < njobs; i++)
				if (gpu_fraction(&jobs[i], dev) > 0)
					shares[i].covered[d] = false;
			continue;
		}
		tick->measured[d] = true;
		gap = reading_gap(r);
		if (gap != CEEMS_GAP_NONE) {
			if (tick->gap[d] == CEEMS_GAP_NONE)
				tick->gap[d] = gap;
			for (i = 0; i < njobs; i++)
				if (gpu_fraction(&jobs[i], dev) > 0)
					shares[i].covered[d] = false;
			continue;
		}
		tick->gpu_device_j[dev] = r->joules;
		tick->delta_j[d] += r->joules;
		owned = weight_sum(jobs, njobs, WEIGHT_GPU, dev, node->dt_s);
		denom = max2(held_less_left(1, node->left_gpu[dev]), owned);
		for (i = 0; i < njobs && owned > 0 && denom > 0; i++)
			shares[i].gpu_part[dev] =
			    weight(&jobs[i], WEIGHT_GPU, dev, node->dt_s) / denom;
		tick->idle_j[d] += distribute(r->joules, WEIGHT_GPU, dev,
					      node->dt_s, owned, denom, jobs,
					      njobs, shares, d, false);
	}
	if (!tick->measured[d])
		for (i = 0; i < njobs; i++)
			shares[i].covered[d] = false;
}

/* The first gap among the domains inside the node source this tick. */
static enum ceems_energy_gap
inner_gap(const struct ceems_ledger_tick *tick)
{
	if (tick->measured[CEEMS_DOMAIN_PACKAGE] &&
	    tick->gap[CEEMS_DOMAIN_PACKAGE] != CEEMS_GAP_NONE)
		return tick->gap[CEEMS_DOMAIN_PACKAGE];
	if (tick->measured[CEEMS_DOMAIN_DRAM] &&
	    tick->gap[CEEMS_DOMAIN_DRAM] != CEEMS_GAP_NONE)
		return tick->gap[CEEMS_DOMAIN_DRAM];
	return tick->measured[CEEMS_DOMAIN_GPU] ?
	    tick->gap[CEEMS_DOMAIN_GPU] : CEEMS_GAP_NONE;
}

/* NODE: the node source minus the other measured domains (fans, disks,
 * network, power-supply losses), by allocated cores.  Must run after the
 * other domains. */
static void
split_residual(const struct ceems_ledger_node_tick *node,
	       const struct ceems_ledger_job_tick *jobs, size_t njobs,
	       struct ceems_ledger_job_share *shares,
	       struct ceems_ledger_tick *tick)
{
	const enum ceems_energy_domain d = CEEMS_DOMAIN_NODE;
	double residual, sum_cores, denom;
	size_t i;

	tick->measured[d] = node->node.measured;
	if (!node->node.measured)
		return;
	tick->gap[d] = reading_gap(&node->node);
	if (tick->gap[d] != CEEMS_GAP_NONE)
		return;
	tick->node_source_j = node->node.joules;
	/* The residual needs every inner domain: one unknown makes it
	 * unknown, even though the node source itself was read. */
	tick->gap[d] = inner_gap(tick);
	if (tick->gap[d] != CEEMS_GAP_NONE)
		return;
	for (i = 0; i < njobs; i++)
		shares[i].covered[d] = true;

	residual = node->node.joules - tick->delta_j[CEEMS_DOMAIN_PACKAGE] -
	    tick->delta_j[CEEMS_DOMAIN_DRAM] - tick->delta_j[CEEMS_DOMAIN_GPU];
	if (residual < 0) {
		tick->residual_clamped_j = -residual;
		residual = 0;
	}
	tick->delta_j[d] = residual;
	sum_cores = weight_sum(jobs, njobs, WEIGHT_CORES, 0, node->dt_s);
	denom = max2(held_less_left((double)node->node_cores, node->left_cores),
		     sum_cores);
	for (i = 0; i < njobs; i++)
		shares[i].held_part[d] = shares[i].used_part[d] =
		    part_of(&jobs[i], WEIGHT_CORES, node->dt_s, sum_cores, denom);
	tick->idle_j[d] += distribute(residual, WEIGHT_CORES, 0, node->dt_s,
				      sum_cores, denom, jobs, njobs, shares, d,
				      false);
}

CEEMS_TICK_PATH int
ceems_ledger_split(const struct ceems_ledger_node_tick *node,
		   const struct ceems_ledger_job_tick *jobs, size_t njobs,
		   struct ceems_ledger_job_share *shares,
		   struct ceems_ledger_tick *tick)
{
	size_t i;

	if (tick != NULL)
		memset(tick, 0, sizeof(*tick));
	if (njobs > 0 && shares != NULL)
		memset(shares, 0, njobs * sizeof(*shares));
	if (node == NULL || tick == NULL || (njobs > 0 &&
	    (jobs == NULL || shares == NULL)))
		return -EINVAL;
	if (!isfinite(node->dt_s) || node->dt_s <= 0 ||
	    node->ngpus > CEEMS_LEDGER_MAX_GPUS)
		return -EINVAL;

	for (i = 0; i < njobs; i++) {
		shares[i].measured[CEEMS_DOMAIN_PACKAGE] = node->package.measured;
		shares[i].measured[CEEMS_DOMAIN_DRAM] = node->dram.measured;
		shares[i].measured[CEEMS_DOMAIN_NODE] = node->node.measured;
	}

	split_static_active(node, &node->package, CEEMS_DOMAIN_PACKAGE,
			    WEIGHT_CORES,
			    held_less_left((double)node->node_cores,
					   node->left_cores), WEIGHT_CPU,
			    nonneg(node->node_busy_cpu_s), jobs, njobs, shares,
			    tick);
	split_static_active(node, &node->dram, CEEMS_DOMAIN_DRAM,
			    WEIGHT_ALLOC_MEM,
			    held_less_left((double)node->node_mem_total_bytes,
					   node->left_mem_bytes), WEIGHT_RSS,
			    (double)node->node_mem_used_bytes, jobs, njobs,
			    shares, tick);
	split_gpus(node, jobs, njobs, shares, tick);
	for (i = 0; i < njobs; i++)
		shares[i].measured[CEEMS_DOMAIN_GPU] =
		    tick->measured[CEEMS_DOMAIN_GPU];
	split_residual(node, jobs, njobs, shares, tick);
	return 0;
}

static bool
same_factor(const struct ceems_emission_factor *a,
	    const struct ceems_emission_factor *b)
{
	return strcmp(a->source, b->source) == 0 &&
	    strcmp(a->zone, b->zone) == 0 && a->year == b->year &&
	    a->g_per_kwh == b->g_per_kwh && a->pue == b->pue;
}

/* Every domain the node measures was measured for the job this tick,
 * and there is at least one. */
static bool
energy_covered(const struct ceems_ledger_job_share *share)
{
	bool any = false;

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!share->measured[d])
			continue;
		if (!share->covered[d])
			return false;
		any = true;
	}
	return any;
}

/* After a tick of TICK_J joules under FACTOR (ENERGY_BEFORE joules
 * before it): the part of the energy at the yearly fallback, and, once
 * the factor changed, the mean intensity and the series' source. */
static bool
from_series(const struct ceems_emission_factor *f)
{
	return strncmp(f->source, CEEMS_INTENSITY_SOURCE_PREFIX,
		       sizeof(CEEMS_INTENSITY_SOURCE_PREFIX) - 1) == 0;
}

static void
add_factor_quality(struct ceems_job_ledger *l,
		   const struct ceems_emission_factor *factor, bool timed,
		   double energy_before, double tick_j)
{
	double energy = energy_before + tick_j;

	if (timed) {
		double fallback_j = (double)l->factor_fallback * energy_before +
		    (from_series(factor) ? 0 : tick_j);

		l->factor_timed = true;
		if (energy > 0)
			l->factor_fallback = (float)(fallback_j / energy);
		if (l->factor_fallback > 1)
			l->factor_fallback = 1;
	}
	if (!l->factor_changed)
		return;
	if (!from_series(&l->factor) && from_series(factor)) {
		memcpy(l->factor.source, factor->source, sizeof(l->factor.source));
		memcpy(l->factor.zone, factor->zone, sizeof(l->factor.zone));
		l->factor.year = factor->year;
	}
	if (energy > 0 && l->factor.pue > 0)
		l->factor.g_per_kwh = l->emissions_g * JOULES_PER_KWH /
		    (energy * l->factor.pue);
}

int
ceems_ledger_add_tick(struct ceems_job_ledger *l,
			  const struct ceems_ledger_job_share *share,
			  double dt_s,
			  const struct ceems_emission_factor *factor)
{
	return ceems_ledger_add_tick_timed(l, share, dt_s, factor, false);
}

CEEMS_TICK_PATH int
ceems_ledger_add_tick_timed(struct ceems_job_ledger *l,
				const struct ceems_ledger_job_share *share,
				double dt_s,
				const struct ceems_emission_factor *factor,
				bool timed)
{
	double tick_j = 0, energy_before;
	int d;

	if (l == NULL || share == NULL || !isfinite(dt_s) || dt_s <= 0)
		return -EINVAL;
	if (factor != NULL && !ceems_job_figures_emission_factor_valid(factor))
		return -EINVAL;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (!isfinite(share->joules[d]) || share->joules[d] < 0 ||
		    !isfinite(share->static_j[d]) || share->static_j[d] < 0)
			return -EINVAL;

	energy_before = ceems_job_figures_ledger_total_j(l);
	l->lifetime_s += dt_s;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		l->joules[d] += share->joules[d];
		l->static_j[d] += share->static_j[d];
		tick_j += share->joules[d];
		if (share->measured[d])
			l->measured[d] = true;
		if (share->covered[d])
			l->covered_s[d] += dt_s;
		if (share->covered[d] && share->idle_unlearned[d])
			l->idle_unlearned[d] = true;
	}
	if (factor == NULL)
		return 0;
	/* Energy x PUE x the intensity of this tick: a factor that varies
	 * in time is applied to the energy of its own time. */
	l->emissions_g += ceems_job_figures_emissions_grams(tick_j, factor);
	/* The emissions cover the tick only if its energy does: a tick with
	 * a factor but a gap in a measured domain (or no energy source at
	 * all) has emissions that are short of the truth. */
	if (energy_covered(share))
		l->emissions_covered_s += dt_s;
	if (!l->have_emissions) {
		l->factor = *factor;
		l->have_emissions = true;
	} else if (!l->factor_changed && !same_factor(&l->factor, factor)) {
		l->factor_changed = true;
	}
	add_factor_quality(l, factor, timed, energy_before, tick_j);
	return 0;
}

int
ceems_ledger_add_gap(struct ceems_job_ledger *l, double dt_s)
{
	if (l == NULL || !isfinite(dt_s) || dt_s <= 0)
		return -EINVAL;
	l->lifetime_s += dt_s;
	return 0;
}
