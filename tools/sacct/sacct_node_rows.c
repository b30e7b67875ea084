/* sacct_node_rows.c - the rows of ceems-sacct --per-node: a job's part
 * on each node (see sacct_node_rows.h).  A node's row is its record
 * merged alone, as the job's rows are merged from all of them, so its
 * figures are what the node contributed to the job's sums. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_node_rows.h"

/* Records and job rows in one order: start, cluster, job id. */
static int
cmp_job(int64_t start_a, const char *cluster_a, uint32_t jobid_a,
	int64_t start_b, const char *cluster_b, uint32_t jobid_b)
{
	int c;

	if (start_a != start_b)
		return start_a < start_b ? -1 : 1;
	if ((c = strcmp(cluster_a, cluster_b)) != 0)
		return c;
	return jobid_a < jobid_b ? -1 : jobid_a > jobid_b;
}

static int
cmp_records(const void *pa, const void *pb)
{
	const struct ceems_job_record *a = *(const struct ceems_job_record *const *)pa;
	const struct ceems_job_record *b = *(const struct ceems_job_record *const *)pb;

	return cmp_job(a->meta.start_time, a->meta.cluster, a->meta.jobid,
		       b->meta.start_time, b->meta.cluster, b->meta.jobid);
}

static int
cmp_record_row(const struct ceems_job_record *r, const struct sacct_row *row)
{
	return cmp_job(r->meta.start_time, r->meta.cluster, r->meta.jobid,
		       row->start_time, row->cluster, row->jobid);
}

/* The row of record I of RECS, a part of the job of row JOB_AT. */
static int
add_part(struct sacct_rows *rows, size_t job_at, const struct sacct_records *recs,
	 size_t i)
{
	const struct ceems_job_record *r = &recs->v[i];
	struct sacct_row part, *row;
	const char *node;

	if (sacct_merge_one(recs, i, rows, &part) < 0 ||
	    (node = sacct_row_text(rows, r->meta.node, sizeof(r->meta.node))) == NULL)
		return -ENOMEM;
	part.part_node = node;
	part.nodes = node;
	part.nnodes = 1;
	/* The job's identity as its row has it (the merge of every node's
	 * metadata), the node's own figures. */
	memcpy(part.state, rows->v[job_at].state, sizeof(part.state));
	part.name = rows->v[job_at].name;
	part.alloc_cpus = r->report.alloc_cores;
	if (isfinite(r->report.elapsed_s) && r->report.elapsed_s > 0)
		part.elapsed_s = r->report.elapsed_s;
	part.cpu_eff = NAN;
	if (part.elapsed_s > 0 && part.alloc_cpus > 0 && isfinite(part.cpu_s))
		part.cpu_eff = part.cpu_s / (part.elapsed_s * part.alloc_cpus);
	part.mem_eff = NAN;
	if ((row = sacct_row_add(rows)) == NULL)
		return -ENOMEM;
	*row = part;
	return 0;
}

int
sacct_node_rows_add(struct sacct_rows *rows, const struct sacct_records *recs)
{
	const struct ceems_job_record **order;
	size_t njobs, j, i = 0;
	int ret = 0;

	if (recs->n == 0)
		return 0;
	if ((order = malloc(recs->n * sizeof(*order))) == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < recs->n; k++)
		order[k] = &recs->v[k];
	qsort(order, recs->n, sizeof(*order), cmp_records);
	/* Both in the same order: one walk, however long the listing. */
	sacct_row_sort(rows);
	njobs = rows->n;
	for (j = 0; j < njobs && i < recs->n && ret == 0; j++) {
		/* A job whose parts are there already (the database's, when
		 * the spool's extras come through here after them) gets
		 * none again: they follow it in the order. */
		if (!sacct_row_is_job(&rows->v[j]) ||
		    (j + 1 < njobs && rows->v[j + 1].part_node != NULL))
			continue;
		/* rows->v moves as parts are added: by index, never kept. */
		while (i < recs->n && cmp_record_row(order[i], &rows->v[j]) < 0)
			i++;
		for (; i < recs->n && ret == 0 &&
		       cmp_record_row(order[i], &rows->v[j]) == 0; i++)
			ret = add_part(rows, j, recs, (size_t)(order[i] - recs->v));
	}
	free(order);
	sacct_row_sort(rows);
	return ret;
}
