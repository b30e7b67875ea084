/* checks_keys.c - the check of ceems_conf_keys_parse (lib/base/conf_keys.h), which
 * takes every setting's value whole: a ceems.conf value, a plugstack.conf
 * argument's, an agent option's.  Every key of the table gets the input
 * as its value. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "checks.h"
#include "base/conf.h"
#include "base/conf_keys.h"
#include "../conf_key_size.h"

static bool
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* What a successful parse of K left in OUT is one K allows. */
static bool
value_allowed(const struct ceems_key *k, const void *out)
{
	uint64_t u64;
	uint32_t u32;
	double d;

	switch (k->type) {
	case CEEMS_KEY_DURATION:
	case CEEMS_KEY_BYTES:
		memcpy(&u64, out, sizeof(u64));
		return (double)u64 >= k->min && (double)u64 <= k->max;
	case CEEMS_KEY_UINT32:
		memcpy(&u32, out, sizeof(u32));
		return u32 >= k->min && u32 <= k->max;
	case CEEMS_KEY_WATTS:
	case CEEMS_KEY_REAL:
		memcpy(&d, out, sizeof(d));
		return isfinite(d) && ((d >= k->min && d <= k->max) ||
				       (k->type == CEEMS_KEY_WATTS && d == -1));
	case CEEMS_KEY_BOOL:
		return true;
	default:
		return terminated(out, k->size) &&
		    strlen(out) < k->size &&
		    (k->type != CEEMS_KEY_PATH || ((const char *)out)[0] == '/');
	}
}

const char *
fuzz_check_conf_keys(const char *data, size_t len)
{
	static char out[CEEMS_CONFIG_STRING_MAX], before[CEEMS_CONFIG_STRING_MAX];
	const struct ceems_key *keys;
	char problem[160];
	size_t n;

	(void)len;
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		int r;

		memset(out, 0x5a, sizeof(out));
		memcpy(before, out, sizeof(out));
		memset(problem, 'x', sizeof(problem));
		r = ceems_conf_keys_parse(&keys[i], data, out,
					  conf_key_value_size(&keys[i]),
					  problem, sizeof(problem));
		if (r != 0 && r != -1)
			return "ceems_conf_keys_parse: returned neither 0 nor -1";
		if (r < 0) {
			if (!terminated(problem, sizeof(problem)) || problem[0] == '\0')
				return "ceems_conf_keys_parse: no message on error";
			if (memcmp(out, before, sizeof(out)) != 0)
				return "ceems_conf_keys_parse: changed the value on error";
		} else if (!value_allowed(&keys[i], out)) {
			return "ceems_conf_keys_parse: accepted a value out of range";
		}
	}
	return NULL;
}
