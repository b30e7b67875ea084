#!/usr/bin/env bats
# io-net-tracepoint.bats - io-net.bats's IO and TCP checks with the agent
# held to plain tracefs tracepoints (ebpf = tracepoint): the path of
# kernels without BTF tracepoints, run for real on this one.  tracefs is
# mounted first when it is not (the BTF path does not need it).

load lib/io-net

setup_file() {
	if [ ! -e /sys/kernel/tracing/events ] && [ ! -e /sys/kernel/debug/tracing/events ]; then
		mount -t tracefs nodev /sys/kernel/tracing || true
	fi
	export CEEMS_EBPF_ATTACH=tracepoint
	io_net_setup_file
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	io_net_setup
}

@test "tracepoint: the agent loaded the programs once, as tracepoints" {
	io_net_loaded
}

@test "tracepoint: dd writes 256 MiB and reads it back; an idle job gets about 0" {
	io_net_dd
}

@test "tracepoint: TCP over IPv4: 100 MiB out of the sender's job, into the listener's" {
	pair tcp 4 tcp4
}
