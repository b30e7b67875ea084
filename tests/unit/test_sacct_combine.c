/* test_sacct_combine.c - tools/sacct/sacct_combine.c: the database's rows and
 * records completed with the spool's.  A job the database has is never
 * taken from the spool (its rows win, steps included); a job it lacks
 * comes with its steps and its strings, which must outlive the spool's
 * rows; node records go by job and node. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "sacct/sacct_combine.h"

static struct sacct_row *
add_row(struct sacct_rows *rows, const char *cluster, uint32_t jobid,
	int64_t start, const char *step, const char *name, double energy)
{
	struct sacct_row *r = sacct_row_add(rows);

	if (r == NULL)
		abort();
	snprintf(r->cluster, sizeof(r->cluster), "%s", cluster);
	r->jobid = jobid;
	r->start_time = start;
	snprintf(r->step, sizeof(r->step), "%s", step);
	r->name = sacct_row_text(rows, name, SACCT_NAME_MAX);
	r->nodes = sacct_row_text(rows, "node01", SACCT_NODES_MAX);
	r->total_j = energy;
	return r;
}

static void
test_rows(void)
{
	struct sacct_rows db = { 0 }, spool = { 0 };
	char name[64];

	add_row(&db, "c1", 10, 1000, "", "from-db", 5);
	add_row(&db, "c1", 10, 1000, "batch", "batch", 5);
	/* The same job in the spool, with another figure: the database's
	 * stays, and the spool's extra step does not come in either. */
	add_row(&spool, "c1", 10, 1000, "", "from-spool", 7);
	add_row(&spool, "c1", 10, 1000, "0", "0", 7);
	/* Same id, other start or cluster: other jobs. */
	add_row(&spool, "c1", 10, 2000, "", "restarted", 1);
	add_row(&spool, "c2", 10, 1000, "", "other-cluster", NAN);
	add_row(&spool, "c2", 10, 1000, "batch", "batch", NAN);
	is_int(sacct_combine_rows_add_missing(&db, &spool), 3, "three rows of two jobs added");
	is_int(db.n, 5, "five rows");
	is_str(db.v[0].name, "from-db", "the database's row stays first");
	ok(db.v[0].total_j == 5, "with its figure");
	is_str(db.v[2].name, "restarted", "a job of another start is added");
	is_str(db.v[3].name, "other-cluster", "a job of another cluster too");
	ok(isnan(db.v[3].total_j), "its unknown energy stays unknown");
	is_str(db.v[4].step, "batch", "with its step");
	/* The strings are the database's rows' own now. */
	snprintf(name, sizeof(name), "%s", db.v[3].name);
	sacct_row_free(&spool);
	is_str(db.v[3].name, name, "the name outlives the spool's rows");
	is_str(db.v[3].nodes, "node01", "the node list too");
	sacct_row_free(&db);

	/* An empty database answer takes every row. */
	add_row(&spool, "c1", 11, 1000, "", "a", 1);
	add_row(&spool, "c1", 11, 1000, "batch", "batch", 1);
	is_int(sacct_combine_rows_add_missing(&db, &spool), 2, "every row into an empty answer");
	sacct_row_free(&spool);
	sacct_row_free(&db);
}

static void
add_record(struct sacct_records *recs, uint32_t jobid, const char *node,
	   const char *name, size_t series_rows)
{
	struct sacct_series *s;
	struct ceems_job_record *r = sacct_merge_records_add(recs, &s);

	if (r == NULL)
		abort();
	memset(r, 0, sizeof(*r));
	snprintf(r->meta.cluster, sizeof(r->meta.cluster), "c1");
	snprintf(r->meta.node, sizeof(r->meta.node), "%s", node);
	snprintf(r->meta.name, sizeof(r->meta.name), "%s", name);
	r->meta.jobid = jobid;
	r->meta.start_time = 1000;
	if (series_rows > 0) {
		s->present = true;
		s->nrows = series_rows;
		s->rows = calloc(series_rows, sizeof(s->rows[0]));
		if (s->rows == NULL)
			abort();
	}
}

static void
test_records(void)
{
	struct sacct_records db = { 0 }, spool = { 0 };

	add_record(&db, 20, "node01", "from-db", 0);
	add_record(&spool, 20, "node01", "from-spool", 3);	/* dropped */
	add_record(&spool, 20, "node02", "node02", 4);	/* the node the database lacks */
	add_record(&spool, 21, "node01", "new", 0);
	is_int(sacct_combine_records_add_missing(&db, &spool), 2, "two node records moved");
	is_int(spool.n, 0, "the spool's records are freed");
	is_int(db.n, 3, "three records");
	is_str(db.v[0].meta.name, "from-db", "the database's record stays");
	is_str(db.v[1].meta.node, "node02", "the other node's record joins its job");
	ok(db.series[1].present && db.series[1].nrows == 4 && db.series[1].rows != NULL,
	   "with its series");
	is_str(db.v[2].meta.name, "new", "a job the database lacks");
	sacct_merge_records_free(&db);
}

int
main(void)
{
	test_rows();
	test_records();
	return done_testing();
}
