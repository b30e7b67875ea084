#!/usr/bin/env bats
# jobs.bats - a job's life end to end on the real local Slurm
# cluster: the SPANK plugin (job side and slurmd side) with the node agent
# it supervises, reading a simulated RAPL tree (tests/doubles/fake-rapl:
# this machine has no RAPL) whose power follows the machine's real CPU
# activity.  Every job of the issue's list runs; each gets its summary,
# its record and energies that balance with the agent's node totals.
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	ceems_cluster_setup jobs summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

@test "the slurmd-side plugin started the node agent on the simulated RAPL node" {
	run agent_status
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '.ok and .energy.package != null' >/dev/null
}

@test "the whole job list runs; each job's summary names it, its user, state and exit code" {
	# Long ones first: the node has 2 cores, the rest queue behind.
	TIMEOUT_ID=$(submit nobody -J timeout -c1 --time=1 --wrap 'sleep 300')
	SLEEPER_ID=$(submit nobody -J sleeper -c2 --wrap 'sleep 12')
	MEM_ID=$(submit nobody -J memory -c1 --mem=1G --wrap 'python3 -c "b = bytearray(500 * 1024 * 1024); import time; time.sleep(3)"')
	STEPS_ID=$(submit nobody -J steps -c1 --wrap 'srun -n1 sleep 1; srun -n1 sh -c "end=\$((\$(date +%s)+2)); while [ \$(date +%s) -lt \$end ]; do :; done"')
	EXIT_ID=$(submit nobody -J exit3 -c1 --wrap 'exit 3')
	CANCEL_ID=$(submit nobody -J cancelme -c1 --wrap 'sleep 120')
	NAME_ID=$(submit root -J 'my "odd" job name' -c1 --wrap 'true')
	# The burner runs once the other short jobs are done, so that no job
	# of this test competes with it for CPU on this small node: its
	# efficiency is then its own.  --wrap runs /bin/sh: it is a bash
	# script of its own.
	# It writes down what it measured of itself (its wall span and the
	# CPU time the kernel charged to it): the test's reference for the
	# record's figures, which then do not depend on how busy the CI
	# machine is.  The loop is all builtins: no child to account for.
	cat >"$SLURM_DIR/out/burner.sh" <<-'EOF'
		#!/bin/bash
		t0=$(date +%s.%N)
		end=$((SECONDS + 20))
		while [ $SECONDS -lt $end ]; do :; done
		read -r -a st </proc/$$/stat
		printf '%s %s %s %s\n' "$t0" "$(date +%s.%N)" \
			"$((st[13] + st[14]))" "$(getconf CLK_TCK)" >burner.self
	EOF
	chmod 755 "$SLURM_DIR/out/burner.sh"
	BURNER_ID=$(submit nobody -J burner -c1 \
		--dependency="afterany:$SLEEPER_ID:$MEM_ID:$STEPS_ID:$EXIT_ID:$CANCEL_ID:$NAME_ID" \
		"$SLURM_DIR/out/burner.sh")
	printf '%s\n' "$TIMEOUT_ID $BURNER_ID $SLEEPER_ID $MEM_ID $STEPS_ID $EXIT_ID $CANCEL_ID $NAME_ID" >"$CEEMS_DIR/ids"

	for _ in $(seq 1 240); do
		[ "$(squeue -h -j "$CANCEL_ID" -o %T)" = RUNNING ] && break
		sleep 1
	done
	sleep 2
	scancel "$CANCEL_ID"

	[ "$(finish "$BURNER_ID")" = COMPLETED ]
	[ "$(finish "$SLEEPER_ID")" = COMPLETED ]
	[ "$(finish "$MEM_ID")" = COMPLETED ]
	[ "$(finish "$STEPS_ID")" = COMPLETED ]
	[ "$(finish "$EXIT_ID")" = FAILED ]
	[ "$(finish "$CANCEL_ID")" = CANCELLED ]
	[ "$(finish "$NAME_ID")" = COMPLETED ]
	[ "$(finish "$TIMEOUT_ID")" = TIMEOUT ]

	expect_summary "$BURNER_ID" "^ceems - job $BURNER_ID \\(nobody[,)] COMPLETED in "
	expect_summary "$SLEEPER_ID" "^ceems - job $SLEEPER_ID \\(nobody[,)] COMPLETED in "
	expect_summary "$EXIT_ID" "^ceems - job $EXIT_ID \\(nobody[,)] FAILED \\(exit 3\\) in "
	expect_summary "$CANCEL_ID" "^ceems - job $CANCEL_ID \\(nobody[,)] CANCELLED"
	expect_summary "$TIMEOUT_ID" "^ceems - job $TIMEOUT_ID \\(nobody[,)] TIMEOUT"
	expect_summary "$NAME_ID" "^ceems - job $NAME_ID \\(root[,)] COMPLETED"
	expect_summary "$STEPS_ID" "^ceems - job $STEPS_ID \\(nobody[,)] COMPLETED"
	# Every summary line fits 80 columns and is plain ASCII.
	for id in $(cat "$CEEMS_DIR/ids"); do
		! out_of "$id" | grep '^ceems\|^CPU\|^Memory\|^Energy\|^Carbon\|^Note' | awk 'length > 80 { exit 1 }' || true
		run bash -c "grep -P '[^\\x00-\\x7f]' '$SLURM_DIR/out/job-$id.out'"
		[ "$status" -ne 0 ]
	done
}

@test "CPU efficiency: about 100% for the burner, about 0% for the sleeper" {
	read -r _ BURNER_ID SLEEPER_ID _ <"$CEEMS_DIR/ids"
	b=$(record_of "$BURNER_ID")
	s=$(record_of "$SLEEPER_ID")
	eb=$(jq '.measurements.cpu_s / (.measurements.elapsed_s * .measurements.alloc_cores)' "$b")
	es=$(jq '.measurements.cpu_s / (.measurements.elapsed_s * .measurements.alloc_cores)' "$s")
	cpu=$(jq '.measurements.cpu_s' "$b")
	elapsed=$(jq '.measurements.elapsed_s' "$b")
	read -r t0 t1 ticks hz <"$SLURM_DIR/out/burner.self"
	echo "# burner efficiency $eb ($cpu s CPU over $elapsed s); it measured" \
		"$ticks/$hz s CPU over $t0..$t1; sleeper $es" >&3
	# The job's CPU time is the burner's own (which /proc rounds down to
	# the clock tick), all of it: the last of it is read when the batch
	# step ends, since Slurm removes the job's cgroup before the job's
	# end reaches the agent.  Its elapsed time spans the burner's and
	# adds no more than the job's start and end.  On a quiet node that
	# is an efficiency of about 98%; on a loaded one the burner gets
	# less of its core, and its efficiency is what it measured of
	# itself over the job's longer span.
	check "$cpu >= $ticks / $hz - 0.05 && $cpu <= $ticks / $hz + 0.5"
	check "$elapsed >= $t1 - $t0 && $elapsed <= $t1 - $t0 + 5"
	check "$eb >= ($ticks / $hz - 0.05) / ($t1 - $t0 + 5) && $eb <= 1.02"
	check "$eb > $es + 0.1"
	check "$es <= 0.05"
	# The summary shows the record's efficiency.
	pct=$(out_of "$BURNER_ID" | sed -nE 's/.*efficiency +([0-9]+)%.*/\1/p' | head -n1)
	check "$pct >= $eb * 100 - 1 && $pct <= $eb * 100 + 1"
}

@test "the memory job's peak is at least 500 MiB" {
	read -r _ _ _ MEM_ID _ <"$CEEMS_DIR/ids"
	r=$(record_of "$MEM_ID")
	peak=$(jq '.measurements.usage.mem_peak_bytes' "$r")
	echo "# memory peak $peak bytes" >&3
	check "$peak >= 500 * 1048576"
}

@test "energies are present and the sleeper pays the idle power of the cores it held" {
	read -r _ _ SLEEPER_ID _ <"$CEEMS_DIR/ids"
	r=$(record_of "$SLEEPER_ID")
	jq -e '.measurements.ledger.package.joules > 0 and .measurements.ledger.dram.joules > 0' "$r" >/dev/null
	# It held both of the node's cores: all of P_idle while it ran.
	static=$(jq '.measurements.ledger.package.static_j' "$r")
	covered=$(jq '.measurements.ledger.package.covered_s' "$r")
	echo "# sleeper static package energy $static J over $covered s" >&3
	check "$static >= 0.97 * $P_IDLE * $covered && $static <= 1.03 * $P_IDLE * $covered"
	jq -e '.measurements.ledger.emissions.grams > 0 and .measurements.ledger.emissions.factor.zone == "FR"' "$r" >/dev/null
	# Its energy's error bound, each domain's in its four parts, and the
	# summary's +/- (the idle power configured: the counters' alone).
	jq -e '[.measurements.ledger.package, .measurements.ledger.dram] |
		all(.err_j >= 0 and (.err | keys) == ["gaps", "idle_power", "lag", "source"])' "$r" >/dev/null
	expect_summary "$SLEEPER_ID" '^Energy +[0-9.]+ [kMW]?[Jh]+ \+/- '
}

@test "per-step figures: batch, extern and both srun steps, never more than the job" {
	read -r _ _ _ _ STEPS_ID _ <"$CEEMS_DIR/ids"
	r=$(record_of "$STEPS_ID")
	jq -r '.measurements.steps[].id' "$r" | sort | tr '\n' ' ' | grep -q '^0 1 batch extern $'
	job=$(jq '.measurements.ledger.package.joules' "$r")
	steps=$(jq '[.measurements.steps[].joules.package] | add' "$r")
	echo "# job $job J, steps $steps J" >&3
	check "$steps <= $job * 1.000001"
	# The busy srun step used more CPU than the sleeping one.
	jq -e '([.measurements.steps[] | select(.id == "1") | .cpu_s][0]) > ([.measurements.steps[] | select(.id == "0") | .cpu_s][0])' "$r" >/dev/null
}

@test "the job name with spaces and quotes is kept exactly in the record" {
	read -r _ _ _ _ _ _ _ NAME_ID <"$CEEMS_DIR/ids"
	r=$(record_of "$NAME_ID")
	[ "$(jq -r .job.name "$r")" = 'my "odd" job name' ]
}

@test "the record of the job that exits with 3 has slurmctld's exit code, 3" {
	read -r _ _ _ _ _ EXIT_ID _ <"$CEEMS_DIR/ids"
	r=$(record_of "$EXIT_ID")
	jq -c .job "$r" >&3
	[ "$(jq -r .job.exit_code "$r")" = 3 ]
	[ "$(jq -r '.job.exit_signal // "none"' "$r")" = none ]
	[ "$(jq -r .job.state "$r")" = FAILED ]
}

@test "cluster, account, partition and QOS never come from the job's environment" {
	# The user sets these in the job's environment (sbatch's, which it
	# passes on); without an account of its own (no -A), the batch
	# step's environment keeps the forged one.  The summary (batch step)
	# and the record (extern step) must show slurmctld's values, or none.
	# (Not --export=ALL,VAR=...: that also has slurmd read the user's
	# login environment, which nobody, whose shell is nologin, has not;
	# Slurm 26.05 then requeues the job held.)
	id=$(SLURM_JOB_ACCOUNT=forged SLURM_JOB_PARTITION=forged SLURM_JOB_QOS=forged \
		SLURM_CLUSTER_NAME=forged submit nobody -J forger -c1 \
		--wrap 'echo "account in the job: ${SLURM_JOB_ACCOUNT:-}"; export SLURM_JOB_ACCOUNT=forged SLURM_CLUSTER_NAME=forged; srun -n1 true')
	[ "$(finish "$id")" = COMPLETED ]
	expect_summary "$id" "^ceems - job $id \\(nobody[,)] COMPLETED"
	# the forgery reached the job
	out_of "$id" | grep -qx 'account in the job: forged'
	r=$(record_of "$id")
	jq -c .job "$r" >&3
	! out_of "$id" | grep '^ceems' | grep -q forged
	[ "$(jq -r .job.cluster "$r")" = ceemstest ]
	[ "$(jq -r .job.partition "$r")" = debug ]
	[ "$(jq -r '.job.account // ""' "$r")" != forged ]
	[ "$(jq -r '.job.qos // ""' "$r")" != forged ]
}

@test "ceems-sacct -S today lists the jobs with their states and values; its -P output parses back" {
	read -r TIMEOUT_ID BURNER_ID SLEEPER_ID MEM_ID STEPS_ID EXIT_ID CANCEL_ID NAME_ID <"$CEEMS_DIR/ids"
	sacct_bin=$CEEMS_TOP_BUILDDIR/tools/ceems-sacct
	# The table: every job of the list, root seeing every user's.
	run "$sacct_bin" -c "$CEEMS_DIR/ceems.conf" -S today
	echo "$output"
	[ "$status" -eq 0 ]
	for id in $(cat "$CEEMS_DIR/ids"); do
		grep -q "^$id " <<<"$output"
	done
	grep -q "^$STEPS_ID.batch " <<<"$output"
	# -P parses back: one line per job, every line 9 fields.
	fields=JobID,JobName,User,State,ExitCode,CPUEff,ConsumedEnergyRaw,MaxRSS,Quality
	run "$sacct_bin" -c "$CEEMS_DIR/ceems.conf" -S today -X -P -n -o "$fields"
	[ "$status" -eq 0 ]
	echo "$output" | awk -F'|' 'NF != 9 { print "bad line: " $0; exit 1 }'
	state_of() { awk -F'|' -v id="$1" '$1 == id { print $4 }' <<<"$output"; }
	field_of() { awk -F'|' -v id="$1" -v f="$2" '$1 == id { print $f }' <<<"$output"; }
	[ "$(state_of "$BURNER_ID")" = COMPLETED ]
	[ "$(state_of "$SLEEPER_ID")" = COMPLETED ]
	[ "$(state_of "$EXIT_ID")" = FAILED ]
	# ExitCode is the record's exit status and signal, code:signal.
	r=$(record_of "$EXIT_ID")
	want=$(jq -r '"\(.job.exit_code // "")\(if .job.exit_code then ":\(.job.exit_signal // 0)" else "" end)"' "$r")
	echo "# exit3's ExitCode $(field_of "$EXIT_ID" 5), record $want" >&3
	[ "$(field_of "$EXIT_ID" 5)" = "$want" ]
	[ "$(state_of "$CANCEL_ID")" = CANCELLED ]
	[ "$(state_of "$TIMEOUT_ID")" = TIMEOUT ]
	[ "$(field_of "$NAME_ID" 2)" = 'my "odd" job name' ]
	[ "$(field_of "$NAME_ID" 3)" = root ]
	[ "$(field_of "$BURNER_ID" 3)" = nobody ]
	# The values are the records': energy in joules, memory in K.
	for id in "$BURNER_ID" "$SLEEPER_ID" "$MEM_ID"; do
		r=$(record_of "$id")
		want=$(jq '[.measurements.ledger[] | objects | .joules // empty] | add' "$r")
		got=$(field_of "$id" 7)
		echo "# job $id: ConsumedEnergyRaw $got, record $want J" >&3
		check "$got - $want <= 1 && $want - $got <= 1"
	done
	# CPUEff is sacct's: the record's CPU time over Slurm's elapsed
	# time (whole seconds) and CPUs.  How high it is, test 3 says.
	eff=$(field_of "$BURNER_ID" 6)
	want=$(jq '.measurements.cpu_s / ((.job.end_time - .job.start_time) * .job.alloc_cpus) * 100' \
		"$(record_of "$BURNER_ID")")
	echo "# burner CPUEff $eff, from the record $want" >&3
	check "${eff%\%} >= $want - 1 && ${eff%\%} <= $want + 1 && $want > 0"
	# MaxRSS is on the step lines, as in sacct (the job line's is
	# empty); --noconvert gives bytes.
	[ -z "$(field_of "$MEM_ID" 8)" ]
	rss=$("$sacct_bin" -c "$CEEMS_DIR/ceems.conf" -j "$MEM_ID.batch" -P -n -o MaxRSS --noconvert)
	echo "# memory job's batch step MaxRSS $rss bytes" >&3
	check "${rss:-0} >= 500 * 1024 * 1024"
	# The steps job lists its steps without -X.
	run "$sacct_bin" -c "$CEEMS_DIR/ceems.conf" -j "$STEPS_ID" -P -n -o JobID
	[ "$(LC_ALL=C sort <<<"$output" | tr '\n' ' ')" = "$STEPS_ID $STEPS_ID.0 $STEPS_ID.1 $STEPS_ID.batch $STEPS_ID.extern " ]
}

@test "the ledger balances: jobs + system + idle = what the node's counters moved" {
	run agent_status
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .jobs)" -eq 0 ]
	for d in package dram; do
		delta=$(echo "$output" | jq ".energy.$d.delta_j")
		sys=$(echo "$output" | jq ".energy.$d.system_j")
		idle=$(echo "$output" | jq ".energy.$d.idle_j")
		jobs=$(jq -s "[.[].measurements.ledger.$d.joules // 0] | add" "$CEEMS_DIR"/spool/*.json)
		echo "# $d: delta $delta = jobs $jobs + system $sys + idle $idle" >&3
		check "($jobs + $sys + $idle - $delta)^2 <= (1e-6 * $delta)^2"
	done
}

@test "killing the node agent mid-job neither fails nor delays the job; its record shows the gap" {
	id=$(submit nobody -J gap -c1 --wrap 'sleep 10')
	for _ in $(seq 1 60); do
		[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
		sleep 0.5
	done
	sleep 3
	pid=$(agent_status | jq .pid)
	kill -9 "$pid"
	start=$(date +%s)
	[ "$(finish "$id")" = COMPLETED ]
	r=$(record_of "$id")
	jq -e '.measurements.gap_s > 0' "$r" >/dev/null
	# It says which interval is missing: inside the job's run.
	jq -e '(.measurements.gaps | length) == 1 and
	       .measurements.gaps[0].end > .measurements.gaps[0].start and
	       .measurements.gaps[0].start >= .job.start_time - 1 and
	       .measurements.gaps[0].end <= .job.end_time + 1' "$r" >/dev/null
	cov=$(jq '.measurements.ledger.package.covered_s / .measurements.ledger.lifetime_s' "$r")
	echo "# coverage after the agent was killed: $cov" >&3
	check "$cov < 1"
	elapsed=$(jq '.measurements.elapsed_s' "$r")
	check "$elapsed < 14"
}

@test "restarting slurmd mid-job does not lose the job's record" {
	id=$(submit nobody -J restart -c1 --wrap 'sleep 8')
	for _ in $(seq 1 60); do
		[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
		sleep 0.5
	done
	sleep 2
	kill "$(cat "$SLURM_DIR/run/slurmd.pid")"
	for _ in $(seq 1 50); do
		kill -0 "$(cat "$SLURM_DIR/run/slurmd.pid")" 2>/dev/null || break
		sleep 0.2
	done
	(cd / && slurmd -f "$SLURM_DIR/slurm.conf" -N localhost)
	[ "$(finish "$id")" = COMPLETED ]
	record_of "$id" >/dev/null
}

@test "a job whose end the agent was not told gets its record from the plugin's note, with its figures and Slurm's key" {
	id=$(submit nobody -J noted -c1 --wrap 'env | grep -c "^SLURM_JOB_START_TIME=" || true; sleep 6')
	for _ in $(seq 1 60); do
		[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
		sleep 0.5
	done
	# The extern step asked slurmctld at the start and told the agent.
	for _ in $(seq 1 40); do
		grep -q "job $id: Slurm's start time" "$CEEMS_DIR/agent.log" && break
		sleep 0.25
	done
	grep "job $id: Slurm's start time" "$CEEMS_DIR/agent.log" ||
		{ grep "\[$id\." "$SLURM_DIR/log/slurmd.log" | grep ceems; false; }
	# Then the plugin loses the agent: neither the extern step nor the
	# epilog reach it; they leave notes, which the agent takes.
	mv "$CEEMS_DIR/agent.sock" "$CEEMS_DIR/agent.sock.away"
	state=$(finish "$id")
	mv "$CEEMS_DIR/agent.sock.away" "$CEEMS_DIR/agent.sock"
	[ "$state" = COMPLETED ] || { echo "job $id ended $state"; false; }
	echo "# SLURM_JOB_START_TIME in the batch step's environment: $(head -n 1 "$SLURM_DIR/out/job-$id.out") (Slurm $(slurmd -V))" >&3
	r=$(record_of "$id")
	jq -e '.finalized_by == "extern" or .finalized_by == "epilog"' "$r" >/dev/null || { cat "$r"; false; }
	# Measured: the agent held the job, the note gave its end.
	jq -e '.measurements.cpu_s != null and .measurements.ledger.package.joules > 0' "$r" >/dev/null ||
		{ cat "$r"; false; }
	jq -e '[.notes[]? | select(.id == "not-measured")] | length == 0' "$r" >/dev/null ||
		{ cat "$r"; false; }
	# slurmctld's start time, the job's key.
	start=$(SLURM_TIME_FORMAT=%s scontrol show job "$id" | grep -o 'StartTime=[0-9]*' | cut -d= -f2)
	[ -n "$start" ]
	[ "$(jq .job.start_time "$r")" = "$start" ] ||
		{ echo "record start $(jq .job.start_time "$r"), Slurm's $start"; false; }
	[ "$(jq -r .job.cluster "$r")" = ceemstest ] || { cat "$r"; false; }
	grep "job $id: the node agent was not told of the job's end" "$SLURM_DIR/log/slurmd.log" >&3 ||
		{ grep "\[$id\." "$SLURM_DIR/log/slurmd.log" | grep -i ceems; grep "job $id" "$CEEMS_DIR/agent.log"; false; }
}

@test "nothing is left behind: no registration, no job state" {
	run agent_status
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq .jobs)" -eq 0 ]
	# Every job of this file has exactly one record.
	n=$(ls "$CEEMS_DIR"/spool/*.json | wc -l)
	ids=$(jq -r .job.jobid "$CEEMS_DIR"/spool/*.json | sort -u | wc -l)
	[ "$n" -eq "$ids" ]
	# Every note was taken.
	[ -z "$(ls "$CEEMS_DIR/spool/notes" 2>/dev/null)" ]
}
