/* report_fetch.h - the jobs of a period, read from PostgreSQL as the
 * connection's current role sees them (row-level security applies), one
 * row at a time, in no particular order. */
#ifndef REPORT_FETCH_H
#define REPORT_FETCH_H

#include <libpq-fe.h>

#include "report_rules.h"

/* A job j counts in the period [$1, $2) of its end.  The bound on its
 * start (the longest job a cluster has run, clusters.max_job_s) makes
 * the index ranges on start_time finite. */
#define REPORT_FETCH_IN_PERIOD \
	" j.start_time >= $1::timestamptz - make_interval(secs =>" \
	"   (SELECT coalesce(max(c.max_job_s), 0) FROM ceems.clusters c))" \
	" AND j.start_time < $2::timestamptz" \
	" AND coalesce(j.end_time, j.start_time) >= $1::timestamptz" \
	" AND coalesce(j.end_time, j.start_time) < $2::timestamptz"

/* Which jobs of the period: one user's, one account's, or all the role
 * may see. */
enum report_scope { REPORT_SCOPE_USER, REPORT_SCOPE_ACCOUNT, REPORT_SCOPE_ALL };

/* Called for each job; a non-zero return stops the read. */
typedef int (*report_fetch_fn)(const struct report_job *job, void *arg);

/* FROM and TO are timestamps PostgreSQL parses; a job counts in the
 * period of its end.  Returns the number of jobs, or -1 with ERR set. */
long report_fetch_jobs(PGconn *conn, const char *from, const char *to,
		       enum report_scope scope, const char *name,
		       report_fetch_fn fn, void *arg, char *err, size_t err_size);

/* Run one statement that returns no rows; -1 with ERR set on failure. */
int report_fetch_exec(PGconn *conn, const char *sql, int nparams,
		      const char *const *params, char *err, size_t err_size);

/* SET ROLE NAME (quoted); -1 with ERR set, e.g. when NAME has no role
 * or the connection may not take it. */
int report_fetch_set_role(PGconn *conn, const char *name, char *err,
			  size_t err_size);

/* The period's bounds as PostgreSQL normalises them (ISO 8601, UTC);
 * when FROM and TO are NULL, the week before the current one, or with
 * LAST_HOUR the hour before the current one (the alerts' sweep). */
int report_fetch_period(PGconn *conn, const char *from, const char *to,
			int last_hour, char *from_out, char *to_out, size_t size,
			char *err, size_t err_size);

#endif /* REPORT_FETCH_H */
