/* bench_output.c - ceems-sacct's formatting of a heavy user's month:
 * JOBS generated job rows, each followed by a batch and an extern step
 * (as the plugin records a batch job), printed as ceems-sacct prints
 * them (sacct_output_rows, its default columns, the ASCII table) to
 * /dev/null, REPEAT times.  Prints the median and maximum wall time of
 * a print.  No database: the rows are what sacct_pg_listing_rows would give.
 * For instruction counts that repeat from run to run:
 *   valgrind --tool=callgrind tests/bench/bench_output 18392 1
 *
 * Usage: bench_output [JOBS [REPEAT [FORMAT]]]  (18392, 9, the default) */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_time.h"
#include "sacct/sacct_fields.h"
#include "sacct/sacct_output.h"

/* Job I's row, then its two steps, with figures of the shapes
 * bench_storage.sh loads (durations up to a day, 1 to 128 CPUs). */
static int
add_job(struct sacct_rows *rows, unsigned i)
{
	static const char *const steps[] = { "batch", "extern" };
	static const double share[] = { 0.999, 0.001 };
	struct sacct_row *job, *st;
	char name[32];
	size_t j;
	double d = 60 + (i * 7919u) % 86340, cpus = 1u << (i % 8);
	double e = 0.05 + (double)((i * 104729u) % 950) / 1000;
	int k;

	if ((job = sacct_row_add(rows)) == NULL)
		return -1;
	snprintf(job->cluster, sizeof(job->cluster), "bench");
	job->jobid = 4000000 + i;
	job->uid = 10000;
	snprintf(job->user, sizeof(job->user), "u0000");
	snprintf(job->account, sizeof(job->account), "acct%u", i % 200);
	snprintf(job->partition, sizeof(job->partition), "cpu");
	snprintf(job->qos, sizeof(job->qos), "normal");
	snprintf(name, sizeof(name), "job-%u", i % 1000);
	if ((job->name = sacct_row_text(rows, name, SACCT_NAME_MAX)) == NULL)
		return -1;
	snprintf(job->state, sizeof(job->state), "%s", i % 10 < 8 ? "COMPLETED" : "FAILED");
	job->exit_code = i % 10 < 8 ? 0 : 1;
	job->start_time = 1685577600 + (int64_t)i * 140;
	job->end_time = job->start_time + (int64_t)d;
	job->alloc_cpus = (uint32_t)cpus;
	job->req_mem_bytes = (uint64_t)cpus << 32;
	job->nnodes = job->nodes_reported = 1;
	job->elapsed_s = d;
	job->cpu_s = d * cpus * e;
	job->cpu_eff = e;
	job->mem_peak_bytes = cpus * 2147483648.0 * e;
	job->mem_eff = e / 2;
	job->package_j = d * cpus * 8;
	job->dram_j = d * cpus;
	job->total_j = d * cpus * 9;
	job->quality = 1;
	job->emissions_g = d * cpus * 9 / 3.6e6 * 56 * 1.2;
	j = rows->n - 1;
	for (k = 0; k < 2; k++) {
		/* An add may move the rows: the job by its index. */
		if ((st = sacct_row_add(rows)) == NULL ||
		    sacct_row_step_of(rows, st, &rows->v[j], steps[k]) < 0)
			return -1;
		job = &rows->v[j];
		st->nodes_reported = 1;
		st->elapsed_s = d;
		st->cpu_s = job->cpu_s * share[k];
		st->mem_peak_bytes = job->mem_peak_bytes * share[k];
		st->package_j = job->package_j * share[k];
		st->dram_j = job->dram_j * share[k];
		st->total_j = st->package_j + st->dram_j;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_output_opts o = { .mode = SACCT_TABLE, .style = SACCT_STYLE_ASCII };
	struct sacct_rows rows = { 0 };
	unsigned jobs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 18392, i;
	int repeat = argc > 2 ? atoi(argv[2]) : 9, r;
	const char *format = argc > 3 ? argv[3] : SACCT_DEFAULT_FORMAT;
	double *t, median;
	size_t ncols = 0;
	char err[256];
	FILE *out;

	if (repeat < 1 || (t = calloc((size_t)repeat, sizeof(*t))) == NULL ||
	    sacct_fields_format_parse(format, cols, SACCT_MAX_COLUMNS, &ncols, err, sizeof(err)) < 0 ||
	    (out = fopen("/dev/null", "w")) == NULL) {
		fprintf(stderr, "usage: bench_output [JOBS [REPEAT [FORMAT]]]\n");
		return 2;
	}
	for (i = 0; i < jobs; i++)
		if (add_job(&rows, i) < 0) {
			fprintf(stderr, "bench_output: out of memory\n");
			return 1;
		}
	for (r = 0; r < repeat; r++) {
		double t0 = bench_now_ms();

		if (sacct_output_rows(out, cols, ncols, &rows, NULL, &o) < 0 || fflush(out) != 0) {
			fprintf(stderr, "bench_output: the output failed\n");
			return 1;
		}
		t[r] = bench_now_ms() - t0;
	}
	median = bench_sort_median(t, (size_t)repeat);
	printf("output: %zu rows, %zu columns, %d runs: median %.2f ms, max %.2f ms\n",
	       rows.n, ncols, repeat, median, t[repeat - 1]);
	sacct_row_free(&rows);
	fclose(out);
	free(t);
	return 0;
}
