/* pg_binary.c - values of a libpq result asked for in binary format (see
 * pg_binary.h).  The formats are those of the types' send functions in
 * PostgreSQL (src/backend/utils/adt): network byte order, doubles as
 * IEEE 754 bits, timestamptz as int64 microseconds since 2000-01-01
 * 00:00 UTC (integer datetimes, the only kind since PostgreSQL 10). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pg_binary.h"

/* The OIDs of built-in types are fixed (PostgreSQL's pg_type.dat) and
 * libpq does not export them.  A domain's column is described by its
 * base type. */
#define OID_INT8 20
#define OID_INT2 21
#define OID_INT4 23
#define OID_TEXT 25
#define OID_FLOAT8 701
#define OID_VARCHAR 1043
#define OID_TIMESTAMPTZ 1184

/* Seconds from 1970-01-01 to 2000-01-01. */
#define PG_EPOCH_UNIX 946684800LL

static bool
kind_accepts(enum pg_binary_kind kind, Oid type)
{
	bool integer = type == OID_INT2 || type == OID_INT4 || type == OID_INT8;

	switch (kind) {
	case PG_BINARY_INT:
		return integer;
	case PG_BINARY_NUMBER:
		return integer || type == OID_FLOAT8;
	case PG_BINARY_TEXT:
		return type == OID_TEXT || type == OID_VARCHAR;
	case PG_BINARY_TIME:
		return type == OID_TIMESTAMPTZ;
	}
	return false;
}

static const char *
kind_name(enum pg_binary_kind kind)
{
	switch (kind) {
	case PG_BINARY_INT:
		return "an integer";
	case PG_BINARY_NUMBER:
		return "a number";
	case PG_BINARY_TEXT:
		return "text";
	case PG_BINARY_TIME:
		return "a timestamptz";
	}
	return "?";
}

int
pg_binary_init(struct pg_binary *b, const PGresult *res,
	       const enum pg_binary_kind *kinds, int n, const char *what,
	       char *err, size_t err_size)
{
	int i;

	b->res = res;
	b->bad = false;
	b->ncols = 0;
	if (PQnfields(res) != n || n > PG_BINARY_MAX_COLUMNS) {
		snprintf(err, err_size, "database: %s: %d columns, expected %d",
			 what, PQnfields(res), n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		b->type[i] = PQftype(res, i);
		if (PQfformat(res, i) != 1 || !kind_accepts(kinds[i], b->type[i])) {
			snprintf(err, err_size,
				 "database: %s: column %d (%s) is of type oid %u, expected %s in binary (is the schema newer than this tool?)",
				 what, i + 1, PQfname(res, i), (unsigned)b->type[i],
				 kind_name(kinds[i]));
			return -1;
		}
	}
	b->ncols = n;
	return 0;
}

static uint64_t
big_endian(const unsigned char *p, int len)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < len; i++)
		v = v << 8 | p[i];
	return v;
}

/* The bytes of a value that must be LEN long, or NULL: for SQL NULL
 * (length 0, which no value of a fixed-length type has), and for a
 * value of another length, which marks the reader bad. */
static const unsigned char *
fixed_value(struct pg_binary *b, int row, int col, int len)
{
	int got = PQgetlength(b->res, row, col);

	if (got == len)
		return (const unsigned char *)PQgetvalue(b->res, row, col);
	if (got != 0 || !PQgetisnull(b->res, row, col))
		b->bad = true;
	return NULL;
}

/* The integer of a 2, 4 or 8-byte column, sign-extended. */
static bool
read_int(struct pg_binary *b, int row, int col, int64_t *out)
{
	const unsigned char *p;

	switch (col < b->ncols ? b->type[col] : 0) {
	case OID_INT2:
		if ((p = fixed_value(b, row, col, 2)) == NULL)
			return false;
		*out = (int16_t)big_endian(p, 2);
		return true;
	case OID_INT4:
		if ((p = fixed_value(b, row, col, 4)) == NULL)
			return false;
		*out = (int32_t)big_endian(p, 4);
		return true;
	case OID_INT8:
		if ((p = fixed_value(b, row, col, 8)) == NULL)
			return false;
		*out = (int64_t)big_endian(p, 8);
		return true;
	}
	b->bad = true;
	return false;
}

bool
pg_binary_int(struct pg_binary *b, int row, int col, int64_t *out)
{
	return read_int(b, row, col, out);
}

double
pg_binary_number(struct pg_binary *b, int row, int col)
{
	const unsigned char *p;
	uint64_t bits;
	int64_t i;
	double d;

	if (col >= b->ncols || b->type[col] != OID_FLOAT8)
		return read_int(b, row, col, &i) ? (double)i : NAN;
	if ((p = fixed_value(b, row, col, 8)) == NULL)
		return NAN;
	bits = big_endian(p, 8);
	memcpy(&d, &bits, sizeof(d));
	return d;
}

bool
pg_binary_time(struct pg_binary *b, int row, int col, int64_t *out)
{
	const unsigned char *p;
	int64_t us, s, rem;

	if (col >= b->ncols || b->type[col] != OID_TIMESTAMPTZ) {
		b->bad = true;
		return false;
	}
	if ((p = fixed_value(b, row, col, 8)) == NULL)
		return false;
	us = (int64_t)big_endian(p, 8);
	if (us == INT64_MAX || us == INT64_MIN)
		return false;		/* 'infinity', '-infinity' */
	s = us / 1000000;
	rem = us % 1000000;
	if (rem >= 500000)
		s++;
	else if (rem <= -500000)
		s--;
	*out = s + PG_EPOCH_UNIX;
	return true;
}

void
pg_binary_text(struct pg_binary *b, int row, int col, char *dst, size_t size)
{
	size_t len;

	if (size == 0)
		return;
	if (col >= b->ncols) {
		b->bad = true;
		*dst = '\0';
		return;
	}
	/* NULL has length 0: an empty string, as an empty text. */
	len = (size_t)PQgetlength(b->res, row, col);
	if (len > size - 1)
		len = size - 1;
	memcpy(dst, PQgetvalue(b->res, row, col), len);
	dst[len] = '\0';
}
