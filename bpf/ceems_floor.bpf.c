/* SPDX-License-Identifier: GPL-2.0-only */
/* ceems_floor.bpf.c - programs that do nothing, attached where
 * ceems_io.bpf.c's BTF tracepoint variants attach (every system call's
 * exit, every socket send and receive, forks and exits): the cost of
 * the hooks themselves, the floor under what the real programs cost.
 * For tests/bench/bench_workloads.c only; not installed. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("tp_btf/sys_exit")
int BPF_PROG(floor_sys_exit)
{
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(floor_send)
{
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(floor_recv)
{
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(floor_fork)
{
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(floor_exit)
{
	return 0;
}
