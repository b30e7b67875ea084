/* bench_time.h - the benchmarks' wall clock and the order statistics
 * they report (median, maximum), one copy for all of them. */
#ifndef CEEMS_BENCH_TIME_H
#define CEEMS_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* Milliseconds on the monotonic clock. */
static inline double
bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort the N times of T, smallest first, and return their median. */
static inline double
bench_sort_median(double *t, size_t n)
{
	if (n == 0)
		return 0;
	qsort(t, n, sizeof(*t), bench_cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

#endif
