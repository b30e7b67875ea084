/* sacct_time.h - the time arguments of ceems-sacct (-S, -E), in the forms
 * sacct accepts, and sacct's default time window.  Pure functions: "now"
 * is a parameter and the local time zone comes from TZ, so the tests
 * hold every form to a fixed clock. */
#ifndef CEEMS_SACCT_TIME_H
#define CEEMS_SACCT_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* Parse TEXT, one of
 *   YYYY-MM-DD[THH:MM[:SS]]
 *   MM/DD[/YY][-HH:MM[:SS]], MM.DD[.YY][-HH:MM[:SS]], MMDD[YY][-HH:MM[:SS]]
 *   HH:MM[:SS][AM|PM]                       (today)
 *   now[{+|-}COUNT[seconds|minutes|hours|days|weeks]] (a unit may be
 *     shortened to any prefix: s, min, h, d, w)
 *   today, midnight (00:00 today), yesterday, tomorrow (00:00 of that
 *   day), elevenses (11:00), noon (12:00), fika (15:00), teatime (16:00)
 * into *OUT (Unix seconds), local time, relative to NOW.  Keywords are
 * case-insensitive.  Returns 0, or -1 with ERR saying what is wrong
 * (*OUT untouched). */
int sacct_time_parse(const char *text, time_t now, time_t *out, char *err,
		     size_t err_size);

/* sacct's default window ("DEFAULT TIME WINDOW" in sacct(1)): which
 * options were given and their values in, the window [*START, *END) out.
 *   no -j, no -s: start = 00:00 today, end = now
 *   -j, no -s:    start = 0 (the epoch), end = now
 *   -s, no -j:    start = now, end = start
 *   -j and -s:    start = 0, end = start when -S was given, else now
 * An explicit -S or -E always wins. */
struct sacct_window_in {
	bool have_start, have_end, have_jobs, have_states;
	time_t start, end;
};
void sacct_time_window(const struct sacct_window_in *in, time_t now,
		       time_t *start, time_t *end);

#endif
