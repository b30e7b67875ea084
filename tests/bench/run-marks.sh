#!/bin/sh
# run-marks.sh - what a job marking its work costs the node agent: the
# built agent on the RAPL fixture tree (fixture-agent.sh: real /proc and
# cgroups, a tick every second), one job registered in a real cgroup of
# its own, and inside it bench_marks, for a window each:
#   idle     the job registered, no mark
#   library  100,000 ceems_mark_add calls a second (libceems_mark)
#   raw      raw mark requests back to back, one connection each (a
#            program that skips the library)
# For each: the agent's CPU time (its /proc/PID/schedstat), ms a second;
# the ticks it took in the window (one a second when nothing delays
# them); the marks the agent counted for the job (its report); and
# bench_marks's own counts.
#
# Usage: run-marks.sh path/to/bench_marks path/to/ceems-agent
# Environment: BENCH_MARKS_WINDOW (seconds, default 20), CEEMS_FIXTURES.
# Runs as root (a cgroup of its own in the cpuacct hierarchy, mounted
# apart at /sys/fs/cgroup/cpuacct as on the test machines).
set -eu

bench=$1
agent=$2
window=${BENCH_MARKS_WINDOW:-20}
: "${CEEMS_FIXTURES:=$(cd "$(dirname "$0")/../fixtures" && pwd)}"
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/fixture-agent.sh
. "$(dirname "$0")/fixture-agent.sh"

[ "$(id -u)" = 0 ] || { echo "run-marks.sh: run as root" >&2; exit 1; }
jobid=9100001
cg=/sys/fs/cgroup/cpuacct/ceems_bench_marks/job_$jobid
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-marks-XXXXXX")
agent_pid=
cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	rmdir "$cg" "$(dirname "$cg")" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

call() {
	"$agent" --socket "$tmp/agent.sock" --call "$1"
}

cpu_ns() {
	awk '{ print $1 }' "/proc/$agent_pid/schedstat"
}

# work/marks the agent counted for the job so far ("0/0": none).
counted() {
	call "{\"op\":\"report\",\"jobid\":$jobid}" |
		sed -n 's/.*"work":\([0-9.e+]*\),"marks":\([0-9]*\)}.*/\1\/\2/p' |
		grep . || echo 0/0
}

ticks() {
	"$agent" --socket "$tmp/agent.sock" --status | sed -n 's/.*"ticks":\([0-9]*\).*/\1/p'
}

fixture_agent_conf "$tmp"
fixture_agent_start "$agent" "$tmp" || exit 1
mkdir -p "$cg"
call "{\"op\":\"register\",\"job\":{\"jobid\":$jobid,\"uid\":0,\"cgroup\":{\"version\":1,\"v1\":{\"cpuacct\":\"/ceems_bench_marks/job_$jobid\"}}}}" >/dev/null

echo "| run | agent CPU, ms/s | ticks in ${window} s | counted by the agent | bench_marks |"
echo "|---|---|---|---|---|"
for mode in idle library raw; do
	before_cpu=$(cpu_ns)
	before_ticks=$(ticks)
	before=$(counted)
	case $mode in
	idle) sleep "$window"; out="-" ;;
	# A shell in the job's cgroup runs it.
	library) out=$(sh -c "echo \$\$ >$cg/cgroup.procs && SLURM_JOB_ID=$jobid \
		CEEMS_AGENT_SOCKET=$tmp/agent.sock exec $bench -l -r 100000 -w $window" |
		tr '\n' ' ') ;;
	raw) out=$(sh -c "echo \$\$ >$cg/cgroup.procs && exec $bench -R -j $jobid \
		-s $tmp/agent.sock -w $window" | tr '\n' ' ') ;;
	esac
	after_cpu=$(cpu_ns)
	after_ticks=$(ticks)
	after=$(counted)
	awk -v m="$mode" -v c=$((after_cpu - before_cpu)) -v w="$window" \
	    -v t=$((after_ticks - before_ticks)) \
	    -v b="$before" -v a="$after" -v o="$out" \
	    'BEGIN { split(b, x, "/"); split(a, y, "/")
		     printf "| %s | %.2f | %d | %.0f work in %d marks | %s |\n",
			    m, c / 1e6 / w, t, y[1] - x[1], y[2] - x[2], o }'
done
