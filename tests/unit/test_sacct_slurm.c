/* test_sacct_slurm.c - tools/sacct/sacct_slurm*.c: the fields ceems does
 * not keep, from Slurm's sacct.  Its output is matched to ceems-sacct's
 * rows by cluster, JobIDRaw and the job's start (a requeued job's earlier
 * run gets nothing of the latest run's), a line that is not sacct's
 * fills nothing, and the program is run as it must be: as the caller,
 * with the options and job ids asked, its exit status heard.  The
 * program run here is a shell script written by the test that logs its
 * arguments and prints what the test gives it (the real sacct, with
 * slurmdbd: tests/integration/sacct-dropin.bats). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../tap.h"
#include "sacct/sacct_slurm.h"

#define US SACCT_SLURM_DELIMITER

static const int64_t t0 = 1767225600;	/* 2026-01-01T00:00:00Z */

static struct sacct_row *
add_row(struct sacct_rows *rows, const char *cluster, uint32_t jobid,
	int64_t start, const char *step)
{
	struct sacct_row *r = sacct_row_add(rows);

	if (r == NULL)
		abort();
	snprintf(r->cluster, sizeof(r->cluster), "%s", cluster);
	r->jobid = jobid;
	r->start_time = start;
	snprintf(r->step, sizeof(r->step), "%s", step);
	return r;
}

static void
fmt_start(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	localtime_r(&tt, &tm);
	strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
}

/* One line of Slurm's output: JobIDRaw, Cluster, Start, A, B, JobIDRaw. */
static void
line(char *out, size_t size, const char *id, const char *cluster,
     int64_t start, const char *a, const char *b)
{
	char st[64];
	size_t len = strlen(out);

	fmt_start(start, st, sizeof(st));
	snprintf(out + len, size - len, "%s" US "%s" US "%s" US "%s" US "%s" US "%s\n",
		 id, cluster, st, a, b, id);
}

static size_t
parse_cols(struct sacct_column *cols, const char *spec)
{
	char err[256];
	size_t n = 0;

	if (sacct_fields_format_parse(spec, cols, SACCT_MAX_COLUMNS, &n, err,
				      sizeof(err)) < 0)
		abort();
	return n;
}

static const char *
cell(const char *const *cells, size_t ncols, size_t r, size_t c)
{
	return cells[r * ncols + c] != NULL ? cells[r * ncols + c] : "(none)";
}

static void
test_match(void)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_rows rows = { 0 };
	struct sacct_slurm *s;
	const char *const *cells;
	char out[4096] = "", err[256];
	size_t n = parse_cols(cols, "JobID,AdminComment,Elapsed,ReqTRES");

	add_row(&rows, "c1", 10, t0, "");
	add_row(&rows, "c1", 10, t0, "batch");
	add_row(&rows, "c1", 10, t0, "0");	/* Slurm has no line of it */
	add_row(&rows, "c1", 11, t0 - 3600, "");	/* requeued: an earlier run */
	add_row(&rows, "c2", 10, t0, "");	/* another cluster's job 10 */
	add_row(&rows, "c1", 12, t0, "")->part_node = "n1";
	s = sacct_slurm_new(cols, n, &rows);
	ok(s != NULL, "a set of values for two fields ceems does not keep");
	is_str(sacct_slurm_format(s), "JobIDRaw,Cluster,Start,AdminComment,ReqTRES,JobIDRaw",
	       "sacct is asked for them between the ids, the cluster and the start");
	line(out, sizeof(out), "10", "c1", t0, "hello", "cpu=2,mem=1G");
	line(out, sizeof(out), "10.batch", "c1", t0 + 5, "", "cpu=2");
	line(out, sizeof(out), "11", "c1", t0, "latest run", "cpu=1");
	line(out, sizeof(out), "10", "c2", t0, "other cluster", "cpu=8");
	line(out, sizeof(out), "12", "c1", t0, "node part", "cpu=4");
	is_int(sacct_slurm_append(s, out, strlen(out)), 0, "the output appended");
	is_int(sacct_slurm_match(s, err, sizeof(err)), 0, "and matched");
	cells = sacct_slurm_cells(s);
	is_str(cell(cells, n, 0, 1), "hello", "the job's AdminComment, Slurm's");
	is_str(cell(cells, n, 0, 3), "cpu=2,mem=1G", "its ReqTRES");
	ok(cells[0] == NULL && cells[2] == NULL, "the columns ceems fills are not touched");
	is_str(cell(cells, n, 1, 3), "cpu=2", "the batch step's own line");
	is_str(cell(cells, n, 1, 1), "", "an empty value of Slurm's stays empty");
	ok(cells[2 * n + 1] == NULL, "a step Slurm has no line of keeps its empty cells");
	ok(cells[3 * n + 1] == NULL, "an earlier run of a requeued job gets nothing of the latest's");
	is_str(cell(cells, n, 4, 1), "other cluster", "a job is found in its own cluster");
	ok(cells[5 * n + 1] == NULL, "a job's part on one node is not filled");
	sacct_slurm_free(s);
	sacct_row_free(&rows);
}

/* A line whose fields hold the delimiter and a newline (a Comment is
 * any text its user wrote) cannot make a line of its own for another
 * job. */
static void
test_forged(void)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_rows rows = { 0 };
	struct sacct_slurm *s;
	const char *const *cells;
	char out[4096] = "", forged[512], st[64], err[256];
	size_t n = parse_cols(cols, "JobID,AdminComment,Comment");

	add_row(&rows, "c1", 20, t0, "");
	add_row(&rows, "c1", 21, t0, "");
	fmt_start(t0, st, sizeof(st));
	snprintf(forged, sizeof(forged), "x" US "20\n21" US "c1" US "%s" US "forged" US "x", st);
	line(out, sizeof(out), "21", "c1", t0, "real", "real");
	line(out, sizeof(out), "20", "c1", t0, "", forged);
	s = sacct_slurm_new(cols, n, &rows);
	sacct_slurm_append(s, out, strlen(out));
	is_int(sacct_slurm_match(s, err, sizeof(err)), -1,
	       "a line forged inside a field is not taken for sacct's");
	ok(strstr(err, "job ids") != NULL || strstr(err, "fields") != NULL, "said: %s", err);
	ok(sacct_slurm_cells(s) == NULL, "nothing is filled");
	sacct_slurm_free(s);

	/* Two lines of one job that differ: neither is its value. */
	out[0] = '\0';
	line(out, sizeof(out), "21", "c1", t0, "one", "a");
	line(out, sizeof(out), "21", "c1", t0, "two", "a");
	line(out, sizeof(out), "20", "c1", t0, "same", "b");
	line(out, sizeof(out), "20", "c1", t0, "same", "b");
	s = sacct_slurm_new(cols, n, &rows);
	sacct_slurm_append(s, out, strlen(out));
	is_int(sacct_slurm_match(s, err, sizeof(err)), 0, "repeated lines are matched");
	cells = sacct_slurm_cells(s);
	is_str(cell(cells, n, 0, 1), "same", "a job given twice alike keeps its value");
	ok(cells[n + 1] == NULL && cells[n + 2] == NULL,
	   "a job given twice unalike gets neither");
	sacct_slurm_free(s);
	sacct_row_free(&rows);
}

static void
test_bad_output(void)
{
	static const char *const bad[] = {
		"10" US "c1" US "x" US "a" US "10\n",	/* a field short */
		"10" US "c1" US "x" US "a" US "b" US "10",	/* no newline */
		"10" US "c1" US "x" US "a" US "b" US "11\n",	/* ids differ */
		"x1" US "c1" US "x" US "a" US "b" US "x1\n",	/* not an id */
		"10.a b" US "c1" US "x" US "a" US "b" US "10.a b\n",
		"sacct: error: Problem talking to the database\n",
	};
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_rows rows = { 0 };
	struct sacct_slurm *s;
	char err[256];
	size_t n = parse_cols(cols, "AdminComment,Comment"), i;

	add_row(&rows, "c1", 10, t0, "");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s = sacct_slurm_new(cols, n, &rows);
		sacct_slurm_append(s, bad[i], strlen(bad[i]));
		err[0] = '\0';
		ok(sacct_slurm_match(s, err, sizeof(err)) == -1 && err[0] != '\0' &&
		   sacct_slurm_cells(s) == NULL, "bad output %zu refused: %s", i, err);
		sacct_slurm_free(s);
	}
	ok(sacct_slurm_new(cols, parse_cols(cols, "JobID,Energy"), &rows) == NULL,
	   "no column ceems leaves empty: nothing to ask");
	sacct_row_free(&rows);
}

/* The program: a script that logs its arguments, its uid and its
 * SLURM_TIME_FORMAT, prints the file it is given and exits as told. */
static void
write_script(const char *dir)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/sacct", dir);
	f = fopen(path, "w");
	fprintf(f, "#!/bin/sh\n"
		"printf '%%s\\n' \"$@\" >>'%s/args'\n"
		"echo \"uid=$(id -u) euid=$(id -u) tf=$SLURM_TIME_FORMAT\" >>'%s/env'\n"
		"cat '%s/out'\n"
		"exit $(cat '%s/rc')\n", dir, dir, dir, dir);
	fclose(f);
	chmod(path, 0755);
}

static void
put_file(const char *dir, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static char *
read_file(const char *dir, const char *name)
{
	static char buf[65536];
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	if ((f = fopen(path, "r")) == NULL)
		return buf;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void
test_run(void)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_rows rows = { 0 };
	struct sacct_slurm *s = NULL;
	char dir[] = "/tmp/test_sacct_slurm.XXXXXX", path[600], out[512] = "";
	char err[256], want[64];
	size_t n = parse_cols(cols, "JobID,AdminComment,Comment"), i;
	const char *args;

	if (mkdtemp(dir) == NULL)
		abort();
	write_script(dir);
	snprintf(path, sizeof(path), "%s/sacct", dir);
	for (i = 0; i < SACCT_SLURM_CHUNK + 10; i++)
		add_row(&rows, i % 2 ? "c2" : "c1", (uint32_t)(100 + i), t0, "");
	add_row(&rows, "c1", 100 + SACCT_SLURM_CHUNK + 9, t0, "batch");
	line(out, sizeof(out), "100", "c1", t0, "from slurm", "c");
	put_file(dir, "out", out);
	put_file(dir, "rc", "0\n");
	is_int(sacct_slurm_fetch(path, cols, n, &rows, &s, err, sizeof(err)), 0,
	       "Slurm's sacct run");
	ok(s != NULL && strcmp(sacct_slurm_cells(s)[1], "from slurm") == 0,
	   "its values matched to the rows");
	sacct_slurm_free(s);
	args = read_file(dir, "args");
	ok(strstr(args, "--noheader\n--parsable2\n--delimiter=" US "\n--allusers\n"
		  "--format=JobIDRaw,Cluster,Start,AdminComment,Comment,JobIDRaw\n") != NULL,
	   "run with the options and the format of its output");
	ok(strstr(args, "--jobs=100,101,102,") != NULL, "the rows' job ids");
	snprintf(want, sizeof(want), "--jobs=%u,", 100 + SACCT_SLURM_CHUNK);
	ok(strstr(args, want) != NULL, "a second run for the jobs past %d", SACCT_SLURM_CHUNK);
	snprintf(want, sizeof(want), ",%u\n", 100 + SACCT_SLURM_CHUNK + 9);
	ok(strstr(args, want) != NULL, "a job asked once with its step");
	ok(strstr(args, "--clusters=c1,c2\n") != NULL, "every cluster, each once");
	snprintf(want, sizeof(want), "uid=%u euid=%u tf=standard", (unsigned)getuid(),
		 (unsigned)getuid());
	ok(strstr(read_file(dir, "env"), want) != NULL,
	   "run as the caller, in sacct's standard time format");

	put_file(dir, "rc", "1\n");
	is_int(sacct_slurm_fetch(path, cols, n, &rows, &s, err, sizeof(err)), -1,
	       "a failed run is an error");
	ok(strstr(err, "exited with 1") != NULL && s == NULL, "said: %s", err);
	snprintf(path, sizeof(path), "%s/missing", dir);
	is_int(sacct_slurm_fetch(path, cols, n, &rows, &s, err, sizeof(err)), -1,
	       "a program that is not there is an error");
	ok(strstr(err, "cannot run") != NULL, "said: %s", err);
	n = parse_cols(cols, "JobID,Energy");
	is_int(sacct_slurm_fetch(path, cols, n, &rows, &s, err, sizeof(err)), 0,
	       "no field ceems leaves empty: not run");
	ok(s == NULL, "and nothing to fill");
	sacct_row_free(&rows);
	for (i = 0; i < 5; i++) {
		static const char *const names[] = { "sacct", "args", "env", "out", "rc" };
		char f[600];

		snprintf(f, sizeof(f), "%s/%s", dir, names[i]);
		unlink(f);
	}
	rmdir(dir);
}

int
main(void)
{
	test_match();
	test_forged();
	test_bad_output();
	test_run();
	return done_testing();
}
