/* test_admin_factors.c - the emission-factor CSV parser of ceems-admin:
 * the two file shapes (yearly, intervals), quoting, and malformed files
 * refused with their line named. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "admin/admin_factors.h"
#include "../tap.h"
#include "fixture.h"

static char buf[8192];

static int
parse(const char *text, struct admin_factor **rows, size_t *n, char *err,
      size_t err_size)
{
	return admin_factors_parse(text, strlen(text), rows, n, err, err_size);
}

static void
test_yearly(void)
{
	struct admin_factor *rows;
	char err[256];
	size_t n;
	const char *text = fixture_text("factors/yearly.csv", buf, sizeof(buf));

	is_int(parse(text, &rows, &n, err, sizeof(err)), 0, "yearly: parsed");
	is_int(n, 3, "yearly: three rows, the comment and header skipped");
	is_str(rows[0].zone, "FR", "yearly: zone");
	is_int(rows[0].year, 2023, "yearly: year");
	is_near(rows[0].g_per_kwh, 56.04, 1e-12, "yearly: g_per_kwh");
	is_str(rows[0].source, "test, yearly", "yearly: a quoted comma stays in the field");
	is_int(rows[0].line, 3, "yearly: line numbers count comments");
	is_str(rows[2].zone, "WORLD", "yearly: WORLD is a zone");
	is_str(rows[2].valid_from, "", "yearly: no valid_from");
	free(rows);
}

static void
test_intervals(void)
{
	struct admin_factor *rows;
	char err[256];
	size_t n;
	const char *text = fixture_text("factors/intervals.csv", buf, sizeof(buf));

	is_int(parse(text, &rows, &n, err, sizeof(err)), 0, "intervals: parsed (CRLF, columns in another order)");
	is_int(n, 2, "intervals: two rows");
	is_int(rows[0].year, 0, "intervals: no year");
	is_str(rows[0].valid_from, "2024-01-01T00:00:00Z", "intervals: valid_from");
	is_str(rows[0].valid_to, "2024-01-01T01:00:00Z", "intervals: valid_to");
	is_str(rows[1].valid_to, "", "intervals: empty valid_to is open-ended");
	is_str(rows[1].source, "grid \"hourly\"", "intervals: doubled quotes");
	is_near(rows[1].g_per_kwh, 399, 0, "intervals: g_per_kwh");
	free(rows);
}

static void
test_malformed(void)
{
	static const struct {
		const char *text, *why, *name;
	} bad[] = {
		{ "", "no header", "empty file" },
		{ "zone,year,g_per_kwh\nFR,2023,50\n", "must name zone, g_per_kwh and source", "missing source column" },
		{ "zone,year,valid_from,g_per_kwh,source\n", "either year or valid_from", "year and valid_from" },
		{ "zone,year,g_per_kwh,source,colour\n", "unknown column", "unknown column" },
		{ "zone,zone,g_per_kwh,source\n", "twice", "a column twice" },
		{ "zone,year,g_per_kwh,source\nfr,2023,50,s\n", "line 2: zone", "lower-case zone" },
		{ "zone,year,g_per_kwh,source\nFR,2023,-5,s\n", "g_per_kwh", "negative intensity" },
		{ "zone,year,g_per_kwh,source\nFR,2023,nan,s\n", "g_per_kwh", "NaN intensity" },
		{ "zone,year,g_per_kwh,source\nFR,2023,5e4,s\n", "g_per_kwh", "absurd intensity" },
		{ "zone,year,g_per_kwh,source\nFR,23a,50,s\n", "year", "year with letters" },
		{ "zone,year,g_per_kwh,source\nFR,1800,50,s\n", "year", "year out of range" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50,\n", "source", "empty source" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50\n", "fields", "short row" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50,\"open\n", "unterminated quote", "unterminated quote" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50,\"a\"b\n", "after a closing quote", "text after a quote" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50,a\"b\n", "quote inside", "stray quote" },
		{ "zone,valid_from,g_per_kwh,source\nFR,yesterday,50,s\n", "valid_from", "valid_from not a time" },
		{ "zone,valid_from,g_per_kwh,source\nFR,2024-01-01'; drop,50,s\n", "valid_from", "valid_from with odd characters" },
		{ "zone,year,g_per_kwh,source\nFR,2023,50,a\tb\x01\n", "control character", "control character" },
		{ "zone,year,g_per_kwh,source,a,b,c,d,e\n", "more than", "too many fields" },
	};
	static const char nul[] = "zone,year,g_per_kwh,source\nFR,20\0" "23,50,s\n";
	struct admin_factor *rows = (struct admin_factor *)1;
	char err[256];
	size_t n = 99;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i].text, &rows, &n, err, sizeof(err));

		ok(r == -1 && rows == NULL && n == 0 && strstr(err, bad[i].why) != NULL,
		   "refused: %s (%s)", bad[i].name, err);
	}
	/* A NUL inside the text is refused, not read past. */
	ok(admin_factors_parse(nul, sizeof(nul) - 1, &rows, &n, err, sizeof(err)) == -1 &&
	   strstr(err, "NUL") != NULL, "refused: NUL byte");
	/* What is wrong with the file as a whole names no line. */
	ok(parse("", &rows, &n, err, sizeof(err)) == -1 &&
	   strncmp(err, "no header", 9) == 0, "an empty file: no \"line 0\" (%s)", err);
}

int
main(void)
{
	test_yearly();
	test_intervals();
	test_malformed();
	return done_testing();
}
