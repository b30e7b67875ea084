/* bmc_curve.c - a BMC's power readings turned into energy per tick.
 *
 * Between two fresh readings the power is taken as linear (a
 * trapezoid).  After the last reading, a take hands out the last power
 * held, up to max_hold_ns after it; when the next reading comes, the
 * difference between the trapezoid and what was handed out is owed to
 * the next take (a negative debt is carried, never handed out as
 * negative energy).  So the sum over many ticks is the trapezoid
 * integral of the readings, and each tick still gets its own share
 * instead of a lump at every reading.
 *
 * A reading whose BMC stamp did not move is stale (the BMC answered
 * its last value again) and is never used as new; a garbage reading is
 * dropped.  With no fresh reading for max_hold_ns, ticks are gaps, and
 * the next fresh reading is a new baseline whose tick is a gap too:
 * nothing is interpolated across a gap. */
#include "config.h"

#include <math.h>

#include "sources/bmc.h"

void
ceems_bmc_curve_init(struct ceems_bmc_curve *c, uint64_t max_hold_ns,
		     uint64_t now_ns)
{
	*c = (struct ceems_bmc_curve){
		.max_hold_ns = max_hold_ns,
		.rebase = true,
		.rebase_gap = CEEMS_GAP_FIRST_READ,
		.taken_ns = now_ns,
		.measured_from_ns = now_ns,
	};
}

/* The integral over [A, B] of the line from (T0, W0) to (T1, W1). */
static double
line_joules(uint64_t t0, double w0, uint64_t t1, double w1, uint64_t a,
	    uint64_t b)
{
	double span = (double)(t1 - t0), wa, wb;

	if (b <= a)
		return 0;
	if (span <= 0)
		return w1 * (double)(b - a) / 1e9;
	wa = w0 + (w1 - w0) * (double)(a - t0) / span;
	wb = w0 + (w1 - w0) * (double)(b - t0) / span;
	return (wa + wb) / 2 * (double)(b - a) / 1e9;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t
min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The segment from the last reading to (T1, W1): what takes handed out
 * over it as the last power held is replaced by the line, and what no
 * take has reached yet is owed. */
static void
integrate_segment(struct ceems_bmc_curve *c, uint64_t t1, double w1)
{
	uint64_t t0 = c->last_ns, a = max_u64(t0, c->measured_from_ns);
	uint64_t taken = c->taken_ns, d;
	double w0 = c->last_w;

	if (taken > a) {
		d = min_u64(taken, t1);
		c->owed_j += line_joules(t0, w0, t1, w1, a, d) -
			     w0 * (double)(d - a) / 1e9;
		if (taken > t1)
			c->owed_j += (w1 - w0) * (double)(taken - t1) / 1e9;
	}
	c->owed_j += line_joules(t0, w0, t1, w1, max_u64(taken, a), t1);
}

enum ceems_bmc_verdict
ceems_bmc_curve_reading(struct ceems_bmc_curve *c,
			const struct ceems_bmc_reading *r, uint64_t now_ns)
{
	if (!isfinite(r->watts) || r->watts <= 0 ||
	    r->watts > CEEMS_BMC_MAX_WATTS)
		return CEEMS_BMC_GARBAGE;
	if (r->have_stamp && c->have_stamp && r->stamp == c->stamp)
		return CEEMS_BMC_STALE;
	if (c->have_last && now_ns < c->last_ns)
		return CEEMS_BMC_GARBAGE;	/* clocks do not go back */
	if (c->have_last && !c->rebase)
		integrate_segment(c, now_ns, r->watts);
	c->have_last = true;
	c->last_ns = now_ns;
	c->last_w = r->watts;
	c->have_stamp = r->have_stamp;
	c->stamp = r->stamp;
	return CEEMS_BMC_FRESH;
}

void
ceems_bmc_curve_lost(struct ceems_bmc_curve *c, enum ceems_energy_gap gap)
{
	/* The stamp stays: the BMC's same reading after the loss is still
	 * not a new one. */
	c->have_last = false;
	if (!c->rebase) {
		c->rebase = true;
		c->rebase_gap = gap;
	}
}

/* The tick up to NOW_NS is a gap: nothing before it is owed any more. */
static enum ceems_energy_gap
take_gap(struct ceems_bmc_curve *c, uint64_t now_ns, enum ceems_energy_gap g)
{
	c->owed_j = 0;
	c->taken_ns = max_u64(c->taken_ns, now_ns);
	c->measured_from_ns = c->taken_ns;
	return g;
}

enum ceems_energy_gap
ceems_bmc_curve_take(struct ceems_bmc_curve *c, uint64_t now_ns,
		     double *joules)
{
	uint64_t from;
	double j;

	*joules = 0;
	if (!c->have_last)
		return take_gap(c, now_ns, c->rebase ? c->rebase_gap :
				CEEMS_GAP_READ_ERROR);
	if (now_ns > c->last_ns && now_ns - c->last_ns > c->max_hold_ns) {
		ceems_bmc_curve_lost(c, CEEMS_GAP_READ_ERROR);
		return take_gap(c, now_ns, CEEMS_GAP_READ_ERROR);
	}
	if (c->rebase) {
		enum ceems_energy_gap g = c->rebase_gap;

		c->rebase = false;
		take_gap(c, now_ns, g);
		/* The line starts at the baseline or at this tick, whichever
		 * is later: what lies before was in the gap. */
		return g;
	}
	from = max_u64(c->taken_ns, c->last_ns);
	j = c->owed_j;
	if (now_ns > from)
		j += c->last_w * (double)(now_ns - from) / 1e9;
	c->taken_ns = max_u64(c->taken_ns, now_ns);
	if (j < 0) {
		c->owed_j = j;		/* a debt the next takes pay */
		j = 0;
	} else {
		c->owed_j = 0;
	}
	*joules = j;
	return CEEMS_GAP_NONE;
}
