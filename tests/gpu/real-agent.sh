#!/bin/sh
# real-agent.sh - the node agent's whole GPU path on a real NVIDIA GPU,
# without Slurm or PostgreSQL: tools/ceems-agent (loading the real
# libnvidia-ml) measures a job that holds the GPU, told to it as the SPANK
# plugin tells it (real_agent_job.c: a cgroup of its own, the GPU named
# by its device file's numbers, the steps' and the job's end, the
# epilog's word), while the job runs a CUDA load (gpu_load.cu) between
# idle seconds and nvidia-smi samples the GPU every 200 ms.  The job's
# record, as the agent writes it to its spool, is then compared with
# nvidia-smi over the job's lifetime at the agent (real_agent_check.py):
# GPU energy within 10 %, utilisation, SM activity.  Prints TAP; skips
# (exit 77) without nvidia-smi, a GPU, nvcc or python3.  Runs as root
# (the agent, and the job's cgroup).  From a build directory:
#
#   make real-agent
#
# or with programs built elsewhere (a GPU node without the build's
# dependencies: the real programs, not libtool's wrappers, with
# LD_LIBRARY_PATH finding libceems and the libraries they need):
#
#   sh tests/gpu/real-agent.sh AGENT REAL_AGENT_JOB [OUTDIR]
#
# OUTDIR (default: a temporary folder) keeps the configuration, the
# agent's log, the record, the driver's output and nvidia-smi's CSV.
# Environment: CEEMS_REAL_AGENT_LOAD_S (seconds of load, default 20),
# CEEMS_REAL_AGENT_IDLE_S (idle seconds before and after, default 2),
# CEEMS_REAL_AGENT_CONF (lines added to the agent's configuration),
# and, to run this script's own parts on a machine without a GPU,
# CEEMS_REAL_AGENT_NVML (the library the agent loads: an NVML double),
# CEEMS_REAL_AGENT_SMI (the nvidia-smi to run), CEEMS_REAL_AGENT_GPU
# (the GPU's identifier for the agent) and CEEMS_REAL_AGENT_LOAD (the
# load to run, instead of gpu_load.cu built with nvcc).

set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: real-agent.sh AGENT REAL_AGENT_JOB [OUTDIR]" >&2; exit 2; }
agent=$1
driver=$2
out=${3:-$(mktemp -d)}
mkdir -p "$out" || exit 1
smi=${CEEMS_REAL_AGENT_SMI:-nvidia-smi}
load_s=${CEEMS_REAL_AGENT_LOAD_S:-20}
idle_s=${CEEMS_REAL_AGENT_IDLE_S:-2}

skip() {
	echo "1..0 # SKIP $1"
	exit 77
}
bail() {
	echo "Bail out! $1"
	exit 1
}
command -v "$smi" >/dev/null || skip "no nvidia-smi"
"$smi" -L >/dev/null 2>&1 || skip "nvidia-smi finds no GPU"
command -v python3 >/dev/null || skip "no python3"
if [ -z "${CEEMS_REAL_AGENT_LOAD:-}" ]; then
	command -v nvcc >/dev/null || skip "no nvcc"
fi
[ "$(id -u)" = 0 ] || skip "not root (the agent, and the job's cgroup)"

# The GPU: nvidia-smi's first, the load pinned to it by its UUID, the
# agent told of it as the plugin tells it, by its device file's numbers
# (gres.conf's File=/dev/nvidiaN).
"$smi" -i 0 --query-gpu=index,uuid,pci.bus_id,name,power.limit \
	--format=csv,noheader,nounits >"$out/smi-device.csv" ||
	bail "nvidia-smi cannot query GPU 0"
uuid=$(awk -F', ' '{ print $2; exit }' "$out/smi-device.csv")
minor=$("$smi" -q -i 0 | awk -F: '/Minor Number/ { gsub(/ /, "", $2); print $2; exit }')
gpu=${CEEMS_REAL_AGENT_GPU:-/dev/nvidia$minor}
[ -n "${CEEMS_REAL_AGENT_GPU:-}" ] || [ -c "$gpu" ] ||
	bail "GPU 0 (minor number '$minor') has no device file $gpu"

if [ -n "${CEEMS_REAL_AGENT_LOAD:-}" ]; then
	load=$CEEMS_REAL_AGENT_LOAD
else
	nvcc -O2 -o "$out/gpu_load" "$top/tests/gpu/gpu_load.cu" ||
		bail "gpu_load.cu does not build"
	load=$out/gpu_load
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ceems-real-agent-XXXXXX") || exit 1
agent_pid=
smi_pid=
cleanup() {
	[ -n "$smi_pid" ] && kill "$smi_pid" 2>/dev/null
	if [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null; then
		wait "$agent_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Production timing; no database: the record goes to the spool.
cat >"$out/ceems.conf" <<CONF
interval = 1s
socket = $tmp/agent.sock
state_dir = $tmp/state
spool_dir = $tmp/spool
note_dir = $tmp/notes
gpu_nvml_library = ${CEEMS_REAL_AGENT_NVML:-libnvidia-ml.so.1}
gpu_rocm_smi_library = none
log_level = info
CONF
[ -z "${CEEMS_REAL_AGENT_CONF:-}" ] ||
	printf '%s\n' "$CEEMS_REAL_AGENT_CONF" >>"$out/ceems.conf"
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/notes"
"$agent" -c "$out/ceems.conf" 2>"$out/agent.log" &
agent_pid=$!
up=
for _ in $(seq 100); do
	if "$agent" --socket "$tmp/agent.sock" --status >"$out/agent-status.txt" 2>&1; then
		up=1
		break
	fi
	kill -0 "$agent_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$up" ]; then
	sed 's/^/# /' "$out/agent.log"
	bail "the agent did not start"
fi

"$smi" -i 0 --format=csv,noheader,nounits -lms 200 \
	--query-gpu=timestamp,power.draw,utilization.gpu >"$out/smi.csv" &
smi_pid=$!
sleep 1
jobid=$((4000000 + $$ % 100000))
CUDA_VISIBLE_DEVICES=$uuid "$driver" -c "$out/ceems.conf" -j "$jobid" \
	-g "$gpu" -i "$idle_s" -- "$load" "$load_s" \
	>"$out/job.txt" 2>"$out/job.err"
echo $? >"$out/job.rc"
sleep 1
kill "$smi_pid" 2>/dev/null
wait "$smi_pid" 2>/dev/null
smi_pid=

# The agent writes the record on the epilog's word, in its loop.
rec=
for _ in $(seq 50); do
	rec=$(find "$tmp/spool" -maxdepth 1 -name "*-$jobid-*.json" | head -n 1)
	[ -n "$rec" ] && break
	sleep 0.1
done
[ -z "$rec" ] || cp "$rec" "$out/record.json"
kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
agent_pid=

python3 "$top/tests/gpu/real_agent_check.py" "$out"
