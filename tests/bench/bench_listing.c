/* bench_listing.c - the listing target (a user's month in at most 50 ms)
 * measured through ceems-sacct's own code: one user's jobs of a window,
 * asked by sacct_pg_listing_rows
 * (tools/sacct/sacct_pg_listing.c: the listing with each job's steps,
 * decoded into rows) over one connection, REPEAT times.  Prints the
 * rows and the median and maximum wall time of a call, which is what
 * "a user's jobs for a month come back" costs the tool, without its
 * process start and its output (tests/bench/bench_storage.sh times those
 * too, as `sacct`).
 *
 * Usage: bench_listing CONNINFO USER START END [REPEAT [FORMAT [-X]]]
 *   START and END are Unix seconds; CONNINFO connects as USER so that
 *   row-level security applies as it does for ceems-sacct.  FORMAT is
 *   ceems-sacct's -o list (default: its default format), whose fields
 *   decide the columns fetched; "all" fetches every column, "default"
 *   is the default.  -X: the
 *   jobs without their steps, as ceems-sacct -X. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "sacct/sacct_fields.h"
#include "sacct/sacct_pg.h"

int
main(int argc, char **argv)
{
	static struct sacct_query q;
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	const char *format = SACCT_DEFAULT_FORMAT;
	struct sacct_pg *pg;
	double *t, t0, median;
	char err[512];
	bool refused;
	size_t nrows = 0, ncols = 0;
	int repeat, i;

	if (argc < 5 || argc > 8 || (argc == 8 && strcmp(argv[7], "-X") != 0)) {
		fprintf(stderr, "usage: bench_listing CONNINFO USER START END [REPEAT [FORMAT [-X]]]\n");
		return 2;
	}
	repeat = argc >= 6 ? atoi(argv[5]) : 20;
	if (argc >= 7 && strcmp(argv[6], "default") != 0)
		format = argv[6];
	q.allocations = argc == 8;
	if (strcmp(format, "all") != 0) {
		if (sacct_fields_format_parse(format, cols, SACCT_MAX_COLUMNS, &ncols,
				       err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_listing: %s\n", err);
			return 2;
		}
		q.skip = SACCT_NEED_ALL & ~sacct_fields_columns_need(cols, ncols);
	}
	if (repeat < 1 || (t = calloc((size_t)repeat, sizeof(*t))) == NULL) {
		fprintf(stderr, "bench_listing: bad REPEAT\n");
		return 2;
	}
	q.start = (time_t)strtoll(argv[3], NULL, 10);
	q.end = (time_t)strtoll(argv[4], NULL, 10);
	if (sacct_merge_name_add(&q.users, &q.nusers, &q.users_cap, argv[2]) < 0)
		return 1;
	q.only_uid = UINT32_MAX;
	if ((pg = sacct_pg_connect(argv[1], &refused, err, sizeof(err))) == NULL) {
		fprintf(stderr, "bench_listing: %s\n", err);
		return 1;
	}
	for (i = 0; i < repeat; i++) {
		struct sacct_rows rows = { 0 };

		t0 = bench_now_ms();
		if (sacct_pg_listing_rows(pg, &q, &rows, err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_listing: %s\n", err);
			sacct_pg_close(pg);
			return 1;
		}
		t[i] = bench_now_ms() - t0;
		nrows = rows.n;
		sacct_row_free(&rows);
	}
	sacct_pg_close(pg);
	median = bench_sort_median(t, (size_t)repeat);
	printf("listing %s (sacct_pg_listing_rows, -o %s%s): %zu rows, %d runs: median %.2f ms, max %.2f ms\n",
	       argv[2], strcmp(format, SACCT_DEFAULT_FORMAT) == 0 ? "default" : format,
	       q.allocations ? " -X" : "", nrows, repeat, median, t[repeat - 1]);
	free(t);
	return 0;
}
