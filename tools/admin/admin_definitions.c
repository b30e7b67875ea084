/* admin_definitions.c - applies the schema's definitions: the functions,
 * triggers, views and policies of sql/functions, sql/triggers, sql/views
 * and sql/policies.  Each file holds the current text of its objects,
 * written so that applying it again changes nothing (CREATE OR REPLACE,
 * DROP ... IF EXISTS then CREATE).  ceems-admin applies them all, in the
 * fixed order of the folders above and by name within each, after the
 * migrations and in their transaction, and records the md5 of the set
 * (names and texts) in ceems.schema_definitions: db status compares it
 * with the files, db migrate applies them again when it differs. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin_definitions.h"
#include "admin_sql.h"

/* The folders in the order they are applied: a trigger needs its
 * function, a view may call a function, a policy needs nothing. */
static const char *const folders[] = { "functions", "triggers", "views", "policies" };

/* "name.sql" with lower-case letters, digits and underscores. */
static int
definition_name(const char *name)
{
	size_t len = strlen(name);

	if (len < 5 || len >= ADMIN_DEFINITION_NAME_MAX - 16 ||
	    strcmp(name + len - 4, ".sql") != 0)
		return 0;
	for (size_t i = 0; i < len - 4; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int
scan_folder(struct admin_definitions *out, const char *folder, char *err,
	    size_t err_size)
{
	char path[sizeof(out->root) + 16];
	size_t first = out->count;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", out->root, folder);
	if ((d = opendir(path)) == NULL)
		return admin_sql_fail(err, err_size,
			    "cannot read the definitions in %s: %s (they are installed with the migrations)",
			    path, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		if (!definition_name(de->d_name))
			continue;
		if (out->count == ADMIN_DEFINITIONS_MAX) {
			closedir(d);
			return admin_sql_fail(err, err_size, "%s: too many definition files", out->root);
		}
		/* definition_name checked the length. */
		snprintf(out->list[out->count], sizeof(out->list[0]), "%s/%s",
			 folder, de->d_name);
		out->count++;
	}
	closedir(d);
	qsort(out->list[first], out->count - first, sizeof(out->list[0]), by_name);
	return 0;
}

int
admin_definitions_scan(const char *root, struct admin_definitions *out,
		       char *err, size_t err_size)
{
	memset(out, 0, sizeof(*out));
	if (strlen(root) >= sizeof(out->root))
		return admin_sql_fail(err, err_size, "%s: path too long", root);
	snprintf(out->root, sizeof(out->root), "%s", root);
	for (size_t i = 0; i < sizeof(folders) / sizeof(folders[0]); i++)
		if (scan_folder(out, folders[i], err, err_size) < 0)
			return -1;
	return 0;
}

static char *
read_definition(const struct admin_definitions *d, size_t i, char *err,
		size_t err_size)
{
	char path[sizeof(d->root) + ADMIN_DEFINITION_NAME_MAX + 2];

	snprintf(path, sizeof(path), "%s/%s", d->root, d->list[i]);
	return admin_sql_read_file(path, err, err_size);
}

char *
admin_definitions_text(const struct admin_definitions *d, char *err,
		       size_t err_size)
{
	char *all = NULL, *text, *grown;
	size_t len = 0, add;

	for (size_t i = 0; i < d->count; i++) {
		if ((text = read_definition(d, i, err, err_size)) == NULL) {
			free(all);
			return NULL;
		}
		/* name, newline, text, NUL-free: a file renamed or moved
		 * changes the checksum as an edit does. */
		add = strlen(d->list[i]) + 1 + strlen(text);
		if ((grown = realloc(all, len + add + 1)) == NULL) {
			free(text);
			free(all);
			admin_sql_fail(err, err_size, "out of memory");
			return NULL;
		}
		all = grown;
		snprintf(all + len, add + 1, "%s\n%s", d->list[i], text);
		len += add;
		free(text);
	}
	if (all == NULL && (all = calloc(1, 1)) == NULL)
		admin_sql_fail(err, err_size, "out of memory");
	return all;
}

int
admin_definitions_current(PGconn *conn, const struct admin_definitions *d,
			  int *applied, char *err, size_t err_size)
{
	const char *params[1];
	PGresult *res;
	char *text;
	int r;

	*applied = 0;
	res = PQexec(conn, "SELECT to_regclass('ceems.schema_definitions') IS NOT NULL");
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1) {
		admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	r = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	if (!r)
		return 0;
	if ((text = admin_definitions_text(d, err, err_size)) == NULL)
		return -1;
	params[0] = text;
	res = PQexecParams(conn,
			   "SELECT checksum = md5($1) FROM ceems.schema_definitions",
			   1, NULL, params, NULL, NULL, 0);
	free(text);
	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		admin_sql_fail(err, err_size, "%s", admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	*applied = PQntuples(res) > 0;
	r = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return r;
}

static int
exec_file(PGconn *conn, const char *name, const char *sql, char *err,
	  size_t err_size)
{
	PGresult *res = PQexec(conn, sql);
	ExecStatusType s = PQresultStatus(res);
	int r = 0;

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
		r = admin_sql_fail(err, err_size, "%s: %s", name, admin_sql_pq_message(conn, res));
	PQclear(res);
	return r;
}

int
admin_definitions_apply(PGconn *conn, const struct admin_definitions *d,
			char *err, size_t err_size)
{
	const char *params[2];
	char count[16];
	PGresult *res;
	char *text;

	for (size_t i = 0; i < d->count; i++) {
		if ((text = read_definition(d, i, err, err_size)) == NULL)
			return -1;
		if (exec_file(conn, d->list[i], text, err, err_size) < 0) {
			free(text);
			return -1;
		}
		free(text);
	}
	if (exec_file(conn, "after the definitions", "CALL ceems.adopt_objects()",
		      err, err_size) < 0)
		return -1;
	if ((text = admin_definitions_text(d, err, err_size)) == NULL)
		return -1;
	snprintf(count, sizeof(count), "%zu", d->count);
	params[0] = text;
	params[1] = count;
	res = PQexecParams(conn,
			   "INSERT INTO ceems.schema_definitions (checksum, files) "
			   "VALUES (md5($1), $2::integer) "
			   "ON CONFLICT (one) DO UPDATE SET checksum = EXCLUDED.checksum, "
			   "files = EXCLUDED.files, applied_at = now()",
			   2, NULL, params, NULL, NULL, 0);
	free(text);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		admin_sql_fail(err, err_size, "recording the definitions: %s",
		     admin_sql_pq_message(conn, res));
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return 0;
}
