#!/usr/bin/env bats
# hostile.bats - another local user attacking the node agent's socket does
# not keep jobs from being measured, on the real local Slurm cluster with
# the SPANK plugin and the agent it supervises.  The attacker
# (lib/hostile-client.py, run as nobody) holds every connection it can,
# sends `status' on each every 0.3 s, keeps some alive a byte a second and
# floods the listen queue, while jobs start and end: each job must get its
# summary and its record with its figures, the attacker must have been
# answered and refused (the load was real), and the agent must name the
# attacker's uid in its log, once per window rather than per connection.
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`) and /usr/bin/python3.

load lib/ceems-cluster

setup_file() {
	ceems_cluster_setup hostile summary=full
}

teardown_file() {
	if [ -n "${CEEMS_DIR:-}" ] && [ -r "$CEEMS_DIR/hostile.pid" ]; then
		kill "$(cat "$CEEMS_DIR/hostile.pid")" 2>/dev/null
	fi
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 for the attacking client"
}

@test "a user holding every connection it can and spamming status keeps no job from being measured" {
	local ids=() id r i stats held window_lines
	# The attacker runs as nobody from a copy it can read.
	cp "$BATS_TEST_DIRNAME/lib/hostile-client.py" "$CEEMS_DIR/hostile-client.py"
	chmod 755 "$CEEMS_DIR/hostile-client.py"
	runuser -u nobody -- /usr/bin/python3 "$CEEMS_DIR/hostile-client.py" \
		"$CEEMS_DIR/agent.sock" 35 >"$CEEMS_DIR/hostile.json" 2>"$CEEMS_DIR/hostile.err" &
	echo $! >"$CEEMS_DIR/hostile.pid"
	sleep 2
	# Jobs start and end all along the attack: batch jobs with a step
	# each, two at a time on this 2-core node.
	for i in 1 2 3 4 5 6; do
		ids+=("$(submit nobody -J "hostile$i" -c1 --wrap 'srun -n1 sleep 1; sleep 2')")
	done
	for id in "${ids[@]}"; do
		[ "$(finish "$id")" = COMPLETED ]
	done
	wait "$(cat "$CEEMS_DIR/hostile.pid")" || true
	stats=$(cat "$CEEMS_DIR/hostile.json")
	echo "# attacker: $stats" >&3
	for id in "${ids[@]}"; do
		if out_of "$id" | grep -q "was not measured"; then
			out_of "$id" >&2
			false
		fi
		expect_summary "$id" "^ceems - job $id \\(nobody[,)] COMPLETED in "
		r=$(record_of "$id")
		jq -e '.measurements.ledger.package.joules > 0 and .measurements.cpu_s != null and
			([.measurements.steps[].id] | sort == ["0", "batch", "extern"])' "$r" >/dev/null ||
			{ cat "$r" >&2; false; }
	done
	# The attack was real: the agent answered it, refused it and dropped
	# its connections; it held more than its own share at some point
	# (connections waiting in the queue count on its side).
	echo "$stats" | jq -e '.ok_replies > 0 and (.busy_replies + .dropped_by_agent) > 0' >/dev/null
	held=$(echo "$stats" | jq .most_held)
	[ "$held" -gt 8 ]
	# The attacker's uid is named, once per window, not per connection.
	grep -q "refused [0-9]* connections of uid 65534 in the last" "$CEEMS_DIR/agent.log" ||
		{ tail -n 30 "$CEEMS_DIR/agent.log" >&2; false; }
	window_lines=$(grep -c "connections of uid 65534" "$CEEMS_DIR/agent.log")
	echo "# agent log: $window_lines lines naming uid 65534" >&3
	[ "$window_lines" -le 5 ]
	! grep -q "connections of root" "$CEEMS_DIR/agent.log"
	# And the agent is still there for everyone.
	agent_status | jq -e .ok >/dev/null
}
