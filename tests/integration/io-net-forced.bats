#!/usr/bin/env bats
# io-net-forced.bats - the agent held to one attach type the kernel may
# refuse: ebpf = fentry, or CEEMS_EBPF_FORCE (fentry, kprobe).  Where the
# kernel accepts it, io-net.bats's IO and TCP checks hold with it; where
# it refuses it, the agent says so in its log and jobs run, their eBPF
# figures absent with the reason.

load lib/io-net

setup_file() {
	export CEEMS_EBPF_ATTACH=${CEEMS_EBPF_FORCE:-fentry}
	io_net_setup_file
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	io_net_setup
}

# Whether the agent loaded the programs (else it refused, and said so).
loaded() {
	grep -q 'eBPF loaded' "$CEEMS_DIR/agent.log"
}

@test "forced type: loaded as that type, or refused with a clear error" {
	if loaded; then
		io_net_loaded
		return
	fi
	grep -q "per-job IO and network are not measured: ebpf = $CEEMS_EBPF_ATTACH in ceems.conf, which this kernel refuses: set ebpf = auto (io: $CEEMS_EBPF_ATTACH " \
		"$CEEMS_DIR/agent.log"
	echo "# $(grep 'not measured' "$CEEMS_DIR/agent.log")" >&3
}

@test "forced type: dd's IO counted, or the job runs with eBPF absent and why" {
	if loaded; then
		io_net_dd
		return
	fi
	ID=$(submit nobody -J forced -c1 --wrap 'dd if=/dev/zero of=f.$SLURM_JOB_ID bs=1M count=8 status=none; rm -f f.$SLURM_JOB_ID')
	[ "$(finish "$ID")" = COMPLETED ]
	r=$(record_of "$ID")
	[ "$(jq -r '.measurements | has("io")' "$r")" = false ]
	[[ "$(jq -r '.measurements.ebpf_absent' "$r")" == "ebpf = $CEEMS_EBPF_ATTACH in ceems.conf, which this kernel refuses"* ]]
}

@test "forced type: TCP over IPv4, 100 MiB out of the sender's job, into the listener's" {
	loaded || skip "this kernel refuses $CEEMS_EBPF_ATTACH"
	pair tcp 4 tcp4
}
