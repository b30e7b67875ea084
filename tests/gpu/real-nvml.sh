#!/bin/sh
# real-nvml.sh - the NVML backend (lib/sources/gpu_nvml.c, lib/sources/gpu_backend.c) on a
# real NVIDIA GPU and driver, without Slurm or PostgreSQL: what it
# enumerates against nvidia-smi, and what it reads while a CUDA load
# (gpu_load.cu) runs between idle periods against nvidia-smi's own samples
# taken over the same seconds.  Prints TAP; skips (exit 77) without
# nvidia-smi, a GPU, nvcc or a C compiler.  Run on a GPU node from the
# source tree:
#
#   sh tests/gpu/real-nvml.sh [OUTDIR]
#
# OUTDIR (default: a temporary folder) keeps the probe's and nvidia-smi's
# CSV.  The figures it prints go into doc/gpu.md.  real-gpu.bats is the
# whole-product test (Slurm, the agent, PostgreSQL) for a GPU node that
# has them.

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d)}
mkdir -p "$out" || exit 1
cc=${CC:-cc}

skip() {
	echo "1..0 # SKIP $1"
	exit 77
}
command -v nvidia-smi >/dev/null || skip "no nvidia-smi"
nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi finds no GPU"
command -v nvcc >/dev/null || skip "no nvcc"
command -v "$cc" >/dev/null || skip "no C compiler ($cc)"
command -v python3 >/dev/null || skip "no python3"

# The sources need config.h only for _GNU_SOURCE; the probe builds without
# configure so that a bare GPU node can run it.
mkdir -p "$out/include"
echo '#define _GNU_SOURCE 1' >"$out/include/config.h"
"$cc" -std=gnu11 -O2 -Wall -Wextra -Werror -I"$out/include" -I"$top/lib" \
	-o "$out/nvml_probe" "$top/tests/gpu/nvml_probe.c" \
	"$top/lib/sources/gpu_nvml.c" "$top/lib/sources/gpu_backend.c" "$top/lib/base/log.c" \
	-ldl || { echo "Bail out! the probe does not build"; exit 1; }
nvcc -O2 -o "$out/gpu_load" "$top/tests/gpu/gpu_load.cu" ||
	{ echo "Bail out! gpu_load.cu does not build"; exit 1; }

idle=${CEEMS_REAL_NVML_IDLE_S:-6}
load=${CEEMS_REAL_NVML_LOAD_S:-20}
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,memory.total,power.limit \
	--format=csv,noheader,nounits >"$out/smi-devices.csv"
nvidia-smi --format=csv,noheader,nounits -lms 200 \
	--query-gpu=index,timestamp,power.draw,utilization.gpu,utilization.memory \
	>"$out/smi.csv" &
smi=$!
"$out/nvml_probe" $((2 * idle + load)) 200 \
	>"$out/probe.csv" 2>"$out/probe.err" &
probe=$!
sleep "$idle"
date +%s.%N >"$out/load-start"
"$out/gpu_load" "$load" >"$out/gpu_load.log" 2>&1
echo $? >"$out/gpu_load.rc"
date +%s.%N >"$out/load-end"
wait "$probe"
echo $? >"$out/probe.rc"
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null

exec python3 "$top/tests/gpu/real_nvml_check.py" "$out"
