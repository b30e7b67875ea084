/* test_emissions.c - the shipped carbon-intensity table (values against
 * the OWID source, alpha-2 and alpha-3 zones, the year rules, the world
 * average only by name), a table full of garbage, and the conversion of
 * energy into emissions. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "model/emissions.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"

static char buf[1 << 20];

static const char *
shipped_table(void)
{
	static char path[4096];
	const char *top = getenv("CEEMS_TOP_SRCDIR");

	snprintf(path, sizeof(path), "%s/lib/data/carbon-intensity.tsv",
		 top != NULL ? top : ".");
	return path;
}

static void
test_shipped(void)
{
	struct ceems_emissions_table t;
	struct ceems_emission_factor f;
	struct ceems_emission_factor g;

	if (!is_int(ceems_emissions_table_load(shipped_table(), &t), 0, "shipped: loads")) {
		printf("Bail out! cannot load %s\n", shipped_table());
		exit(1);
	}
	is_int(t.nbad, 0, "shipped: no malformed line");
	/* Every row of the OWID CSV with a country or world code. */
	is_int(t.nrows, 5174, "shipped: all coded rows of the source kept");

	/* 2024 figures from carbon-intensity-owid.csv. */
	is_int(ceems_emissions_lookup(&t, "FR", 2024, &f), 0, "FR 2024: found");
	is_near(f.g_per_kwh, 44.179085, 1e-9, "FR 2024: 44.179085 g/kWh as in the CSV");
	is_int(f.year, 2024, "FR 2024: year 2024");
	is_str(f.zone, "FR", "FR 2024: zone");
	is_str(f.source, "owid-ember-2025", "FR 2024: source tag");
	is_near(f.pue, 1, 0, "FR 2024: PUE left at 1 for the caller");
	is_int(ceems_emissions_lookup(&t, "DE", 2024, &f), 0, "DE 2024: found");
	is_near(f.g_per_kwh, 344.13992, 1e-9, "DE 2024: 344.13992 as in the CSV");
	is_int(ceems_emissions_lookup(&t, "US", 2024, &f), 0, "US 2024: found");
	is_near(f.g_per_kwh, 383.5492, 1e-9, "US 2024: 383.5492 as in the CSV");
	is_int(ceems_emissions_lookup(&t, "US", 2000, &f), 0, "US 2000: found");
	is_near(f.g_per_kwh, 607.52216, 1e-9, "US 2000: 607.52216 as in the CSV");

	/* alpha-3 and lower case name the same zone. */
	is_int(ceems_emissions_lookup(&t, "DEU", 2024, &g), 0, "DEU: alpha-3 found");
	ceems_emissions_lookup(&t, "DE", 2024, &f);
	ok(g.g_per_kwh == f.g_per_kwh && strcmp(g.zone, "DE") == 0, "DEU: same as DE, recorded as DE");
	is_int(ceems_emissions_lookup(&t, "fra", 2024, &g), 0, "fra: lower case alpha-3");
	is_str(g.zone, "FR", "fra: zone FR");
	is_int(ceems_emissions_lookup(&t, "XK", 2024, &g), 0, "XK: Kosovo from OWID_KOS");

	/* Beyond the table: its latest year, and which year it was. */
	is_int(ceems_emissions_lookup(&t, "FR", 2031, &f), 0, "FR 2031: found");
	is_int(f.year, 2024, "FR 2031: the latest year, 2024, used and reported");
	is_near(f.g_per_kwh, 44.179085, 1e-9, "FR 2031: the 2024 figure");
	is_int(ceems_emissions_lookup(&t, "FR", 1990, &f), 0, "FR 1990: found");
	is_int(f.year, 2000, "FR 1990: the earliest year, 2000");

	/* The world average only by name; no region stands in for a
	 * country, and an unknown zone is an error. */
	is_int(ceems_emissions_lookup(&t, "WORLD", 2024, &f), 0, "WORLD: by name");
	is_near(f.g_per_kwh, 473.0065, 1e-9, "WORLD 2024: 473.0065 as in the CSV");
	is_int(ceems_emissions_lookup(&t, "ZZ", 2024, &f), -ENOENT, "ZZ: unknown zone");
	is_int(ceems_emissions_lookup(&t, "ZZZ", 2024, &f), -ENOENT, "ZZZ: unknown alpha-3");
	is_int(ceems_emissions_lookup(&t, "OWID_WRL", 2024, &f), -EINVAL, "OWID_WRL: not a zone code");
	is_int(ceems_emissions_lookup(&t, "", 2024, &f), -EINVAL, "empty zone");
	is_int(ceems_emissions_lookup(&t, "F1", 2024, &f), -EINVAL, "F1: not letters");
	is_int(ceems_emissions_lookup(&t, "WORLDS", 2024, &f), -EINVAL, "WORLDS: too long");
	is_int(ceems_emissions_lookup(&t, "EUROP", 2024, &f), -EINVAL, "five letters other than WORLD");
	is_int(ceems_emissions_lookup(&t, NULL, 2024, &f), -EINVAL, "NULL zone");

	ceems_emissions_table_free(&t);
	ok(t.rows == NULL && t.nrows == 0, "shipped: freed");

	/* The attribution the licence requires travels with the data. */
	ok(ceems_fileio_read_text_file(shipped_table(), buf, sizeof(buf)) > 0 &&
	   strstr(buf, "Our World in Data, based on Ember (2025) and Energy Institute") != NULL &&
	   strstr(buf, "CC BY 4.0") != NULL && strstr(buf, "gCO2e/kWh") != NULL,
	   "shipped: attribution, licence and unit in the header");
}

static void
test_garbage(void)
{
	struct ceems_emissions_table t;
	struct ceems_emission_factor f;
	int ret;

	fixture_text("emissions/garbage.tsv", buf, sizeof(buf));
	ret = ceems_emissions_table_parse(buf, strlen(buf), &t);
	is_int(ret, 0, "garbage: parsed");
	is_int(t.nrows, 5, "garbage: five good lines kept");
	is_int(t.nbad, 14, "garbage: thirteen bad lines and one duplicate skipped");
	is_int(t.first_bad_line, 6, "garbage: first bad line is 6");

	is_int(ceems_emissions_lookup(&t, "FR", 2021, &f), 0, "garbage: FR 2021");
	is_near(f.g_per_kwh, 60.25, 0, "garbage: the first of two duplicates kept");
	is_int(ceems_emissions_lookup(&t, "FR", 2020, &f), 0, "garbage: FR 2020 (missing year)");
	is_int(f.year, 2019, "garbage: the latest earlier year, 2019");
	is_near(f.g_per_kwh, 55.5, 0, "garbage: its figure");
	is_int(ceems_emissions_lookup(&t, "DE", 2020, &f), 0, "garbage: space-separated line");
	is_near(f.g_per_kwh, 300.125, 0, "garbage: 300.125");
	is_int(ceems_emissions_lookup(&t, "DEU", 2021, &f), 0, "garbage: CRLF line");
	is_str(f.source, "crlf", "garbage: CR not in the source tag");
	is_int(ceems_emissions_lookup(&t, "WORLD", 2030, &f), 0, "garbage: last line without newline");
	is_near(f.g_per_kwh, 480, 0, "garbage: 480");
	ceems_emissions_table_free(&t);

	is_int(ceems_emissions_table_parse("", 0, &t), -ENODATA, "empty table: no data");
	is_int(ceems_emissions_table_parse("# only\n\n# comments\n", 20, &t), -ENODATA,
	       "comments only: no data");
	ok(t.rows == NULL, "no data: nothing left allocated");
	is_int(ceems_emissions_table_parse("FR\tFRA\t2020\t5\tx\0FR\tFRA\t2021\t6\tx\n", 32, &t),
	       -ENODATA, "NUL byte inside a line: the line is bad");
	is_int(ceems_emissions_table_parse("FR FRA 2020 5 x\nFR FRA 2021 6 x", 31, &t), 0,
	       "length-bounded buffer");
	is_int(t.nrows, 2, "length-bounded: two rows");
	ceems_emissions_table_free(&t);
	is_int(ceems_emissions_table_parse("FR FRA 2020 5 x\nFR FRA 2021 6 x", 16, &t), 0,
	       "buffer cut after the first line");
	is_int(t.nrows, 1, "cut: one row, nothing read past the length");
	ceems_emissions_table_free(&t);
	is_int(ceems_emissions_table_parse("FR FRA 2020 1234567890123456 x\n", 31, &t), -ENODATA,
	       "sixteen digits: refused rather than rounded");
	is_int(ceems_emissions_table_parse(NULL, 4, &t), -EINVAL, "NULL buffer");
	is_int(ceems_emissions_table_load(fixture_path("emissions/garbage.tsv"), &t), 0,
	       "garbage loaded from a file (one warning line)");
	is_int(t.nbad, 14, "garbage from a file: same count");
	ceems_emissions_table_free(&t);
	is_int(ceems_emissions_table_load(fixture_path("emissions/missing.tsv"), &t), -ENOENT,
	       "missing file: -ENOENT");
}

static void
test_grams(void)
{
	struct ceems_emission_factor f = { "static", "FR", 2024, 100, 1.5 };

	ok(ceems_job_figures_emission_factor_valid(&f), "factor valid");
	/* 1 kWh x 1.5 x 100 g/kWh. */
	is_near(ceems_job_figures_emissions_grams(3.6e6, &f), 150, 1e-9, "grams: 1 kWh, PUE 1.5, 100 g/kWh");
	is_near(ceems_job_figures_emissions_grams(0, &f), 0, 0, "grams: no energy, no emissions");
	f.pue = 0.9;
	ok(!ceems_job_figures_emission_factor_valid(&f), "PUE below 1 invalid");
	f.pue = NAN;
	ok(!ceems_job_figures_emission_factor_valid(&f), "PUE NaN invalid");
	f.pue = 1.2;
	f.g_per_kwh = -1;
	ok(!ceems_job_figures_emission_factor_valid(&f), "negative intensity invalid");
	ok(!ceems_job_figures_emission_factor_valid(NULL), "NULL invalid");
}

static void
quiet(enum ceems_log_level level, const char *message, void *arg)
{
	(void)level;
	(void)arg;
	printf("# log: %s\n", message);
}

int
main(void)
{
	ceems_log_set_handler(quiet, NULL);
	test_shipped();
	test_garbage();
	test_grams();
	return done_testing();
}
