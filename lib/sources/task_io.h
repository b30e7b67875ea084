/* task_io.h - a job's IO counted once per tick from the kernel's own
 * per-process IO counters (/proc/PID/io), with no hook on any call: the
 * `ebpf = per-tick` mode (doc/gather.md).
 *
 * The kernel counts, for every task, the bytes its read and write
 * system calls moved and the calls themselves (rchar, wchar, syscr,
 * syscw), on any descriptor: files, but also pipes, sockets and
 * terminals (send, recv and their kin on sockets are not counted, nor
 * memory-mapped IO).  /proc/PID/io sums the process's threads, its threads that
 * have exited, and every child it has reaped (wait_task_zombie adds the
 * child's counts, its own reaped children's included, to its parent's).
 * So a job's IO is what its live processes show, plus what the
 * processes that left it between two readings had shown, unless a
 * process of the job reaped them (then its own counter took them).
 * A tracker (struct ceems_task_io_job) keeps, for each process it saw,
 * its last counts and its parent, and turns a tick's readings into the
 * job's running total:
 *   - a process seen for the first time adds all it shows (it was
 *     forked in the job), or nothing on the tracker's first reading
 *     after an agent restart (BASELINE: the earlier agent counted it);
 *   - a process seen again adds its growth since;
 *   - a process gone (exited and reaped) has added its last counts;
 *     if its parent (or the nearest of its ancestors still seen) is a
 *     counted process, that parent's counter grows by the child's final
 *     counts when it reaps it: that growth, up to what the child had
 *     already added, is not counted twice (a debt the parent's growth
 *     pays, kept for two readings, then forgiven: a child the parent
 *     never reaps, as when it ignores SIGCHLD, does not hide the
 *     parent's own IO for ever); the rest of the growth is the
 *     child's tail and the parent's own IO, both the job's;
 *   - a gone process whose parent is not counted (slurmstepd, root) had
 *     done more since the last reading: when that parent's counter has
 *     grown by at least what the process had added, in the reading
 *     where it does (it reaped the process then), the rest of its
 *     growth is counted: the process's tail, with the parent's own IO
 *     in that interval (slurmstepd's: kilobytes of messages to slurmd
 *     and the plugins).  A parent outside the job's cgroup, or one that
 *     never reaps (the process was reparented, or SIGCHLD ignored),
 *     leaves the tail lost: at most a tick of that process's IO.
 * Processes not counted (COUNTED false: not running as the job's user)
 * are kept only as parents and reapers. */
#ifndef CEEMS_TASK_IO_H
#define CEEMS_TASK_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What /proc/PID/io says of a process (its threads, dead threads and
 * reaped children summed): bytes and calls of read and write system
 * calls on any descriptor. */
struct ceems_task_io_counts {
	uint64_t rchar, wchar, syscr, syscw;
};

/* Parse a /proc/PID/io text: its rchar, wchar, syscr and syscw lines
 * ("name: N"), others skipped.  0, -EINVAL (a line malformed, or one
 * of the four missing), -ERANGE. */
int ceems_task_io_parse(const char *text, struct ceems_task_io_counts *out);

/* One process of a job, as read at a tick. */
struct ceems_task_io_sample {
	uint32_t pid;
	uint32_t ppid;
	uint64_t start;			/* when it started: a pid reused */
	uint32_t uid;			/* its real uid */
	bool counted;			/* runs as the job's user */
	struct ceems_task_io_counts c;
};

struct ceems_task_io_job;

/* A tracker for one job; NULL when out of memory.  BASELINE: the first
 * reading's processes add nothing (their past was counted before). */
struct ceems_task_io_job *ceems_task_io_job_new(bool baseline);
void ceems_task_io_job_free(struct ceems_task_io_job *t);

/* A tick's reading, every process of the job seen now (N of them, in
 * any order; S is sorted in place), into the job's running total
 * *TOTAL, which only grows.  0, or -ENOMEM (the reading is not taken:
 * the next one counts what this one would have, but what leaves in
 * between). */
int ceems_task_io_job_update(struct ceems_task_io_job *t,
			     struct ceems_task_io_sample *s, size_t n);
void ceems_task_io_job_total(const struct ceems_task_io_job *t,
			     struct ceems_task_io_counts *total);

/* Process PID of the /proc tree PROCFS read into *S (its counted flag
 * from its real uid being UID).  0, or -errno: -ENOENT it has gone,
 * -EACCES its io file is not readable (another user's process without
 * CAP_SYS_PTRACE). */
int ceems_task_io_read_pid(const char *procfs, uint32_t pid, uint32_t uid,
			   struct ceems_task_io_sample *s);

/* The same counters through a BPF task iterator (bpf/ceems_task.bpf.c,
 * lib/sources/task_iter.c), which the node agent uses: another user's
 * /proc/PID/io passes a ptrace check that an agent confined by Landlock
 * fails whatever its capabilities.  Open loads it (CAP_BPF and
 * CAP_PERFMON; NULL with WHY); read takes every process of the node
 * (0 or -errno); find gives process PID of the last read, its counted
 * flag from UID (0, -ENOENT). */
struct ceems_task_iter;
struct ceems_task_iter *ceems_task_iter_open(char *why, size_t why_size);
void ceems_task_iter_close(struct ceems_task_iter *it);
int ceems_task_iter_read(struct ceems_task_iter *it);
int ceems_task_iter_find(const struct ceems_task_iter *it, uint32_t pid,
			 uint32_t uid, struct ceems_task_io_sample *s);

#endif
