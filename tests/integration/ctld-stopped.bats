#!/usr/bin/env bats
# ctld-stopped.bats - a slurmctld that does not answer delays no step of
# a job by more than the plugin's deadline for it: the plugin asks
# slurmctld only in a child process it kills at the deadline
# (plugins/child_call.c).  End to end on the real local Slurm cluster
# (lib/ceems-cluster.bash), slurmctld stopped with SIGSTOP, so that its
# port accepts and never answers, as a hung slurmctld does.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	ceems_cluster_setup ctld summary=full
	echo "$CEEMS_DIR" >"$BATS_FILE_TMPDIR/ceems"
	echo "$SLURM_DIR" >"$BATS_FILE_TMPDIR/slurm"
}

teardown_file() {
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems" 2>/dev/null) || CEEMS_DIR=
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm" 2>/dev/null) || SLURM_DIR=
	# Nothing stays stopped.
	[ -z "$SLURM_DIR" ] || kill -CONT "$(cat "$SLURM_DIR/run/slurmctld.pid" 2>/dev/null)" 2>/dev/null
	ceems_cluster_teardown
	true
}

setup() {
	ceems_cluster_skip_unless_set
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems")
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm")
}

teardown() {
	[ -z "${SLURM_DIR:-}" ] || kill -CONT "$(cat "$SLURM_DIR/run/slurmctld.pid" 2>/dev/null)" 2>/dev/null
	true
}


# Milliseconds, monotonic enough for a few seconds' measure.
now_ms() { date +%s%3N; }

@test "a task killed by a signal while slurmctld is stopped: the batch step's summary comes within a second" {
	id=$(submit nobody -J ctld-kill -c1 --wrap 'sleep 300')
	wait_running "$id"
	# The batch script, the step's task (listpids asks slurmd only).
	script=
	for _ in $(seq 1 40); do
		for p in $(scontrol listpids "$id" 2>/dev/null | awk 'NR > 1 { print $1 }'); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = slurm_script ] && script=$p
		done
		[ -n "$script" ] && break
		sleep 0.25
	done
	[ -n "$script" ]
	ctld=$(cat "$SLURM_DIR/run/slurmctld.pid")
	kill -STOP "$ctld"
	t0=$(now_ms)
	kill -KILL "$script"
	# The summary is printed at the task's exit, after asking slurmctld
	# whether the job was cancelled or timed out.
	for _ in $(seq 1 120); do
		out_of "$id" | grep -q "^ceems - job $id " && break
		sleep 0.1
	done
	t1=$(now_ms)
	kill -CONT "$ctld"
	out_of "$id" | grep "^ceems - job $id " >&3
	echo "# summary $((t1 - t0)) ms after the task was killed" >&3
	[ $((t1 - t0)) -le 1500 ]
	grep "job $id: slurmctld did not say within" "$SLURM_DIR/log/slurmd.log" >&3
	scancel "$id" 2>/dev/null || true
	finish "$id" >/dev/null
}
