/* test_sacct_time.c - every time form of ceems-sacct's -S/-E (sacct's
 * forms) against a fixed clock, malformed times, and sacct's default
 * time window rules.  TZ is UTC here, so the expected values are plain
 * Unix seconds; one case checks a zone with an offset. */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#include "../tap.h"
#include "sacct/sacct_time.h"

#define NOW 1741789845		/* 2025-03-12T14:30:45Z, a Wednesday */
#define MIDNIGHT 1741737600	/* 2025-03-12T00:00:00Z */
#define DAY 86400

static const struct {
	const char *text;
	long long want;
} good[] = {
	/* YYYY-MM-DD[THH:MM[:SS]] */
	{ "2025-03-01", 1740787200 },
	{ "2025-03-01T08:15", 1740787200 + 8 * 3600 + 15 * 60 },
	{ "2025-03-01T08:15:30", 1740787200 + 8 * 3600 + 15 * 60 + 30 },
	{ "2024-02-29", 1709164800 },
	/* MM/DD[/YY][-HH:MM[:SS]] */
	{ "03/01", 1740787200 },
	{ "03/01/24", 1709251200 },
	{ "03/01-08:15", 1740787200 + 8 * 3600 + 15 * 60 },
	{ "03/01/24-08:15:30", 1709251200 + 8 * 3600 + 15 * 60 + 30 },
	/* MM.DD[.YY] */
	{ "03.01", 1740787200 },
	{ "03.01.24", 1709251200 },
	/* MMDD[YY] */
	{ "0301", 1740787200 },
	{ "030124", 1709251200 },
	{ "0301-23:59:59", 1740787200 + DAY - 1 },
	/* HH:MM[:SS][AM|PM]: today */
	{ "08:15", MIDNIGHT + 8 * 3600 + 15 * 60 },
	{ "08:15:30", MIDNIGHT + 8 * 3600 + 15 * 60 + 30 },
	{ "08:15PM", MIDNIGHT + 20 * 3600 + 15 * 60 },
	{ "12:00am", MIDNIGHT },
	{ "12:30pm", MIDNIGHT + 12 * 3600 + 30 * 60 },
	/* now[{+|-}COUNT[UNIT]] */
	{ "now", NOW },
	{ "NOW", NOW },
	{ "now-30", NOW - 30 },
	{ "now+30seconds", NOW + 30 },
	{ "now-5minutes", NOW - 300 },
	{ "now-5min", NOW - 300 },
	{ "now-2hours", NOW - 7200 },
	{ "now-2h", NOW - 7200 },
	{ "now-7days", NOW - 7 * DAY },
	{ "now-1d", NOW - DAY },
	{ "now-2weeks", NOW - 14 * DAY },
	{ "now+1w", NOW + 7 * DAY },
	/* words */
	{ "today", MIDNIGHT },
	{ "midnight", MIDNIGHT },
	{ "Midnight", MIDNIGHT },
	{ "yesterday", MIDNIGHT - DAY },
	{ "tomorrow", MIDNIGHT + DAY },
	{ "elevenses", MIDNIGHT + 11 * 3600 },
	{ "noon", MIDNIGHT + 12 * 3600 },
	{ "fika", MIDNIGHT + 15 * 3600 },
	{ "teatime", MIDNIGHT + 16 * 3600 },
};

static const char *const bad[] = {
	"", "2025-13-01", "2025-02-30", "2025-03-01T25:00", "2025-03-01T08",
	"2025-03-01 08:15", "2025-3-1", "13/01", "02/30", "03/01/2024",
	"0301x", "03-01", "24:00", "08:60", "08:15:60", "13:00PM", "00:30am",
	"now-", "now-x", "now-5fortnights", "now+5daysago", "now*2",
	"now-999999999999", "yesterdays", "tea", "1741789845", "x",
	"2025-03-01T08:15:30Z", "03/01-8:15",
	"0123456789012345678901234567890123456789012345678901234567890123456789",
};

int
main(void)
{
	char err[256], name[128];
	time_t t, s, e;
	size_t i;

	setenv("TZ", "UTC", 1);
	tzset();
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		t = -1;
		err[0] = '\0';
		snprintf(name, sizeof(name), "'%s' parses", good[i].text);
		if (!ok(sacct_time_parse(good[i].text, NOW, &t, err, sizeof(err)) == 0, "%s", name))
			printf("#   error: %s\n", err);
		snprintf(name, sizeof(name), "'%s' is %lld", good[i].text, good[i].want);
		is_int(t, good[i].want, name);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		t = 12345;
		err[0] = '\0';
		ok(sacct_time_parse(bad[i], NOW, &t, err, sizeof(err)) == -1 &&
		   t == 12345 && err[0] != '\0',
		   "'%.20s' is refused: %s", bad[i], err);
	}
	ok(sacct_time_parse(NULL, NOW, &t, err, sizeof(err)) == -1, "NULL is refused");

	/* Local time: midnight in a zone 1 hour east of UTC. */
	setenv("TZ", "UTC-1", 1);
	tzset();
	ok(sacct_time_parse("today", NOW, &t, err, sizeof(err)) == 0 &&
	   t == MIDNIGHT - 3600, "today is local midnight (UTC+1)");
	ok(sacct_time_parse("2025-03-01", NOW, &t, err, sizeof(err)) == 0 &&
	   t == 1740787200 - 3600, "a date is local (UTC+1)");
	setenv("TZ", "UTC", 1);
	tzset();

	/* sacct's DEFAULT TIME WINDOW. */
	{
		struct sacct_window_in in = { 0 };

		sacct_time_window(&in, NOW, &s, &e);
		is_int(s, MIDNIGHT, "no -j, no -s: start at midnight");
		is_int(e, NOW, "no -j, no -s: end now");
		in.have_jobs = true;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(s, 0, "-j: start at the epoch");
		is_int(e, NOW, "-j: end now");
		in.have_jobs = false;
		in.have_states = true;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(s, NOW, "-s: start now");
		is_int(e, NOW, "-s: end now");
		in.have_start = true;
		in.start = NOW - DAY;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(s, NOW - DAY, "-s -S: start as given");
		is_int(e, NOW - DAY, "-s -S: end at the start");
		in.have_jobs = true;
		in.have_start = false;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(s, 0, "-j -s: start at the epoch");
		is_int(e, NOW, "-j -s: end now");
		in.have_start = true;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(e, NOW - DAY, "-j -s -S: end at the start");
		in.have_end = true;
		in.end = NOW - 10;
		sacct_time_window(&in, NOW, &s, &e);
		is_int(e, NOW - 10, "-E always wins");
	}
	return done_testing();
}
