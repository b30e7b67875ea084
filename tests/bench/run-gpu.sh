#!/bin/sh
# run-gpu.sh - the GPU source's cost per agent tick with eight devices of
# the NVML double (doc/performance.md, "GPUs in the tick"): wall time per tick
# (median and maximum of BENCH_TICKS), and under callgrind the
# instructions inside bench_gpu_tick alone, per tick, for a figure that
# does not depend on the machine's load.  Both with energy counters and
# with power integrated.
#
# Usage: run-gpu.sh path/to/bench_gpu path/to/libnvml-double.so
set -eu

bench=$1
double=$2
ticks=${BENCH_TICKS:-2000}
cg_ticks=${BENCH_CG_TICKS:-200}

cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
echo "Machine: $(nproc) CPUs, ${cpu:-unknown CPU}, Linux $(uname -r), $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "Bench: $ticks ticks ($cg_ticks under callgrind), 8 devices of the NVML double"
echo
echo "| devices | energy | wall/tick µs (median) | wall/tick µs (max) | instr./tick |"
echo "|--------:|:-------|----------------------:|-------------------:|------------:|"
for mode in counter integrated; do
	out=$("$bench" "$double" "$ticks" "$mode")
	med=$(echo "$out" | awk '$1 == "wall_us_median" { print $2 }')
	max=$(echo "$out" | awk '$1 == "wall_us_max" { print $2 }')
	ndev=$(echo "$out" | awk '$1 == "devices" { print $2 }')
	instr=-
	if command -v valgrind >/dev/null 2>&1; then
		cg=$(mktemp)
		valgrind --tool=callgrind --callgrind-out-file="$cg" \
			--toggle-collect=bench_gpu_tick \
			"$bench" "$double" "$cg_ticks" "$mode" >/dev/null 2>&1
		total=$(awk '/^summary:/ { print $2 }' "$cg")
		instr=$((total / cg_ticks))
		rm -f "$cg"
	fi
	echo "| $ndev | $mode | $med | $max | $instr |"
done
