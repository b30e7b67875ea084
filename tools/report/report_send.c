/* report_send.c - a run of the reports.  Each user's digest is read
 * after SET ROLE to that user, each account's overview after SET ROLE to
 * its coordinator, so row-level security (sql/policies) bounds what a
 * report can hold exactly as it bounds what its reader could query.
 * Mailed or filed reports are recorded in ceems.report_sent in the same
 * transaction as their delivery: a period that overlaps one already sent
 * to the same recipient is not sent again, and a failed delivery leaves
 * no record, so the next run sends it. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_collect.h"
#include "report_digest.h"
#include "report_fetch.h"
#include "report_mail.h"
#include "report_nodes.h"
#include "report_send.h"

static const char *const kind_names[] = { "user", "account", "triage", "nodes", "alert" };

struct delivery {
	const char *recipient;	/* the role or address the record names */
	const char *subject_key;	/* the account, or "" */
	const char *address;
	const char *subject;
	int jobs;
};

static int
exec1(PGconn *conn, const char *sql)
{
	char err[512];

	if (report_fetch_exec(conn, sql, 0, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: report: %s: %s", sql, err);
		return -1;
	}
	return 0;
}

/* Record the delivery; 1 when recorded, 0 when an overlapping period
 * was sent already, -1 on error. */
static int
record_sent(PGconn *conn, const struct report_run *run, const struct delivery *dv)
{
	static const char *sql =
		"INSERT INTO ceems.report_sent (kind, recipient, subject_key, period_start,"
		" period_end, jobs) SELECT $1, $2, $3, $4::timestamptz, $5::timestamptz, $6::integer"
		" WHERE NOT EXISTS (SELECT 1 FROM ceems.report_sent s WHERE s.kind = $1"
		"  AND s.recipient = $2 AND s.subject_key = $3"
		"  AND s.period_start < $5::timestamptz AND s.period_end > $4::timestamptz)"
		" ON CONFLICT DO NOTHING RETURNING 1";
	char jobs[16];
	const char *params[6] = { kind_names[run->kind], dv->recipient, dv->subject_key,
				  run->from, run->to, jobs };
	PGresult *res;
	int r;

	snprintf(jobs, sizeof(jobs), "%d", dv->jobs);
	res = PQexecParams(conn, sql, 6, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "ceems-admin: report: recording %s: %s", dv->recipient,
			PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	r = PQntuples(res) == 1;
	PQclear(res);
	return r;
}

static void
file_name(char *buf, size_t size, const struct report_run *run, const struct delivery *dv)
{
	char who[160];

	snprintf(who, sizeof(who), "%s%s%s", dv->recipient, dv->subject_key[0] ? "-" : "",
		 dv->subject_key);
	for (char *p = who; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_'))
			*p = '_';
	snprintf(buf, size, "%s-%s-%.10s.eml", kind_names[run->kind], who, run->from);
}

static int
deliver(PGconn *conn, struct report_run *run, const struct delivery *dv,
	const struct report_doc *doc)
{
	struct report_buf msg = { 0 };
	char err[512], name[256];
	int r;

	if (run->mode == REPORT_PREVIEW) {
		const struct report_buf *b = run->html ? &doc->html : &doc->text;

		fwrite(b->data, 1, b->len, stdout);
		run->sent++;
		return 0;
	}
	if (report_mail_compose(&msg, run->sender, dv->address, dv->subject, doc,
				err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: report for %s: %s: not sent\n", dv->recipient, err);
		report_buf_free(&msg);
		run->failed++;
		return -1;
	}
	if (exec1(conn, "BEGIN") < 0 ||
	    exec1(conn, "LOCK TABLE ceems.report_sent IN SHARE ROW EXCLUSIVE MODE") < 0 ||
	    (r = record_sent(conn, run, dv)) < 0) {
		exec1(conn, "ROLLBACK");
		report_buf_free(&msg);
		run->failed++;
		return -1;
	}
	if (r == 0) {
		exec1(conn, "ROLLBACK");
		printf("%s report for %s%s%s: sent already for this period\n",
		       kind_names[run->kind], dv->recipient, dv->subject_key[0] ? ", " : "",
		       dv->subject_key);
		report_buf_free(&msg);
		run->skipped++;
		return 0;
	}
	file_name(name, sizeof(name), run, dv);
	r = run->mode == REPORT_MAIL ?
		report_mail_send(run->sendmail, &msg, err, sizeof(err)) :
		report_mail_write(run->out_dir, name, &msg, err, sizeof(err));
	report_buf_free(&msg);
	if (r < 0) {
		fprintf(stderr, "ceems-admin: report for %s: %s: not sent\n", dv->recipient, err);
		exec1(conn, "ROLLBACK");
		run->failed++;
		return -1;
	}
	if (exec1(conn, "COMMIT") < 0) {
		run->failed++;
		return -1;
	}
	printf("%s report for %s%s%s: %s\n", kind_names[run->kind], dv->recipient,
	       dv->subject_key[0] ? ", " : "", dv->subject_key,
	       run->mode == REPORT_MAIL ? dv->address : name);
	run->sent++;
	return 0;
}

/* The jobs of one scope read as ROLE (NULL: the connection's own). */
static int
collect_as(PGconn *conn, const struct report_run *run, const char *role,
	   enum report_scope scope, const char *name, struct report_collect *c)
{
	char err[512];
	long n;

	if (role != NULL && report_fetch_set_role(conn, role, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: report: cannot read as %s (the report is built as its "
			"reader): %s", role, err);
		return -1;
	}
	n = report_fetch_jobs(conn, run->from, run->to, scope, name, report_collect_job, c,
			      err, sizeof(err));
	if (role != NULL && exec1(conn, "RESET ROLE") < 0)
		n = -1;
	if (n < 0 || c->failed) {
		fprintf(stderr, "ceems-admin: report: %s\n", c->failed ? "out of memory" : err);
		return -1;
	}
	report_collect_finish(c);
	return 0;
}

/* The recipients: users with jobs in the period, or (account,
 * coordinator) pairs; opted-out people only in a preview. */
static PGresult *
recipients(PGconn *conn, const struct report_run *run)
{
	/* One user (--only): that user's index range; everyone: the
	 * period's range of jobs_start. */
	static const char *users_sql =
		"SELECT DISTINCT j.user_name, '' FROM ceems.jobs j WHERE" REPORT_FETCH_IN_PERIOD
		"   AND j.user_name IS NOT NULL AND $3::text = ''"
		"   AND ($4 OR NOT EXISTS (SELECT 1 FROM ceems.report_optout o"
		"                          WHERE o.user_name = j.user_name))"
		" ORDER BY 1";
	static const char *user_sql =
		"SELECT DISTINCT j.user_name, '' FROM ceems.jobs j WHERE" REPORT_FETCH_IN_PERIOD
		"   AND j.user_name = $3::text"
		"   AND ($4 OR NOT EXISTS (SELECT 1 FROM ceems.report_optout o"
		"                          WHERE o.user_name = j.user_name))";
	static const char *accounts_sql =
		"SELECT c.username, c.account FROM ceems.coordinators c"
		" WHERE ($3 = '' OR c.username = $3)"
		"   AND ($4 OR NOT EXISTS (SELECT 1 FROM ceems.report_optout o"
		"                          WHERE o.user_name = c.username))"
		"   AND EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.account = c.account AND"
		REPORT_FETCH_IN_PERIOD ")"
		" ORDER BY 1, 2";
	const char *params[4] = { run->from, run->to, run->only != NULL ? run->only : "",
				  run->mode == REPORT_PREVIEW ? "true" : "false" };
	const char *sql = run->kind == REPORT_KIND_ACCOUNT ? accounts_sql :
			  run->only != NULL ? user_sql : users_sql;
	PGresult *res = PQexecParams(conn, sql, 4, NULL, params, NULL, NULL, 0);

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		fprintf(stderr, "ceems-admin: report: recipients: %s", PQresultErrorMessage(res));
		PQclear(res);
		return NULL;
	}
	return res;
}

static void
one_person(PGconn *conn, struct report_run *run, const char *who, const char *account)
{
	struct report_collect c = { 0 };
	struct report_doc doc;
	char address[320], subject[200];
	struct delivery dv = { who, account, address, subject, 0 };
	int r;

	snprintf(address, sizeof(address), "%s@%s", who, run->domain != NULL ? run->domain : "");
	r = run->kind != REPORT_KIND_ACCOUNT ?
		collect_as(conn, run, who, REPORT_SCOPE_USER, who, &c) :
		collect_as(conn, run, who, REPORT_SCOPE_ACCOUNT, account, &c);
	if (r < 0) {
		run->failed++;
		report_collect_free(&c);
		return;
	}
	if (c.n == 0) {
		report_collect_free(&c);
		return;
	}
	if (run->kind == REPORT_KIND_ALERT) {
		if (c.users[0].alerts == 0) {
			report_collect_free(&c);
			return;
		}
		report_digest_alert(&doc, &c.users[0], run->from, run->to);
		dv.jobs = c.users[0].alerts;
		snprintf(subject, sizeof(subject), "GPUs that sat idle in %d of your jobs: ceems",
			 c.users[0].alerts);
	} else if (run->kind == REPORT_KIND_USER) {
		report_digest_user(&doc, &c.users[0], run->from, run->to);
		dv.jobs = c.users[0].jobs;
		snprintf(subject, sizeof(subject), "Your jobs from %.10s to %.10s: ceems digest",
			 run->from, run->to);
	} else {
		report_digest_account(&doc, account, c.users, c.n, run->from, run->to);
		for (size_t i = 0; i < c.n; i++)
			dv.jobs += c.users[i].jobs;
		snprintf(subject, sizeof(subject), "Account %.64s from %.10s to %.10s: ceems overview",
			 account, run->from, run->to);
	}
	deliver(conn, run, &dv, &doc);
	report_doc_free(&doc);
	report_collect_free(&c);
}

static int
run_people(PGconn *conn, struct report_run *run)
{
	PGresult *res = recipients(conn, run);

	if (res == NULL)
		return -1;
	for (int i = 0; i < PQntuples(res); i++)
		one_person(conn, run, PQgetvalue(res, i, 0), PQgetvalue(res, i, 1));
	PQclear(res);
	return 0;
}

static int
run_admin(PGconn *conn, struct report_run *run)
{
	struct report_collect c = { 0 };
	struct report_node *nodes = NULL;
	struct report_doc doc;
	char subject[200], err[512];
	struct delivery dv = { run->admin_to != NULL ? run->admin_to : "admin", "",
			       run->admin_to, subject, 0 };
	long n;

	if (run->kind == REPORT_KIND_TRIAGE) {
		if (collect_as(conn, run, NULL, REPORT_SCOPE_ALL, NULL, &c) < 0) {
			report_collect_free(&c);
			return -1;
		}
		report_digest_triage(&doc, c.users, c.n, run->limit, run->from, run->to);
		for (size_t i = 0; i < c.n; i++)
			dv.jobs += c.users[i].jobs;
		report_collect_free(&c);
		snprintf(subject, sizeof(subject), "Users to offer help, %.10s to %.10s: ceems triage",
			 run->from, run->to);
	} else {
		if ((n = report_nodes_fetch(conn, run->from, run->to, &nodes, err, sizeof(err))) < 0) {
			fprintf(stderr, "ceems-admin: report: %s\n", err);
			return -1;
		}
		report_nodes_judge(nodes, (size_t)n);
		report_nodes_doc(&doc, nodes, (size_t)n, run->from, run->to);
		dv.jobs = 0;
		free(nodes);
		snprintf(subject, sizeof(subject), "Nodes that stand out, %.10s to %.10s: ceems",
			 run->from, run->to);
	}
	deliver(conn, run, &dv, &doc);
	report_doc_free(&doc);
	return 0;
}

int
report_send_run(PGconn *conn, struct report_run *run)
{
	int r;

	if (run->kind != REPORT_KIND_TRIAGE && run->kind != REPORT_KIND_NODES)
		r = run_people(conn, run);
	else
		r = run_admin(conn, run);
	return r < 0 || run->failed > 0 ? -1 : 0;
}
