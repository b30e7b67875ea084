#!/usr/bin/env bats
# jobinfo.bats - ceems-jobinfo, the process beside the node agent that asks
# slurmctld on its behalf, on the real local Slurm cluster: its
# supervisor restarts it when it dies; a job's record gets Slurm's start
# time at its start and slurmctld's final state at its end with no step
# of the job asking slurmctld (no metadata child, no job_epilog); with
# no answer from slurmctld the record is still written after
# finish_grace, once; its request folder is root's alone, and what
# another process puts there does no harm.
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	# Past MessageTimeout (10 s), which one question to a stopped
	# slurmctld waits, and its half too.
	CEEMS_CLUSTER_CONF="finish_grace = 16s" \
		ceems_cluster_setup jobinfo summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

# The running ceems-jobinfo's pid (the libtool wrapper execs the real
# program with the same arguments).
jobinfo_pid() {
	pgrep -f "ceems-jobinfo -c $CEEMS_DIR/ceems.conf" | head -n 1
}

# The agent's request folder for ceems-jobinfo.
jobinfo_dir() {
	echo "$(node_path state)/jobinfo"
}

@test "ceems-jobinfo runs beside the agent without capabilities; killed, its supervisor restarts it" {
	local pid new
	for _ in $(seq 1 40); do
		pid=$(jobinfo_pid) && [ -n "$pid" ] && break
		sleep 0.25
	done
	[ -n "$pid" ]
	# Root, with nothing it could do as root beyond its own files.
	[ "$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")" = 0 ]
	[ "$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")" = 0000000000000000 ]
	[ "$(awk '/^CapBnd:/ { print $2 }' "/proc/$pid/status")" = 0000000000000000 ]
	[ "$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$pid/status")" = 1 ]
	kill -KILL "$pid"
	for _ in $(seq 1 40); do
		new=$(jobinfo_pid) && [ -n "$new" ] && [ "$new" != "$pid" ] && break
		sleep 0.25
	done
	[ -n "$new" ] && [ "$new" != "$pid" ]
	grep "ceems-jobinfo (pid $pid) was killed by signal 9" "$CEEMS_DIR/agent.log" >&3
}

@test "the plugin has no job_epilog callback: slurmd runs no process of it after a job" {
	! nm -D --defined-only "$CEEMS_SPANK_PLUGIN" | grep -q slurm_spank_job_epilog
}

@test "a job's start time comes from slurmctld through ceems-jobinfo, not from a child of its steps" {
	local id r start
	id=$(submit nobody -J started -c1 --wrap 'sleep 2')
	[ "$(finish "$id")" = COMPLETED ]
	r=$(record_of "$id")
	grep "job $id: start time .* given to the node agent" "$CEEMS_DIR/agent.log" >&3
	start=$(SLURM_TIME_FORMAT=%s scontrol show job "$id" | grep -o 'StartTime=[0-9]*' | cut -d= -f2)
	[ "$(jq .job.start_time "$r")" = "$start" ]
	[ "$(jq -r .job.partition "$r")" = debug ]
	! grep -q "\[$id\.extern\].*start time lookup" "$SLURM_DIR/log/slurmd.log"
}

@test "a cancelled job's record says CANCELLED, which only slurmctld knows, without the epilog" {
	local id r
	id=$(submit nobody -J cancelled -c1 --wrap 'sleep 60')
	wait_running "$id"
	sleep 2
	scancel "$id"
	finish "$id" >/dev/null
	r=$(record_of "$id")
	jq -r '"# \(.job.state) exit \(.job.exit_code) by \(.finalized_by)"' "$r" >&3
	[ "$(jq -r .job.state "$r")" = CANCELLED ]
	[ "$(jq -r .finalized_by "$r")" = extern ]
	grep "job $id: slurmctld's end (CANCELLED) given to the node agent" "$CEEMS_DIR/agent.log" >&3
}

@test "a job exiting with 3: the record has slurmctld's FAILED and exit code 3" {
	local id r
	id=$(submit nobody -J three -c1 --wrap 'exit 3')
	finish "$id" >/dev/null
	r=$(record_of "$id")
	[ "$(jq -r .job.state "$r")" = FAILED ]
	[ "$(jq -r .job.exit_code "$r")" = 3 ]
	grep "job $id: slurmctld's end (FAILED) given to the node agent" "$CEEMS_DIR/agent.log" >&3
}

@test "slurmctld silent at a job's end: its record is written by finish_grace, once" {
	local id pid ctld r t0 t1
	pid=$(jobinfo_pid)
	[ -n "$pid" ]
	id=$(submit nobody -J silent -c1 --wrap 'sleep 3')
	wait_running "$id"
	# Its start answered (and kept by ceems-jobinfo).
	for _ in $(seq 1 40); do
		grep -q "job $id: start time .* given to the node agent" "$CEEMS_DIR/agent.log" && break
		sleep 0.25
	done
	# ceems-jobinfo held until slurmctld is stopped: then it asks a
	# slurmctld that does not answer.
	kill -STOP "$pid"
	finish "$id" >/dev/null
	for _ in $(seq 1 40); do
		grep -q "job $id finished on .* (extern)" "$SLURM_DIR/log/slurmd.log" && break
		sleep 0.25
	done
	t0=$(date +%s)
	ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
	kill -STOP "$ctld"
	kill -CONT "$pid"
	r=$(record_of "$id") || { kill -CONT "$ctld"; false; }
	t1=$(date +%s)
	kill -CONT "$ctld"
	echo "# record $((t1 - t0)) s after the extern step's end, slurmctld stopped" >&3
	[ "$(jq -r .finalized_by "$r")" = extern ]
	# By finish_grace (16 s, and a sweep), with the steps' state.
	check "$t1 - $t0 <= 16 + 3"
	[ "$(jq -r .job.state "$r")" = COMPLETED ]
	grep "job $id: \(slurmctld did not say how it ended\|record written\)" "$CEEMS_DIR/agent.log" >&3
	# slurmctld back: ceems-jobinfo's late word makes no second record.
	for _ in $(seq 1 60); do
		[ ! -e "$(jobinfo_dir)/end-$id" ] && break
		sleep 0.5
	done
	[ ! -e "$(jobinfo_dir)/end-$id" ]
	[ "$(grep -c "job $id: record written to the spool" "$CEEMS_DIR/agent.log")" = 1 ]
}

@test "ceems-jobinfo stopped at a job's end: the agent writes the record after finish_grace, once" {
	local id pid r
	pid=$(jobinfo_pid)
	[ -n "$pid" ]
	id=$(submit nobody -J unasked -c1 --wrap 'sleep 5')
	wait_running "$id"
	sleep 1
	kill -STOP "$pid"
	finish "$id" >/dev/null
	r=$(record_of "$id") || { kill -CONT "$pid"; false; }
	kill -CONT "$pid"
	[ "$(jq -r .finalized_by "$r")" = extern ]
	grep "job $id: record written to the spool, finalized by extern (no word from the epilog within finish_grace)" \
		"$CEEMS_DIR/agent.log" >&3
	# Its late word makes no second record.
	for _ in $(seq 1 60); do
		[ ! -e "$(jobinfo_dir)/end-$id" ] && break
		sleep 0.5
	done
	[ ! -e "$(jobinfo_dir)/end-$id" ]
	sleep 1
	[ "$(grep -c "job $id: record written to the spool" "$CEEMS_DIR/agent.log")" = 1 ]
}

@test "the request folder is root's alone; links and garbage put there are removed, harmlessly" {
	local dir
	dir=$(jobinfo_dir)
	[ -n "$dir" ]
	[ "$(stat -c '%u %a' "$dir")" = "0 700" ]
	cp -p /etc/shadow "$BATS_FILE_TMPDIR/shadow"
	# A link and a FIFO make no event of the folder's watch; the last
	# file written does, and each scan reads the whole folder.
	ln -s /etc/shadow "$dir/end-77"
	mkfifo "$dir/end-79"
	printf 'x' >"$dir/end-abc"
	printf 'x' >"$dir/start-0"
	printf '%s' '{"jobid":78,"uid":0,' >"$dir/start-78"
	for _ in $(seq 1 40); do
		[ ! -e "$dir/end-77" ] && [ ! -e "$dir/start-78" ] && [ ! -e "$dir/end-79" ] && break
		sleep 0.25
	done
	[ ! -L "$dir/end-77" ] && [ ! -e "$dir/start-78" ] && [ ! -e "$dir/end-79" ]
	# Not requests: left alone.
	[ -e "$dir/end-abc" ] && [ -e "$dir/start-0" ]
	cmp /etc/shadow "$BATS_FILE_TMPDIR/shadow"
	[ -n "$(jobinfo_pid)" ]
	rm -f "$dir/end-abc" "$dir/start-0"
}
