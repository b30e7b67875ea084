/* test_pg_binary.c - tools/sacct/pg_binary.c on results built with libpq's own
 * result-construction API (PQmakeEmptyPGresult, PQsetResultAttrs,
 * PQsetvalue): the column checks, every value kind in the server's
 * binary format, NULLs, the rounding of times, and values of the wrong
 * length, which must read as unknown and mark the reader bad. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "sacct/pg_binary.h"

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

/* Arrays of records, built as array_send and record_send write them. */
struct enc {
	unsigned char buf[512];
	size_t len;
};

static void
put32(struct enc *e, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		e->buf[e->len++] = (unsigned char)(v >> (8 * (3 - i)));
}

static void
put_bytes(struct enc *e, const void *p, size_t n)
{
	memcpy(e->buf + e->len, p, n);
	e->len += n;
}

/* A field: its type, then length and bytes (LEN -1: NULL). */
static void
put_field(struct enc *e, Oid type, const void *p, int len)
{
	put32(e, type);
	put32(e, (uint32_t)len);
	if (len > 0)
		put_bytes(e, p, (size_t)len);
}

static void
put_f8_field(struct enc *e, double d)
{
	unsigned char be[8];
	uint64_t bits;
	int i;

	memcpy(&bits, &d, sizeof(bits));
	for (i = 0; i < 8; i++)
		be[i] = (unsigned char)(bits >> (8 * (7 - i)));
	put_field(e, 701, be, 8);
}

/* A step-like record (text, integer, double, double): one element of
 * the array, its length first. */
static void
put_record(struct enc *e, const char *id, int32_t nodes, double x, bool null_y)
{
	struct enc r = { .len = 0 };
	unsigned char be[4] = {
		(unsigned char)(nodes >> 24), (unsigned char)(nodes >> 16),
		(unsigned char)(nodes >> 8), (unsigned char)nodes
	};

	put32(&r, 4);
	put_field(&r, 25, id, (int)strlen(id));
	put_field(&r, 23, be, 4);
	put_f8_field(&r, x);
	if (null_y)
		put_field(&r, 701, NULL, -1);
	else
		put_f8_field(&r, x * 2);
	put32(e, (uint32_t)r.len);
	put_bytes(e, r.buf, r.len);
}

/* The array header of a one-dimensional array of N records. */
static void
put_array_head(struct enc *e, int n)
{
	put32(e, 1);		/* dimensions */
	put32(e, 0);		/* no NULL elements */
	put32(e, 16385);	/* the composite's OID: the database's */
	put32(e, (uint32_t)n);
	put32(e, 1);		/* lower bound */
}

static const enum pg_binary_kind rec_kinds[4] = {
	PG_BINARY_TEXT, PG_BINARY_INT, PG_BINARY_NUMBER, PG_BINARY_NUMBER
};

/* A one-column result (an array-of-records column) whose row 0 is the
 * bytes of E (NULL: SQL NULL). */
static PGresult *
records_result(const struct enc *e, struct pg_binary *b)
{
	static char name[] = "steps";
	const enum pg_binary_kind kind = PG_BINARY_RECORDS;
	PGresAttDesc attr;
	PGresult *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
	char err[256];
	char value[sizeof(e->buf)];

	memset(&attr, 0, sizeof(attr));
	attr.name = name;
	attr.format = 1;
	attr.typid = 16386;
	attr.typlen = -1;
	attr.atttypmod = -1;
	if (e != NULL)
		memcpy(value, e->buf, e->len);
	if (res == NULL || !PQsetResultAttrs(res, 1, &attr) ||
	    !PQsetvalue(res, 0, 0, e != NULL ? value : NULL,
			e != NULL ? (int)e->len : -1) ||
	    pg_binary_init(b, res, &kind, 1, "test", err, sizeof(err)) < 0)
		abort();
	return res;
}

struct seen {
	int calls, stop_at;
	char id[3][16];
	int64_t nodes[3];
	double x[3], y[3];
	bool fields_sane;
};

static int
see_record(void *arg, const struct pg_binary_field *f)
{
	struct seen *s = arg;
	int k;

	for (k = 0; k < 4; k++)
		if (f[k].len < -1 || (f[k].len > 0 && f[k].p == NULL))
			s->fields_sane = false;
	if (s->calls < 3) {
		pg_binary_field_text(&f[0], s->id[s->calls], sizeof(s->id[0]));
		if (!pg_binary_field_int(&f[1], &s->nodes[s->calls]))
			s->nodes[s->calls] = -1;
		s->x[s->calls] = pg_binary_field_number(&f[2]);
		s->y[s->calls] = pg_binary_field_number(&f[3]);
	}
	s->calls++;
	return s->calls == s->stop_at ? -1 : 0;
}

/* records(E, &SEEN): pg_binary_records on E; the reader's bad flag in
 * *BAD. */
static int
records(const struct enc *e, struct seen *seen, bool *bad)
{
	struct pg_binary b;
	PGresult *res = records_result(e, &b);
	int n;

	seen->calls = 0;
	seen->fields_sane = true;
	n = pg_binary_records(&b, 0, 0, rec_kinds, 4, see_record, seen);
	*bad = b.bad;
	PQclear(res);
	return n;
}

static void
test_records(void)
{
	struct enc e = { .len = 0 }, x;
	struct seen seen = { .stop_at = 0 };
	struct pg_binary b;
	PGresult *res;
	bool bad;
	size_t cut;

	put_array_head(&e, 2);
	put_record(&e, "batch", 3, 1.5, false);
	put_record(&e, "extern", 1, 0.25, true);
	ok(records(&e, &seen, &bad) == 2 && !bad && seen.calls == 2,
	   "two records, each given once");
	is_str(seen.id[0], "batch", "first record's text field");
	ok(seen.nodes[0] == 3 && seen.x[0] == 1.5 && seen.y[0] == 3.0,
	   "its integer and doubles");
	is_str(seen.id[1], "extern", "second record's text field");
	ok(seen.nodes[1] == 1 && seen.x[1] == 0.25 && isnan(seen.y[1]),
	   "a NULL double field reads as NaN");
	ok(seen.fields_sane, "fields point into the value");

	ok(records(NULL, &seen, &bad) == 0 && !bad && seen.calls == 0,
	   "a NULL column: no records, not bad");
	x.len = 0;
	put32(&x, 0);
	put32(&x, 0);
	put32(&x, 16385);
	ok(records(&x, &seen, &bad) == 0 && !bad, "an empty array: no records");

	seen.stop_at = 1;
	ok(records(&e, &seen, &bad) == -1 && !bad && seen.calls == 1,
	   "EACH failing stops the walk without marking the value bad");
	seen.stop_at = 0;

	/* Malformed values: -1, bad, and EACH never called. */
#define MALFORMED(build, what) do {					\
		x.len = 0;						\
		build;							\
		ok(records(&x, &seen, &bad) == -1 && bad && seen.calls == 0, \
		   "%s: refused, bad, nothing given", what);		\
	} while (0)
	MALFORMED((put_array_head(&x, 1), put32(&x, 4 + 4 * 8), put32(&x, 3),
		   put_field(&x, 25, "a", 1), put_field(&x, 23, "\0\0\0\1", 4),
		   put_f8_field(&x, 1)), "a record of 3 fields where 4 are expected");
	MALFORMED((put_array_head(&x, 1), put32(&x, 4 + 9 + 8 + 8 + 8 + 16),
		   put32(&x, 4), put_field(&x, 25, "a", 1), put_field(&x, 25, "1", 1),
		   put_f8_field(&x, 1), put_f8_field(&x, 2)),
		  "text where an integer is expected");
	MALFORMED((put_array_head(&x, 1), put32(&x, 4 + 9 + 11 + 16 + 16),
		   put32(&x, 4), put_field(&x, 25, "a", 1), put_field(&x, 23, "\0\0\1", 3),
		   put_f8_field(&x, 1), put_f8_field(&x, 2)),
		  "a 3-byte integer");
	MALFORMED((put_array_head(&x, 1), put32(&x, 0xffffffffu)), "a NULL record");
	MALFORMED((put_array_head(&x, 2), put_record(&x, "a", 1, 1, false)),
		  "fewer records than the header says");
	MALFORMED((put_array_head(&x, 1), put_record(&x, "a", 1, 1, false), put32(&x, 7)),
		  "bytes after the last record");
	MALFORMED((put32(&x, 2), put32(&x, 0), put32(&x, 16385), put32(&x, 1),
		   put32(&x, 1), put32(&x, 1), put32(&x, 1), put_record(&x, "a", 1, 1, false)),
		  "a two-dimensional array");

	/* Every truncation of a good value is refused; nothing is read
	 * past its end (the sanitizer build checks that). */
	for (cut = 0; cut < e.len; cut++) {
		x = e;
		x.len = cut;
		if (records(&x, &seen, &bad) != -1 || !bad || seen.calls != 0)
			break;
	}
	ok(cut == e.len, "every truncation is refused (first not: %zu of %zu bytes)",
	   cut, e.len);

	/* A reader past its columns. */
	res = records_result(&e, &b);
	ok(pg_binary_records(&b, 0, 1, rec_kinds, 4, see_record, &seen) == -1 && b.bad,
	   "a column past the result's: refused, bad");
	PQclear(res);
}

/* Seeded mutations of a good value: whatever the bytes, the walk either
 * refuses them (bad, nothing given) or gives as many records as it
 * returns, with sane fields. */
static void
test_records_mutations(void)
{
	struct enc e = { .len = 0 }, x;
	struct seen seen = { .stop_at = 0 };
	unsigned seed = 20261125, round, broken = 0;
	bool bad;
	int n;

	if (getenv("CEEMS_TEST_SEED") != NULL)
		seed = (unsigned)strtoul(getenv("CEEMS_TEST_SEED"), NULL, 10);
	printf("# mutation seed %u (CEEMS_TEST_SEED=%u replays)\n", seed, seed);
	srand(seed);
	put_array_head(&e, 3);
	put_record(&e, "batch", 3, 1.5, false);
	put_record(&e, "", 0, -0.0, true);
	put_record(&e, "0", 2, 1e300, false);
	for (round = 0; round < 20000; round++) {
		int flips = 1 + rand() % 4, k;

		x = e;
		for (k = 0; k < flips; k++)
			x.buf[(size_t)rand() % x.len] = (unsigned char)rand();
		if (rand() % 4 == 0)
			x.len = (size_t)rand() % (x.len + 1);
		n = records(&x, &seen, &bad);
		if (!(n == -1 && bad && seen.calls == 0) &&
		    !(n >= 0 && !bad && seen.calls == n && seen.fields_sane))
			broken++;
	}
	ok(broken == 0, "20,000 mutated values: each refused whole or read whole (%u not)",
	   broken);
}

int
main(void)
{
	test_check();
	test_values();
	test_time_rounding();
	test_wrong_lengths();
	test_records();
	test_records_mutations();
	return done_testing();
}
