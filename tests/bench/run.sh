#!/bin/sh
# run.sh - run the agent's tick benchmark for 1, 16, 128 and 1024 jobs and
# print the markdown table of doc/performance.md.
#
# Each size runs twice: once under /usr/bin/time -v (CPU time per tick as
# the bench measures it, and the process's peak resident memory), once
# under callgrind, collecting only inside the tick (bench_tick), for an
# instruction count that does not depend on the machine's load.
#
# Usage: run.sh [path/to/bench_agent]
# Environment: BENCH_JOBS (sizes, default "1 16 128 1024"), BENCH_TICKS
# (default 1000), BENCH_CG_TICKS (ticks under callgrind, default 100),
# BENCH_ARGS (extra bench options, e.g. -s), BENCH_TMPDIR (where the
# fixture trees go, default /dev/shm), CEEMS_FIXTURES.
set -eu

bench=${1:-tests/bench/bench_agent}
jobs=${BENCH_JOBS:-1 16 128 1024}
ticks=${BENCH_TICKS:-1000}
cg_ticks=${BENCH_CG_TICKS:-100}
args=${BENCH_ARGS:-}
: "${CEEMS_FIXTURES:=$(cd "$(dirname "$0")/../fixtures" && pwd)}"
export CEEMS_FIXTURES

if [ ! -x /usr/bin/time ]; then
	echo "run.sh: /usr/bin/time is missing (Debian package time)" >&2
	exit 1
fi
have_valgrind=no
if command -v valgrind >/dev/null 2>&1; then
	have_valgrind=yes
fi

# The fixture trees go to a tmpfs when there is one: in memory like
# sysfs and cgroupfs, and free of the writeback that rewriting thousands
# of small files sets off on a disk filesystem (it doubled the figures
# on ext4).  BENCH_TMPDIR chooses another place.
if [ -z "${BENCH_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	BENCH_TMPDIR=/dev/shm
fi
TMPDIR=${BENCH_TMPDIR:-${TMPDIR:-/tmp}}
export TMPDIR
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# The value of KEY in the bench's "key value" output FILE.
field() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Fixture trees in $TMPDIR ($(df -PT "$TMPDIR" | awk 'NR == 2 { print $2 }'))"
echo "Bench: $ticks ticks ($cg_ticks under callgrind), 1 s apart, full cgroup reading every 10th${args:+, options $args}"
echo
echo "| jobs | CPU/tick µs | light tick µs | full tick µs | budget µs | met | instr./tick | allocs | max RSS KiB | budget KiB | met |"
echo "|-----:|------------:|--------------:|-------------:|----------:|:---:|------------:|-------:|------------:|-----------:|:---:|"

status=0
for n in $jobs; do
	out=$tmp/out.$n
	# shellcheck disable=SC2086 # $args is a list of options
	if ! /usr/bin/time -v "$bench" -n "$n" -t "$ticks" $args \
			>"$out" 2>"$tmp/time.$n"; then
		echo "run.sh: bench_agent -n $n failed:" >&2
		cat "$tmp/time.$n" >&2
		status=1
		continue
	fi
	maxrss=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.$n")
	instr=n/a
	if [ "$have_valgrind" = yes ]; then
		# shellcheck disable=SC2086
		if valgrind --tool=callgrind --toggle-collect=bench_tick \
				--callgrind-out-file="$tmp/cg.$n" \
				"$bench" -n "$n" -t "$cg_ticks" $args \
				>/dev/null 2>"$tmp/cg.log.$n"; then
			instr=$(awk -v t="$cg_ticks" \
				'/^(summary|totals):/ { printf "%.0f", $2 / t; exit }' \
				"$tmp/cg.$n")
		fi
	fi
	tick=$(field "$out" tick_us)
	budget=$(field "$out" budget_us)
	mem_budget=$((8192 + 64 * n))
	cpu_ok=$(awk -v a="$tick" -v b="$budget" 'BEGIN { print (a <= b) ? "yes" : "**no**" }')
	mem_ok=$(awk -v a="$maxrss" -v b="$mem_budget" 'BEGIN { print (a <= b) ? "yes" : "**no**" }')
	echo "| $n | $tick | $(field "$out" light_tick_us) | $(field "$out" full_tick_us) | $budget | $cpu_ok | $instr | $(field "$out" tick_allocs) | $maxrss | $mem_budget | $mem_ok |"
	echo "$n $tick $maxrss $(field "$out" rss_setup_kib) $instr" >>"$tmp/rows"
done

# The fixed and per-job parts: the line through the smallest and the
# largest size.
if [ -s "$tmp/rows" ] && [ "$(wc -l <"$tmp/rows")" -ge 2 ]; then
	echo
	awk 'NR == 1 { n0 = $1; t0 = $2; m0 = $3; i0 = $5 }
	     { n1 = $1; t1 = $2; m1 = $3; i1 = $5 }
	     END {
		dn = n1 - n0
		printf "Per job (%d to %d jobs): %.2f µs CPU/tick, %.1f KiB peak RSS", n0, n1, (t1 - t0) / dn, (m1 - m0) / dn
		if (i0 != "n/a" && i1 != "n/a")
			printf ", %.0f instructions/tick", (i1 - i0) / dn
		printf "\n"
		printf "Fixed part (extrapolated to 0 jobs): %.2f µs CPU/tick, %.0f KiB peak RSS\n", t0 - n0 * (t1 - t0) / dn, m0 - n0 * (m1 - m0) / dn
	     }' "$tmp/rows"
fi
exit $status
