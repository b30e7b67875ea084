/* pg_binary.h - values of a libpq result asked for in binary format.
 *
 * ceems-sacct's listing can be tens of thousands of rows of 39 columns:
 * as text the server formats every number and time and the tool parses
 * them back, which costs more than finding the rows (doc/performance.md,
 * "ceems-sacct's listing in binary").  In binary the server sends its
 * own representation (big-endian integers and IEEE doubles, times as
 * microseconds since 2000).
 *
 * A result's column types are checked once against what the caller
 * expects (pg_binary_init): a schema that changed under the tool is a
 * clear error, never a misread number.  Each value's length is checked
 * again when read; a value of the wrong length reads as unknown and
 * marks the reader bad, so the caller can refuse the result. */
#ifndef CEEMS_PG_BINARY_H
#define CEEMS_PG_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libpq-fe.h>

/* What a column may be: each kind accepts a family of types. */
enum pg_binary_kind {
	PG_BINARY_INT,		/* smallint, integer, bigint */
	PG_BINARY_NUMBER,	/* those or double precision */
	PG_BINARY_TEXT,		/* text (and domains over it) */
	PG_BINARY_TIME,		/* timestamp with time zone */
	PG_BINARY_RECORDS	/* an array of records: a composite type's
				 * OID is the database's, so the records'
				 * fields are checked when read
				 * (pg_binary_records) */
};

#define PG_BINARY_MAX_COLUMNS 64

/* A result being read: its column types are kept here so that reading
 * a value makes two calls into libpq (its length, then its bytes). */
struct pg_binary {
	const PGresult *res;
	int ncols;
	Oid type[PG_BINARY_MAX_COLUMNS];
	bool bad;		/* a value had the wrong length */
};

/* Start reading RES, which must have exactly N columns of KINDS (at
 * most PG_BINARY_MAX_COLUMNS), all in binary.  0, or -1 with ERR naming
 * the first column that differs and WHAT (the query's name). */
int pg_binary_init(struct pg_binary *b, const PGresult *res,
		   const enum pg_binary_kind *kinds, int n, const char *what,
		   char *err, size_t err_size);

/* An integer column: true with *OUT, false for NULL. */
bool pg_binary_int(struct pg_binary *b, int row, int col, int64_t *out);

/* A number column as a double, NaN for NULL. */
double pg_binary_number(struct pg_binary *b, int row, int col);

/* A time column as Unix seconds (rounded to the nearest, as
 * extract(epoch ...)::bigint does): true with *OUT, false for NULL or
 * an infinite time. */
bool pg_binary_time(struct pg_binary *b, int row, int col, int64_t *out);

/* A text column into DST (truncated to SIZE - 1 bytes, always
 * terminated), "" for NULL. */
void pg_binary_text(struct pg_binary *b, int row, int col, char *dst,
		    size_t size);

/* One field of a record read by pg_binary_records: its type and
 * length were checked against the kind asked for. */
struct pg_binary_field {
	Oid type;
	int len;			/* -1 for NULL */
	const unsigned char *p;
};

/* Each record of a one-dimensional array-of-records column (kind
 * PG_BINARY_RECORDS), each of exactly N fields of KINDS (no
 * PG_BINARY_RECORDS among them), given in turn to EACH with ARG (if
 * not NULL).  The whole value is checked before EACH is first called.  Returns the
 * number of records (0 for NULL or an empty array); -1 for a value that
 * is not such an array, which marks the reader bad, or when EACH
 * returned -1, which stops the walk and does not. */
int pg_binary_records(struct pg_binary *b, int row, int col,
		      const enum pg_binary_kind *kinds, int n,
		      int (*each)(void *arg, const struct pg_binary_field *fields),
		      void *arg);

/* How many records an array-of-records column says it holds (its
 * header alone: nothing else is checked), 0 for NULL or a value too
 * short to say: a size to make room for before pg_binary_records. */
size_t pg_binary_records_claimed(struct pg_binary *b, int row, int col);

/* A record's field: as the column readers, NULL gives false, NaN, "". */
bool pg_binary_field_int(const struct pg_binary_field *f, int64_t *out);
double pg_binary_field_number(const struct pg_binary_field *f);
void pg_binary_field_text(const struct pg_binary_field *f, char *dst,
			  size_t size);

#endif
