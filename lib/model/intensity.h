/* intensity.h - the node's carbon-intensity series: a small versioned
 * text file (the "intensity cache") that `ceems-admin factors export`
 * writes from the database and the agent reads without one, so that each
 * tick's energy is charged at the intensity in force at that time.
 *
 * The format, version 1 (one item per line, LF or CRLF):
 *
 *   ceems-intensity 1
 *   zone FR
 *   source rte-eco2mix
 *   1704067200 1704070800 52.5
 *   1704070800 1704074400 48
 *
 * "#" comment lines and blank lines are allowed after the first line.
 * The zone and source lines come before the rows.  A row is valid_from
 * and valid_to (Unix seconds, from < to, [from, to)) and gCO2e/kWh (a
 * plain decimal, at most CEEMS_EMISSIONS_MAX_G_PER_KWH); rows are sorted
 * by valid_from and do not overlap (gaps are allowed).  A file with any
 * bad line is refused whole. */
#ifndef CEEMS_INTENSITY_H
#define CEEMS_INTENSITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/emissions.h"

/* A cache is small: 1 MiB holds years of hourly rows. */
#define CEEMS_INTENSITY_MAX_BYTES (1u << 20)
/* The factor's source is "series:" and this, so it fits the record's
 * source (CEEMS_EMISSIONS_SOURCE_MAX with its NUL). */
#define CEEMS_INTENSITY_SOURCE_PREFIX "series:"
#define CEEMS_INTENSITY_SOURCE_MAX \
	(CEEMS_EMISSIONS_SOURCE_MAX - (sizeof(CEEMS_INTENSITY_SOURCE_PREFIX) - 1))
/* Timestamps beyond this (year 33658) are no real time: a typo. */
#define CEEMS_INTENSITY_MAX_TIME 999999999999LL

struct ceems_intensity_row {
	int64_t valid_from;	/* Unix seconds, included */
	int64_t valid_to;	/* Unix seconds, excluded */
	double g_per_kwh;
};

struct ceems_intensity_series {
	char zone[8];				/* as the zone line says */
	char source[CEEMS_INTENSITY_SOURCE_MAX];	/* its NUL included */
	struct ceems_intensity_row *rows;	/* sorted, disjoint */
	size_t nrows;
};

/* Parse BUF (LEN bytes, no NUL needed) into S.  Returns 0, -ENOMEM, or
 * -EINVAL with ERR naming the first bad line (S is then empty). */
int ceems_intensity_parse(const char *buf, size_t len,
			  struct ceems_intensity_series *s, char *err,
			  size_t err_size);

/* Read and parse the file at PATH (O_NOFOLLOW; at most
 * CEEMS_INTENSITY_MAX_BYTES, else -EFBIG).  Returns 0 or a negative
 * errno, with ERR saying what is wrong for a bad file. */
int ceems_intensity_load(const char *path, struct ceems_intensity_series *s,
			 char *err, size_t err_size);

/* Write S to PATH atomically (a temporary file in the same directory,
 * flushed, then renamed over PATH), mode 0644.  Returns 0 or a negative
 * errno. */
int ceems_intensity_write(const char *path,
			  const struct ceems_intensity_series *s);

void ceems_intensity_free(struct ceems_intensity_series *s);

/* How many of S's rows begin at or before Unix time T (binary search):
 * the index of the first row to begin after it. */
size_t ceems_intensity_rows_from(const struct ceems_intensity_series *s,
				 int64_t t);

/* The row in force at Unix time T (valid_from <= T < valid_to), or NULL
 * when the series does not cover T.  Binary search. */
const struct ceems_intensity_row *
ceems_intensity_at(const struct ceems_intensity_series *s, int64_t t);

/* True when SOURCE is a valid source tag for a series: 1 to
 * CEEMS_INTENSITY_SOURCE_MAX - 1 characters of [A-Za-z0-9._-]. */
bool ceems_intensity_source_valid(const char *source);

/* True when ZONE is a zone the cache may name: an upper-case ISO 3166-1
 * alpha-2 or alpha-3 code, or WORLD. */
bool ceems_intensity_zone_valid(const char *zone);

#endif
