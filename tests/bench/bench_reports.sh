#!/usr/bin/env bash
# bench_reports.sh - ceems-admin report on a month of many jobs
# (doc/performance.md, "Reports"), against a throwaway PostgreSQL 15
# from tests/harness/pg.sh.
#
# BENCH_JOBS jobs (default 10 million) ending in October 2026 are loaded
# straight into ceems.jobs with one INSERT ... SELECT generate_series
# (the shapes of bench_storage.sh: 2000 users of skewed activity, 200
# accounts, exponential durations, 1-128 CPUs, a fifth of them on a GPU
# partition), each with a time limit, static energies and a user's
# first job a month before; then, timed end to end (process start,
# connection, SET ROLE, the query, the rules, the text):
#   - `ceems-admin report user --only U` for the heaviest user and the
#     median one of the month, as a superuser that takes each user's role
#     (row-level security applies), BENCH_REPEAT times; median and max.
#     Target: under a second.  The plan of the heaviest user's read
#     and the size of jobs_user_report are printed after.
#   - `ceems-admin report triage` over the whole month, twice.  Target:
#     under a minute.
#
# Usage (as root, from a configured build directory):
#   CEEMS_TOP_BUILDDIR=$PWD bash ../../tests/bench/bench_reports.sh
# Environment: BENCH_JOBS (10000000), BENCH_USERS (2000), BENCH_REPEAT
# (5), BENCH_KEEP (1: leave the server running), BENCH_CLUSTER (1: run
# again after ceems-admin db cluster), CEEMS_TEST_PGPORT, TMPDIR.  Needs about 6 GB of disk.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
builddir=${CEEMS_TOP_BUILDDIR:-$PWD}
jobs=${BENCH_JOBS:-10000000}
users=${BENCH_USERS:-2000}
repeat=${BENCH_REPEAT:-5}

admin=$builddir/tools/ceems-admin
[ -x "$admin" ] || { echo "bench_reports: no $admin" >&2; exit 1; }

# shellcheck source=bench_pg.sh
. "$here/bench_pg.sh"
bench_pg_start
bench_pg_load_begin
t0=$(date +%s.%N)
# Every user's first job a month before (not a new user); the month's
# jobs after, their ends in October.
sql <<EOF
SET synchronous_commit = off;
INSERT INTO ceems.clusters (name) VALUES ('bench');
INSERT INTO ceems.jobs (cluster_id, jobid, start_time, user_name, uid, account,
	partition, state, submit_time, end_time, elapsed_s, time_limit_min,
	alloc_cpus, req_mem_bytes, alloc_gpus, gpu_util_pct, gpu_j, nnodes,
	nodelist, meta_written_at, meta_node, meta_digest, nodes_reported,
	cpu_time_s, cpu_efficiency, mem_peak_bytes, mem_efficiency, package_j,
	dram_j, total_j, package_static_j, dram_static_j, package_coverage,
	dram_coverage, gap_s, emissions_g, emissions_coverage)
SELECT 1, g, st, 'u' || lpad(u::text, 4, '0'), 10000 + u, 'acct' || (u % 200),
	CASE WHEN gpu THEN 'gpu' ELSE 'cpu' END, s.state,
	st - make_interval(secs => (random() * 3600)::int), st + make_interval(secs => d),
	d, lim, cpus, cpus * 4294967296, CASE WHEN gpu THEN 1 ELSE 0 END,
	CASE WHEN gpu THEN 100 * random() END, CASE WHEN gpu THEN d * 250.0 END,
	1, 'n' || lpad((g % 500)::text, 3, '0'), st + make_interval(secs => d + 5),
	'n' || lpad((g % 500)::text, 3, '0'), md5(g::text), 1,
	d * cpus * e, e, (cpus * 4294967296 * m)::bigint, m,
	d * cpus * 8, d * cpus * 1, d * cpus * 9, d * cpus * 3, d * cpus * 0.5, 1, 1, 0,
	d * cpus * 9 / 3.6e6 * 56 * 1.2, 1
FROM (SELECT g,
	     CASE WHEN g <= $users THEN timestamptz '2026-09-01 00:00+00'
		  ELSE timestamptz '2026-10-01 00:00+00'
		       + make_interval(secs => g::double precision / $jobs * 30 * 86400) END AS st,
	     CASE WHEN g <= $users THEN g - 1
		  ELSE least(floor($users * power(random(), 2))::int, $users - 1) END AS u,
	     least(greatest(-ln(1 - random()) * 3600, 1), 86400)::int AS d,
	     (power(2, floor(random() * 8)))::int AS cpus,
	     (ARRAY[60, 240, 1440, 2880])[1 + (g % 4)] AS lim,
	     g % 5 = 3 AS gpu,
	     0.05 + 0.95 * random() AS e, random() AS r, random() AS m
      FROM generate_series(1, $jobs) g) x,
     LATERAL (SELECT CASE WHEN x.r < 0.80 THEN 'COMPLETED' WHEN x.r < 0.90 THEN 'FAILED'
			  WHEN x.r < 0.95 THEN 'CANCELLED' WHEN x.r < 0.98 THEN 'TIMEOUT'
			  ELSE 'OUT_OF_MEMORY' END AS state) s;
EOF
t1=$(date +%s.%N)
bench_pg_load_end
sql -c "VACUUM (ANALYZE) ceems.jobs"
echo "# loaded $(sql -c 'SELECT count(*) FROM ceems.jobs') jobs in $(echo "$t1 - $t0" | bc) s," \
	"indexes and VACUUM ANALYZE by $(echo "$(date +%s.%N) - $t0" | bc) s;" \
	"table $(sql -c "SELECT pg_size_pretty(pg_table_size('ceems.jobs'))")"

period="--from 2026-10-01T00:00:00Z --to 2026-11-01T00:00:00Z"
month="end_time >= '2026-10-01Z' AND end_time < '2026-11-01Z'"
heavy=$(sql -c "SELECT user_name FROM ceems.jobs WHERE $month GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
median=$(sql -c "SELECT user_name FROM (SELECT user_name, row_number() OVER (ORDER BY count(*)) AS r,
	count(*) OVER () AS n FROM ceems.jobs WHERE $month GROUP BY 1) s WHERE r = n / 2")

# seconds, as a decimal, of one run of the command
timed() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}

sql -c "CREATE ROLE $heavy LOGIN IN ROLE ceems_reader" -c "CREATE ROLE $median LOGIN IN ROLE ceems_reader"

run_reports() {
	for u in "$heavy" "$median"; do
		n=$(sql -c "SELECT count(*) FROM ceems.jobs WHERE user_name = '$u' AND $month")
		times=$(for _ in $(seq "$repeat"); do
			# shellcheck disable=SC2086
			timed "$admin" -d "dbname=ceems" report user --only "$u" $period
		done | sort -n)
		echo "# report user $u ($n jobs in the month): median $(echo "$times" | sed -n "$(( (repeat + 1) / 2 ))p") s," \
			"max $(echo "$times" | tail -n 1) s over $repeat runs"
	done
	# shellcheck disable=SC2086
	"$admin" -d "dbname=ceems" report user --only "$heavy" $period | sed 's/^/#   /' | head -n 40
	for i in 1 2; do
		# shellcheck disable=SC2086
		echo "# report triage, run $i: $(timed "$admin" -d "dbname=ceems" report triage $period) s"
	done
	# shellcheck disable=SC2086
	"$admin" -d "dbname=ceems" report triage $period | sed 's/^/#   /' | head -n 16
}

run_reports
# How the heaviest user's month was read (migration 035: an index-only
# scan of jobs_user_report, no heap fetch) and what the index weighs.
sql -c "SET ROLE $heavy" -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT j.jobid, j.cpu_time_s,
	j.gpu_j, j.node_coverage FROM ceems.jobs j WHERE j.user_name = '$heavy' AND j.start_time >= '2026-09-30Z'
	AND j.start_time < '2026-11-01Z' AND $month" | grep -E 'Scan|Heap Fetches|Buffers' | sed 's/^/#   plan: /'
echo "# index jobs_user_report: $(sql -c "SELECT pg_size_pretty(pg_relation_size('ceems.jobs_user_report'))")"
# BENCH_CLUSTER=1: again after `ceems-admin db cluster` (each user's
# jobs on consecutive pages, as doc/performance.md advises monthly).
if [ "${BENCH_CLUSTER:-0}" = 1 ]; then
	echo "# db cluster: $("$admin" -d "dbname=ceems" db cluster)"
	run_reports
fi
