/* clock.h - the monotonic clock, in the units the callers count in:
 * deadlines, backoffs and durations that a change of the wall clock must
 * not move. */
#ifndef CEEMS_CLOCK_H
#define CEEMS_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t ceems_clock_monotonic_ns(void);

/* CLOCK_MONOTONIC in milliseconds. */
int64_t ceems_clock_monotonic_ms(void);

#endif /* CEEMS_CLOCK_H */
