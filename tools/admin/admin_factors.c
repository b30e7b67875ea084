/* admin_factors.c - the emission-factor CSV of `ceems-admin factors
 * load` (format in admin_factors.h and ceems-admin(8)): a strict parser,
 * so that a typo in a file of hundreds of rows is named by its line
 * instead of turning into wrong emissions. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_factors.h"

#define MAX_FIELDS 8
#define FIELD_MAX 256

enum column { COL_ZONE, COL_YEAR, COL_FROM, COL_TO, COL_G, COL_SOURCE, NCOLS };

static const char *const column_names[NCOLS] = {
	"zone", "year", "valid_from", "valid_to", "g_per_kwh", "source",
};

struct fields {
	size_t count;
	char text[MAX_FIELDS][FIELD_MAX];
};

int
admin_factors_line_fail(char *err, size_t err_size, unsigned int line,
		const char *fmt, ...)
{
	va_list ap;
	int n = line > 0 ? snprintf(err, err_size, "line %u: ", line) : 0;

	if (n < 0 || (size_t)n >= err_size)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* Split one line (without its end) into fields.  0, or -1 with ERR. */
static int
split(const char *p, size_t len, struct fields *f, unsigned int line,
      char *err, size_t err_size)
{
	size_t i = 0;

	f->count = 0;
	for (;;) {
		size_t n = 0;
		char *out;

		if (f->count == MAX_FIELDS)
			return admin_factors_line_fail(err, err_size, line, "more than %d fields", MAX_FIELDS);
		out = f->text[f->count++];
		if (i < len && p[i] == '"') {
			for (i++;; i++) {
				if (i >= len)
					return admin_factors_line_fail(err, err_size, line, "unterminated quote");
				if (p[i] == '"') {
					if (i + 1 < len && p[i + 1] == '"')
						i++;
					else
						break;
				}
				if (n + 1 >= FIELD_MAX)
					return admin_factors_line_fail(err, err_size, line, "field longer than %d bytes",
							       FIELD_MAX - 1);
				out[n++] = p[i];
			}
			i++;	/* the closing quote */
			if (i < len && p[i] != ',')
				return admin_factors_line_fail(err, err_size, line, "text after a closing quote");
		} else {
			for (; i < len && p[i] != ','; i++) {
				if (p[i] == '"')
					return admin_factors_line_fail(err, err_size, line, "a quote inside an unquoted field");
				if (n + 1 >= FIELD_MAX)
					return admin_factors_line_fail(err, err_size, line, "field longer than %d bytes",
							       FIELD_MAX - 1);
				out[n++] = p[i];
			}
		}
		/* Surrounding blanks are not part of a field. */
		while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
			n--;
		out[n] = '\0';
		if (out[0] == ' ' || out[0] == '\t') {
			size_t k = strspn(out, " \t");

			memmove(out, out + k, n - k + 1);
		}
		for (size_t k = 0; out[k] != '\0'; k++)
			if ((unsigned char)out[k] < 0x20)
				return admin_factors_line_fail(err, err_size, line, "control character in a field");
		if (i >= len)
			return 0;
		i++;	/* the comma */
	}
}

static int
parse_header(const struct fields *f, int map[NCOLS], unsigned int line,
	     char *err, size_t err_size)
{
	for (int c = 0; c < NCOLS; c++)
		map[c] = -1;
	for (size_t i = 0; i < f->count; i++) {
		int c;

		for (c = 0; c < NCOLS; c++)
			if (strcmp(f->text[i], column_names[c]) == 0)
				break;
		if (c == NCOLS)
			return admin_factors_line_fail(err, err_size, line,
					       "unknown column \"%s\" (zone, year, valid_from, valid_to, g_per_kwh, source)",
					       f->text[i]);
		if (map[c] >= 0)
			return admin_factors_line_fail(err, err_size, line, "column %s twice", column_names[c]);
		map[c] = (int)i;
	}
	if (map[COL_ZONE] < 0 || map[COL_G] < 0 || map[COL_SOURCE] < 0)
		return admin_factors_line_fail(err, err_size, line, "the header must name zone, g_per_kwh and source");
	if ((map[COL_YEAR] >= 0) == (map[COL_FROM] >= 0))
		return admin_factors_line_fail(err, err_size, line, "the header must name either year or valid_from");
	if (map[COL_TO] >= 0 && map[COL_FROM] < 0)
		return admin_factors_line_fail(err, err_size, line, "valid_to needs valid_from");
	return 0;
}

static int
valid_zone(const char *z)
{
	size_t n = strlen(z);

	if (n < 2 || n >= ADMIN_FACTOR_ZONE_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((z[i] >= 'A' && z[i] <= 'Z') || (z[i] >= '0' && z[i] <= '9') ||
		      z[i] == '_' || z[i] == '-'))
			return 0;
	return 1;
}

/* A time the database will parse: digits and the punctuation of ISO 8601
 * only, so nothing odd reaches it. */
static int
valid_time(const char *t)
{
	size_t n = strlen(t);

	if (n < 4 || n >= ADMIN_FACTOR_TIME_MAX || t[0] < '0' || t[0] > '9')
		return 0;
	return strspn(t, "0123456789-:T .+Z") == n;
}

static int
parse_row(const struct fields *f, const int map[NCOLS], struct admin_factor *r,
	  unsigned int line, char *err, size_t err_size)
{
	const char *zone, *g, *source;
	char *end;

	memset(r, 0, sizeof(*r));
	r->line = line;
	for (int c = 0; c < NCOLS; c++)
		if (map[c] >= (int)f->count)
			return admin_factors_line_fail(err, err_size, line, "%zu fields, the header has more",
					       f->count);
	zone = f->text[map[COL_ZONE]];
	g = f->text[map[COL_G]];
	source = f->text[map[COL_SOURCE]];
	if (!valid_zone(zone))
		return admin_factors_line_fail(err, err_size, line,
				       "zone \"%s\" is not 2 to 16 of A-Z, 0-9, _ and -", zone);
	snprintf(r->zone, sizeof(r->zone), "%s", zone);
	errno = 0;
	r->g_per_kwh = strtod(g, &end);
	if (errno != 0 || end == g || *end != '\0' || !isfinite(r->g_per_kwh) ||
	    r->g_per_kwh < 0 || r->g_per_kwh >= 10000)
		return admin_factors_line_fail(err, err_size, line,
				       "g_per_kwh \"%s\" is not a number from 0 to 10000", g);
	if (source[0] == '\0' || strlen(source) >= sizeof(r->source))
		return admin_factors_line_fail(err, err_size, line, "source must be 1 to %zu bytes",
				       sizeof(r->source) - 1);
	snprintf(r->source, sizeof(r->source), "%s", source);
	if (map[COL_YEAR] >= 0) {
		const char *y = f->text[map[COL_YEAR]];
		long year;

		errno = 0;
		year = strtol(y, &end, 10);
		if (errno != 0 || end == y || *end != '\0' || year < 1900 || year > 2199)
			return admin_factors_line_fail(err, err_size, line, "year \"%s\" is not from 1900 to 2199", y);
		r->year = (int)year;
		return 0;
	}
	if (!valid_time(f->text[map[COL_FROM]]))
		return admin_factors_line_fail(err, err_size, line, "valid_from \"%s\" is not an ISO 8601 time",
				       f->text[map[COL_FROM]]);
	snprintf(r->valid_from, sizeof(r->valid_from), "%s", f->text[map[COL_FROM]]);
	if (map[COL_TO] >= 0 && f->text[map[COL_TO]][0] != '\0') {
		if (!valid_time(f->text[map[COL_TO]]))
			return admin_factors_line_fail(err, err_size, line, "valid_to \"%s\" is not an ISO 8601 time",
					       f->text[map[COL_TO]]);
		snprintf(r->valid_to, sizeof(r->valid_to), "%s", f->text[map[COL_TO]]);
	}
	return 0;
}

bool
admin_factors_next_line(const char *text, size_t len, size_t *pos,
		const char **line, size_t *line_len)
{
	const char *p = text + *pos;
	const char *nl;
	size_t l;

	if (*pos >= len)
		return false;
	nl = memchr(p, '\n', len - *pos);
	l = nl != NULL ? (size_t)(nl - p) : len - *pos;
	*pos += l + (nl != NULL);
	if (l > 0 && p[l - 1] == '\r')
		l--;
	*line = p;
	*line_len = l;
	return true;
}

int
admin_factors_parse(const char *text, size_t len, struct admin_factor **rows,
		    size_t *nrows, char *err, size_t err_size)
{
	struct fields *f = malloc(sizeof(*f));
	struct admin_factor *out = NULL;
	size_t n = 0, cap = 0, pos = 0, l;
	const char *p;
	unsigned int line = 0;
	int map[NCOLS];
	int have_header = 0;

	*rows = NULL;
	*nrows = 0;
	if (f == NULL)
		return admin_factors_line_fail(err, err_size, 0, "out of memory");
	while (admin_factors_next_line(text, len, &pos, &p, &l)) {
		line++;
		if (memchr(p, '\0', l) != NULL) {
			admin_factors_line_fail(err, err_size, line, "NUL byte");
			goto bad;
		}
		if (l == 0 || p[0] == '#')
			continue;
		if (split(p, l, f, line, err, err_size) < 0)
			goto bad;
		if (!have_header) {
			if (parse_header(f, map, line, err, err_size) < 0)
				goto bad;
			have_header = 1;
			continue;
		}
		if (n == ADMIN_FACTORS_MAX) {
			admin_factors_line_fail(err, err_size, line, "more than %d factors", ADMIN_FACTORS_MAX);
			goto bad;
		}
		if (n == cap) {
			size_t ncap = cap == 0 ? 64 : cap * 2;
			struct admin_factor *grown = realloc(out, ncap * sizeof(*out));

			if (grown == NULL) {
				admin_factors_line_fail(err, err_size, line, "out of memory");
				goto bad;
			}
			out = grown;
			cap = ncap;
		}
		if (parse_row(f, map, &out[n], line, err, err_size) < 0)
			goto bad;
		n++;
	}
	free(f);
	if (!have_header) {
		free(out);
		return admin_factors_line_fail(err, err_size, line, "no header line (zone,year,g_per_kwh,source)");
	}
	*rows = out;
	*nrows = n;
	return 0;
bad:
	free(f);
	free(out);
	return -1;
}
