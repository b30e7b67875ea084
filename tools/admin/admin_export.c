/* admin_export.c - `ceems-admin factors export`: reads the time-varying
 * rows of one zone from ceems.emission_factors and writes the node's
 * intensity cache (lib/model/intensity.h), atomically, so that an agent never
 * reads half a file.  Run hourly (a cron job or a systemd timer, on each
 * node or on one host writing to shared storage).
 *
 * A row whose valid_to is NULL lasts until the zone's next row (the
 * table's rule), the last one until the end of the window.  Rows longer
 * than 31 days are yearly or monthly figures, left to the node's own
 * table; a row that overlaps an earlier one is skipped with a warning. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_export.h"
#include "model/intensity.h"

#define MAX_ROW_S (31LL * 86400)

static const char *export_sql =
	"SELECT f, t, g_per_kwh, source FROM ("
	" SELECT floor(extract(epoch FROM valid_from))::bigint AS f,"
	"  floor(extract(epoch FROM coalesce(valid_to,"
	"   lead(valid_from) OVER (ORDER BY valid_from),"
	"   now() + make_interval(hours => $3::integer))))::bigint AS t,"
	"  g_per_kwh, source"
	" FROM ceems.emission_factors WHERE zone = $1) x "
	"WHERE t > extract(epoch FROM now() - make_interval(hours => $2::integer))"
	" AND f < extract(epoch FROM now() + make_interval(hours => $3::integer))"
	" AND t > f AND t - f <= $4::bigint "
	"ORDER BY f";

/* The cache's source tag from the table's free text: characters outside
 * [A-Za-z0-9._-] become '_', cut to fit. */
static void
source_tag(const char *text, char *out, size_t size)
{
	size_t i;

	for (i = 0; text[i] != '\0' && i + 1 < size; i++) {
		char c = text[i];

		out[i] = ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
			  (c >= '0' && c <= '9') || c == '.' || c == '_' ||
			  c == '-') ? c : '_';
	}
	out[i] = '\0';
}

/* Rows of RES into S; overlaps skipped and counted. */
static int
fill_series(PGresult *res, struct ceems_intensity_series *s, size_t *skipped)
{
	int n = PQntuples(res);

	s->rows = calloc(n > 0 ? (size_t)n : 1, sizeof(*s->rows));
	if (s->rows == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct ceems_intensity_row r;
		char tag[CEEMS_INTENSITY_SOURCE_MAX];

		r.valid_from = strtoll(PQgetvalue(res, i, 0), NULL, 10);
		r.valid_to = strtoll(PQgetvalue(res, i, 1), NULL, 10);
		r.g_per_kwh = strtod(PQgetvalue(res, i, 2), NULL);
		if (r.valid_from < 0 || r.valid_to > CEEMS_INTENSITY_MAX_TIME ||
		    (s->nrows > 0 && r.valid_from < s->rows[s->nrows - 1].valid_to)) {
			(*skipped)++;
			continue;
		}
		source_tag(PQgetvalue(res, i, 3), tag, sizeof(tag));
		if (s->source[0] == '\0')
			snprintf(s->source, sizeof(s->source), "%s", tag);
		else if (strcmp(s->source, tag) != 0)
			snprintf(s->source, sizeof(s->source), "mixed");
		s->rows[s->nrows++] = r;
	}
	return 0;
}

int
admin_export_factors(PGconn *conn, const char *zone, int hours_back,
		     int hours_ahead, const char *path)
{
	struct ceems_intensity_series s;
	char back[16], ahead[16], max_s[24];
	const char *params[4] = { zone, back, ahead, max_s };
	size_t skipped = 0;
	PGresult *res;
	int ret;

	if (!ceems_intensity_zone_valid(zone)) {
		fprintf(stderr, "ceems-admin: --zone %s: the node's cache takes an upper-case ISO 3166-1 code (the agent's zone) or WORLD\n",
			zone);
		return -1;
	}
	memset(&s, 0, sizeof(s));
	snprintf(s.zone, sizeof(s.zone), "%s", zone);
	snprintf(back, sizeof(back), "%d", hours_back);
	snprintf(ahead, sizeof(ahead), "%d", hours_ahead);
	snprintf(max_s, sizeof(max_s), "%lld", MAX_ROW_S);
	res = PQexecParams(conn, export_sql, 4, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "ceems-admin: reading ceems.emission_factors: %s",
			PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	ret = fill_series(res, &s, &skipped);
	PQclear(res);
	if (ret < 0) {
		fprintf(stderr, "ceems-admin: out of memory\n");
		return -1;
	}
	if (skipped > 0)
		fprintf(stderr, "ceems-admin: warning: %zu interval%s of zone %s overlap an earlier one and are left out (fix the rows in ceems.emission_factors)\n",
			skipped, skipped == 1 ? "" : "s", zone);
	if (s.nrows == 0) {
		fprintf(stderr, "ceems-admin: no intervals of zone %s from %d hours back to %d hours ahead in ceems.emission_factors: %s left as it was (import a series with ceems-admin factors import)\n",
			zone, hours_back, hours_ahead, path);
		ceems_intensity_free(&s);
		return -1;
	}
	ret = ceems_intensity_write(path, &s);
	if (ret < 0)
		fprintf(stderr, "ceems-admin: %s: %s\n", path, strerror(-ret));
	else
		printf("exported %zu interval%s of zone %s (%s) to %s\n", s.nrows,
		       s.nrows == 1 ? "" : "s", zone, s.source, path);
	ceems_intensity_free(&s);
	return ret < 0 ? -1 : 0;
}
