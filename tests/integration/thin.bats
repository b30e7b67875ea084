#!/usr/bin/env bats
# thin.bats - the job-side plugin as a thin client, end to end on the
# real local Slurm cluster with a real PostgreSQL: the node agent is the
# only writer of records, into the database off its event loop; the
# job's end asks slurmctld nothing (the batch step's summary comes with
# slurmctld stopped); a job the agent never measured (away at the job's
# start, or at both ends) still gets its row, figures absent and
# coverage 0, with the reason.
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

postgres_pids() { _pg_harness_pids "$PG_DIR/data"; }

# The agent has taken every note of the plugin (waits up to 10 s: both
# the extern step and the epilog may leave one for a job, and the row
# comes from the first the agent takes).
notes_taken() {
	for _ in $(seq 1 20); do
		[ -z "$(ls "$CEEMS_DIR/spool/notes" 2>/dev/null)" ] && return 0
		sleep 0.5
	done
	echo "notes left: $(ls "$CEEMS_DIR/spool/notes")" >&2
	return 1
}

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
	notes_taken
}

@test "PostgreSQL hung: a job ends and another starts, every plugin call answered in time" {
	first=$(submit nobody -J before-hang -c1 --wrap 'sleep 3')
	wait_running "$first"
	# A backend may end between the listing and its signal: gone is fine.
	for p in $(postgres_pids); do kill -STOP "$p" 2>/dev/null || [ ! -e "/proc/$p" ]; done
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
	for p in $(postgres_pids); do kill -CONT "$p" 2>/dev/null || [ ! -e "/proc/$p" ]; done
	row_of "$first" "jobid" >/dev/null
	row_of "$second" "jobid" >/dev/null
	[ "$(psql -X -At -c "SELECT count(*) FROM ceems.jobs WHERE jobid IN ($first, $second) AND package_j IS NOT NULL")" = 2 ]
}

# A folder the job (user nobody) can look into: the test lets the batch
# script go on by creating GO in it.
go_dir() {
	local d
	d=$(mktemp -d /tmp/ceems-thin-go.XXXXXX) && chmod 755 "$d" && echo "$d"
}

@test "a job started while the node agent was away gets a row once the agent is back at its end, its extern step killed" {
	# Neither step registered the job, the agent (running, its socket
	# away) did not adopt it, and none ends it: only the job_epilog
	# callback (--enable-spank-job-epilog) hears of its end.
	nm -D --defined-only "$CEEMS_SPANK_PLUGIN" | grep -q slurm_spank_job_epilog ||
		skip "the plugin is built without its job_epilog callback"
	go=$(go_dir)
	mv "$CEEMS_DIR/agent.sock" "$CEEMS_DIR/agent.sock.away"
	id=$(submit nobody -J unregistered -c1 --wrap "while [ ! -e $go/go ]; do sleep 0.1; done; sleep 2")
	# Both steps start without the agent: neither registers the job.
	for _ in $(seq 1 120); do
		grep -q "\[$id\.batch\].*not registered with the node agent" \
			"$SLURM_DIR/log/slurmd.log" && break
		sleep 0.25
	done
	mv "$CEEMS_DIR/agent.sock.away" "$CEEMS_DIR/agent.sock"
	grep "\[$id\.extern\].*not registered with the node agent" "$SLURM_DIR/log/slurmd.log" >&3
	grep "\[$id\.batch\].*not registered with the node agent" "$SLURM_DIR/log/slurmd.log" >&3
	# The agent is back; the extern step dies.  The epilog's word is
	# the job's only end the agent hears of, and it never knew the job.
	pid=$(pgrep -f "^slurmstepd: \[$id\.extern\]")
	[ -n "$pid" ]
	kill -KILL $pid
	touch "$go/go"
	state=$(finish "$id")
	rm -rf "$go"
	row=$(row_of "$id" "job_name, coalesce(package_j::text, 'absent'), package_coverage, coalesce(cpu_time_s::text, 'absent'), state")
	echo "# row: $row" >&3
	[ "$row" = "unregistered|absent|0|absent|$state" ]
	[ "$(psql -X -At -c "SELECT finalized_by FROM ceems.job_nodes jn JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = agent ]
	psql -X -At -c "SELECT n.text FROM ceems.job_notes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id AND n.note_id = 'not-measured'" |
		grep 'never registered with the node agent on this node' >&3
	# Made by the epilog's call itself, not from a note of a refusal.
	grep "job $id finished on .* (epilog): not measured, never registered" "$SLURM_DIR/log/slurmd.log" >&3
	! grep "job $id: the node agent was not told" "$SLURM_DIR/log/slurmd.log"
	notes_taken
	# One record of the job, and no second one.
	[ "$(grep -c "job $id: record written to the spool by the agent" "$CEEMS_DIR/agent.log")" = 1 ]
}

@test "slurmctld stopped before a job's batch script exits: its summary comes at once, its record once slurmctld is back, with the start's metadata" {
	go=$(go_dir)
	id=$(submit nobody -J ctld-away -c1 --wrap "while [ ! -e $go/go ]; do sleep 0.1; done; echo script-end \$(date +%s.%N)")
	wait_running "$id"
	# The extern step has asked slurmctld for the job's metadata.
	for _ in $(seq 1 40); do
		grep -q "job $id: Slurm's start time" "$CEEMS_DIR/agent.log" && break
		sleep 0.25
	done
	grep -q "job $id: Slurm's start time" "$CEEMS_DIR/agent.log"
	ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
	kill -STOP "$ctld"
	touch "$go/go"
	# The batch step ends, slurmctld stopped: its summary must not wait
	# for it (up to MessageTimeout, 10 s, per question).
	out="$SLURM_DIR/out/job-$id.out"
	for _ in $(seq 1 300); do
		grep -q "^ceems - job $id " "$out" && break
		sleep 0.05
	done
	printed=$(date +%s.%N)
	ended=$(sed -n 's/^script-end //p' "$out")
	# The extern step ends only when slurmctld ends the job: nothing
	# ended it yet.
	sleep 1
	extern_ended=$(grep -c "job $id finished on .* (extern)" "$SLURM_DIR/log/slurmd.log" || true)
	kill -CONT "$ctld"
	rm -rf "$go"
	cat "$out" >&3
	[ -n "$ended" ]
	grep -q "^ceems - job $id (nobody[,)] COMPLETED in " "$out"
	echo "# summary in the output $(awk "BEGIN { printf \"%.2f\", $printed - $ended }") s after the batch script ended, slurmctld stopped" >&3
	check "$printed - $ended < 3"
	[ "$extern_ended" = 0 ]
	# slurmctld back: it ends the job, the extern step ends it with the
	# metadata taken at its start, the epilog adds the final state.
	state=$(finish "$id")
	row=$(wait_row "SELECT c.name, j.partition, j.submit_time IS NOT NULL, j.package_j > 0, j.state
		FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id) WHERE j.jobid = $id")
	echo "# row: $row" >&3
	[ "$row" = "ceemstest|debug|t|t|$state" ]
	[ "$(psql -X -At -c "SELECT finalized_by FROM ceems.job_nodes jn JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = extern ]
}
