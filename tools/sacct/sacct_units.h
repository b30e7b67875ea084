/* sacct_units.h - numbers with a unit suffix exactly as sacct writes
 * them (Slurm's convert_num_unit2): "4822K", "2G", "1.50G", "950",
 * "1.78K", and the --units / --noconvert choices that change them for
 * the whole listing. */
#ifndef CEEMS_SACCT_UNITS_H
#define CEEMS_SACCT_UNITS_H

#include <stddef.h>

/* The unit a figure is counted in, sacct's UNIT_NONE..UNIT_PETA. */
enum sacct_unit {
	SACCT_UNIT_NONE = 0, SACCT_UNIT_KILO, SACCT_UNIT_MEGA,
	SACCT_UNIT_GIGA, SACCT_UNIT_TERA, SACCT_UNIT_PETA,
};

/* How the listing converts: sacct's default (to the largest unit that
 * keeps the value exact, halves allowed), --units=X (always X), or
 * --noconvert (never). */
struct sacct_units {
	int spec;		/* -1: none; else an enum sacct_unit */
	int noconvert;		/* --noconvert */
};

/* --units's letter (K, M, G, T, P, any case): 0 and *UNIT, or -1. */
int sacct_units_parse(const char *text, int *unit);

/* Set the listing's conversion (before any field is formatted). */
void sacct_units_set(const struct sacct_units *u);

/* NUM counted in ORIG, converted as sacct converts it into BUF: EXACT
 * for memory (1024 steps), not for energy (1000 steps, always to the
 * largest unit). */
void sacct_units_fmt(double num, enum sacct_unit orig, int divisor, int exact,
		     char *buf, size_t size);

#endif
