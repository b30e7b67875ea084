/* SPDX-License-Identifier: GPL-2.0-only */
/* ceems_floor.bpf.c - programs that do nothing, attached where
 * ceems_io.bpf.c's variants attach: BTF tracepoints (every system
 * call's exit, every socket send and receive), or fexit on the read and
 * write system call functions and the IP sockets' send and receive
 * operations; forks and exits.  The cost of the hooks themselves, the
 * floor under what the real programs cost; the benchmark loads those of
 * the attach types the real programs got.  For
 * tests/bench/bench_workloads.c only (x86 names); not installed. */
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

#define FLOOR_FEXIT(fn)				\
	SEC("fexit/" #fn)			\
	int BPF_PROG(floor_##fn)		\
	{					\
		return 0;			\
	}

FLOOR_FEXIT(__x64_sys_read)
FLOOR_FEXIT(__x64_sys_readv)
FLOOR_FEXIT(__x64_sys_pread64)
FLOOR_FEXIT(__x64_sys_preadv)
FLOOR_FEXIT(__x64_sys_preadv2)
FLOOR_FEXIT(__x64_sys_write)
FLOOR_FEXIT(__x64_sys_writev)
FLOOR_FEXIT(__x64_sys_pwrite64)
FLOOR_FEXIT(__x64_sys_pwritev)
FLOOR_FEXIT(__x64_sys_pwritev2)
FLOOR_FEXIT(__x64_sys_sendfile64)
FLOOR_FEXIT(__x64_sys_splice)
FLOOR_FEXIT(__x64_sys_copy_file_range)
FLOOR_FEXIT(inet_sendmsg)
FLOOR_FEXIT(inet6_sendmsg)
FLOOR_FEXIT(inet_recvmsg)
FLOOR_FEXIT(inet6_recvmsg)
