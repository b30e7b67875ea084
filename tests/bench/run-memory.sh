#!/bin/sh
# run-memory.sh - the node agent's memory as ps shows it, at 1, 128 and
# 1024 jobs: VmRSS and its parts (RssAnon, RssFile, RssShmem) from the
# bench's /proc/self/status after its ticks and checkpoints, against the
# target of 8 MiB + 64 KiB per job, with the CPU time of a checkpoint and
# the state file's size.  Prints the markdown table of doc/performance.md.
#
# The state file goes to a disk filesystem, as the agent's state_dir does
# (a file on tmpfs counts as RssShmem instead of RssFile), the fixture
# trees to tmpfs as in run.sh.
#
# Usage: run-memory.sh [path/to/bench_agent]
# Environment: BENCH_JOBS (default "1 128 1024"), BENCH_TICKS (default
# 200), BENCH_STATE_TMPDIR (where the state file goes, default /var/tmp),
# CEEMS_FIXTURES.
set -eu

bench=${1:-tests/bench/bench_agent}
jobs=${BENCH_JOBS:-1 128 1024}
ticks=${BENCH_TICKS:-200}
state_tmp=${BENCH_STATE_TMPDIR:-/var/tmp}
: "${CEEMS_FIXTURES:=$(cd "$(dirname "$0")/../fixtures" && pwd)}"
export CEEMS_FIXTURES
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
	TMPDIR=/dev/shm
	export TMPDIR
fi

tmp=$(mktemp -d "$state_tmp/ceems-bench-memory-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

field() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "State file in $state_tmp ($(df -PT "$state_tmp" | awk 'NR == 2 { print $2 }')), $ticks ticks, a checkpoint after each"
echo
echo "| jobs | VmRSS KiB | RssAnon KiB | RssFile KiB | RssShmem KiB | budget KiB | met | checkpoint µs | state file KiB |"
echo "|-----:|----------:|------------:|------------:|-------------:|-----------:|:---:|--------------:|---------------:|"

status=0
for n in $jobs; do
	mkdir "$tmp/state.$n"
	if ! "$bench" -n "$n" -t "$ticks" -d "$tmp/state.$n" >"$tmp/out.$n"; then
		echo "run-memory.sh: bench_agent -n $n failed" >&2
		status=1
		continue
	fi
	rss=$(field "$tmp/out.$n" rss_end_kib)
	budget=$((8192 + 64 * n))
	met=$(awk -v a="$rss" -v b="$budget" 'BEGIN { print (a <= b) ? "yes" : "**no**" }')
	size=$(du -k --apparent-size "$tmp/state.$n/jobs.state" | cut -f1)
	echo "| $n | $rss | $(field "$tmp/out.$n" rss_anon_kib) | $(field "$tmp/out.$n" rss_file_kib) | $(field "$tmp/out.$n" rss_shmem_kib) | $budget | $met | $(field "$tmp/out.$n" checkpoint_us) | $size |"
done
exit $status
