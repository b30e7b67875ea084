/* tap.h - a minimal Test Anything Protocol emitter for the C unit tests;
 * automake's tap-driver.sh turns each "ok"/"not ok" into one result. */
#ifndef CEEMS_TAP_H
#define CEEMS_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

__attribute__((format(printf, 4, 5))) static inline bool
tap_ok_at(bool pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return pass;
}

#define ok(cond, ...) tap_ok_at((cond), __FILE__, __LINE__, __VA_ARGS__)

static inline bool
tap_is_str_at(const char *got, const char *want, const char *file, int line,
	      const char *name)
{
	bool pass = got != NULL && want != NULL && strcmp(got, want) == 0;

	tap_ok_at(pass, file, line, "%s", name);
	if (!pass)
		printf("#   got:  '%s'\n#   want: '%s'\n", got ? got : "(null)",
		       want ? want : "(null)");
	return pass;
}
#define is_str(got, want, name) tap_is_str_at((got), (want), __FILE__, __LINE__, (name))

static inline bool
tap_is_long_at(long long got, long long want, const char *file, int line,
	       const char *name)
{
	bool pass = got == want;

	tap_ok_at(pass, file, line, "%s", name);
	if (!pass)
		printf("#   got:  %lld\n#   want: %lld\n", got, want);
	return pass;
}
#define is_int(got, want, name) tap_is_long_at((long long)(got), (long long)(want), __FILE__, __LINE__, (name))

/* |got - want| <= tol (absolute). */
static inline bool
tap_is_near_at(double got, double want, double tol, const char *file,
	       int line, const char *name)
{
	bool pass = isfinite(got) && fabs(got - want) <= tol;

	tap_ok_at(pass, file, line, "%s", name);
	if (!pass)
		printf("#   got:  %.12g\n#   want: %.12g (tolerance %g)\n", got,
		       want, tol);
	return pass;
}
#define is_near(got, want, tol, name) tap_is_near_at((got), (want), (tol), __FILE__, __LINE__, (name))

/* Print the plan and return the process exit status. */
static inline int
done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed == 0 ? 0 : 1;
}

#endif
