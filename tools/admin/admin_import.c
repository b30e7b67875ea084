/* admin_import.c - the carbon-intensity exports of grid operators and
 * carbon-data services (formats in admin_import.h and ceems-admin(8)),
 * parsed strictly into rows of ceems.emission_factors: a file is loaded
 * whole or not at all, and a bad line is named by its number.  Pure
 * functions over the file's text, so that they can be fuzzed. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admin_import.h"
#include "model/emissions.h"

#define CSV_FIELDS 64
#define CSV_FIELD_MAX 256
/* Rows longer than a day are no intensity series. */
#define MAX_STEP_S 86400

struct csv {
	size_t n;
	char f[CSV_FIELDS][CSV_FIELD_MAX];
};

/* One interval read from the file, before it becomes a row. */
struct point {
	unsigned int line;
	int64_t from, to;	/* to 0: the file's step, set later */
	double g;
};

struct points {
	struct point *p;
	size_t n, cap;
};

static const char *const format_names[] = {
	"auto", "electricitymaps", "entsoe", "rte", "ceems",
};

int
admin_import_format_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(format_names) / sizeof(*format_names); i++)
		if (strcmp(name, format_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *
admin_import_format_name(enum admin_import_format f)
{
	return format_names[f];
}

/* Split one line on SEP; double quotes as in RFC 4180; blanks around a
 * field dropped.  0, or -1 with ERR. */
static int
csv_split(const char *p, size_t len, char sep, struct csv *c,
	  unsigned int line, char *err, size_t err_size)
{
	size_t i = 0;

	c->n = 0;
	for (;;) {
		size_t n = 0;
		char *out;
		bool quoted = false;

		if (c->n == CSV_FIELDS)
			return admin_factors_line_fail(err, err_size, line, "more than %d fields", CSV_FIELDS);
		out = c->f[c->n++];
		while (i < len && p[i] == ' ')
			i++;
		for (; i < len && (quoted || p[i] != sep); i++) {
			if (p[i] == '"') {
				if (quoted && i + 1 < len && p[i + 1] == '"')
					i++;
				else {
					quoted = !quoted;
					continue;
				}
			}
			if ((unsigned char)p[i] < 0x20 && p[i] != '\t')
				return admin_factors_line_fail(err, err_size, line, "control character in a field");
			if (n + 1 >= CSV_FIELD_MAX)
				return admin_factors_line_fail(err, err_size, line, "field longer than %d bytes",
						       CSV_FIELD_MAX - 1);
			out[n++] = p[i];
		}
		if (quoted)
			return admin_factors_line_fail(err, err_size, line, "unterminated quote");
		while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
			n--;
		out[n] = '\0';
		if (i >= len)
			return 0;
		i++;	/* the separator */
	}
}

static bool
read_int(const char *s, size_t n, int *out)
{
	int v = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Calendar fields as seconds since 1970 (as if UTC), range-checked. */
static bool
civil_time(int y, int mo, int d, int h, int mi, int s, int64_t *out)
{
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	struct tm tm;
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 ||
	    d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) || h > 23 ||
	    mi > 59 || s > 59)
		return false;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = s;
	*out = (int64_t)timegm(&tm);
	return true;
}

/* "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DDTHH:MM:SSZ" or with ".sss" before the
 * Z; UTC. */
static bool
parse_iso(const char *s, int64_t *out)
{
	int y, mo, d, h, mi, sec;
	size_t n = strlen(s);

	if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
	    s[13] != ':' || s[16] != ':' || !read_int(s, 4, &y) ||
	    !read_int(s + 5, 2, &mo) || !read_int(s + 8, 2, &d) ||
	    !read_int(s + 11, 2, &h) || !read_int(s + 14, 2, &mi) ||
	    !read_int(s + 17, 2, &sec))
		return false;
	if (n > 19) {
		size_t i = 19;
		int ignored;

		if (s[10] != 'T')
			return false;
		if (s[i] == '.') {
			i++;
			while (i < n && s[i] >= '0' && s[i] <= '9' && i < 26)
				i++;
		}
		if (i + 1 != n || s[i] != 'Z' || !read_int("0", 1, &ignored))
			return false;
	}
	return civil_time(y, mo, d, h, mi, sec, out);
}

/* "DD.MM.YYYY HH:MM" (ENTSO-E), local or UTC: as if UTC. */
static bool
parse_dmy_hm(const char *s, int64_t *out)
{
	int y, mo, d, h, mi;

	if (strlen(s) != 16 || s[2] != '.' || s[5] != '.' || s[10] != ' ' ||
	    s[13] != ':' || !read_int(s, 2, &d) || !read_int(s + 3, 2, &mo) ||
	    !read_int(s + 6, 4, &y) || !read_int(s + 11, 2, &h) ||
	    !read_int(s + 14, 2, &mi))
		return false;
	return civil_time(y, mo, d, h, mi, 0, out);
}

/* The last Sunday of March or October (31 days) of Y, 01:00 UTC. */
static int64_t
eu_change(int y, int mo)
{
	int64_t t;
	time_t tt;
	struct tm tm;

	civil_time(y, mo, 31, 1, 0, 0, &t);
	tt = (time_t)t;
	gmtime_r(&tt, &tm);
	return t - (int64_t)tm.tm_wday * 86400;
}

static bool
eu_summer(int64_t utc)
{
	time_t tt = (time_t)utc;
	struct tm tm;

	gmtime_r(&tt, &tm);
	return utc >= eu_change(tm.tm_year + 1900, 3) &&
	    utc < eu_change(tm.tm_year + 1900, 10);
}

/* Central European local time LOCAL (as if UTC) in UTC, and its offset.
 * The October hour that occurs twice is summer time unless that would
 * not come after PREV (the previous row's start, or INT64_MIN).  False
 * for a time that does not exist (the March hour skipped). */
static bool
cet_to_utc(int64_t local, int64_t prev, int64_t *utc, int64_t *offset)
{
	int64_t cest = local - 7200, cet = local - 3600;
	bool cest_ok = eu_summer(cest), cet_ok = !eu_summer(cet);

	if (cest_ok && (!cet_ok || cest > prev)) {
		*utc = cest;
		*offset = 7200;
		return true;
	}
	if (cet_ok) {
		*utc = cet;
		*offset = 3600;
		return true;
	}
	return false;
}

/* A value: 1 for none ("", "n/e", "N/A", "-"), 0 with *G, -1 for bad. */
static int
parse_value(const char *s, double *g)
{
	if (s[0] == '\0' || strcmp(s, "n/e") == 0 || strcmp(s, "N/A") == 0 ||
	    strcmp(s, "-") == 0)
		return 1;
	if (ceems_emissions_parse_decimal(s, g) < 0 || *g >= 10000)
		return -1;
	return 0;
}

static int
add_point(struct points *ps, unsigned int line, int64_t from, int64_t to,
	  double g)
{
	if (ps->n == 100000)
		return -1;
	if (ps->n == ps->cap) {
		size_t cap = ps->cap == 0 ? 256 : ps->cap * 2;
		struct point *p = realloc(ps->p, cap * sizeof(*p));

		if (p == NULL)
			return -1;
		ps->p = p;
		ps->cap = cap;
	}
	ps->p[ps->n++] = (struct point){ line, from, to, g };
	return 0;
}

static int
find_column(const struct csv *h, const char *a, const char *b)
{
	int found = -1;

	for (size_t i = 0; i < h->n; i++)
		if (strstr(h->f[i], a) != NULL && (b == NULL || strstr(h->f[i], b) != NULL)) {
			if (found >= 0)
				return -2;
			found = (int)i;
		}
	return found;
}


struct import {
	enum admin_import_format format;
	char sep;
	int col_time, col_value, col_hour;	/* -1: none */
	bool local;			/* Central European time */
	int64_t prev;			/* the previous row's start */
	struct points pts;
};

static int
header_electricitymaps(struct import *im, const struct csv *h,
		       unsigned int line, char *err, size_t err_size)
{
	im->col_time = find_column(h, "Datetime (UTC)", NULL);
	im->col_value = find_column(h, "Carbon Intensity", "(Life cycle)");
	if (im->col_time < 0 || im->col_value < 0)
		return admin_factors_line_fail(err, err_size, line,
				       "an Electricity Maps export has one \"Datetime (UTC)\" and one \"Carbon Intensity gCO2eq/kWh (Life cycle)\" column");
	return 0;
}

static int
header_entsoe(struct import *im, const struct csv *h, unsigned int line,
	      char *err, size_t err_size)
{
	im->col_time = find_column(h, "MTU", NULL);
	if (im->col_time < 0)
		return admin_factors_line_fail(err, err_size, line, "no single MTU column");
	if (strstr(h->f[im->col_time], "(UTC)") != NULL)
		im->local = false;
	else if (strstr(h->f[im->col_time], "(CET/CEST)") != NULL)
		im->local = true;
	else
		return admin_factors_line_fail(err, err_size, line,
				       "the MTU column must say its time zone: \"MTU (UTC)\" or \"MTU (CET/CEST)\"");
	if (h->n == 2)
		im->col_value = 1 - im->col_time;
	else
		im->col_value = find_column(h, "CO2", NULL);
	if (im->col_value < 0)
		return admin_factors_line_fail(err, err_size, line,
				       "one value column besides MTU, or one whose title names CO2");
	return 0;
}

static int
header_rte(struct import *im, const struct csv *h, unsigned int line,
	   char *err, size_t err_size)
{
	im->col_time = find_column(h, "Date", NULL);
	im->col_hour = find_column(h, "Heures", NULL);
	im->col_value = find_column(h, "Taux de CO2", NULL);
	if (im->col_value == -1)
		im->col_value = find_column(h, "Taux de Co2", NULL);
	im->local = true;
	if (im->col_time < 0 || im->col_hour < 0 || im->col_value < 0)
		return admin_factors_line_fail(err, err_size, line,
				       "an eco2mix export has one Date, one Heures and one \"Taux de CO2 (g/kWh)\" column");
	return 0;
}

/* A date "YYYY-MM-DD" or "DD/MM/YYYY" and a time "HH:MM", as if UTC. */
static bool
parse_rte_time(const char *date, const char *hour, int64_t *out)
{
	int y, mo, d, h, mi;

	if (strlen(hour) != 5 || hour[2] != ':' || !read_int(hour, 2, &h) ||
	    !read_int(hour + 3, 2, &mi))
		return false;
	if (strlen(date) != 10)
		return false;
	if (date[4] == '-' && date[7] == '-') {
		if (!read_int(date, 4, &y) || !read_int(date + 5, 2, &mo) ||
		    !read_int(date + 8, 2, &d))
			return false;
	} else if (date[2] == '/' && date[5] == '/') {
		if (!read_int(date, 2, &d) || !read_int(date + 3, 2, &mo) ||
		    !read_int(date + 6, 4, &y))
			return false;
	} else {
		return false;
	}
	return civil_time(y, mo, d, h, mi, 0, out);
}

/* The interval of one data line: [*FROM, *TO), *TO 0 for the step. */
static int
row_times(struct import *im, const struct csv *c, unsigned int line,
	  int64_t *from, int64_t *to, char *err, size_t err_size)
{
	const char *t = c->f[im->col_time];
	int64_t local, offset = 0;

	*to = 0;
	if (im->format == ADMIN_IMPORT_ELECTRICITYMAPS) {
		if (!parse_iso(t, from))
			return admin_factors_line_fail(err, err_size, line,
					       "Datetime (UTC) \"%s\" is not YYYY-MM-DD HH:MM:SS", t);
		return 0;
	}
	if (im->format == ADMIN_IMPORT_RTE) {
		if (!parse_rte_time(t, c->f[im->col_hour], &local))
			return admin_factors_line_fail(err, err_size, line,
					       "Date \"%s\" and Heures \"%s\" are not YYYY-MM-DD (or DD/MM/YYYY) and HH:MM",
					       t, c->f[im->col_hour]);
		if (!cet_to_utc(local, im->prev, from, &offset))
			return admin_factors_line_fail(err, err_size, line,
					       "%s %s does not exist in Europe/Paris (the hour skipped in March)",
					       t, c->f[im->col_hour]);
		return 0;
	}
	/* ENTSO-E: "DD.MM.YYYY HH:MM - DD.MM.YYYY HH:MM". */
	if (strlen(t) != 35 || strncmp(t + 16, " - ", 3) != 0) {
		return admin_factors_line_fail(err, err_size, line,
				       "MTU \"%s\" is not \"DD.MM.YYYY HH:MM - DD.MM.YYYY HH:MM\"", t);
	}
	char start[17], end[17];

	memcpy(start, t, 16);
	start[16] = '\0';
	memcpy(end, t + 19, 16);
	end[16] = '\0';
	if (!parse_dmy_hm(start, &local) || !parse_dmy_hm(end, to))
		return admin_factors_line_fail(err, err_size, line, "MTU \"%s\": no such date or time", t);
	*from = local;
	if (im->local && !cet_to_utc(local, im->prev, from, &offset))
		return admin_factors_line_fail(err, err_size, line,
				       "MTU \"%s\" starts at a time that does not exist in CET/CEST", t);
	/* The end at the start's offset: the end of the last summer hour
	 * in October is the instant the clocks go back. */
	*to -= offset;
	if (*to <= *from || *to - *from > MAX_STEP_S)
		return admin_factors_line_fail(err, err_size, line,
				       "MTU \"%s\" must end after its start, within a day", t);
	return 0;
}

static int
data_line(struct import *im, const struct csv *c, unsigned int line,
	  char *err, size_t err_size)
{
	int64_t from, to;
	double g = 0;
	int v;

	if ((size_t)im->col_time >= c->n || (size_t)im->col_value >= c->n ||
	    (im->col_hour >= 0 && (size_t)im->col_hour >= c->n))
		return admin_factors_line_fail(err, err_size, line, "fewer fields than the header");
	v = parse_value(c->f[im->col_value], &g);
	if (v < 0)
		return admin_factors_line_fail(err, err_size, line,
				       "intensity \"%s\" is not a plain number from 0 to 10000 g/kWh",
				       c->f[im->col_value]);
	if (row_times(im, c, line, &from, &to, err, err_size) < 0)
		return -1;
	if (im->pts.n > 0 || im->prev != INT64_MIN) {
		if (from <= im->prev)
			return admin_factors_line_fail(err, err_size, line,
					       "not after the previous row (rows must be in time order, each once)");
	}
	im->prev = from;
	if (v == 1)
		return 0;
	if (add_point(&im->pts, line, from, to, g) < 0)
		return admin_factors_line_fail(err, err_size, line, "too many rows or out of memory");
	return 0;
}

static enum admin_import_format
detect(const char *line, size_t len)
{
	char head[512];
	size_t n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;

	memcpy(head, line, n);
	head[n] = '\0';
	if (strstr(head, "Datetime (UTC)") != NULL)
		return ADMIN_IMPORT_ELECTRICITYMAPS;
	if (strstr(head, "MTU") != NULL)
		return ADMIN_IMPORT_ENTSOE;
	if (strchr(head, ';') != NULL && strstr(head, "Heures") != NULL)
		return ADMIN_IMPORT_RTE;
	return ADMIN_IMPORT_CEEMS;
}

static int
header_line(struct import *im, const struct csv *h, unsigned int line,
	    char *err, size_t err_size)
{
	switch (im->format) {
	case ADMIN_IMPORT_ELECTRICITYMAPS:
		return header_electricitymaps(im, h, line, err, err_size);
	case ADMIN_IMPORT_ENTSOE:
		return header_entsoe(im, h, line, err, err_size);
	default:
		return header_rte(im, h, line, err, err_size);
	}
}

/* Every line of TEXT into IM->pts. */
static int
read_lines(struct import *im, const char *text, size_t len, char *err,
	   size_t err_size)
{
	struct csv *c = malloc(sizeof(*c));
	size_t pos = 0, l;
	const char *p;
	unsigned int line = 0;
	bool have_header = false;
	int ret = 0;

	if (c == NULL)
		return admin_factors_line_fail(err, err_size, 0, "out of memory");
	while (ret == 0 && admin_factors_next_line(text, len, &pos, &p, &l)) {
		line++;
		if (memchr(p, '\0', l) != NULL)
			ret = admin_factors_line_fail(err, err_size, line, "NUL byte");
		else if (l == 0 || p[0] == '#')
			continue;
		else if (csv_split(p, l, im->sep, c, line, err, err_size) < 0)
			ret = -1;
		else if (!have_header)
			ret = header_line(im, c, line, err, err_size);
		else
			ret = data_line(im, c, line, err, err_size);
		have_header = true;
	}
	free(c);
	if (ret == 0 && im->pts.n == 0)
		ret = admin_factors_line_fail(err, err_size, line, "no intensity in the file");
	return ret;
}

/* The rows without an end last the file's step: the shortest gap
 * between two of them.  Then no two intervals may overlap. */
static int
close_intervals(struct points *ps, char *err, size_t err_size)
{
	int64_t step = 0;

	for (size_t i = 1; i < ps->n; i++) {
		int64_t d = ps->p[i].from - ps->p[i - 1].from;

		if (ps->p[i].to == 0 && (step == 0 || d < step))
			step = d;
	}
	if (step == 0)
		step = 3600;	/* one row: an hour, the usual series */
	if (step > MAX_STEP_S)
		return admin_factors_line_fail(err, err_size, ps->p[1].line,
				       "rows more than a day apart are no intensity series");
	for (size_t i = 0; i < ps->n; i++) {
		if (ps->p[i].to == 0)
			ps->p[i].to = ps->p[i].from + step;
		if (i > 0 && ps->p[i].from < ps->p[i - 1].to)
			return admin_factors_line_fail(err, err_size, ps->p[i].line,
					       "overlaps the interval of line %u",
					       ps->p[i - 1].line);
	}
	return 0;
}

static void
iso(int64_t t, char *out, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int
to_factors(const struct points *ps, const char *zone, const char *source,
	   struct admin_factor **rows, size_t *nrows)
{
	struct admin_factor *out = calloc(ps->n, sizeof(*out));

	if (out == NULL)
		return -1;
	for (size_t i = 0; i < ps->n; i++) {
		out[i].line = ps->p[i].line;
		snprintf(out[i].zone, sizeof(out[i].zone), "%s", zone);
		iso(ps->p[i].from, out[i].valid_from, sizeof(out[i].valid_from));
		iso(ps->p[i].to, out[i].valid_to, sizeof(out[i].valid_to));
		out[i].g_per_kwh = ps->p[i].g;
		snprintf(out[i].source, sizeof(out[i].source), "%s", source);
	}
	*rows = out;
	*nrows = ps->n;
	return 0;
}

static bool
zone_ok(const char *z)
{
	size_t n = z != NULL ? strlen(z) : 0;

	if (n < 2 || n >= ADMIN_FACTOR_ZONE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((z[i] >= 'A' && z[i] <= 'Z') || (z[i] >= '0' && z[i] <= '9') ||
		      z[i] == '_' || z[i] == '-'))
			return false;
	return true;
}

/* The ceems CSV: its own parser; --zone, when given, must be the rows'. */
static int
import_ceems(const char *text, size_t len, const char *zone,
	     struct admin_factor **rows, size_t *nrows, char *err,
	     size_t err_size)
{
	if (admin_factors_parse(text, len, rows, nrows, err, err_size) < 0)
		return -1;
	for (size_t i = 0; zone != NULL && i < *nrows; i++)
		if (strcmp((*rows)[i].zone, zone) != 0) {
			admin_factors_line_fail(err, err_size, (*rows)[i].line,
					"zone %s is not --zone %s", (*rows)[i].zone, zone);
			free(*rows);
			*rows = NULL;
			*nrows = 0;
			return -1;
		}
	return 0;
}

static const char *
first_line(const char *text, size_t len, size_t *llen)
{
	size_t pos = 0;

	while (pos < len) {
		const char *p = text + pos;
		const char *nl = memchr(p, '\n', len - pos);
		size_t l = nl != NULL ? (size_t)(nl - p) : len - pos;

		pos += l + (nl != NULL);
		if (l > 0 && p[0] != '#' && p[0] != '\r') {
			*llen = l;
			return p;
		}
	}
	*llen = 0;
	return text;
}

int
admin_import_parse(const char *text, size_t len, const char *zone,
		   enum admin_import_format format,
		   enum admin_import_format *used, struct admin_factor **rows,
		   size_t *nrows, char *err, size_t err_size)
{
	static const char *const sources[] = {
		"", "electricitymaps-lifecycle", "entsoe", "rte-eco2mix", "",
	};
	struct import im = { .col_hour = -1, .prev = INT64_MIN };
	const char *head;
	size_t hlen;
	int ret;

	*rows = NULL;
	*nrows = 0;
	if (format == ADMIN_IMPORT_AUTO) {
		head = first_line(text, len, &hlen);
		format = detect(head, hlen);
	}
	*used = format;
	if (zone != NULL && !zone_ok(zone))
		return admin_factors_line_fail(err, err_size, 0,
				       "--zone %s: 2 to 16 of A-Z 0-9 _ - (the agent's zone, as in ceems.conf)", zone);
	if (format == ADMIN_IMPORT_CEEMS)
		return import_ceems(text, len, zone, rows, nrows, err, err_size);
	if (zone == NULL)
		return admin_factors_line_fail(err, err_size, 0, "this format needs --zone");
	im.format = format;
	im.sep = format == ADMIN_IMPORT_RTE ? ';' : ',';
	ret = read_lines(&im, text, len, err, err_size);
	if (ret == 0)
		ret = close_intervals(&im.pts, err, err_size);
	if (ret == 0 && to_factors(&im.pts, zone, sources[format], rows, nrows) < 0)
		ret = admin_factors_line_fail(err, err_size, 0, "out of memory");
	free(im.pts.p);
	return ret;
}
