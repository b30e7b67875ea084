/* report_fetch.c - the period's jobs from ceems.jobs for the reports,
 * streamed in single-row mode (a month of a site's jobs does not fit in
 * one result), as the current role sees them: the report for a user is
 * read after SET ROLE to that user, so the policies of sql/policies
 * decide what it holds. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fetch.h"

/* A job counts in the period of its end.  The start bound (the longest
 * job a cluster has run, clusters.max_job_s) makes the user's and the
 * account's index ranges finite; the user's first job is looked up once
 * per user, for the "new user" rule. */
static const char *const jobs_sql =
	"WITH p AS ("
	" SELECT j.* FROM ceems.jobs j"
	" WHERE j.start_time >= $1::timestamptz - make_interval(secs =>"
	"   (SELECT coalesce(max(c.max_job_s), 0) FROM ceems.clusters c))"
	"   AND j.start_time < $2::timestamptz"
	"   AND coalesce(j.end_time, j.start_time) >= $1::timestamptz"
	"   AND coalesce(j.end_time, j.start_time) < $2::timestamptz"
	"   AND j.user_name IS NOT NULL"
	"   AND CASE $3::integer WHEN 0 THEN j.user_name = $4::text"
	"        WHEN 1 THEN j.account = $4::text ELSE true END),"
	" f AS (SELECT u.user_name, (SELECT min(x.start_time) FROM ceems.jobs x"
	"        WHERE x.user_name = u.user_name) AS first_start"
	"       FROM (SELECT DISTINCT user_name FROM p) u)"
	" SELECT p.jobid, p.user_name, coalesce(p.account, ''), coalesce(p.state, ''),"
	"  p.elapsed_s, p.time_limit_min, p.alloc_cpus, p.cpu_time_s,"
	"  p.req_mem_bytes, p.mem_peak_bytes, coalesce(p.alloc_gpus, 0),"
	"  p.gpu_util_pct, p.package_static_j, p.dram_static_j, p.gpu_j,"
	"  p.total_j, p.emissions_g,"
	"  least(p.package_coverage, p.dram_coverage, p.gpu_coverage, p.node_coverage),"
	"  p.gap_s, extract(epoch FROM p.start_time - p.submit_time),"
	"  p.nnodes, p.nodes_reported,"
	"  extract(epoch FROM p.start_time - f.first_start)"
	" FROM p JOIN f USING (user_name)"
	" ORDER BY p.user_name, p.start_time, p.jobid";

static double
num(const PGresult *res, int col)
{
	if (PQgetisnull(res, 0, col))
		return NAN;
	return strtod(PQgetvalue(res, 0, col), NULL);
}

static void
text(char *dst, size_t size, const PGresult *res, int col)
{
	snprintf(dst, size, "%s", PQgetisnull(res, 0, col) ? "" : PQgetvalue(res, 0, col));
}

static void
row_to_job(const PGresult *res, struct report_job *j)
{
	memset(j, 0, sizeof(*j));
	j->jobid = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	text(j->user, sizeof(j->user), res, 1);
	text(j->account, sizeof(j->account), res, 2);
	text(j->state, sizeof(j->state), res, 3);
	j->elapsed_s = num(res, 4);
	j->time_limit_min = num(res, 5);
	j->alloc_cpus = num(res, 6);
	j->cpu_time_s = num(res, 7);
	j->req_mem_bytes = num(res, 8);
	j->mem_peak_bytes = num(res, 9);
	j->alloc_gpus = num(res, 10);
	j->gpu_util_pct = num(res, 11);
	j->package_static_j = num(res, 12);
	j->dram_static_j = num(res, 13);
	j->gpu_j = num(res, 14);
	j->total_j = num(res, 15);
	j->emissions_g = num(res, 16);
	j->coverage = num(res, 17);
	j->gap_s = num(res, 18);
	j->wait_s = num(res, 19);
	j->nnodes = num(res, 20);
	j->nodes_reported = num(res, 21);
	j->since_first_s = num(res, 22);
}

/* Read what is left of a query the caller gave up on, so that the
 * connection is usable again. */
static void
drain(PGconn *conn)
{
	PGresult *res;

	while ((res = PQgetResult(conn)) != NULL)
		PQclear(res);
}

long
report_fetch_jobs(PGconn *conn, const char *from, const char *to,
		  enum report_scope scope, const char *name,
		  report_fetch_fn fn, void *arg, char *err, size_t err_size)
{
	char scope_s[4];
	const char *params[4];
	struct report_job job;
	PGresult *res;
	long n = 0;

	snprintf(scope_s, sizeof(scope_s), "%d", (int)scope);
	params[0] = from;
	params[1] = to;
	params[2] = scope_s;
	params[3] = name != NULL ? name : "";
	if (!PQsendQueryParams(conn, jobs_sql, 4, NULL, params, NULL, NULL, 0) ||
	    !PQsetSingleRowMode(conn)) {
		snprintf(err, err_size, "jobs of the period: %s", PQerrorMessage(conn));
		drain(conn);
		return -1;
	}
	while ((res = PQgetResult(conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		if (st == PGRES_SINGLE_TUPLE) {
			row_to_job(res, &job);
			PQclear(res);
			n++;
			if (fn(&job, arg) != 0) {
				PQrequestCancel(conn);
				drain(conn);
				snprintf(err, err_size, "stopped after job %lld", job.jobid);
				return -1;
			}
			continue;
		}
		if (st != PGRES_TUPLES_OK) {
			snprintf(err, err_size, "jobs of the period: %s",
				 PQresultErrorMessage(res));
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
		    char *from_out, char *to_out, size_t size, char *err,
		    size_t err_size)
{
	/* The default: the last whole week, Monday to Monday, UTC. */
	static const char *sql =
		"SELECT to_char(f AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
		" to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), f < t FROM"
		" (SELECT coalesce($1::timestamptz, date_trunc('week', now() AT TIME ZONE 'UTC')"
		"   AT TIME ZONE 'UTC' - interval '7 days') AS f,"
		"  coalesce($2::timestamptz, date_trunc('week', now() AT TIME ZONE 'UTC')"
		"   AT TIME ZONE 'UTC') AS t) b";
	const char *params[2] = { from, to };
	PGresult *res = PQexecParams(conn, sql, 2, NULL, params, NULL, NULL, 0);

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
