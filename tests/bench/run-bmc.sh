#!/bin/bash
# run-bmc.sh - soak of the BMC energy source against the simulated BMC
# (tests/harness/bmc.sh: OpenIPMI's ipmi_sim on loopback, LANplus): the
# source reads it every BENCH_BMC_INTERVAL_MS for BENCH_BMC_SECONDS
# while the simulator is stopped and restarted every BENCH_BMC_BOUNCE
# seconds, and the bench prints its descriptors and VmRSS over time
# (doc/performance.md, "BMC source soak").  Run as root.
#
# Usage: run-bmc.sh [path/to/bench_bmc]
# Environment: BENCH_BMC_SECONDS (default 3600), BENCH_BMC_INTERVAL_MS
# (default 100), BENCH_BMC_BOUNCE (default 60; 0: never),
# BENCH_BMC_PRINT (default 60), BENCH_BMC_PORT (default 16623).
set -eu

bench=${1:-tests/bench/bench_bmc}
seconds=${BENCH_BMC_SECONDS:-3600}
interval=${BENCH_BMC_INTERVAL_MS:-100}
bounce=${BENCH_BMC_BOUNCE:-60}
print=${BENCH_BMC_PRINT:-60}
port=${BENCH_BMC_PORT:-16623}
here=$(cd "$(dirname "$0")" && pwd)
script=$here/../harness/bmc.sh

dir=$(mktemp -d "${TMPDIR:-/tmp}/ceems-bench-bmc-XXXXXX")
trap 'bash "$script" stop "$dir"; rm -rf "$dir"' EXIT INT TERM
bash "$script" start "$dir" "$port"
echo "# bench_bmc: ${seconds} s, bmc_interval ${interval} ms, simulator restarted every ${bounce} s, $(nproc) CPUs, $(uname -sr)"
"$bench" -H "127.0.0.1:$port" -c "$dir/credentials" -w opensesspriv \
	-i "$interval" -t "$seconds" -p "$print" \
	-b "$bounce" -s "$dir" -x "$script"
