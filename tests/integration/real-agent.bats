#!/usr/bin/env bats
# real-agent.bats - tests/gpu/real-agent.sh, the node agent's GPU path
# checked on a real NVIDIA GPU (doc/gpu.md, "On a real GPU"), kept
# working on machines without one: the built agent loads the NVML double
# (tests/doubles/nvml_double.c), nvidia-smi is its stand-in
# (tests/doubles/nvidia-smi-double.sh) and the load a sleep, so that the
# driver (real_agent_job), the agent's record and the checks
# (real_agent_check.py) all run as on the GPU.  No Slurm: real cgroups,
# root.  Needs CEEMS_TOP_BUILDDIR and CEEMS_TOP_SRCDIR (set by `make
# check`).

setup() {
	[ "$(id -u)" = 0 ] || skip "not root (the agent, and the job's cgroup)"
	command -v python3 >/dev/null || skip "no python3"
	B=$CEEMS_TOP_BUILDDIR
	S=$CEEMS_TOP_SRCDIR
	lib=$B/tests/doubles/.libs/libnvml-double.so
	[ -r "$lib" ] || skip "no NVML double at $lib (make check builds it)"
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ceems-real-agent-bats-XXXXXX")
	cp "$lib" "$dir/libnvidia-ml.so.1"
	cat >"$dir/libnvidia-ml.so.1.scenario" <<EOF
init=ok
[device]
uuid=GPU-00000000-0000-0000-0000-00000000bbb0
bus_id=00000000:3B:00.0
name=Test GPU
minor=0
power_w=300
power_limit_w=700
util=90
mem_util=20
memory_total=85899345920
memory_used=1073741824
energy_start=1000
gpm_sm_active=85
EOF
	export SMI_DOUBLE_UUID=GPU-00000000-0000-0000-0000-00000000bbb0
	export SMI_DOUBLE_NAME="Test GPU" SMI_DOUBLE_POWER_W=300 SMI_DOUBLE_UTIL=90
	export CEEMS_REAL_AGENT_SMI=$S/tests/doubles/nvidia-smi-double.sh
	export CEEMS_REAL_AGENT_NVML=$dir/libnvidia-ml.so.1
	export CEEMS_REAL_AGENT_LOAD=sleep CEEMS_REAL_AGENT_LOAD_S=3
	export CEEMS_REAL_AGENT_IDLE_S=1
}

teardown() {
	[ -n "${dir:-}" ] && rm -rf "$dir"
}

real_agent() {
	sh "$S/tests/gpu/real-agent.sh" "$B/tools/ceems-agent" \
		"$B/tests/gpu/real_agent_job" "$dir/out"
}

@test "real-agent.sh: the job's record matches the GPU's samples, every check passes" {
	export CEEMS_REAL_AGENT_GPU=dev:195:0
	run real_agent
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^ok ')" -eq 11 ]
	! echo "$output" | grep -q '^not ok'
	# The record the checks read is the agent's, from its spool.
	grep -q '"finalized_by":"extern"' "$dir/out/record.json" ||
		grep -q '"finalized_by": "extern"' "$dir/out/record.json"
}

@test "real-agent.sh: a GPU the agent does not match fails the checks" {
	export CEEMS_REAL_AGENT_GPU=dev:195:7
	run real_agent
	echo "$output"
	[ "$status" -eq 1 ]
	echo "$output" | grep -q '^not ok 5 - the record holds the job'
	echo "$output" | grep -q '^not ok 6 - the job.s GPU energy agrees'
}

@test "real-agent.sh: skips without nvidia-smi" {
	export CEEMS_REAL_AGENT_SMI=$dir/no-nvidia-smi
	run real_agent
	[ "$status" -eq 77 ]
	[ "$output" = "1..0 # SKIP no nvidia-smi" ]
}
