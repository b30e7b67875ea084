/* SPDX-License-Identifier: GPL-2.0-only */
/* ceems_task.bpf.c - a task iterator for `ebpf = per-tick`: run only when
 * the node agent reads it (once per tick, lib/sources/task_iter.c), it
 * writes each thread's IO counters (rchar, wchar, syscr, syscw: what
 * /proc/PID/io sums), with its process, parent, uid and start.  No hook
 * on any call: the kernel keeps these counters for every task anyway.
 * Through BPF rather than /proc: another user's /proc/PID/io passes a
 * ptrace check that the agent, confined by Landlock and without
 * CAP_SYS_PTRACE, fails. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ceems_task.h"

char LICENSE[] SEC("license") = "GPL";

SEC("iter/task")
int task_io(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct ceems_task_rec r = { 0 };

	if (task == NULL)
		return 0;
	r.tgid = BPF_CORE_READ(task, tgid);
	r.ppid = BPF_CORE_READ(task, real_parent, tgid);
	r.uid = BPF_CORE_READ(task, cred, uid.val);
	r.start = BPF_CORE_READ(task, group_leader, start_boottime);
	r.rchar = BPF_CORE_READ(task, ioac.rchar);
	r.wchar = BPF_CORE_READ(task, ioac.wchar);
	r.syscr = BPF_CORE_READ(task, ioac.syscr);
	r.syscw = BPF_CORE_READ(task, ioac.syscw);
	if (BPF_CORE_READ(task, pid) == r.tgid) {
		r.rchar += BPF_CORE_READ(task, signal, ioac.rchar);
		r.wchar += BPF_CORE_READ(task, signal, ioac.wchar);
		r.syscr += BPF_CORE_READ(task, signal, ioac.syscr);
		r.syscw += BPF_CORE_READ(task, signal, ioac.syscw);
	}
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}
