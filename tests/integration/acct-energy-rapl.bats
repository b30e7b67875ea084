#!/usr/bin/env bats
# acct-energy-rapl.bats - the side-by-side of acct-energy.bats: the same
# two jobs sharing the simulated node (a CPU burner, a job sleeping on
# its core), with Slurm's own acct_gather_energy/rapl reading the same
# simulated counters (tests/doubles/fake-msr mirrors fake-rapl's into
# RAPL registers, mounted over /dev/cpu/0 in slurmd's own mount
# namespace by tests/integration/lib/msr-ns.sh).  Slurm then charges
# each job the node's energy over its life, its neighbour's included,
# while the agent's records (SPANK plugin, as ever) keep each job's
# share.  doc/accuracy.md holds both columns.
#
# Runs as root, about 40 s.  Needs what acct-energy.bats needs, and
# unshare (util-linux).

load lib/ceems-cluster
load lib/acct-energy

_skip_reason() {
	if [ -z "${CEEMS_SPANK_PLUGIN:-}" ]; then
		echo "CEEMS_SPANK_PLUGIN is not set (run through make check-integration)"
	elif ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null; then
		echo "slurmdbd or mariadbd not found (packages slurmdbd, mariadb-server)"
	elif ! command -v unshare >/dev/null || [ ! -d /dev/cpu/0 ]; then
		echo "no unshare, or no /dev/cpu/0 to mount the simulated registers over"
	elif [ ! -e "$(slurm_plugindir)/acct_gather_energy_rapl.so" ]; then
		echo "Slurm's acct_gather_energy/rapl not found"
	fi
}

# Once CEEMS_DIR holds fake-rapl's tree: its counters as registers, and
# slurmd started where they are /dev/cpu/0/msr.
ceems_cluster_prepare() {
	mkdir -p "$CEEMS_DIR/devcpu0" || return 1
	"$CEEMS_TOP_BUILDDIR/tests/doubles/fake-msr" --sys "$CEEMS_DIR/sys" \
		--out "$CEEMS_DIR/devcpu0/msr" --period-ms 5 \
		>"$CEEMS_DIR/fake-msr.log" 2>&1 3>&- &
	echo $! >"$CEEMS_DIR/fake-msr.pid"
	for _ in $(seq 1 50); do
		[ "$(stat -c %s "$CEEMS_DIR/devcpu0/msr" 2>/dev/null || echo 0)" -gt 1560 ] && break
		sleep 0.1
	done
	export CEEMS_TEST_SLURMD_WRAPPER="unshare --mount --propagation private sh $CEEMS_TOP_SRCDIR/tests/integration/lib/msr-ns.sh $CEEMS_DIR/devcpu0"
}

setup_file() {
	[ -z "$(_skip_reason)" ] || return 0
	export CEEMS_TEST_SLURMDBD=1 CEEMS_TEST_SLURMDBD_USERS=nobody
	export CEEMS_TEST_SLURM_CONF_EXTRA="AcctGatherEnergyType=acct_gather_energy/rapl"
	CEEMS_CLUSTER_INTERVAL=100ms ceems_cluster_setup acctrapl || return 1
	shared_jobs
}

teardown_file() {
	[ ! -r "${CEEMS_DIR:-/nonexistent}/fake-msr.pid" ] ||
		kill "$(cat "$CEEMS_DIR/fake-msr.pid")" 2>/dev/null
	ceems_cluster_teardown
}

setup() {
	local why
	load_lib
	why=$(_skip_reason)
	[ -z "$why" ] || skip "$why"
}

# _job_j ID: Slurm's energy of job ID, and ceems's.
_job_j() {
	echo "$(slurm_energy "$1" | awk '$1 == "job" { print $2 }') $(ceems_energy "$1" | awk '$1 == "job" { print $2 }')"
}

@test "under acct_gather_energy/rapl each shared job is charged about the node's energy, its neighbour's included" {
	local node id kind slurm ceems sum=0
	node=$(cat "$CEEMS_DIR/node_j")
	while read -r id kind; do
		read -r slurm ceems <<<"$(_job_j "$id")"
		echo "# $kind job $id: Slurm with rapl $slurm J, ceems $ceems J; the node over both jobs' run $node J" >&3
		# its life is most of the run: most of the node's energy
		check "${slurm:-0} >= 0.6 * $node && $slurm <= 1.02 * $node"
		sum=$((sum + slurm))
	done <"$CEEMS_DIR/jobs"
	# charged twice over: the jobs' sum is more than the node's
	check "$sum > $node"
}

@test "on the same counters ceems charges the sleeping job its share, well below the node's energy" {
	local id slurm ceems
	id=$(awk '$2 == "sleeper" { print $1 }' "$CEEMS_DIR/jobs")
	read -r slurm ceems <<<"$(_job_j "$id")"
	check "${ceems:-0} > 0 && $ceems < 0.5 * $slurm"
}
