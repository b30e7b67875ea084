/* sacct_fields.h - the fields ceems-sacct can show (-o/--format, listed
 * by -e/--helpformat): sacct's names and units where sacct has the field,
 * and the energy, emissions and efficiency fields it lacks.  Each field
 * formats a struct sacct_row into text; an unknown value is an empty
 * cell.  The --format parser is a pure function over the option's text. */
#ifndef CEEMS_SACCT_FIELDS_H
#define CEEMS_SACCT_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sacct_row.h"

#define SACCT_CELL_MAX 600	/* the longest cell: a node list */
/* Columns of one listing: -o ALL is every field, and lists may repeat. */
#define SACCT_MAX_COLUMNS 1024

/* What a field is to a script written for sacct (sacct_fields.def). */
enum sacct_field_status {
	SACCT_FIELD_FILLED,	/* sacct's, filled in sacct's format */
	SACCT_FIELD_EMPTY,	/* sacct's, not kept by ceems: empty */
	SACCT_FIELD_CEEMS,	/* ceems's own */
};

struct sacct_field {
	const char *name;
	int width;		/* sacct's default width */
	bool right;		/* right-aligned (numbers) */
	/* NULL for a field ceems does not keep: an empty cell */
	void (*format)(const struct sacct_row *row, char *buf, size_t size);
	uint64_t needs;		/* the row parts format reads (SACCT_NEED_*) */
	enum sacct_field_status status;
	const char *help;	/* one line for --explain-fields */
};

struct sacct_column {
	const struct sacct_field *field;
	int width;		/* %N, or 0: fit the values */
};

/* The columns shown without -o: what an energy-aware user wants first. */
#define SACCT_DEFAULT_FORMAT \
	"JobID,JobName,Account,State,Elapsed,AllocCPUS,CPUEff,MemEff,Energy,CO2e,Quality"

/* The row parts COLS read: what the database backend must fill. */
uint64_t sacct_fields_columns_need(const struct sacct_column *cols, size_t n);

/* Every field, for the tests: the table and its length. */
const struct sacct_field *sacct_fields_all(size_t *n);

/* The field named NAME (case-insensitive), else as sacct matches: the
 * first field in the table whose name begins with NAME; or NULL. */
const struct sacct_field *sacct_fields_find(const char *name);

/* Parse a --format list, "JobID,JobName%30,State" (a %N suffix sets the
 * column's width; ALL is every field; -o may be given several times,
 * its lists add up) into
 * COLS after the *N columns already there.  Returns 0, or -1 with ERR
 * naming the unknown field or the bad width (COLS and *N unchanged). */
int sacct_fields_format_parse(const char *spec, struct sacct_column *cols,
		       size_t max, size_t *n, char *err, size_t err_size);

/* -e: the names alone, as sacct prints them. */
void sacct_fields_help(FILE *out);

/* --explain-fields: each field, its status and what it holds. */
void sacct_fields_explain(FILE *out);
const char *sacct_fields_status_name(enum sacct_field_status status);

/* The formatters, exported for the tests.  Each writes "" for unknown. */
/* [DD-]HH:MM:SS, sacct's Elapsed. */
void sacct_fields_fmt_elapsed(double seconds, char *buf, size_t size);
/* sacct's TotalCPU: MM:SS.mmm under an hour, 00:MM:SS without
 * milliseconds, [DD-]HH:MM:SS from an hour. */
void sacct_fields_fmt_cpu(double seconds, char *buf, size_t size);
/* Kilobytes with a K (GPUMem). */
void sacct_fields_fmt_rss(double bytes, char *buf, size_t size);
/* Bytes as sacct writes its disk figures, 2.50M ("" unknown). */
void sacct_fields_fmt_bytes(double bytes, char *buf, size_t size);
/* Three significant digits, never an exponent: 0.000494, 1.23, 123, 12345. */
void sacct_fields_fmt_sig3(double value, char *buf, size_t size);
/* A share 0..1 as a percentage with one decimal, "37.5%". */
void sacct_fields_fmt_pct(double fraction, char *buf, size_t size);

#endif
