# tests/bench/bench_pg.sh - sourced by the storage and report benchmarks:
# a throwaway PostgreSQL 15 (tests/harness/pg.sh) set for a load of
# millions of jobs, the schema applied, and the load's index handling.
# Needs $srcdir (the tree) and $admin (a ceems-admin); sets $pg and sql.

# shellcheck source=../harness/pg.sh
. "$srcdir/tests/harness/pg.sh"

sql() {
	psql -X -q -At -v ON_ERROR_STOP=1 "$@"
}

# Start the server (BENCH_KEEP=1 leaves it running and prints its
# directory), with settings for a 10-million-row load and its index
# builds (the rest as the harness has it: fsync off), then db init, and
# print the machine.
bench_pg_start() {
	pg=$(pg_harness_mktemp)
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "# server kept in $pg"
	else
		trap 'pg_harness_stop "$pg"' EXIT
	fi
	pg_harness_start "$pg"
	sql -c "ALTER SYSTEM SET shared_buffers = '1GB'" \
	    -c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" \
	    -c "ALTER SYSTEM SET max_wal_size = '16GB'" \
	    -c "ALTER SYSTEM SET work_mem = '64MB'"
	(cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$pg/data" \
		-l "$pg/server.log" -w -t 60 restart) >/dev/null
	"$admin" --sql-dir "$srcdir/sql/migrations" -d "dbname=ceems" db init
	echo "# machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r), $(date -u +%Y-%m-%d)"
	echo "# PostgreSQL: $(sql -c 'SHOW server_version'), fsync $(sql -c 'SHOW fsync'), shared_buffers $(sql -c 'SHOW shared_buffers')"
}

# Before a load into ceems.jobs: its secondary indexes dropped (the
# constraint ones stay; they are built again after the load, the same
# definitions, a lot faster), and the trigger that keeps
# clusters.max_job_s off (it would keep the whole load in a transition
# table).
bench_pg_load_begin() {
	local i
	sql -c "CREATE TABLE public.saved_indexes AS
		SELECT indexname, indexdef FROM pg_indexes
		WHERE schemaname = 'ceems' AND tablename = 'jobs'
		  AND indexname NOT IN ('jobs_pkey', 'jobs_identity')"
	for i in $(sql -c "SELECT indexname FROM public.saved_indexes"); do
		sql -c "DROP INDEX ceems.$i"
	done
	sql -c "ALTER TABLE ceems.jobs DISABLE TRIGGER jobs_duration_insert"
}

# After it: the indexes again, the trigger on, max_job_s computed as
# migration 009 does.
bench_pg_load_end() {
	local i
	for i in $(sql -c "SELECT indexname FROM public.saved_indexes"); do
		sql -c "$(sql -c "SELECT indexdef FROM public.saved_indexes WHERE indexname = '$i'")"
	done
	sql -c "ALTER TABLE ceems.jobs ENABLE TRIGGER jobs_duration_insert" \
	    -c "UPDATE ceems.clusters c SET max_job_s = coalesce((SELECT max(extract(epoch FROM j.end_time - j.start_time))::double precision
			FROM ceems.jobs j WHERE j.cluster_id = c.cluster_id), 0)"
}
