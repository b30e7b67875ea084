/* emissions.h - carbon-intensity factors: the shipped yearly table per
 * country (lib/data/carbon-intensity.tsv, derived from Our World in Data
 * / Ember, CC BY 4.0), its lookup by zone and year, and the conversion of
 * energy into emissions (energy x PUE x intensity).  A time-varying
 * series (lib/model/intensity.h) fills the same factor struct tick by tick. */
#ifndef CEEMS_EMISSIONS_H
#define CEEMS_EMISSIONS_H

#include <stdbool.h>
#include <stddef.h>

/* Longest source tag, with its NUL. */
#define CEEMS_EMISSIONS_SOURCE_MAX 32

/* What a job records about the factor its emissions used. */
struct ceems_emission_factor {
	char source[CEEMS_EMISSIONS_SOURCE_MAX];	/* "owid-ember-2025"... */
	char zone[8];		/* ISO 3166-1 alpha-2, or "WORLD" */
	int year;		/* the year the figure is for */
	double g_per_kwh;	/* gCO2e per kWh of electricity */
	double pue;		/* the site's PUE, >= 1 (lookup sets 1) */
};

struct ceems_emissions_row {
	char zone[8];		/* alpha-2, or "WORLD" */
	char alpha3[4];		/* alpha-3, or "" for none */
	int year;
	double g_per_kwh;
	char source[CEEMS_EMISSIONS_SOURCE_MAX];
	unsigned int line;	/* line in the table text, 1-based */
};

struct ceems_emissions_table {
	struct ceems_emissions_row *rows;	/* sorted by zone, year */
	size_t nrows;
	size_t nbad;		/* malformed lines skipped */
	unsigned int first_bad_line;	/* 1-based; 0 when none */
};

/* Parse the table text BUF (LEN bytes, no NUL needed) into T.  Lines:
 * "#" comments, blank lines, or five fields separated by tabs or spaces:
 * alpha-2 (or WORLD), alpha-3 (or -), year, gCO2e/kWh, source tag.  A
 * malformed or duplicate line is skipped and counted in T->nbad.
 * Returns 0, -ENODATA when no line is valid, -ENOMEM, or -EINVAL. */
int ceems_emissions_table_parse(const char *buf, size_t len,
				struct ceems_emissions_table *t);

/* Read and parse the table at PATH; logs one line for skipped lines.
 * Returns 0 or a negative errno (-EFBIG for a file over 2 MiB). */
int ceems_emissions_table_load(const char *path,
			       struct ceems_emissions_table *t);

void ceems_emissions_table_free(struct ceems_emissions_table *t);

/* The factor of ZONE (alpha-2 or alpha-3, any case; "WORLD" for the world
 * average, used only when configured by that name) for YEAR: that year's
 * figure, else the latest earlier one (a year past the table gets its
 * last year), else the earliest one; OUT->year says which.  OUT->pue is
 * set to 1: the caller sets the site's PUE.  Returns 0, -EINVAL for a
 * string that is no zone code, -ENOENT for a zone not in the table.
 * It scans the table: call it when the zone or the year changes, not on
 * every tick. */
int ceems_emissions_lookup(const struct ceems_emissions_table *t,
			   const char *zone, int year,
			   struct ceems_emission_factor *out);

/* A plain decimal "123" or "123.456" (no sign, exponent, nan or inf, at
 * most 15 digits), parsed whatever the locale.  Returns 0 or -EINVAL. */
int ceems_emissions_parse_decimal(const char *s, double *out);

/* Figures beyond these are no real grid or site: a typo, not a fact. */
#define CEEMS_EMISSIONS_MAX_G_PER_KWH 10000.0
#define CEEMS_EMISSIONS_MAX_PUE 10.0

/* True when F can be applied: finite intensity >= 0, finite PUE >= 1. */
bool ceems_job_figures_emission_factor_valid(const struct ceems_emission_factor *f);

/* Emissions in grams of CO2e of JOULES of IT energy under F:
 * joules / 3.6e6 x pue x g_per_kwh.  F must be valid. */
double ceems_job_figures_emissions_grams(double joules,
			     const struct ceems_emission_factor *f);

#endif
