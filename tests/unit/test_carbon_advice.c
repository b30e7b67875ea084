/* test_carbon_advice.c - carbon-aware advice (lib/model/carbon_advice.c)
 * on an imported series whose intensity changes during the day: 300
 * g/kWh from midnight to 6 h, 100 to noon, 200 to 18 h, 400 to
 * midnight, for two days in hourly rows, parsed as the agent's cache
 * is.  Every advised start and saving below was worked out by hand. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/carbon_advice.h"
#include "../tap.h"
#include "day_series.h"

static struct ceems_intensity_series series;

static const struct ceems_advice_opts opts = {
	.window_s = 24 * HOUR,
	.min_saving_g = 50,
	.min_saving_frac = 0.2,
	.min_duration_s = 3600,
};

static struct ceems_advice
advise(int64_t start, double duration_s, double energy_j, double pue,
       bool chain, const struct ceems_advice_opts *o)
{
	struct ceems_advice_job j = {
		.start = start, .duration_s = duration_s,
		.energy_j = energy_j, .pue = pue, .in_chain = chain,
	};
	struct ceems_advice a;

	ok(ceems_carbon_advice(&series, &j, o, &a) == 0, "advice made");
	return a;
}

static void
test_by_hand(void)
{
	struct ceems_advice a;

	/* 1 kWh over 18:00-20:00: 400 g; the greenest start within a day
	 * is 06:00 the next morning, at 100 g/kWh: 100 g, 300 g saved. */
	a = advise(DAY0 + 18 * HOUR, 2 * HOUR, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_WORTH && fabs(a.actual_g - 400) < 1e-9 &&
	   a.best_start == DAY0 + 30 * HOUR && fabs(a.best_g - 100) < 1e-9 &&
	   fabs(a.saving_g - 300) < 1e-9 && fabs(a.saving_frac - 0.75) < 1e-12,
	   "evening job: start at 06:00 next day, 400 -> 100 g (%g -> %g at %+lld h)",
	   a.actual_g, a.best_g, (long long)((a.best_start - DAY0) / HOUR));

	/* 1 kWh over 05:00-07:00, PUE 1.5: half at 300, half at 100 =
	 * 200 g/kWh x 1.5 = 300 g; from 06:00 all at 100: 150 g. */
	a = advise(DAY0 + 5 * HOUR, 2 * HOUR, KWH, 1.5, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_WORTH && fabs(a.actual_g - 300) < 1e-9 &&
	   a.best_start == DAY0 + 6 * HOUR && fabs(a.best_g - 150) < 1e-9,
	   "dawn job with PUE 1.5: an hour later, 300 -> 150 g (%g -> %g)",
	   a.actual_g, a.best_g);

	/* 06:30-09:30 is already at the lowest intensity: nothing to gain,
	 * and its own start stays the best. */
	a = advise(DAY0 + 6 * HOUR + 1800, 3 * HOUR, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_SMALL && a.saving_g == 0 &&
	   a.best_start == DAY0 + 6 * HOUR + 1800,
	   "morning job: already the greenest, no note");

	/* A 6 h window from 18:00: midnight's 300 g/kWh is the best. */
	{
		struct ceems_advice_opts six = opts;

		six.window_s = 6 * HOUR;
		a = advise(DAY0 + 18 * HOUR, 2 * HOUR, KWH, 1, false, &six);
		ok(a.verdict == CEEMS_ADVICE_WORTH &&
		   a.best_start == DAY0 + 24 * HOUR &&
		   fabs(a.saving_g - 100) < 1e-9,
		   "a 6 h window: midnight, 100 g saved (%g)", a.saving_g);
	}

	/* The series ends at day 2's midnight: from day 1's 20:00 the
	 * only starts whose two hours it covers are at 400 g/kWh. */
	a = advise(DAY0 + 44 * HOUR, 2 * HOUR, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_SMALL && fabs(a.actual_g - 400) < 1e-9 &&
	   a.saving_g == 0,
	   "hours the series has not recorded are no candidates");
}

/* The cases a note must not fire in (doc/attribution.md). */
static void
test_must_not_fire(void)
{
	struct ceems_advice a;

	a = advise(DAY0 + 18 * HOUR, 600, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_SHORT && fabs(a.saving_g - 300) < 1e-9,
	   "a 10-minute job: its saving is computed, no note (short)");
	a = advise(DAY0 + 18 * HOUR, 2 * HOUR, KWH, 1, true, &opts);
	ok(a.verdict == CEEMS_ADVICE_CHAIN,
	   "a job in a dependency chain: no note");
	a = advise(DAY0 + 18 * HOUR, 2 * HOUR, KWH / 10, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_SMALL && fabs(a.saving_g - 30) < 1e-9,
	   "30 g saved, under 50 g: no note");
	a = advise(DAY0 - 10 * HOUR, 2 * HOUR, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_NO_SERIES,
	   "a job the series does not cover (the yearly figure): no advice");
	a = advise(DAY0 + 18 * HOUR, 0, KWH, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_BAD_JOB, "no duration: no advice");
	a = advise(DAY0 + 18 * HOUR, 2 * HOUR, NAN, 1, false, &opts);
	ok(a.verdict == CEEMS_ADVICE_BAD_JOB, "no energy: no advice");
}

/* A flat series (one intensity all day) never advises. */
static void
test_flat(void)
{
	static const char flat[] = "ceems-intensity 1\nzone FR\nsource flat\n"
	    "1767225600 1767312000 250\n";
	struct ceems_intensity_series s = { 0 };
	struct ceems_advice_job j = { .start = DAY0 + HOUR,
		.duration_s = 2 * HOUR, .energy_j = KWH, .pue = 1 };
	struct ceems_advice a;
	char err[128];

	ok(ceems_intensity_parse(flat, sizeof(flat) - 1, &s, err,
				 sizeof(err)) == 0 &&
	   ceems_carbon_advice(&s, &j, &opts, &a) == 0 &&
	   a.verdict == CEEMS_ADVICE_SMALL && a.saving_g == 0,
	   "a series that does not vary: no note");
	ceems_intensity_free(&s);
	ok(ceems_carbon_advice(NULL, &j, &opts, &a) == -EINVAL,
	   "no series: refused");
}

int
main(void)
{
	day_series_load(&series);
	test_by_hand();
	test_must_not_fire();
	test_flat();
	ceems_intensity_free(&series);
	return done_testing();
}
