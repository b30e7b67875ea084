/* number.c - unsigned decimals of kernel files (see number.h).  These run
 * for every counter of every job at every tick, so the overflow test uses
 * constant bounds rather than a division per digit. */
#include "config.h"

#include <errno.h>

#include "base/number.h"
#include "base/tick_path.h"

CEEMS_TICK_PATH int
ceems_number_take_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		unsigned digit = (unsigned)(*s - '0');

		if (v > UINT64_MAX / 10 ||
		    (v == UINT64_MAX / 10 && digit > UINT64_MAX % 10))
			return -ERANGE;
		v = v * 10 + digit;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

CEEMS_TICK_PATH int
ceems_number_parse_u64(const char *text, uint64_t *out)
{
	const char *p = text;
	uint64_t v;
	int ret;

	if ((ret = ceems_number_take_u64(&p, &v)) < 0)
		return ret;
	if (*p == '\n')
		p++;
	if (*p != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}
