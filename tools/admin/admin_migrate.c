/* admin_migrate.c - applies sql/migrations/NNN_name.sql in order, then,
 * on reaching the last, the definitions (functions, triggers, views,
 * policies: admin_definitions.c), all in one transaction: a failure
 * leaves the database as it was before the run.  An advisory lock taken
 * in the transaction keeps two concurrent runs from applying the same
 * file twice. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "admin_migrate.h"
#include "admin_sql.h"

/* pg_advisory_xact_lock key: "ceems" in ASCII, 0x6365656d73. */
#define MIGRATION_LOCK "426902908275"

int
admin_migrate_version_of(const char *name)
{
	size_t len = strlen(name);
	int version;

	if (len < 9 || len >= ADMIN_MIGRATION_NAME_MAX ||
	    strcmp(name + len - 4, ".sql") != 0 || name[3] != '_')
		return -1;
	for (size_t i = 0; i < 3; i++)
		if (name[i] < '0' || name[i] > '9')
			return -1;
	for (size_t i = 4; i < len - 4; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return -1;
	}
	version = (name[0] - '0') * 100 + (name[1] - '0') * 10 + (name[2] - '0');
	return version >= 1 ? version : -1;
}

static int
by_version(const void *a, const void *b)
{
	const struct admin_migration *x = a, *y = b;

	return (x->version > y->version) - (x->version < y->version);
}

/* The definitions live in the folder above the migrations'. */
static int
scan_definitions(struct admin_migrations *out, char *err, size_t err_size)
{
	char root[sizeof(out->dir) + 4];
	size_t len = strlen(out->dir);

	/* ".../sql/migrations" names its folder ".../sql" in messages. */
	if (len > 11 && strcmp(out->dir + len - 11, "/migrations") == 0)
		snprintf(root, sizeof(root), "%.*s", (int)(len - 11), out->dir);
	else
		snprintf(root, sizeof(root), "%s/..", out->dir);
	return admin_definitions_scan(root, &out->defs, err, err_size);
}

int
admin_migrate_scan(const char *dir, struct admin_migrations *out,
		      char *err, size_t err_size)
{
	struct dirent *de;
	DIR *d;

	memset(out, 0, sizeof(*out));
	if (strlen(dir) >= sizeof(out->dir))
		return admin_sql_fail(err, err_size, "%s: path too long", dir);
	snprintf(out->dir, sizeof(out->dir), "%s", dir);
	if ((d = opendir(dir)) == NULL)
		return admin_sql_fail(err, err_size, "cannot read the migrations in %s: %s",
			    dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		int v = admin_migrate_version_of(de->d_name);

		if (v < 0)
			continue;
		if (out->count == ADMIN_MIGRATIONS_MAX) {
			closedir(d);
			return admin_sql_fail(err, err_size, "%s: too many migrations", dir);
		}
		out->list[out->count].version = v;
		/* admin_migrate_version_of checked the length. */
		memcpy(out->list[out->count].name, de->d_name,
		       strlen(de->d_name) + 1);
		out->count++;
	}
	closedir(d);
	if (out->count == 0)
		return admin_sql_fail(err, err_size, "no migrations (NNN_name.sql) in %s", dir);
	qsort(out->list, out->count, sizeof(out->list[0]), by_version);
	for (size_t i = 0; i < out->count; i++)
		if (out->list[i].version != (int)i + 1)
			return admin_sql_fail(err, err_size,
				    "%s: migrations must be numbered 001, 002, ... without gaps or twins (found %s)",
				    dir, out->list[i].name);
	return scan_definitions(out, err, err_size);
}

static char *
read_migration(const struct admin_migrations *m, const struct admin_migration *mig,
	       char *err, size_t err_size)
{
	char path[sizeof(m->dir) + ADMIN_MIGRATION_NAME_MAX + 2];

	snprintf(path, sizeof(path), "%s/%s", m->dir, mig->name);
	return admin_sql_read_file(path, err, err_size);
}

static int
exec_ok(PGconn *conn, const char *sql, char *err, size_t err_size)
{
	PGresult *res = PQexec(conn, sql);
	ExecStatusType s = PQresultStatus(res);
	int r = 0;

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
		r = admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
	PQclear(res);
	return r;
}

int
admin_migrate_schema_version(PGconn *conn, int *version, char *err, size_t err_size)
{
	PGresult *res;

	res = PQexec(conn,
		     "SELECT CASE WHEN to_regclass('ceems.schema_version') IS NULL THEN -1 END");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	if (!PQgetisnull(res, 0, 0)) {
		PQclear(res);
		/* A ceems schema without a version table is somebody else's. */
		res = PQexec(conn, "SELECT to_regnamespace('ceems') IS NOT NULL");
		if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1 &&
		    strcmp(PQgetvalue(res, 0, 0), "t") == 0) {
			PQclear(res);
			return admin_sql_fail(err, err_size,
				    "the database has a schema \"ceems\" without ceems.schema_version: not made by ceems-admin, refusing to touch it");
		}
		PQclear(res);
		*version = 0;
		return 0;
	}
	PQclear(res);
	res = PQexec(conn, "SELECT coalesce(max(version), 0) FROM ceems.schema_version");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	*version = atoi(PQgetvalue(res, 0, 0));
	PQclear(res);
	return 0;
}

/* Apply one migration and record it, inside the caller's transaction. */
static int
apply_one(PGconn *conn, const struct admin_migrations *m,
	  const struct admin_migration *mig, char *err, size_t err_size)
{
	const char *params[3];
	char version[16];
	char *text;
	PGresult *res;

	if ((text = read_migration(m, mig, err, err_size)) == NULL)
		return -1;
	res = PQexec(conn, text);
	if (PQresultStatus(res) != PGRES_COMMAND_OK &&
	    PQresultStatus(res) != PGRES_TUPLES_OK) {
		admin_sql_fail(err, err_size, "%s: %s", mig->name, admin_sql_pq_message(conn, res));
		PQclear(res);
		free(text);
		return -1;
	}
	PQclear(res);
	snprintf(version, sizeof(version), "%d", mig->version);
	params[0] = version;
	params[1] = mig->name;
	params[2] = text;
	res = PQexecParams(conn,
			   "INSERT INTO ceems.schema_version (version, name, checksum) "
			   "VALUES ($1::integer, $2, md5($3))",
			   3, NULL, params, NULL, NULL, 0);
	free(text);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		admin_sql_fail(err, err_size, "%s: recording the version: %s", mig->name,
		     admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}

/* The version read under the lock, refused when newer than the files or
 * than TARGET. */
static int
check_version(PGconn *conn, const struct admin_migrations *m, int target,
	      int *current, char *err, size_t err_size)
{
	int last = m->list[m->count - 1].version;

	if (admin_migrate_schema_version(conn, current, err, err_size) < 0)
		return -1;
	if (*current > last)
		return admin_sql_fail(err, err_size,
			    "the database is at schema version %d, newer than the migrations in %s (up to %d): refusing to downgrade; use the ceems-admin of the newer release",
			    *current, m->dir, last);
	if (*current > target)
		return admin_sql_fail(err, err_size,
			    "the database is at schema version %d, past %d: refusing to downgrade",
			    *current, target);
	return 0;
}

/* The migrations after CURRENT up to TARGET, then the definitions when
 * TARGET is the last and a migration ran or they are not the files'. */
static int
apply_pending(PGconn *conn, const struct admin_migrations *m, int current,
	      int target, int verbose, char *err, size_t err_size)
{
	int applied = 0, defs_applied, r;

	for (size_t i = (size_t)current; i < m->count && m->list[i].version <= target; i++) {
		if (apply_one(conn, m, &m->list[i], err, err_size) < 0)
			return -1;
		applied++;
		if (verbose)
			printf("applied %s\n", m->list[i].name);
	}
	if (target != m->list[m->count - 1].version)
		return applied;
	if (applied == 0) {
		r = admin_definitions_current(conn, &m->defs, &defs_applied, err, err_size);
		if (r < 0)
			return -1;
		if (r == 1)
			return 0;
	}
	if (admin_definitions_apply(conn, &m->defs, err, err_size) < 0)
		return -1;
	if (verbose)
		printf("applied the definitions (%zu files)\n", m->defs.count);
	return applied;
}

int
admin_migrate(PGconn *conn, const struct admin_migrations *m, int target,
	      int verbose, char *err, size_t err_size)
{
	int last = m->list[m->count - 1].version;
	int current, applied;
	PGresult *res;

	if (target == 0)
		target = last;
	if (target < 0 || target > last)
		return admin_sql_fail(err, err_size, "no migration %03d in %s (the last is %03d)",
			    target, m->dir, last);
	if (exec_ok(conn, "BEGIN", err, err_size) < 0)
		return -1;
	if (exec_ok(conn, "SELECT pg_advisory_xact_lock(" MIGRATION_LOCK ")",
		    err, err_size) < 0 ||
	    check_version(conn, m, target, &current, err, err_size) < 0 ||
	    (applied = apply_pending(conn, m, current, target, verbose,
				     err, err_size)) < 0)
		goto rollback;
	return exec_ok(conn, "COMMIT", err, err_size) < 0 ? -1 : applied;

rollback:
	res = PQexec(conn, "ROLLBACK");
	PQclear(res);
	return -1;
}

/* One line on the definitions; 1 when they are the files'. */
static int
status_definitions(PGconn *conn, const struct admin_migrations *m, int current,
		   char *err, size_t err_size)
{
	int applied, r;

	if (current == 0)
		return 0;
	if ((r = admin_definitions_current(conn, &m->defs, &applied, err, err_size)) < 0)
		return -1;
	if (r == 1)
		printf("definitions: current (%zu files in %s)\n", m->defs.count,
		       m->defs.root);
	else if (applied)
		printf("definitions: changed since applied: ceems-admin db migrate applies them\n");
	else
		printf("definitions: not applied (they are with the last migration)\n");
	return r;
}

int
admin_migrate_status(PGconn *conn, const struct admin_migrations *m, char *err,
	     size_t err_size)
{
	int last = m->list[m->count - 1].version;
	int current, pending = 0, defs;

	if (admin_migrate_schema_version(conn, &current, err, err_size) < 0)
		return -1;
	printf("schema version: %d\n", current);
	printf("available: %d (%s)\n", last, m->dir);
	if (current > last)
		printf("the database is newer than these migrations: use a newer ceems-admin\n");
	/* Applied migrations whose file changed since. */
	for (size_t i = 0; i < m->count && m->list[i].version <= current; i++) {
		const char *params[2];
		char version[16];
		PGresult *res;
		char *text;

		if ((text = read_migration(m, &m->list[i], err, err_size)) == NULL)
			return -1;
		snprintf(version, sizeof(version), "%d", m->list[i].version);
		params[0] = version;
		params[1] = text;
		res = PQexecParams(conn,
				   "SELECT checksum = md5($2) FROM ceems.schema_version "
				   "WHERE version = $1::integer",
				   2, NULL, params, NULL, NULL, 0);
		free(text);
		if (PQresultStatus(res) != PGRES_TUPLES_OK) {
			admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
			PQclear(res);
			return -1;
		}
		if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") != 0)
			printf("changed since applied: %s\n", m->list[i].name);
		PQclear(res);
	}
	for (size_t i = 0; i < m->count; i++)
		if (m->list[i].version > current) {
			printf("pending: %s\n", m->list[i].name);
			pending++;
		}
	if ((defs = status_definitions(conn, m, current, err, err_size)) < 0)
		return -1;
	if (pending == 0 && current == last && defs == 1)
		printf("up to date\n");
	return pending;
}
