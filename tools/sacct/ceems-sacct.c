/* ceems-sacct.c - sacct's look and options for ceems's job records: the
 * energy, emissions and efficiency of a user's jobs at the command line.
 *
 *   ceems-sacct [-S TIME] [-E TIME] [-j JOBS] [-u USERS] [-o FIELDS] ...
 *   ceems-sacct --series JOBID | --explain JOBID | --json | -e
 *
 * (the options: sacct_options.c's table).  Reads PostgreSQL (`sacct_database` of ceems.conf, else `database`)
 * with the records this node's spool still holds (not stored yet), or,
 * without a database or when it cannot be reached, the spool alone (then
 * with one warning line).  Who sees what: the database's row-level
 * security, or for the spool the caller's uid (root sees all).  Exit
 * status: 0, 1 for a runtime error (one line naming it), 2 for a usage
 * error.  Manual: ceems-sacct(1). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/conf.h"
#include "base/node_name.h"
#include "model/agent_series.h"
#include "record/record.h"
#include "sacct_dups.h"
#include "sacct_explain.h"
#include "sacct_combine.h"
#include "sacct_fields.h"
#include "sacct_node_rows.h"
#include "sacct_options.h"
#include "sacct_output.h"
#include "sacct_query.h"
#include "sacct_slurm.h"
#include "sacct_spool.h"
#include "sacct_time.h"
#include "summary/summary.h"
#include "base/text.h"
#ifdef HAVE_LIBPQ
#include "sacct_pg.h"
#endif


/* Every error line goes through sacct_options_fail: escaped, one line. */
#define fail sacct_options_fail

/* The group privilege of a setgid installation: dropped at once, taken
 * back only to read the spool, then given up for good. */
static gid_t spool_gid;
static bool setgid_run;

static void
privilege_init(void)
{
	spool_gid = getegid();
	setgid_run = spool_gid != getgid();
	if (setgid_run && setegid(getgid()) < 0)
		exit(fail("cannot drop the group privilege: %s", strerror(errno)));
}

static void
privilege_drop(void)
{
	gid_t g = getgid();

	if (setgid_run && (setresgid(g, g, g) < 0 || getegid() != g)) {
		fail("cannot drop the group privilege: %s", strerror(errno));
		exit(1);
	}
	setgid_run = false;
}

/* The config's %n (if any) made this host's node name by its short
 * name: 0, or -1 with ERR. */
static int
expand_node(struct ceems_config *config, char *err, size_t size)
{
	char node[CEEMS_NODE_NAME_MAX];

	return ceems_conf_expand_node(config,
				      ceems_node_name_of_host(node, sizeof(node)) == 0 ?
				      node : NULL, err, size);
}

static int
load_config(const struct sacct_options *o, struct ceems_config *config)
{
	const char *path = o->config_path;
	char err[PATH_MAX + 512];	/* the path whole, then the reason */

	ceems_conf_defaults(config);
	if (path == NULL) {
		path = CEEMS_SACCT_CONFIG_PATH;
		if (access(path, F_OK) < 0)
			return 0;	/* defaults: the spool, no database */
	}
	if (ceems_conf_load(config, path, err, sizeof(err)) < 0)
		return fail("%s", err);
	/* %n in a path is a node's name (several slurmd on one host, or
	 * per-node directories on a shared file system): here, the node
	 * this host is by its short name, as the agents' fallback is. */
	if (expand_node(config, err, sizeof(err)) < 0)
		return fail("%s: %s", path, err);
	ceems_summary_notes_set_gpu_min_time(config->summary_gpu_min_ns);
	return 0;
}

/* What this node's spool holds for the caller.  It is read first,
 * whatever the backend, so that the group of a setgid installation is
 * given up for good before anything else runs: libpq, which reads the
 * caller's environment and files, never runs with it, not even as the
 * saved group.  With a database the spool is what is not stored yet:
 * the fallback when the database is unreachable, else its complement
 * (add_spool_extras). */
struct spool_read {
	int error;		/* 0; -ENOENT: this node has no spool; -errno */
	char err[512];
	size_t skipped;		/* files that could not be read or decoded */
	struct sacct_records recs;
};

static void
spool_read(const struct ceems_config *config, const struct sacct_query *q,
	   struct spool_read *sr)
{
	int fd;

	/* The group is held only while the spool's files are read: names
	 * from the directory itself, opened relative to it without
	 * following symlinks; records not the caller's are dropped as they
	 * are decoded.  Nothing else runs with it. */
	if (setgid_run && setegid(spool_gid) < 0) {
		sr->error = -errno;
		snprintf(sr->err, sizeof(sr->err), "cannot take the spool's group: %s",
			 strerror(errno));
		privilege_drop();
		return;
	}
	fd = sacct_spool_open(config->spool_dir, sr->err, sizeof(sr->err));
	if (fd >= 0) {
		sr->error = sacct_spool_load(fd, q, &sr->recs, &sr->skipped,
					     sr->err, sizeof(sr->err));
		close(fd);
	} else
		sr->error = fd;
	privilege_drop();
	if (sr->error < 0)
		sacct_merge_records_free(&sr->recs);
}

/* Who reads every record of the spool: root, and an unprivileged
 * ceems-sacct whose caller sets CEEMS_SACCT_ALL_RECORDS=1 (it reads
 * only files its caller can read anyway: the golden tests run as any
 * user this way).  Never with the group. */
static bool
spool_reads_all(void)
{
	const char *all = getenv("CEEMS_SACCT_ALL_RECORDS");

	return getuid() == 0 ||
		(!setgid_run && all != NULL && strcmp(all, "1") == 0);
}

/* Keep the records of the jobs Q selects (the spool's --json, --series,
 * --explain): those of a job whose merged row passes the filters. */
static int
select_records(struct sacct_records *recs, const struct sacct_query *q)
{
	struct sacct_query jq = *q;
	struct sacct_rows rows = { 0 };
	size_t i, j, k, keep = 0;
	bool hit;
	int r;

	jq.allocations = true;
	jq.jobs = NULL;
	if (q->njobs > 0 &&
	    (jq.jobs = malloc(q->njobs * sizeof(*jq.jobs))) == NULL)
		return fail("out of memory");
	for (i = 0; i < jq.njobs; i++) {
		jq.jobs[i] = q->jobs[i];
		jq.jobs[i].step[0] = '\0';
	}
	r = sacct_merge(recs, &jq, &rows);
	free(jq.jobs);
	if (r < 0)
		return fail("out of memory");
	for (i = 0; i < recs->n; i++) {
		hit = false;
		for (j = 0; j < rows.n && !hit; j++)
			hit = rows.v[j].jobid == recs->v[i].meta.jobid &&
				rows.v[j].start_time == recs->v[i].meta.start_time &&
				strcmp(rows.v[j].cluster, recs->v[i].meta.cluster) == 0;
		if (!hit) {
			free(recs->series[i].rows);
			continue;
		}
		k = keep++;
		if (k != i) {
			recs->v[k] = recs->v[i];
			recs->series[k] = recs->series[i];
		}
	}
	recs->n = keep;
	sacct_row_free(&rows);
	return 0;
}

/* Shortest text that reads back the same double. */
static void
put_number(FILE *out, double v)
{
	char buf[40];
	int prec;

	if (!isfinite(v))
		return;
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fputs(buf, out);
}

static int
print_series(const struct sacct_records *recs, uint32_t jobid)
{
	const struct sacct_series *s;
	size_t i, r;
	int k, found = 0;

	for (i = 0; i < recs->n; i++)
		if (recs->series[i].present)
			found++;
	if (recs->n == 0)
		return fail("no job %u visible to you", jobid);
	if (found == 0)
		return fail("no time series kept for job %u (submit with --ceems-series)", jobid);
	fputs("node,resolution_s", stdout);
	for (k = 0; k < SACCT_S_NCOLS; k++)
		printf(",%s", ceems_series_columns[k]);
	fputc('\n', stdout);
	for (i = 0; i < recs->n; i++) {
		s = &recs->series[i];
		for (r = 0; s->present && r < s->nrows; r++) {
			sacct_output_csv_field(stdout, recs->v[i].meta.node);
			printf(",%d", s->resolution_s);
			for (k = 0; k < SACCT_S_NCOLS; k++) {
				fputc(',', stdout);
				put_number(stdout, s->rows[r][k]);
			}
			fputc('\n', stdout);
		}
	}
	return 0;
}

static int
print_explain(const struct sacct_records *recs, uint32_t jobid)
{
	char buf[CEEMS_SUMMARY_SIZE];
	size_t i;

	if (recs->n == 0)
		return fail("no job %u visible to you", jobid);
	for (i = 0; i < recs->n; i++) {
		if (ceems_summary_format(&recs->v[i].meta, &recs->v[i].report,
					 CEEMS_SUMMARY_FULL, buf,
					 sizeof(buf)) < 0)
			return fail("job %u: the summary does not fit", jobid);
		if (i > 0)
			fputc('\n', stdout);
		if (recs->n > 1)
			printf("== node %s\n", recs->v[i].meta.node);
		fputs(buf, stdout);
		sacct_explain_err(stdout, &recs->v[i].report);
	}
	return 0;
}

static int
print_json(const struct sacct_records *recs)
{
	char *buf;
	size_t i;
	int len;

	if ((buf = malloc(CEEMS_RECORD_MAX + 1)) == NULL)
		return fail("out of memory");
	fputs("[", stdout);
	for (i = 0; i < recs->n; i++) {
		len = ceems_record_encode(&recs->v[i], buf, CEEMS_RECORD_MAX + 1);
		if (len < 0) {
			free(buf);
			return fail("job %u: the record cannot be encoded", recs->v[i].meta.jobid);
		}
		printf("%s\n", i > 0 ? "," : "");
		fwrite(buf, 1, (size_t)len, stdout);
	}
	fputs(recs->n > 0 ? "\n]\n" : "]\n", stdout);
	free(buf);
	return 0;
}

/* A user the system does not know and no row names: a typo, not an
 * empty history.  Users deleted since keep their jobs visible. */
static int
check_unknown_users(const struct sacct_query *q, const struct sacct_rows *rows)
{
	size_t i, r;
	bool seen;

	for (i = 0; !q->all_users && i < q->nusers; i++) {
		if (getpwnam(q->users[i]) != NULL)
			continue;
		for (r = 0, seen = false; r < rows->n && !seen; r++)
			seen = strcmp(rows->v[r].user, q->users[i]) == 0;
		if (!seen)
			return fail("unknown user '%s'", q->users[i]);
	}
	return 0;
}

/* -u may name users by uid, as in sacct. */
static void
resolve_uids(struct sacct_query *q)
{
	struct passwd *pw;
	char *end;
	unsigned long uid;
	size_t i;

	for (i = 0; i < q->nusers; i++) {
		if (!isdigit((unsigned char)q->users[i][0]))
			continue;
		uid = strtoul(q->users[i], &end, 10);
		if (*end == '\0' && (pw = getpwuid((uid_t)uid)) != NULL)
			snprintf(q->users[i], sizeof(q->users[i]), "%s", pw->pw_name);
	}
}

static bool
only_self(const struct sacct_query *q, const char *self)
{
	size_t i;

	for (i = 0; i < q->nusers; i++)
		if (strcmp(q->users[i], self) != 0)
			return false;
	return true;
}

/* A listing from one node's spool holds, of a job that ran on several
 * nodes, the records this spool has: say so in one line, naming the
 * jobs (the first few), so that a part is not read as the whole. */
static void
warn_partial_jobs(const struct sacct_rows *rows)
{
	char list[256] = "", item[64];
	size_t i, njobs = 0, len = 0;
	const struct sacct_row *r;

	for (i = 0; i < rows->n; i++) {
		r = &rows->v[i];
		if (!sacct_row_is_job(r) || r->nnodes <= r->nodes_reported)
			continue;
		if (njobs++ < 5) {
			snprintf(item, sizeof(item), "%s%u (%u of its %u nodes)",
				 njobs > 1 ? ", " : "", r->jobid,
				 r->nodes_reported, r->nnodes);
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						"%s", item);
		} else if (njobs == 6)
			snprintf(list + len, sizeof(list) - len, ", ...");
		if (len >= sizeof(list))
			len = sizeof(list) - 1;
	}
	if (njobs == 1)
		sacct_options_fail("warning: this node's spool holds only part of job %s: its figures are that part, not the whole job",
				   list);
	else if (njobs > 1)
		sacct_options_fail("warning: this node's spool holds only part of %zu jobs: %s: their figures are those parts, not the whole jobs",
				   njobs, list);
}

/* The listing from the spool: the backend without a database, or the
 * fallback when the database cannot be reached (DB_ERR says why, and
 * one warning line says where the listing comes from).  READS_ALL: the
 * caller reads every record (spool_reads_all). */
static int
from_spool(struct sacct_options *o, const struct ceems_config *config,
	   struct spool_read *sr, bool reads_all, const char *db_err,
	   bool records_mode, struct sacct_records *recs,
	   struct sacct_rows *rows)
{
	struct passwd *pw;
	uid_t uid = getuid();
	char self[64];

	if ((pw = getpwuid(uid)) == NULL)
		return fail("%s%syour uid %u has no user name", db_err != NULL ?
			    db_err : "", db_err != NULL ? "; " : "", (unsigned)uid);
	snprintf(self, sizeof(self), "%s", pw->pw_name);
	if ((o->allusers || !only_self(&o->q, self)) && !reads_all)
		return db_err != NULL ?
			fail("%s; without the database you may see only your own jobs (from this node's spool)", db_err) :
			fail("you may see only your own jobs (only root reads every record of the spool)");
	if (sr->error == -ENOENT && db_err != NULL)
		return fail("%s; no fallback: this node has no spool (%s)",
			    db_err, config->spool_dir);
	if (sr->error < 0 && sr->error != -ENOENT)
		return db_err != NULL ? fail("%s; no fallback: %s", db_err, sr->err) :
			fail("%s", sr->err);
	o->q.all_users = o->allusers || (reads_all && !o->have_users);
	if (!o->have_users && !o->q.all_users) {
		o->q.nusers = 0;
		if (sacct_merge_name_add(&o->q.users, &o->q.nusers,
					 &o->q.users_cap, self) < 0)
			return fail("out of memory");
	}
	if (db_err != NULL) {
		char unread[64] = "";

		if (sr->skipped > 0)
			snprintf(unread, sizeof(unread), " (%zu file%s of it could not be read)",
				 sr->skipped, sr->skipped == 1 ? "" : "s");
		sacct_options_fail("warning: %s; listing this node's spool %s instead: it holds only the records not stored yet, so jobs may be missing%s",
			   db_err, config->spool_dir, unread);
	} else if (sr->skipped > 0)
		sacct_options_fail("warning: %zu file%s of the spool %s could not be read",
			   sr->skipped, sr->skipped == 1 ? "" : "s", config->spool_dir);
	*recs = sr->recs;
	memset(&sr->recs, 0, sizeof(sr->recs));
	if (records_mode)
		return select_records(recs, &o->q);
	if (sacct_merge(recs, &o->q, rows) < 0 ||
	    (o->per_node && sacct_node_rows_add(rows, recs) < 0))
		return fail("out of memory");
	sacct_row_sort(rows);
	warn_partial_jobs(rows);
	return 0;
}

#ifdef HAVE_LIBPQ
/* The spool's records that the database does not hold yet (written
 * while it was unreachable, not replayed yet) join its answer; where
 * both have a job, the database's wins.  A spool that could not be
 * read leaves the database's answer as it is. */
static int
add_spool_extras(const struct sacct_options *o, struct spool_read *sr,
		 bool records_mode, struct sacct_records *recs,
		 struct sacct_rows *rows)
{
	struct sacct_rows extra = { 0 };
	long n;

	if (sr->error != 0 || sr->recs.n == 0)
		return 0;
	if (records_mode) {
		if (select_records(&sr->recs, &o->q) != 0)
			return 1;
		if ((n = sacct_combine_records_add_missing(recs, &sr->recs)) < 0)
			return fail("out of memory");
		if (n > 0)
			sacct_merge_records_sort(recs);
		return 0;
	}
	if (sacct_merge(&sr->recs, &o->q, &extra) < 0 ||
	    (n = sacct_combine_rows_add_missing(rows, &extra)) < 0) {
		sacct_row_free(&extra);
		return fail("out of memory");
	}
	sacct_row_free(&extra);
	if (n > 0)
		sacct_row_sort(rows);
	return 0;
}

/* --per-node from the database: the jobs' node records, rebuilt from
 * ceems.job_nodes, made into their parts' rows. */
static int
add_node_rows(struct sacct_pg *pg, const struct sacct_query *q,
	      struct sacct_rows *rows, char *err, size_t err_size)
{
	struct sacct_records nodes = { 0 };
	int r = sacct_pg_records(pg, q, false, &nodes, err, err_size);

	if (r == 0 && sacct_node_rows_add(rows, &nodes) < 0) {
		snprintf(err, err_size, "out of memory");
		r = -1;
	}
	sacct_merge_records_free(&nodes);
	return r;
}

/* ERR came of reading with `database`, which on most clusters is the
 * nodes' writer connection (a role that may not read, or one the
 * caller may not log in as): name the setting that fixes it. */
static int
fail_writer_connection(const struct sacct_options *o, const char *err)
{
	return fail("%s; is `database` in %s the nodes' writer connection? set sacct_database (ceems.conf(5))",
		    err, o->config_path != NULL ? o->config_path : CEEMS_SACCT_CONFIG_PATH);
}

/* The listing from PostgreSQL, completed with the spool; the spool
 * alone when the database cannot be reached. */
static int
from_database(struct sacct_options *o, const struct ceems_config *config,
	      const char *conninfo, struct spool_read *sr, bool reads_all,
	      bool records_mode, struct sacct_records *recs,
	      struct sacct_rows *rows)
{
	struct sacct_pg *pg;
	bool admin = false, coordinator = false, refused;
	char err[512], self[64];
	int r;

	if ((pg = sacct_pg_connect(conninfo, &refused, err, sizeof(err))) == NULL) {
		/* A server that answered is up: its refusal is for the admin
		 * to fix, not hidden behind the spool's partial listing. */
		if (refused && conninfo == config->database)
			return fail_writer_connection(o, err);
		if (refused)
			return fail("%s; each user needs a database role and a pg_hba.conf line (doc/storage.md, \"Roles\")",
				    err);
		return from_spool(o, config, sr, reads_all, err, records_mode,
				  recs, rows);
	}
	if ((r = sacct_pg_identity(pg, self, sizeof(self), &admin,
				   &coordinator, err, sizeof(err))) < 0) {
		sacct_pg_close(pg);
		if (r == SACCT_PG_NO_READ && conninfo == config->database)
			return fail_writer_connection(o, err);
		return fail("%s", err);
	}
	if ((o->allusers || !only_self(&o->q, self)) && !admin && !coordinator) {
		sacct_pg_close(pg);
		return fail("you may see only your own jobs (you are %s in the database; coordinators and admins see more)", self);
	}
	o->q.all_users = o->allusers || (admin && !o->have_users);
	if (!o->have_users && !o->q.all_users) {
		o->q.nusers = 0;
		if (sacct_merge_name_add(&o->q.users, &o->q.nusers,
					 &o->q.users_cap, self) < 0)
			return fail("out of memory");
	}
	if (records_mode)
		r = sacct_pg_records(pg, &o->q, o->series_job != 0, recs, err, sizeof(err));
	else
		r = sacct_pg_listing_rows(pg, &o->q, rows, err, sizeof(err));
	if (r == 0 && !records_mode && o->per_node)
		r = add_node_rows(pg, &o->q, rows, err, sizeof(err));
	sacct_pg_close(pg);
	if (r < 0)
		return fail("%s", err);
	if ((r = add_spool_extras(o, sr, records_mode, recs, rows)) != 0)
		return r;
	/* The parts of the spool's extra jobs, from their records. */
	if (!records_mode && o->per_node && sr->error == 0 &&
	    sacct_node_rows_add(rows, &sr->recs) < 0)
		return fail("out of memory");
	return 0;
}
#endif

/* The query the options and the configuration ask for: the time window
 * by sacct's rules, the clusters, the users by name, the row parts the
 * output does not need.  0, or 1 after a line naming the error. */
static int
build_query(struct sacct_options *o, const struct ceems_config *config,
	    time_t now)
{
	struct sacct_window_in win = { 0 };
	char err[512];

	if (o->series_job != 0 || o->explain_job != 0) {
		struct sacct_jobsel one = { .array_task = UINT32_MAX };

		one.jobid = o->series_job != 0 ? o->series_job : o->explain_job;
		o->q.njobs = 0;
		if (sacct_merge_jobsel_add(&o->q, &one) < 0)
			return fail("out of memory");
	}
	win.have_jobs = o->q.njobs > 0;
	win.have_states = o->q.nstates > 0;
	if (o->start != NULL) {
		if (sacct_time_parse(o->start, now, &win.start, err, sizeof(err)) < 0)
			return fail("--starttime: %s", err);
		win.have_start = true;
	}
	if (o->end != NULL) {
		if (sacct_time_parse(o->end, now, &win.end, err, sizeof(err)) < 0)
			return fail("--endtime: %s", err);
		win.have_end = true;
	}
	sacct_time_window(&win, now, &o->q.start, &o->q.end);
	/* A job still running at the window's end shows: sacct's window
	 * includes its end second. */
	o->q.end += 1;
	if (!o->allclusters && !o->have_clusters && config->cluster[0] != '\0') {
		o->q.nclusters = 0;
		if (sacct_merge_name_add(&o->q.clusters, &o->q.nclusters,
					 &o->q.clusters_cap, config->cluster) < 0)
			return fail("out of memory");
	}
	resolve_uids(&o->q);
	o->q.skip = SACCT_NEED_ALL & ~(sacct_fields_columns_need(o->cols, o->ncols) |
				       (o->summary ? SACCT_SUMMARY_NEEDS : 0));
	return 0;
}

/* What was asked for, on stdout: the series, the summary, the records,
 * or the listing (with the totals of --summary). */
/* The listing's cells of fields ceems does not keep, from Slurm's sacct
 * where ceems.conf names it: NULL (empty cells) when it does not, when
 * none is asked, or, after a warning, when it fails. */
static struct sacct_slurm *
slurm_values(const struct sacct_options *o, const struct ceems_config *config,
	     const struct sacct_rows *rows)
{
	struct sacct_slurm *s;
	char err[512];

	if (config->slurm_sacct[0] == '\0')
		return NULL;
	if (sacct_slurm_fetch(config->slurm_sacct, o->cols, o->ncols, rows,
			      &s, err, sizeof(err)) < 0) {
		fail("warning: Slurm's sacct: %s; the fields ceems does not keep are empty",
		     err);
		return NULL;
	}
	return s;
}

static int
print_result(const struct sacct_options *o, const struct ceems_config *config,
	     const struct sacct_records *recs, const struct sacct_rows *rows)
{
	struct sacct_output_opts out = o->out;
	struct sacct_slurm *slurm;
	int r;

	if (o->series_job != 0)
		return print_series(recs, o->series_job);
	if (o->explain_job != 0)
		return print_explain(recs, o->explain_job);
	if (o->json)
		return print_json(recs);
	if ((r = check_unknown_users(&o->q, rows)) != 0)
		return r;
	sacct_output_detect(STDOUT_FILENO, &out);
	slurm = slurm_values(o, config, rows);
	r = sacct_output_rows(stdout, o->cols, o->ncols, rows,
			      sacct_slurm_cells(slurm), &out);
	sacct_slurm_free(slurm);
	if (r < 0)
		return fail("cannot write the output");
	if (o->summary) {
		fputc('\n', stdout);
		if (sacct_output_summary(stdout, rows, o->summary_account,
					 &out) < 0)
			return fail("cannot write the output");
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct sacct_options o;
	static struct ceems_config config;
	struct sacct_records recs = { 0 };
	struct sacct_rows rows = { 0 };
	static struct spool_read sr;
	char err[512];
	const char *conninfo;
	bool records_mode, reads_all;
	time_t now = time(NULL);
	int r;

	privilege_init();
	setlocale(LC_ALL, "");
	o.q.only_uid = UINT32_MAX;
	o.units.spec = -1;
	if ((r = sacct_options_parse(argc, argv, &o)) != 0)
		return r;
	sacct_units_set(&o.units);
	/* A configuration of the caller's choosing could name any
	 * directory as the spool: it gets no privilege. */
	if (o.config_path != NULL)
		privilege_drop();
	/* Without -o, sacct's SACCT_FORMAT, else ceems's columns. */
	if (o.ncols == 0 &&
	    sacct_fields_format_parse(getenv("SACCT_FORMAT") != NULL ?
				      getenv("SACCT_FORMAT") : SACCT_DEFAULT_FORMAT,
				      o.cols, SACCT_MAX_COLUMNS, &o.ncols, err,
				      sizeof(err)) < 0)
		return fail("SACCT_FORMAT: %s", err);
	if (load_config(&o, &config) != 0 ||
	    build_query(&o, &config, now) != 0)
		return 1;
	records_mode = o.json || o.series_job != 0 || o.explain_job != 0;

	/* sacct_database is the readers' connection; `database` alone may
	 * be the nodes' writer one, which cannot read jobs (said below). */
	conninfo = config.sacct_database[0] != '\0' ? config.sacct_database :
	    config.database;
#ifndef HAVE_LIBPQ
	if (conninfo[0] != '\0')
		return fail("%s sets a database, but this ceems-sacct was built without PostgreSQL",
			    o.config_path != NULL ? o.config_path : CEEMS_SACCT_CONFIG_PATH);
#endif
	reads_all = spool_reads_all();
	o.q.only_uid = reads_all ? UINT32_MAX : (uint32_t)getuid();
	spool_read(&config, &o.q, &sr);
#ifdef HAVE_LIBPQ
	if (conninfo[0] != '\0')
		r = from_database(&o, &config, conninfo, &sr, reads_all,
				  records_mode, &recs, &rows);
	else
#endif
		r = from_spool(&o, &config, &sr, reads_all, NULL, records_mode,
			       &recs, &rows);
	sacct_merge_records_free(&sr.recs);
	if (r != 0)
		return r;
	privilege_drop();
	if (!records_mode && !o.duplicates && sacct_dups_keep_latest(&rows) < 0)
		return fail("out of memory");

	r = print_result(&o, &config, &recs, &rows);
	sacct_merge_records_free(&recs);
	sacct_row_free(&rows);
	if (fflush(stdout) != 0 || ferror(stdout))
		return fail("cannot write the output");
	return r;
}
