/* test_admin_import.c - the grid operators' and carbon-data services'
 * exports of `ceems-admin factors import` (synthetic fixtures in their
 * layouts): the format found by the header, the life-cycle column, rows
 * without a value left out, the file's step, local time in Europe across
 * both summer-time changes, and refused files with their line named. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "admin/admin_import.h"
#include "../tap.h"
#include "fixture.h"

static char buf[1 << 16];

/* Rows of fixture NAME as "from to g;..." for one comparison. */
static const char *
rows_of(const char *name, enum admin_import_format want_format)
{
	static char out[2048];
	struct admin_factor *rows;
	enum admin_import_format used;
	char err[256] = "";
	const char *text = fixture_text(name, buf, sizeof(buf));
	size_t n;

	out[0] = '\0';
	if (admin_import_parse(text, strlen(text), "FR", ADMIN_IMPORT_AUTO,
			       &used, &rows, &n, err, sizeof(err)) < 0) {
		snprintf(out, sizeof(out), "error: %s", err);
		return out;
	}
	ok(used == want_format, "%s: format %s found by the header", name,
	   admin_import_format_name(used));
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(out);

		snprintf(out + len, sizeof(out) - len, "%s %s %g %s %s;",
			 rows[i].valid_from, rows[i].valid_to, rows[i].g_per_kwh,
			 rows[i].zone, rows[i].source);
	}
	free(rows);
	return out;
}

static void
test_formats(void)
{
	is_str(rows_of("factors-import/electricitymaps.csv",
		       ADMIN_IMPORT_ELECTRICITYMAPS),
	       "2024-01-01T00:00:00Z 2024-01-01T01:00:00Z 41.25 FR electricitymaps-lifecycle;"
	       "2024-01-01T01:00:00Z 2024-01-01T02:00:00Z 44 FR electricitymaps-lifecycle;"
	       "2024-01-01T03:00:00Z 2024-01-01T04:00:00Z 39.5 FR electricitymaps-lifecycle;",
	       "Electricity Maps: life cycle column, hourly, the empty hour left out");
	is_str(rows_of("factors-import/entsoe-utc.csv", ADMIN_IMPORT_ENTSOE),
	       "2024-01-01T00:00:00Z 2024-01-01T01:00:00Z 100 FR entsoe;"
	       "2024-01-01T02:00:00Z 2024-01-01T03:00:00Z 102.5 FR entsoe;",
	       "ENTSO-E in UTC: MTU ranges, n/e left out");
	is_str(rows_of("factors-import/entsoe-cet.csv", ADMIN_IMPORT_ENTSOE),
	       "2024-10-26T23:00:00Z 2024-10-27T00:00:00Z 50 FR entsoe;"
	       "2024-10-27T00:00:00Z 2024-10-27T01:00:00Z 51 FR entsoe;"
	       "2024-10-27T01:00:00Z 2024-10-27T02:00:00Z 52 FR entsoe;"
	       "2024-10-27T02:00:00Z 2024-10-27T03:00:00Z 53 FR entsoe;",
	       "ENTSO-E in CET/CEST: the October hour that occurs twice, in order");
	is_str(rows_of("factors-import/rte.csv", ADMIN_IMPORT_RTE),
	       "2024-03-31T00:00:00Z 2024-03-31T00:30:00Z 30 FR rte-eco2mix;"
	       "2024-03-31T00:30:00Z 2024-03-31T01:00:00Z 31 FR rte-eco2mix;"
	       "2024-03-31T01:00:00Z 2024-03-31T01:30:00Z 32 FR rte-eco2mix;"
	       "2024-03-31T02:00:00Z 2024-03-31T02:30:00Z 33 FR rte-eco2mix;",
	       "eco2mix: Europe/Paris across the March change, half-hourly step");
}

static void
refused(const char *text, enum admin_import_format f, const char *want,
	const char *name)
{
	struct admin_factor *rows = (struct admin_factor *)1;
	enum admin_import_format used;
	char err[256] = "";
	size_t n = 7;
	int r = admin_import_parse(text, strlen(text), "FR", f, &used, &rows,
				   &n, err, sizeof(err));

	ok(r == -1 && rows == NULL && n == 0 && strstr(err, want) != NULL,
	   "refused: %s (%s)", name, err);
}

static void
test_refused(void)
{
	refused("Datetime (UTC),Carbon Intensity gCO2eq/kWh (direct)\n2024-01-01 00:00:00,5\n",
		ADMIN_IMPORT_AUTO, "line 1: an Electricity Maps export", "no life-cycle column");
	refused("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2024-01-01 00:00:00,5\n2024-01-01 01:00:00,x\n",
		ADMIN_IMPORT_AUTO, "line 3: intensity \"x\"", "a bad value");
	refused("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2024-01-01 01:00:00,5\n2024-01-01 00:00:00,6\n",
		ADMIN_IMPORT_AUTO, "line 3: not after the previous row", "out of order");
	refused("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2024-02-30 00:00:00,5\n",
		ADMIN_IMPORT_AUTO, "line 2: Datetime", "no such day");
	refused("MTU (CET),Value\n01.01.2024 00:00 - 01.01.2024 01:00,1\n",
		ADMIN_IMPORT_AUTO, "line 1: the MTU column must say its time zone", "unknown zone");
	refused("MTU (UTC),Value\n01.01.2024 00:00 - 01.01.2024 02:00,1\n01.01.2024 01:00 - 01.01.2024 03:00,1\n",
		ADMIN_IMPORT_AUTO, "line 3: overlaps the interval of line 2", "overlap");
	refused("MTU (UTC),Value\n01.01.2024 01:00 - 01.01.2024 00:00,1\n",
		ADMIN_IMPORT_AUTO, "line 2: MTU", "ends before it starts");
	refused("Date;Heures;Taux de CO2 (g/kWh)\n2024-03-31;02:30;5\n",
		ADMIN_IMPORT_AUTO, "line 2: 2024-03-31 02:30 does not exist", "the skipped hour");
	refused("Date;Heures;Taux de CO2 (g/kWh)\n2024-03-31;01:00;\n",
		ADMIN_IMPORT_AUTO, "no intensity in the file", "no value at all");
	refused("zone,year,g_per_kwh,source\nDE,2023,5,s\n", ADMIN_IMPORT_CEEMS,
		"line 2: zone DE is not --zone FR", "ceems CSV of another zone");
	refused("Date;Heures;Taux de CO2 (g/kWh)\n2024-03-31;01:00;1\n2024-04-02;01:00;1\n",
		ADMIN_IMPORT_AUTO, "more than a day apart", "daily rows");
}

int
main(void)
{
	test_formats();
	test_refused();
	return done_testing();
}
