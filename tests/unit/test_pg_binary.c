/* test_pg_binary.c - tools/pg_binary.c on results built with libpq's own
 * result-construction API (PQmakeEmptyPGresult, PQsetResultAttrs,
 * PQsetvalue): the column checks, every value kind in the server's
 * binary format, NULLs, the rounding of times, and values of the wrong
 * length, which must read as unknown and mark the reader bad. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "pg_binary.h"

enum { COL_I2, COL_I4, COL_I8, COL_F8, COL_TEXT, COL_TIME, NCOLS };

static const Oid col_types[NCOLS] = { 21, 23, 20, 701, 25, 1184 };
/* PGresAttDesc's name is not const. */
static char col_names[NCOLS][4] = { "i2", "i4", "i8", "f8", "t", "ts" };

static PGresult *
make_result(int format)
{
	PGresAttDesc attrs[NCOLS];
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	int i;

	memset(attrs, 0, sizeof(attrs));
	for (i = 0; i < NCOLS; i++) {
		attrs[i].name = col_names[i];
		attrs[i].format = format;
		attrs[i].typid = col_types[i];
		attrs[i].typlen = -1;
		attrs[i].atttypmod = -1;
	}
	if (res == NULL || !PQsetResultAttrs(res, NCOLS, attrs))
		abort();
	return res;
}

/* VALUE's LEN low bytes, big-endian, into row ROW, column COL. */
static void
set_big_endian(PGresult *res, int row, int col, uint64_t value, int len)
{
	char buf[8];
	int i;

	for (i = 0; i < len; i++)
		buf[i] = (char)(value >> (8 * (len - 1 - i)) & 0xff);
	if (!PQsetvalue(res, row, col, buf, len))
		abort();
}

static void
set_double(PGresult *res, int row, int col, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	set_big_endian(res, row, col, bits, 8);
}

static void
set_null(PGresult *res, int row, int col)
{
	if (!PQsetvalue(res, row, col, NULL, -1))
		abort();
}

static const enum pg_binary_kind kinds[NCOLS] = {
	PG_BINARY_INT, PG_BINARY_INT, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_TEXT, PG_BINARY_TIME
};

static void
start(struct pg_binary *b, const PGresult *res)
{
	char err[256];

	if (pg_binary_init(b, res, kinds, NCOLS, "test", err, sizeof(err)) < 0)
		abort();
}

static void
test_check(void)
{
	const enum pg_binary_kind *right = kinds;
	enum pg_binary_kind wrong[NCOLS];
	PGresult *res = make_result(1), *as_text = make_result(0);
	struct pg_binary b;
	char err[256];

	ok(pg_binary_init(&b, res, right, NCOLS, "q", err, sizeof(err)) == 0,
	   "the expected kinds pass");
	ok(pg_binary_init(&b, res, right, NCOLS - 1, "q", err, sizeof(err)) < 0 &&
	   strstr(err, "6 columns, expected 5") != NULL,
	   "a column more than expected is an error: %s", err);
	memcpy(wrong, right, sizeof(wrong));
	wrong[COL_F8] = PG_BINARY_INT;
	ok(pg_binary_init(&b, res, wrong, NCOLS, "the listing", err, sizeof(err)) < 0 &&
	   strstr(err, "the listing: column 4 (f8)") != NULL,
	   "a double where an integer is expected names the column: %s", err);
	memcpy(wrong, right, sizeof(wrong));
	wrong[COL_TEXT] = PG_BINARY_TIME;
	ok(pg_binary_init(&b, res, wrong, NCOLS, "q", err, sizeof(err)) < 0,
	   "text where a time is expected is an error");
	ok(pg_binary_init(&b, as_text, right, NCOLS, "q", err, sizeof(err)) < 0,
	   "a result in text format is refused");
	PQclear(res);
	PQclear(as_text);
}

static void
test_values(void)
{
	struct pg_binary b;
	PGresult *res = make_result(1);
	int64_t v = 0;
	char text[8], alice[] = "alice";

	/* row 0: ordinary values */
	set_big_endian(res, 0, COL_I2, 0xffff, 2);		/* -1 */
	set_big_endian(res, 0, COL_I4, 0x80000000u, 4);	/* INT32_MIN */
	set_big_endian(res, 0, COL_I8, 4294967294ULL, 8);
	set_double(res, 0, COL_F8, 1234.5625);
	if (!PQsetvalue(res, 0, COL_TEXT, alice, 5))
		abort();
	/* 2023-06-01 00:00:00 UTC is 1685577600, 738892800 s after 2000 */
	set_big_endian(res, 0, COL_TIME, 738892800ULL * 1000000, 8);
	/* row 1: NULLs */
	set_null(res, 1, COL_I2);
	set_null(res, 1, COL_I4);
	set_null(res, 1, COL_I8);
	set_null(res, 1, COL_F8);
	set_null(res, 1, COL_TEXT);
	set_null(res, 1, COL_TIME);

	start(&b, res);
	ok(pg_binary_int(&b, 0, COL_I2, &v) && v == -1, "smallint -1 sign-extends");
	ok(pg_binary_int(&b, 0, COL_I4, &v) && v == INT32_MIN, "integer minimum");
	ok(pg_binary_int(&b, 0, COL_I8, &v) && v == 4294967294LL, "bigint");
	is_near(pg_binary_number(&b, 0, COL_F8), 1234.5625, 0, "double precision");
	is_near(pg_binary_number(&b, 0, COL_I8), 4294967294.0, 0, "a bigint read as a number");
	pg_binary_text(&b, 0, COL_TEXT, text, sizeof(text));
	is_str(text, "alice", "text");
	pg_binary_text(&b, 0, COL_TEXT, text, 4);
	is_str(text, "ali", "text truncated to the buffer, terminated");
	ok(pg_binary_time(&b, 0, COL_TIME, &v) && v == 1685577600, "timestamptz as Unix seconds");
	ok(!b.bad, "no value was bad");

	v = 42;
	ok(!pg_binary_int(&b, 1, COL_I2, &v) && v == 42, "NULL smallint: absent, untouched");
	ok(!pg_binary_int(&b, 1, COL_I8, &v) && v == 42, "NULL bigint: absent");
	ok(isnan(pg_binary_number(&b, 1, COL_F8)), "NULL double: NaN");
	ok(isnan(pg_binary_number(&b, 1, COL_I4)), "NULL integer as a number: NaN");
	ok(!pg_binary_time(&b, 1, COL_TIME, &v), "NULL time: absent");
	strcpy(text, "x");
	pg_binary_text(&b, 1, COL_TEXT, text, sizeof(text));
	is_str(text, "", "NULL text: empty");
	ok(!b.bad, "NULLs are not bad values");
	PQclear(res);
}

/* extract(epoch ...)::bigint rounds half away from zero: so must the
 * binary reader, or the two formats would disagree by a second. */
static void
test_time_rounding(void)
{
	static const struct {
		int64_t us;
		int64_t want;
	} cases[] = {
		{ 0, 946684800 },
		{ 499999, 946684800 },
		{ 500000, 946684801 },
		{ 1499999, 946684801 },
		{ -499999, 946684800 },
		{ -500000, 946684799 },
		{ -86400LL * 1000000 * 365 * 30, 946684800 - 86400LL * 365 * 30 },
	};
	struct pg_binary b;
	PGresult *res = make_result(1);
	size_t i;
	int64_t v;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		set_big_endian(res, (int)i, COL_TIME, (uint64_t)cases[i].us, 8);
	set_big_endian(res, (int)i, COL_TIME, (uint64_t)INT64_MAX, 8);
	set_big_endian(res, (int)i + 1, COL_TIME, (uint64_t)INT64_MIN, 8);
	start(&b, res);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ok(pg_binary_time(&b, (int)i, COL_TIME, &v) && v == cases[i].want,
		   "%lld us after 2000 is %lld s", (long long)cases[i].us,
		   (long long)cases[i].want);
	ok(!pg_binary_time(&b, (int)i, COL_TIME, &v), "'infinity' is absent");
	ok(!pg_binary_time(&b, (int)i + 1, COL_TIME, &v), "'-infinity' is absent");
	ok(!b.bad, "infinities are not bad values");
	PQclear(res);
}

/* A value whose length is not its type's: unknown, and the reader is
 * marked bad so that the caller refuses the whole result. */
static void
test_wrong_lengths(void)
{
	static const int cols[] = { COL_I2, COL_I4, COL_I8, COL_F8, COL_TIME };
	struct pg_binary b;
	PGresult *res = make_result(1);
	size_t i;
	int64_t v;

	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		set_big_endian(res, 0, cols[i], 7, 3);
	start(&b, res);
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		b.bad = false;
		switch (cols[i]) {
		case COL_F8:
			ok(isnan(pg_binary_number(&b, 0, cols[i])) && b.bad,
			   "a 3-byte double: NaN, bad");
			break;
		case COL_TIME:
			ok(!pg_binary_time(&b, 0, cols[i], &v) && b.bad,
			   "a 3-byte time: absent, bad");
			break;
		default:
			ok(!pg_binary_int(&b, 0, cols[i], &v) && b.bad,
			   "a 3-byte value in integer column %zu: absent, bad", i);
			ok(isnan(pg_binary_number(&b, 0, cols[i])) && b.bad,
			   "the same read as a number: NaN, bad");
		}
	}
	b.bad = false;
	ok(!pg_binary_time(&b, 0, COL_I8, &v) && b.bad,
	   "a time read from a bigint column: absent, bad");
	b.bad = false;
	ok(!pg_binary_int(&b, 0, NCOLS, &v) && b.bad,
	   "a column past the result's: absent, bad");
	PQclear(res);
}

int
main(void)
{
	test_check();
	test_values();
	test_time_rounding();
	test_wrong_lengths();
	return done_testing();
}
