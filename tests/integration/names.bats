#!/usr/bin/env bats
# names.bats - job names Slurm accepts that are not text, end to end: the
# real local Slurm cluster with the ceems plugin and its node agent
# (lib/ceems-cluster.bash), the agent storing into a real PostgreSQL 15
# (tests/harness/pg.sh).  A name with bytes that are not UTF-8, and one
# of many two-byte characters longer than the record's field, each get
# their row in ceems.jobs with the name escaped and cut as
# doc/record-format.md says, and ceems-sacct shows that name.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`), postgresql-15 and a
# build with libpq.

load lib/ceems-cluster

# shellcheck source=../harness/pg.sh
. "$BATS_TEST_DIRNAME/../harness/pg.sh"

_skip_reason() {
	if [ -z "${CEEMS_SPANK_PLUGIN:-}" ]; then
		echo "CEEMS_SPANK_PLUGIN is not set (run through make check-integration)"
	elif [ ! -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ]; then
		echo "no tools/ceems-admin (built without libpq?)"
	elif ! command -v jq >/dev/null; then
		echo "jq not installed"
	fi
}

setup_file() {
	local sock
	[ -z "$(_skip_reason)" ] || return 0
	PG=$(pg_harness_mktemp) || return 1
	export PG
	pg_harness_start "$PG" || return 1
	"$CEEMS_TOP_BUILDDIR/tools/ceems-admin" \
		--sql-dir "$CEEMS_TOP_SRCDIR/sql/migrations" \
		-d "host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=postgres" \
		db init >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 \
		-c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' || return 1
	# The agent writes the records, without capabilities.
	sock=$(pg_harness_root_socket "$PG") || return 1
	CEEMS_CLUSTER_CONF="database = host=$sock port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node" \
		ceems_cluster_setup names summary=full
}

teardown_file() {
	ceems_cluster_teardown
	[ -z "${PG:-}" ] || pg_harness_stop "$PG"
}

setup() {
	local why
	why=$(_skip_reason)
	[ -z "$why" ] || skip "$why"
	load_lib
}

# The job_name of job ID's row in ceems.jobs, once it is there (60 s).
row_name() {
	local i
	for i in $(seq 1 120); do
		if [ "$(psql -X -At -c "SELECT count(*) FROM ceems.jobs WHERE jobid = $1")" = 1 ]; then
			psql -X -At -c "SELECT job_name FROM ceems.jobs WHERE jobid = $1"
			return 0
		fi
		sleep 0.5
	done
	echo "job $1 has no row in ceems.jobs; spool: $(ls -R "$CEEMS_DIR/spool")" >&2
	grep -i "ceems" "$SLURM_DIR/log/slurmd.log" | tail -n 20 >&2
	tail -n 20 "$CEEMS_DIR/agent.log" >&2
	return 1
}

# JobName as ceems-sacct shows job ID from the database.
sacct_name() {
	printf 'database = host=%s port=%s dbname=ceems user=postgres\nspool_dir = %s/spool\n' \
		"$PG" "$CEEMS_TEST_PGPORT" "$CEEMS_DIR" >"$CEEMS_DIR/sacct.conf"
	"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/sacct.conf" \
		-j "$1" -X -P -n -o JobID,JobName | awk -F'|' -v id="$1" '$1 == id { print $2 }'
}

no_rejected_records() {
	[ -z "$(ls -A "$CEEMS_DIR/spool/rejected" 2>/dev/null)" ] || {
		echo "rejected records: $(ls "$CEEMS_DIR/spool/rejected")" >&2
		return 1
	}
}

@test "a job name that is not UTF-8 is stored with its byte as \\xHH; ceems-sacct shows it" {
	id=$(submit nobody -J $'bad\xffname' -c1 --wrap true)
	[ "$(finish "$id")" = COMPLETED ]
	expect_summary "$id" "^ceems - job $id \\(nobody[,)] COMPLETED"
	name=$(row_name "$id")
	echo "# row: $name" >&3
	[ "$name" = 'bad\xffname' ]
	echo "$id" >"$CEEMS_DIR/bad-id"
	[ "$(sacct_name "$id")" = 'bad\xffname' ]
	no_rejected_records
	run grep "not valid JSON" "$SLURM_DIR/log/slurmd.log" "$CEEMS_DIR/agent.log"
	[ "$status" -eq 1 ]
}

@test "a name of many two-byte characters is cut between characters, never inside one" {
	long=$(for _ in $(seq 1 200); do printf '\303\251'; done)
	[ "$(printf %s "$long" | wc -c)" = 400 ]
	id=$(submit nobody -J "$long" -c1 --wrap true)
	[ "$(finish "$id")" = COMPLETED ]
	# Slurm keeps the whole name: the cut is ceems's.
	[ "$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobName=//p')" = "$long" ] ||
		echo "# slurmctld no longer holds job $id" >&3
	name=$(row_name "$id")
	# The record's field holds 255 bytes: 127 whole characters fit.
	[ "$(psql -X -At -c "SELECT octet_length(job_name), char_length(job_name) FROM ceems.jobs WHERE jobid = $id")" = "254|127" ]
	[ "$name" = "$(for _ in $(seq 1 127); do printf '\303\251'; done)" ]
	[ "$(sacct_name "$id")" = "$name" ]
	no_rejected_records
}

@test "ceems-sacct filters by names that are not UTF-8 as they are stored" {
	# The job of the first test, found by its name's raw byte and by the
	# name as shown; PostgreSQL would refuse the raw byte as a parameter.
	read -r id <"$CEEMS_DIR/bad-id"
	printf 'database = host=%s port=%s dbname=ceems user=postgres\nspool_dir = %s/spool\n' \
		"$PG" "$CEEMS_TEST_PGPORT" "$CEEMS_DIR" >"$CEEMS_DIR/sacct.conf"
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "UPDATE ceems.jobs SET account = job_name WHERE jobid = $id"
	for account in $'bad\xffname' 'bad\xffname'; do
		run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/sacct.conf" \
			-S 2020-01-01 -A "$account" -X -P -n -o JobID
		echo "# -A $account: $output" >&3
		[ "$status" -eq 0 ]
		[ "$output" = "$id" ]
	done
}

@test "a backslash typed before x stays apart from an escape: doubled" {
	id=$(submit nobody -J 'typed\x41' -c1 --wrap true)
	[ "$(finish "$id")" = COMPLETED ]
	[ "$(row_name "$id")" = 'typed\\x41' ]
	no_rejected_records
}
