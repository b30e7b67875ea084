#!/usr/bin/env bats
# real-gpu.bats - ceems on a real NVIDIA GPU: the real libnvidia-ml,
# the GPU as Slurm GRES on /dev/nvidia0, a CUDA load (gpu_load.cu, built
# with nvcc) as a job.  Checks the job's GPU energy > 0, SM activity > 0,
# and its energy and utilisation against nvidia-smi's own samples over
# the same time.  Not part of `make check` (the test machines have no
# GPU); run it on a GPU node, as root, from a build directory:
#
#   make check TESTS=tests/gpu/real-gpu.bats
#
# It skips without nvidia-smi, /dev/nvidia0 or nvcc.  The figures it
# prints go into doc/gpu.md.

load ../integration/lib/ceems-cluster

ceems_cluster_prepare() {
	export CEEMS_TEST_SLURM_NODE_GRES=gpu:1
	export CEEMS_TEST_GRES_CONF="Name=gpu File=/dev/nvidia0"
	CEEMS_CLUSTER_CONF="gres_conf = $SLURM_DIR/gres.conf
gpu_rocm_smi_library = none"
	nvcc -O2 -o "$CEEMS_DIR/gpu_load" \
		"${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}/tests/gpu/gpu_load.cu"
	chmod 755 "$CEEMS_DIR/gpu_load"
}

setup_file() {
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	command -v nvidia-smi >/dev/null && [ -e /dev/nvidia0 ] &&
		command -v nvcc >/dev/null || return 0
	ceems_cluster_setup realgpu summary=full
	echo "$CEEMS_DIR" >"$BATS_FILE_TMPDIR/ceems"
	echo "$SLURM_DIR" >"$BATS_FILE_TMPDIR/slurm"
}

teardown_file() {
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems" 2>/dev/null) || CEEMS_DIR=
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm" 2>/dev/null) || SLURM_DIR=
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
	[ -s "$BATS_FILE_TMPDIR/ceems" ] || skip "no NVIDIA GPU, nvidia-smi or nvcc here"
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems")
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm")
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	load_lib
}

@test "a CUDA load's energy, utilisation and SM activity match nvidia-smi's" {
	local id rec smi e util sm elapsed smi_j smi_util
	smi=$CEEMS_DIR/smi.csv
	nvidia-smi -i 0 --query-gpu=timestamp,power.draw,utilization.gpu \
		--format=csv,noheader,nounits -lms 200 >"$smi" &
	echo $! >"$CEEMS_DIR/smi.pid"
	id=$(submit root --gres=gpu:1 -n1 --wrap "$CEEMS_DIR/gpu_load 30")
	[ "$(finish "$id")" = COMPLETED ]
	kill "$(cat "$CEEMS_DIR/smi.pid")"
	rec=$(record_of "$id")
	e=$(jq '.measurements.ledger.gpu.joules' "$rec")
	elapsed=$(jq '.measurements.elapsed_s' "$rec")
	util=$(jq '.measurements.gpus[0].util_pct' "$rec")
	sm=$(jq '.measurements.gpus[0].sm_active_pct // -1' "$rec")
	# nvidia-smi's power samples over the job's life (the load runs
	# 30 s of it): their mean times the job's time.
	smi_j=$(awk -F', ' -v t="$elapsed" '{ s += $2; n++ } END { print s / n * t }' "$smi")
	smi_util=$(awk -F', ' '{ s += $3; n++ } END { print s / n }' "$smi")
	echo "ceems: $e J, util $util %, SM activity $sm % over $elapsed s" >&3
	echo "nvidia-smi: $smi_j J, util $smi_util % (samples every 200 ms)" >&3
	check "$e > 0"
	check "$sm > 0"
	check "$e > $smi_j * 0.85 && $e < $smi_j * 1.15"
	check "$util > $smi_util - 15 && $util < $smi_util + 15"
}
