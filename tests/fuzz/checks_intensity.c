/* checks_intensity.c - the node's carbon-intensity cache parser
 * (lib/model/intensity.h) held to its contract: documented return codes, an
 * empty series on error, and on success sorted disjoint rows that the
 * lookup finds at their edges and not outside them; a series written and
 * read back is the same series.  And the parsers of `ceems-admin factors
 * import`: sorted, disjoint intervals of the zone asked for. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/admin_import.h"
#include "checks.h"
#include "model/intensity.h"

static const char *
check_rows(const struct ceems_intensity_series *s)
{
	for (size_t i = 0; i < s->nrows; i++) {
		const struct ceems_intensity_row *r = &s->rows[i];

		if (r->valid_from < 0 || r->valid_to <= r->valid_from ||
		    r->valid_to > CEEMS_INTENSITY_MAX_TIME ||
		    !(r->g_per_kwh >= 0) ||
		    r->g_per_kwh > CEEMS_EMISSIONS_MAX_G_PER_KWH)
			return "ceems_intensity_parse: invalid row kept";
		if (i > 0 && r->valid_from < s->rows[i - 1].valid_to)
			return "ceems_intensity_parse: rows overlap or unsorted";
		if (ceems_intensity_at(s, r->valid_from) != r ||
		    ceems_intensity_at(s, r->valid_to - 1) != r)
			return "ceems_intensity_at: a row is not found at its edges";
		if ((i == 0 || s->rows[i - 1].valid_to < r->valid_from) &&
		    ceems_intensity_at(s, r->valid_from - 1) != NULL)
			return "ceems_intensity_at: a time before a row is covered";
		if ((i + 1 == s->nrows || s->rows[i + 1].valid_from > r->valid_to) &&
		    ceems_intensity_at(s, r->valid_to) != NULL)
			return "ceems_intensity_at: a time after a row is covered";
	}
	if (!ceems_intensity_source_valid(s->source) || s->zone[0] == '\0')
		return "ceems_intensity_parse: bad zone or source kept";
	return NULL;
}

/* Write S to a temporary file and read it back: the same rows. */
static const char *
check_round_trip(const struct ceems_intensity_series *s)
{
	char dir[] = "/tmp/ceems-fuzz-intensity-XXXXXX", path[64], err[160];
	struct ceems_intensity_series back;
	const char *problem = NULL;

	if (mkdtemp(dir) == NULL)
		return NULL;	/* no room to try: not the parser's fault */
	snprintf(path, sizeof(path), "%s/cache", dir);
	if (ceems_intensity_write(path, s) != 0)
		problem = "ceems_intensity_write: a parsed series not written";
	else if (ceems_intensity_load(path, &back, err, sizeof(err)) != 0)
		problem = "ceems_intensity_load: a written series not read back";
	else {
		if (back.nrows != s->nrows || strcmp(back.zone, s->zone) != 0 ||
		    strcmp(back.source, s->source) != 0)
			problem = "ceems_intensity_write: round trip differs";
		for (size_t i = 0; problem == NULL && i < s->nrows; i++)
			if (back.rows[i].valid_from != s->rows[i].valid_from ||
			    back.rows[i].valid_to != s->rows[i].valid_to ||
			    back.rows[i].g_per_kwh != s->rows[i].g_per_kwh)
				problem = "ceems_intensity_write: round trip differs";
		ceems_intensity_free(&back);
	}
	unlink(path);
	rmdir(dir);
	return problem;
}

const char *
fuzz_check_intensity(const char *data, size_t len)
{
	struct ceems_intensity_series s;
	const char *problem;
	char err[160];
	int ret;

	memset(&s, 0xa5, sizeof(s));
	err[0] = '\0';
	ret = ceems_intensity_parse(data, len, &s, err, sizeof(err));
	if (ret != 0 && ret != -EINVAL && ret != -ENOMEM)
		return "ceems_intensity_parse: undocumented return code";
	if (ret < 0) {
		if (s.rows != NULL || s.nrows != 0)
			return "ceems_intensity_parse: rows left after an error";
		if (ret == -EINVAL && err[0] == '\0')
			return "ceems_intensity_parse: refused without saying why";
		return NULL;
	}
	problem = check_rows(&s);
	if (problem == NULL && s.nrows < 64)
		problem = check_round_trip(&s);
	ceems_intensity_free(&s);
	return problem;
}

/* ------------------------------------------------------------------ */
/* factors import: the grid operators' exports (tools/admin/admin_import.h)  */
/* ------------------------------------------------------------------ */

static const char *
check_import_rows(const struct admin_factor *rows, size_t n, bool ceems)
{
	for (size_t i = 0; i < n; i++) {
		const struct admin_factor *r = &rows[i];

		if (!(r->g_per_kwh >= 0) || r->g_per_kwh >= 10000 ||
		    r->line == 0)
			return "admin_import_parse: a bad row kept";
		if (ceems)
			continue;
		if (strcmp(r->zone, "FR") != 0 || r->year != 0 ||
		    strlen(r->valid_from) != 20 || strlen(r->valid_to) != 20 ||
		    strcmp(r->valid_from, r->valid_to) >= 0)
			return "admin_import_parse: a bad interval kept";
		if (i > 0 && strcmp(rows[i - 1].valid_to, r->valid_from) > 0)
			return "admin_import_parse: intervals overlap or unsorted";
	}
	return NULL;
}

const char *
fuzz_check_factors_import(const char *data, size_t len)
{
	for (int f = ADMIN_IMPORT_AUTO; f <= ADMIN_IMPORT_CEEMS; f++) {
		struct admin_factor *rows = (struct admin_factor *)&rows;
		enum admin_import_format used;
		const char *problem;
		char err[256] = "";
		size_t n = 99;
		int r = admin_import_parse(data, len, "FR", f, &used, &rows, &n,
					   err, sizeof(err));

		if (r != 0 && r != -1)
			return "admin_import_parse: undocumented return code";
		if (r < 0) {
			if (rows != NULL || n != 0)
				return "admin_import_parse: rows left after an error";
			if (err[0] == '\0')
				return "admin_import_parse: refused without saying why";
			continue;
		}
		if (f != ADMIN_IMPORT_AUTO && used != (enum admin_import_format)f)
			return "admin_import_parse: read another format than asked";
		problem = check_import_rows(rows, n, used == ADMIN_IMPORT_CEEMS);
		free(rows);
		if (problem != NULL)
			return problem;
	}
	return NULL;
}
