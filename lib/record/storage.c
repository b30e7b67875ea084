/* storage.c - a finished job's record into PostgreSQL or the spool
 * (storage.h).  The libpq part is asynchronous (PQconnectStartParams,
 * PQsendQueryParams, poll with one deadline), because the caller is
 * slurmstepd at the end of a job: a database that is slow or a network
 * that drops packets must cost the job at most database_timeout, never
 * libpq's default of waiting forever.  libpq is called through its table
 * (pg_lib.h), loaded at the first connection: a process that never
 * connects never maps it.  Built --without-pq, every record goes to the
 * spool. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "record/pg_lib.h"
#include "record/spool.h"
#include "record/storage.h"
#include "base/clock.h"

/* A record's time series (its "series" member: columns and rows,
 * lib/model/agent_series.h) in the form ceems.add_job_samples takes
 * (sql/migrations/005_samples.sql): one object per row, each value named
 * by its column, and the job's identity.  REC is a jsonb expression. */
#define SAMPLES_OF(REC) \
	"jsonb_build_object('cluster', " REC " -> 'job' -> 'cluster', " \
	"'jobid', " REC " -> 'job' -> 'jobid', " \
	"'start_time', " REC " -> 'job' -> 'start_time', " \
	"'node', " REC " -> 'job' -> 'node', " \
	"'resolution_s', " REC " -> 'series' -> 'resolution_s', " \
	"'samples', (SELECT coalesce(jsonb_agg((" \
		"SELECT jsonb_object_agg(c.name, r.value -> (c.ord::integer - 1)) " \
		"FROM jsonb_array_elements_text(" REC " -> 'series' -> 'columns') " \
		"WITH ORDINALITY c(name, ord)) ORDER BY r.ord), '[]'::jsonb) " \
	"FROM jsonb_array_elements(" REC " -> 'series' -> 'rows') " \
	"WITH ORDINALITY r(value, ord)))"

/* One statement, so one transaction: the record, then its series, if it
 * has one.  The CTE (volatile, so run once and first: the outer query
 * reads its row) stores the record; the series goes in only once the
 * record's outcome exists, since add_job_samples needs the job's row.
 * add_job_samples keeps samples already stored: a replay changes
 * nothing.  The result (outcomes, sample counts) is not needed. */
/* The perf counters (measurements.perf) likewise, after the record:
 * add_job_perf keeps them only when the node's stored record is this
 * one (sql/migrations/021_perf.sql). */
#define UPSERT_SQL \
	"WITH u AS (SELECT ceems.upsert_job_record($1::jsonb) AS o) " \
	"SELECT (SELECT ceems.add_job_samples(" SAMPLES_OF("$1::jsonb") ") " \
	"WHERE u.o IS NOT NULL AND $1::jsonb ? 'series') IS NULL, " \
	"(SELECT ceems.add_job_perf($1::jsonb) " \
	"WHERE u.o IS NOT NULL AND $1::jsonb -> 'measurements' ? 'perf') FROM u"
#define UPSERT_BATCH_SQL \
	"WITH u AS (SELECT ceems.upsert_job_records($1::jsonb) AS o) " \
	"SELECT (SELECT count(ceems.add_job_samples(" SAMPLES_OF("e.rec") ")) " \
	"FROM jsonb_array_elements($1::jsonb) e(rec) " \
	"WHERE u.o IS NOT NULL AND e.rec ? 'series'), " \
	"(SELECT count(ceems.add_job_perf(e.rec)) " \
	"FROM jsonb_array_elements($1::jsonb) e(rec) " \
	"WHERE u.o IS NOT NULL AND e.rec -> 'measurements' ? 'perf') FROM u"

__attribute__((format(printf, 3, 4))) static void
say(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || err_size == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
}

bool
ceems_storage_have_database(const struct ceems_config *config)
{
#ifdef HAVE_LIBPQ
	return config->database[0] != '\0';
#else
	(void)config;
	return false;
#endif
}

#ifdef HAVE_LIBPQ

struct ceems_db {
	const struct ceems_pg_lib *pq;
	PGconn *conn;
	uint64_t timeout_ns;
	uint64_t deadline;		/* of the batch in flight, 0: none */
};

/* libpq's messages span lines; ours are one line each. */
static void
say_pq(char *err, size_t err_size, const char *what, const char *message)
{
	char *p;

	say(err, err_size, "%s: %s", what,
	    message != NULL && message[0] != '\0' ? message : "unknown error");
	if (err == NULL)
		return;
	for (p = err; *p != '\0'; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (p > err && p[-1] == ' ')
		*--p = '\0';
}

/* Wait until FD has EVENTS, at most until DEADLINE.  Returns the events
 * seen, -ETIMEDOUT, or -errno. */
static int
wait_fd(int fd, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t now = ceems_clock_monotonic_ns();
		int n;

		if (fd < 0)
			return -EBADF;
		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (n > 0)
			return p.revents;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send one statement (with one text parameter when PARAM), all of it,
 * before DEADLINE: libpq has copied PARAM once this returns.  Returns 0,
 * -EIO or -ETIMEDOUT (the connection can no longer be trusted). */
static int
db_send(struct ceems_db *db, const char *sql, const char *param,
	uint64_t deadline, char *err, size_t err_size)
{
	const struct ceems_pg_lib *pq = db->pq;
	PGconn *c = db->conn;
	int sent, r;

	sent = param != NULL ?
	       pq->sendQueryParams(c, sql, 1, NULL, &param, NULL, NULL, 0) :
	       pq->sendQuery(c, sql);
	if (!sent) {
		say_pq(err, err_size, "cannot send the statement", pq->errorMessage(c));
		return -EIO;
	}
	while ((r = pq->flush(c)) != 0) {
		if (r < 0) {
			say_pq(err, err_size, "cannot send the statement", pq->errorMessage(c));
			return -EIO;
		}
		/* libpq: wait for the socket to be writable, or readable,
		 * and then take in what the server sent. */
		r = wait_fd(pq->socket(c), POLLIN | POLLOUT, deadline);
		if (r < 0) {
			say(err, err_size, "no answer within %.1f s while sending",
			    (double)db->timeout_ns / 1e9);
			return r;
		}
		if ((r & POLLIN) && !pq->consumeInput(c)) {
			say_pq(err, err_size, "connection lost", pq->errorMessage(c));
			return -EIO;
		}
	}
	return 0;
}

/* Read every result of the statement db_send sent, before DEADLINE.
 * Returns 0, -EBADMSG (the database refused the data), -EIO or
 * -ETIMEDOUT (the connection can no longer be trusted). */
static int
db_finish(struct ceems_db *db, uint64_t deadline, char *err, size_t err_size)
{
	const struct ceems_pg_lib *pq = db->pq;
	PGconn *c = db->conn;
	int ret = 0, r;

	for (;;) {
		PGresult *res;

		while (pq->isBusy(c)) {
			r = wait_fd(pq->socket(c), POLLIN, deadline);
			if (r < 0) {
				say(err, err_size, "no answer within %.1f s",
				    (double)db->timeout_ns / 1e9);
				return r;
			}
			if (!pq->consumeInput(c)) {
				say_pq(err, err_size, "connection lost", pq->errorMessage(c));
				return -EIO;
			}
		}
		res = pq->getResult(c);
		if (res == NULL)
			break;
		switch (pq->resultStatus(res)) {
		case PGRES_COMMAND_OK:
		case PGRES_TUPLES_OK:
			break;
		default:
			if (ret == 0) {
				const char *state = pq->resultErrorField(res, PG_DIAG_SQLSTATE);

				/* Data exceptions (22) and integrity
				 * constraint violations (23) are about this
				 * record (the upsert's contract, in
				 * sql/migrations/002_upsert.sql): it would be
				 * refused again.  Anything else (timeouts,
				 * permissions, a missing schema, a shutdown)
				 * may pass later. */
				ret = state != NULL && (strncmp(state, "22", 2) == 0 ||
							strncmp(state, "23", 2) == 0) ?
				      -EBADMSG : -EIO;
				say_pq(err, err_size, state != NULL ? state : "error",
				       pq->resultErrorMessage(res));
			}
			break;
		}
		pq->clear(res);
	}
	if (ret == 0 && pq->status(c) != CONNECTION_OK) {
		say_pq(err, err_size, "connection lost", pq->errorMessage(c));
		ret = -EIO;
	}
	return ret;
}

/* One statement, sent and answered before DEADLINE. */
static int
db_exec(struct ceems_db *db, const char *sql, const char *param,
	uint64_t deadline, char *err, size_t err_size)
{
	int r = db_send(db, sql, param, deadline, err, err_size);

	return r < 0 ? r : db_finish(db, deadline, err, err_size);
}

static int
db_connect_until(const struct ceems_config *config, uint64_t deadline,
		 struct ceems_db **out, char *err, size_t err_size)
{
	static const char *const keys[] = { "dbname", "connect_timeout",
		"fallback_application_name", NULL };
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	const struct ceems_pg_lib *pq;
	struct ceems_db *db;
	const char *values[4];
	char timeout_s[24], set[200];
	uint64_t now, stmt_ms;
	int r;

	*out = NULL;
	if (config->database[0] == '\0') {
		say(err, err_size, "no database configured");
		return -ENOTSUP;
	}
	r = ceems_pg_lib_load(&pq, err, err_size);
	if (r < 0)
		return r;
	db = calloc(1, sizeof(*db));
	if (db == NULL) {
		say(err, err_size, "out of memory");
		return -ENOMEM;
	}
	db->pq = pq;
	db->timeout_ns = config->database_timeout_ns;
	/* libpq's own limit too (whole seconds, at least 2), in case a
	 * step of its connection blocks where our poll does not reach. */
	snprintf(timeout_s, sizeof(timeout_s), "%llu",
		 (unsigned long long)(db->timeout_ns / 1000000000u < 2 ? 2 :
				      (db->timeout_ns + 999999999u) / 1000000000u));
	values[0] = config->database;	/* expanded: a connection string */
	values[1] = timeout_s;
	values[2] = "ceems";
	values[3] = NULL;
	db->conn = pq->connectStartParams(keys, values, 1);
	if (db->conn == NULL) {
		free(db);
		say(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (pq->status(db->conn) == CONNECTION_BAD) {
		say_pq(err, err_size, "cannot connect", pq->errorMessage(db->conn));
		ceems_storage_db_close(db);
		return -ECONNREFUSED;
	}
	/* The first PQconnectPoll comes after the socket is writable. */
	while (st != PGRES_POLLING_OK) {
		if (st == PGRES_POLLING_FAILED) {
			say_pq(err, err_size, "cannot connect", pq->errorMessage(db->conn));
			ceems_storage_db_close(db);
			return -ECONNREFUSED;
		}
		r = wait_fd(pq->socket(db->conn),
			    st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline);
		if (r < 0) {
			if (r == -ETIMEDOUT)
				say(err, err_size, "cannot connect within %.1f s",
				    (double)db->timeout_ns / 1e9);
			else
				say(err, err_size, "cannot connect: %s", strerror(-r));
			ceems_storage_db_close(db);
			return r;
		}
		st = pq->connectPoll(db->conn);
	}
	if (pq->setnonblocking(db->conn, 1) != 0) {
		say_pq(err, err_size, "cannot connect", pq->errorMessage(db->conn));
		ceems_storage_db_close(db);
		return -EIO;
	}
	/* The server gives up a statement by itself a little before we
	 * would (so that it does not go on after we left): a locked row or
	 * a slow disk there cannot hold a record past the timeout.  And a
	 * commit must be durable before the spool forgets the record: with
	 * synchronous_commit off, the server could lose a commit it has
	 * confirmed ("local" and stronger settings are kept). */
	now = ceems_clock_monotonic_ns();
	stmt_ms = now < deadline ? (deadline - now) / 1000000u * 9 / 10 : 1;
	snprintf(set, sizeof(set), "SET statement_timeout = %llu; "
		 "SELECT set_config('synchronous_commit', 'on', false) "
		 "WHERE current_setting('synchronous_commit') = 'off'",
		 (unsigned long long)(stmt_ms > 0 ? stmt_ms : 1));
	r = db_exec(db, set, NULL, deadline, err, err_size);
	if (r < 0) {
		ceems_storage_db_close(db);
		return r == -EBADMSG ? -EIO : r;
	}
	*out = db;
	return 0;
}

int
ceems_storage_db_connect(const struct ceems_config *config, struct ceems_db **db,
		 char *err, size_t err_size)
{
	return db_connect_until(config, ceems_clock_monotonic_ns() + config->database_timeout_ns,
				db, err, err_size);
}

int
ceems_storage_db_upsert(struct ceems_db *db, const char *json, char *err,
		size_t err_size)
{
	return db_exec(db, UPSERT_SQL, json, ceems_clock_monotonic_ns() + db->timeout_ns, err,
		       err_size);
}

int
ceems_storage_db_upsert_batch(struct ceems_db *db, const char *json_array,
		      char *err, size_t err_size)
{
	int r = ceems_storage_db_upsert_batch_send(db, json_array, err, err_size);

	return r < 0 ? r : ceems_storage_db_upsert_batch_finish(db, err, err_size);
}

int
ceems_storage_db_upsert_batch_send(struct ceems_db *db, const char *json_array,
			   char *err, size_t err_size)
{
	uint64_t deadline = ceems_clock_monotonic_ns() + db->timeout_ns;
	int r;

	if (db->deadline != 0) {
		say(err, err_size, "a batch is already in flight");
		return -EBUSY;
	}
	r = db_send(db, UPSERT_BATCH_SQL, json_array, deadline, err, err_size);
	if (r == 0)
		db->deadline = deadline;
	return r;
}

int
ceems_storage_db_upsert_batch_finish(struct ceems_db *db, char *err, size_t err_size)
{
	uint64_t deadline = db->deadline;

	if (deadline == 0) {
		say(err, err_size, "no batch in flight");
		return -EINVAL;
	}
	db->deadline = 0;
	return db_finish(db, deadline, err, err_size);
}

void
ceems_storage_db_close(struct ceems_db *db)
{
	if (db == NULL)
		return;
	db->pq->finish(db->conn);
	free(db);
}

/* Connect, store, disconnect, all before one deadline. */
static int
store_in_database(const struct ceems_config *config, const char *json,
		  char *err, size_t err_size)
{
	uint64_t deadline = ceems_clock_monotonic_ns() + config->database_timeout_ns;
	struct ceems_db *db;
	int r;

	r = db_connect_until(config, deadline, &db, err, err_size);
	if (r < 0)
		return r;
	r = db_exec(db, UPSERT_SQL, json, deadline, err, err_size);
	ceems_storage_db_close(db);
	return r;
}

#else /* !HAVE_LIBPQ */

int
ceems_storage_db_connect(const struct ceems_config *config, struct ceems_db **db,
		 char *err, size_t err_size)
{
	(void)config;
	*db = NULL;
	say(err, err_size, "this ceems was built without PostgreSQL (--without-pq)");
	return -ENOTSUP;
}

int
ceems_storage_db_upsert(struct ceems_db *db, const char *json, char *err,
		size_t err_size)
{
	(void)db;
	(void)json;
	say(err, err_size, "this ceems was built without PostgreSQL (--without-pq)");
	return -ENOTSUP;
}

int
ceems_storage_db_upsert_batch(struct ceems_db *db, const char *json_array,
		      char *err, size_t err_size)
{
	(void)db;
	(void)json_array;
	say(err, err_size, "this ceems was built without PostgreSQL (--without-pq)");
	return -ENOTSUP;
}

int
ceems_storage_db_upsert_batch_send(struct ceems_db *db, const char *json_array,
			   char *err, size_t err_size)
{
	return ceems_storage_db_upsert_batch(db, json_array, err, err_size);
}

int
ceems_storage_db_upsert_batch_finish(struct ceems_db *db, char *err, size_t err_size)
{
	(void)db;
	say(err, err_size, "this ceems was built without PostgreSQL (--without-pq)");
	return -ENOTSUP;
}

void
ceems_storage_db_close(struct ceems_db *db)
{
	(void)db;
}

#endif /* HAVE_LIBPQ */

/* Keep an unstorable record in rejected/ and say so in ERR. */
static int
reject(const struct ceems_config *config,
       const struct ceems_job_record *record, const char *text, size_t len,
       const char *why, bool log_whole, char *err, size_t err_size)
{
	char name[CEEMS_SPOOL_NAME_MAX + 8], tag[CEEMS_SPOOL_NAME_MAX];
	char spool_err[512];
	int r;

	r = ceems_spool_reject(config->spool_dir, record, text, len, why, name,
			       sizeof(name), spool_err, sizeof(spool_err));
	if (r < 0) {
		if (ceems_spool_name(record, tag, sizeof(tag)) < 0)
			snprintf(tag, sizeof(tag), "job-%u", (unsigned)record->meta.jobid);
		if (log_whole)
			ceems_spool_log_record(tag, text, len);
		say(err, err_size, "job %u: %s; and it cannot be kept (%s)%s%s",
		    (unsigned)record->meta.jobid, why, spool_err,
		    log_whole ? ": logged whole as ceems-record " : "",
		    log_whole ? tag : "");
		return r;
	}
	say(err, err_size, "job %u: %s; the record is kept as %s/%s/%s",
	    (unsigned)record->meta.jobid, why, config->spool_dir,
	    CEEMS_SPOOL_REJECTED, name);
	return -EINVAL;
}

static int
store_record(const struct ceems_config *config,
	     const struct ceems_job_record *record, bool log_whole, char *err,
	     size_t err_size)
{
	char why[512], name[CEEMS_SPOOL_NAME_MAX + 8], tag[CEEMS_SPOOL_NAME_MAX];
	char spool_err[512];
	/* For a record that cannot be encoded whole: on the stack, since
	 * the heap may be what is missing. */
	struct ceems_job_record scratch;
	char small[CEEMS_RECORD_REDUCED_MAX];
	char *heap, *text;
	int len, r;

	/* Without the heap, a record still fits here (a few KiB; its
	 * reduced form always does). */
	heap = malloc(CEEMS_RECORD_MAX + 1);
	text = heap != NULL ? heap : small;
	len = ceems_record_reduce_encode_fallback(record, text, heap != NULL ?
					   CEEMS_RECORD_MAX + 1 : sizeof(small),
					   &scratch);
	if (len < 0) {
		say(err, err_size, "job %u: the record cannot be encoded: %s",
		    (unsigned)record->meta.jobid, strerror(-len));
		free(heap);
		return len;
	}
	if (ceems_record_validate(record, why, sizeof(why)) < 0) {
		char full[600];

		snprintf(full, sizeof(full), "invalid record: %s", why);
		r = reject(config, record, text, (size_t)len, full, log_whole,
			   err, err_size);
		free(heap);
		return r;
	}
	if (config->database[0] != '\0') {
#ifdef HAVE_LIBPQ
		r = store_in_database(config, text, why, sizeof(why));
		if (r == 0) {
			free(heap);
			return CEEMS_STORED_DATABASE;
		}
		if (r == -EBADMSG) {
			char full[600];

			snprintf(full, sizeof(full), "refused by the database: %s", why);
			r = reject(config, record, text, (size_t)len, full, log_whole,
			   err, err_size);
			free(heap);
			return r;
		}
		ceems_warning("job %u: database: %s: the record goes to the spool %s "
			      "(the node agent stores it later)",
			      (unsigned)record->meta.jobid, why, config->spool_dir);
#else
		ceems_warning("job %u: a database is configured but this ceems was "
			      "built without PostgreSQL: the record goes to the spool %s",
			      (unsigned)record->meta.jobid, config->spool_dir);
#endif
	}
	r = ceems_spool_put(config->spool_dir, config->spool_max_bytes, record,
			    text, (size_t)len, name, sizeof(name), spool_err,
			    sizeof(spool_err));
	if (r < 0) {
		if (ceems_spool_name(record, tag, sizeof(tag)) < 0)
			snprintf(tag, sizeof(tag), "job-%u", (unsigned)record->meta.jobid);
		if (log_whole) {
			ceems_spool_log_record(tag, text, (size_t)len);
			say(err, err_size, "job %u: %s: the record was logged "
			    "whole as ceems-record %s",
			    (unsigned)record->meta.jobid, spool_err, tag);
		} else
			say(err, err_size, "job %u: %s", (unsigned)record->meta.jobid,
			    spool_err);
		free(heap);
		return r;
	}
	ceems_debug("job %u: record spooled as %s/%s", (unsigned)record->meta.jobid,
		    config->spool_dir, name);
	free(heap);
	return CEEMS_STORED_SPOOL;
}

int
ceems_storage_store(const struct ceems_config *config,
		    const struct ceems_job_record *record, char *err,
		    size_t err_size)
{
	return store_record(config, record, true, err, err_size);
}

int
ceems_storage_store_again(const struct ceems_config *config,
			  const struct ceems_job_record *record, char *err,
			  size_t err_size)
{
	return store_record(config, record, false, err, err_size);
}
