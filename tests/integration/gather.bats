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

# The package ("CPU") part of the whole-job energy the summary of job ID
# printed, in joules.
summary_package_joules() {
	out_of "$1" | awk '/^Energy/ {
		u = $3; if (!match($0, /\(CPU [0-9.]+/)) exit
		v = substr($0, RSTART + 5, RLENGTH - 5)
		if (u == "kJ") v *= 1000; else if (u == "Wh") v *= 3600
		else if (u == "kWh") v *= 3600000
		print v; exit }'
}

@test "a 3-node job's summary covers the whole job, each node's part beside" {
	local id node sum=0 truth=0 j total pkg
	# Unequal work: 8 s of CPU on the first node, 3 on the second,
	# none on the third, in a script of about 10 s.
	id=$(submit nobody -J whole -N3 --ntasks-per-node=1 -c1 --wrap \
		'srun sh -c "case \$SLURM_NODEID in 0) n=8;; 1) n=3;; *) n=0;; esac; end=\$((\$(date +%s)+n)); while [ \$(date +%s) -lt \$end ]; do :; done; sleep \$((10 - n))"')
	[ "$(finish "$id")" = COMPLETED ]
	out_of "$id"
	expect_summary "$id" '^Nodes +3 of 3 nodes measured$'
	for node in $NODES; do
		expect_summary "$id" "^Node +$node  CPU <?[0-9.]+ of 1, "
		j=$(record_joules "$id" "$node")
		sum=$(awk -v a="$sum" -v b="$j" 'BEGIN { print a + b }')
		wait_job_truth "$node" "$id"
		truth=$(awk -v a="$truth" -v b="$(node_truth "$node" "job_${id}_package_j")" 'BEGIN { print a + b }')
	done
	total=$(summary_joules "$id")
	pkg=$(summary_package_joules "$id")
	echo "# summary $total J (package $pkg J), records $sum J, package truth $truth J" >&3
	# The whole job's package energy, against the simulated truth
	# summed over the nodes: the summary is taken at the batch script's
	# end, the truth runs to each node's end of the job, a few hundred
	# ms later.
	check "$pkg > 0.97 * $truth && $pkg < 1.03 * $truth"
	# Every domain, against the nodes' records, which also run to the
	# job's end on each node.
	check "$total > 0.95 * $sum && $total <= 1.01 * $sum"
	# No "Scope ... only" line: the figures are the job's.
	! out_of "$id" | grep -q '^Scope'
}

@test "a node whose agent does not answer is named, and the others still count" {
	local id pid
	pid=$(agent_status n3 | jq -r .pid)
	kill -STOP "$pid"
	id=$(submit nobody -J missing -N3 --ntasks-per-node=1 -c1 --wrap 'srun sleep 2')
	state=$(finish "$id")
	kill -CONT "$pid"
	[ "$state" = COMPLETED ]
	expect_summary "$id" '^Nodes +2 of 3 nodes measured; no figures from n3 \(no answer in time\)'
	out_of "$id" | tr -s " \n" " " | grep -q "ceems-sacct --explain $id"
	expect_summary "$id" '^Node +n3  no figures \(no answer in time\)$'
	expect_summary "$id" '^Node +n2  CPU '
	# The held agent still writes n3's record once it runs again.
	record_of "$id" n3 >/dev/null
}

# A credential of root for NODE asking for job ID, with NONCE.
root_request() {
	munge_cred "ceems-gather 1 $1 $2 ${3:-0123456789abcdef}"
}

@test "an agent answers a root credential for its node, once, and only root can read the answer" {
	local id port cred answer payload
	id=$(submit nobody -J held -N3 --ntasks-per-node=1 -c1 --wrap 'srun sleep 30')
	wait_running "$id"
	sleep 1
	port=$(gather_port n2)
	cred=$(root_request "$id" n2 00112233aabbccdd)
	answer=$(echo "$cred" | send 127.0.0.1 "$port")
	payload=$(echo "$answer" | unmunge --socket "$SLURM_DIR/munge/munge.sock" -m /dev/null)
	echo "$payload" | head -1 | grep -qx "ceems-gather 1 $id n2 00112233aabbccdd"
	echo "$payload" | tail -n +2 | jq -e --argjson id "$id" '.ok and .report.jobid == $id' >/dev/null
	# Sealed for root: another user cannot decode it.
	run runuser -u nobody -- unmunge --socket "$SLURM_DIR/munge/munge.sock" <<<"$answer"
	[ "$status" -ne 0 ]
	echo "$output" | grep -qi unauthorized
	# The same credential again: munge has seen it.
	run send 127.0.0.1 "$port" <<<"$cred"
	[ "$status" -ne 0 ]
	agent_log n2 | grep -q 'gather: refused .*[Rr]eplayed'
	# A job the node does not hold: the agent's refusal, sealed alike.
	answer=$(root_request 999999 n2 | send 127.0.0.1 "$port")
	echo "$answer" | unmunge --socket "$SLURM_DIR/munge/munge.sock" -m /dev/null |
		tail -n +2 | jq -e '.ok == false and .code == "ENOENT"' >/dev/null
	scancel "$id"
}

@test "an agent refuses another user's credential, one for another node, and garbage" {
	local port
	port=$(gather_port n2)
	run send 127.0.0.1 "$port" < <(runuser -u nobody -- munge --socket "$SLURM_DIR/munge/munge.sock" -n -s "ceems-gather 1 1 n2 0123456789abcdef")
	[ "$status" -ne 0 ]
	agent_log n2 | grep -q 'gather: refused .*credential of uid 65534, not root'
	run send 127.0.0.1 "$port" < <(root_request 1 n3)
	[ "$status" -ne 0 ]
	agent_log n2 | grep -q 'gather: refused .*the request is for node n3, this is n2'
	run send 127.0.0.1 "$port" < <(root_request 1 n2 nothex)
	[ "$status" -ne 0 ]
	agent_log n2 | grep -q "gather: refused .*nonce"
	# Not a credential at all; a length beyond any request.
	run send 127.0.0.1 "$port" <<<"hello"
	[ "$status" -ne 0 ]
	run send --raw 127.0.0.1 "$port" < <(printf '\377\377\377\377')
	[ "$status" -ne 0 ]
	agent_log n2 | grep -q "gather: refused .*a request of 4294967295 bytes"
	# The agent still answers its own socket and the gather.
	agent_status n2 >/dev/null
}
