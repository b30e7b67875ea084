/* sacct_combine.h - the database's answer completed with what this
 * node's spool still holds: records written while the database was
 * unreachable wait there until the node agent replays them, and their
 * jobs would otherwise be missing from the listing meanwhile.  What the
 * database has wins: a job (or a node record) the database already
 * holds is never taken from the spool, so a record replayed between the
 * spool's read and the query shows once. */
#ifndef CEEMS_SACCT_COMBINE_H
#define CEEMS_SACCT_COMBINE_H

#include <stddef.h>

#include "sacct_query.h"
#include "sacct_row.h"

/* Append to DB the rows of EXTRA (job and step rows, from the spool)
 * whose job (cluster, job id, start) has no row in DB, their strings
 * copied into DB's text.  DB is not re-sorted.  Returns how many rows
 * were added, or -1 when out of memory. */
long sacct_combine_rows_add_missing(struct sacct_rows *db,
			    const struct sacct_rows *extra);

/* Move into DB the records of EXTRA whose job and node (cluster, job
 * id, start, node) DB lacks.  EXTRA is freed, DB is not re-sorted.
 * Returns how many were moved, or -1 when out of memory. */
long sacct_combine_records_add_missing(struct sacct_records *db,
			       struct sacct_records *extra);

#endif
