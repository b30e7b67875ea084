/* test_idle_fit.c - the static power learned by regression
 * (lib/model/idle_fit.c) on synthetic nodes that are never quiet: power is
 * P_idle + k x busy CPUs plus noise (in the power and in the busy time,
 * as a tick's counters are read a little apart), under load patterns of
 * jobs coming and going.  The fit must find P_idle within 2%, within a
 * few minutes of ticks, and must not claim anything on a constant load. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/idle_fit.h"
#include "../tap.h"
#include "sim_rand.h"

struct node_model {
	double idle_w, k_w, cores;
	double noise_w, noise_busy;	/* standard deviations */
};

/* One tick of MODEL at BUSY CPUs into F. */
static void
feed(struct ceems_idle_fit *f, const struct node_model *m, double busy)
{
	double seen = busy + m->noise_busy * gauss();

	if (busy > m->cores)
		busy = m->cores;
	ceems_idle_fit_add(f, seen < 0 ? 0 : seen, m->cores,
			   m->idle_w + m->k_w * busy + m->noise_w * gauss());
}

/* Jobs of random sizes starting and ending over a node that always has
 * at least MIN_BUSY CPUs busy (daemons, a long job): the number of busy
 * CPUs changes every few ticks.  Returns the ticks until the fit was
 * first trusted (0: never), after TICKS ticks. */
static unsigned
run_jobs(struct ceems_idle_fit *f, const struct node_model *m,
	 double min_busy, unsigned ticks, double *first_w)
{
	double busy = min_busy;
	unsigned first = 0;

	for (unsigned t = 1; t <= ticks; t++) {
		if (uniform() < 0.1)
			busy = min_busy + uniform() * (m->cores - min_busy);
		feed(f, m, busy);
		if (f->converged && first == 0) {
			first = t;
			*first_w = f->value_w;
		}
	}
	return first;
}

static bool
within(double got, double want, double tol)
{
	return fabs(got - want) <= tol * want;
}

static void
test_never_quiet(const char *name, const struct node_model *m,
		 double min_busy)
{
	struct ceems_idle_fit f;
	unsigned first;
	double w = -1, first_w = -1;
	bool learned;

	ceems_idle_fit_init(&f);
	ok(!ceems_idle_fit_value(&f, &w) && w == -1, "%s: nothing learned yet", name);
	first = run_jobs(&f, m, min_busy, 600, &first_w);
	ok(first > 0 && first <= 180,
	   "%s: trusted after %u ticks (at most 3 minutes of 1 s ticks)",
	   name, first);
	ok(within(first_w, m->idle_w, 0.02),
	   "%s: when first trusted, %.2f W (within 2%%)", name, first_w);
	learned = ceems_idle_fit_value(&f, &w);
	ok(learned && within(w, m->idle_w, 0.02),
	   "%s: learned %.2f W, true %.2f W (within 2%%)", name, w, m->idle_w);
	ok(f.slope_w > 0 && within(f.slope_w, m->k_w, 0.1),
	   "%s: slope %.2f W/CPU, true %.2f", name, f.slope_w, m->k_w);
}

/* A busy node whose load never changes: the line through its points may
 * have any intercept, and the fit must say it does not know. */
static void
test_constant_load(void)
{
	const struct node_model m = { 40, 15, 2, 1.0, 0.01 };
	const struct node_model exact = { 40, 15, 2, 0, 0.01 };
	struct ceems_idle_fit f;
	bool ever = false;
	double w;

	ceems_idle_fit_init(&f);
	for (int t = 0; t < 1000; t++) {
		feed(&f, &m, 1.0);
		ever = ever || f.converged;
	}
	ok(!ever && !ceems_idle_fit_value(&f, &w) && f.n > 0,
	   "constant load, noisy power: never trusted (spread %.3f CPU)",
	   f.spread);
	ceems_idle_fit_init(&f);
	ever = false;
	for (int t = 0; t < 1000; t++) {
		feed(&f, &exact, 1.5);
		ever = ever || f.converged;
	}
	ok(!ever && !ceems_idle_fit_value(&f, &w),
	   "constant load, power exactly on the line: never trusted");
}

/* Once learned, a long constant load (a window that cannot tell) keeps
 * the last trusted value rather than dropping it. */
static void
test_kept_through_constant_load(void)
{
	const struct node_model m = { 120, 3, 64, 3.0, 0.05 };
	struct ceems_idle_fit f;
	double before = -1, after = -1, first_w;
	bool learned;

	ceems_idle_fit_init(&f);
	run_jobs(&f, &m, 8, 400, &first_w);
	for (int t = 0; t < CEEMS_IDLE_FIT_POINTS; t++)
		feed(&f, &m, 40);
	learned = ceems_idle_fit_value(&f, &before);
	ok(learned && !f.converged && within(before, m.idle_w, 0.02),
	   "a window of constant load: not trusted now, %.2f W kept", before);
	for (int t = 0; t < CEEMS_IDLE_FIT_POINTS; t++)
		feed(&f, &m, 40);
	learned = ceems_idle_fit_value(&f, &after);
	ok(learned && after == before, "another one: still %.2f W", after);
}

/* Power that falls with load is no node's line: refused. */
static void
test_negative_slope(void)
{
	struct ceems_idle_fit f;
	double w;

	ceems_idle_fit_init(&f);
	for (int t = 0; t < 100; t++) {
		double busy = (t % 10) / 5.0;

		ceems_idle_fit_add(&f, busy, 2, 80 - 10 * busy);
	}
	ok(!f.converged && !ceems_idle_fit_value(&f, &w),
	   "power falling with load: not trusted");
}

static void
test_bad_points(void)
{
	struct ceems_idle_fit f;

	ceems_idle_fit_init(&f);
	ceems_idle_fit_add(&f, NAN, 2, 10);
	ceems_idle_fit_add(&f, 1, 2, INFINITY);
	ceems_idle_fit_add(&f, -1, 2, 10);
	ceems_idle_fit_add(&f, 1, 2, -10);
	ceems_idle_fit_add(&f, 1, 0, 10);
	ceems_idle_fit_add(&f, 1, NAN, 10);
	is_int(f.n, 0, "non-finite or negative points are ignored");
}

/* One absurd but finite power among good points: refused at the door,
 * and (should one be in the window) a fit whose sums overflow is no fit. */
static void
test_absurd_point(void)
{
	const struct node_model m = { 40, 15, 2, 1.5, 0.03 };
	struct ceems_idle_fit f;
	double first_w, before;
	unsigned n;
	bool ever = false;

	ceems_idle_fit_init(&f);
	run_jobs(&f, &m, 0.33, 200, &first_w);
	n = f.n;
	before = f.value_w;
	ceems_idle_fit_add(&f, 1, 2, 1e160);
	ok(f.learned && f.n == n && f.value_w == before,
	   "a point of 1e160 W is ignored (%u points, %.2f W kept)", f.n,
	   f.value_w);
	ceems_idle_fit_init(&f);
	for (unsigned i = 0; i < 40; i++) {
		double busy = (i % 8) / 4.0;

		ceems_idle_fit_add(&f, busy, 2, 40 + 15 * busy);
		if (i == 20) {
			/* As if one had got in, a little above the mean
			 * load: slope and intercept both positive. */
			f.busy[3] = 1.0;
			f.watts[3] = 1e160;
		}
		else if (i > 20)
			ever = ever || f.converged;
	}
	ok(!ever && isfinite(f.value_w) && f.value_w < 100,
	   "a window holding 1e160 W is never trusted (%.3g W kept from before)",
	   f.value_w);
}

/* Package power that rises on a curve, steeply on the first cores
 * (100 W idle, 400 W with all 64 busy, as busy^0.6), on a node never
 * below 40 busy: the line through its points passes far above 100 W at
 * no busy CPU, and is not to be trusted however clean the points. */
static void
test_curved_far_from_idle(void)
{
	struct ceems_idle_fit f;
	double busy = 52, w = -1;
	bool ever = false;

	ceems_idle_fit_init(&f);
	for (unsigned t = 0; t < 600; t++) {
		if (uniform() < 0.1)
			busy = 40 + 24 * uniform();
		ceems_idle_fit_add(&f, busy, 64,
				   100 + 300 * pow(busy / 64, 0.6) + gauss());
		ever = ever || f.converged;
	}
	ok(!ever && !ceems_idle_fit_value(&f, &w),
	   "curved power, load 40-64 of 64: never trusted (line %.1f W, lowest %.2f of the cores)",
	   f.intercept_w, f.low_fraction);
}

int
main(void)
{
	/* The demo's simulated node: 40 W + 15 W per busy CPU, 2 CPUs,
	 * never below a third of a CPU busy. */
	const struct node_model small = { 40, 15, 2, 1.5, 0.03 };
	/* A large node: 120 W static, 3 W per busy CPU, 64 CPUs, at least
	 * 8 always busy, noisy power. */
	const struct node_model large = { 120, 3, 64, 4.0, 0.2 };
	/* Static power small next to the active: 10 W + 15 W/CPU. */
	const struct node_model lean = { 10, 15, 2, 0.3, 0.02 };

	test_never_quiet("2 cores", &small, 0.33);
	test_never_quiet("64 cores", &large, 8);
	test_never_quiet("small static power", &lean, 0.5);
	test_constant_load();
	test_kept_through_constant_load();
	test_negative_slope();
	test_bad_points();
	test_absurd_point();
	test_curved_far_from_idle();
	return done_testing();
}
