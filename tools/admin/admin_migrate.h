/* admin_migrate.h - the schema migrations of ceems-admin: the numbered
 * files of sql/migrations (NNN_name.sql), applied in order and recorded
 * in ceems.schema_version, never downgraded, then the definitions of the
 * folders beside it (admin_definitions.h), all in one transaction. */
#ifndef CEEMS_ADMIN_MIGRATE_H
#define CEEMS_ADMIN_MIGRATE_H

#include <stddef.h>

#include <libpq-fe.h>

#include "admin_definitions.h"

#define ADMIN_MIGRATIONS_MAX 999
#define ADMIN_MIGRATION_NAME_MAX 96

struct admin_migration {
	int version;				/* NNN */
	char name[ADMIN_MIGRATION_NAME_MAX];	/* "001_schema.sql" */
};

struct admin_migrations {
	char dir[4096];
	size_t count;
	struct admin_migration list[ADMIN_MIGRATIONS_MAX];	/* by version */
	struct admin_definitions defs;	/* in DIR/.. */
};

/* Parse a file name: "NNN_words.sql" (lower-case letters, digits and
 * underscores) into its version.  Returns the version (1..999), or -1
 * for a name that is not a migration. */
int admin_migrate_version_of(const char *name);

/* List the migrations of DIR, sorted, and the definitions of the folder
 * above it.  Two files of one version, or a version missing between 1
 * and the last, are errors.  Returns 0, or -1 with ERR filled. */
int admin_migrate_scan(const char *dir, struct admin_migrations *out,
			  char *err, size_t err_size);

/* The database's schema version: 0 for none yet.  Returns 0 with
 * *VERSION set, or -1 with ERR. */
int admin_migrate_schema_version(PGconn *conn, int *version, char *err,
			 size_t err_size);

/* Apply every migration after the database's version, up to TARGET (0:
 * the last), then, when that is the last, the definitions if a migration
 * was applied or they changed; all in one transaction, so that a failure
 * leaves the database as it was.  Refuses (-1, ERR) when the database is
 * newer than the files or than TARGET.  Prints one line per migration
 * applied when VERBOSE.  Returns the number of migrations applied, or -1
 * with ERR. */
int admin_migrate(PGconn *conn, const struct admin_migrations *m, int target,
		  int verbose, char *err, size_t err_size);

/* Print the version, the migrations pending, applied ones whose file
 * changed since, and whether the definitions are the files'.  Returns
 * the number pending, or -1 with ERR. */
int admin_migrate_status(PGconn *conn, const struct admin_migrations *m, char *err,
		 size_t err_size);

#endif
