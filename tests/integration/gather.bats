#!/usr/bin/env bats
# gather.bats - the whole-job summary of a multi-node job (doc/gather.md)
# on a 3-node cluster on this machine (CEEMS_TEST_NODES=3: three slurmd,
# three agents, one slurmctld, the cluster's own munged): the batch node
# asks the other nodes' agents over TCP, with munge credentials, for
# their part of the job; the summary covers the whole job, names a node
# that did not answer, and the agents refuse whatever is not a root
# credential of this cluster for their node.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

export CEEMS_TEST_NODES=3
NODES="n1 n2 n3"

setup_file() {
	ceems_cluster_setup gather summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

# NODE's gather port, from the cluster's gather_nodes file.
gather_port() {
	awk -v n="$1" '$1 == n { sub(/.*:/, "", $2); print $2 }' "$CEEMS_DIR/gather-nodes"
}

munge_cred() {
	munge --socket "$SLURM_DIR/munge/munge.sock" -n -s "$1"
}

send() {
	python3 "$CEEMS_TOP_SRCDIR/tests/integration/lib/gather-send.py" "$@"
}

agent_log() {
	cat "$CEEMS_DIR/$1/agent.log"
}

# The joules of the job's record on NODE, every domain.
record_joules() {
	jq '[.measurements.ledger[]? | objects | .joules // 0] | add' "$(record_of "$1" "$2")"
}

# The whole-job energy the summary of job ID printed, in joules.
summary_joules() {
	out_of "$1" | awk '/^Energy/ {
		v = $2; u = $3
		if (u == "kJ") v *= 1000; else if (u == "Wh") v *= 3600
		else if (u == "kWh") v *= 3600000
		print v; exit }'
}

@test "each node's agent listens for the gather on a port of its own" {
	local node
	for node in $NODES; do
		agent_log "$node" | grep -q "gather: listening on port $(gather_port "$node") for node $node" || {
			agent_log "$node" >&2
			return 1
		}
	done
}

@test "a 3-node job's summary covers the whole job, each node's part beside" {
	local id node sum=0 j total
	id=$(submit nobody -J whole -N3 --ntasks-per-node=1 -c1 --wrap \
		'srun sh -c "case \$SLURM_NODEID in 0) n=3;; 1) n=1;; *) n=0;; esac; end=\$((\$(date +%s)+n)); while [ \$(date +%s) -lt \$end ]; do :; done; sleep 1"')
	[ "$(finish "$id")" = COMPLETED ]
	out_of "$id"
	expect_summary "$id" '^Nodes +3 of 3 nodes measured$'
	for node in $NODES; do
		expect_summary "$id" "^Node +$node  CPU <?[0-9.]+ of 1, "
		j=$(record_joules "$id" "$node")
		sum=$(awk -v a="$sum" -v b="$j" 'BEGIN { print a + b }')
	done
	total=$(summary_joules "$id")
	echo "summary $total J, records $sum J"
	# The summary is taken at the batch script's end; the records run
	# to each node's extern step's end, a tick or two later.
	check "$total > 0.9 * $sum && $total <= 1.01 * $sum"
	# No "Scope ... only" line: the figures are the job's.
	! out_of "$id" | grep -q '^Scope'
}
