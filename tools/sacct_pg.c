/* sacct_pg.c - ceems-sacct's PostgreSQL backend (see sacct_pg.h).
 *
 * The listing is one query on ceems.jobs, in the form its indexes serve
 * (doc/performance.md): the window as `start_time < $E AND
 * coalesce(end_time, start_time) >= $S` with migration 009's lower
 * bound on start_time, one user as `user_name = $N`
 * with the name a text parameter (migration 007: compared in the
 * column's collation, the (user_name, start_time) index is used), lists
 * as string_to_array of one text parameter.  Each job's steps come with
 * its row (jobs.steps, migration 016), the clusters' names from a
 * second query.  Nothing is pasted into the SQL text: values are
 * parameters, always. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pg_binary.h"
#include "sacct_pg.h"

struct sacct_pg {
	PGconn *conn;
};

/* libpq's messages span lines (a hint on the next one, indented): the
 * tool's errors are one line. */
static void
one_line(char *dst, size_t size, const char *prefix, const char *msg)
{
	size_t n, i;
	bool space = false;

	n = (size_t)snprintf(dst, size, "%s", prefix);
	for (i = 0; msg[i] != '\0' && n + 1 < size; i++) {
		if (msg[i] == '\n' || msg[i] == '\t' || msg[i] == ' ') {
			space = true;
			continue;
		}
		if (space && n + 2 < size)
			dst[n++] = ' ';
		space = false;
		dst[n++] = msg[i];
	}
	if (n < size)
		dst[n] = '\0';
}

static void
quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

struct sacct_pg *
sacct_pg_connect(const char *conninfo, char *err, size_t err_size)
{
	const char *keys[] = { "dbname", "application_name", NULL };
	const char *values[] = { conninfo, "ceems-sacct", NULL };
	struct sacct_pg *pg;

	if ((pg = calloc(1, sizeof(*pg))) == NULL) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	pg->conn = PQconnectdbParams(keys, values, 1);
	if (pg->conn == NULL || PQstatus(pg->conn) != CONNECTION_OK) {
		one_line(err, err_size, "cannot connect to the database: ",
			 pg->conn != NULL ? PQerrorMessage(pg->conn) : "out of memory");
		PQfinish(pg->conn);
		free(pg);
		return NULL;
	}
	PQsetNoticeProcessor(pg->conn, quiet, NULL);
	/* A heavy user's listing costs enough, by the planner's guess, to
	 * be JIT-compiled: 20 to 30 ms of compiling for a query that reads
	 * its rows in as many (doc/performance.md).  The tool's queries
	 * only read and join rows, what JIT does not speed up.  A server
	 * without JIT refuses the setting: nothing is lost then. */
	PQclear(PQexec(pg->conn, "SET jit = off"));
	return pg;
}

void
sacct_pg_close(struct sacct_pg *pg)
{
	if (pg == NULL)
		return;
	PQfinish(pg->conn);
	free(pg);
}

static void
db_error(const PGresult *res, const struct sacct_pg *pg, char *err,
	 size_t err_size)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";

	if (msg == NULL || *msg == '\0')
		msg = PQerrorMessage(pg->conn);
	one_line(err, err_size, "database: ", msg);
}

/* RES if it holds rows; else NULL with ERR, RES cleared. */
static PGresult *
rows_or_error(struct sacct_pg *pg, PGresult *res, char *err, size_t err_size)
{
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK) {
		db_error(res, pg, err, err_size);
		PQclear(res);
		return NULL;
	}
	return res;
}

/* SQL with N text PARAMS; results in text, or in binary with BINARY
 * (the listing's: pg_binary.h says why). */
static PGresult *
query_as(struct sacct_pg *pg, const char *sql, int n,
	 const char *const *params, bool binary, char *err, size_t err_size)
{
	return rows_or_error(pg, PQexecParams(pg->conn, sql, n, NULL, params,
					      NULL, NULL, binary ? 1 : 0),
			     err, err_size);
}

static PGresult *
query(struct sacct_pg *pg, const char *sql, int n, const char *const *params,
      char *err, size_t err_size)
{
	return query_as(pg, sql, n, params, false, err, err_size);
}

/* The oldest schema this tool reads: the listing takes each job's steps
 * from jobs.steps (sql/migrations/016_job_step_sums.sql).  A newer one
 * is read as long as the columns are what the tool expects
 * (pg_binary_init says otherwise). */
#define SCHEMA_VERSION_MIN 16

int
sacct_pg_identity(struct sacct_pg *pg, char *user, size_t user_size,
		  bool *admin, bool *coordinator, char *err, size_t err_size)
{
	PGresult *res;
	long version;

	/* A role without SELECT on the tables (the nodes' writer, in
	 * ceems_writer) would get "permission denied for table
	 * coordinators" below: say what is wrong instead. */
	res = query(pg,
		    "SELECT current_user::text,"
		    " has_table_privilege('ceems.jobs', 'SELECT')"
		    " AND has_table_privilege('ceems.coordinators', 'SELECT')",
		    0, NULL, err, err_size);
	if (res == NULL)
		return -1;
	if (strcmp(PQgetvalue(res, 0, 1), "t") != 0) {
		snprintf(err, err_size,
			 "permission denied: database role %s may not read ceems.jobs (not in ceems_reader)",
			 PQgetvalue(res, 0, 0));
		PQclear(res);
		return SACCT_PG_NO_READ;
	}
	PQclear(res);
	res = query(pg,
		    "SELECT current_user::text,"
		    " pg_has_role(current_user, 'ceems_admin', 'USAGE'),"
		    " EXISTS (SELECT 1 FROM ceems.coordinators c"
		    "  WHERE c.username = (current_user COLLATE \"default\")),"
		    " (SELECT coalesce(max(version), 0) FROM ceems.schema_version)",
		    0, NULL, err, err_size);
	if (res == NULL)
		return -1;
	version = strtol(PQgetvalue(res, 0, 3), NULL, 10);
	if (version < SCHEMA_VERSION_MIN) {
		snprintf(err, err_size,
			 "the database's schema is at version %ld, and this ceems-sacct reads version %d or later: an admin runs `ceems-admin db migrate` (ceems-admin(8))",
			 version, SCHEMA_VERSION_MIN);
		PQclear(res);
		return -1;
	}
	snprintf(user, user_size, "%s", PQgetvalue(res, 0, 0));
	*admin = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	*coordinator = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
	PQclear(res);
	return 0;
}

/* "a,b,c" of a list, or NULL when empty (the filter is off). */
static char *
join(const char (*list)[64], size_t n)
{
	size_t i, len = 1;
	char *s;

	if (n == 0)
		return NULL;
	for (i = 0; i < n; i++)
		len += strlen(list[i]) + 1;
	if ((s = calloc(1, len)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i > 0)
			strcat(s, ",");
		strcat(s, list[i]);
	}
	return s;
}

struct params {
	char start[24], end[24];
	char *users, *accounts, *partitions, *states, *clusters, *jobs;
	const char *v[8];
};

/* The WHERE clause shared by the listing and the records: $1 window
 * end, $2 window start, $3 users, $4 accounts, $5 partitions, $6 states,
 * $7 clusters, $8 job ids.
 *
 * WINDOW_LOWER_BOUND gives the (user_name, start_time) index scan its start
 * (migration 009, doc/storage.md): no job lasts longer than the longest
 * job seen, so a job that started before S minus that duration ended
 * before S and is not in the window; the condition changes no result.
 * It must stay ONE sub-select: under row-level security only leakproof
 * operators may be index conditions, and `-`, `*` outside the
 * sub-select are not.  With no clusters row (no jobs either) max() is
 * NULL: the bound is then -infinity, never "no rows". */
#define WINDOW_LOWER_BOUND \
	" AND j.start_time >= (SELECT coalesce(to_timestamp($2::bigint)" \
	" - max(x.max_job_s) * interval '1 second', '-infinity')" \
	" FROM ceems.clusters x)"

static const char *
where_clause(const struct sacct_query *q)
{
	if (q->all_users)
		return " WHERE j.start_time < to_timestamp($1::bigint)"
			" AND coalesce(j.end_time, j.start_time) >= to_timestamp($2::bigint)"
			WINDOW_LOWER_BOUND
			" AND $3::text IS NULL";
	if (q->nusers == 1)
		return " WHERE j.start_time < to_timestamp($1::bigint)"
			" AND coalesce(j.end_time, j.start_time) >= to_timestamp($2::bigint)"
			WINDOW_LOWER_BOUND
			" AND j.user_name = $3::text";
	return " WHERE j.start_time < to_timestamp($1::bigint)"
		" AND coalesce(j.end_time, j.start_time) >= to_timestamp($2::bigint)"
		WINDOW_LOWER_BOUND
		" AND j.user_name = ANY (string_to_array($3::text, ','))";
}

static const char *const where_rest =
	" AND ($4::text IS NULL OR j.account = ANY (string_to_array($4::text, ',')))"
	" AND ($5::text IS NULL OR j.partition = ANY (string_to_array($5::text, ',')))"
	" AND ($6::text IS NULL OR j.state::text = ANY (string_to_array($6::text, ',')))"
	" AND ($7::text IS NULL OR j.cluster_id IN (SELECT x.cluster_id FROM ceems.clusters x"
	"      WHERE x.name = ANY (string_to_array($7::text, ','))))"
	" AND ($8::text IS NULL OR j.jobid = ANY (string_to_array($8::text, ',')::bigint[])"
	"      OR j.array_job_id = ANY (string_to_array($8::text, ',')::bigint[]))";

static int
params_fill(struct params *p, const struct sacct_query *q)
{
	char ids[SACCT_LIST_MAX][64];
	size_t i;

	memset(p, 0, sizeof(*p));
	snprintf(p->end, sizeof(p->end), "%lld", (long long)q->end);
	snprintf(p->start, sizeof(p->start), "%lld", (long long)q->start);
	for (i = 0; i < q->njobs; i++)
		snprintf(ids[i], sizeof(ids[i]), "%u", q->jobs[i].jobid);
	p->users = q->all_users ? NULL : join(q->users, q->nusers);
	p->accounts = join(q->accounts, q->naccounts);
	p->partitions = join(q->partitions, q->npartitions);
	if (q->nstates > 0) {
		char states[SACCT_LIST_MAX][64];

		for (i = 0; i < q->nstates; i++)
			snprintf(states[i], sizeof(states[i]), "%s", q->states[i]);
		p->states = join(states, q->nstates);
	}
	p->clusters = join(q->clusters, q->nclusters);
	p->jobs = join(ids, q->njobs);
	p->v[0] = p->end;
	p->v[1] = p->start;
	p->v[2] = p->users;
	p->v[3] = p->accounts;
	p->v[4] = p->partitions;
	p->v[5] = p->states;
	p->v[6] = p->clusters;
	p->v[7] = p->jobs;
	return 0;
}

static void
params_free(struct params *p)
{
	free(p->users);
	free(p->accounts);
	free(p->partitions);
	free(p->states);
	free(p->clusters);
	free(p->jobs);
}

/* The listing's columns, in the order job_from_result reads them.  Times
 * are timestamptz, which the binary format sends as one integer
 * (extract(epoch ...) would compute a numeric).  Only the columns whose
 * row part somebody reads (sacct_query.skip) are asked for: a heavy
 * user's month is 18,000 rows, and every column of every row costs the
 * server a send call and libpq a value, NULL or not
 * (doc/performance.md, "The listing's row, smaller").  Part 0 is always
 * read.  The cluster comes as its id, its name from a table fetched
 * once (cluster_names): a join per row for a handful of names cost a
 * sixth of the listing. */
struct listing_column {
	const char *expr;
	enum pg_binary_kind kind;
	uint64_t part;
};

#define ROWS_NCOLS 38
#define ROWS_FIRST_FIGURE 23
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
	{ "j.emissions_g", PG_BINARY_NUMBER, SACCT_NEED_EMISSIONS },
	{ "j.emission_g_per_kwh", PG_BINARY_NUMBER, SACCT_NEED_G_PER_KWH },
	{ "j.pue", PG_BINARY_NUMBER, SACCT_NEED_PUE }
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
 * (sacct_rows_sort), and a sort in the server carries every column.
 * -1 if it does not fit. */
static int
listing_sql(char *dst, size_t size, const struct sacct_query *q,
	    bool steps, struct listing_plan *plan)
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
					" FROM ceems.jobs j%s%s", where_clause(q), where_rest);
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

	res = query_as(pg, "SELECT cluster_id, name FROM ceems.clusters", 0, NULL,
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
	return (*out = sacct_rows_text(rows, text, sizeof(text))) != NULL ? 0 : -1;
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
		&r->emissions_g, &r->g_per_kwh, &r->pue
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
	for (k = ROWS_FIRST_FIGURE; k < ROWS_NCOLS; k++)
		if (plan->pos[k] >= 0)
			*figures[k - ROWS_FIRST_FIGURE] =
				pg_binary_number(b, i, plan->pos[k]);
	return 0;
}

static void
add_known(double *sum, double x)
{
	if (isfinite(x))
		*sum = isfinite(*sum) ? *sum + x : x;
}

/* A step of jobs.steps (ceems.step_summary, migration 016): its fields
 * in order. */
#define STEP_NFIELDS 9
static const enum pg_binary_kind step_kinds[STEP_NFIELDS] = {
	PG_BINARY_TEXT, PG_BINARY_INT, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER
};

/* Where the steps of one job go: after the rows, its own at JOB. */
struct step_target {
	const struct sacct_query *q;
	struct sacct_rows *rows;
	size_t job;
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
	if (!sacct_query_wants_step(t->q, t->rows->v[t->job].jobid, id))
		return 0;
	if ((st = sacct_rows_add(t->rows)) == NULL)
		return -1;
	/* The add may have moved the rows: the job by its index. */
	if (sacct_rows_step_of(t->rows, st, &t->rows->v[t->job], id) < 0)
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
	add_known(&st->total_j, st->package_j);
	add_known(&st->total_j, st->dram_j);
	add_known(&st->total_j, st->gpu_j);
	add_known(&st->total_j, st->node_j);
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

/* The steps of listing row I, whose job is ROWS->v[JOB], after it. */
static int
add_steps(struct pg_binary *b, const struct listing_plan *plan, int i,
	  const struct sacct_query *q, struct sacct_rows *rows, size_t job,
	  char *err, size_t err_size)
{
	struct step_target t = { q, rows, job };

	if (pg_binary_records(b, i, plan->steps, step_kinds, STEP_NFIELDS,
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
sacct_pg_rows(struct sacct_pg *pg, const struct sacct_query *q,
	      struct sacct_rows *rows, char *err, size_t err_size)
{
	struct listing_plan plan;
	struct cluster_names clusters = { 0, NULL };
	struct params p;
	struct pg_binary b;
	PGresult *res;
	char sql[8192];
	const char *name;
	size_t first = rows->n, i, keep, hint = 0, nsteps = 0;
	int64_t cluster;
	int n, ret = -1;

	if (listing_sql(sql, sizeof(sql), q, !q->allocations && first == 0, &plan) < 0) {
		snprintf(err, err_size, "the listing's query is too long");
		return -1;
	}
	params_fill(&p, q);
	res = query_as(pg, sql, 8, p.v, true, err, err_size);
	params_free(&p);
	if (res == NULL)
		return -1;
	if (pg_binary_init(&b, res, plan.kinds, plan.ncols, "the listing", err, err_size) < 0 ||
	    cluster_names_load(pg, &clusters, err, err_size) < 0)
		goto out;
	n = PQntuples(res);
	if (plan.steps >= 0)
		nsteps = count_steps(&b, &plan);
	/* Room for every row at once: a heavy user's month is 25 MB of
	 * rows, each job followed by its steps. */
	if (sacct_rows_reserve(rows, (size_t)n + nsteps) < 0) {
		snprintf(err, err_size, "out of memory");
		goto out;
	}
	for (i = 0; i < (size_t)n; i++) {
		struct sacct_row *r = sacct_rows_add(rows);

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
		    add_steps(&b, &plan, (int)i, q, rows, rows->n - 1, err, err_size) < 0)
			goto out;
	}
	if (b.bad) {
		snprintf(err, err_size, "database: the listing: a value of the wrong length");
		goto out;
	}
	/* -j 123.batch: the step without its job. */
	for (i = keep = 0; i < rows->n; i++) {
		if (rows->v[i].step[0] == '\0' &&
		    !sacct_query_wants_job(q, rows->v[i].jobid))
			continue;
		if (keep != i)
			rows->v[keep] = rows->v[i];
		keep++;
	}
	rows->n = keep;
	sacct_rows_sort(rows);
	ret = 0;
out:
	free(clusters.v);
	PQclear(res);
	return ret;
}

/* A node record as JSON, rebuilt from job_nodes and its steps and notes:
 * what the database does not keep is absent. */
static const char *const records_sql_head =
	"SELECT n.job_key, n.node, jsonb_strip_nulls(jsonb_build_object("
	" 'format', 'ceems-job-record/1',"
	" 'written_at', extract(epoch FROM n.written_at)::bigint,"
	" 'finalized_by', n.finalized_by,"
	" 'job', n.job_meta,"
	" 'measurements', jsonb_build_object("
	"  'jobid', j.jobid, 'uid', j.uid,"
	"  'alloc_cores', n.alloc_cores, 'alloc_mem_bytes', n.alloc_mem_bytes,"
	"  'elapsed_s', n.elapsed_s, 'cpu_s', n.cpu_s, 'gap_s', n.gap_s,"
	"  'cgroup_gone', n.cgroup_gone,"
	"  'usage', jsonb_build_object("
	"   'cpu_usage_ns', round(n.cpu_s * 1e9)::bigint,"
	"   'mem_peak_bytes', n.mem_peak_bytes, 'mem_rss_bytes', n.mem_rss_bytes,"
	"   'mem_limit_bytes', n.mem_limit_bytes, 'oom_kills', n.oom_kills,"
	"   'io_read_bytes', n.io_read_bytes, 'io_write_bytes', n.io_write_bytes,"
	"   'cpuset', n.cpuset, 'failed', to_jsonb(n.usage_failed),"
	"   'peak_sampled', CASE WHEN n.mem_peak_sampled THEN true END),"
	"  'ledger', jsonb_build_object("
	"   'lifetime_s', n.lifetime_s,"
	"   'package', CASE WHEN n.package_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.package_j, 'static_j', n.package_static_j,"
	"     'covered_s', n.package_covered_s) END,"
	"   'dram', CASE WHEN n.dram_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.dram_j, 'static_j', n.dram_static_j,"
	"     'covered_s', n.dram_covered_s) END,"
	"   'gpu', CASE WHEN n.gpu_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.gpu_j, 'covered_s', n.gpu_covered_s) END,"
	"   'node', CASE WHEN n.node_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.node_j, 'covered_s', n.node_covered_s) END,"
	"   'emissions', CASE WHEN n.emissions_g IS NOT NULL THEN jsonb_build_object("
	"     'grams', n.emissions_g, 'covered_s', n.emissions_covered_s,"
	"     'factor', jsonb_build_object('source', n.emission_factor_source,"
	"       'zone', n.emission_zone, 'year', n.emission_year,"
	"       'g_per_kwh', n.emission_g_per_kwh, 'pue', n.pue),"
	"     'factor_changed', coalesce(n.emission_factor_changed, false)) END),"
	"  'steps', (SELECT jsonb_agg(jsonb_build_object('id', s.step_id,"
	"     'ended', s.ended, 'elapsed_s', s.elapsed_s, 'cpu_s', s.cpu_s,"
	"     'mem_peak_bytes', s.mem_peak_bytes, 'joules', jsonb_build_object("
	"       'package', s.package_j, 'dram', s.dram_j, 'gpu', s.gpu_j,"
	"       'node', s.node_j))"
	"     ORDER BY CASE s.step_id WHEN 'batch' THEN 1 WHEN 'extern' THEN 2"
	"       WHEN 'interactive' THEN 3 ELSE 4 END,"
	"       CASE WHEN s.step_id ~ '^[0-9]{1,9}$' THEN s.step_id::integer END,"
	"       s.step_id)"
	"    FROM ceems.job_steps s WHERE s.job_key = n.job_key AND s.node = n.node)),"
	" 'notes', (SELECT jsonb_agg(jsonb_build_object('id', o.note_id,"
	"    'text', o.text, 'saving_j', o.saving_j, 'saving_g', o.saving_g)"
	"    ORDER BY o.ordinal)"
	"   FROM ceems.job_notes o WHERE o.job_key = n.job_key AND o.node = n.node)"
	"))::text"
	" FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)"
	" JOIN ceems.job_nodes n ON n.job_key = j.job_key";

static const enum pg_binary_kind series_kinds[SACCT_S_NCOLS + 1] = {
	PG_BINARY_TIME, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_INT
};

static int
add_series(struct sacct_pg *pg, long long key, const char *node,
	   struct sacct_series *s, char *err, size_t err_size)
{
	char keytext[24];
	const char *params[2] = { keytext, node };
	struct pg_binary b;
	PGresult *res;
	int64_t t, resolution;
	int n, i, k;

	snprintf(keytext, sizeof(keytext), "%lld", key);
	res = query_as(pg,
		       "SELECT t, interval_s, cpu_s,"
		       " mem_bytes, package_j, dram_j, gpu_j, node_j, resolution_s"
		       " FROM ceems.job_samples WHERE job_key = $1::bigint AND node = $2"
		       " ORDER BY t",
		       2, params, true, err, err_size);
	if (res == NULL)
		return -1;
	if (pg_binary_init(&b, res, series_kinds, SACCT_S_NCOLS + 1, "the series",
			   err, err_size) < 0) {
		PQclear(res);
		return -1;
	}
	n = PQntuples(res);
	if (n > 0) {
		if ((s->rows = calloc((size_t)n, sizeof(s->rows[0]))) == NULL) {
			PQclear(res);
			snprintf(err, err_size, "out of memory");
			return -1;
		}
		for (i = 0; i < n; i++) {
			s->rows[i][SACCT_S_T] = pg_binary_time(&b, i, 0, &t) ? (double)t : NAN;
			for (k = 1; k < SACCT_S_NCOLS; k++)
				s->rows[i][k] = pg_binary_number(&b, i, k);
		}
		s->present = true;
		s->nrows = (size_t)n;
		s->resolution_s = pg_binary_int(&b, 0, SACCT_S_NCOLS, &resolution) ?
			(int)resolution : 0;
	}
	PQclear(res);
	if (b.bad) {
		snprintf(err, err_size, "database: the series: a value of the wrong length");
		return -1;
	}
	return 0;
}

int
sacct_pg_records(struct sacct_pg *pg, const struct sacct_query *q,
		 bool series, struct sacct_records *recs, char *err,
		 size_t err_size)
{
	struct ceems_job_record *r;
	struct sacct_series *s;
	struct params p;
	PGresult *res;
	char sql[8192], derr[256];
	const char *json;
	int n, i;

	params_fill(&p, q);
	snprintf(sql, sizeof(sql), "%s%s%s ORDER BY j.start_time, c.name, j.jobid, n.node",
		 records_sql_head, where_clause(q), where_rest);
	res = query(pg, sql, 8, p.v, err, err_size);
	params_free(&p);
	if (res == NULL)
		return -1;
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		if ((r = sacct_records_add(recs, &s)) == NULL) {
			PQclear(res);
			snprintf(err, err_size, "out of memory");
			return -1;
		}
		json = PQgetvalue(res, i, 2);
		if (ceems_record_decode(json, strlen(json), r, derr, sizeof(derr)) < 0) {
			snprintf(err, err_size, "job %s on %s: the stored record does not rebuild: %s",
				 PQgetvalue(res, i, 0), PQgetvalue(res, i, 1), derr);
			recs->n--;
			PQclear(res);
			return -1;
		}
		if (series && add_series(pg, strtoll(PQgetvalue(res, i, 0), NULL, 10),
					 PQgetvalue(res, i, 1), s, err, err_size) < 0) {
			PQclear(res);
			return -1;
		}
	}
	PQclear(res);
	return 0;
}
