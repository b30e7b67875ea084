/* sacct_pg.c - ceems-sacct's PostgreSQL backend (see sacct_pg.h): the
 * connection, who the caller is, the filters every query shares, and the
 * node records of --json/--series; the listing is sacct_pg_listing.c.
 *
 * Every query filters ceems.jobs in the form its indexes serve
 * (doc/performance.md): the window as `start_time < $E AND
 * coalesce(end_time, start_time) >= $S` with migration 009's lower
 * bound on start_time, one user as `user_name = $N` with the name a
 * text parameter (migration 007: compared in the column's collation,
 * the (user_name, start_time) index is used), lists as string_to_array
 * of one text parameter.  Nothing is pasted into the SQL text: values
 * are parameters, always. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "pg_binary.h"
#include "sacct_pg.h"
#include "sacct_pg_internal.h"

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

/* Seconds the connection may take where the caller's connection
 * string, service or environment does not say: a database host that
 * does not answer would hold ceems-sacct for as long as TCP retries (two
 * minutes on Linux) before it lists the spool instead. */
#define CONNECT_TIMEOUT_S "10"

/* Does CONNINFO, or what libpq would add to it, set connect_timeout?
 * A service (its file may) or PGCONNECT_TIMEOUT counts as set; so does
 * a string libpq cannot parse (it will say why). */
static bool
timeout_is_set(const char *conninfo)
{
	PQconninfoOption *opts, *opt;
	bool set = false;

	if (getenv("PGCONNECT_TIMEOUT") != NULL || getenv("PGSERVICE") != NULL)
		return true;
	if ((opts = PQconninfoParse(conninfo, NULL)) == NULL)
		return true;
	for (opt = opts; opt->keyword != NULL; opt++)
		if ((strcmp(opt->keyword, "connect_timeout") == 0 ||
		     strcmp(opt->keyword, "service") == 0) &&
		    opt->val != NULL && opt->val[0] != '\0')
			set = true;
	PQconninfoFree(opts);
	return set;
}

/* Did the server answer the failed connection to CONNINFO?  Then it
 * refused it (authentication, a role or database that does not exist,
 * no pg_hba.conf line): the server is up, and a listing of the spool
 * instead would hide what to fix.  No answer (stopped, unreachable,
 * starting or shutting down) is the database being down.  The ping
 * waits at most PING_TIMEOUT_S, so that a server that takes connections
 * and never answers costs the caller little more than its timeout. */
#define PING_TIMEOUT_S "2"

static bool
server_answered(const char *conninfo)
{
	const char *keys[] = { "dbname", "connect_timeout", NULL };
	const char *values[] = { conninfo, PING_TIMEOUT_S, NULL };

	return PQpingParams(keys, values, 1) == PQPING_OK;
}

struct sacct_pg *
sacct_pg_connect(const char *conninfo, bool *refused, char *err, size_t err_size)
{
	const char *keys[4], *values[4];
	struct sacct_pg *pg;
	int n = 0;

	if (!timeout_is_set(conninfo)) {
		keys[n] = "connect_timeout";
		values[n++] = CONNECT_TIMEOUT_S;
	}
	keys[n] = "dbname";
	values[n++] = conninfo;
	keys[n] = "application_name";
	values[n++] = "ceems-sacct";
	keys[n] = values[n] = NULL;
	if ((pg = calloc(1, sizeof(*pg))) == NULL) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	*refused = false;
	pg->conn = PQconnectdbParams(keys, values, 1);
	if (pg->conn == NULL || PQstatus(pg->conn) != CONNECTION_OK) {
		*refused = pg->conn != NULL && server_answered(conninfo);
		one_line(err, err_size, *refused ?
			 "the database refused the connection: " :
			 "cannot connect to the database: ",
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

PGresult *
sacct_pg_query(struct sacct_pg *pg, const char *sql, int n,
	       const char *const *params, bool binary, char *err,
	       size_t err_size)
{
	return rows_or_error(pg, PQexecParams(pg->conn, sql, n, NULL, params,
					      NULL, NULL, binary ? 1 : 0),
			     err, err_size);
}

static PGresult *
query(struct sacct_pg *pg, const char *sql, int n, const char *const *params,
      char *err, size_t err_size)
{
	return sacct_pg_query(pg, sql, n, params, false, err, err_size);
}

/* The oldest schema this tool reads: the listing takes each job's steps
 * from jobs.steps (sql/migrations/016_job_step_sums.sql), its GPUs from
 * job_gpus and the jobs' GPU columns (018_gpu_devices.sql).  A newer one
 * is read as long as the columns are what the tool expects
 * (pg_binary_init says otherwise). */
#define SCHEMA_VERSION_MIN 18

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
		    /* Both see every row (RLS): members of either get every
		     * user's jobs without -u.  ceems_admin_reader came with
		     * migration 023: asked for only where it exists. */
		    " pg_has_role(current_user, 'ceems_admin', 'USAGE') OR"
		    "  CASE WHEN EXISTS (SELECT 1 FROM pg_roles"
		    "                    WHERE rolname = 'ceems_admin_reader')"
		    "   THEN pg_has_role(current_user, 'ceems_admin_reader', 'USAGE')"
		    "   ELSE false END,"
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
	pg->schema_version = version;
	snprintf(user, user_size, "%s", PQgetvalue(res, 0, 0));
	*admin = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
	*coordinator = strcmp(PQgetvalue(res, 0, 2), "t") == 0;
	PQclear(res);
	return 0;
}

/* "a,b,c" of a list, or NULL when empty (the filter is off). */
static char *
join(const char (*list)[SACCT_NAME_LEN], size_t n)
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

/* The WHERE clause shared by the listing and the records
 * (sacct_pg_internal.h).
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

const char *
sacct_pg_where(const struct sacct_query *q)
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

const char *const sacct_pg_where_rest =
	" AND ($4::text IS NULL OR j.account = ANY (string_to_array($4::text, ',')))"
	" AND ($5::text IS NULL OR j.partition = ANY (string_to_array($5::text, ',')))"
	" AND ($6::text IS NULL OR j.state::text = ANY (string_to_array($6::text, ',')))"
	" AND ($7::text IS NULL OR j.cluster_id IN (SELECT x.cluster_id FROM ceems.clusters x"
	"      WHERE x.name = ANY (string_to_array($7::text, ','))))"
	" AND ($8::text IS NULL OR j.jobid = ANY (string_to_array($8::text, ',')::bigint[])"
	"      OR j.array_job_id = ANY (string_to_array($8::text, ',')::bigint[]))";

/* -j's job ids, "123,124" (NULL for none or out of memory): the rows
 * of those jobs and arrays; the array task and the step are picked
 * from them after (sacct_merge_query_wants_job). */
static char *
join_jobs(const struct sacct_query *q)
{
	size_t i, len = 0;
	char *s;

	if (q->njobs == 0 || (s = malloc(11 * q->njobs + 1)) == NULL)
		return NULL;
	/* Sorted by job id (sacct_merge_jobsel_sort): each id once. */
	for (i = 0; i < q->njobs; i++)
		if (i == 0 || q->jobs[i].jobid != q->jobs[i - 1].jobid)
			len += (size_t)sprintf(s + len, "%s%u", i > 0 ? "," : "",
					       q->jobs[i].jobid);
	return s;
}

int
sacct_pg_params_fill(struct sacct_pg_params *p, const struct sacct_query *q)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	snprintf(p->end, sizeof(p->end), "%lld", (long long)q->end);
	snprintf(p->start, sizeof(p->start), "%lld", (long long)q->start);
	p->users = q->all_users ? NULL : join(q->users, q->nusers);
	p->accounts = join(q->accounts, q->naccounts);
	p->partitions = join(q->partitions, q->npartitions);
	if (q->nstates > 0) {
		char states[SACCT_STATE_MAX][SACCT_NAME_LEN];

		for (i = 0; i < q->nstates; i++)
			snprintf(states[i], sizeof(states[i]), "%s", q->states[i]);
		p->states = join(states, q->nstates);
	}
	p->clusters = join(q->clusters, q->nclusters);
	p->jobs = join_jobs(q);
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

void
sacct_pg_params_free(struct sacct_pg_params *p)
{
	free(p->users);
	free(p->accounts);
	free(p->partitions);
	free(p->states);
	free(p->clusters);
	free(p->jobs);
}

/* A node record as JSON, rebuilt from job_nodes and its steps, GPUs
 * (migration 018), notes and marks (029): what the database does not
 * keep is absent. */
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
	"     'covered_s', n.package_covered_s,"
	"     'err', CASE WHEN n.package_err_source_j IS NOT NULL THEN jsonb_build_object("
	"      'source', n.package_err_source_j, 'lag', n.package_err_lag_j,"
	"      'idle_power', n.package_err_idle_power_j, 'gaps', n.package_err_gaps_j) END,"
	"     'idle_unlearned', CASE WHEN n.package_idle_unlearned THEN true END) END,"
	"   'dram', CASE WHEN n.dram_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.dram_j, 'static_j', n.dram_static_j,"
	"     'covered_s', n.dram_covered_s,"
	"     'err', CASE WHEN n.dram_err_source_j IS NOT NULL THEN jsonb_build_object("
	"      'source', n.dram_err_source_j, 'lag', n.dram_err_lag_j,"
	"      'idle_power', n.dram_err_idle_power_j, 'gaps', n.dram_err_gaps_j) END,"
	"     'idle_unlearned', CASE WHEN n.dram_idle_unlearned THEN true END) END,"
	"   'gpu', CASE WHEN n.gpu_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.gpu_j, 'covered_s', n.gpu_covered_s,"
	"     'err', CASE WHEN n.gpu_err_source_j IS NOT NULL THEN jsonb_build_object("
	"      'source', n.gpu_err_source_j, 'lag', n.gpu_err_lag_j,"
	"      'idle_power', n.gpu_err_idle_power_j, 'gaps', n.gpu_err_gaps_j) END) END,"
	"   'node', CASE WHEN n.node_covered_s IS NOT NULL THEN jsonb_build_object("
	"     'joules', n.node_j, 'covered_s', n.node_covered_s,"
	"     'err', CASE WHEN n.node_err_source_j IS NOT NULL THEN jsonb_build_object("
	"      'source', n.node_err_source_j, 'lag', n.node_err_lag_j,"
	"      'idle_power', n.node_err_idle_power_j, 'gaps', n.node_err_gaps_j) END) END,"
	"   'emissions', CASE WHEN n.emissions_g IS NOT NULL AND n.total_j IS NOT NULL"
	"    THEN jsonb_build_object("
	"     'grams', n.emissions_g, 'covered_s', n.emissions_covered_s,"
	"     'factor', jsonb_build_object('source', n.emission_factor_source,"
	"       'zone', n.emission_zone, 'year', n.emission_year,"
	"       'g_per_kwh', n.emission_g_per_kwh, 'pue', n.pue),"
	"     'factor_changed', coalesce(n.emission_factor_changed, false),"
	"     'fallback', n.emission_fallback) END),"
	"  'perf', (SELECT jsonb_build_object('software', p.software_status,"
	"     'hardware', p.hardware_status, 'running_fraction', p.running_fraction,"
	"     'task_clock', p.task_clock_s * 1e9, 'context_switches', p.context_switches,"
	"     'cpu_migrations', p.cpu_migrations, 'page_faults', p.page_faults,"
	"     'cycles', p.cycles, 'instructions', p.instructions,"
	"     'cache_references', p.cache_references, 'cache_misses', p.cache_misses,"
	"     'branch_misses', p.branch_misses)"
	"    FROM ceems.job_node_perf p WHERE p.job_key = n.job_key AND p.node = n.node),"
	"  'steps', (SELECT jsonb_agg(jsonb_build_object('id', s.step_id,"
	"     'ended', s.ended, 'elapsed_s', s.elapsed_s, 'cpu_s', s.cpu_s,"
	"     'mem_peak_bytes', s.mem_peak_bytes,"
	/* job_steps.tasks from migration 028 on: read by name, NULL (left
	 * out) in an older schema, so that one query reads both. */
	"     'tasks', to_jsonb(s) -> 'tasks', 'joules', jsonb_build_object("
	"       'package', s.package_j, 'dram', s.dram_j, 'gpu', s.gpu_j,"
	"       'node', s.node_j))"
	"     ORDER BY CASE s.step_id WHEN 'batch' THEN 1 WHEN 'extern' THEN 2"
	"       WHEN 'interactive' THEN 3 ELSE 4 END,"
	"       CASE WHEN s.step_id ~ '^[0-9]{1,9}$' THEN s.step_id::integer END,"
	"       s.step_id)"
	"    FROM ceems.job_steps s WHERE s.job_key = n.job_key AND s.node = n.node),"
	"  'gpus', (SELECT jsonb_agg(jsonb_build_object('uuid', g.uuid,"
	"     'bus_id', g.bus_id, 'instance', g.instance, 'share', g.share,"
	"     'power_integrated', CASE WHEN g.power_integrated THEN true END,"
	"     'energy_j', g.energy_j, 'util_pct', g.util_pct,"
	"     'mem_util_pct', g.mem_util_pct, 'mem_peak_bytes', g.mem_peak_bytes,"
	"     'mem_total_bytes', g.mem_total_bytes, 'sm_active_pct', g.sm_active_pct,"
	"     'sm_occupancy_pct', g.sm_occupancy_pct,"
	"     'tensor_active_pct', g.tensor_active_pct,"
	"     'fp_active_pct', g.fp_active_pct) ORDER BY g.ordinal)"
	"    FROM ceems.job_gpus g WHERE g.job_key = n.job_key AND g.node = n.node)),"
	" 'notes', (SELECT jsonb_agg(jsonb_build_object('id', o.note_id,"
	"    'text', o.text, 'saving_j', o.saving_j, 'saving_g', o.saving_g)"
	"    ORDER BY o.ordinal)"
	"   FROM ceems.job_notes o WHERE o.job_key = n.job_key AND o.node = n.node)";
/* Its marks, where the schema keeps them (SACCT_PG_SCHEMA_VERSION_MARKS). */
static const char *const records_sql_marks =
	", 'marks', (SELECT jsonb_agg(jsonb_build_object('name', m.name,"
	"    'unit', m.unit, 'work', m.work, 'marks', m.marks) ORDER BY m.ordinal)"
	"   FROM ceems.job_marks m WHERE m.job_key = n.job_key AND m.node = n.node)";
static const char *const records_sql_tail =
	"))::text"
	" FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)"
	" JOIN ceems.job_nodes n ON n.job_key = j.job_key";

static const enum pg_binary_kind series_kinds[SACCT_S_NCOLS + 1] = {
	PG_BINARY_TIME, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER, PG_BINARY_NUMBER,
	PG_BINARY_INT
};

/* The schema whose job_samples has gpu_util_pct
 * (sql/migrations/019_series_gpu_util.sql); before it, the column reads
 * as unknown. */
#define SCHEMA_VERSION_GPU_UTIL 19
/* The schema whose job_samples has the IO, network and perf columns
 * (sql/migrations/022_series_io_perf.sql); before it, they read as
 * unknown. */
#define SCHEMA_VERSION_SERIES_IO 22

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
	res = sacct_pg_query(pg, pg->schema_version >= SCHEMA_VERSION_SERIES_IO ?
		       "SELECT t, interval_s, cpu_s,"
		       " mem_bytes, package_j, dram_j, gpu_j, node_j, gpu_util_pct,"
		       " read_bytes, write_bytes, net_in_bytes, net_out_bytes,"
		       " page_faults, ctx_switches, ipc, resolution_s"
		       " FROM ceems.job_samples WHERE job_key = $1::bigint AND node = $2"
		       " ORDER BY t" :
		       pg->schema_version >= SCHEMA_VERSION_GPU_UTIL ?
		       "SELECT t, interval_s, cpu_s,"
		       " mem_bytes, package_j, dram_j, gpu_j, node_j, gpu_util_pct,"
		       " NULL::float8, NULL::float8, NULL::float8, NULL::float8,"
		       " NULL::float8, NULL::float8, NULL::float8, resolution_s"
		       " FROM ceems.job_samples WHERE job_key = $1::bigint AND node = $2"
		       " ORDER BY t" :
		       "SELECT t, interval_s, cpu_s,"
		       " mem_bytes, package_j, dram_j, gpu_j, node_j,"
		       " NULL::double precision,"
		       " NULL::float8, NULL::float8, NULL::float8, NULL::float8,"
		       " NULL::float8, NULL::float8, NULL::float8, resolution_s"
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
	struct sacct_pg_params p;
	PGresult *res;
	char sql[8192], derr[256];
	const char *json;
	int n, i;

	sacct_pg_params_fill(&p, q);
	snprintf(sql, sizeof(sql), "%s%s%s%s%s ORDER BY j.start_time, c.name, j.jobid, n.node",
		 records_sql_head,
		 pg->schema_version >= SACCT_PG_SCHEMA_VERSION_MARKS ? records_sql_marks : "",
		 records_sql_tail, sacct_pg_where(q), sacct_pg_where_rest);
	res = query(pg, sql, 8, p.v, err, err_size);
	sacct_pg_params_free(&p);
	if (res == NULL)
		return -1;
	n = PQntuples(res);
	for (i = 0; i < n; i++) {
		if ((r = sacct_merge_records_add(recs, &s)) == NULL) {
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
