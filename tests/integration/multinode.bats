#!/usr/bin/env bats
# multinode.bats - several Slurm nodes on this one machine, each with its
# own slurmd (Debian's slurmd is built for multiple slurmd per host:
# slurmd -N n1) and its own ceems node agent: its own socket, state,
# spool, log and simulated RAPL tree, all from one ceems.conf whose paths
# hold %n.  One slurmctld serves them all.  A 3-node job gets a record
# from each node's agent, naming that node; a 1-node job beside it
# touches one node only.
#
# The cluster is tests/integration/lib/ceems-cluster.bash with
# CEEMS_TEST_NODES=3.  Runs as root.  Needs CEEMS_SPANK_PLUGIN,
# CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

export CEEMS_TEST_NODES=3
NODES="n1 n2 n3"

setup_file() {
	ceems_cluster_setup multinode summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

# The pid of NODE's agent, from its status.
agent_pid() {
	agent_status "$1" | jq -r .pid
}

# The node a spool record names.
record_node() {
	jq -r .job.node "$1"
}

# The record F was ended by its node's plugin (the extern step, through
# that node's agent), not by an agent on its own (an adopted or reaped
# job, which the plugin never reached).
by_plugin() {
	[ "$(jq -r .finalized_by "$1")" = extern ] || {
		echo "$1 was ended by $(jq -r .finalized_by "$1"), not its node's extern step" >&2
		return 1
	}
}

@test "three slurmd, three agents: each answers on its own socket" {
	local node pids=
	[ "$(sinfo -h -N -o %N | sort | paste -sd' ' -)" = "$NODES" ]
	for node in $NODES; do
		[ -S "$CEEMS_DIR/$node/agent.sock" ] || {
			echo "no socket for $node" >&2
			return 1
		}
		run agent_status "$node"
		[ "$status" -eq 0 ]
		echo "$output" | jq -e '.ok and .energy.package != null' >/dev/null
		pids="$pids $(agent_pid "$node")"
		# The agent was told its node by the slurmd that started it.
		grep -q -- "--node $node" "$SLURM_DIR/log/slurmd-$node.log"
	done
	# Three agents, not one answering thrice.
	[ "$(echo "$pids" | tr ' ' '\n' | grep -c .)" = 3 ]
	[ "$(echo "$pids" | tr ' ' '\n' | grep . | sort -u | wc -l)" = 3 ]
}

@test "a 3-node job: each node's agent records its part, naming its node" {
	local id node f
	id=$(submit nobody -J three -N3 --ntasks-per-node=1 -c1 \
		--wrap 'srun sh -c "end=\$((\$(date +%s)+3)); while [ \$(date +%s) -lt \$end ]; do :; done"')
	# A 1-node job beside it, on the node's free core (the next test
	# checks where it went).
	wait_running "$id"
	submit nobody -J one -N1 -c1 --wrap 'sleep 2' >"$BATS_FILE_TMPDIR/one"
	[ "$(finish "$id")" = COMPLETED ]
	for node in $NODES; do
		f=$(record_of "$id" "$node")
		[ "$(record_node "$f")" = "$node" ] || {
			echo "job $id's record in $node's spool names node $(record_node "$f")" >&2
			return 1
		}
		by_plugin "$f"
		jq -e '.measurements.ledger.package.joules > 0' "$f" >/dev/null || {
			echo "job $id's record on $node has no package energy:" >&2
			jq . "$f" >&2
			return 1
		}
	done
	# Each agent learned Slurm's cgroup root of its own node only
	# ("v1 /slurm_n1", "v2 /system.slice/n1_slurmstepd.scope"), where
	# it looks for jobs to adopt after a restart.
	for node in $NODES; do
		f=$CEEMS_DIR/$node/state/slurm-cgroups
		grep -Eq "(/slurm_${node}|/${node}_slurmstepd\.scope)\$" "$f" &&
			! grep -Ev "(/slurm_${node}|/${node}_slurmstepd\.scope)\$" "$f" || {
			echo "$node's agent keeps: $(cat "$CEEMS_DIR/$node/state/slurm-cgroups")" >&2
			return 1
		}
	done
}

@test "a 1-node job beside it lands on one node's agent only" {
	local id node f where spools=0
	id=$(cat "$BATS_FILE_TMPDIR/one")
	[ "$(finish "$id")" = COMPLETED ]
	# MinJobAge=300: slurmctld still knows the finished job.
	where=$(scontrol -o show job "$id" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p')
	case $where in
		n[1-3]) ;;
		*) echo "job $id ran on '$where', not one node" >&2; return 1 ;;
	esac
	f=$(record_of "$id" "$where")
	[ "$(record_node "$f")" = "$where" ]
	by_plugin "$f"
	for node in $NODES; do
		for f in "$CEEMS_DIR/$node"/spool/*.json; do
			[ -e "$f" ] || continue
			[ "$(jq -r .job.jobid "$f")" = "$id" ] && spools=$((spools + 1))
		done
	done
	[ "$spools" = 1 ] || {
		echo "job $id (on $where) has records in $spools spools" >&2
		return 1
	}
}

@test "every part found its node: no path of another name, no error in the slurmd logs" {
	local entries
	# A part that fell back to the host's name would have made
	# CEEMS_DIR/HOST (its spool, its notes).
	entries=$(cd "$CEEMS_DIR" && ls -d -- */ | tr -d / | sort | paste -sd' ' -)
	[ "$entries" = "$NODES" ] || {
		echo "CEEMS_DIR holds: $entries" >&2
		return 1
	}
	# The epilog (SLURMD_NODENAME) and the steps reached their agents.
	! grep -h 'ceems:.*\(not measured\|cannot\|no figures\)' "$SLURM_DIR"/log/slurmd-n*.log
}
