#!/usr/bin/env bats
# recover.bats - the node agent killed with SIGKILL in the middle of a job
# on the real local Slurm cluster, restarted by its supervisor: the
# interval it was down is recovered from the cumulative counters, and the
# job's record has no gap, whole coverage and the interval listed as
# recovered.  The simulated RAPL counters (tests/doubles/fake-rapl) get
# ranges wide enough that no wrap can go unseen while the agent is down
# (the default ones of jobs.bats wrap faster than a restart: there the
# interval stays a gap).
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	# 900 kJ and 90 kJ: hours between wraps at the model's power.
	CEEMS_FAKE_RAPL_ARGS="--package-range-uj 900000000000 --dram-range-uj 90000000000" \
		ceems_cluster_setup recover summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

@test "SIGKILL and restart mid-job: the interval is recovered, the job's coverage is whole" {
	local id pid new r cov
	id=$(submit nobody -J recover -c1 --wrap 'sleep 10')
	for _ in $(seq 1 60); do
		[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
		sleep 0.5
	done
	sleep 3
	pid=$(agent_status | jq .pid)
	kill -9 "$pid"
	for _ in $(seq 1 50); do
		new=$(agent_status 2>/dev/null | jq .pid) && [ -n "$new" ] && [ "$new" != "$pid" ] && break
		sleep 0.2
	done
	[ "$(finish "$id")" = COMPLETED ]
	grep -q "job $id restored from state: the .* s the agent was down are recovered" "$CEEMS_DIR/agent.log" || {
		grep "job $id\|cannot be recovered" "$CEEMS_DIR/agent.log" >&3
		false
	}
	r=$(record_of "$id")
	jq -e '.measurements.gap_s == 0 and (.measurements.gaps | not)' "$r" >/dev/null
	jq -e '.measurements.recovered_s > 0.5 and (.measurements.recovered | length) == 1 and
	       .measurements.recovered[0].start >= .job.start_time - 1 and
	       .measurements.recovered[0].end <= .job.end_time + 1' "$r" >/dev/null
	cov=$(jq '.measurements.ledger.package.covered_s / .measurements.ledger.lifetime_s' "$r")
	echo "# package coverage after the agent was killed: $cov, recovered $(jq .measurements.recovered_s "$r") s" >&3
	check "$cov == 1"
	jq -e '.measurements.ledger.package.coverage == 1 and .measurements.ledger.dram.coverage == 1' "$r" >/dev/null
}
