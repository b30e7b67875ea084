#!/usr/bin/env bats
# bmc.bats - the node's power from a BMC, end to end on the real local
# Slurm cluster: the node agent the slurmd-side plugin supervises reads
# the simulated RAPL tree (tests/doubles/fake-rapl) for package and DRAM
# and the simulated BMC (tests/harness/bmc.sh: OpenIPMI's ipmi_sim on
# loopback, LANplus, its SDR power sensor at 300 W) for the whole node,
# confined as it runs in production.  Jobs' records get a node part, the
# residual (BMC - package - DRAM) goes to the jobs by their allocated
# cores and the rest to idle, and every domain balances: the jobs' energy
# plus the agent's system and idle is the node's measured energy.
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`) and ipmi_sim.

load lib/ceems-cluster

BMC_PORT=16641
BMC_RAW=150	# the sensor reads 2 x raw: 300 W

bmc_harness() {
	bash "$CEEMS_TOP_SRCDIR/tests/harness/bmc.sh" "$@"
}

setup_file() {
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] && command -v ipmi_sim >/dev/null || return 0
	BMC_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.bmc-sim.XXXXXX")
	export BMC_DIR
	bmc_harness start "$BMC_DIR" "$BMC_PORT"
	bmc_harness set "$BMC_DIR" "$BMC_RAW"
	CEEMS_CLUSTER_CONF="bmc = lan
bmc_host = 127.0.0.1:$BMC_PORT
bmc_credentials_file = $BMC_DIR/credentials
bmc_workarounds = opensesspriv
bmc_interval = 250ms
bmc_timeout = 1s"
	export CEEMS_CLUSTER_CONF
	ceems_cluster_setup bmc summary=full
}

teardown_file() {
	ceems_cluster_teardown
	if [ -n "${BMC_DIR:-}" ]; then
		bmc_harness stop "$BMC_DIR"
		rm -rf "$BMC_DIR"
	fi
}

setup() {
	ceems_cluster_skip_unless_set
	command -v ipmi_sim >/dev/null || skip "no ipmi_sim (Debian package openipmi)"
}

# The agent's node energy so far, once it is more than 0 (waits 10 s).
node_delta() {
	local d i
	for i in $(seq 1 50); do
		d=$(agent_status | jq '.energy.node.delta_j // 0')
		if check "$d > 0"; then
			echo "$d"
			return 0
		fi
		sleep 0.2
	done
	echo "the agent measured no node energy: $(agent_status)" >&2
	return 1
}

@test "the agent reads the node's power from the simulated BMC" {
	node_delta >/dev/null
	grep -q 'node power from SDR sensor "Node Power"' "$CEEMS_DIR/agent.log"
	grep -q 'node energy from bmc' "$CEEMS_DIR/agent.log"
}

@test "jobs get the residual by their cores, idle the rest, and every domain balances" {
	ONE_ID=$(submit nobody -J onecore -c1 --wrap 'sleep 6')
	TWO_ID=$(submit nobody -J twocores -c2 --wrap 'sleep 4')
	[ "$(finish "$ONE_ID")" = COMPLETED ]
	[ "$(finish "$TWO_ID")" = COMPLETED ]
	one=$(record_of "$ONE_ID")
	two=$(record_of "$TWO_ID")
	n1=$(jq '.measurements.ledger.node.joules' "$one")
	n2=$(jq '.measurements.ledger.node.joules' "$two")
	c1=$(jq '.measurements.ledger.node.covered_s' "$one")
	c2=$(jq '.measurements.ledger.node.covered_s' "$two")
	p1=$(jq '.measurements.ledger.package.joules' "$one")
	echo "# node part: 1 core ${n1} J over ${c1} s, 2 cores ${n2} J over ${c2} s" >&3
	# 300 W at the BMC, package and DRAM (fake-rapl) well under it: a
	# residual of the order of 250 W, half of it per core of the 2-core
	# node, and the job on both cores pays twice the rate.
	check "$n1 > 0 && $n2 > 0"
	check "$n1 / $c1 >= 0.25 * 250 / 2 && $n1 / $c1 <= 300 / 2"
	check "$n2 / $c2 >= 1.8 * $n1 / $c1 && $n2 / $c2 <= 2.2 * $n1 / $c1"
	check "$p1 > 0"
	# The summary shows the node part ("other") and the total holds it.
	expect_summary "$ONE_ID" 'other'
	# Let the agent tick past the last job's split, then balance.
	sleep 1
	st=$(agent_status)
	for d in package dram node; do
		delta=$(echo "$st" | jq ".energy.$d.delta_j")
		sys=$(echo "$st" | jq ".energy.$d.system_j")
		idle=$(echo "$st" | jq ".energy.$d.idle_j")
		jobs=$(jq -s "map(.measurements.ledger.$d.joules) | add" "$one" "$two")
		echo "# $d: delta $delta = jobs $jobs + system $sys + idle $idle" >&3
		check "$delta > 0"
		check "($jobs + $sys + $idle - $delta) / $delta < 0.01 && ($jobs + $sys + $idle - $delta) / $delta > -0.01"
	done
	idle=$(echo "$st" | jq '.energy.node.idle_j')
	check "$idle > 0"
}

@test "ceems-sacct shows the job's node energy as its own part, in the total" {
	r=$(ls "$CEEMS_DIR"/spool/*.json | head -n 1)
	id=$(jq -r .job.jobid "$r")
	run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" \
		-S today -X -P -n -o JobID,EnergyOther,ConsumedEnergyRaw
	echo "$output"
	[ "$status" -eq 0 ]
	line=$(awk -F'|' -v id="$id" '$1 == id' <<<"$output")
	other=$(cut -d'|' -f2 <<<"$line")
	total=$(cut -d'|' -f3 <<<"$line")
	want=$(jq '[.measurements.ledger[] | objects | .joules // 0] | add' "$r")
	echo "# job $id: EnergyOther '$other', ConsumedEnergyRaw '$total' (record: $want J)" >&3
	[ -n "$other" ] && [ -n "$total" ]
	check "$total >= $want - 1 && $total <= $want + 1"
}
