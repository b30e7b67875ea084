/* admin_definitions.h - the definitions of ceems-admin: the functions,
 * triggers, views and row-level security policies of the schema, one
 * current text each in sql/functions, sql/triggers, sql/views and
 * sql/policies, applied whole after the migrations and recorded by the
 * checksum of the set in ceems.schema_definitions. */
#ifndef CEEMS_ADMIN_DEFINITIONS_H
#define CEEMS_ADMIN_DEFINITIONS_H

#include <stddef.h>

#include <libpq-fe.h>

#define ADMIN_DEFINITIONS_MAX 256
#define ADMIN_DEFINITION_NAME_MAX 128

struct admin_definitions {
	char root[4096];			/* the folder above the four */
	size_t count;
	/* "functions/json.sql", ... in the order they are applied */
	char list[ADMIN_DEFINITIONS_MAX][ADMIN_DEFINITION_NAME_MAX];
};

/* List the definition files under ROOT: the folders functions, triggers,
 * views and policies in that order, the files of each (lower-case
 * letters, digits and underscores, ending in .sql) by name.  A missing
 * folder is an error.  Returns 0, or -1 with ERR filled. */
int admin_definitions_scan(const char *root, struct admin_definitions *out,
			   char *err, size_t err_size);

/* The files' names and texts, in order, as one string (the input of the
 * checksum): a new NUL-terminated buffer, or NULL with ERR. */
char *admin_definitions_text(const struct admin_definitions *d, char *err,
			     size_t err_size);

/* Whether the database holds these definitions: 1 when its recorded
 * checksum is the files', 0 when it differs, -1 with ERR on error;
 * *APPLIED is 0 when none were ever recorded. */
int admin_definitions_current(PGconn *conn, const struct admin_definitions *d,
			      int *applied, char *err, size_t err_size);

/* Apply every file in order, then ceems.adopt_objects(), and record the
 * checksum, inside the caller's transaction.  Returns 0, or -1 with ERR
 * naming the file that failed (the caller rolls back). */
int admin_definitions_apply(PGconn *conn, const struct admin_definitions *d,
			    char *err, size_t err_size);

#endif
