/* conf_value.c - the values with units of ceems.conf (conf_value.h):
 * durations and sizes.  A file of their own, so that the parser
 * (conf.c) and the key table (conf_keys.c) both use them and neither
 * calls the other back. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf_value.h"
#include "base/number.h"

int
ceems_conf_value_duration(const char *text, uint64_t *ns)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double value;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	value = strtod(text, &end);
	if (errno != 0 || !isfinite(value) || value < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double v = value * units[i].scale;

			if (v > 1e18)
				return -1;
			*ns = (uint64_t)(v + 0.5);
			return 0;
		}
	}
	return -1;
}

int
ceems_conf_value_bytes(const char *text, uint64_t *bytes)
{
	static const struct { const char *suffix; unsigned shift; } units[] = {
		{ "", 0 }, { "K", 10 }, { "M", 20 }, { "G", 30 }, { "T", 40 },
	};
	const char *end = text;
	uint64_t v;

	if (ceems_number_take_u64(&end, &v) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			if (v > (UINT64_MAX >> units[i].shift))
				return -1;
			*bytes = v << units[i].shift;
			return 0;
		}
	}
	return -1;
}
