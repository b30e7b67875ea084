/* report_fetch.c - the period's jobs from ceems.jobs for the reports,
 * streamed by COPY (a month of a site's jobs does not fit in one
 * result), as the current role sees them: the report for a user is
 * read after SET ROLE to that user, so the policies of sql/policies
 * decide what it holds. */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_buf.h"
#include "report_fetch.h"
#include "report_row.h"

/* The jobs of the period and scope ($3 the scope, $4 its name). */
#define PERIOD_JOBS \
	" FROM ceems.jobs j WHERE" REPORT_FETCH_IN_PERIOD \
	"   AND j.user_name IS NOT NULL" \
	"   AND CASE $3::integer WHEN 0 THEN j.user_name = $4::text" \
	"        WHEN 1 THEN j.account = $4::text ELSE true END"

/* Each user's first job (as the reader sees them), for the "new user"
 * rule: a query of its own, once per user (joined to the jobs, the
 * planner looked it up once per job).  One user: the first entry of the
 * user's index range.  An account: the users of its jobs in the
 * period.  Everyone (the admins' reports): every user's first index
 * entry, user after user (a skip scan: a probe per user, not a pass
 * over the month). */
static const char *const first_user_sql =
	"SELECT $1::text, date_part('epoch', (SELECT min(x.start_time)"
	"  FROM ceems.jobs x WHERE x.user_name = $1::text))";
static const char *const firsts_account_sql =
	"SELECT u.user_name, date_part('epoch', (SELECT min(x.start_time)"
	"  FROM ceems.jobs x WHERE x.user_name = u.user_name))"
	" FROM (SELECT DISTINCT j.user_name" PERIOD_JOBS ") u";
static const char *const firsts_all_sql =
	"WITH RECURSIVE u AS ("
	" (SELECT j.user_name, j.start_time FROM ceems.jobs j WHERE j.user_name IS NOT NULL"
	"  ORDER BY j.user_name, j.start_time LIMIT 1)"
	" UNION ALL"
	" SELECT n.user_name, n.start_time FROM u, LATERAL (SELECT j.user_name, j.start_time"
	"  FROM ceems.jobs j WHERE j.user_name > u.user_name"
	"  ORDER BY j.user_name, j.start_time LIMIT 1) n)"
	" SELECT user_name, date_part('epoch', start_time) FROM u";

/* No ORDER BY: the rows are summed per user in a hash table, and
 * sorting a month of a site's jobs cost more than reading them.  The
 * columns are report_row.h's: int8, three texts, then float8 only (the
 * binary COPY's parser knows no other type).  Every column is in the
 * index jobs_user_report (migration 035), so one user's month is an
 * index-only scan. */
static const char *const jobs_sql =
	"SELECT j.jobid::int8, j.user_name, coalesce(j.account, ''), coalesce(j.state::text, ''),"
	"  j.elapsed_s::float8, j.time_limit_min::float8, j.alloc_cpus::float8,"
	"  j.cpu_time_s::float8, j.req_mem_bytes::float8, j.mem_peak_bytes::float8,"
	"  coalesce(j.alloc_gpus, 0)::float8, j.gpu_util_pct::float8,"
	"  j.package_static_j::float8, j.dram_static_j::float8, j.gpu_j::float8,"
	"  j.total_j::float8, j.emissions_g::float8,"
	"  least(j.package_coverage, j.dram_coverage, j.gpu_coverage, j.node_coverage)::float8,"
	"  j.gap_s::float8, date_part('epoch', j.start_time - j.submit_time)::float8,"
	"  j.nnodes::float8, j.nodes_reported::float8, date_part('epoch', j.start_time)::float8"
	PERIOD_JOBS;

struct first_start {
	char user[64];
	double epoch;
};

static int
by_user(const void *a, const void *b)
{
	return strcmp(((const struct first_start *)a)->user,
		      ((const struct first_start *)b)->user);
}

/* Read what is left of a query the caller gave up on, so that the
 * connection is usable again. */
static void
drain(PGconn *conn)
{
	PGresult *res;
	char *buf;

	while (PQgetCopyData(conn, &buf, 0) > 0)
		PQfreemem(buf);
	while ((res = PQgetResult(conn)) != NULL)
		PQclear(res);
}

/* jobs_sql with $1..$4 replaced by the quoted literals: COPY takes no
 * parameters.  NULL when out of memory. */
static char *
with_literals(PGconn *conn, const char *const *params)
{
	struct report_buf b = { 0 };
	char *lit[4] = { NULL, NULL, NULL, NULL };
	const char *p;

	for (int i = 0; i < 4; i++)
		if ((lit[i] = PQescapeLiteral(conn, params[i], strlen(params[i]))) == NULL)
			b.failed = true;
	report_buf_printf(&b, "COPY (");
	for (p = jobs_sql; !b.failed && *p != '\0'; p++) {
		if (p[0] == '$' && p[1] >= '1' && p[1] <= '4') {
			report_buf_printf(&b, "%s", lit[p[1] - '1']);
			p++;
		} else {
			report_buf_put(&b, p, 1);
		}
	}
	report_buf_printf(&b, ") TO STDOUT (FORMAT binary)");
	for (int i = 0; i < 4; i++)
		PQfreemem(lit[i]);
	if (b.failed) {
		report_buf_free(&b);
		return NULL;
	}
	return b.data;
}

/* The first start of each user of the scope, sorted by name. */
static struct first_start *
fetch_firsts(PGconn *conn, enum report_scope scope, const char *const *params,
	     size_t *count, char *err, size_t err_size)
{
	PGresult *res = scope == REPORT_SCOPE_USER ?
		PQexecParams(conn, first_user_sql, 1, NULL, params + 3, NULL, NULL, 0) :
		scope == REPORT_SCOPE_ACCOUNT ?
		PQexecParams(conn, firsts_account_sql, 4, NULL, params, NULL, NULL, 0) :
		PQexec(conn, firsts_all_sql);
	struct first_start *v;
	int rows;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, err_size, "users of the period: %s", PQresultErrorMessage(res));
		PQclear(res);
		return NULL;
	}
	rows = PQntuples(res);
	if ((v = calloc(rows > 0 ? (size_t)rows : 1, sizeof(*v))) == NULL) {
		snprintf(err, err_size, "out of memory");
		PQclear(res);
		return NULL;
	}
	for (int r = 0; r < rows; r++) {
		report_buf_clean(v[r].user, sizeof(v[r].user), PQgetvalue(res, r, 0));
		v[r].epoch = PQgetisnull(res, r, 1) ? NAN : strtod(PQgetvalue(res, r, 1), NULL);
	}
	PQclear(res);
	qsort(v, (size_t)rows, sizeof(*v), by_user);
	*count = (size_t)rows;
	return v;
}

/* Read the COPY's rows into FN (the header comes with the first, the
 * end-of-data mark last); the number of jobs, or -1. */
static long
read_rows(PGconn *conn, const struct first_start *firsts, size_t nfirsts,
	  report_fetch_fn fn, void *arg, char *err, size_t err_size)
{
	struct report_job job;
	struct first_start key;
	const struct first_start *f;
	long n = 0, skip;
	bool first = true, ended = false;
	char *line;
	int len, r;

	while ((len = PQgetCopyData(conn, &line, 0)) > 0) {
		const unsigned char *p = (const unsigned char *)line;

		skip = first ? report_row_header(p, (size_t)len) : 0;
		/* a header sent alone (a server may split it off) holds no row */
		r = skip < 0 || ended ? -1 : skip == len ? 2 :
		    report_row_parse(p + skip, (size_t)(len - skip), &job);
		PQfreemem(line);
		first = false;
		if (r == 2)
			continue;
		if (r < 0) {
			snprintf(err, err_size, "jobs of the period: a row of unexpected shape");
			drain(conn);
			return -1;
		}
		if (r == 0) {
			ended = true;
			continue;
		}
		memcpy(key.user, job.user, sizeof(key.user));
		f = bsearch(&key, firsts, nfirsts, sizeof(*firsts), by_user);
		job.since_first_s = f != NULL ? job.since_first_s - f->epoch : NAN;
		n++;
		if (fn(&job, arg) != 0) {
			snprintf(err, err_size, "stopped after job %lld", job.jobid);
			drain(conn);
			return -1;
		}
	}
	if (len == -2) {
		snprintf(err, err_size, "jobs of the period: %s", PQerrorMessage(conn));
		drain(conn);
		return -1;
	}
	if (!ended) {
		snprintf(err, err_size, "jobs of the period: the rows ended without their end mark");
		drain(conn);
		return -1;
	}
	return n;
}

/* COPY, not single-row mode: a month of a site's jobs is millions of
 * rows, and a PGresult per row cost more than the rules. */
long
report_fetch_jobs(PGconn *conn, const char *from, const char *to,
		  enum report_scope scope, const char *name,
		  report_fetch_fn fn, void *arg, char *err, size_t err_size)
{
	char scope_s[4], *sql;
	const char *params[4];
	struct first_start *firsts;
	size_t nfirsts = 0;
	PGresult *res;
	long n;

	snprintf(scope_s, sizeof(scope_s), "%d", (int)scope);
	params[0] = from;
	params[1] = to;
	params[2] = scope_s;
	params[3] = name != NULL ? name : "";
	if ((firsts = fetch_firsts(conn, scope, params, &nfirsts, err, err_size)) == NULL)
		return -1;
	if ((sql = with_literals(conn, params)) == NULL) {
		snprintf(err, err_size, "jobs of the period: out of memory");
		free(firsts);
		return -1;
	}
	res = PQexec(conn, sql);
	free(sql);
	if (PQresultStatus(res) != PGRES_COPY_OUT) {
		snprintf(err, err_size, "jobs of the period: %s", PQresultErrorMessage(res));
		PQclear(res);
		free(firsts);
		return -1;
	}
	PQclear(res);
	n = read_rows(conn, firsts, nfirsts, fn, arg, err, err_size);
	free(firsts);
	if (n < 0)
		return -1;
	while ((res = PQgetResult(conn)) != NULL) {
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			snprintf(err, err_size, "jobs of the period: %s", PQresultErrorMessage(res));
			PQclear(res);
			drain(conn);
			return -1;
		}
		PQclear(res);
	}
	return n;
}

int
report_fetch_exec(PGconn *conn, const char *sql, int nparams,
		  const char *const *params, char *err, size_t err_size)
{
	PGresult *res = PQexecParams(conn, sql, nparams, NULL, params, NULL, NULL, 0);
	ExecStatusType st = PQresultStatus(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		snprintf(err, err_size, "%s", PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

int
report_fetch_set_role(PGconn *conn, const char *name, char *err, size_t err_size)
{
	char *quoted = PQescapeIdentifier(conn, name, strlen(name));
	char sql[256];
	int r;

	if (quoted == NULL || strlen(quoted) > 200) {
		snprintf(err, err_size, "role name %.64s: cannot quote it", name);
		PQfreemem(quoted);
		return -1;
	}
	snprintf(sql, sizeof(sql), "SET ROLE %s", quoted);
	PQfreemem(quoted);
	r = report_fetch_exec(conn, sql, 0, NULL, err, err_size);
	return r;
}

int
report_fetch_period(PGconn *conn, const char *from, const char *to,
		    int last_hour, char *from_out, char *to_out, size_t size,
		    char *err, size_t err_size)
{
	/* The default: the last whole week, Monday to Monday, UTC. */
	static const char *sql =
		"SELECT to_char(f AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		" to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), f < t FROM"
		" (SELECT coalesce($1::timestamptz, date_trunc($3, now() AT TIME ZONE 'UTC')"
		"   AT TIME ZONE 'UTC' - ('1 ' || $3)::interval) AS f,"
		"  coalesce($2::timestamptz, date_trunc($3, now() AT TIME ZONE 'UTC')"
		"   AT TIME ZONE 'UTC') AS t) b";
	const char *params[3] = { from, to, last_hour ? "hour" : "week" };
	PGresult *res = PQexecParams(conn, sql, 3, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		snprintf(err, err_size, "the period (--from, --to): %s",
			 PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	if (strcmp(PQgetvalue(res, 0, 2), "t") != 0) {
		snprintf(err, err_size, "the period ends before it starts");
		PQclear(res);
		return -1;
	}
	snprintf(from_out, size, "%s", PQgetvalue(res, 0, 0));
	snprintf(to_out, size, "%s", PQgetvalue(res, 0, 1));
	PQclear(res);
	return 0;
}
