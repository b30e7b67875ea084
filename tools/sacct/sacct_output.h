/* sacct_output.h - how ceems-sacct prints rows: an aligned table fitted
 * to the terminal (box drawing only on a UTF-8 terminal, ASCII when
 * piped), sacct's -p/-P parsable lines with --delimiter, CSV (RFC 4180
 * quoting), and the --summary totals per user or account. */
#ifndef CEEMS_SACCT_OUTPUT_H
#define CEEMS_SACCT_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "sacct_fields.h"
#include "sacct_row.h"

enum sacct_mode {
	SACCT_TABLE = 0,
	SACCT_PARSABLE,		/* -p: a delimiter after every field */
	SACCT_PARSABLE2,	/* -P: between fields only */
	SACCT_CSV,
};

enum sacct_style {
	SACCT_STYLE_AUTO = 0,	/* box on a UTF-8 terminal, else ASCII */
	SACCT_STYLE_ASCII,
	SACCT_STYLE_BOX,
};

struct sacct_output_opts {
	enum sacct_mode mode;
	const char *delimiter;	/* -p/-P; "|" by default */
	bool noheader;
	enum sacct_style style;	/* resolved: never AUTO when printing */
	int width;		/* columns to fit the table into; 0: no limit */
};

/* The style and width for stdout: box drawing only when FD is a terminal
 * and the locale's codeset is UTF-8; the width from the terminal
 * (TIOCGWINSZ), else COLUMNS, else none. */
void sacct_output_detect(int fd, struct sacct_output_opts *o);

/* Print ROWS in the columns COLS.  FILL, when not NULL, holds nrows x
 * ncols texts for the cells of fields ceems does not keep (Slurm's
 * values, sacct_slurm.h), NULL where there is none.  Returns 0 or -1
 * (out of memory, or a write error on OUT). */
int sacct_output_rows(FILE *out, const struct sacct_column *cols,
		      size_t ncols, const struct sacct_rows *rows,
		      const char *const *fill,
		      const struct sacct_output_opts *o);

/* The totals of the job rows of ROWS per user (or per ACCOUNT), then
 * over all, in the same mode and style.  They read the row parts of
 * SACCT_SUMMARY_NEEDS (the user is always there). */
#define SACCT_SUMMARY_NEEDS \
	(SACCT_NEED_ACCOUNT | SACCT_NEED_ALLOC_CPUS | SACCT_NEED_ELAPSED | \
	 SACCT_NEED_CPU_S | SACCT_NEED_TOTAL | SACCT_NEED_EMISSIONS)
int sacct_output_summary(FILE *out, const struct sacct_rows *rows,
			 bool by_account, const struct sacct_output_opts *o);

/* Write TEXT as one CSV field (quoted when it holds a comma, a quote, CR
 * or LF; quotes doubled). */
void sacct_output_csv_field(FILE *out, const char *text);

#endif
