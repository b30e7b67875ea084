/* cgroup_stats.h - a job's (or a step's) resource usage read from its
 * cgroup, v1 and v2 alike: CPU time, memory, OOM and limit-hit events,
 * pids, IO and the allocated CPU set.
 *
 * A reader is opened once per cgroup: it opens every counter file it will
 * need and keeps the descriptors, so that each tick is a handful of
 * preads into a buffer the reader owns, with no allocation and no path
 * lookups.  Files that do not exist (a controller the job is not in, an
 * older kernel) leave their fields unmeasured: a field is valid only when
 * its bit is set in `present' -- unknown is not zero. */
#ifndef CEEMS_CGROUP_STATS_H
#define CEEMS_CGROUP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_path.h"
#include "base/number.h"

/* A limit the kernel reports as "max" (v2) or as its page-counter maximum
 * (v1) is stored as this value, with its present bit set. */
#define CEEMS_CGROUP_UNLIMITED UINT64_MAX

/* The most CPUs a cpuset can name; Debian's kernels use NR_CPUS=8192. */
#define CEEMS_CPUSET_MAX_CPUS 8192

struct ceems_cpuset {
	uint64_t bits[CEEMS_CPUSET_MAX_CPUS / 64];
	uint32_t count;		/* number of bits set */
};

/* Bits of ceems_cgroup_stats.present (and .failed), one per field. */
enum ceems_cgroup_field {
	CEEMS_CGF_CPU_USER = 1u << 0,
	CEEMS_CGF_CPU_SYSTEM = 1u << 1,
	CEEMS_CGF_CPU_USAGE = 1u << 2,
	CEEMS_CGF_MEM_CURRENT = 1u << 3,
	CEEMS_CGF_MEM_PEAK = 1u << 4,
	CEEMS_CGF_MEM_RSS = 1u << 5,
	CEEMS_CGF_MEM_CACHE = 1u << 6,
	CEEMS_CGF_MEM_LIMIT = 1u << 7,
	CEEMS_CGF_OOM_KILLS = 1u << 8,
	CEEMS_CGF_MEM_FAILS = 1u << 9,
	CEEMS_CGF_PIDS = 1u << 10,
	CEEMS_CGF_IO_READ_BYTES = 1u << 11,
	CEEMS_CGF_IO_WRITE_BYTES = 1u << 12,
	CEEMS_CGF_IO_READ_OPS = 1u << 13,
	CEEMS_CGF_IO_WRITE_OPS = 1u << 14,
	CEEMS_CGF_CPUSET = 1u << 15,
	CEEMS_CGF_ALL = (1u << 16) - 1,
};

/* Bits of ceems_cgroup_stats.flags: how a present value was obtained. */
enum ceems_cgroup_flag {
	/* mem_peak_bytes is the largest memory.current this reader saw, not
	 * the kernel's watermark (v2 before Linux 5.19 has no memory.peak). */
	CEEMS_CGS_PEAK_SAMPLED = 1u << 0,
	/* cpu_user_ns/cpu_system_ns come from cpuacct.stat, in USER_HZ ticks
	 * (v1 before Linux 4.7 has no cpuacct.usage_user/usage_sys). */
	CEEMS_CGS_CPU_TICKS = 1u << 1,
	/* Some files of this cgroup vanished (a v1 controller's directory was
	 * removed first at job end); what is left was still read. */
	CEEMS_CGS_PARTLY_GONE = 1u << 2,
};

struct ceems_cgroup_stats {
	uint32_t present;	/* enum ceems_cgroup_field: measured fields */
	uint32_t failed;	/* fields whose file exists but was unreadable
				 * or malformed this time (never in present) */
	uint32_t flags;		/* enum ceems_cgroup_flag */

	/* CPU time, cumulative.  cpu_usage_ns is the scheduler's exact total
	 * and is what attribution uses; user and system are a split of
	 * it that the kernel samples at tick granularity, so user + system
	 * is close to, not equal to, the total. */
	uint64_t cpu_user_ns;
	uint64_t cpu_system_ns;
	uint64_t cpu_usage_ns;

	uint64_t mem_current_bytes;	/* charged memory, page cache included */
	uint64_t mem_peak_bytes;
	/* Anonymous memory (v2 memory.stat anon, v1 total_rss): what the
	 * job's processes hold, without page cache.  Transparent huge pages
	 * are already inside both counters and are not added again. */
	uint64_t mem_rss_bytes;
	uint64_t mem_cache_bytes;	/* page cache (v2 file, v1 total_cache) */
	uint64_t mem_limit_bytes;	/* or CEEMS_CGROUP_UNLIMITED */
	uint64_t oom_kills;		/* processes killed by the OOM killer */
	uint64_t mem_fail_count;	/* times usage hit the limit */
	uint64_t pids_current;
	uint64_t io_read_bytes;		/* summed over block devices */
	uint64_t io_write_bytes;
	uint64_t io_read_ops;
	uint64_t io_write_ops;

	uint32_t ncpus_allocated;	/* == cpuset.count */
	struct ceems_cpuset cpuset;
};

/* The directories one reader reads: dir[c] for the v1 controller c,
 * dir[CEEMS_CG_NCONTROLLERS] for the v2 tree; "" = not available. */
#define CEEMS_CGROUP_DIR_MAX 1024
struct ceems_cgroup_dirs {
	enum ceems_cgroup_version version;
	char dir[CEEMS_CG_NCONTROLLERS + 1][CEEMS_CGROUP_DIR_MAX];
};

/* Fill DIRS with the job's directories under the filesystem root PREFIX
 * ("" for the real one), each followed by SUBDIR when it is not NULL or
 * "" (a step: "step_batch", "step_0", "step_extern").  SUBDIR must be a
 * relative path without "." or ".." components.  Returns 0, -ENOENT when
 * no hierarchy holds the job, -EINVAL, -ENAMETOOLONG. */
int ceems_cgroup_stats_dirs_for_job(const struct ceems_cgroup_job *job,
			      const struct ceems_cgroup_mounts *mounts,
			      const char *prefix, const char *subdir,
			      struct ceems_cgroup_dirs *dirs);

struct ceems_cgroup_reader;

/* Open every counter file of the cgroup DIRS.  Returns NULL with *ERR set
 * to -ENOENT when none of the directories exists (the job is gone or was
 * never there), -ENOMEM, or -EINVAL on a bad DIRS. */
struct ceems_cgroup_reader *
ceems_cgroup_stats_reader_open_dirs(const struct ceems_cgroup_dirs *dirs, int *err);

/* The job-level reader: ceems_cgroup_stats_dirs_for_job + open_dirs. */
struct ceems_cgroup_reader *
ceems_cgroup_stats_reader_open(const struct ceems_cgroup_job *job,
			 const struct ceems_cgroup_mounts *mounts,
			 const char *root_prefix, int *err);

/* Read every open file into OUT.  Returns 0 (see OUT->present for what
 * was measured, OUT->failed for what could not be), or -ENODEV when the
 * cgroup has been removed since it was opened and nothing could be read.
 * A file that fails for the first time is logged once as a warning. */
int ceems_cgroup_stats_reader_read(struct ceems_cgroup_reader *reader,
			     struct ceems_cgroup_stats *out);

/* Same, reading only the files that measure a field of WANTED (a mask of
 * enum ceems_cgroup_field), so that a tick can read what attribution
 * needs (CPU usage: one file) and leave costly or slow-moving files
 * (v1 memory.stat costs about 8 us, most others about 1 us) to every Nth
 * tick.  Other fields of the same file may come along.  A sampled peak
 * (CEEMS_CGS_PEAK_SAMPLED) only sees the reads that asked for the peak. */
int ceems_cgroup_stats_reader_read_some(struct ceems_cgroup_reader *reader,
				  uint32_t wanted,
				  struct ceems_cgroup_stats *out);

/* Processes the OOM killer took in the reader's cgroup and every cgroup
 * below it, into *KILLS.  v2: memory.events, which the kernel counts up
 * the tree.  v1: memory.oom_control of each memory cgroup of the subtree
 * (cgroup_oom.c), the kernel counting a kill only where the killed
 * process was.  For a step's or a job's end: a v1 walk costs a few
 * system calls per cgroup.  0, or -ENOENT when no count could be read
 * (the cgroup is gone), -errno. */
int ceems_cgroup_stats_reader_oom_kills(struct ceems_cgroup_reader *reader,
				  uint64_t *kills);

/* cgroup_walk.c: call VISIT(DIRFD, ARG) for the cgroup open on DIRFD and
 * for each cgroup below it, DEPTH levels down, MAX_DIRS in all; a
 * cgroup removed meanwhile is skipped.  VISIT returns false to stop the
 * walk.  DIRFD stays the caller's.  Returns the cgroups visited. */
typedef bool ceems_cgroup_visit_fn(int dirfd, void *arg);
unsigned ceems_cgroup_walk(int dirfd, int depth, unsigned max_dirs,
			   ceems_cgroup_visit_fn *visit, void *arg);

/* cgroup_oom.c: the sum of oom_kill over the cgroup v1 memory cgroup DIR
 * and those below it.  0, -ENOENT when no count could be read, -errno. */
int ceems_cgroup_oom_kills_v1_tree(const char *dir, uint64_t *kills);

/* cgroup v2: Slurm's step daemons run inside the job's cgroup, in the
 * slurm/ sub-cgroup of each step (step_S/slurm, beside the tasks'
 * step_S/user), so the kernel's CPU time of a job or a step counts
 * theirs.  A v2 reader gives its cgroup's CPU time (usage, user, system)
 * less that of the slurm/ cgroups it follows: its own slurm/ (a step's
 * reader) and its step_* /slurm (a job's), found when it is opened and
 * by this call, which looks for those that came since (a step started):
 * a directory listing, for a step's start or a full reading, not every
 * tick.  A step's slurm/ removed with its step stays subtracted as last
 * read; the CPU time given never goes back.  Returns how many were
 * added; 0 on v1, where slurmstepd is outside the job's cgroup. */
unsigned ceems_cgroup_stats_reader_rescan(struct ceems_cgroup_reader *reader);

/* Number of files the reader keeps open (for the caller's fd budget). */
unsigned ceems_cgroup_stats_reader_nfiles(const struct ceems_cgroup_reader *reader);

/* The inode of the file the reader reads the CPU usage from: the same
 * cgroup keeps it, a cgroup removed and made again under the same name
 * (a new job) has another.  0 or -errno. */
int ceems_cgroup_stats_reader_cpu_ino(const struct ceems_cgroup_reader *reader,
				uint64_t *ino);
void ceems_cgroup_stats_reader_close(struct ceems_cgroup_reader *reader);

/* ---- Pure parsers of the kernel's text formats (fuzzable) ----
 * TEXT is NUL-terminated.  Each returns 0, -EINVAL on malformed text,
 * -ERANGE on a number that does not fit or a CPU beyond the maximum,
 * -ENODATA when a keyed file has none of the wanted keys.  On error the
 * output fields and present bits are left as they were. */

/* ceems_number_parse_u64 (number.h), or "max" meaning CEEMS_CGROUP_UNLIMITED. */
int ceems_cgroup_parse_u64_or_max(const char *text, uint64_t *out);

/* A flat keyed file ("key value" lines).  VALUES[i] and bit i of *FOUND
 * are set for each KEYS[i] present (NKEYS <= 32).  Every line must be a
 * key, a space and a value; only the wanted keys' values must be
 * unsigned decimals, and none may appear twice. */
int ceems_cgroup_parse_flat_keyed(const char *text, const char *const *keys,
			   size_t nkeys, uint64_t *values, uint32_t *found);

/* v2 cpu.stat: usage_usec, user_usec, system_usec. */
int ceems_cgroup_parse_cgroup2_cpu_stat(const char *text,
				 struct ceems_cgroup_stats *st);
/* v2 memory.stat: anon, file. */
int ceems_cgroup_parse_cgroup2_memory_stat(const char *text,
				    struct ceems_cgroup_stats *st);
/* v2 memory.events: oom_kill, max. */
int ceems_cgroup_parse_cgroup2_memory_events(const char *text,
				      struct ceems_cgroup_stats *st);
/* v2 io.stat ("MAJ:MIN rbytes=N wbytes=N rios=N wios=N ..."), summed
 * over devices; an empty file is a cgroup that did no IO. */
int ceems_cgroup_parse_cgroup2_io_stat(const char *text,
				struct ceems_cgroup_stats *st);
/* v1 cpuacct.stat ("user T\nsystem T", T in CLK_TCK ticks per second). */
int ceems_cgroup_parse_cgroup1_cpuacct_stat(const char *text, long clk_tck,
				     struct ceems_cgroup_stats *st);
/* v1 memory.stat: total_rss, total_cache (hierarchical: a job's own
 * rss/cache lines are 0, its tasks live in child cgroups). */
int ceems_cgroup_parse_cgroup1_memory_stat(const char *text,
				    struct ceems_cgroup_stats *st);
/* The next process id of the cgroup.procs text at *CURSOR (ids one per
 * line), *CURSOR moved past it.  False at the text's end or at a line
 * that is no id; a 0 or an id beyond 32 bits is skipped. */
bool ceems_cgroup_parse_next_pid(const char **cursor, uint32_t *pid);

/* v1 memory.oom_control: oom_kill (Linux >= 4.13). */
int ceems_cgroup_parse_cgroup1_oom_control(const char *text,
				    struct ceems_cgroup_stats *st);
/* v1 memory.limit_in_bytes: the page-counter maximum is unlimited. */
int ceems_cgroup_parse_cgroup1_limit(const char *text, uint64_t *out);
/* v1 blkio.*io_service_bytes* / *io_serviced* ("MAJ:MIN Op N" lines and
 * a final "Total N"): Read and Write summed over devices. */
int ceems_cgroup_parse_cgroup1_blkio(const char *text, uint64_t *read_sum,
			      uint64_t *write_sum);
/* A CPU list as the kernel prints it: "0-3,8,10-11\n"; "" is empty. */
int ceems_cgroup_parse_cpu_list(const char *text, struct ceems_cpuset *set);

bool ceems_cgroup_parse_cpuset_has(const struct ceems_cpuset *set, unsigned cpu);

#endif
