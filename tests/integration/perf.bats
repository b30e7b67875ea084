#!/usr/bin/env bats
# perf.bats - perf counters per job, end to end on the real local Slurm
# cluster (tests/integration/lib/ceems-cluster.bash): the node agent opens
# a job's software events in cgroup mode on the job's perf_event cgroup
# (on this cgroup v1 node, the one it makes and moves the job's processes
# into: lib/sources/perf_cgroup.h), and its counts in the job's record agree
# within 5% with what `perf stat -G` counts on the same cgroup over the
# job's life.  Hardware events asked with --ceems-perf are reported as
# not supported where the node has no PMU, never as zeros.
#
# A job that would take the node's perf descriptors past perf_max_fds
# is measured without those events, its status saying so.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`), and perf.

load lib/ceems-cluster

setup_file() {
	# The agent logs what it does with each job's perf events.  The
	# descriptor budget fits one job of one CPU with all its events
	# (4 software + 5 hardware), or two with software events only.
	CEEMS_CLUSTER_CONF="log_level = debug
perf_max_fds = 9" ceems_cluster_setup perf summary=full
}

teardown_file() {
	[ -r "${CEEMS_DIR:-/nonexistent}/perf-stat.pid" ] &&
		kill "$(cat "$CEEMS_DIR/perf-stat.pid")" 2>/dev/null
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
	command -v perf >/dev/null || skip "perf (linux-perf) is not installed"
}

# The perf_event cgroup the agent made for job ID, relative to the
# hierarchy's root (as perf stat -G takes it), once it exists.
perf_cgroup_of() {
	local id=$1 root i
	root=$(awk '$9 == "cgroup" && $NF ~ /(^|,)perf_event(,|$)/ { print $5; exit }' /proc/self/mountinfo)
	[ -n "$root" ] || root=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
	for i in $(seq 1 1000); do
		if [ -d "$root/ceems_perf/job_$id" ]; then
			echo "/ceems_perf/job_$id"
			return 0
		fi
		sleep 0.01
	done
	echo "no perf_event cgroup for job $id under $root" >&2
	grep -i perf "$CEEMS_DIR/agent.log" >&2
	return 1
}

# The value of EVENT in perf stat's CSV output FILE.
stat_value() {
	awk -F, -v ev="$2" '$3 == ev { print $1; exit }' "$1"
}

@test "a job's software perf counts agree with perf stat -G on its cgroup within 5%" {
	# Known work: 64 MiB touched a page at a time (about 16000 page
	# faults), 1000 short sleeps (as many context switches), 2 s of CPU.
	# It waits first, so that perf stat is counting before the batch
	# step starts.
	cat >"$SLURM_DIR/out/perf-work.sh" <<-'EOF'
		#!/bin/sh
		sleep 2
		python3 -c '
		import mmap, time
		m = mmap.mmap(-1, 64 << 20)
		for i in range(0, 64 << 20, 4096):
		    m[i] = 1
		for i in range(1000):
		    time.sleep(0.0005)
		t = time.process_time() + 2
		while time.process_time() < t:
		    pass
		'
	EOF
	chmod 755 "$SLURM_DIR/out/perf-work.sh"
	ID=$(submit nobody -J perfwork -c1 --ceems-perf "$SLURM_DIR/out/perf-work.sh")
	cg=$(perf_cgroup_of "$ID")
	perf stat -a -x, -o "$CEEMS_DIR/perf-stat.csv" \
		-e task-clock,context-switches,page-faults,cpu-migrations \
		-G "$cg,$cg,$cg,$cg" 2>"$CEEMS_DIR/perf-stat.err" &
	echo $! >"$CEEMS_DIR/perf-stat.pid"
	[ "$(finish "$ID")" = COMPLETED ]
	rec=$(record_of "$ID")
	kill -INT "$(cat "$CEEMS_DIR/perf-stat.pid")" ||
		{ cat "$CEEMS_DIR/perf-stat.err"; false; }
	wait "$(cat "$CEEMS_DIR/perf-stat.pid")" || true
	rm -f "$CEEMS_DIR/perf-stat.pid"
	cat "$CEEMS_DIR/perf-stat.csv"
	jq -c .measurements.perf "$rec"
	grep -i perf "$CEEMS_DIR/agent.log" || true

	[ "$(jq -r .measurements.perf.software "$rec")" = measured ]
	for ev in context-switches page-faults cpu-migrations; do
		key=$(echo "$ev" | tr - _)
		ours=$(jq -r ".measurements.perf.$key" "$rec")
		theirs=$(stat_value "$CEEMS_DIR/perf-stat.csv" "$ev")
		echo "# $ev: agent $ours, perf stat $theirs" >&3
		check "$theirs >= 0 && $ours >= 0"
		# 5%, and a few events of the moments perf stat was not yet
		# counting (the job's registration, before the batch step).
		check "($ours - $theirs) <= 0.05 * $theirs + 20 && ($theirs - $ours) <= 0.05 * $theirs + 20"
	done
	# The known work is all there.
	check "$(jq -r .measurements.perf.page_faults "$rec") >= 16384"
	check "$(jq -r .measurements.perf.context_switches "$rec") >= 1000"
	# task-clock: perf stat prints milliseconds, the record nanoseconds.
	ours=$(jq -r .measurements.perf.task_clock "$rec")
	theirs=$(stat_value "$CEEMS_DIR/perf-stat.csv" task-clock)
	echo "# task-clock: agent $ours ns, perf stat $theirs ms" >&3
	check "$ours >= 2e9"
	check "($ours / 1e6 - $theirs) <= 0.05 * $theirs + 20 && ($theirs - $ours / 1e6) <= 0.05 * $theirs + 20"
	echo "$ID" >"$CEEMS_DIR/perf-id"
}

@test "hardware events asked with --ceems-perf: not supported without a PMU, absent, never zeros" {
	ID=$(cat "$CEEMS_DIR/perf-id")
	rec=$(record_of "$ID")
	if perf stat -e cycles true 2>&1 | grep -q 'not supported'; then
		[ "$(jq -r .measurements.perf.hardware "$rec")" = "not supported" ]
		for k in cycles instructions cache_references cache_misses branch_misses; do
			[ "$(jq -r ".measurements.perf | has(\"$k\")" "$rec")" = false ]
		done
	else
		[ "$(jq -r .measurements.perf.hardware "$rec")" = measured ]
		check "$(jq -r .measurements.perf.cycles "$rec") > 0"
	fi
}

@test "without --ceems-perf a job has software events only; its perf cgroup goes with it" {
	ID=$(submit nobody -J perfsoft -c1 --wrap 'sleep 1')
	[ "$(finish "$ID")" = COMPLETED ]
	rec=$(record_of "$ID")
	[ "$(jq -r .measurements.perf.software "$rec")" = measured ]
	[ "$(jq -r .measurements.perf.hardware "$rec")" = off ]
	[ "$(jq -r '.measurements.perf | has("cycles")' "$rec")" = false ]
	# The agent removed the cgroup it made, the job's processes gone.
	for _ in $(seq 1 50); do
		compgen -G "/sys/fs/cgroup/*/ceems_perf/job_$ID" >/dev/null || break
		sleep 0.1
	done
	! compgen -G "/sys/fs/cgroup/*/ceems_perf/job_$ID" >/dev/null
}

@test "beyond the descriptor budget a job's events are not measured, and say so; a job's end gives its share back" {
	# A holds 4 descriptors (one CPU, software events); B's software
	# events fit beside them (8 of 9), its hardware ones do not.
	A=$(submit nobody -J perfA -c1 --wrap 'sleep 12')
	perf_cgroup_of "$A" >/dev/null
	B=$(submit nobody -J perfB -c1 --ceems-perf --wrap 'sleep 1')
	[ "$(finish "$B")" = COMPLETED ]
	rec=$(record_of "$B")
	jq -c .measurements.perf "$rec"
	[ "$(jq -r .measurements.perf.software "$rec")" = measured ]
	[ "$(jq -r .measurements.perf.hardware "$rec")" = "not measured: descriptor budget" ]
	[ "$(jq -r '.measurements.perf | has("cycles")' "$rec")" = false ]
	[ "$(finish "$A")" = COMPLETED ]
	record_of "$A" >/dev/null
	# A and B gone, the budget is whole again.
	C=$(submit nobody -J perfC -c1 --ceems-perf --wrap 'sleep 1')
	[ "$(finish "$C")" = COMPLETED ]
	rec=$(record_of "$C")
	[ "$(jq -r .measurements.perf.hardware "$rec")" != "not measured: descriptor budget" ]
	[ "$(jq -r .measurements.perf.software "$rec")" = measured ]
}

@test "SIGKILL and restart mid-job: perf and IO counts from before the restart are in the record, the time between said" {
	# Known work on each side of the restart: 32 MiB written and 64 MiB
	# of pages touched (about 16000 page faults) before, the same after.
	cat >"$SLURM_DIR/out/perf-restart.sh" <<-'EOF2'
		#!/bin/sh
		work() {
			dd if=/dev/zero of="big.$SLURM_JOB_ID" bs=1M count=32 conv=fsync status=none
			rm -f "big.$SLURM_JOB_ID"
			python3 -c '
		import mmap
		m = mmap.mmap(-1, 64 << 20)
		for i in range(0, 64 << 20, 4096):
		    m[i] = 1
		'
		}
		sleep 1
		work
		touch "before.$SLURM_JOB_ID"
		for i in $(seq 1 300); do
			[ -e "restarted.$SLURM_JOB_ID" ] && break
			sleep 0.1
		done
		work
	EOF2
	chmod 755 "$SLURM_DIR/out/perf-restart.sh"
	ID=$(submit nobody -J perfrestart -c1 --ceems-series "$SLURM_DIR/out/perf-restart.sh")
	for _ in $(seq 1 300); do
		[ -e "$SLURM_DIR/out/before.$ID" ] && break
		sleep 0.1
	done
	[ -e "$SLURM_DIR/out/before.$ID" ]
	# A checkpoint after the first half (the test cluster checkpoints
	# every second).
	sleep 2
	pid=$(agent_status | jq .pid)
	kill -9 "$pid"
	for _ in $(seq 1 50); do
		new=$(agent_status 2>/dev/null | jq .pid) && [ -n "$new" ] && [ "$new" != "$pid" ] && break
		sleep 0.2
	done
	[ -n "$new" ] && [ "$new" != "$pid" ]
	touch "$SLURM_DIR/out/restarted.$ID"
	[ "$(finish "$ID")" = COMPLETED ]
	rec=$(record_of "$ID")
	jq -c '.measurements | {perf, io, ebpf_absent, ebpf_unmeasured_s}' "$rec"
	grep "job $ID" "$CEEMS_DIR/agent.log" || true
	grep -q "job $ID restored from state" "$CEEMS_DIR/agent.log"
	echo "# across a restart: page faults $(jq .measurements.perf.page_faults "$rec"), written $(jq .measurements.io.write_bytes "$rec") bytes, unmeasured perf $(jq .measurements.perf.unmeasured_s "$rec") s, eBPF $(jq .measurements.ebpf_unmeasured_s "$rec") s" >&3
	[ "$(jq -r .measurements.perf.software "$rec")" = measured ]
	# Both halves' page faults: the first half's came from the checkpoint.
	check "$(jq -r .measurements.perf.page_faults "$rec") >= 2 * 16384"
	# The time the agent was down is said, not hidden.
	check "$(jq -r .measurements.perf.unmeasured_s "$rec") > 0"
	if grep -q 'eBPF loaded' "$CEEMS_DIR/agent.log"; then
		check "$(jq -r .measurements.io.write_bytes "$rec") >= 64 * 1048576"
		check "$(jq -r .measurements.ebpf_unmeasured_s "$rec") > 0"
	else
		[ "$(jq -r '.measurements | has("io")' "$rec")" = false ]
	fi
	# The series after the restart: the second half's page faults and
	# bytes written are in its rows, no more than the job's totals.
	series_sum() {
		jq -r --arg c "$1" '.series as $s | ($s.columns | index($c)) as $i |
			[$s.rows[][$i] | select(. != null)] | add // 0' "$rec"
	}
	faults=$(series_sum page_faults)
	written=$(series_sum write_bytes)
	echo "# series after the restart: page faults $faults, written $written bytes" >&3
	# Neither holds the first half's, counted before the restart.
	check "$faults >= 16384 && $faults <= $(jq -r .measurements.perf.page_faults "$rec") - 16384"
	if grep -q 'eBPF loaded' "$CEEMS_DIR/agent.log"; then
		check "$written >= 32 * 1048576 && $written <= $(jq -r .measurements.io.write_bytes "$rec") - 32 * 1048576"
	fi
}
