#!/usr/bin/env bats
# gpu.bats - GPUs end to end on the real local Slurm cluster: the node
# has three GPUs of the NVML double (tests/doubles/nvml_double.c, loaded
# by the agent through its normal dlopen path), configured as Slurm GRES
# on device files the test makes.  Two jobs each holding one GPU get their
# own device's energy and utilisation; the device nobody holds goes to
# idle; a job's time series carries its GPU's utilisation; a job holding
# a GPU it never uses gets the gpu-idle note.  (A job's shards are not
# tested here: Slurm 22.05 does not say which GPU they are on;
# tests/unit/test_gres.c and test_agent_gpu.c hold them.)
#
# The node and cluster setup is tests/integration/lib/ceems-cluster.bash.
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

# The three devices: power (W) and utilisation (%).
P0=300 U0=90
P1=150 U1=40
P2=60 U2=0

ceems_cluster_prepare() {
	local lib=$CEEMS_TOP_BUILDDIR/tests/doubles/.libs/libnvml-double.so i
	[ -r "$lib" ] || { echo "no NVML double at $lib (make check builds it)" >&2; return 1; }
	# Under the agent's sysfs root: it may read there once confined,
	# and the double reads its scenario next to itself.
	mkdir -p "$CEEMS_DIR/sys/gpu" "$CEEMS_DIR/dev"
	cp "$lib" "$CEEMS_DIR/sys/gpu/libnvidia-ml.so.1"
	for i in 0 1 2; do
		mknod "$CEEMS_DIR/dev/nvidia$i" c 195 "$i" || return 1
	done
	cat >"$CEEMS_DIR/sys/gpu/libnvidia-ml.so.1.scenario" <<EOF
init=ok
[device]
uuid=GPU-00000000-0000-0000-0000-00000000aaa0
bus_id=00000000:3B:00.0
name=Test GPU
minor=0
power_w=$P0
power_limit_w=700
util=$U0
mem_util=50
memory_total=85899345920
memory_used=21474836480
[device]
uuid=GPU-00000000-0000-0000-0000-00000000aaa1
bus_id=00000000:5E:00.0
name=Test GPU
minor=1
power_w=$P1
power_limit_w=700
util=$U1
mem_util=20
memory_total=85899345920
memory_used=4294967296
[device]
uuid=GPU-00000000-0000-0000-0000-00000000aaa2
bus_id=00000000:86:00.0
name=Test GPU
minor=2
power_w=$P2
power_limit_w=700
util=$U2
mem_util=0
memory_total=85899345920
memory_used=0
EOF
	export CEEMS_TEST_SLURM_NODE_GRES=gpu:3
	export CEEMS_TEST_GRES_CONF="Name=gpu File=$CEEMS_DIR/dev/nvidia[0-2]"
	CEEMS_CLUSTER_CONF="gpu_nvml_library = $CEEMS_DIR/sys/gpu/libnvidia-ml.so.1
gpu_rocm_smi_library = none
gres_conf = $SLURM_DIR/gres.conf
# The test's jobs last seconds: GPU notes for them all the same.
summary_gpu_min_time = 5s"
}

setup_file() {
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	ceems_cluster_setup gpu summary=full
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
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems")
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm")
	export SLURM_CONF=$SLURM_DIR/slurm.conf
	load_lib
}

# The GRES index job ID got on the node (scontrol show job -d).
gres_index_of() {
	scontrol show job -d "$1" | sed -n 's/.*GRES=gpu[^(]*(IDX:\([0-9]*\)).*/\1/p' | head -1
}

@test "the agent found the three GPUs of the double, each with its energy counter" {
	for i in 0 1 2; do
		grep -q "GPU $i: nvidia Test GPU, GPU-00000000-0000-0000-0000-00000000aaa$i.*energy counter" \
			"$CEEMS_DIR/agent.log"
	done
}

@test "two jobs holding one GPU each get their own device's energy and utilisation; the unheld one goes to idle" {
	local before after a b ia ib ra rb ea ta p u v idle delta jobs_j
	before=$(agent_status)
	a=$(submit nobody --gres=gpu:1 -n1 --wrap 'sleep 8')
	b=$(submit nobody --gres=gpu:1 -n1 --wrap 'sleep 8')
	sleep 2
	ia=$(gres_index_of "$a")
	ib=$(gres_index_of "$b")
	[ -n "$ia" ] && [ -n "$ib" ] && [ "$ia" != "$ib" ]
	[ "$(finish "$a")" = COMPLETED ]
	[ "$(finish "$b")" = COMPLETED ]
	ra=$(record_of "$a")
	rb=$(record_of "$b")
	# A job's last part of a tick is split for it alone at its end and
	# taken out of the node's figures at the next tick: the node's
	# totals are compared once a tick has ended since the records.
	local ticks
	ticks=$(agent_status | jq .ticks)
	for _ in $(seq 1 100); do
		[ "$(agent_status | jq .ticks)" -gt "$ticks" ] && break
		sleep 0.1
	done
	after=$(agent_status)
	for job in "$a:$ia:$ra" "$b:$ib:$rb"; do
		IFS=: read -r id idx rec <<<"$job"
		eval "p=\$P$idx u=\$U$idx"
		ea=$(jq '.measurements.ledger.gpu.joules' "$rec")
		ta=$(jq '.measurements.elapsed_s' "$rec")
		echo "job $id on GPU $idx: $ea J in $ta s (device at $p W)" >&3
		# The GPUs are learned from slurmctld's answer, a fraction of
		# a second after the job's start: up to 10% below.
		check "$ea <= $p * $ta * 1.02 && $ea >= $p * $ta * 0.90"
		[ "$(jq -r '.measurements.gpus | length' "$rec")" = 1 ]
		[ "$(jq -r '.measurements.gpus[0].uuid' "$rec")" = "GPU-00000000-0000-0000-0000-00000000aaa$idx" ]
		v=$(jq '.measurements.gpus[0].util_pct' "$rec")
		check "$v > $u - 0.01 && $v < $u + 0.01"
		jq -e '.measurements.ledger.gpu.covered_s > 0' "$rec" >/dev/null
	done
	# Over the same time, the unheld GPU's energy (and the held ones'
	# before their jobs knew them) went to idle: every joule the GPUs
	# drew is in a job or idle.
	idle=$(jq -n --argjson x "$before" --argjson y "$after" '$y.energy.gpu.idle_j - $x.energy.gpu.idle_j')
	delta=$(jq -n --argjson x "$before" --argjson y "$after" '$y.energy.gpu.delta_j - $x.energy.gpu.delta_j')
	jobs_j=$(jq -s 'map(.measurements.ledger.gpu.joules) | add' "$ra" "$rb")
	ta=$(jq '.measurements.elapsed_s' "$ra")
	echo "GPU domain: $delta J, jobs $jobs_j J, idle $idle J" >&3
	check "$idle >= $P2 * $ta * 0.95"
	check "$jobs_j + $idle <= $delta * 1.001 && $jobs_j + $idle >= $delta * 0.999"
}

@test "a GPU job's time series carries its GPU's utilisation; a job without GPUs has none" {
	local id idx rec plain prec u
	id=$(submit nobody --gres=gpu:1 -n1 --ceems-series --wrap 'sleep 8')
	plain=$(submit nobody -n1 --ceems-series --wrap 'sleep 4')
	sleep 2
	idx=$(gres_index_of "$id")
	[ -n "$idx" ]
	eval "u=\$U$idx"
	[ "$(finish "$id")" = COMPLETED ]
	[ "$(finish "$plain")" = COMPLETED ]
	rec=$(record_of "$id")
	prec=$(record_of "$plain")
	jq -c .series "$rec" >&3
	[ "$(jq -r '.series.columns[8]' "$rec")" = gpu_util_pct ]
	# Rows before the job's GPUs were known have none; every other row
	# has the device's utilisation, constant in the double.
	check "$(jq '[.series.rows[] | select(.[8] != null)] | length' "$rec") >= 1"
	check "$(jq --argjson u "$u" '[.series.rows[] | select(.[8] != null and .[8] != $u)] | length' "$rec") == 0"
	[ "$(jq '[.series.rows[] | select(.[8] != null)] | length' "$prec")" = 0 ]
	check "$(jq '.series.rows | length' "$prec") >= 1"
}

@test "a job that holds a GPU and never uses it gets the gpu-idle note, with what it cost" {
	local id idx rec
	# The GPUs the other jobs took are free again: this one may get any,
	# so the scenario makes all three idle first.
	sed -i 's/^util=.*/util=0/' "$CEEMS_DIR/sys/gpu/libnvidia-ml.so.1.scenario"
	id=$(submit nobody --gres=gpu:1 -n1 --wrap 'sleep 12')
	[ "$(finish "$id")" = COMPLETED ]
	rec=$(record_of "$id")
	check "$(jq '.measurements.gpus[0].util_pct' "$rec") < 0.01"
	expect_summary "$id" 'GPU'
	out_of "$id" | grep -q 'did not use'
	jq -e '[.notes[]? | .id] | index("gpu-idle") != null' "$rec" >/dev/null ||
		jq -e '.. | objects | select(.id? == "gpu-idle")' "$rec" >/dev/null
}
