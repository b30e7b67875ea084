#!/bin/sh
# run-agent-jobs.sh - what the node agent costs as a whole process with N
# jobs registered, without Slurm: each agent given starts on a copy of the
# RAPL fixture tree (real /proc, real cgroups, eBPF and perf as the
# kernel allows, production timing: a tick every second, full readings
# every 10 s), bench_plugin -H registers N jobs in real cgroups of their
# own and holds them, and the agent's CPU time over a window is read from
# /proc/PID/schedstat (all of it: ticks, system calls, checkpoints,
# logging).  With several agents (two builds to compare), the agents take
# turns, round after round, so that they share the machine's noise.
#
# Usage: run-agent-jobs.sh path/to/bench_plugin AGENT [AGENT...]
# Environment: BENCH_AGENT_JOBS (default "0 16 128"), BENCH_AGENT_WINDOW
# (seconds, default 30), BENCH_AGENT_ROUNDS (default 3),
# BENCH_AGENT_DATABASE (a connection string: the agents run with that
# database configured, and so with their replay process; default none),
# CEEMS_FIXTURES.
# Prints one markdown row per agent and job count: the median over the
# rounds of ms CPU per second, per job-second above the idle node, of
# the pages of its own memory the agent touches in a tick, and of its
# resident memory as ps shows it at the window's end (VmRSS and its
# RssFile, the mapped files: the program and its libraries), with the
# optional libraries mapped then (libpq, libfreeipmi), and beside it the
# CPU time the machine charged a bare wake-up over the same window
# (BENCH_WAKEUP, tests/bench/bench_wakeup: a process that wakes once a
# second and does nothing), which tells two runs' machine states apart.
# Runs as root (real cgroups, eBPF).
set -eu

bench=$1
shift
jobs=${BENCH_AGENT_JOBS:-0 16 128}
window=${BENCH_AGENT_WINDOW:-30}
rounds=${BENCH_AGENT_ROUNDS:-3}
: "${CEEMS_FIXTURES:=$(cd "$(dirname "$0")/../fixtures" && pwd)}"
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/fixture-agent.sh
. "$(dirname "$0")/fixture-agent.sh"

if [ "$(id -u)" != 0 ]; then
	echo "run-agent-jobs.sh: run as root (real cgroups, eBPF)" >&2
	exit 1
fi
if [ $# -lt 1 ]; then
	echo "usage: run-agent-jobs.sh BENCH_PLUGIN AGENT [AGENT...]" >&2
	exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-agent-XXXXXX")
agent_pid=
hold_pid=
cleanup() {
	[ -n "$hold_pid" ] && kill "$hold_pid" 2>/dev/null && wait "$hold_pid" 2>/dev/null
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# The agent's CPU time so far, ns (its threads are in its schedstat).
cpu_ns() {
	awk '{ print $1 }' "/proc/$1/schedstat"
}

# measure AGENT N: one window of AGENT with N jobs held; prints ms per s.
measure() {
	agent=$1
	n=$2
	run=$tmp/run
	rm -rf "$run"
	mkdir -p "$run"
	fixture_agent_conf "$run"
	if [ -n "${BENCH_AGENT_DATABASE:-}" ]; then
		echo "database = $BENCH_AGENT_DATABASE" >>"$run/ceems.conf"
	fi
	fixture_agent_start "$agent" "$run" || exit 1
	"$bench" -c "$run/ceems.conf" -n "$n" -H $((window + 15)) \
		-j $((9000000 + n * 1000)) >"$run/hold" 2>&1 &
	hold_pid=$!
	for _ in $(seq 600); do
		grep -q '^held' "$run/hold" 2>/dev/null && break
		sleep 0.1
	done
	# Past the registrations and the first full reading.
	sleep 11
	wake_pid=
	if [ -n "${BENCH_WAKEUP:-}" ]; then
		"$BENCH_WAKEUP" "$window" >"$run/wakeup" 2>&1 &
		wake_pid=$!
	fi
	c0=$(cpu_ns "$agent_pid")
	sleep "$window"
	c1=$(cpu_ns "$agent_pid")
	wake=-
	if [ -n "$wake_pid" ]; then
		wait "$wake_pid" 2>/dev/null || true
		wake=$(awk 'NR == 1 { print $1 }' "$run/wakeup")
	fi
	# The pages of its own (heap, stack, anonymous) it touches in a
	# tick, from their referenced bits: cleared, then read a tick and a
	# half later.  On a virtual machine each costs microseconds to touch
	# again after a second (tests/bench/bench_wakeup).  A huge page
	# (the agent's tick region, lib/base/hotmem.c) counts once.
	pages=
	if echo 1 2>/dev/null >"/proc/$agent_pid/clear_refs"; then
		sleep 1.5
		pages=$(awk '/^[0-9a-f]+-[0-9a-f]+ / { own = NF == 5 || $6 ~ /^\[(heap|stack)/ }
			own && /^Referenced:/ { ref = $2 }
			own && /^AnonHugePages:/ { huge = $2 < ref ? $2 : ref
				n += (ref - huge) / 4 + huge / 2048 }
			END { printf "%d", n }' "/proc/$agent_pid/smaps")
	fi
	# Its resident memory as ps shows it, and which of the libraries it
	# loads only where they are used are mapped ("-": none).
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$agent_pid/status")
	rss_file=$(awk '$1 == "RssFile:" { print $2 }' "/proc/$agent_pid/status")
	optional=$(awk '$6 ~ /\/lib(pq|freeipmi)\.so/ { sub(/.*\//, "", $6); sub(/\.so.*/, "", $6); print $6 }' \
		"/proc/$agent_pid/maps" | sort -u | paste -sd+ -)
	kill "$hold_pid" 2>/dev/null || true
	wait "$hold_pid" 2>/dev/null || true
	hold_pid=
	# bench_plugin killed: its jobs and cgroups are left; the agent goes
	# first, then the cgroups (empty) are removed.
	kill "$agent_pid"
	wait "$agent_pid" 2>/dev/null || true
	agent_pid=
	for c in /sys/fs/cgroup/*/ceems_bench_* /sys/fs/cgroup/ceems_bench_*; do
		[ -d "$c" ] || continue
		find "$c" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	awk -v a="$c0" -v b="$c1" -v w="$window" -v p="${pages:--}" \
		-v r="$rss" -v f="$rss_file" -v o="${optional:--}" -v k="${wake:--}" \
		'BEGIN { printf "%.3f %s %s %s %s %s\n", (b - a) / w / 1e6, p, r, f, o, k }'
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Window $window s, $rounds rounds, agents in turn: $*"
echo "Database: ${BENCH_AGENT_DATABASE:-none}"
echo
for r in $(seq "$rounds"); do
	for n in $jobs; do
		i=0
		for agent in "$@"; do
			i=$((i + 1))
			echo "$i $n $(measure "$agent" "$n")" >>"$tmp/results"
		done
	done
done
# median AGENT N COLUMN: the median of COLUMN over AGENT's rounds at N.
median() {
	awk -v i="$1" -v n="$2" -v c="$3" '$1 == i && $2 == n { print $c }' "$tmp/results" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
echo "| agent | jobs | ms CPU per s (median) | per job-second above idle, ms | own pages touched per tick (median) | VmRSS KiB (median) | RssFile KiB (median) | budget KiB | optional libraries mapped | bare wake-up µs (median) |"
echo "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|"
i=0
for agent in "$@"; do
	i=$((i + 1))
	idle=
	for n in $jobs; do
		med=$(median "$i" "$n" 3)
		pg=$(median "$i" "$n" 4)
		rss=$(median "$i" "$n" 5)
		rss_file=$(median "$i" "$n" 6)
		optional=$(awk -v i="$i" -v n="$n" '$1 == i && $2 == n { print $7 }' \
			"$tmp/results" | sort -u | paste -sd' ' -)
		wake=$(median "$i" "$n" 8)
		[ "$n" = 0 ] && idle=$med
		per=
		if [ "$n" != 0 ] && [ -n "$idle" ]; then
			per=$(awk -v m="$med" -v z="$idle" -v n="$n" 'BEGIN { printf "%.4f", (m - z) / n }')
		fi
		echo "| $agent | $n | $med | $per | $pg | $rss | $rss_file | $((8192 + 64 * n)) | $optional | $wake |"
	done
done
