#!/bin/bash
# run-gather.sh - what the whole-job summary of a multi-node job costs
# (doc/performance.md, "The whole-job summary"), on the local test
# cluster with 4 nodes (tests/integration/lib/ceems-cluster.bash,
# CEEMS_TEST_NODES=4), under the machine's cluster lock:
#
#   1. BENCH_JOBS (20) 4-node jobs, one after the other: the time from the
#      batch script's end (its last command writes the time) to the
#      summary's last line in the job's output file (the file's mtime),
#      min / median / p99 / max;
#   2. BENCH_SILENT_JOBS (5) more with one node's agent stopped (SIGSTOP):
#      the same latency, which the gather's wait (gather_timeout, 1 s)
#      bounds;
#   3. tests/bench/bench_gather with BENCH_NODES (64) simulated agents,
#      BENCH_ROUNDS (20) gathers, with the cluster's munged: the gather's
#      wall time, the batch node's CPU and munged's.
#
# usage: run-gather.sh BENCH_GATHER   (root; make bench-gather)
set -eu

bench=$1
src=$(cd "$(dirname "$0")/../.." && pwd)
export CEEMS_TOP_SRCDIR=$src
export CEEMS_TOP_BUILDDIR=${CEEMS_TOP_BUILDDIR:?run through make bench-gather}
export CEEMS_SPANK_PLUGIN=$CEEMS_TOP_BUILDDIR/plugins/.libs/spank_ceems.so
export CEEMS_TEST_NODES=4
JOBS=${BENCH_JOBS:-20}
SILENT=${BENCH_SILENT_JOBS:-5}

# shellcheck source=tests/integration/lib/ceems-cluster.bash
. "$src/tests/integration/lib/ceems-cluster.bash"
load_lib

die() { echo "run-gather.sh: $*" >&2; exit 1; }

# Seconds from job ID's batch script end to its summary's last line.
latency() {
	local id=$1 out end
	out=$SLURM_DIR/out/job-$id.out
	end=$(cat "$SLURM_DIR/out/end-$id")
	awk -v a="$(stat -c %.9Y "$out")" -v b="$end" 'BEGIN { printf "%.3f\n", a - b }'
}

# N 4-node jobs, one after the other: their latencies, one per line.
run_jobs() {
	local n=$1 id i
	for i in $(seq 1 "$n"); do
		id=$(submit nobody -J gather-bench -N4 --ntasks-per-node=1 -c1 \
			--wrap 'srun true; date +%s.%N >"'"$SLURM_DIR"'/out/end-$SLURM_JOB_ID"')
		[ "$(finish "$id")" = COMPLETED ] || die "job $id did not complete"
		grep -q '^Nodes ' "$SLURM_DIR/out/job-$id.out" ||
			die "job $id has no whole-job summary"
		latency "$id"
	done
}

# min median p99 max of the numbers on stdin.
stats() {
	sort -n | awk '{ v[NR] = $1 } END {
		p = int(0.99 * NR + 0.999); if (p < 1) p = 1
		printf "min %.3f s, median %.3f s, p99 %.3f s, max %.3f s (%d jobs)\n",
			v[1], v[int((NR + 1) / 2)], v[p], v[NR], NR }'
}

exec 9>/tmp/ceems-cluster.lock
flock 9
trap 'ceems_cluster_teardown' EXIT
ceems_cluster_setup benchgather summary=full || die "the cluster did not start"

echo "== the summary after the batch script, 4-node jobs, every node answering"
run_jobs "$JOBS" | stats
pid=$(agent_status n4 | jq -r .pid)
kill -STOP "$pid"
echo "== the same with n4's agent stopped (the gather waits gather_timeout)"
run_jobs "$SILENT" | stats
kill -CONT "$pid"

echo "== the gather of ${BENCH_NODES:-64} simulated agents"
dir=$(mktemp -d)
"$bench" "$SLURM_DIR/munge/munge.sock" "$dir" \
	"$(cat "$SLURM_DIR/munge/munged.pid")" "${BENCH_NODES:-64}" "${BENCH_ROUNDS:-20}"
rm -rf "$dir"
