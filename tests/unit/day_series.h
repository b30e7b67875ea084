/* day_series.h - the imported series of the carbon-aware advice's tests
 * (test_carbon_advice, test_carbon_note): an intensity that changes
 * during the day, 300 g/kWh from midnight to 6 h, 100 to noon, 200 to
 * 18 h, 400 to midnight, for two days from 2026-01-01 in hourly rows,
 * parsed as the agent's cache is.  Header-only: each test is one file. */
#ifndef CEEMS_TEST_DAY_SERIES_H
#define CEEMS_TEST_DAY_SERIES_H

#include <stdio.h>

#include "model/intensity.h"
#include "../tap.h"

#define DAY0 1767225600LL	/* 2026-01-01T00:00:00Z */
#define HOUR 3600LL
#define KWH 3.6e6

static inline double
day_series_intensity(int h)
{
	return h < 6 ? 300 : h < 12 ? 100 : h < 18 ? 200 : 400;
}

/* The two days into S (a TAP line says whether they parsed). */
static inline void
day_series_load(struct ceems_intensity_series *s)
{
	static char text[8192];
	size_t len;
	char err[256] = "";

	len = (size_t)snprintf(text, sizeof(text),
			       "ceems-intensity 1\nzone FR\nsource test-grid\n");
	for (int h = 0; h < 48; h++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%lld %lld %g\n", DAY0 + h * HOUR,
					DAY0 + (h + 1) * HOUR,
					day_series_intensity(h % 24));
	ok(ceems_intensity_parse(text, len, s, err, sizeof(err)) == 0 &&
	   s->nrows == 48, "the two days' series parses (%s)", err);
}

#endif
