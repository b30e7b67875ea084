/* summary_units.c - how the end-of-job summary writes one quantity:
 * durations, energy in kWh/Wh/J, grams of CO2e, bytes, percentages and
 * cores, each with its "<0.01" for a small amount that is not nothing.
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

#include "summary_internal.h"

bool
summary_usable(double x)
{
	return isfinite(x) && x >= 0 && x < MAX_PLAUSIBLE;
}

/* Append to a NUL-terminated BUF of SIZE bytes; silently cut. */
__attribute__((format(printf, 3, 4))) void
summary_appendf(char *buf, size_t size, const char *fmt, ...)
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
summary_fmt_duration(char *buf, size_t size, double s)
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

/* kWh from 0.01 kWh up, Wh from 1 Wh, J below. */
enum summary_energy_unit
summary_energy_unit(double j)
{
	if (j >= 36000)
		return UNIT_KWH;
	if (j >= 3600)
		return UNIT_WH;
	return UNIT_J;
}

/* A measured amount too small for the unit reads "<0.01", not "0.00",
 * which would look like nothing; only a true 0 reads 0. */
void
summary_fmt_energy_in(char *buf, size_t size, double j,
		      enum summary_energy_unit u, bool with_unit)
{
	static const double smallest[] = {
		[UNIT_KWH] = 0.005 * 3.6e6, [UNIT_WH] = 0.05 * 3600,
		[UNIT_J] = 0.5,
	};
	static const char *const below[] = {
		[UNIT_KWH] = "<0.01", [UNIT_WH] = "<0.1", [UNIT_J] = "<1",
	};
	static const char *const unit[] = {
		[UNIT_KWH] = " kWh", [UNIT_WH] = " Wh", [UNIT_J] = " J",
	};

	if (j > 0 && j < smallest[u]) {
		snprintf(buf, size, "%s%s", below[u], with_unit ? unit[u] : "");
		return;
	}
	switch (u) {
	case UNIT_KWH:
		snprintf(buf, size, "%.2f%s", j / 3.6e6, with_unit ? " kWh" : "");
		break;
	case UNIT_WH:
		snprintf(buf, size, "%.1f%s", j / 3600, with_unit ? " Wh" : "");
		break;
	case UNIT_J:
		snprintf(buf, size, "%.0f%s", j, with_unit ? " J" : "");
		break;
	}
}

void
summary_fmt_energy(char *buf, size_t size, double j)
{
	summary_fmt_energy_in(buf, size, j, summary_energy_unit(j), true);
}

void
summary_fmt_grams(char *buf, size_t size, double g)
{
	if (g >= 1000)
		snprintf(buf, size, "%.2f kg CO2e", g / 1000);
	else if (g >= 100)
		snprintf(buf, size, "%.0f g CO2e", g);
	else if (g >= 1)
		snprintf(buf, size, "%.1f g CO2e", g);
	else if (g >= 0.005 || g == 0)
		snprintf(buf, size, "%.2f g CO2e", g);
	else
		snprintf(buf, size, "<0.01 g CO2e");
}

void
summary_fmt_bytes(char *buf, size_t size, uint64_t b)
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
summary_pct(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100 + 0.5);
}

/* A measured share that rounds to 0 reads "<1%", not "0%". */
void
summary_fmt_pct(char *buf, size_t size, double fraction)
{
	if (fraction > 0 && fraction < 0.005)
		snprintf(buf, size, "<1%%");
	else
		snprintf(buf, size, "%d%%", summary_pct(fraction));
}

/* Cores used on average, one decimal; "<0.1" for a little but not 0. */
void
summary_fmt_cores(char *buf, size_t size, double cores)
{
	if (cores > 0 && cores < 0.05)
		snprintf(buf, size, "<0.1");
	else
		snprintf(buf, size, "%.1f", cores);
}

int
summary_pct_floor(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100);
}
