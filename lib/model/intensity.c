/* intensity.c - the node's carbon-intensity cache (intensity.h): parse
 * it strictly (any byte string may be in it: a bad file is refused whole,
 * with the line named), write it atomically, find the row in force. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "model/intensity.h"

#define MAGIC "ceems-intensity"
#define FORMAT_VERSION 1
#define LINE_MAX_BYTES 128

static int
fail(char *err, size_t err_size, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (err == NULL || err_size == 0)
		return -EINVAL;
	if (line > 0)
		n = snprintf(err, err_size, "line %u: ", line);
	if (n < 0 || (size_t)n >= err_size)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

bool
ceems_intensity_source_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= CEEMS_INTENSITY_SOURCE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') &&
		    !(c >= '0' && c <= '9') && c != '-' && c != '_' && c != '.')
			return false;
	}
	return true;
}

bool
ceems_intensity_zone_valid(const char *z)
{
	size_t n = strlen(z);

	if (strcmp(z, "WORLD") == 0)
		return true;
	if (n != 2 && n != 3)
		return false;
	for (size_t i = 0; i < n; i++)
		if (z[i] < 'A' || z[i] > 'Z')
			return false;
	return true;
}

/* Unix seconds: digits only, 0 to CEEMS_INTENSITY_MAX_TIME. */
static int
parse_time(const char *s, int64_t *out)
{
	int64_t v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 12)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	if (v > CEEMS_INTENSITY_MAX_TIME)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Split LINE on single spaces into at most 3 words.  Returns the count,
 * or -1 for more words or a tab or double space. */
static int
split_words(char *line, char *words[3])
{
	int n = 0;
	char *p = line;

	for (;;) {
		char *sp = strchr(p, ' ');

		if (n == 3 || *p == '\0')
			return -1;
		words[n++] = p;
		if (sp == NULL)
			return strchr(line, '\t') != NULL ? -1 : n;
		*sp = '\0';
		p = sp + 1;
	}
}

static int
grow(struct ceems_intensity_series *s, size_t *cap)
{
	size_t want = *cap == 0 ? 64 : *cap * 2;
	struct ceems_intensity_row *rows;

	rows = realloc(s->rows, want * sizeof(*rows));
	if (rows == NULL)
		return -ENOMEM;
	s->rows = rows;
	*cap = want;
	return 0;
}

static int
parse_row(struct ceems_intensity_series *s, char *w[3], unsigned int lineno,
	  char *err, size_t err_size)
{
	struct ceems_intensity_row r;

	if (parse_time(w[0], &r.valid_from) < 0 ||
	    parse_time(w[1], &r.valid_to) < 0)
		return fail(err, err_size, lineno,
			    "valid_from and valid_to must be Unix seconds");
	if (r.valid_to <= r.valid_from)
		return fail(err, err_size, lineno,
			    "valid_to must be after valid_from");
	if (ceems_emissions_parse_decimal(w[2], &r.g_per_kwh) < 0 ||
	    r.g_per_kwh > CEEMS_EMISSIONS_MAX_G_PER_KWH)
		return fail(err, err_size, lineno,
			    "g_per_kwh must be a plain decimal from 0 to 10000");
	if (s->nrows > 0 && r.valid_from < s->rows[s->nrows - 1].valid_to)
		return fail(err, err_size, lineno,
			    "rows must be sorted by valid_from and not overlap");
	s->rows[s->nrows++] = r;
	return 0;
}

/* One line of the file (NUL-terminated, no newline). */
static int
parse_line(struct ceems_intensity_series *s, char *line, unsigned int lineno,
	   size_t *cap, char *err, size_t err_size)
{
	char *w[3];
	int n;

	if (lineno == 1) {
		if (strcmp(line, MAGIC " 1") != 0)
			return fail(err, err_size, lineno,
				    "not a ceems intensity file (the first line must be \"" MAGIC " %d\")",
				    FORMAT_VERSION);
		return 0;
	}
	if (line[0] == '\0' || line[0] == '#')
		return 0;
	n = split_words(line, w);
	if (n == 2 && strcmp(w[0], "zone") == 0 && s->zone[0] == '\0' &&
	    s->nrows == 0) {
		if (!ceems_intensity_zone_valid(w[1]))
			return fail(err, err_size, lineno,
				    "zone must be an upper-case ISO 3166-1 code or WORLD");
		strcpy(s->zone, w[1]);	/* at most 5 bytes, checked */
		return 0;
	}
	if (n == 2 && strcmp(w[0], "source") == 0 && s->source[0] == '\0' &&
	    s->nrows == 0) {
		if (!ceems_intensity_source_valid(w[1]))
			return fail(err, err_size, lineno,
				    "source must be 1 to %zu characters of A-Z a-z 0-9 . _ -",
				    CEEMS_INTENSITY_SOURCE_MAX - 1);
		strcpy(s->source, w[1]);	/* length checked */
		return 0;
	}
	if (n != 3)
		return fail(err, err_size, lineno,
			    "expected \"valid_from valid_to g_per_kwh\" (or one zone and one source line before the rows)");
	if (s->zone[0] == '\0' || s->source[0] == '\0')
		return fail(err, err_size, lineno,
			    "the zone and source lines must come before the rows");
	if (s->nrows == *cap && grow(s, cap) < 0)
		return -ENOMEM;
	return parse_row(s, w, lineno, err, err_size);
}

int
ceems_intensity_parse(const char *buf, size_t len,
		      struct ceems_intensity_series *s, char *err,
		      size_t err_size)
{
	size_t pos = 0, cap = 0;
	unsigned int lineno = 0;
	int ret = 0;

	if (s == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	while (pos < len && ret == 0) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl != NULL ? (size_t)(nl - line) : len - pos;
		char copy[LINE_MAX_BYTES];

		pos += llen + (nl != NULL);
		lineno++;
		if (llen > 0 && line[llen - 1] == '\r')
			llen--;
		if (llen >= sizeof(copy) || memchr(line, '\0', llen) != NULL) {
			ret = fail(err, err_size, lineno,
				   "line too long or not text");
			break;
		}
		memcpy(copy, line, llen);
		copy[llen] = '\0';
		ret = parse_line(s, copy, lineno, &cap, err, err_size);
	}
	if (ret == 0 && lineno == 0)
		ret = fail(err, err_size, 0, "empty file");
	if (ret == 0 && (s->zone[0] == '\0' || s->source[0] == '\0'))
		ret = fail(err, err_size, 0, "no zone or no source line");
	if (ret < 0)
		ceems_intensity_free(s);
	return ret;
}

int
ceems_intensity_load(const char *path, struct ceems_intensity_series *s,
		     char *err, size_t err_size)
{
	char *buf;
	ssize_t len;
	int ret;

	if (path == NULL || s == NULL)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	buf = malloc(CEEMS_INTENSITY_MAX_BYTES + 1);
	if (buf == NULL)
		return -ENOMEM;
	len = ceems_fileio_read_text_file(path, buf, CEEMS_INTENSITY_MAX_BYTES + 1);
	if (len < 0) {
		free(buf);
		if (len == -EFBIG)
			snprintf(err, err_size, "larger than %u bytes",
				 CEEMS_INTENSITY_MAX_BYTES);
		else
			snprintf(err, err_size, "%s", strerror((int)-len));
		return (int)len;
	}
	ret = ceems_intensity_parse(buf, (size_t)len, s, err, err_size);
	free(buf);
	return ret;
}

static int
write_all(FILE *f, const struct ceems_intensity_series *s)
{
	fprintf(f, MAGIC " %d\nzone %s\nsource %s\n", FORMAT_VERSION, s->zone,
		s->source);
	for (size_t i = 0; i < s->nrows; i++)
		fprintf(f, "%lld %lld %.15g\n", (long long)s->rows[i].valid_from,
			(long long)s->rows[i].valid_to, s->rows[i].g_per_kwh);
	if (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) < 0)
		return -errno != 0 ? -errno : -EIO;
	return 0;
}

int
ceems_intensity_write(const char *path,
		      const struct ceems_intensity_series *s)
{
	char tmp[4096];
	FILE *f;
	int fd, ret;

	if (path == NULL || s == NULL || !ceems_intensity_zone_valid(s->zone) ||
	    !ceems_intensity_source_valid(s->source))
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s.tmpXXXXXX", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0 || (f = fdopen(fd, "w")) == NULL) {
		ret = -errno;
		close(fd);
		unlink(tmp);
		return ret;
	}
	errno = 0;
	ret = write_all(f, s);
	if (fclose(f) != 0 && ret == 0)
		ret = -errno;
	if (ret == 0 && rename(tmp, path) < 0)
		ret = -errno;
	if (ret < 0)
		unlink(tmp);
	return ret;
}

void
ceems_intensity_free(struct ceems_intensity_series *s)
{
	if (s == NULL)
		return;
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

size_t
ceems_intensity_rows_from(const struct ceems_intensity_series *s, int64_t t)
{
	size_t lo = 0, hi;

	if (s == NULL)
		return 0;
	hi = s->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->rows[mid].valid_from <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct ceems_intensity_row *
ceems_intensity_at(const struct ceems_intensity_series *s, int64_t t)
{
	/* The last row whose valid_from <= t. */
	size_t lo = ceems_intensity_rows_from(s, t);

	if (lo == 0 || t >= s->rows[lo - 1].valid_to)
		return NULL;
	return &s->rows[lo - 1];
}
