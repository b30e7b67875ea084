/* sacct_slurm.c - the sacct fields ceems does not keep, from Slurm's own
 * sacct (sacct_slurm.h): its --parsable2 output read and matched to
 * ceems-sacct's rows (the pure part, fed text by the tests and the
 * fuzzer), then the program run as the caller, with no privilege of
 * ceems-sacct's, once per SACCT_SLURM_CHUNK jobs, its output read through
 * a pipe. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/spawn.h"
#include "sacct_slurm.h"

/* One line of Slurm's output: a job or a step of one run. */
struct slurm_line {
	const char *id;			/* JobIDRaw: 123, 123.batch */
	const char *cluster;
	const char *start;		/* the job's start, sacct's format */
	const char **v;			/* the fields asked, in order */
	bool dropped;			/* a repeat, or in conflict */
};

struct sacct_slurm {
	const struct sacct_column *cols;
	size_t ncols;
	const struct sacct_rows *rows;
	const struct sacct_field **fields;	/* the "empty" ones asked */
	size_t nfields;
	int *field_of;				/* per column: index, or -1 */
	char *format;
	char *text;				/* Slurm's output, split in place */
	size_t len, cap;
	struct slurm_line *lines;
	const char **values;			/* nlines x nfields */
	size_t nlines;
	const char **cells;			/* nrows x ncols */
};

/* The fields of a line before the ones asked: JobIDRaw, Cluster, Start;
 * after them, JobIDRaw again. */
#define LEAD_FIELDS 3

static int
add_field(struct sacct_slurm *s, const struct sacct_field *f)
{
	size_t i;

	for (i = 0; i < s->nfields; i++)
		if (s->fields[i] == f)
			return (int)i;
	s->fields[s->nfields] = f;
	return (int)s->nfields++;
}

static char *
make_format(const struct sacct_slurm *s)
{
	size_t i, len = sizeof("JobIDRaw,Cluster,Start,JobIDRaw");
	char *out;

	for (i = 0; i < s->nfields; i++)
		len += strlen(s->fields[i]->name) + 1;
	if ((out = malloc(len)) == NULL)
		return NULL;
	strcpy(out, "JobIDRaw,Cluster,Start");
	for (i = 0; i < s->nfields; i++) {
		strcat(out, ",");
		strcat(out, s->fields[i]->name);
	}
	strcat(out, ",JobIDRaw");
	return out;
}

struct sacct_slurm *
sacct_slurm_new(const struct sacct_column *cols, size_t ncols,
		const struct sacct_rows *rows)
{
	struct sacct_slurm *s;
	size_t c;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->cols = cols;
	s->ncols = ncols;
	s->rows = rows;
	s->fields = calloc(ncols + 1, sizeof(*s->fields));
	s->field_of = calloc(ncols + 1, sizeof(*s->field_of));
	if (s->fields == NULL || s->field_of == NULL)
		goto fail;
	for (c = 0; c < ncols; c++)
		s->field_of[c] = cols[c].field->status == SACCT_FIELD_EMPTY ?
			add_field(s, cols[c].field) : -1;
	if (s->nfields == 0 || (s->format = make_format(s)) == NULL)
		goto fail;
	return s;
fail:
	sacct_slurm_free(s);
	return NULL;
}

const char *
sacct_slurm_format(const struct sacct_slurm *s)
{
	return s->format;
}

const char *const *
sacct_slurm_cells(const struct sacct_slurm *s)
{
	return s != NULL ? s->cells : NULL;
}

void
sacct_slurm_free(struct sacct_slurm *s)
{
	if (s == NULL)
		return;
	free(s->fields);
	free(s->field_of);
	free(s->format);
	free(s->text);
	free(s->lines);
	free(s->values);
	free(s->cells);
	free(s);
}

int
sacct_slurm_append(struct sacct_slurm *s, const char *text, size_t len)
{
	size_t cap;
	char *p;

	if (len > SACCT_SLURM_OUTPUT_MAX - s->len)
		return -1;
	if (s->len + len + 1 > s->cap) {
		cap = s->cap > 0 ? s->cap : 4096;
		while (cap < s->len + len + 1)
			cap *= 2;
		if ((p = realloc(s->text, cap)) == NULL)
			return -1;
		s->text = p;
		s->cap = cap;
	}
	memcpy(s->text + s->len, text, len);
	s->len += len;
	s->text[s->len] = '\0';
	return 0;
}

/* JobIDRaw as sacct writes it: digits, then a step's ".name" or ".N". */
static bool
valid_id(const char *id)
{
	const char *p = id;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '\0')
		return true;
	if (*p++ != '.' || *p == '\0')
		return false;
	for (; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || *p == '_' || *p == '+'))
			return false;
	return true;
}

static size_t
count_lines(const char *text, size_t len)
{
	size_t n = 0, i;

	for (i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

/* Split the line at *P (up to END) into L; 0, or -1 with ERR. */
static int
split_line(struct sacct_slurm *s, char **p, char *end, struct slurm_line *l,
	   char *err, size_t size)
{
	size_t nf = s->nfields + LEAD_FIELDS + 1, i;
	const char *f[3];
	char *q;

	for (i = 0; i + 1 < nf; i++) {
		if ((q = memchr(*p, SACCT_SLURM_DELIMITER[0], (size_t)(end - *p))) == NULL) {
			snprintf(err, size, "a line of %zu fields where %zu were asked", i + 1, nf);
			return -1;
		}
		*q = '\0';
		if (i < LEAD_FIELDS)
			f[i] = *p;
		else
			l->v[i - LEAD_FIELDS] = *p;
		*p = q + 1;
	}
	if ((q = memchr(*p, '\n', (size_t)(end - *p))) == NULL) {
		snprintf(err, size, "a line without its end");
		return -1;
	}
	*q = '\0';
	if (!valid_id(f[0]) || strcmp(f[0], *p) != 0) {
		snprintf(err, size, "a line whose job ids are not one JobIDRaw");
		return -1;
	}
	l->id = f[0];
	l->cluster = f[1];
	l->start = f[2];
	*p = q + 1;
	return 0;
}

static int
cmp_line(const void *a, const void *b)
{
	const struct slurm_line *x = a, *y = b;
	int c = strcmp(x->cluster, y->cluster);

	return c != 0 ? c : strcmp(x->id, y->id);
}

static bool
same_values(const struct sacct_slurm *s, const struct slurm_line *a,
	    const struct slurm_line *b)
{
	size_t i;

	if (strcmp(a->start, b->start) != 0)
		return false;
	for (i = 0; i < s->nfields; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

/* A job asked in two runs of sacct (an array's id and one of its tasks)
 * comes twice alike: one stays.  Two lines of one id that differ are
 * not Slurm's word for it: neither stays. */
static void
drop_repeats(struct sacct_slurm *s)
{
	size_t i, j;
	bool conflict;

	for (i = 0; i < s->nlines; i = j) {
		conflict = false;
		for (j = i + 1; j < s->nlines &&
		     cmp_line(&s->lines[i], &s->lines[j]) == 0; j++) {
			s->lines[j].dropped = true;
			conflict |= !same_values(s, &s->lines[i], &s->lines[j]);
		}
		if (conflict)
			s->lines[i].dropped = true;
	}
}

static const struct slurm_line *
find_line(const struct sacct_slurm *s, const char *cluster, const char *id)
{
	struct slurm_line key = { .id = id, .cluster = cluster };
	const struct slurm_line *l;

	if (s->nlines == 0)
		return NULL;
	l = bsearch(&key, s->lines, s->nlines, sizeof(*s->lines), cmp_line);
	if (l == NULL)
		return NULL;
	/* the first of its id: a repeat after it is dropped, it is not
	 * unless in conflict */
	while (l > s->lines && cmp_line(l - 1, &key) == 0)
		l--;
	return l->dropped ? NULL : l;
}

/* Slurm's line for ROW, when it is of the same run: its job's line
 * started when ROW's job did. */
static const struct slurm_line *
line_of_row(const struct sacct_slurm *s, const struct sacct_row *row)
{
	const struct slurm_line *job;
	char id[32 + SACCT_STEP_MAX], start[64] = "";
	time_t t = (time_t)row->start_time;
	struct tm tm;

	if (row->part_node != NULL || row->start_time <= 0)
		return NULL;
	snprintf(id, sizeof(id), "%u", row->jobid);
	if ((job = find_line(s, row->cluster, id)) == NULL)
		return NULL;
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(start, sizeof(start), "%Y-%m-%dT%H:%M:%S", &tm) == 0 ||
	    strcmp(start, job->start) != 0)
		return NULL;
	if (row->step[0] == '\0')
		return job;
	snprintf(id, sizeof(id), "%u.%s", row->jobid, row->step);
	return find_line(s, row->cluster, id);
}

static int
split_all(struct sacct_slurm *s, char *err, size_t size)
{
	size_t n = count_lines(s->text, s->len), i;
	char *p = s->text, *end = s->text + s->len;

	s->lines = calloc(n + 1, sizeof(*s->lines));
	s->values = calloc(n * s->nfields + 1, sizeof(*s->values));
	if (s->lines == NULL || s->values == NULL) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	for (i = 0; p < end; i++) {
		if (i == n) {
			snprintf(err, size, "a line without its end");
			return -1;
		}
		s->lines[i].v = s->values + i * s->nfields;
		if (split_line(s, &p, end, &s->lines[i], err, size) < 0)
			return -1;
	}
	s->nlines = i;
	return 0;
}

int
sacct_slurm_match(struct sacct_slurm *s, char *err, size_t size)
{
	const struct slurm_line *l;
	size_t r, c, nrows = s->rows->n;

	if (s->len > 0 && split_all(s, err, size) < 0) {
		s->nlines = 0;
		return -1;
	}
	if (s->nlines > 0) {
		qsort(s->lines, s->nlines, sizeof(*s->lines), cmp_line);
		drop_repeats(s);
	}
	if ((s->cells = calloc(nrows * s->ncols + 1, sizeof(*s->cells))) == NULL) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	for (r = 0; r < nrows; r++) {
		if ((l = line_of_row(s, &s->rows->v[r])) == NULL)
			continue;
		for (c = 0; c < s->ncols; c++)
			if (s->field_of[c] >= 0)
				s->cells[r * s->ncols + c] = l->v[s->field_of[c]];
	}
	return 0;
}

/* ---- running Slurm's sacct ---- */

/* The argument list of one run: the options, then -j and -M. */
struct run_args {
	char *argv[16];
	char jobs[SACCT_SLURM_CHUNK * 11 + 8];
	char clusters[4096];
};

/* Whether NAME is one of LIST's comma-separated names. */
static bool
in_list(const char *list, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
	return false;
}

/* -M: every cluster of the rows, each once ("" rows: the local one). */
static void
add_clusters(struct run_args *a, const struct sacct_rows *rows)
{
	size_t i, len = 0, n;
	const char *c;

	a->clusters[0] = '\0';
	for (i = 0; i < rows->n; i++) {
		c = rows->v[i].cluster;
		n = strlen(c);
		if (n == 0 || in_list(a->clusters, c))
			continue;
		if (len + n + 2 > sizeof(a->clusters))
			break;
		len += (size_t)snprintf(a->clusters + len, sizeof(a->clusters) - len,
					"%s%s", len > 0 ? "," : "", c);
	}
}

/* Run sacct on ARGV, its output appended to S.  0, or -1 with ERR. */
static int
run_once(const char *sacct, char *const argv[], struct sacct_slurm *s,
	 char *err, size_t size)
{
	char buf[65536];
	int fd[2], status, e = 0;
	ssize_t n;
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC) < 0) {
		snprintf(err, size, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = ceems_spawn_fork()) < 0) {
		snprintf(err, size, "fork: %s", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		/* ceems-sacct gave up its group privilege before; a run that
		 * still had any would not pass it on */
		if (getegid() != getgid() || geteuid() != getuid() ||
		    dup2(fd[1], STDOUT_FILENO) < 0)
			_exit(126);
		ceems_spawn_close_from(3);
		/* sacct's own time format: the Start matched against ceems's */
		if (setenv("SLURM_TIME_FORMAT", "standard", 1) < 0)
			_exit(126);
		execv(sacct, argv);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			e = errno;
			break;
		}
		if (e == 0 && sacct_slurm_append(s, buf, (size_t)n) < 0)
			e = ENOMEM;	/* read on: the child must not block */
	}
	close(fd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (e != 0) {
		snprintf(err, size, "reading its output: %s", strerror(e));
		return -1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		snprintf(err, size, "cannot run %s", sacct);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, size, "%s %s %d", sacct,
			 WIFEXITED(status) ? "exited with" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	return 0;
}

/* The rows' job ids from *NEXT on, at most a chunk of them, into A. */
static void
chunk_jobs(struct run_args *a, const struct sacct_rows *rows, size_t *next)
{
	size_t len = 0, count = 0;
	uint32_t last = 0;

	a->jobs[0] = '\0';
	for (; *next < rows->n && count < SACCT_SLURM_CHUNK; (*next)++) {
		uint32_t id = rows->v[*next].jobid;

		if (count > 0 && id == last)
			continue;	/* a job's steps follow it */
		len += (size_t)snprintf(a->jobs + len, sizeof(a->jobs) - len,
					"%s%u", count > 0 ? "," : "", id);
		last = id;
		count++;
	}
}

static int
run_all(const char *sacct, struct sacct_slurm *s,
	const struct sacct_rows *rows, char *err, size_t size)
{
	static char name[] = "sacct", noheader[] = "--noheader",
		parsable[] = "--parsable2", allusers[] = "--allusers",
		delimiter[] = "--delimiter=" SACCT_SLURM_DELIMITER;
	struct run_args a;
	char fmt_opt[32 + 4096], jobs_opt[sizeof(a.jobs) + 8];
	char clusters_opt[sizeof(a.clusters) + 16];
	size_t next = 0, argc;

	add_clusters(&a, rows);
	if (snprintf(fmt_opt, sizeof(fmt_opt), "--format=%s",
		     sacct_slurm_format(s)) >= (int)sizeof(fmt_opt)) {
		snprintf(err, size, "too many fields asked");
		return -1;
	}
	snprintf(clusters_opt, sizeof(clusters_opt), "--clusters=%s", a.clusters);
	while (next < rows->n) {
		chunk_jobs(&a, rows, &next);
		snprintf(jobs_opt, sizeof(jobs_opt), "--jobs=%s", a.jobs);
		argc = 0;
		a.argv[argc++] = name;
		a.argv[argc++] = noheader;
		a.argv[argc++] = parsable;
		a.argv[argc++] = delimiter;
		a.argv[argc++] = allusers;
		a.argv[argc++] = fmt_opt;
		a.argv[argc++] = jobs_opt;
		if (a.clusters[0] != '\0')
			a.argv[argc++] = clusters_opt;
		a.argv[argc] = NULL;
		if (run_once(sacct, a.argv, s, err, size) < 0)
			return -1;
	}
	return 0;
}

int
sacct_slurm_fetch(const char *sacct, const struct sacct_column *cols,
		  size_t ncols, const struct sacct_rows *rows,
		  struct sacct_slurm **out, char *err, size_t size)
{
	struct sacct_slurm *s;
	size_t c;
	bool asked = false;

	*out = NULL;
	for (c = 0; c < ncols; c++)
		asked |= cols[c].field->status == SACCT_FIELD_EMPTY;
	if (!asked || rows->n == 0)
		return 0;
	if ((s = sacct_slurm_new(cols, ncols, rows)) == NULL) {
		snprintf(err, size, "out of memory");
		return -1;
	}
	if (run_all(sacct, s, rows, err, size) < 0 ||
	    sacct_slurm_match(s, err, size) < 0) {
		sacct_slurm_free(s);
		return -1;
	}
	*out = s;
	return 0;
}
