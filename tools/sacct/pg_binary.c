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
	case PG_BINARY_RECORDS:
		return true;
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
	case PG_BINARY_RECORDS:
		return "an array of records";
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

/* The length of every value of TYPE, 0 for text. */
static int
fixed_length(Oid type)
{
	switch (type) {
	case OID_INT2:
		return 2;
	case OID_INT4:
		return 4;
	case OID_INT8:
	case OID_FLOAT8:
	case OID_TIMESTAMPTZ:
		return 8;
	}
	return 0;
}

static bool
is_integer(Oid type)
{
	return type == OID_INT2 || type == OID_INT4 || type == OID_INT8;
}

/* The integer at P of integer TYPE (fixed_length(TYPE) bytes),
 * sign-extended. */
static int64_t
int_of(Oid type, const unsigned char *p)
{
	switch (type) {
	case OID_INT2:
		return (int16_t)big_endian(p, 2);
	case OID_INT4:
		return (int32_t)big_endian(p, 4);
	}
	return (int64_t)big_endian(p, 8);
}

static double
double_of(const unsigned char *p)
{
	uint64_t bits = big_endian(p, 8);
	double d;

	memcpy(&d, &bits, sizeof(d));
	return d;
}

static bool
read_int(struct pg_binary *b, int row, int col, int64_t *out)
{
	const unsigned char *p;
	Oid type = col < b->ncols ? b->type[col] : 0;

	if (!is_integer(type)) {
		b->bad = true;
		return false;
	}
	if ((p = fixed_value(b, row, col, fixed_length(type))) == NULL)
		return false;
	*out = int_of(type, p);
	return true;
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
	int64_t i;

	if (col >= b->ncols || b->type[col] != OID_FLOAT8)
		return read_int(b, row, col, &i) ? (double)i : NAN;
	if ((p = fixed_value(b, row, col, 8)) == NULL)
		return NAN;
	return double_of(p);
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

/* The big-endian 32-bit integer at *P, if *LEFT holds it: moves past. */
static bool
take_int32(const unsigned char **p, size_t *left, int32_t *out)
{
	if (*left < 4)
		return false;
	*out = (int32_t)big_endian(*p, 4);
	*p += 4;
	*left -= 4;
	return true;
}

/* The fields of the record of LEN bytes at P into FIELDS: exactly N, of
 * KINDS, each of its type's length.  The formats are record_send's: the
 * count of fields, then each field's type, length (-1 for NULL) and
 * bytes. */
static bool
record_fields(const unsigned char *p, size_t len,
	      const enum pg_binary_kind *kinds, int n,
	      struct pg_binary_field *fields)
{
	int32_t count, type, flen;
	int k;

	if (!take_int32(&p, &len, &count) || count != n)
		return false;
	for (k = 0; k < n; k++) {
		if (!take_int32(&p, &len, &type) || !take_int32(&p, &len, &flen))
			return false;
		if (kinds[k] == PG_BINARY_RECORDS || !kind_accepts(kinds[k], (Oid)type))
			return false;
		if (flen < -1 || (flen >= 0 && (size_t)flen > len) ||
		    (flen >= 0 && fixed_length((Oid)type) != 0 &&
		     flen != fixed_length((Oid)type)))
			return false;
		fields[k].type = (Oid)type;
		fields[k].len = flen;
		fields[k].p = flen >= 0 ? p : NULL;
		if (flen > 0) {
			p += flen;
			len -= (size_t)flen;
		}
	}
	return len == 0;
}

#define WALK_MALFORMED (-1)
#define WALK_STOPPED (-2)

/* The records of the array of LEFT bytes at P (array_send's format: the
 * dimensions, a flag, the element type, each dimension's size and lower
 * bound, then each element's length and bytes), to EACH if not NULL. */
static int
walk_records(const unsigned char *p, size_t left,
	     const enum pg_binary_kind *kinds, int n,
	     int (*each)(void *, const struct pg_binary_field *), void *arg)
{
	struct pg_binary_field fields[PG_BINARY_MAX_COLUMNS];
	int32_t ndim, flags, elem_type, count, lower, len, i;

	if (!take_int32(&p, &left, &ndim) || !take_int32(&p, &left, &flags) ||
	    !take_int32(&p, &left, &elem_type))
		return WALK_MALFORMED;
	if (ndim == 0)
		return left == 0 ? 0 : WALK_MALFORMED;
	if (ndim != 1 || !take_int32(&p, &left, &count) ||
	    !take_int32(&p, &left, &lower) || count < 0)
		return WALK_MALFORMED;
	for (i = 0; i < count; i++) {
		/* A NULL record (length -1) is not a record. */
		if (!take_int32(&p, &left, &len) || len < 0 || (size_t)len > left ||
		    !record_fields(p, (size_t)len, kinds, n, fields))
			return WALK_MALFORMED;
		p += len;
		left -= (size_t)len;
		if (each != NULL && each(arg, fields) < 0)
			return WALK_STOPPED;
	}
	return left == 0 ? count : WALK_MALFORMED;
}

int
pg_binary_records(struct pg_binary *b, int row, int col,
		  const enum pg_binary_kind *kinds, int n,
		  int (*each)(void *arg, const struct pg_binary_field *fields),
		  void *arg)
{
	const unsigned char *p;
	size_t len;
	int ret;

	if (col >= b->ncols || n < 0 || n > PG_BINARY_MAX_COLUMNS) {
		b->bad = true;
		return -1;
	}
	if (PQgetisnull(b->res, row, col))
		return 0;
	p = (const unsigned char *)PQgetvalue(b->res, row, col);
	len = (size_t)PQgetlength(b->res, row, col);
	if ((ret = walk_records(p, len, kinds, n, NULL, NULL)) < 0) {
		b->bad = true;
		return -1;
	}
	if (each == NULL)
		return ret;
	ret = walk_records(p, len, kinds, n, each, arg);
	return ret < 0 ? -1 : ret;
}

size_t
pg_binary_records_claimed(struct pg_binary *b, int row, int col)
{
	const unsigned char *p;
	size_t left;
	int32_t ndim, count;

	if (col >= b->ncols || PQgetisnull(b->res, row, col))
		return 0;
	p = (const unsigned char *)PQgetvalue(b->res, row, col);
	left = (size_t)PQgetlength(b->res, row, col);
	/* dimensions, flags, element type, then the first dimension's size */
	if (left < 16 || !take_int32(&p, &left, &ndim) || ndim != 1)
		return 0;
	count = (int32_t)big_endian(p + 8, 4);
	/* Each record takes at least its length and its count of fields. */
	return count > 0 && (size_t)count <= left / 8 ? (size_t)count : 0;
}

bool
pg_binary_field_int(const struct pg_binary_field *f, int64_t *out)
{
	if (f->len < 0 || !is_integer(f->type))
		return false;
	*out = int_of(f->type, f->p);
	return true;
}

double
pg_binary_field_number(const struct pg_binary_field *f)
{
	if (f->len < 0)
		return NAN;
	if (f->type == OID_FLOAT8)
		return double_of(f->p);
	return is_integer(f->type) ? (double)int_of(f->type, f->p) : NAN;
}

void
pg_binary_field_text(const struct pg_binary_field *f, char *dst, size_t size)
{
	size_t len;

	if (size == 0)
		return;
	len = f->len > 0 ? (size_t)f->len : 0;
	if (len > size - 1)
		len = size - 1;
	if (len > 0)
		memcpy(dst, f->p, len);
	dst[len] = '\0';
}
