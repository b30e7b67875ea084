/* sacct_dups.c - the latest job of each job id (see sacct_dups.h), as
 * slurmdbd answers sacct without -D: rows of a cluster's job id sorted
 * by time, the first kept.  ceems tells two jobs of one id apart by
 * their start, which each of their rows (job, steps, node parts)
 * carries. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_dups.h"

struct key {
	const struct sacct_row *row;
	size_t i;
};

/* By cluster, job id, then the latest start first. */
static int
cmp_key(const void *a, const void *b)
{
	const struct sacct_row *x = ((const struct key *)a)->row;
	const struct sacct_row *y = ((const struct key *)b)->row;
	int c = strcmp(x->cluster, y->cluster);

	if (c != 0)
		return c;
	if (x->jobid != y->jobid)
		return x->jobid < y->jobid ? -1 : 1;
	if (x->start_time != y->start_time)
		return x->start_time > y->start_time ? -1 : 1;
	return 0;
}

int
sacct_dups_keep_latest(struct sacct_rows *rows)
{
	struct key *keys;
	bool *drop;
	size_t i, first, keep;

	if (rows->n < 2)
		return 0;
	keys = malloc(rows->n * sizeof(*keys));
	drop = calloc(rows->n, sizeof(*drop));
	if (keys == NULL || drop == NULL) {
		free(keys);
		free(drop);
		return -1;
	}
	for (i = 0; i < rows->n; i++) {
		keys[i].row = &rows->v[i];
		keys[i].i = i;
	}
	qsort(keys, rows->n, sizeof(*keys), cmp_key);
	for (first = i = 0; i < rows->n; i++) {
		if (strcmp(keys[i].row->cluster, keys[first].row->cluster) != 0 ||
		    keys[i].row->jobid != keys[first].row->jobid)
			first = i;
		drop[keys[i].i] = keys[i].row->start_time !=
				  keys[first].row->start_time;
	}
	free(keys);
	for (i = keep = 0; i < rows->n; i++) {
		if (drop[i])
			continue;
		if (keep != i)
			rows->v[keep] = rows->v[i];
		keep++;
	}
	rows->n = keep;
	free(drop);
	return 0;
}
