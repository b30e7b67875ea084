/* sacct_pg.h - ceems-sacct's PostgreSQL backend: ceems.jobs and its
 * child tables, read as the user who runs the tool, so that row-level
 * security decides what they see (doc/storage.md, "Roles").  Every value
 * is a query parameter. */
#ifndef CEEMS_SACCT_PG_H
#define CEEMS_SACCT_PG_H

#include <stdbool.h>
#include <stddef.h>

#include "sacct_query.h"

struct sacct_pg;

/* Connect with CONNINFO (a connection string, URI or service=NAME),
 * within 10 s unless CONNINFO, its service or PGCONNECT_TIMEOUT sets
 * connect_timeout.  NULL with ERR, and *REFUSED true when the server
 * answered and refused the connection (not a database that is down). */
struct sacct_pg *sacct_pg_connect(const char *conninfo, bool *refused, char *err,
				  size_t err_size);
void sacct_pg_close(struct sacct_pg *pg);

/* Who the database says the caller is, and what they may see.  Returns
 * 0, -1 on a database error or a schema older than the tool reads, or
 * SACCT_PG_NO_READ when the role may not read the jobs (not in
 * ceems_reader or ceems_admin: a writer's connection, for instance); ERR
 * says which in one line. */
#define SACCT_PG_NO_READ (-2)
int sacct_pg_identity(struct sacct_pg *pg, char *user, size_t user_size,
		      bool *admin, bool *coordinator, char *err,
		      size_t err_size);

/* The job rows (and step rows unless -X) Q selects. */
int sacct_pg_listing_rows(struct sacct_pg *pg, const struct sacct_query *q,
		  struct sacct_rows *rows, char *err, size_t err_size);

/* The node records of the jobs Q selects, rebuilt from the stored
 * columns (what the database does not keep is absent), and, with
 * SERIES, their time series from ceems.job_samples. */
int sacct_pg_records(struct sacct_pg *pg, const struct sacct_query *q,
		     bool series, struct sacct_records *recs, char *err,
		     size_t err_size);

#endif
