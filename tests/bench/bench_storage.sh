#!/usr/bin/env bash
# bench_storage.sh - the storage benchmarks (doc/performance.md,
# "Storage"), against a throwaway PostgreSQL 15 from tests/harness/pg.sh:
#
#   1. query: 10 million generated jobs (about 2000 users, 12 months of
#      2023) are loaded straight into ceems.jobs with one INSERT ...
#      SELECT generate_series (the upsert function is not what is
#      measured here), then two steps of each (batch, extern) into
#      ceems.job_steps, then ANALYZE; the query ceems-sacct makes, one
#      user's jobs of one month with the columns a listing needs, is run
#      BENCH_REPEAT times as that user (a LOGIN role in ceems_reader, so
#      row-level security applies), and its median and maximum reported,
#      with its EXPLAIN (ANALYZE).  Target: <= 50 ms.
#   3. sacct (after 1, on its data): ceems-sacct's own listing call
#      (tests/bench/bench_listing: sacct_pg_listing_rows over one connection,
#      its default columns and all of them), then `ceems-sacct -u USER
#      -S 2023-06-01 -E 2023-07-01` end to end (process start,
#      configuration, connection, both queries, formatting) as that
#      user, BENCH_REPEAT times; median and maximum.  Target:
#      <= 100 ms.
#   cluster (after 1 and 3): `ceems-admin db cluster`, timed, then the
#      queries of 1 and the runs of 3 again on the rewritten table.
#   migrate16: BENCH_JOBS jobs of two steps each stored in a database at
#      version 015 (its own, beside the others), then `ceems-admin db
#      migrate` to 016, timed: the backfill of jobs.steps.
#   2. ingest: BENCH_RECORDS records are spooled by libceems and stored
#      by the node agent's replay (tests/bench/bench_ingest), in batches
#      (ceems.upsert_job_records) into the empty database, one record per
#      statement, then in batches again, as records/s.  Target: >= 5,000
#      records/s from one writer.
#
# The harness runs PostgreSQL with fsync = off and synchronous_commit =
# off (the writer turns synchronous_commit back on for its own session);
# with BENCH_FSYNC=on the ingest is measured a second time with fsync on.
#
# Usage (as root, from a configured build directory):
#   make bench-storage
# or
#   CEEMS_TOP_BUILDDIR=$PWD bash ../../tests/bench/bench_storage.sh [query|sacct|cluster|ingest|migrate16|all]
# (sacct loads the query's data first, then times ceems-sacct too)
# Environment: BENCH_JOBS (default 10000000), BENCH_USERS (2000),
# BENCH_HEAVY_RANKS (more users to time, by rank of their month),
# BENCH_REPEAT (20), BENCH_RECORDS (20000), BENCH_BATCH (500, the agent's),
# BENCH_FSYNC (off|on, default on), CEEMS_TEST_PGPORT, TMPDIR.
# Needs: postgresql-15, a build with libpq; about 6 GB of disk for the
# 10 million jobs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${CEEMS_TOP_BUILDDIR:-$PWD}
what=${1:-all}
jobs=${BENCH_JOBS:-10000000}
users=${BENCH_USERS:-2000}
repeat=${BENCH_REPEAT:-20}
records=${BENCH_RECORDS:-20000}
batch=${BENCH_BATCH:-500}
fsync_too=${BENCH_FSYNC:-on}

admin=$builddir/tools/ceems-admin
ingest=$builddir/tests/bench/bench_ingest
if [ ! -x "$admin" ]; then
	echo "bench_storage: no $admin (set CEEMS_TOP_BUILDDIR to a build with libpq)" >&2
	exit 1
fi

# shellcheck source=bench_pg.sh
. "$here/bench_pg.sh"
bench_pg_start

month_from='2023-06-01 00:00+00'
month_to='2023-07-01 00:00+00'

bench_query() {
	local t0 t1 user i

	# The secondary indexes are built after the load, the trigger of
	# max_job_s is off for it (bench_pg.sh).
	bench_pg_load_begin
	t0=$(date +%s.%N)
	# Realistic shapes: job ids grow with time; users' activity is
	# skewed (a few heavy users, many light ones); 200 accounts;
	# durations exponential (mean 1 h) under a time limit; CPU counts
	# powers of two; states mostly COMPLETED.
	sql <<EOF
SET synchronous_commit = off;
INSERT INTO ceems.clusters (name) VALUES ('bench');
INSERT INTO ceems.jobs (cluster_id, jobid, start_time, user_name, uid, gid,
	account, partition, qos, job_name, state, exit_code, submit_time,
	end_time, elapsed_s, time_limit_min, alloc_cpus, req_mem_bytes,
	alloc_gpus, nnodes, nodelist, meta_written_at, meta_node, meta_digest,
	nodes_reported, cpu_time_s, cpu_efficiency, mem_peak_bytes,
	mem_efficiency, package_j, dram_j, total_j, package_coverage,
	dram_coverage, emissions_g, emissions_coverage,
	emission_factor_source, emission_zone, emission_year,
	emission_g_per_kwh, pue, emission_factor_mixed, steps)
SELECT 1, g, st, 'u' || lpad(u::text, 4, '0'), 10000 + u, 10000 + u % 200,
	'acct' || (u % 200), (ARRAY['cpu', 'cpu', 'cpu', 'gpu', 'bigmem'])[1 + g % 5],
	'normal', 'job-' || (g % 1000), s.state,
	CASE WHEN s.state = 'COMPLETED' THEN 0 ELSE 1 END,
	st - make_interval(secs => (random() * 3600)::int), st + make_interval(secs => d),
	d, 1440, cpus, cpus * 4294967296, CASE WHEN g % 5 = 3 THEN 1 ELSE 0 END,
	1, 'n' || lpad((g % 500)::text, 3, '0'), st + make_interval(secs => d + 5),
	'n' || lpad((g % 500)::text, 3, '0'), md5(g::text), 1,
	cpu_s, e, mem_peak, random() / 2,
	d * cpus * 8, d * cpus * 1, d * cpus * 9, 1, 1,
	d * cpus * 9 / 3.6e6 * 56 * 1.2, 1, 'bench', 'FR', 2023, 56, 1.2, false,
	-- The steps below (ceems.job_steps), summed as migration 016 does.
	ARRAY(SELECT ROW(f.id, 1, d, cpu_s * f.f, (mem_peak * f.f)::bigint,
			 d * cpus * 8 * f.f, d * cpus * 1 * f.f, NULL, NULL)::ceems.step_summary
	      FROM (VALUES ('batch', 0.999::float8), ('extern', 0.001::float8)) f(id, f))
FROM (SELECT g,
	     timestamptz '2023-01-01 00:00+00' + make_interval(secs => g::double precision / $jobs * 365 * 86400) AS st,
	     least(floor($users * power(random(), 2))::int, $users - 1) AS u,
	     least(greatest(-ln(1 - random()) * 3600, 1), 86400)::int AS d,
	     (power(2, floor(random() * 8)))::int AS cpus,
	     0.05 + 0.95 * random() AS e,
	     random() AS r, random() AS m
      FROM generate_series(1, $jobs) g) x,
     LATERAL (SELECT (x.d * x.cpus * x.e)::float8 AS cpu_s,
		     (x.cpus * 2147483648 * x.m)::bigint AS mem_peak) v,
     LATERAL (SELECT CASE WHEN x.r < 0.80 THEN 'COMPLETED' WHEN x.r < 0.90 THEN 'FAILED'
			  WHEN x.r < 0.95 THEN 'CANCELLED' WHEN x.r < 0.98 THEN 'TIMEOUT'
			  ELSE 'OUT_OF_MEMORY' END AS state) s;
EOF
	t1=$(date +%s.%N)
	bench_pg_load_end
	sql -c "VACUUM (ANALYZE) ceems.jobs"
	echo "# loaded $(sql -c 'SELECT count(*) FROM ceems.jobs') jobs in" \
		"$(echo "$t1 - $t0" | bc) s, indexes and VACUUM ANALYZE by $(echo "$(date +%s.%N) - $t0" | bc) s;" \
		"table $(sql -c "SELECT pg_size_pretty(pg_table_size('ceems.jobs'))"), indexes $(sql -c "SELECT pg_size_pretty(pg_indexes_size('ceems.jobs'))")"

	# Each job's two steps (batch and extern), as the plugin records a
	# batch job: ceems-sacct lists them under their job (from
	# jobs.steps, filled above), so a heavy user's month is 18,000 jobs
	# and 36,000 steps.  The steps' node
	# check (a trigger on job_nodes rows, which this load does not
	# make) is off for the load, and the key is built after it.
	t0=$(date +%s.%N)
	sql <<EOF
SET synchronous_commit = off;
ALTER TABLE ceems.job_steps DISABLE TRIGGER job_steps_node_insert;
ALTER TABLE ceems.job_steps DROP CONSTRAINT job_steps_pkey;
INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s, cpu_s,
	mem_peak_bytes, package_j, dram_j)
SELECT j.job_key, j.nodelist, s.id, true, j.elapsed_s, j.cpu_time_s * s.f,
       (j.mem_peak_bytes * s.f)::bigint, j.package_j * s.f, j.dram_j * s.f
FROM ceems.jobs j, (VALUES ('batch', 0.999::float8), ('extern', 0.001::float8)) s(id, f);
ALTER TABLE ceems.job_steps ADD CONSTRAINT job_steps_pkey PRIMARY KEY (job_key, node, step_id);
ALTER TABLE ceems.job_steps ENABLE TRIGGER job_steps_node_insert;
VACUUM (ANALYZE) ceems.job_steps;
EOF
	# jobs.steps as the write paths would compute it: a sample.
	differ=$(sql -c "SELECT count(*) FROM ceems.jobs j
		CROSS JOIN LATERAL (SELECT ss.steps FROM ceems.job_step_sums ss
				    WHERE ss.job_key = j.job_key) ss
		WHERE j.job_key <= 20000 AND j.steps IS DISTINCT FROM ss.steps")
	[ "$differ" = 0 ] || { echo "bench_storage: $differ jobs' steps are not their job_steps' sums" >&2; exit 1; }
	echo "# loaded $(sql -c 'SELECT count(*) FROM ceems.job_steps') steps in" \
		"$(echo "$(date +%s.%N) - $t0" | bc) s;" \
		"table $(sql -c "SELECT pg_size_pretty(pg_table_size('ceems.job_steps'))"), indexes $(sql -c "SELECT pg_size_pretty(pg_indexes_size('ceems.job_steps'))")"

	# A typical user (the median number of jobs in the month) and the
	# heaviest one; with BENCH_HEAVY_RANKS (e.g. "2 5 17"), also the
	# users of those ranks by jobs in the month (1 is the heaviest),
	# to see how the listing grows with a user's month.
	for user in $(sql -c "
		WITH m AS (SELECT user_name, count(*) AS n FROM ceems.jobs
			   WHERE start_time >= '$month_from' AND start_time < '$month_to'
			   GROUP BY user_name)
		(SELECT user_name FROM m ORDER BY n, user_name
		 OFFSET (SELECT count(*) / 2 FROM m) LIMIT 1)
		UNION ALL (SELECT user_name FROM m ORDER BY n DESC, user_name LIMIT 1)
		UNION ALL (SELECT r.user_name FROM (SELECT user_name, row_number() OVER (ORDER BY n DESC, user_name) AS k FROM m) r
			   WHERE r.k IN (SELECT unnest(string_to_array(nullif('${BENCH_HEAVY_RANKS:-}', ''), ' ')::int[])))"); do
		sql -c "CREATE ROLE $user LOGIN IN ROLE ceems_reader"
		echo "$user" >>"$pg/bench_users"
		bench_queries_of "$user"
	done
}

# bench_queries_of USER: the listing's queries for USER's month.
bench_queries_of() {
	local user=$1 cols sacct_cols range overlap bound
	# What ceems-sacct asks: the caller's jobs started in the
	# month, with the listing's columns.  current_user is compared
	# in the column's collation, or the index cannot serve it
	# (sql/migrations/007_own_jobs_index.sql).
	cols="jobid, array_job_id, array_task_id, user_name, account, partition,
		job_name, state, exit_code, submit_time, start_time, end_time, elapsed_s,
		alloc_cpus, req_mem_bytes, alloc_gpus, nnodes, nodelist, cpu_efficiency,
		mem_peak_bytes, mem_efficiency, total_j, emissions_g, package_coverage"
	sacct_cols="j.job_key, c.name, j.jobid, j.array_job_id, j.array_task_id,
		j.uid, j.user_name, j.account, j.partition, j.qos, j.job_name,
		j.state, j.exit_code, j.exit_signal, extract(epoch FROM j.submit_time)::bigint,
		extract(epoch FROM j.start_time)::bigint, extract(epoch FROM j.end_time)::bigint,
		j.time_limit_min, j.alloc_cpus, j.req_mem_bytes, j.alloc_gpus,
		j.nnodes, j.nodes_reported, j.nodelist, j.elapsed_s, j.cpu_time_s,
		j.cpu_efficiency, j.mem_peak_bytes, j.mem_efficiency, j.gpu_util_pct,
		j.package_j, j.dram_j, j.gpu_j, j.node_j, j.total_j,
		least(j.package_coverage, j.dram_coverage, j.gpu_coverage, j.node_coverage),
		j.emissions_g, j.emission_g_per_kwh, j.pue"
	range="start_time >= '$month_from' AND start_time < '$month_to' ORDER BY start_time"
	bench_one "$user" "SELECT $cols FROM ceems.jobs WHERE user_name = (current_user COLLATE \"default\") AND $range" \
		"started in the month, user_name = current_user in the column's collation"
	# The same relying on row-level security alone.
	bench_one "$user" "SELECT $cols FROM ceems.jobs WHERE $range" "started in the month, row-level security only"
	# What ceems-sacct asks (sacct's semantics): the jobs that
	# overlap the window, the user as a text value.
	overlap="user_name = '$user' AND start_time < '$month_to'
		AND coalesce(end_time, start_time) >= '$month_from'"
	bench_one "$user" "SELECT $cols FROM ceems.jobs WHERE $overlap ORDER BY start_time" \
		"overlapping the month, as is"
	# The same with the lower bound of migration 009: no job
	# started before the window minus the longest job overlaps it.
	# The whole bound is one sub-select, so that the condition on
	# the row is a plain (leakproof) comparison: row-level
	# security lets only those serve as index conditions.
	bound="start_time >= (SELECT timestamptz '$month_from' -
		max(max_job_s) * interval '1 second' FROM ceems.clusters)"
	bench_one "$user" "SELECT $cols FROM ceems.jobs WHERE $overlap AND $bound ORDER BY start_time" \
		"overlapping the month, start bounded by clusters.max_job_s"
	# ceems-sacct's select list of an earlier release (every
	# column, the cluster's name by a join; kept so that the figures
	# compare across releases), bounded.  Today's listing, in binary
	# and with the steps, is bench_listing's (bench_sacct).
	bench_one "$user" "SELECT $sacct_cols FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
		WHERE j.$overlap AND j.$bound ORDER BY j.start_time" \
		"ceems-sacct's columns, overlapping, bounded"
	# The planner's cost for a heavy user passes jit_above_cost:
	# the same without JIT compilation.
	bench_one "$user" "SELECT $sacct_cols FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
		WHERE j.$overlap AND j.$bound ORDER BY j.start_time" \
		"ceems-sacct's columns, overlapping, bounded, jit off" "-c jit=off"
}

# After bench_query: the table rewritten in the users' order by
# `ceems-admin db cluster` (an admin's monthly job), then the same
# queries again.
bench_cluster() {
	local t0 user
	t0=$(date +%s.%N)
	"$admin" -d "dbname=ceems" db cluster
	echo "# ceems-admin db cluster: $(echo "$(date +%s.%N) - $t0" | bc) s"
	for user in $(cat "$pg/bench_users"); do
		bench_queries_of "$user"
	done
}

# bench_one USER QUERY LABEL [PGOPTIONS]: run QUERY as USER, BENCH_REPEAT times in one
# session, print the rows, the median and the maximum as psql's \timing
# sees them (parse, plan, run and transfer), and the plan.
bench_one() {
	local user=$1 q=$2 label=$3 out rows
	export PGOPTIONS=${4:-}
	out=$( {
		echo '\o /dev/null'
		echo '\timing on'
		for _ in $(seq "$repeat"); do
			echo "$q;"
		done
	} | psql -X -q -At -v ON_ERROR_STOP=1 -U "$user")
	rows=$(sql -U "$user" -c "SELECT count(*) FROM ($q) s")
	echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sort -n |
		awk -v u="$user" -v r="$rows" -v l="$label" \
		'{ t[NR] = $1 } END { printf "query %s (%s): %d rows, %d runs: median %.2f ms, max %.2f ms\n",
		  u, l, r, NR, (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2), t[NR] }'
	sql -U "$user" -c "EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON) $q" | sed 's/^/    /'
	unset PGOPTIONS
}

# ceems-sacct's listing, as each user bench_query chose: first its
# query alone, through its own code (tests/bench/bench_listing: one
# connection, the listing and the steps decoded into rows, with the
# default format's columns and with all of them), then the whole
# process, timed from outside.
bench_sacct() {
	local sacct=$builddir/tools/ceems-sacct listing=$builddir/tests/bench/bench_listing
	local user conf i t0 t1 rows from to
	if [ ! -x "$sacct" ] || [ ! -x "$listing" ]; then
		echo "bench_storage: no $sacct or $listing (make tests/bench/bench_listing)" >&2
		return 1
	fi
	# In a build tree tools/ceems-sacct is libtool's wrapper script,
	# which costs about 17 ms a run: time the program itself, as
	# installed.
	if [ -x "$builddir/tools/.libs/ceems-sacct" ]; then
		sacct=$builddir/tools/.libs/ceems-sacct
		export LD_LIBRARY_PATH=$builddir/lib/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	fi
	from=$(date -u -d "$month_from" +%s)
	to=$(date -u -d "$month_to" +%s)
	for user in $(cat "$pg/bench_users"); do
		"$listing" "host=$pg port=$PGPORT dbname=ceems user=$user" "$user" "$from" "$to" "$repeat"
		"$listing" "host=$pg port=$PGPORT dbname=ceems user=$user" "$user" "$from" "$to" "$repeat" all
	done
	for user in $(cat "$pg/bench_users"); do
		conf=$pg/sacct-$user.conf
		printf 'cluster = bench\nspool_dir = %s/none\ndatabase = host=%s port=%s dbname=ceems user=%s\n' \
			"$pg" "$pg" "$PGPORT" "$user" >"$conf"
		rows=$(TZ=UTC "$sacct" -c "$conf" -u "$user" -S 2023-06-01 -E 2023-07-01 -P -n | wc -l)
		for i in $(seq "$repeat"); do
			t0=$(date +%s%N)
			TZ=UTC "$sacct" -c "$conf" -u "$user" -S 2023-06-01 -E 2023-07-01 >/dev/null
			t1=$(date +%s%N)
			echo $(( (t1 - t0) / 1000 ))
		done | sort -n | awk -v u="$user" -v r="$rows" \
			'{ t[NR] = $1 / 1000 } END { printf "sacct %s: %d rows, %d runs: median %.1f ms, max %.1f ms\n",
			  u, r, NR, (NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2), t[NR] }'
	done
}

# ingest_once BATCH: BENCH_RECORDS new records through the replay,
# BATCH a statement, from a spool of their own.
ingest_once() {
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-spool.XXXXXX")
	"$ingest" "$dir" "host=$pg port=$PGPORT dbname=ceems user=bench_node" "$records" "$1"
	rm -rf "$dir"
}

bench_ingest() {
	if [ ! -x "$ingest" ]; then
		echo "bench_storage: no $ingest (make tests/bench/bench_ingest)" >&2
		return 1
	fi
	sql -c "CREATE ROLE bench_node LOGIN IN ROLE ceems_writer"
	# Batches first, into the empty database (a new installation with a
	# backlog: no statistics yet), then one by one, then batches again
	# into the filled tables.
	echo "# into an empty database"
	ingest_once "$batch"
	ingest_once 1
	echo "# into $(sql -c 'SELECT count(*) FROM ceems.jobs') stored jobs"
	ingest_once "$batch"
	if [ "$fsync_too" = on ]; then
		sql -c "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" \
		    -c "ALTER SYSTEM SET full_page_writes = on" -c "SELECT pg_reload_conf()" >/dev/null
		echo "# fsync $(sql -c 'SHOW fsync'), synchronous_commit $(sql -c 'SHOW synchronous_commit')"
		ingest_once 1
		ingest_once "$batch"
	fi
}

# Migration 016's backfill: jobs and their steps made at 015 as
# bench_query makes them (fewer columns: the backfill reads only the
# steps), then the migration.
bench_migrate16() {
	local t0 t1 size
	sql -c "CREATE DATABASE ceems15"
	"$admin" --sql-dir "$srcdir/sql/migrations" -d "dbname=ceems15" db migrate --to 15 >/dev/null
	sql -d ceems15 <<EOF
SET synchronous_commit = off;
ALTER TABLE ceems.jobs DISABLE TRIGGER jobs_duration_insert;
INSERT INTO ceems.clusters (name) VALUES ('bench');
INSERT INTO ceems.jobs (cluster_id, jobid, start_time, user_name, uid, gid, account,
	partition, qos, job_name, state, exit_code, submit_time, end_time, elapsed_s,
	alloc_cpus, nnodes, nodelist, meta_written_at, meta_node, meta_digest,
	nodes_reported, cpu_time_s, package_j, dram_j, total_j)
SELECT 1, g, st, 'u' || lpad((g % $users)::text, 4, '0'), 10000 + g % $users, 10000,
	'acct' || (g % 200), 'cpu', 'normal', 'job-' || (g % 1000), 'COMPLETED', 0, st,
	st + interval '1 hour', 3600, 8, 1, 'n001', st + interval '1 hour', 'n001',
	md5(g::text), 1, 20000, 100000, 10000, 110000
FROM (SELECT g, timestamptz '2023-01-01 00:00+00' +
	     make_interval(secs => g::double precision / $jobs * 365 * 86400) AS st
      FROM generate_series(1, $jobs) g) x;
ALTER TABLE ceems.jobs ENABLE TRIGGER jobs_duration_insert;
ALTER TABLE ceems.job_steps DISABLE TRIGGER job_steps_node_insert;
INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s, cpu_s,
	mem_peak_bytes, package_j, dram_j)
SELECT j.job_key, j.nodelist, s.id, true, j.elapsed_s, j.cpu_time_s * s.f,
       (2147483648 * s.f)::bigint, j.package_j * s.f, j.dram_j * s.f
FROM ceems.jobs j, (VALUES ('batch', 0.999::float8), ('extern', 0.001::float8)) s(id, f);
ALTER TABLE ceems.job_steps ENABLE TRIGGER job_steps_node_insert;
VACUUM (ANALYZE) ceems.jobs, ceems.job_steps;
EOF
	size=$(sql -d ceems15 -c "SELECT pg_size_pretty(pg_table_size('ceems.jobs'))")
	t0=$(date +%s.%N)
	"$admin" --sql-dir "$srcdir/sql/migrations" -d "dbname=ceems15" db migrate >/dev/null
	t1=$(date +%s.%N)
	echo "migrate 015 -> 016: $jobs jobs of 2 steps in $(echo "$t1 - $t0" | bc) s;" \
		"jobs table $size before, $(sql -d ceems15 -c "SELECT pg_size_pretty(pg_table_size('ceems.jobs'))") after;" \
		"$(sql -d ceems15 -c 'SELECT count(*) FROM ceems.jobs WHERE steps IS NOT NULL') jobs with steps"
}

case $what in
	query) bench_query ;;
	sacct) bench_query; bench_sacct ;;
	cluster) bench_query; bench_sacct; bench_cluster; bench_sacct ;;
	ingest) bench_ingest ;;
	migrate16) bench_migrate16 ;;
	all) bench_ingest; bench_query; bench_sacct ;;
	*) echo "usage: bench_storage.sh [query|sacct|cluster|ingest|migrate16|all]" >&2; exit 2 ;;
esac
