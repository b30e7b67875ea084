#!/usr/bin/env bats
# ends.bats - jobs that end badly, and jobs that start while the node
# agent is away, on the real local Slurm cluster (tests/integration/lib/
# ceems-cluster.bash): an OOM kill in the first half second and one
# after seconds, a time limit reached while busy, a cancel, a node
# failure, a requeue; a job started while the agent restarts (SIGTERM),
# after it was killed (SIGKILL), and during a 10 s outage.  Each gets its
# state as Slurm gives it, the figures it really reached, its note in the
# summary, and a record.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	ceems_cluster_setup ends summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

# wait_idle: until the node takes jobs again (60 s at most).
wait_idle() {
	for _ in $(seq 1 60); do
		[ "$(sinfo -h -n localhost -o %t)" = idle ] && return 0
		sleep 1
	done
	sinfo -N >&2
	return 1
}

# agent_down HOW: the agent stopped (SIGTERM or SIGKILL, its supervisor
# held so that it does not restart it), or both stopped (outage).
agent_down() {
	local how=$1 sv
	AGENT_PID=$(agent_status | jq -r .pid)
	if [ "$how" = outage ]; then
		"$(agent_bin)" -c "$CEEMS_DIR/ceems.conf" --stop
		return
	fi
	sv=$(awk '{print $1}' "$CEEMS_DIR/state/agent.pid")
	SUPERVISOR=$sv
	kill -STOP "$sv"
	kill "-$how" "$AGENT_PID"
	# Gone, or a zombie its held supervisor cannot reap yet.
	for _ in $(seq 1 100); do
		case $(sed 's/.*) //' "/proc/$AGENT_PID/stat" 2>/dev/null | cut -c1) in
		'' | Z) return 0 ;;
		esac
		sleep 0.1
	done
	kill -CONT "$SUPERVISOR"
	echo "the agent did not stop" >&2
	return 1
}

# agent_up HOW: let the supervisor restart it, or start a new one.
agent_up() {
	if [ "$1" = outage ]; then
		"$(agent_bin)" -c "$CEEMS_DIR/ceems.conf" --agent "$(agent_bin)" \
			--log "$CEEMS_DIR/agent.log" --start
	else
		kill -CONT "$SUPERVISOR"
	fi
	for _ in $(seq 1 100); do
		agent_status >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "no agent answers" >&2
	return 1
}

@test "an OOM kill in the first half second and one after seconds: OUT_OF_MEMORY, the peak at the limit, the kills counted, the note" {
	# A busy job at its time limit first: it holds one core for a
	# minute or more, the other jobs run on the other one meanwhile.
	BUSY_ID=$(submit nobody -J busy -c1 --time=1 --wrap 'while :; do :; done')
	echo "$BUSY_ID" >"$CEEMS_DIR/busy.id"
	FAST_ID=$(submit nobody -J oomfast -c1 --mem=100M \
		--wrap 'python3 -c "b = bytearray(400 * 1024 * 1024)"')
	SLOW_ID=$(submit nobody -J oomslow -c1 --mem=100M --wrap 'python3 -c "
import time
held = []
while True:
    held.append(bytearray(8 * 1024 * 1024))
    time.sleep(0.25)
"')
	[ "$(finish "$FAST_ID")" = OUT_OF_MEMORY ]
	[ "$(finish "$SLOW_ID")" = OUT_OF_MEMORY ]
	for id in $FAST_ID $SLOW_ID; do
		expect_summary "$id" "^ceems - job $id \(nobody\) OUT_OF_MEMORY"
		expect_summary "$id" "Note +The job ran out of memory: the kernel killed"
		expect_summary "$id" "100 MiB limit"
		r=$(record_of "$id")
		jq -e '.job.state == "OUT_OF_MEMORY"' "$r" >/dev/null
		jq -e '.measurements.usage.oom_kills >= 1' "$r" >/dev/null
		jq -e '[.measurements.steps[] | select(.id == "batch")][0].oom_kills >= 1' "$r" >/dev/null
		peak=$(jq '.measurements.usage.mem_peak_bytes' "$r")
		echo "# job $id: peak $peak of 104857600" >&3
		# The kernel's watermark reached the limit: within 5%.
		check "$peak >= 0.95 * 104857600 && $peak <= 1.05 * 104857600"
		jq -e '[.notes[].id] | index("oom") != null' "$r" >/dev/null
	done
	# The slow one ran for seconds, the fast one for well under one.
	elapsed=$(jq '.measurements.elapsed_s' "$(record_of "$SLOW_ID")")
	check "$elapsed > 2"
}

@test "a job cancelled two seconds in: CANCELLED, its note, no 'too short'" {
	id=$(submit nobody -J cancelme -c1 --wrap 'sleep 120')
	wait_running "$id"
	sleep 2
	scancel "$id"
	[ "$(finish "$id")" = CANCELLED ]
	expect_summary "$id" "^ceems - job $id \(nobody\) CANCELLED"
	expect_summary "$id" "Note +The job was cancelled after 00:00:0[0-9], before it finished"
	! out_of "$id" | grep -q "too short to judge"
	r=$(record_of "$id")
	jq -e '.job.state == "CANCELLED" and ([.notes[].id] | index("cancelled") != null)' "$r" >/dev/null
}

@test "a job at its time limit while busy: TIMEOUT, and the note says it was still working" {
	id=$(cat "$CEEMS_DIR/busy.id")
	[ "$(finish "$id")" = TIMEOUT ]
	expect_summary "$id" "^ceems - job $id \(nobody\) TIMEOUT"
	expect_summary "$id" "Note +The job reached its time limit of 00:01:00"
	r=$(record_of "$id")
	jq -e '.job.state == "TIMEOUT" and ([.notes[].id] | index("timeout") != null)' "$r" >/dev/null
	# Measured for a minute or more, it has a tail: busy to the end.
	jq -e '.measurements.tail.s >= 60 and .measurements.tail.s <= 120' "$r" >/dev/null
	busy=$(jq '.measurements.tail.cpu_s / .measurements.tail.s' "$r")
	echo "# the busy job's last $(jq .measurements.tail.s "$r") s: $busy cores" >&3
	check "$busy > 0.5"
	out_of "$id" | tr -s ' \n' ' ' | grep -q "It was still working when stopped" ||
		{ out_of "$id" >&2; false; }
}

@test "a node failure: NODE_FAIL in the summary and the record, its note" {
	id=$(submit nobody -J nodefail -c1 --no-requeue --wrap 'sleep 100')
	wait_running "$id"
	sleep 2
	scontrol update nodename=localhost state=down reason=ceems-test
	state=$(finish "$id")
	# Back to service (slurmd may have registered it again already).
	scontrol update nodename=localhost state=resume ||
		scontrol update nodename=localhost state=idle || true
	[ "$state" = NODE_FAIL ]
	expect_summary "$id" "^ceems - job $id \(nobody\) NODE_FAIL"
	expect_summary "$id" "Note +A node of the job failed after"
	r=$(record_of "$id")
	jq -e '.job.state == "NODE_FAIL" and ([.notes[].id] | index("node-fail") != null)' "$r" >/dev/null
}

@test "a requeued job: one record per run, the first REQUEUED, the second COMPLETED" {
	wait_idle
	id=$(submit nobody -J requeue -c1 --requeue --wrap 'sleep 6')
	wait_running "$id"
	sleep 2
	first=$(squeue -h -j "$id" -o %S)
	scontrol requeue "$id"
	# Slurm holds a requeued job back for a while: its next run now.
	for _ in $(seq 1 20); do
		[ "$(squeue -h -j "$id" -o %T)" = PENDING ] && break
		sleep 0.5
	done
	scontrol update jobid="$id" starttime=now
	[ "$(finish "$id")" = COMPLETED ]
	# The last record comes with slurmctld's word, which ceems-jobinfo
	# may give after Slurm says COMPLETED.
	for _ in $(seq 1 60); do
		n=0
		for f in "$CEEMS_DIR"/spool/*.json; do
			[ -e "$f" ] || continue
			[ "$(jq -r .job.jobid "$f")" = "$id" ] && n=$((n + 1))
		done
		[ "$n" -ge 2 ] && break
		sleep 0.5
	done
	[ "$n" -eq 2 ] || { echo "job $id: $n records" >&2; grep "job $id\b" "$CEEMS_DIR/agent.log" >&2; false; }
	runs=$(for f in "$CEEMS_DIR"/spool/*.json; do
		jq -r --arg id "$id" 'select(.job.jobid == ($id | tonumber)) |
			"\(.job.start_time) \(.job.state)"' "$f"; done | sort -n)
	echo "# job $id's runs: $(echo "$runs" | tr '\n' ';') (first started $first)" >&3
	[ "$(echo "$runs" | head -n1 | cut -d' ' -f2)" = REQUEUED ]
	[ "$(echo "$runs" | tail -n1 | cut -d' ' -f2)" = COMPLETED ]
	[ "$(echo "$runs" | head -n1 | cut -d' ' -f1)" != "$(echo "$runs" | tail -n1 | cut -d' ' -f1)" ]
}

# A job started while the agent is away (HOW), which returns after
# DOWN_S: measured from its return, the time before a gap, its summary
# printed and its coverage said.
adopted_job() {
	local how=$1 down_s=$2 id r cov gap
	# The agent learns where Slurm's jobs are from one that registers.
	if [ ! -s "$CEEMS_DIR/state/slurm-cgroups" ]; then
		[ "$(finish "$(submit nobody -J first -c1 --wrap true)")" = COMPLETED ]
	fi
	# cgroup v1: slurm_localhost; v2: system.slice/localhost_slurmstepd.scope
	grep -Eq 'slurm_localhost|localhost_slurmstepd\.scope' "$CEEMS_DIR/state/slurm-cgroups"
	agent_down "$how"
	id=$(submit nobody -J "away-$how" -c1 --wrap 'sleep 14')
	wait_running "$id"
	sleep "$down_s"
	agent_up "$how"
	[ "$(finish "$id")" = COMPLETED ]
	grep -q "job $id (uid 65534) adopted" "$CEEMS_DIR/agent.log" ||
		{ tail -n 20 "$CEEMS_DIR/agent.log" >&2; false; }
	expect_summary "$id" "^ceems - job $id \(nobody\) COMPLETED"
	# One figure, or a range when the domains cover different parts.
	out_of "$id" | tr -s ' \n' ' ' | grep -Eq "energy covers [0-9]+%( to [0-9]+%)? of the job" ||
		{ out_of "$id" >&2; false; }
	! out_of "$id" | grep -q "was not measured"
	r=$(record_of "$id")
	cov=$(jq '.measurements.ledger.package.covered_s / .measurements.ledger.lifetime_s' "$r")
	gap=$(jq '.measurements.gap_s' "$r")
	echo "# $how: job $id covered $cov of its life, gap $gap s;" \
		"by domain: $(jq -c '.measurements.ledger | with_entries(select(.value | type == "object" and has("covered_s"))) | map_values(.covered_s)' "$r")" >&3
	# Measured from the agent's return, the time before a gap.
	check "$cov > 0.1 && $cov < 0.95"
	check "$gap >= $down_s"
	jq -e '(.measurements.gaps | length) >= 1 and
	       .measurements.gaps[0].start >= .job.start_time - 2' "$r" >/dev/null
}

@test "a job started while the agent restarts (SIGTERM) is adopted on its return, coverage said" {
	adopted_job TERM 2
}

@test "a job started after the agent was killed (SIGKILL) is adopted on its return, coverage said" {
	adopted_job KILL 2
}

@test "a job started during a 10 s outage of the agent is adopted on its return, coverage said" {
	adopted_job outage 10
}
