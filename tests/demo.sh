#!/bin/bash
# demo.sh - bring up a local ceems demo on one Debian 12 machine: install
# the dependencies, build, start a throwaway PostgreSQL and a single-node
# Slurm cluster on loopback with the ceems plugin, run sample jobs as an
# unprivileged user, and show what the user sees at the end of each job.
#
#   ./tests/demo.sh          start (restarts a running demo) and run jobs
#   ./tests/demo.sh stop     stop the demo and remove everything it made
#
# Run as root.  The cluster keeps running after the first command so you
# can submit your own jobs: the script prints the SLURM_CONF to export.
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
	pg_harness_stop "$DEMO_PG_DIR" || true
	rm -f "$state"
	echo "demo stopped; nothing left behind"
}

demo_build() {
	say "installing dependencies (apt-get, only what is missing)"
	"$top/tests/install-deps.sh"
	say "building ceems in $build"
	(cd "$top" && autoreconf -fi) >/dev/null 2>&1
	mkdir -p "$build"
	(cd "$build" && { [ -f Makefile ] || "$top/configure" -q; } && make -j"$(nproc)" -s) >/dev/null
	echo "built: $build/plugins/.libs/spank_ceems.so"
}

# A job script of the demo, written into the cluster's output directory.
write_job() {
	local name=$1 body=$2
	printf '#!/bin/bash\n%s\n' "$body" >"$DEMO_SLURM_DIR/out/$name.sh"
	chmod 755 "$DEMO_SLURM_DIR/out/$name.sh"
}

demo_jobs() {
	local ids="" id name
	write_job burner 'timeout 5 sh -c "while :; do :; done"; echo burned'
	write_job sleeper 'sleep 4; echo slept'
	write_job steps 'srun -n1 hostname; srun -n1 sleep 1; echo two steps done'
	say "submitting sample jobs as user nobody"
	for name in burner sleeper steps; do
		id=$(cd "$DEMO_SLURM_DIR/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
			sbatch --parsable -J "demo-$name" -c 1 --mem=200M \
			-o "$DEMO_SLURM_DIR/out/$name-%j.out" "$DEMO_SLURM_DIR/out/$name.sh")
		echo "job $id: $name"
		ids="$ids $id"
	done
	for id in $ids; do
		slurm_harness_wait_job "$id" 120 >/dev/null || true
	done
	for name in burner sleeper steps; do
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
	printf 'DEMO_PG_DIR=%s\nDEMO_SLURM_DIR=%s\n' "$DEMO_PG_DIR" "$DEMO_SLURM_DIR" >"$state"
	say "starting PostgreSQL in $DEMO_PG_DIR"
	pg_harness_start "$DEMO_PG_DIR"
	say "starting Slurm (munged, slurmctld, slurmd) in $DEMO_SLURM_DIR"
	slurm_harness_start "$DEMO_SLURM_DIR" \
		"optional $build/plugins/.libs/spank_ceems.so summary=full"
	sinfo
	demo_jobs
	say "the demo cluster is still running"
	cat <<EOM
Submit your own jobs:
    export SLURM_CONF=$SLURM_CONF
    cd $DEMO_SLURM_DIR/out && sbatch --wrap 'srun hostname'
PostgreSQL: psql -h $DEMO_PG_DIR -p ${PGPORT:-} -U postgres ceems
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
