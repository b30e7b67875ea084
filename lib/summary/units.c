/* units.c - energy and emissions spelled for people (units.h): one
 * spelling for the end-of-job summary and ceems-sacct alike. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "summary/units.h"

/* Beyond two decimals a figure claims more than anyone reads. */
#define MAX_DECIMALS 2

static const double joules_per[] = {
	[CEEMS_UNIT_J] = 1, [CEEMS_UNIT_WH] = 3600, [CEEMS_UNIT_KWH] = 3.6e6,
	[CEEMS_UNIT_MWH] = 3.6e9,
};

static const char *const energy_unit_name[] = {
	[CEEMS_UNIT_J] = "J", [CEEMS_UNIT_WH] = "Wh", [CEEMS_UNIT_KWH] = "kWh",
	[CEEMS_UNIT_MWH] = "MWh",
};

/* Decimals for three significant figures of V >= 0, at most two. */
static int
sig3_decimals(double v)
{
	int d;

	if (!(v > 0) || v >= 100)
		return 0;
	d = 2 - (int)floor(log10(v));
	return d < MAX_DECIMALS ? d : MAX_DECIMALS;
}

enum ceems_energy_unit
ceems_units_energy_pick(double j)
{
	if (j >= joules_per[CEEMS_UNIT_MWH])
		return CEEMS_UNIT_MWH;
	if (j >= joules_per[CEEMS_UNIT_KWH])
		return CEEMS_UNIT_KWH;
	if (j >= joules_per[CEEMS_UNIT_WH])
		return CEEMS_UNIT_WH;
	return CEEMS_UNIT_J;
}

int
ceems_units_energy_decimals(double j, enum ceems_energy_unit u)
{
	return isfinite(j) ? sig3_decimals(j / joules_per[u]) : 0;
}

void
ceems_units_fmt_energy_in(char *buf, size_t size, double j,
			  enum ceems_energy_unit u, int decimals,
			  bool with_unit)
{
	const char *sep = with_unit ? " " : "";
	const char *name = with_unit ? energy_unit_name[u] : "";
	double v;

	if (size == 0)
		return;
	if (!isfinite(j) || j < 0) {
		buf[0] = '\0';
		return;
	}
	v = j / joules_per[u];
	if (j > 0 && v < 0.5 * pow(10, -decimals))
		snprintf(buf, size, "<%.*f%s%s", decimals,
			 pow(10, -decimals), sep, name);
	else
		snprintf(buf, size, "%.*f%s%s", decimals, v, sep, name);
}

void
ceems_units_fmt_energy(char *buf, size_t size, double j)
{
	enum ceems_energy_unit u = ceems_units_energy_pick(j);

	ceems_units_fmt_energy_in(buf, size, j, u,
				  ceems_units_energy_decimals(j, u), true);
}

void
ceems_units_fmt_grams(char *buf, size_t size, double g, const char *suffix)
{
	const char *s = suffix != NULL ? suffix : "";
	const char *unit = "g";
	double v = g;

	if (size == 0)
		return;
	if (!isfinite(g) || g < 0) {
		buf[0] = '\0';
		return;
	}
	if (g >= 1e6) {
		v = g / 1e6;
		unit = "t";
	} else if (g >= 1000) {
		v = g / 1000;
		unit = "kg";
	}
	if (g > 0 && v < 0.005)
		snprintf(buf, size, "<0.01 %s%s", unit, s);
	else
		snprintf(buf, size, "%.*f %s%s", sig3_decimals(v), v, unit, s);
}
