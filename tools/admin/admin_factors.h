/* admin_factors.h - `ceems-admin factors load FILE.csv`: carbon
 * intensities per zone into ceems.emission_factors.
 *
 * The file is CSV with a header line naming its columns, in any order:
 *   zone, g_per_kwh, source, and either year (a yearly figure) or
 *   valid_from [, valid_to] (ISO 8601 times; valid_to empty: open-ended).
 * Fields may be double-quoted ("" is a quote); lines starting with '#'
 * and empty lines are skipped.  The parser is a pure function over the
 * file's text so that it can be fuzzed. */
#ifndef CEEMS_ADMIN_FACTORS_H
#define CEEMS_ADMIN_FACTORS_H

#include <stdbool.h>
#include <stddef.h>

#define ADMIN_FACTOR_ZONE_MAX 17
#define ADMIN_FACTOR_TIME_MAX 40
#define ADMIN_FACTOR_SOURCE_MAX 128
#define ADMIN_FACTORS_MAX 100000

struct admin_factor {
	unsigned int line;	/* in the file, for messages */
	char zone[ADMIN_FACTOR_ZONE_MAX];
	int year;		/* 0: valid_from/valid_to are set instead */
	char valid_from[ADMIN_FACTOR_TIME_MAX];
	char valid_to[ADMIN_FACTOR_TIME_MAX];	/* "" open-ended */
	double g_per_kwh;
	char source[ADMIN_FACTOR_SOURCE_MAX];
};

/* Parse TEXT (LEN bytes, need not be NUL-terminated) into a new array
 * *ROWS of *NROWS factors (free() it).  Returns 0, or -1 with ERR naming
 * the line and the problem (*ROWS NULL then). */
int admin_factors_parse(const char *text, size_t len,
			struct admin_factor **rows, size_t *nrows,
			char *err, size_t err_size);

/* The line of TEXT (LEN bytes) at *POS: *LINE its start, *LINE_LEN its
 * length without its "\n" or "\r\n"; *POS moves past it.  False at the
 * end of TEXT.  (The CSV files admins hand to ceems-admin come from any
 * system.) */
bool admin_factors_next_line(const char *text, size_t len, size_t *pos,
		     const char **line, size_t *line_len);

/* "line LINE: " (nothing for line 0: the file as a whole) and FMT into
 * ERR; -1, what the readers return on error. */
int admin_factors_line_fail(char *err, size_t err_size, unsigned int line,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
