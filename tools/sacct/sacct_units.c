/* sacct_units.c - sacct's number conversion (see sacct_units.h), kept
 * to Slurm's rules so that a script reading sacct's MaxRSS, ReqMem or
 * ConsumedEnergy reads ceems-sacct's the same: a zero is "0"; --units
 * wins over everything; --noconvert keeps the unit counted in; else
 * memory is divided while the value stays a multiple of half the step
 * and energy while it is at least one step; an integer is printed as
 * one, anything else with two decimals. */
#include "config.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sacct_units.h"

static struct sacct_units units = { -1, 0 };

int
sacct_units_parse(const char *text, int *unit)
{
	static const char letters[] = "KMGTP";
	const char *p;

	/* sacct reads the first letter alone: --units=Mi is M. */
	if (text[0] == '\0' ||
	    (p = strchr(letters, toupper((unsigned char)text[0]))) == NULL)
		return -1;
	*unit = (int)(p - letters) + SACCT_UNIT_KILO;
	return 0;
}

void
sacct_units_set(const struct sacct_units *u)
{
	units = *u;
}

void
sacct_units_fmt(double num, enum sacct_unit orig, int divisor, int exact,
		char *buf, size_t size)
{
	static const char suffix[] = "\0KMGTP?";
	int type = (int)orig;
	uint64_t i;

	if (!isfinite(num) || num < 0) {
		snprintf(buf, size, "%s", "");
		return;
	}
	if ((int64_t)num == 0) {
		snprintf(buf, size, "0");
		return;
	}
	if (units.spec >= 0) {
		for (; units.spec < type; type--)
			num *= divisor;
		for (; units.spec > type; type++)
			num /= divisor;
	} else if (units.noconvert) {
		/* the unit counted in */
	} else if (exact) {
		while (num >= divisor &&
		       (uint64_t)num % (uint64_t)(divisor / 2) == 0) {
			num /= divisor;
			type++;
		}
	} else {
		while (num >= divisor) {
			num /= divisor;
			type++;
		}
	}
	if (type < SACCT_UNIT_NONE || type > SACCT_UNIT_PETA)
		type = 6;
	i = (uint64_t)num;
	if ((double)i == num)
		snprintf(buf, size, "%" PRIu64 "%.1s", i, &suffix[type]);
	else
		snprintf(buf, size, "%.2f%.1s", num, &suffix[type]);
}
