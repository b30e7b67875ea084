/* emissions.c - the shipped carbon-intensity table (parse, load, look
 * up) and the energy-to-emissions conversion.  The table is data an admin
 * may replace, so the parser is strict about each line and skips, counts
 * and reports the bad ones instead of trusting them. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/emissions.h"
#include "base/fileio.h"
#include "base/log.h"

/* The shipped table is about 200 KB; anything much larger is not it. */
#define TABLE_MAX_BYTES (2u << 20)

/* Figures beyond these are no real grid or site: a typo, not a fact. */
#define MAX_G_PER_KWH CEEMS_EMISSIONS_MAX_G_PER_KWH
#define MAX_PUE CEEMS_EMISSIONS_MAX_PUE

#define TABLE_FIELDS 5
#define FIELD_MAX 40

static bool
is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool
all_upper(const char *s, size_t n)
{
	size_t i;

	if (strlen(s) != n)
		return false;
	for (i = 0; i < n; i++)
		if (!is_upper(s[i]))
			return false;
	return true;
}

/* A plain decimal "123" or "123.456" (no sign, exponent, nan or inf),
 * parsed without strtod so the caller's locale cannot change it.  Up to
 * 15 significant digits: the mantissa is then exact in a double, and one
 * division by an exact power of ten rounds correctly. */
int
ceems_emissions_parse_decimal(const char *s, double *out)
{
	uint64_t mantissa = 0;
	unsigned int digits = 0, frac_digits = 0;
	bool in_frac = false;
	double scale = 1;

	if (*s == '\0' || *s == '.')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (*s == '.') {
			if (in_frac)
				return -EINVAL;
			in_frac = true;
			continue;
		}
		if (!is_digit(*s) || ++digits > 15)
			return -EINVAL;
		mantissa = mantissa * 10 + (uint64_t)(*s - '0');
		if (in_frac)
			frac_digits++;
	}
	if (in_frac && frac_digits == 0)
		return -EINVAL;
	while (frac_digits-- > 0)
		scale *= 10;
	*out = (double)mantissa / scale;
	return 0;
}

static int
parse_year(const char *s, int *out)
{
	int year = 0;
	size_t i;

	if (strlen(s) != 4)
		return -EINVAL;
	for (i = 0; i < 4; i++) {
		if (!is_digit(s[i]))
			return -EINVAL;
		year = year * 10 + (s[i] - '0');
	}
	if (year < 1900)
		return -EINVAL;
	*out = year;
	return 0;
}

static bool
valid_source(const char *s)
{
	size_t n = strlen(s), i;

	if (n == 0 || n >= CEEMS_EMISSIONS_SOURCE_MAX)
		return false;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!is_upper(c) && !(c >= 'a' && c <= 'z') && !is_digit(c) &&
		    c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

/* Split LINE (LEN bytes) on tabs and spaces into at most TABLE_FIELDS
 * fields of FIELD_MAX - 1 bytes.  Returns the number of fields, or -1 for
 * too many or too long. */
static int
split_fields(const char *line, size_t len, char fields[][FIELD_MAX])
{
	size_t i = 0;
	int n = 0;

	for (;;) {
		size_t start, flen;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			return n;
		if (n == TABLE_FIELDS)
			return -1;
		start = i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		flen = i - start;
		if (flen >= FIELD_MAX)
			return -1;
		memcpy(fields[n], line + start, flen);
		fields[n][flen] = '\0';
		n++;
	}
}

static int
parse_row(const char *line, size_t len, struct ceems_emissions_row *row)
{
	char f[TABLE_FIELDS][FIELD_MAX];
	double g;

	if (split_fields(line, len, f) != TABLE_FIELDS)
		return -EINVAL;
	if (strcmp(f[0], "WORLD") != 0 && !all_upper(f[0], 2))
		return -EINVAL;
	if (strcmp(f[1], "-") != 0 && !all_upper(f[1], 3))
		return -EINVAL;
	if (parse_year(f[2], &row->year) < 0)
		return -EINVAL;
	if (ceems_emissions_parse_decimal(f[3], &g) < 0 || g > MAX_G_PER_KWH)
		return -EINVAL;
	if (!valid_source(f[4]))
		return -EINVAL;
	row->g_per_kwh = g;
	strcpy(row->zone, f[0]);	/* lengths checked above */
	strcpy(row->alpha3, strcmp(f[1], "-") == 0 ? "" : f[1]);
	strcpy(row->source, f[4]);
	return 0;
}

/* Rows sorted by zone then year; equal keys keep file order, so the
 * first of two duplicates is the one kept. */
static int
row_cmp(const void *a, const void *b)
{
	const struct ceems_emissions_row *x = a, *y = b;
	int c = strcmp(x->zone, y->zone);

	if (c != 0)
		return c;
	if (x->year != y->year)
		return x->year < y->year ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return 0;
}

static int
grow(struct ceems_emissions_table *t, size_t *cap)
{
	size_t want = *cap == 0 ? 256 : *cap * 2;
	struct ceems_emissions_row *rows;

	rows = realloc(t->rows, want * sizeof(*rows));
	if (rows == NULL)
		return -ENOMEM;
	t->rows = rows;
	*cap = want;
	return 0;
}

static void
note_bad(struct ceems_emissions_table *t, unsigned int line)
{
	t->nbad++;
	if (t->first_bad_line == 0 || line < t->first_bad_line)
		t->first_bad_line = line;
}

int
ceems_emissions_table_parse(const char *buf, size_t len,
			    struct ceems_emissions_table *t)
{
	size_t cap = 0, i, pos = 0, kept;
	unsigned int lineno = 0;

	if (t == NULL)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	if (buf == NULL && len > 0)
		return -EINVAL;
	while (pos < len) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl != NULL ? (size_t)(nl - line) : len - pos;
		size_t j;
		bool blank = true;

		pos += llen + (nl != NULL);
		lineno++;
		if (llen > 0 && line[llen - 1] == '\r')
			llen--;
		for (j = 0; j < llen; j++)
			if (line[j] != ' ' && line[j] != '\t')
				break;
		blank = j == llen;
		if (blank || line[j] == '#')
			continue;
		/* Grown by valid rows only: a file of garbage or of empty
		 * lines costs no memory. */
		if (t->nrows == cap && grow(t, &cap) < 0) {
			ceems_emissions_table_free(t);
			return -ENOMEM;
		}
		if (memchr(line, '\0', llen) != NULL ||
		    parse_row(line, llen, &t->rows[t->nrows]) < 0) {
			note_bad(t, lineno);
			continue;
		}
		t->rows[t->nrows].line = lineno;
		t->nrows++;
	}

	if (t->nrows == 0) {
		ceems_emissions_table_free(t);
		return -ENODATA;
	}
	qsort(t->rows, t->nrows, sizeof(*t->rows), row_cmp);
	kept = 0;
	for (i = 0; i < t->nrows; i++) {
		if (kept > 0 &&
		    strcmp(t->rows[kept - 1].zone, t->rows[i].zone) == 0 &&
		    t->rows[kept - 1].year == t->rows[i].year) {
			note_bad(t, t->rows[i].line);
			continue;
		}
		t->rows[kept++] = t->rows[i];
	}
	t->nrows = kept;
	return 0;
}

int
ceems_emissions_table_load(const char *path, struct ceems_emissions_table *t)
{
	char *buf;
	ssize_t len;
	int ret;

	if (path == NULL || t == NULL)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	buf = malloc(TABLE_MAX_BYTES + 1);
	if (buf == NULL)
		return -ENOMEM;
	len = ceems_fileio_read_text_file(path, buf, TABLE_MAX_BYTES + 1);
	if (len < 0) {
		free(buf);
		return (int)len;
	}
	ret = ceems_emissions_table_parse(buf, (size_t)len, t);
	free(buf);
	if (ret == 0 && t->nbad > 0)
		ceems_warning("carbon-intensity table %s: %zu malformed or "
			      "duplicate line(s) skipped, the first at line %u",
			      path, t->nbad, t->first_bad_line);
	return ret;
}

void
ceems_emissions_table_free(struct ceems_emissions_table *t)
{
	if (t == NULL)
		return;
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

/* ZONE as the table spells it (upper case) in OUT, or -EINVAL. */
static int
normalize_zone(const char *zone, char out[8])
{
	size_t n, i;

	if (zone == NULL)
		return -EINVAL;
	n = strlen(zone);
	if (n != 2 && n != 3 && n != 5)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		char c = zone[i];

		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		if (!is_upper(c))
			return -EINVAL;
		out[i] = c;
	}
	out[n] = '\0';
	if (n == 5 && strcmp(out, "WORLD") != 0)
		return -EINVAL;
	return 0;
}

int
ceems_emissions_lookup(const struct ceems_emissions_table *t,
		       const char *zone, int year,
		       struct ceems_emission_factor *out)
{
	const struct ceems_emissions_row *best = NULL, *earliest = NULL;
	char key[8];
	size_t i;

	if (t == NULL || out == NULL || normalize_zone(zone, key) < 0)
		return -EINVAL;
	for (i = 0; i < t->nrows; i++) {
		const struct ceems_emissions_row *r = &t->rows[i];
		bool match = strlen(key) == 3 ? strcmp(r->alpha3, key) == 0 :
		    strcmp(r->zone, key) == 0;

		if (!match)
			continue;
		if (earliest == NULL || r->year < earliest->year)
			earliest = r;
		if (r->year <= year && (best == NULL || r->year > best->year))
			best = r;
	}
	if (best == NULL)
		best = earliest;
	if (best == NULL)
		return -ENOENT;

	memset(out, 0, sizeof(*out));
	strcpy(out->source, best->source);
	strcpy(out->zone, best->zone);
	out->year = best->year;
	out->g_per_kwh = best->g_per_kwh;
	out->pue = 1;
	return 0;
}

