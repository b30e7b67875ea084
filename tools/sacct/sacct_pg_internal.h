/* sacct_pg_internal.h - what the two halves of ceems-sacct's PostgreSQL
 * backend share (sacct_pg.c: connection, identity, filters, records;
 * sacct_pg_listing.c: the listing).  Not for the rest of the tool. */
#ifndef CEEMS_SACCT_PG_INTERNAL_H
#define CEEMS_SACCT_PG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "sacct_query.h"

struct sacct_pg {
	PGconn *conn;
	long schema_version;	/* read by sacct_pg_identity, 0 before */
};

/* The schema that keeps jobs' marks (029_job_marks.sql): before it, a
 * job's work is unknown, never asked for. */
#define SACCT_PG_SCHEMA_VERSION_MARKS 29
/* The energy's error bound, jobs.energy_err_j (migration 030). */
#define SACCT_PG_SCHEMA_VERSION_ENERGY_ERR 30
/* The carbon-aware advice, job_nodes.advice_* (migration 033). */
#define SACCT_PG_SCHEMA_VERSION_ADVICE 33

/* SQL with N text PARAMS; results in text, or in binary with BINARY
 * (the listing's: pg_binary.h says why).  The rows, or NULL with ERR in
 * one line. */
PGresult *sacct_pg_query(struct sacct_pg *pg, const char *sql, int n,
			 const char *const *params, bool binary, char *err,
			 size_t err_size);

/* The values of the filters, as the text parameters $1..$8 of
 * sacct_pg_where and sacct_pg_where_rest: $1 window end, $2 window
 * start, $3 users, $4 accounts, $5 partitions, $6 states, $7 clusters,
 * $8 job ids (lists comma-separated, NULL when the filter is off). */
struct sacct_pg_params {
	char start[24], end[24];
	char *users, *accounts, *partitions, *states, *clusters, *jobs;
	const char *v[8];
};

int sacct_pg_params_fill(struct sacct_pg_params *p, const struct sacct_query *q);
void sacct_pg_params_free(struct sacct_pg_params *p);

/* " WHERE ..." on ceems.jobs j for Q's window and users, in the form the
 * indexes serve; then sacct_pg_where_rest, the other filters. */
const char *sacct_pg_where(const struct sacct_query *q);
extern const char *const sacct_pg_where_rest;

#endif
