#!/bin/sh
# run-plugin.sh - the latency the SPANK plugin adds at job start and end
# (target: at most 10 ms each), against a real node agent: start
# tools/ceems-agent on a copy of the RAPL fixture tree, run bench_plugin
# with 0, 100 and 1000 other jobs registered, print the markdown table of
# doc/performance.md.  Runs as root (real cgroups).
#
# Usage: run-plugin.sh path/to/bench_plugin path/to/ceems-agent
# Environment: BENCH_PLUGIN_JOBS (default "0 100 1000"), BENCH_PLUGIN_REPS
# (default 200), BENCH_PLUGIN_DATABASE (a libpq connection string: store
# records in PostgreSQL instead of the spool), CEEMS_FIXTURES.
set -eu

bench=$1
agent=$2
jobs=${BENCH_PLUGIN_JOBS:-0 100 1000}
reps=${BENCH_PLUGIN_REPS:-200}
: "${CEEMS_FIXTURES:=$(cd "$(dirname "$0")/../fixtures" && pwd)}"
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/bench/fixture-agent.sh
. "$(dirname "$0")/fixture-agent.sh"

if [ "$(id -u)" != 0 ]; then
	echo "run-plugin.sh: run as root (the bench creates cgroups)" >&2
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-plugin-XXXXXX")
agent_pid=
cleanup() {
	[ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

fixture_agent_conf "$tmp"
if [ -n "${BENCH_PLUGIN_DATABASE:-}" ]; then
	echo "database = $BENCH_PLUGIN_DATABASE" >>"$tmp/ceems.conf"
fi
fixture_agent_start "$agent" "$tmp" || exit 1

field() {
	awk -v k="$2" '$1 == k { print $2 }' "$1"
}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Spool on $(df -PT "$tmp" | awk 'NR == 2 { print $2 }'); $reps jobs per size"
echo
echo "| other jobs | phase | median ms | p99 ms | max ms | budget ms | met |"
echo "|-----------:|-------|----------:|-------:|-------:|----------:|:---:|"
status=0
first=7000000
for n in $jobs; do
	out=$tmp/out.$n
	if ! "$bench" -c "$tmp/ceems.conf" -n "$n" -r "$reps" -j "$first" >"$out"; then
		echo "run-plugin.sh: bench_plugin -n $n failed; agent log:" >&2
		tail -n 20 "$tmp/agent.log" >&2
		status=1
		continue
	fi
	first=$((first + n + reps))
	for p in start_first_step start_later_step end_batch_step end_job; do
		p99=$(field "$out" "${p}_p99_ms")
		ok=$(awk -v a="$p99" 'BEGIN { print (a <= 10) ? "yes" : "**no**" }')
		echo "| $n | $p | $(field "$out" "${p}_median_ms") | $p99 | $(field "$out" "${p}_max_ms") | 10 | $ok |"
	done
done
exit $status
