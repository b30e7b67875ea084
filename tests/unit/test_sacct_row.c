/* test_sacct_row.c - tools/sacct/sacct_row.c: the order ceems-sacct prints
 * rows in (jobs by start, cluster and id, each followed by its steps in
 * Slurm's order), from listings in order, reversed and shuffled, and
 * equal rows kept in the order they came. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "sacct/sacct_row.h"

static const char *const step_ids[] = { "", "batch", "extern", "interactive", "0", "2", "10", "zz" };
#define NSTEPS (sizeof(step_ids) / sizeof(step_ids[0]))
#define NJOBS 40

/* The rows of NJOBS jobs, each with every step of step_ids, in the
 * order they must come out; user holds each row's rank. */
static void
expected_rows(struct sacct_rows *rows)
{
	size_t j, k;

	for (j = 0; j < NJOBS; j++)
		for (k = 0; k < NSTEPS; k++) {
			struct sacct_row *r = sacct_row_add(rows);

			if (r == NULL)
				abort();
			/* Starts tie in pairs; ties go by cluster, then id. */
			r->start_time = 1700000000 + (int64_t)(j / 4) * 60;
			snprintf(r->cluster, sizeof(r->cluster), "%s", j % 4 < 2 ? "a" : "b");
			r->jobid = j % 2 == 0 ? 990 : 1000;
			snprintf(r->step, sizeof(r->step), "%s", step_ids[k]);
			snprintf(r->user, sizeof(r->user), "%zu", rows->n - 1);
		}
}

static bool
in_rank_order(const struct sacct_rows *rows)
{
	size_t i;
	char want[32];

	for (i = 0; i < rows->n; i++) {
		snprintf(want, sizeof(want), "%zu", i);
		if (strcmp(rows->v[i].user, want) != 0) {
			printf("#   row %zu is rank %s (job %u step '%s')\n", i,
			       rows->v[i].user, rows->v[i].jobid, rows->v[i].step);
			return false;
		}
	}
	return true;
}

static void
shuffle(struct sacct_rows *rows, unsigned seed)
{
	size_t i, k;
	struct sacct_row tmp;

	srand(seed);
	for (i = rows->n - 1; i > 0; i--) {
		k = (size_t)rand() % (i + 1);
		tmp = rows->v[i];
		rows->v[i] = rows->v[k];
		rows->v[k] = tmp;
	}
}

static void
test_order(void)
{
	struct sacct_rows rows = { NULL, 0, 0 };
	struct sacct_row *before;
	size_t i;
	unsigned seed;

	expected_rows(&rows);
	before = rows.v;
	sacct_row_sort(&rows);
	ok(in_rank_order(&rows) && rows.v == before,
	   "rows already in order are left where they are");

	for (i = 0; i < rows.n / 2; i++) {
		struct sacct_row tmp = rows.v[i];

		rows.v[i] = rows.v[rows.n - 1 - i];
		rows.v[rows.n - 1 - i] = tmp;
	}
	sacct_row_sort(&rows);
	ok(in_rank_order(&rows), "reversed rows come out in order");

	for (seed = 1; seed <= 5; seed++) {
		shuffle(&rows, seed);
		sacct_row_sort(&rows);
		ok(in_rank_order(&rows), "shuffled rows (seed %u) come out in order", seed);
	}
	sacct_row_free(&rows);
}

/* Rows that compare equal (two records of one step, as a spool with a
 * duplicate may give) keep the order they came in. */
static void
test_equal_rows_stay(void)
{
	struct sacct_rows rows = { NULL, 0, 0 };
	size_t i;
	bool kept = true;

	for (i = 0; i < 50; i++) {
		struct sacct_row *r = sacct_row_add(&rows);

		if (r == NULL)
			abort();
		r->start_time = i % 2 == 0 ? 20 : 10;
		r->jobid = 7;
		snprintf(r->user, sizeof(r->user), "%zu", i);
	}
	sacct_row_sort(&rows);
	for (i = 1; i < rows.n; i++)
		if (rows.v[i - 1].start_time == rows.v[i].start_time &&
		    atoi(rows.v[i - 1].user) > atoi(rows.v[i].user))
			kept = false;
	ok(rows.v[0].start_time == 10 && rows.v[49].start_time == 20 && kept,
	   "equal rows keep their order");
	sacct_row_free(&rows);
}

int
main(void)
{
	test_order();
	test_equal_rows_stay();
	return done_testing();
}
