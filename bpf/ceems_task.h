/* ceems_task.h - the record the task iterator of ceems_task.bpf.c writes
 * for each thread of the node, and its reader (lib/sources/task_iter.c)
 * reads.  Plain fixed-width types: read by clang -target bpf (after
 * vmlinux.h) and by the host compiler (after <linux/types.h>). */
#ifndef CEEMS_TASK_BPF_SHARED_H
#define CEEMS_TASK_BPF_SHARED_H

/* One thread: its process (tgid), the process's parent and real uid,
 * when its thread group's leader started (ns since boot), and its IO
 * counters; a leader's record adds its process's signal counters (the
 * threads that exited and the children it reaped), so that the sum over
 * a process's records is what /proc/PID/io says. */
struct ceems_task_rec {
	__u32 tgid;
	__u32 ppid;
	__u32 uid;
	__u32 pad;
	__u64 start;
	__u64 rchar, wchar, syscr, syscw;
};

#endif
