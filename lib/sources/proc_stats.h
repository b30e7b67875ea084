/* proc_stats.h - the node's CPU time (/proc/stat) and memory
 * (/proc/meminfo), the denominators of the per-job shares.  The procfs
 * root is configurable so tests read fixture files; the files are opened
 * once and pread each tick. */
#ifndef CEEMS_PROC_STATS_H
#define CEEMS_PROC_STATS_H

#include <stdint.h>
#include <sys/types.h>

/* Node CPU time since boot, summed over CPUs, in ns.
 * busy_ns = user + nice + system + irq + softirq: the work this node's
 * CPUs did.  Guest time is already inside user and nice, so it is not
 * added.  iowait is idle time (a CPU waiting on IO runs nothing).  steal
 * is time the hypervisor gave to someone else: neither busy nor idle of
 * this node, so it is kept out of total_ns and reported on its own. */
struct ceems_node_cpu {
	uint64_t user_ns, nice_ns, system_ns, idle_ns, iowait_ns;
	uint64_t irq_ns, softirq_ns, steal_ns;
	uint64_t busy_ns;
	uint64_t total_ns;	/* busy + idle + iowait */
	uint32_t ncpus;		/* "cpuN" lines: the CPUs online now */
};

/* Bits of ceems_node_mem.present. */
enum ceems_node_mem_field {
	CEEMS_NMF_TOTAL = 1u << 0,
	CEEMS_NMF_FREE = 1u << 1,
	CEEMS_NMF_AVAILABLE = 1u << 2,	/* Linux >= 3.14 */
	CEEMS_NMF_BUFFERS = 1u << 3,
	CEEMS_NMF_CACHED = 1u << 4,
	CEEMS_NMF_ANON_PAGES = 1u << 5,
	CEEMS_NMF_SHMEM = 1u << 6,
	CEEMS_NMF_SWAP_TOTAL = 1u << 7,
	CEEMS_NMF_SWAP_FREE = 1u << 8,
};

/* Node memory in bytes; a field is valid only when its bit is set. */
struct ceems_node_mem {
	uint32_t present;
	uint64_t total, free, available, buffers, cached, anon_pages, shmem;
	uint64_t swap_total, swap_free;
};

/* Parse /proc/stat's "cpu" and "cpuN" lines (the lines after them are
 * not looked at, so TEXT may be only the head of the file, as long as
 * it holds the line that follows the last cpuN line).  The cpuN lines
 * are only counted: each must be "cpuN " and then digits and spaces only,
 * but its fields are neither converted nor counted.  CLK_TCK: ticks per second of the counters
 * (sysconf(_SC_CLK_TCK)).  Returns 0, -EINVAL on malformed or truncated
 * text, -ERANGE on overflow of the "cpu" line's figures. */
int ceems_proc_stats_parse_proc_stat(const char *text, long clk_tck,
			  struct ceems_node_cpu *out);

/* Parse /proc/meminfo.  Lines we do not use are skipped whatever their
 * value; the wanted ones must be "Key: N kB".  Returns 0, -EINVAL,
 * -ERANGE, -ENODATA without MemTotal. */
int ceems_proc_stats_parse_proc_meminfo(const char *text, struct ceems_node_mem *out);

/* The real uid of a process: the first figure of the "Uid:" line of its
 * /proc/PID/status text (real, effective, saved, filesystem uids, tabs
 * between).  Returns 0, -EINVAL (no such line, or not a uid), -ERANGE. */
int ceems_proc_stats_parse_proc_status_uid(const char *text, uint32_t *uid);

/* When a process started, in clock ticks since boot: field 22 of its
 * /proc/PID/stat text, counted after the command's closing parenthesis
 * (a command may hold spaces and parentheses).  Returns 0, -EINVAL (too
 * few fields, or not a number), -ERANGE. */
int ceems_proc_stats_parse_pid_start(const char *text, uint64_t *ticks);
/* Numeric field WANT (3 or more: the state, field 3, is a letter and
 * fails) of a /proc/PID/stat text, counted as above: 4 the parent's pid,
 * 22 the start.  The same returns. */
int ceems_proc_stats_parse_pid_field(const char *text, int want, uint64_t *out);

/* Of process PID of the /proc tree PROCFS (a fixture's in tests): its
 * real uid, from its status file (world-readable whatever the process's
 * dumpable flag; the owner of /proc/PID is its effective uid), and its
 * start in clock ticks since boot, from its stat file.  0 or -errno
 * (-ENOENT: no such process). */
int ceems_proc_stats_pid_uid(const char *procfs, uint32_t pid, uint32_t *uid);
int ceems_proc_stats_pid_start(const char *procfs, uint32_t pid, uint64_t *ticks);
/* PROCFS/PID/NAME into BUF (SIZE bytes, NUL-terminated).  The length,
 * or -errno. */
ssize_t ceems_proc_stats_read_pid_file(const char *procfs, uint32_t pid,
				       const char *name, char *buf, size_t size);

struct ceems_proc_reader;

/* Open PROCFS_ROOT/stat and PROCFS_ROOT/meminfo (PROCFS_ROOT "/proc" or
 * a fixture directory).  Returns NULL with *ERR = -errno on failure. */
struct ceems_proc_reader *ceems_proc_stats_reader_open(const char *procfs_root,
						 int *err);

/* Each returns 0 or a negative errno; OUT is untouched on error. */
int ceems_proc_stats_read_cpu(struct ceems_proc_reader *reader,
			struct ceems_node_cpu *out);
int ceems_proc_stats_read_mem(struct ceems_proc_reader *reader,
			struct ceems_node_mem *out);

void ceems_proc_stats_reader_close(struct ceems_proc_reader *reader);

#endif
