/* sacct_node_rows.h - ceems-sacct --per-node: each job's part on each of
 * its nodes as a row of its own, JOBID@NODE, after the job's row and
 * before its steps, made from the nodes' records (the spool's, or those
 * the database rebuilds from ceems.job_nodes), so that both backends
 * show the same parts. */
#ifndef CEEMS_SACCT_NODE_ROWS_H
#define CEEMS_SACCT_NODE_ROWS_H

#include "sacct_query.h"
#include "sacct_row.h"

/* Add to ROWS, for each job row of ROWS that has none yet, one row per
 * record of RECS of that job (same cluster, job id and start): the
 * node's figures (elapsed since the job's registration there, CPU time,
 * memory peak, energy, emissions, quality) and its allocated CPUs;
 * MemEff is left unknown (the request is the job's, not the node's).
 * Sorts ROWS.  0 or -ENOMEM. */
int sacct_node_rows_add(struct sacct_rows *rows, const struct sacct_records *recs);

#endif
