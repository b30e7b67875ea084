#!/usr/bin/env bats
# io-net.bats - per-job IO and network from eBPF, end to end (the checks
# are lib/io-net.bash): a job that writes 256 MiB with dd and reads it
# back, next to one that does no IO; then a job sending 100 MiB to a
# listener in another job, over TCP and UDP, IPv4 and IPv6.  The agent
# takes the attach types the kernel offers (BTF tracepoints here);
# io-net-tracepoint.bats holds it to plain tracepoints.

load lib/io-net

setup_file() {
	io_net_setup_file
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	io_net_setup
}

@test "the agent loaded the programs once, with the attach types the kernel offers" {
	io_net_loaded
}

@test "dd writes 256 MiB and reads it back; a job next to it doing no IO gets about 0" {
	io_net_dd
}

@test "TCP over IPv4: 100 MiB out of the sender's job, into the listener's" {
	pair tcp 4 tcp4
	[ "$(jq -r '.measurements.net | has("tcp_retrans")' "$(record_of "$S_ID")")" = true ]
}

@test "UDP over IPv4: 100 MiB out of the sender's job, into the listener's" {
	pair udp 4 udp4
	# One datagram a send: messages count them.
	check "$(net udp4 out_msgs "$(record_of "$S_ID")") >= 100 * $MIB / 60000"
}

@test "TCP over IPv6: 100 MiB out of the sender's job, into the listener's" {
	pair tcp 6 tcp6
}

@test "UDP over IPv6: 100 MiB out of the sender's job, into the listener's" {
	pair udp 6 udp6
}
