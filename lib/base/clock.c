/* clock.c - the monotonic clock (clock.h).  CLOCK_MONOTONIC cannot fail
 * on Linux with a valid pointer, so there is no error to return. */
#include "config.h"

#include <time.h>

#include "base/clock.h"
#include "base/tick_path.h"

CEEMS_TICK_PATH uint64_t
ceems_clock_monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t
ceems_clock_monotonic_ms(void)
{
	return (int64_t)(ceems_clock_monotonic_ns() / 1000000u);
}
