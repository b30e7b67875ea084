/* sacct_combine.c - the database's rows and records completed with the
 * spool's (see sacct_combine.h).  A job is looked up by its identity
 * (cluster, job id, start) in a plain scan: the spool holds a handful
 * of records once the database is back, so the scan costs the
 * listing's length a few times over. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "sacct_combine.h"

/* Is ROW's job among the N rows at V? */
static bool
job_among(const struct sacct_row *v, size_t n, const struct sacct_row *row)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].jobid == row->jobid &&
		    v[i].start_time == row->start_time &&
		    strcmp(v[i].cluster, row->cluster) == 0)
			return true;
	return false;
}

long
sacct_combine_rows_add_missing(struct sacct_rows *db, const struct sacct_rows *extra)
{
	size_t i, had = db->n;
	struct sacct_row *row;
	long added = 0;

	for (i = 0; i < extra->n; i++) {
		/* Only the database's own rows decide: a job's step rows
		 * from the spool follow its job row in. */
		if (job_among(db->v, had, &extra->v[i]))
			continue;
		if ((row = sacct_row_add(db)) == NULL)
			return -1;
		*row = extra->v[i];
		row->name = sacct_row_text(db, extra->v[i].name, SACCT_NAME_MAX);
		row->nodes = sacct_row_text(db, extra->v[i].nodes, SACCT_NODES_MAX);
		if (row->name == NULL || row->nodes == NULL) {
			row->name = row->nodes = "";
			return -1;
		}
		added++;
	}
	return added;
}

static bool
same_node_record(const struct ceems_job_record *a,
		 const struct ceems_job_record *b)
{
	return a->meta.jobid == b->meta.jobid &&
		a->meta.start_time == b->meta.start_time &&
		strcmp(a->meta.cluster, b->meta.cluster) == 0 &&
		strcmp(a->meta.node, b->meta.node) == 0;
}

long
sacct_combine_records_add_missing(struct sacct_records *db,
			  struct sacct_records *extra)
{
	struct ceems_job_record *r;
	struct sacct_series *s;
	size_t i, j, had = db->n;
	long moved = 0;
	bool have;

	for (i = 0; i < extra->n; i++) {
		for (j = 0, have = false; j < had && !have; j++)
			have = same_node_record(&db->v[j], &extra->v[i]);
		if (have)
			continue;
		if ((r = sacct_merge_records_add(db, &s)) == NULL) {
			sacct_merge_records_free(extra);
			return -1;
		}
		*r = extra->v[i];
		*s = extra->series[i];
		extra->series[i].rows = NULL;	/* DB owns them now */
		moved++;
	}
	sacct_merge_records_free(extra);
	return moved;
}
