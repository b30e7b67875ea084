/* sacct_time.c - sacct's time forms and default time window for
 * ceems-sacct (see sacct_time.h).  Every form is parsed by hand from the
 * string, so that garbage gets a clear error and never a guess: a field
 * out of range, trailing characters or a date that does not exist
 * (February 30th) are refused. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sacct_time.h"

static int
fail(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
fail(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Exactly N digits at *P into *V; advances *P. */
static bool
digits(const char **p, int n, int *v)
{
	int i, x = 0;

	for (i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		x = x * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*v = x;
	return true;
}

/* Midnight (local) of the day of NOW plus DAYS days. */
static bool
day_start(time_t now, int days, time_t *out)
{
	struct tm tm;

	if (localtime_r(&now, &tm) == NULL)
		return false;
	tm.tm_mday += days;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	tm.tm_isdst = -1;
	*out = mktime(&tm);
	return *out != (time_t)-1;
}

/* Local time of the given fields; false when the date does not exist
 * (mktime would silently normalise February 30th to March 2nd). */
static bool
make_time(int year, int mon, int mday, int hour, int min, int sec,
	  time_t *out)
{
	struct tm tm;

	if (year < 1970 || year > 2200 || mon < 1 || mon > 12 || mday < 1 ||
	    mday > 31 || hour > 23 || min > 59 || sec > 59)
		return false;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = mon - 1;
	tm.tm_mday = mday;
	tm.tm_hour = hour;
	tm.tm_min = min;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	*out = mktime(&tm);
	return tm.tm_mday == mday && tm.tm_mon == mon - 1;
}

/* HH:MM[:SS] at *P (advanced); AMPM allows a trailing AM or PM. */
static bool
clock_time(const char **p, bool ampm, int *h, int *m, int *s)
{
	const char *q = *p;

	if (!digits(&q, 2, h) || *q++ != ':' || !digits(&q, 2, m))
		return false;
	*s = 0;
	if (*q == ':' && (q++, !digits(&q, 2, s)))
		return false;
	if (ampm && (strncasecmp(q, "am", 2) == 0 ||
		     strncasecmp(q, "pm", 2) == 0)) {
		if (*h < 1 || *h > 12)
			return false;
		if (*h == 12)
			*h = 0;
		if (tolower((unsigned char)*q) == 'p')
			*h += 12;
		q += 2;
	}
	if (*h > 23 || *m > 59 || *s > 59)
		return false;
	*p = q;
	return true;
}

/* now[{+|-}COUNT[UNIT]] */
static int
parse_now(const char *p, time_t now, time_t *out, char *err,
	  size_t err_size, const char *text)
{
	static const struct {
		const char *name;
		int64_t seconds;
	} units[] = {
		{ "seconds", 1 }, { "minutes", 60 }, { "hours", 3600 },
		{ "days", 86400 }, { "weeks", 604800 },
	};
	int64_t count = 0, unit = 1;
	int sign;
	size_t i, n;

	if (*p == '\0') {
		*out = now;
		return 0;
	}
	if (*p != '+' && *p != '-')
		return fail(err, err_size, "malformed time '%s': expected now+COUNT or now-COUNT", text);
	sign = *p++ == '-' ? -1 : 1;
	if (!isdigit((unsigned char)*p))
		return fail(err, err_size, "malformed time '%s': no count after now%c", text, sign < 0 ? '-' : '+');
	while (isdigit((unsigned char)*p)) {
		count = count * 10 + (*p++ - '0');
		if (count > 100000000)
			return fail(err, err_size, "time '%s' is out of range", text);
	}
	if (*p != '\0') {
		n = strlen(p);
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (n <= strlen(units[i].name) &&
			    strncasecmp(p, units[i].name, n) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return fail(err, err_size, "malformed time '%s': unknown unit '%s' (seconds, minutes, hours, days or weeks)", text, p);
		unit = units[i].seconds;
	}
	if (count > INT64_MAX / unit / 2)
		return fail(err, err_size, "time '%s' is out of range", text);
	*out = now + (time_t)(sign * count * unit);
	return 0;
}

int
sacct_time_parse(const char *text, time_t now, time_t *out, char *err,
		 size_t err_size)
{
	static const struct {
		const char *name;
		int day, hour;
	} words[] = {
		{ "today", 0, 0 }, { "midnight", 0, 0 }, { "yesterday", -1, 0 },
		{ "tomorrow", 1, 0 }, { "elevenses", 0, 11 }, { "noon", 0, 12 },
		{ "fika", 0, 15 }, { "teatime", 0, 16 },
	};
	struct tm tm_now;
	const char *p = text;
	int year, mon, mday, h = 0, m = 0, s = 0;
	size_t i, len;
	time_t t;

	if (text == NULL || *text == '\0')
		return fail(err, err_size, "empty time");
	len = strlen(text);
	if (len > 64)
		return fail(err, err_size, "malformed time: longer than 64 characters");
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(text, words[i].name) != 0)
			continue;
		if (!day_start(now, words[i].day, &t))
			return fail(err, err_size, "time '%s': no local time", text);
		*out = t + words[i].hour * 3600;
		return 0;
	}
	if (strncasecmp(text, "now", 3) == 0)
		return parse_now(text + 3, now, out, err, err_size, text);
	if (localtime_r(&now, &tm_now) == NULL)
		return fail(err, err_size, "time '%s': no local time", text);
	year = tm_now.tm_year + 1900;

	/* YYYY-MM-DD[THH:MM[:SS]] */
	if (len >= 10 && text[4] == '-' && text[7] == '-') {
		if (!digits(&p, 4, &year) || *p++ != '-' || !digits(&p, 2, &mon) ||
		    *p++ != '-' || !digits(&p, 2, &mday))
			return fail(err, err_size, "malformed time '%s': expected YYYY-MM-DD[THH:MM[:SS]]", text);
		if (*p == 'T' && (p++, !clock_time(&p, false, &h, &m, &s)))
			return fail(err, err_size, "malformed time '%s': expected THH:MM[:SS] after the date", text);
		if (*p != '\0')
			return fail(err, err_size, "malformed time '%s': unexpected '%s'", text, p);
		goto make;
	}
	/* HH:MM[:SS][AM|PM]: today at that time */
	if (len >= 5 && text[2] == ':') {
		if (!clock_time(&p, true, &h, &m, &s) || *p != '\0')
			return fail(err, err_size, "malformed time '%s': expected HH:MM[:SS][AM|PM]", text);
		mon = tm_now.tm_mon + 1;
		mday = tm_now.tm_mday;
		goto make;
	}
	/* MM/DD[/YY], MM.DD[.YY], MMDD[YY], each [-HH:MM[:SS]] */
	if (!digits(&p, 2, &mon))
		return fail(err, err_size, "malformed time '%s' (see TIME FORMATS in ceems-sacct(1))", text);
	if (*p == '/' || *p == '.') {
		char sep = *p++;

		if (!digits(&p, 2, &mday))
			return fail(err, err_size, "malformed time '%s': expected MM%cDD[%cYY]", text, sep, sep);
		if (*p == sep) {
			p++;
			if (!digits(&p, 2, &year))
				return fail(err, err_size, "malformed time '%s': expected a two-digit year", text);
			year += 2000;
		}
	} else {
		if (!digits(&p, 2, &mday))
			return fail(err, err_size, "malformed time '%s': expected MMDD[YY]", text);
		if (isdigit((unsigned char)*p)) {
			if (!digits(&p, 2, &year))
				return fail(err, err_size, "malformed time '%s': expected MMDDYY", text);
			year += 2000;
		}
	}
	if (*p == '-' && (p++, !clock_time(&p, false, &h, &m, &s)))
		return fail(err, err_size, "malformed time '%s': expected -HH:MM[:SS] after the date", text);
	if (*p != '\0')
		return fail(err, err_size, "malformed time '%s': unexpected '%s'", text, p);
make:
	if (!make_time(year, mon, mday, h, m, s, &t))
		return fail(err, err_size, "time '%s' is not a valid date", text);
	*out = t;
	return 0;
}

void
sacct_time_window(const struct sacct_window_in *in, time_t now,
		  time_t *start, time_t *end)
{
	time_t s, e;

	if (in->have_start)
		s = in->start;
	else if (in->have_jobs)
		s = 0;
	else if (in->have_states)
		s = now;
	else if (!day_start(now, 0, &s))
		s = now - now % 86400;
	if (in->have_end)
		e = in->end;
	else if (in->have_states)
		e = in->have_start ? s : now;
	else
		e = now;
	*start = s;
	*end = e;
}
