/* summary_units.c - how the end-of-job summary writes one quantity:
 * durations, bytes, percentages and cores, each with its "<0.1" for a
 * small amount that is not nothing; energy and grams are spelled by
 * units.c, shared with ceems-sacct.
 *
 * Kept apart from the figures, the notes and the layout, which all
 * share these spellings: a unit is spelled the same wherever it is
 * printed. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "summary/summary_internal.h"

bool
ceems_summary_units_usable(double x)
{
	return isfinite(x) && x >= 0 && x < MAX_PLAUSIBLE;
}

/* Append to a NUL-terminated BUF of SIZE bytes; silently cut. */
__attribute__((format(printf, 3, 4))) void
ceems_summary_units_appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* Slurm's [D-]HH:MM:SS. */
void
ceems_summary_units_fmt_duration(char *buf, size_t size, double s)
{
	unsigned long long t = (unsigned long long)llround(s < 0 ? 0 : s);
	unsigned long long d = t / 86400;

	t %= 86400;
	if (d > 0)
		snprintf(buf, size, "%llu-%02llu:%02llu:%02llu", d, t / 3600,
			 t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%02llu:%02llu:%02llu", t / 3600,
			 t / 60 % 60, t % 60);
}

void
ceems_summary_units_fmt_bytes(char *buf, size_t size, uint64_t b)
{
	if (b >= GIB)
		snprintf(buf, size, "%.1f GiB", (double)b / (double)GIB);
	else if (b >= MIB)
		snprintf(buf, size, "%.0f MiB", (double)b / (double)MIB);
	else
		snprintf(buf, size, "%.0f KiB", (double)b / 1024.0);
}

/* Percent as an integer, rounded; floor for coverage so that a figure
 * that is not complete never reads 100%. */
static double
clamp_fraction(double fraction)
{
	/* Far beyond any real figure; keeps the conversion to int defined. */
	if (!(fraction > 0))
		return 0;
	return fraction < 1e6 ? fraction : 1e6;
}

int
ceems_summary_units_pct(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100 + 0.5);
}

/* A measured share that rounds to 0 reads "<1%", not "0%". */
void
ceems_summary_units_fmt_pct(char *buf, size_t size, double fraction)
{
	if (fraction > 0 && fraction < 0.005)
		snprintf(buf, size, "<1%%");
	else
		snprintf(buf, size, "%d%%", ceems_summary_units_pct(fraction));
}

/* Cores used on average, one decimal; "<0.1" for a little but not 0. */
void
ceems_summary_units_fmt_cores(char *buf, size_t size, double cores)
{
	if (cores > 0 && cores < 0.05)
		snprintf(buf, size, "<0.1");
	else
		snprintf(buf, size, "%.1f", cores);
}

int
ceems_summary_units_pct_floor(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100);
}
