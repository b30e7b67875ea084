#!/bin/bash
# demo.sh - bring up a local ceems demo on one Debian 12 machine: install
# what it needs (tests/install-deps.sh demo), build, start a throwaway
# PostgreSQL (with the ceems schema) and a single-node Slurm cluster on
# loopback with the ceems plugin and its node agent, run sample jobs as
# an unprivileged user, and show what users and admins see: the
# end-of-job summary in each job's output, the jobs' rows in PostgreSQL
# and the month's usage per user, and ceems-sacct's listing and
# explanation of a job.
#
# A machine without RAPL (a VM, most CI machines) gets a simulated one:
# tests/doubles/fake-rapl keeps a powercap tree whose power follows the
# machine's real CPU activity (40 W idle + 15 W per busy CPU), with real
# packages' counter ranges, and the agent reads it through its normal
# sysfs path.  The figures are then real measurements of a known model,
# not of this machine's hardware.
#
#   ./tests/demo.sh          start (restarts a running demo) and run jobs
#   ./tests/demo.sh stop     stop the demo and remove everything it made
#
# Run as root.  The cluster keeps running after the first command so you
# can submit your own jobs: the script prints the SLURM_CONF to export.
# Under `flock LOCK ./tests/demo.sh`, the daemons it leaves running
# inherit the lock's descriptor and hold the lock until the demo is
# stopped: run `./tests/demo.sh stop` without flock.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/_build/demo"
state=/run/ceems-demo.env

# shellcheck source=tests/harness/pg.sh
. "$top/tests/harness/pg.sh"
# shellcheck source=tests/harness/slurm.sh
. "$top/tests/harness/slurm.sh"

say() { printf '\n== %s\n' "$*"; }

demo_stop() {
	if [ ! -r "$state" ]; then
		echo "no demo is running"
		return 0
	fi
	# shellcheck disable=SC1090
	. "$state"
	slurm_harness_stop "$DEMO_SLURM_DIR" || true
	if [ -r "$DEMO_CEEMS_DIR/fake-rapl.pid" ]; then
		kill "$(cat "$DEMO_CEEMS_DIR/fake-rapl.pid")" 2>/dev/null || true
	fi
	pg_harness_stop "$DEMO_PG_DIR" || true
	rm -rf "$DEMO_CEEMS_DIR"
	rm -f "$state"
	echo "demo stopped; nothing left behind"
}

demo_build() {
	say "installing what the demo needs (apt-get, only what is missing)"
	"$top/tests/install-deps.sh" demo
	say "building ceems in $build"
	(cd "$top" && autoreconf -fi) >/dev/null 2>&1
	mkdir -p "$build"
	(cd "$build" && { [ -f Makefile ] || "$top/configure" -q; } &&
		make -j"$(nproc)" -s && make -s tests/doubles/fake-rapl) >/dev/null
	echo "built: $build/plugins/.libs/spank_ceems.so, $build/tools/ceems-agent"
}

# A job script of the demo, written into the cluster's output directory.
write_job() {
	local name=$1 body=$2
	printf '#!/bin/bash\n%s\n' "$body" >"$DEMO_SLURM_DIR/out/$name.sh"
	chmod 755 "$DEMO_SLURM_DIR/out/$name.sh"
}

# The simulated counters' ranges (max_energy_range_uj) are those of real
# Intel server packages and their DRAM (about 262 kJ and 66 kJ: many
# minutes to wrap even at full power), not the test double's default of
# a few joules, which the wrap tests use: the agent samples them on its
# normal tick and can recover a restart from them, as on a real node.
DEMO_PACKAGE_RANGE_UJ=262143328850
DEMO_DRAM_RANGE_UJ=65712999613

# The node's energy counters: the real RAPL when the machine has it, else
# the simulated one.  Prints the sysfs root for ceems.conf.
demo_energy_source() {
	if ls /sys/class/powercap/intel-rapl:0/energy_uj >/dev/null 2>&1; then
		echo /sys
		return
	fi
	mkdir -p "$DEMO_CEEMS_DIR/sys"
	"$build/tests/doubles/fake-rapl" --root "$DEMO_CEEMS_DIR/sys" \
		--truth "$DEMO_CEEMS_DIR/fake-rapl.truth" --period-ms 5 \
		--package-range-uj "$DEMO_PACKAGE_RANGE_UJ" \
		--dram-range-uj "$DEMO_DRAM_RANGE_UJ" \
		>"$DEMO_CEEMS_DIR/fake-rapl.log" 2>&1 &
	echo $! >"$DEMO_CEEMS_DIR/fake-rapl.pid"
	for _ in $(seq 1 50); do
		[ -e "$DEMO_CEEMS_DIR/sys/class/powercap/intel-rapl:0/energy_uj" ] && break
		sleep 0.1
	done
	echo "$DEMO_CEEMS_DIR/sys"
}

# The ceems schema, and a login role for the compute node that holds
# ceems_writer and nothing else.  The agent and the plugin run as root
# without capabilities: they reach PostgreSQL through a socket directory
# of group root.  Prints the connection string for ceems.conf.
demo_database() {
	local sock=$DEMO_CEEMS_DIR/pgsock
	mkdir -p "$sock"
	chown postgres:root "$sock"
	chmod 0750 "$sock"
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "ALTER SYSTEM SET unix_socket_directories = '$DEMO_PG_DIR', '$sock'" \
		-c "ALTER SYSTEM SET unix_socket_permissions = '0777'" >/dev/null
	(cd / && runuser -u postgres -- "${CEEMS_TEST_PGBIN:-/usr/lib/postgresql/15/bin}/pg_ctl" \
		-D "$DEMO_PG_DIR/data" -l "$DEMO_PG_DIR/server.log" -w -t 30 restart) >/dev/null
	"$build/tools/ceems-admin" --sql-dir "$top/sql/migrations" \
		-d "host=$DEMO_PG_DIR port=$PGPORT dbname=ceems user=postgres" db init >&2
	psql -X -q -c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' >/dev/null
	echo "host=$sock port=$PGPORT dbname=ceems user=ceems_node"
}

demo_config() {
	local sysfs=$1 database=$2
	cat >"$DEMO_CEEMS_DIR/ceems.conf" <<EOC
# ceems.conf of the demo (see ceems.conf(5)); the tick (interval) and
# the checkpoints are the defaults, 1s and 10s, as on a production node
socket = $DEMO_CEEMS_DIR/run/agent.sock
state_dir = $DEMO_CEEMS_DIR/state
spool_dir = $DEMO_CEEMS_DIR/spool
sysfs_root = $sysfs
idle_power_package = learn
cluster = ceemstest
zone = FR
pue = 1.3
emissions_table = $top/lib/data/carbon-intensity.tsv
database = $database
# ceems-sacct's connection (the writer above cannot read jobs).  On a
# real cluster users connect as themselves (ceems.conf(5)); the demo's
# admin is the PostgreSQL superuser, over the same root-only socket.
sacct_database = ${database%user=*}user=postgres
EOC
}

demo_jobs() {
	local ids="" id name
	write_job burner 'end=$((SECONDS + 15)); while [ $SECONDS -lt $end ]; do :; done; echo burned'
	write_job sleeper 'sleep 15; echo slept'
	write_job steps 'srun -n1 hostname; srun -n1 sleep 2; echo two steps done'
	write_job failing 'echo "something went wrong" >&2; exit 3'
	say "submitting sample jobs as user nobody"
	for name in burner sleeper steps failing; do
		cores=1
		[ "$name" = sleeper ] && cores=2
		id=$(cd "$DEMO_SLURM_DIR/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
			sbatch --parsable -J "demo-$name" -c "$cores" --mem=2G \
			-o "$DEMO_SLURM_DIR/out/$name-%j.out" "$DEMO_SLURM_DIR/out/$name.sh")
		echo "job $id: $name"
		ids="$ids $id"
		[ "$name" != burner ] || DEMO_BURNER=$id
	done
	for id in $ids; do
		slurm_harness_wait_job "$id" 120 >/dev/null || true
	done
	for name in burner sleeper steps failing; do
		for f in "$DEMO_SLURM_DIR/out/$name"-*.out; do
			say "what the user sees at the end of $(basename "$f")"
			cat "$f"
		done
	done
}

demo_start() {
	if [ -r "$state" ]; then
		demo_stop
	fi
	demo_build
	DEMO_PG_DIR=$(pg_harness_mktemp)
	DEMO_SLURM_DIR=$(slurm_harness_mktemp)
	DEMO_CEEMS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ceems-demo.XXXXXX")
	chmod 755 "$DEMO_CEEMS_DIR"
	printf 'DEMO_PG_DIR=%s\nDEMO_SLURM_DIR=%s\nDEMO_CEEMS_DIR=%s\n' \
		"$DEMO_PG_DIR" "$DEMO_SLURM_DIR" "$DEMO_CEEMS_DIR" >"$state"
	say "starting PostgreSQL in $DEMO_PG_DIR, with the ceems schema"
	pg_harness_start "$DEMO_PG_DIR"
	database=$(demo_database)
	sysfs=$(demo_energy_source)
	if [ "$sysfs" = /sys ]; then
		say "energy: this machine's RAPL"
	else
		say "energy: no RAPL here; simulated RAPL in $sysfs (40 W idle + 15 W per busy CPU)"
	fi
	demo_config "$sysfs" "$database"
	say "starting Slurm (munged, slurmctld, slurmd) in $DEMO_SLURM_DIR"
	slurm_harness_start "$DEMO_SLURM_DIR" \
		"optional $build/plugins/.libs/spank_ceems.so config=$DEMO_CEEMS_DIR/ceems.conf agent=$build/tools/ceems-agent agent_log=$DEMO_CEEMS_DIR/agent.log"
	sinfo
	demo_jobs
	# The table keeps joules and grams in double precision, for
	# machines; people read the sample jobs' small figures in Wh and g,
	# to 3 significant digits (sig3, for this session only), as
	# ceems-sacct prints them.
	say "what an admin sees in PostgreSQL (ceems.jobs, energy in Wh, emissions in g CO2e)"
	sleep 2
	psql -X -q -c "CREATE FUNCTION pg_temp.sig3(x double precision) RETURNS numeric
		LANGUAGE sql IMMUTABLE
		RETURN CASE WHEN x = 0 THEN 0
			    ELSE round(x::numeric, greatest(0, 2 - floor(log(abs(x)))::int)) END" \
		-c "SELECT jobid, user_name AS user, job_name, state, exit_code AS exit,
		round(elapsed_s) AS elapsed_s, round(cpu_efficiency * 100) AS cpu_pct,
		pg_temp.sig3(total_j / 3600) AS energy_wh, pg_temp.sig3(emissions_g) AS co2e_g
		FROM ceems.jobs ORDER BY jobid"
	say "energy (kWh) and emissions (kg CO2e) per user this month (ceems.usage_by_user_month)"
	psql -X -c "SELECT * FROM ceems.usage_by_user_month"
	say "what an admin sees with ceems-sacct -S today (sacct's options and fields)"
	"$build/tools/ceems-sacct" -c "$DEMO_CEEMS_DIR/ceems.conf" -S today
	say "ceems-sacct --explain $DEMO_BURNER (the burner job)"
	"$build/tools/ceems-sacct" -c "$DEMO_CEEMS_DIR/ceems.conf" --explain "$DEMO_BURNER"
	say "the demo cluster is still running"
	cat <<EOM
Submit your own jobs:
    export SLURM_CONF=$SLURM_CONF
    cd $DEMO_SLURM_DIR/out && sbatch --wrap 'srun hostname'
ceems-sacct: $build/tools/ceems-sacct -c $DEMO_CEEMS_DIR/ceems.conf -S today
PostgreSQL: psql -h $DEMO_PG_DIR -p ${PGPORT:-} -U postgres ceems
The node agent: $build/tools/ceems-agent --status -c $DEMO_CEEMS_DIR/ceems.conf
Stop it and remove everything:
    $0 stop
EOM
}

if [ "$(id -u)" != 0 ]; then
	echo "demo.sh: run as root (it installs packages and starts Slurm and PostgreSQL)" >&2
	exit 1
fi
case "${1:-start}" in
start) demo_start ;;
stop) demo_stop ;;
*) echo "usage: $0 [start|stop]" >&2; exit 2 ;;
esac
