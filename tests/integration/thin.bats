#!/usr/bin/env bats
# thin.bats - the job-side plugin as a thin client, end to end on the
# real local Slurm cluster with a real PostgreSQL: the node agent is the
# only writer of records, into the database off its event loop; the
# job's end asks slurmctld nothing; a job the agent never measured still
# gets its row, figures absent and coverage 0, with the reason.
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash,
# PostgreSQL's tests/harness/pg.sh.  Runs as root.  Needs
# CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by
# `make check-integration`).

load lib/ceems-cluster

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}

setup_file() {
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	[ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] || return 0
	# shellcheck source=tests/harness/pg.sh
	. "$SRCDIR/tests/harness/pg.sh"
	PG_DIR=$(pg_harness_mktemp) || return 1
	echo "$PG_DIR" >"$BATS_FILE_TMPDIR/pg"
	pg_harness_start "$PG_DIR" || return 1
	# The agent's replay runs as root without capabilities: it cannot
	# enter the harness's 0700 socket folder.  A second socket in a
	# folder of group root (0750) lets it in, and nobody else
	# (storage.bats does the same).
	SOCK_DIR=$(mktemp -d /tmp/ceems-thin-sock.XXXXXX)
	echo "$SOCK_DIR" >"$BATS_FILE_TMPDIR/sock"
	chown postgres:root "$SOCK_DIR" && chmod 0750 "$SOCK_DIR" || return 1
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "ALTER SYSTEM SET unix_socket_directories = '$PG_DIR', '$SOCK_DIR'" \
		-c "ALTER SYSTEM SET unix_socket_permissions = '0777'" || return 1
	(cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$PG_DIR/data" \
		-l "$PG_DIR/server.log" -w -t 30 restart) >/dev/null || return 1
	"$CEEMS_TOP_BUILDDIR/tools/ceems-admin" --sql-dir "$SRCDIR/sql/migrations" \
		-d "host=$PG_DIR port=$CEEMS_TEST_PGPORT dbname=ceems user=postgres" \
		db init >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' ||
		return 1
	export CEEMS_CLUSTER_CONF="database = host=$SOCK_DIR port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node"
	ceems_cluster_setup thin summary=full
	echo "$CEEMS_DIR" >"$BATS_FILE_TMPDIR/ceems"
	echo "$SLURM_DIR" >"$BATS_FILE_TMPDIR/slurm"
}

teardown_file() {
	local pg
	pg=$(cat "$BATS_FILE_TMPDIR/pg" 2>/dev/null) || pg=
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems" 2>/dev/null) || CEEMS_DIR=
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm" 2>/dev/null) || SLURM_DIR=
	# Nothing stays stopped: the tests stop slurmctld and PostgreSQL.
	[ -z "$SLURM_DIR" ] || kill -CONT "$(cat "$SLURM_DIR/run/slurmctld.pid" 2>/dev/null)" 2>/dev/null
	if [ -n "$pg" ]; then
		. "$SRCDIR/tests/harness/pg.sh"
		for p in $(_pg_harness_pids "$pg/data"); do kill -CONT "$p" 2>/dev/null; done
	fi
	ceems_cluster_teardown
	[ -z "$pg" ] || pg_harness_stop "$pg"
	sock=$(cat "$BATS_FILE_TMPDIR/sock" 2>/dev/null) && rm -rf "$sock"
	true
}

setup() {
	ceems_cluster_skip_unless_set
	[ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] ||
		skip "no tools/ceems-admin (built without libpq)"
	. "$SRCDIR/tests/harness/pg.sh"
	PG_DIR=$(cat "$BATS_FILE_TMPDIR/pg")
	export PGHOST=$PG_DIR PGPORT=$CEEMS_TEST_PGPORT PGDATABASE=ceems PGUSER=postgres
}

# The first row QUERY gives, as "col|col|...", once there (waits up to
# 40 s: the replay stores records within a second of their spooling).
wait_row() {
	local out
	for _ in $(seq 1 80); do
		out=$(psql -X -At -c "$1") || true
		[ -n "$out" ] && { echo "$out"; return 0; }
		sleep 0.5
	done
	echo "no row for: $1" >&2
	return 1
}

# The jobs row of job ID, columns COLS.
row_of() {
	wait_row "SELECT $2 FROM ceems.jobs WHERE jobid = $1"
}

wait_running() {
	for _ in $(seq 1 120); do
		[ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0
		sleep 0.5
	done
	return 1
}

postgres_pids() { _pg_harness_pids "$PG_DIR/data"; }

@test "the plugin's .so links no libpq, and the agent has the database" {
	! ldd "$CEEMS_SPANK_PLUGIN" | grep -q libpq
	run agent_status
	[ "$status" -eq 0 ]
}

@test "a job run while the node agent is away gets a row: Slurm's metadata, figures absent, coverage 0, the reason" {
	mv "$CEEMS_DIR/agent.sock" "$CEEMS_DIR/agent.sock.away"
	id=$(submit nobody -J unmeasured -c1 --wrap 'sleep 2')
	state=$(finish "$id")
	mv "$CEEMS_DIR/agent.sock.away" "$CEEMS_DIR/agent.sock"
	[ "$state" = COMPLETED ]
	grep "job $id: the node agent was not told of the job's end" "$SLURM_DIR/log/slurmd.log" >&3
	row=$(row_of "$id" "job_name, coalesce(package_j::text, 'absent'), package_coverage, coalesce(cpu_time_s::text, 'absent'), coalesce(total_j::text, 'absent')")
	echo "# row: $row" >&3
	[ "$row" = "unmeasured|absent|0|absent|absent" ]
	[ "$(psql -X -At -c "SELECT finalized_by FROM ceems.job_nodes jn JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = agent ]
	# The reason, in the record's notes.
	psql -X -At -c "SELECT n.text FROM ceems.job_notes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id AND n.note_id = 'not-measured'" |
		grep 'did not measure this job: the node agent was not told' >&3
	# ceems-sacct shows the figures empty, not 0.
	printf 'cluster = ceemstest\nspool_dir = %s/spool\ndatabase = host=%s port=%s dbname=ceems user=postgres\n' \
		"$CEEMS_DIR" "$PG_DIR" "$CEEMS_TEST_PGPORT" >"$BATS_TEST_TMPDIR/sacct.conf"
	run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$BATS_TEST_TMPDIR/sacct.conf" -j "$id" -X -P -n \
		-o JobID,JobName,ConsumedEnergyRaw,CPUEff
	echo "# ceems-sacct: $output" >&3
	[ "$status" -eq 0 ]
	[ "$output" = "$id|unmeasured||" ]
	[ -z "$(ls "$CEEMS_DIR/spool/notes")" ]
}

@test "PostgreSQL hung: a job ends and another starts, every plugin call answered in time" {
	first=$(submit nobody -J before-hang -c1 --wrap 'sleep 3')
	wait_running "$first"
	for p in $(postgres_pids); do kill -STOP "$p"; done
	second=$(submit nobody -J during-hang -c1 --wrap 'sleep 1')
	[ "$(finish "$first")" = COMPLETED ]
	[ "$(finish "$second")" = COMPLETED ]
	t0=$(date +%s%N)
	agent_status >/dev/null
	t1=$(date +%s%N)
	echo "# agent status with PostgreSQL stopped: $(((t1 - t0) / 1000000)) ms" >&3
	[ $(((t1 - t0) / 1000000)) -lt 1000 ]
	# Every call of both jobs was answered: the agent measured both.
	! grep -E "\\[($first|$second)\\.[a-z0-9]+\\].*ceems.*(node agent at|not registered|not told)" \
		"$SLURM_DIR/log/slurmd.log"
	# The plugin stored nothing itself: the agent has both records, in
	# the spool while the database does not answer.
	for id in "$first" "$second"; do
		grep -q "job $id finished on .* record left to the node agent" \
			"$SLURM_DIR/log/slurmd.log"
		[ "$(jq -r .job.jobid "$CEEMS_DIR"/spool/*.json | grep -cx "$id")" = 1 ]
	done
	for p in $(postgres_pids); do kill -CONT "$p"; done
	row_of "$first" "jobid" >/dev/null
	row_of "$second" "jobid" >/dev/null
	[ "$(psql -X -At -c "SELECT count(*) FROM ceems.jobs WHERE jobid IN ($first, $second) AND package_j IS NOT NULL")" = 2 ]
}

@test "slurmctld stopped at a job's end: its record still comes, with the metadata taken at its start" {
	id=$(submit nobody -J ctld-away -c1 --wrap 'sleep 4')
	wait_running "$id"
	for _ in $(seq 1 40); do
		grep -q "job $id: Slurm's start time" "$CEEMS_DIR/agent.log" && break
		sleep 0.25
	done
	# The batch step ends; slurmctld orders the job's end and is
	# stopped at once: the extern step's end and the epilog meet a
	# slurmctld that does not answer.
	while [ "$(squeue -h -j "$id" -o %T 2>/dev/null)" = RUNNING ]; do
		sleep 0.05
	done
	ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
	kill -STOP "$ctld"
	stopped=$(date +%s)
	# The extern step ended the job at once, slurmctld or not.
	for _ in $(seq 1 40); do
		grep -q "job $id finished on .* (extern)" "$SLURM_DIR/log/slurmd.log" && break
		sleep 0.25
	done
	ended=$(date +%s)
	grep "job $id finished on .* (extern)" "$SLURM_DIR/log/slurmd.log" >&3
	echo "# extern step's end seen $((ended - stopped)) s after slurmctld stopped" >&3
	[ $((ended - stopped)) -le 3 ]
	# The record comes while slurmctld is still stopped (the epilog's
	# word, after its own wait for slurmctld, or finish_grace).
	row=$(wait_row "SELECT c.name, j.partition, j.submit_time IS NOT NULL, j.package_j > 0
		FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id) WHERE j.jobid = $id")
	kill -CONT "$ctld"
	echo "# row: $row" >&3
	[ "$row" = "ceemstest|debug|t|t" ]
	[ "$(psql -X -At -c "SELECT finalized_by FROM ceems.job_nodes jn JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = extern ]
}
