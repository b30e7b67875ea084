/* storage.h - where a finished job's record goes: PostgreSQL through
 * libpq when a database is configured and answers within
 * database_timeout, else the durable spool (lib/record/spool.h), from which the
 * node agent replays it later (lib/record/replay.h).  With no database
 * configured the spool is the store itself.  A record that fails
 * validation, or that the database refuses as wrong, is kept in the
 * spool's rejected folder.  Nothing is ever dropped (design
 * invariant 3); doc/storage.md has the whole story.
 *
 * The database is reached with the configured `database` string (a libpq
 * connection string, URI or "service=NAME"), so TLS, peer authentication
 * and passwords (~/.pgpass, service files) are the admin's choice, and
 * each record is stored by one idempotent call,
 * SELECT ceems.upsert_job_record($1::jsonb), so that a replay changes
 * nothing.  A record with a time series ("series", lib/model/agent_series.h)
 * has its rows added to ceems.job_samples by ceems.add_job_samples in
 * the same statement (idempotent too). */
#ifndef CEEMS_STORAGE_H
#define CEEMS_STORAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/conf.h"
#include "record/record.h"

/* What ceems_storage_store did with a record (errors are negative). */
enum ceems_storage_outcome {
	CEEMS_STORED_DATABASE = 0,	/* committed in PostgreSQL */
	CEEMS_STORED_SPOOL = 1,		/* in the spool (replayed later, or
					 * for good without a database) */
};

/* Store RECORD at the end of its job.  Bounded: the database part takes
 * at most config->database_timeout, connection included.  Returns a
 * ceems_storage_outcome, or: -EINVAL when the record is invalid or the
 * database refused it (kept in the spool's rejected folder, ERR says
 * why and where); another -errno when not even the spool could take it
 * (ERR says why; the record was then logged whole at error level, see
 * ceems_spool_log_record). */
int ceems_storage_store(const struct ceems_config *config,
			const struct ceems_job_record *record, char *err,
			size_t err_size);
/* The same for a record whose first try failed and was logged whole
 * then: a failure now is not logged whole again (ERR says why). */
int ceems_storage_store_again(const struct ceems_config *config,
			      const struct ceems_job_record *record, char *err,
			      size_t err_size);

/* Whether records go to a database: one is configured and this build
 * has libpq (which is loaded only when connecting: installed or not, it
 * is not looked for here). */
bool ceems_storage_have_database(const struct ceems_config *config);

/* ---- one database connection, kept by the replay ---- */

struct ceems_db;

/* Connect within config->database_timeout.  libpq is loaded at the
 * first connection (record/pg_lib.h).  Returns 0 with *DB set, or
 * -errno with ERR: -ENOTSUP when built without libpq or without a
 * database configured, -ENOENT when libpq is not installed (-ENOSYS:
 * too old), -ETIMEDOUT, -ECONNREFUSED (libpq's message in ERR). */
int ceems_storage_db_connect(const struct ceems_config *config,
		     struct ceems_db **db, char *err, size_t err_size);

/* Store one record (its JSON text) within the configured timeout.
 * Returns 0 once the database has committed it; -EBADMSG when the
 * database refused the record itself (SQLSTATE class 22 or 23: a data
 * or constraint error, retrying cannot help); -ETIMEDOUT or -EIO
 * otherwise (the connection is then broken: close it, retry later).
 * The transaction is the single statement: a failure leaves nothing
 * half-written. */
int ceems_storage_db_upsert(struct ceems_db *db, const char *json, char *err,
		    size_t err_size);

/* Store a JSON array of records in one statement, all or nothing
 * (ceems.upsert_job_records, sql/migrations/006_batch.sql).  Returns as
 * ceems_storage_db_upsert; -EBADMSG means one of them was refused: store them
 * one by one to find it. */
int ceems_storage_db_upsert_batch(struct ceems_db *db, const char *json_array,
			  char *err, size_t err_size);

/* ceems_storage_db_upsert_batch in two halves, so that the caller can prepare
 * the next batch while the database stores this one: _send returns once
 * the statement is sent (JSON_ARRAY may then be reused; -EBUSY if a
 * batch is in flight), _finish waits for its outcome, returned as
 * ceems_storage_db_upsert_batch would, the timeout counted from the send.  Only
 * _finish (or ceems_storage_db_close) may follow a successful _send. */
int ceems_storage_db_upsert_batch_send(struct ceems_db *db, const char *json_array,
			       char *err, size_t err_size);
int ceems_storage_db_upsert_batch_finish(struct ceems_db *db, char *err,
				 size_t err_size);

void ceems_storage_db_close(struct ceems_db *db);

#endif
