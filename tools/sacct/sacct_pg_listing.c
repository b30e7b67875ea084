/* sacct_pg_listing.c - ceems-sacct's listing from PostgreSQL: one query
 * on ceems.jobs, in binary, with the columns the shown fields read and,
 * unless -X, each job's steps from jobs.steps (migration 016); the
 * clusters' names from a second, small query.  The rows come back in
 * the tool's order (sacct_row_sort).  doc/performance.md says what
 * each choice saved. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pg_binary.h"
#include "sacct_pg.h"
#include "sacct_pg_internal.h"

/* The listing's columns, in the order job_from_result reads them.  Times
 * are timestamptz, which the binary format sends as one integer
 * (extract(epoch ...) would compute a numeric).  Only the columns whose
 * row part somebody reads (sacct_query.skip) are asked for: a heavy
 * user's month is 18,000 rows, and every column of every row costs the
 * server a send call and libpq a value, NULL or not
 * (doc/performance.md, "Why the listing is written as it is").  Part 0
 * is always read.  The cluster comes as its id, its name from a table fetched
 * once (cluster_names): a join per row for a handful of names cost a
 * sixth of the listing. */
struct listing_column {
	const char *expr;
	enum pg_binary_kind kind;
	uint64_t part;
};

#define ROWS_NCOLS 59
#define ROWS_FIRST_FIGURE 24
#define COL_WORK_UNIT 23
#define COL_USER 5
static const struct listing_column listing[ROWS_NCOLS] = {
	{ "j.cluster_id", PG_BINARY_INT, 0 },
	{ "j.jobid", PG_BINARY_INT, 0 },
	{ "j.array_job_id", PG_BINARY_INT, 0 },
	{ "j.array_task_id", PG_BINARY_INT, 0 },
	{ "j.uid", PG_BINARY_INT, SACCT_NEED_UID },
	{ "j.user_name", PG_BINARY_TEXT, 0 },
	{ "j.account", PG_BINARY_TEXT, SACCT_NEED_ACCOUNT },
	{ "j.partition", PG_BINARY_TEXT, SACCT_NEED_PARTITION },
	{ "j.qos", PG_BINARY_TEXT, SACCT_NEED_QOS },
	{ "j.job_name", PG_BINARY_TEXT, SACCT_NEED_NAME },
	{ "j.state", PG_BINARY_TEXT, SACCT_NEED_STATE },
	{ "j.exit_code", PG_BINARY_INT, SACCT_NEED_EXIT },
	{ "j.exit_signal", PG_BINARY_INT, SACCT_NEED_EXIT },
	{ "j.submit_time", PG_BINARY_TIME, SACCT_NEED_SUBMIT },
	{ "j.start_time", PG_BINARY_TIME, 0 },
	{ "j.end_time", PG_BINARY_TIME, SACCT_NEED_END },
	{ "j.time_limit_min", PG_BINARY_INT, SACCT_NEED_TIMELIMIT },
	{ "j.alloc_cpus", PG_BINARY_INT, SACCT_NEED_ALLOC_CPUS },
	{ "j.req_mem_bytes", PG_BINARY_INT, SACCT_NEED_REQ_MEM },
	{ "j.alloc_gpus", PG_BINARY_INT, SACCT_NEED_ALLOC_GPUS },
	{ "j.nnodes", PG_BINARY_INT, SACCT_NEED_NNODES },
	{ "j.nodes_reported", PG_BINARY_INT, SACCT_NEED_NODES_REPORTED },
	{ "j.nodelist", PG_BINARY_TEXT, SACCT_NEED_NODELIST },
	/* The job's main counter of work (migration 029's job_work): the
	 * one with the most marks, as ceems-sacct's spool picks it. */
	{ "(SELECT w.unit FROM ceems.job_work w WHERE w.job_key = j.job_key"
	  " ORDER BY w.marks DESC, w.name, w.unit LIMIT 1)",
	  PG_BINARY_TEXT, SACCT_NEED_WORK },
	/* from ROWS_FIRST_FIGURE: the figures, all numbers */
	{ "j.elapsed_s", PG_BINARY_NUMBER, SACCT_NEED_ELAPSED },
	{ "j.cpu_time_s", PG_BINARY_NUMBER, SACCT_NEED_CPU_S },
	{ "j.cpu_efficiency", PG_BINARY_NUMBER, SACCT_NEED_CPU_EFF },
	{ "j.mem_peak_bytes", PG_BINARY_NUMBER, SACCT_NEED_MEM_PEAK },
	{ "j.mem_efficiency", PG_BINARY_NUMBER, SACCT_NEED_MEM_EFF },
	{ "j.gpu_util_pct", PG_BINARY_NUMBER, SACCT_NEED_GPU_UTIL },
	{ "j.package_j", PG_BINARY_NUMBER, SACCT_NEED_PACKAGE },
	{ "j.dram_j", PG_BINARY_NUMBER, SACCT_NEED_DRAM },
	{ "j.gpu_j", PG_BINARY_NUMBER, SACCT_NEED_GPU },
	{ "j.node_j", PG_BINARY_NUMBER, SACCT_NEED_NODE },
	{ "j.total_j", PG_BINARY_NUMBER, SACCT_NEED_TOTAL },
	{ "least(j.package_coverage, j.dram_coverage, j.gpu_coverage, j.node_coverage)",
	  PG_BINARY_NUMBER, SACCT_NEED_QUALITY },
	/* Emissions without energy are unknown: rows stored before the
	 * writers left them out carry 0 g there (doc/storage.md). */
	{ "CASE WHEN j.total_j IS NOT NULL THEN j.emissions_g END",
	  PG_BINARY_NUMBER, SACCT_NEED_EMISSIONS },
	{ "j.emission_g_per_kwh", PG_BINARY_NUMBER, SACCT_NEED_G_PER_KWH },
	{ "j.pue", PG_BINARY_NUMBER, SACCT_NEED_PUE },
	/* Migration 018's: fetched only when a field reads them. */
	{ "j.gpu_sm_active_pct", PG_BINARY_NUMBER, SACCT_NEED_GPU_SM },
	{ "j.gpu_mem_peak_bytes", PG_BINARY_NUMBER, SACCT_NEED_GPU_MEM },
	{ "j.gpu_mem_total_bytes", PG_BINARY_NUMBER, SACCT_NEED_GPU_MEM_TOTAL },
	/* IO and network over the job's nodes (migration 020): asked for
	 * only when read, one index probe of job_nodes each. */
	{ "(SELECT sum(n.io_read_bytes)::float8 FROM ceems.job_nodes n"
	  " WHERE n.job_key = j.job_key AND n.io_source = 'syscall')",
	  PG_BINARY_NUMBER, SACCT_NEED_IO },
	{ "(SELECT sum(n.io_write_bytes)::float8 FROM ceems.job_nodes n"
	  " WHERE n.job_key = j.job_key AND n.io_source = 'syscall')",
	  PG_BINARY_NUMBER, SACCT_NEED_IO },
	{ "(SELECT sum(n.net_tcp4_in_bytes + n.net_tcp6_in_bytes + n.net_udp4_in_bytes"
	  " + n.net_udp6_in_bytes)::float8 FROM ceems.job_nodes n WHERE n.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_NET },
	{ "(SELECT sum(n.net_tcp4_out_bytes + n.net_tcp6_out_bytes + n.net_udp4_out_bytes"
	  " + n.net_udp6_out_bytes)::float8 FROM ceems.job_nodes n WHERE n.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_NET },
	/* perf counters (migration 021), only when a column shows them */
	{ "(SELECT p.context_switches FROM ceems.job_perf p WHERE p.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_PERF },
	{ "(SELECT p.page_faults FROM ceems.job_perf p WHERE p.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_PERF },
	{ "(SELECT p.cpu_migrations FROM ceems.job_perf p WHERE p.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_PERF },
	{ "(SELECT p.cycles FROM ceems.job_perf p WHERE p.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_PERF },
	{ "(SELECT p.instructions FROM ceems.job_perf p WHERE p.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_PERF },
	/* How many nodes measured IO and network: fewer than the job's,
	 * their sums are partial. */
	{ "(SELECT count(*)::float8 FROM ceems.job_nodes n"
	  " WHERE n.job_key = j.job_key AND n.io_source = 'syscall')",
	  PG_BINARY_NUMBER, SACCT_NEED_IO },
	{ "(SELECT count(*)::float8 FROM ceems.job_nodes n"
	  " WHERE n.job_key = j.job_key AND n.net_tcp4_in_bytes IS NOT NULL)",
	  PG_BINARY_NUMBER, SACCT_NEED_NET },
	/* Data quality (migration 024); the flags as SACCT_IDLE_UNLEARNED_
	 * bits, NULL where neither domain's is known. */
	{ "j.emission_fallback", PG_BINARY_NUMBER, SACCT_NEED_CI_FALLBACK },
	{ "CASE WHEN j.package_idle_unlearned IS NOT NULL"
	  " OR j.dram_idle_unlearned IS NOT NULL"
	  " THEN (CASE WHEN j.package_idle_unlearned THEN 1 ELSE 0 END"
	  " + CASE WHEN j.dram_idle_unlearned THEN 2 ELSE 0 END)::float8 END",
	  PG_BINARY_NUMBER, SACCT_NEED_IDLE_UNLEARNED },
	{ "(SELECT w.work FROM ceems.job_work w WHERE w.job_key = j.job_key"
	  " ORDER BY w.marks DESC, w.name, w.unit LIMIT 1)",
	  PG_BINARY_NUMBER, SACCT_NEED_WORK },
	{ "(SELECT w.energy_per_work_j FROM ceems.job_work w WHERE w.job_key = j.job_key"
	  " ORDER BY w.marks DESC, w.name, w.unit LIMIT 1)",
	  PG_BINARY_NUMBER, SACCT_NEED_WORK },
	/* The energy's error bound (migration 030). */
	{ "j.energy_err_j", PG_BINARY_NUMBER, SACCT_NEED_ENERGY_ERR },
	/* The carbon-aware advice's saving (migration 033): its nodes'
	 * added when every node with emissions has advice. */
	{ "(SELECT CASE WHEN bool_and(n.advice_saving_g IS NOT NULL"
	  " OR n.emissions_g IS NULL) AND bool_or(n.advice_saving_g IS NOT NULL)"
	  " THEN sum(n.advice_saving_g) END FROM ceems.job_nodes n"
	  " WHERE n.job_key = j.job_key)",
	  PG_BINARY_NUMBER, SACCT_NEED_CARBON_SAVING }
};

/* Which listing columns a query fetches, and where they are. */
struct listing_plan {
	int pos[ROWS_NCOLS];		/* result column, or -1: not fetched */
	int steps;			/* jobs.steps' column, or -1 */
	enum pg_binary_kind kinds[ROWS_NCOLS + 1];	/* of the result's columns */
	int ncols;
	const char *user;		/* every row's user when not fetched */
};

/* The listing's SQL for Q into DST, and which columns it fetches into
 * PLAN; the steps with STEPS.  With one user named, the user name is
 * not fetched: the WHERE clause makes it that name in every row.  No
 * ORDER BY: the rows are sorted here with their steps
 * (sacct_row_sort), and a sort in the server carries every column.
 * -1 if it does not fit. */
static int
listing_sql(char *dst, size_t size, const struct sacct_query *q,
	    bool steps, long schema_version, struct listing_plan *plan)
{
	size_t len;
	int i;

	plan->ncols = 0;
	plan->user = !q->all_users && q->nusers == 1 ? q->users[0] : NULL;
	len = (size_t)snprintf(dst, size, "SELECT");
	for (i = 0; i < ROWS_NCOLS; i++) {
		const struct listing_column *c = &listing[i];

		plan->pos[i] = -1;
		if ((c->part != 0 && (q->skip & c->part) != 0) ||
		    (i == COL_USER && plan->user != NULL))
			continue;
		/* A database before the marks (029): the work is unknown. */
		if (c->part == SACCT_NEED_WORK &&
		    schema_version < SACCT_PG_SCHEMA_VERSION_MARKS)
			continue;
		/* Before the error bounds (030): unknown. */
		if (c->part == SACCT_NEED_ENERGY_ERR &&
		    schema_version < SACCT_PG_SCHEMA_VERSION_ENERGY_ERR)
			continue;
		/* Before the carbon-aware advice (033): unknown. */
		if (c->part == SACCT_NEED_CARBON_SAVING &&
		    schema_version < SACCT_PG_SCHEMA_VERSION_ADVICE)
			continue;
		if (len < size)
			len += (size_t)snprintf(dst + len, size - len, "%s %s",
						plan->ncols > 0 ? "," : "", c->expr);
		plan->kinds[plan->ncols] = c->kind;
		plan->pos[i] = plan->ncols++;
	}
	plan->steps = -1;
	if (steps && len < size) {
		len += (size_t)snprintf(dst + len, size - len, ", j.steps");
		plan->kinds[plan->ncols] = PG_BINARY_RECORDS;
		plan->steps = plan->ncols++;
	}
	if (len < size)
		len += (size_t)snprintf(dst + len, size - len,
					" FROM ceems.jobs j%s%s", sacct_pg_where(q), sacct_pg_where_rest);
	return len < size ? 0 : -1;
}

/* The names of the clusters, by id: a handful of rows. */
struct cluster_names {
	size_t n;
	struct cluster_name {
		int64_t id;
		char name[64];
	} *v;
};

static const enum pg_binary_kind cluster_kinds[2] = {
	PG_BINARY_INT, PG_BINARY_TEXT
};

/* Read after the listing: a job's cluster row exists when its job does
 * (a foreign key), so every id listed is found unless the cluster was
 * deleted, with its jobs, in between. */
static int
cluster_names_load(struct sacct_pg *pg, struct cluster_names *cn, char *err,
		   size_t err_size)
{
	struct pg_binary b;
	PGresult *res;
	int i, n;

	res = sacct_pg_query(pg, "SELECT cluster_id, name FROM ceems.clusters", 0, NULL,
			     true, err, err_size);
	if (res == NULL)
		return -1;
	if (pg_binary_init(&b, res, cluster_kinds, 2, "the clusters", err, err_size) < 0) {
		PQclear(res);
		return -1;
	}
	n = PQntuples(res);
	if (n > 0 && (cn->v = calloc((size_t)n, sizeof(cn->v[0]))) == NULL) {
		PQclear(res);
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!pg_binary_int(&b, i, 0, &cn->v[cn->n].id))
			continue;
		pg_binary_text(&b, i, 1, cn->v[cn->n].name, sizeof(cn->v[cn->n].name));
		cn->n++;
	}
	PQclear(res);
	if (b.bad) {
		snprintf(err, err_size, "database: the clusters: a value of the wrong length");
		return -1;
	}
	return 0;
}

/* The name of cluster ID, or NULL.  *HINT is the last one found: a
 * listing's rows are mostly of one cluster. */
static const char *
cluster_name(const struct cluster_names *cn, int64_t id, size_t *hint)
{
	size_t i;

	if (*hint < cn->n && cn->v[*hint].id == id)
		return cn->v[*hint].name;
	for (i = 0; i < cn->n; i++)
		if (cn->v[i].id == id) {
			*hint = i;
			return cn->v[i].name;
		}
	return NULL;
}

/* Listing column COL of row I, if fetched. */
static bool
listed_int(struct pg_binary *b, const struct listing_plan *plan, int i,
	   int col, int64_t *out)
{
	return plan->pos[col] >= 0 && pg_binary_int(b, i, plan->pos[col], out);
}

static bool
listed_time(struct pg_binary *b, const struct listing_plan *plan, int i,
	    int col, int64_t *out)
{
	return plan->pos[col] >= 0 && pg_binary_time(b, i, plan->pos[col], out);
}

static void
listed_text(struct pg_binary *b, const struct listing_plan *plan, int i,
	    int col, char *dst, size_t size)
{
	if (plan->pos[col] >= 0)
		pg_binary_text(b, i, plan->pos[col], dst, size);
}

/* Listing column COL of row I, if fetched, into *OUT: a string of
 * ROWS' text, at most MAX - 1 bytes.  -1 when out of memory. */
static int
listed_string(struct pg_binary *b, const struct listing_plan *plan, int i,
	      int col, struct sacct_rows *rows, size_t max, const char **out)
{
	char text[SACCT_NODES_MAX];

	if (plan->pos[col] < 0)
		return 0;
	pg_binary_text(b, i, plan->pos[col], text, max < sizeof(text) ? max : sizeof(text));
	return (*out = sacct_row_text(rows, text, sizeof(text))) != NULL ? 0 : -1;
}

/* Row I of the listing into R, a row of ROWS, and its cluster's id into
 * *CLUSTER.  -1 when out of memory. */
static int
job_from_result(struct pg_binary *b, const struct listing_plan *plan, int i,
		struct sacct_rows *rows, struct sacct_row *r, int64_t *cluster)
{
	double *figures[ROWS_NCOLS - ROWS_FIRST_FIGURE] = {
		&r->elapsed_s, &r->cpu_s, &r->cpu_eff, &r->mem_peak_bytes,
		&r->mem_eff, &r->gpu_util_pct, &r->package_j, &r->dram_j,
		&r->gpu_j, &r->node_j, &r->total_j, &r->quality,
		&r->emissions_g, &r->g_per_kwh, &r->pue, &r->gpu_sm_pct,
		&r->gpu_mem_peak_bytes, &r->gpu_mem_total_bytes,
		&r->io_read_bytes, &r->io_write_bytes, &r->net_in_bytes,
		&r->net_out_bytes,
		&r->perf_ctxsw, &r->perf_page_faults, &r->perf_migrations,
		&r->perf_cycles, &r->perf_instructions,
		&r->io_nodes, &r->net_nodes,
		&r->ci_fallback, &r->idle_unlearned,
		&r->work, &r->energy_per_work, &r->energy_err_j, &r->saving_g
	};
	int64_t v, task;
	int k;

	if (!listed_int(b, plan, i, 0, cluster))
		*cluster = -1;
	if (listed_int(b, plan, i, 1, &v))
		r->jobid = (uint32_t)v;
	if (listed_int(b, plan, i, 2, &v) && listed_int(b, plan, i, 3, &task)) {
		r->array_job_id = (uint32_t)v;
		r->array_task_id = (uint32_t)task;
	}
	if (listed_int(b, plan, i, 4, &v))
		r->uid = (uint32_t)v;
	if (plan->user != NULL)
		snprintf(r->user, sizeof(r->user), "%s", plan->user);
	else
		listed_text(b, plan, i, COL_USER, r->user, sizeof(r->user));
	listed_text(b, plan, i, 6, r->account, sizeof(r->account));
	listed_text(b, plan, i, 7, r->partition, sizeof(r->partition));
	listed_text(b, plan, i, 8, r->qos, sizeof(r->qos));
	if (listed_string(b, plan, i, 9, rows, SACCT_NAME_MAX, &r->name) < 0)
		return -1;
	listed_text(b, plan, i, 10, r->state, sizeof(r->state));
	if (listed_int(b, plan, i, 11, &v))
		r->exit_code = (int32_t)v;
	if (listed_int(b, plan, i, 12, &v))
		r->exit_signal = (int32_t)v;
	if (listed_time(b, plan, i, 13, &v))
		r->submit_time = v;
	if (listed_time(b, plan, i, 14, &v))
		r->start_time = v;
	if (listed_time(b, plan, i, 15, &v))
		r->end_time = v;
	if (listed_int(b, plan, i, 16, &v))
		r->time_limit_min = (uint32_t)v;
	if (listed_int(b, plan, i, 17, &v))
		r->alloc_cpus = (uint32_t)v;
	if (listed_int(b, plan, i, 18, &v))
		r->req_mem_bytes = (uint64_t)v;
	if (listed_int(b, plan, i, 19, &v))
		r->alloc_gpus = (uint32_t)v;
	if (listed_int(b, plan, i, 20, &v))
		r->nnodes = (uint32_t)v;
	if (listed_int(b, plan, i, 21, &v))
		r->nodes_reported = (uint32_t)v;
	if (listed_string(b, plan, i, 22, rows, SACCT_NODES_MAX, &r->nodes) < 0)
		return -1;
	listed_text(b, plan, i, COL_WORK_UNIT, r->work_unit, sizeof(r->work_unit));
	for (k = ROWS_FIRST_FIGURE; k < ROWS_NCOLS; k++)
		if (plan->pos[k] >= 0)
			*figures[k - ROWS_FIRST_FIGURE] =
				pg_binary_number(b, i, plan->pos[k]);
	return 0;
}

/* A step of jobs.steps (ceems.step_summary, migration 016): its fields
 * in order; the schema from migration 028 on adds the step's tasks. */
#define STEP_NFIELDS 10
#define STEP_NFIELDS_BEFORE_TASKS 9
#define SCHEMA_VERSION_STEP_TASKS 28
static const enum pg_binary_kind step_kinds[STEP_NFIELDS] = {
	PG_BINARY_TEXT, PG_BINARY_INT, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER
};

/* Where the steps of one job go: after the rows, its own at JOB; each
 * step of NFIELDS fields. */
struct step_target {
	const struct sacct_query *q;
	struct sacct_rows *rows;
	size_t job;
	int nfields;
};

/* One step of a job's jobs.steps, as a row (pg_binary_records' EACH). */
static int
add_step(void *arg, const struct pg_binary_field *f)
{
	struct step_target *t = arg;
	struct sacct_row *st;
	char id[SACCT_STEP_MAX];
	int64_t nodes;

	pg_binary_field_text(&f[0], id, sizeof(id));
	if (!sacct_merge_query_wants_step(t->q, &t->rows->v[t->job], id))
		return 0;
	if ((st = sacct_row_add(t->rows)) == NULL)
		return -1;
	/* The add may have moved the rows: the job by its index. */
	if (sacct_row_step_of(t->rows, st, &t->rows->v[t->job], id) < 0)
		return -1;
	if (pg_binary_field_int(&f[1], &nodes))
		st->nodes_reported = (uint32_t)nodes;
	st->elapsed_s = pg_binary_field_number(&f[2]);
	st->cpu_s = pg_binary_field_number(&f[3]);
	st->mem_peak_bytes = pg_binary_field_number(&f[4]);
	st->package_j = pg_binary_field_number(&f[5]);
	st->dram_j = pg_binary_field_number(&f[6]);
	st->gpu_j = pg_binary_field_number(&f[7]);
	st->node_j = pg_binary_field_number(&f[8]);
	if (t->nfields > STEP_NFIELDS_BEFORE_TASKS)
		st->ntasks = pg_binary_field_number(&f[9]);
	sacct_row_add_known(&st->total_j, st->package_j);
	sacct_row_add_known(&st->total_j, st->dram_j);
	sacct_row_add_known(&st->total_j, st->gpu_j);
	sacct_row_add_known(&st->total_j, st->node_j);
	return 0;
}

/* How many steps the listing's rows say they hold: room for them is
 * made once. */
static size_t
count_steps(struct pg_binary *b, const struct listing_plan *plan)
{
	int i, n = PQntuples(b->res);
	size_t total = 0;

	for (i = 0; i < n; i++)
		total += pg_binary_records_claimed(b, i, plan->steps);
	return total;
}

/* The steps of listing row I, whose job is ROWS->v[JOB], after it, in
 * a schema of version VERSION. */
static int
add_steps(struct pg_binary *b, const struct listing_plan *plan, int i,
	  long version, const struct sacct_query *q, struct sacct_rows *rows,
	  size_t job, char *err, size_t err_size)
{
	struct step_target t = { q, rows, job,
		version >= SCHEMA_VERSION_STEP_TASKS ? STEP_NFIELDS
						     : STEP_NFIELDS_BEFORE_TASKS };

	if (pg_binary_records(b, i, plan->steps, step_kinds, t.nfields,
			      add_step, &t) < 0) {
		if (b->bad)
			snprintf(err, err_size,
				 "database: the listing: job %u: its steps are not an array of ceems.step_summary (is the schema newer than this tool?)",
				 rows->v[job].jobid);
		else
			snprintf(err, err_size, "out of memory");
		return -1;
	}
	return 0;
}

int
sacct_pg_listing_rows(struct sacct_pg *pg, const struct sacct_query *q,
	      struct sacct_rows *rows, char *err, size_t err_size)
{
	struct listing_plan plan;
	struct cluster_names clusters = { 0, NULL };
	struct sacct_pg_params p;
	struct pg_binary b;
	PGresult *res;
	char sql[8192];
	const char *name;
	size_t first = rows->n, i, keep, hint = 0, nsteps = 0;
	int64_t cluster;
	int n, ret = -1;

	if (listing_sql(sql, sizeof(sql), q, !q->allocations && first == 0,
			pg->schema_version, &plan) < 0) {
		snprintf(err, err_size, "the listing's query is too long");
		return -1;
	}
	sacct_pg_params_fill(&p, q);
	res = sacct_pg_query(pg, sql, 8, p.v, true, err, err_size);
	sacct_pg_params_free(&p);
	if (res == NULL)
		return -1;
	if (pg_binary_init(&b, res, plan.kinds, plan.ncols, "the listing", err, err_size) < 0 ||
	    cluster_names_load(pg, &clusters, err, err_size) < 0)
		goto out;
	n = PQntuples(res);
	if (plan.steps >= 0)
		nsteps = count_steps(&b, &plan);
	/* Room for every row at once: a heavy user's month is 33 MB of
	 * rows, each job followed by its steps. */
	if (sacct_row_reserve(rows, (size_t)n + nsteps) < 0) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	for (i = 0; i < (size_t)n; i++) {
		struct sacct_row *r = sacct_row_add(rows);

		if (r == NULL) {
			snprintf(err, err_size, "out of memory");
			goto out;
		}
		if (job_from_result(&b, &plan, (int)i, rows, r, &cluster) < 0) {
			snprintf(err, err_size, "out of memory");
			goto out;
		}
		if ((name = cluster_name(&clusters, cluster, &hint)) == NULL) {
			snprintf(err, err_size,
				 "database: job %u: its cluster (id %lld) is not in ceems.clusters any more",
				 r->jobid, (long long)cluster);
			goto out;
		}
		snprintf(r->cluster, sizeof(r->cluster), "%s", name);
		if (plan.steps >= 0 &&
		    add_steps(&b, &plan, (int)i, pg->schema_version, q, rows,
			      rows->n - 1, err, err_size) < 0)
			goto out;
	}
	if (b.bad) {
		snprintf(err, err_size, "database: the listing: a value of the wrong length");
		goto out;
	}
	/* -j 123.batch: the step without its job. */
	for (i = keep = 0; i < rows->n; i++) {
		if (rows->v[i].step[0] == '\0' &&
		    !sacct_merge_query_wants_job(q, &rows->v[i]))
			continue;
		if (keep != i)
			rows->v[keep] = rows->v[i];
		keep++;
	}
	rows->n = keep;
	sacct_row_sort(rows);
	ret = 0;
out:
	free(clusters.v);
	PQclear(res);
	return ret;
}
