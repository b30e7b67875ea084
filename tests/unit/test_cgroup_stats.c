/* test_cgroup_stats.c - per-job and per-step usage from cgroup v1 and v2
 * fixture trees (Debian's per-node Slurm names, a multiple-slurmd host),
 * the parsers' answers to malformed text, damaged copies of the trees,
 * and, when run as root on a v1 host, a real cgroup removed under an
 * open reader. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup_stats.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"

static char buf[16384];

static const uint32_t V1_JOB_FIELDS =
	CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM | CEEMS_CGF_CPU_USAGE |
	CEEMS_CGF_MEM_CURRENT | CEEMS_CGF_MEM_PEAK | CEEMS_CGF_MEM_RSS |
	CEEMS_CGF_MEM_CACHE | CEEMS_CGF_MEM_LIMIT | CEEMS_CGF_OOM_KILLS |
	CEEMS_CGF_MEM_FAILS | CEEMS_CGF_CPUSET;
static const uint32_t IO_FIELDS =
	CEEMS_CGF_IO_READ_BYTES | CEEMS_CGF_IO_WRITE_BYTES |
	CEEMS_CGF_IO_READ_OPS | CEEMS_CGF_IO_WRITE_OPS;

/* Counts warnings, to check that a bad file is logged once. */
static int warnings;
static void
count_warnings(enum ceems_log_level level, const char *msg, void *arg)
{
	(void)arg;
	if (level == CEEMS_LOG_WARNING)
		warnings++;
	printf("# log: %s\n", msg);
}

/* The job of the /proc/PID/cgroup fixture CGFILE, on the mounts of
 * MOUNTINFO. */
static void
load_job(const char *cgfile, uint32_t jobid, const char *mountinfo,
	 struct ceems_cgroup_job *job, struct ceems_cgroup_mounts *mounts)
{
	if (ceems_cgroup_path_job_from_proc(fixture_text(cgfile, buf, sizeof(buf)),
				       jobid, job) != 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(fixture_text(mountinfo, buf,
							    sizeof(buf)),
					       mounts) != 0) {
		printf("Bail out! cannot resolve the job of %s\n", cgfile);
		exit(1);
	}
}

/* Open a reader on JOB's directory SUBDIR (NULL: the job) under PREFIX. */
static struct ceems_cgroup_reader *
open_at(const struct ceems_cgroup_job *job,
	const struct ceems_cgroup_mounts *mounts, const char *prefix,
	const char *subdir, int *err)
{
	struct ceems_cgroup_dirs dirs;

	*err = ceems_cgroup_stats_dirs_for_job(job, mounts, prefix, subdir, &dirs);
	if (*err < 0)
		return NULL;
	return ceems_cgroup_stats_reader_open_dirs(&dirs, err);
}

/* ---------------------------------------------------------------- */

static void
test_parse_numbers(void)
{
	uint64_t v = 7;

	is_int(ceems_number_parse_u64("123\n", &v), 0, "u64: with newline");
	is_int(v, 123, "u64: value");
	is_int(ceems_number_parse_u64("0", &v), 0, "u64: without newline");
	is_int(ceems_number_parse_u64("18446744073709551615\n", &v), 0, "u64: max fits");
	ok(v == UINT64_MAX, "u64: max value");
	v = 7;
	is_int(ceems_number_parse_u64("18446744073709551616\n", &v), -ERANGE, "u64: max+1 overflows");
	is_int(ceems_number_parse_u64("99999999999999999999999\n", &v), -ERANGE, "u64: 99999999999999999999999");
	is_int(ceems_number_parse_u64("-1\n", &v), -EINVAL, "u64: negative");
	is_int(ceems_number_parse_u64("", &v), -EINVAL, "u64: empty");
	is_int(ceems_number_parse_u64("\n", &v), -EINVAL, "u64: only newline");
	is_int(ceems_number_parse_u64(" 1\n", &v), -EINVAL, "u64: leading space");
	is_int(ceems_number_parse_u64("12a\n", &v), -EINVAL, "u64: trailing garbage");
	is_int(ceems_number_parse_u64("1\n\n", &v), -EINVAL, "u64: two newlines");
	is_int(ceems_number_parse_u64("max\n", &v), -EINVAL, "u64: max is not a number");
	is_int(v, 7, "u64: output untouched on errors");
	is_int(ceems_cgroup_parse_u64_or_max("max\n", &v), 0, "u64_or_max: max");
	ok(v == CEEMS_CGROUP_UNLIMITED, "u64_or_max: max is unlimited");
	is_int(ceems_cgroup_parse_u64_or_max("4096\n", &v), 0, "u64_or_max: number");
	is_int(v, 4096, "u64_or_max: value");
	is_int(ceems_cgroup_parse_u64_or_max("maxx\n", &v), -EINVAL, "u64_or_max: maxx");
	is_int(ceems_cgroup_parse_cgroup1_limit("9223372036854771712\n", &v), 0, "v1 limit: no-limit value");
	ok(v == CEEMS_CGROUP_UNLIMITED, "v1 limit: page-counter max is unlimited");
	is_int(ceems_cgroup_parse_cgroup1_limit("1073741824\n", &v), 0, "v1 limit: 1 GiB");
	is_int(v, 1073741824, "v1 limit: value");
}

static void
test_parse_keyed(void)
{
	struct ceems_cgroup_stats st;
	static const char *const keys[] = { "a", "b" };
	uint64_t vals[2] = { 0, 0 };
	uint32_t found;

	is_int(ceems_cgroup_parse_flat_keyed("a 1\nzz junk\nb 2\n", keys, 2, vals, &found), 0,
	       "keyed: unknown keys with any value skipped");
	ok(found == 3 && vals[0] == 1 && vals[1] == 2, "keyed: both found");
	is_int(ceems_cgroup_parse_flat_keyed("a 1\na 2\n", keys, 2, vals, &found), -EINVAL, "keyed: duplicate");
	is_int(ceems_cgroup_parse_flat_keyed("a\n", keys, 2, vals, &found), -EINVAL, "keyed: no value");
	is_int(ceems_cgroup_parse_flat_keyed("a \n", keys, 2, vals, &found), -EINVAL, "keyed: empty value");
	is_int(ceems_cgroup_parse_flat_keyed("a -1\n", keys, 2, vals, &found), -EINVAL, "keyed: negative");
	is_int(ceems_cgroup_parse_flat_keyed("a 1 2\n", keys, 2, vals, &found), -EINVAL, "keyed: two values");
	is_int(ceems_cgroup_parse_flat_keyed("a 1\n\nb 2\n", keys, 2, vals, &found), -EINVAL, "keyed: blank line");
	is_int(ceems_cgroup_parse_flat_keyed("garbage\n", keys, 2, vals, &found), -EINVAL, "keyed: garbage line");
	is_int(ceems_cgroup_parse_flat_keyed("a 99999999999999999999999\n", keys, 2, vals, &found), -ERANGE,
	       "keyed: overflow");
	is_int(ceems_cgroup_parse_flat_keyed("b 5", keys, 2, vals, &found), 0, "keyed: no final newline");
	ok(found == 2 && vals[1] == 5, "keyed: b only");

	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup2_cpu_stat("usage_usec 18446744073709552\nuser_usec 1\n", &st), -ERANGE,
	       "cpu.stat: usec that overflows in ns");
	is_int(st.present, 0, "cpu.stat: nothing set on error");
	is_int(ceems_cgroup_parse_cgroup2_cpu_stat("nr_periods 0\n", &st), -ENODATA, "cpu.stat: no wanted key");
	is_int(ceems_cgroup_parse_cgroup2_cpu_stat("usage_usec 5\n", &st), 0, "cpu.stat: usage only");
	is_int(st.present, CEEMS_CGF_CPU_USAGE, "cpu.stat: only usage present");
	is_int(st.cpu_usage_ns, 5000, "cpu.stat: usec to ns");

	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup1_cpuacct_stat("user 218\nsystem 29\n", 100, &st), 0, "cpuacct.stat: parsed");
	is_int(st.cpu_user_ns, UINT64_C(2180000000), "cpuacct.stat: 218 ticks at 100 Hz");
	is_int(st.cpu_system_ns, UINT64_C(290000000), "cpuacct.stat: 29 ticks");
	is_int(ceems_cgroup_parse_cgroup1_cpuacct_stat("user 3\nsystem 1\n", 300, &st), 0, "cpuacct.stat: 300 Hz");
	is_int(st.cpu_user_ns, 10000000, "cpuacct.stat: 3 ticks at 300 Hz = 10 ms");
	is_int(st.cpu_system_ns, 3333333, "cpuacct.stat: 1 tick at 300 Hz, rounded down");
	is_int(ceems_cgroup_parse_cgroup1_cpuacct_stat("user 1\n", 0, &st), -EINVAL, "cpuacct.stat: CLK_TCK 0");
	is_int(ceems_cgroup_parse_cgroup1_cpuacct_stat("user 18446744073709551615\n", 100, &st), -ERANGE,
	       "cpuacct.stat: overflow in ns");

	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup2_memory_events("low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n", &st), 0,
	       "memory.events: parsed");
	ok(st.oom_kills == 1 && st.mem_fail_count == 7, "memory.events: oom_kill and max");
	is_int(ceems_cgroup_parse_cgroup2_memory_events("low 0\nhigh 0\nmax 7\noom_kill", &st), -EINVAL,
	       "memory.events: truncated in a line");
	is_int(ceems_cgroup_parse_cgroup1_oom_control("oom_kill_disable 0\nunder_oom 0\n", &st), -ENODATA,
	       "oom_control before 4.13: no oom_kill");
}

static void
test_parse_io(void)
{
	struct ceems_cgroup_stats st;
	uint64_t r = 9, w = 9;

	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup2_io_stat("259:0 rbytes=10 wbytes=20 rios=1 wios=2 dbytes=0 dios=0\n"
					   "8:0 rbytes=5 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n", &st), 0,
	       "io.stat: two devices");
	ok(st.io_read_bytes == 15 && st.io_write_bytes == 20 && st.io_read_ops == 2 && st.io_write_ops == 2,
	   "io.stat: summed over devices");
	is_int(st.present, IO_FIELDS, "io.stat: the four IO fields present");
	is_int(ceems_cgroup_parse_cgroup2_io_stat("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0 "
					   "cost.vrate=100.00 cost.usage=12 cost.wait=0 cost.indebt=0\n", &st), 0,
	       "io.stat: iocost keys with decimals skipped");
	is_int(st.io_write_ops, 4, "io.stat: wios with iocost");
	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup2_io_stat("", &st), 0, "io.stat: empty = no IO yet");
	ok(st.present == IO_FIELDS && st.io_read_bytes == 0, "io.stat: empty gives measured zeros");
	memset(&st, 0, sizeof(st));
	is_int(ceems_cgroup_parse_cgroup2_io_stat("garbage\n", &st), -EINVAL, "io.stat: garbage");
	is_int(ceems_cgroup_parse_cgroup2_io_stat("8:0 rbytes\n", &st), -EINVAL, "io.stat: key without =");
	is_int(ceems_cgroup_parse_cgroup2_io_stat("8:0 rbytes=-1\n", &st), -EINVAL, "io.stat: negative");
	is_int(ceems_cgroup_parse_cgroup2_io_stat("8 rbytes=1\n", &st), -EINVAL, "io.stat: bad device number");
	is_int(ceems_cgroup_parse_cgroup2_io_stat("8:0 rbytes=18446744073709551615\n8:1 rbytes=1\n", &st), -ERANGE,
	       "io.stat: sum overflow");
	is_int(st.present, 0, "io.stat: nothing set on errors");

	is_int(ceems_cgroup_parse_cgroup1_blkio(fixture_text("cgroup/v1/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes_recursive",
						      buf, sizeof(buf)), &r, &w), 0, "blkio bytes: parsed");
	is_int(r, 1052672 + 524288000, "blkio bytes: Read summed over devices");
	is_int(w, 4096 + 73400320, "blkio bytes: Write summed, Total lines not added");
	is_int(ceems_cgroup_parse_cgroup1_blkio("Total 0\n", &r, &w), 0, "blkio: an idle cgroup");
	ok(r == 0 && w == 0, "blkio: zeros");
	r = w = 9;
	is_int(ceems_cgroup_parse_cgroup1_blkio("8:0 Read\n", &r, &w), -EINVAL, "blkio: no value");
	is_int(ceems_cgroup_parse_cgroup1_blkio("Total 5\n8:0 Read 1\n", &r, &w), -EINVAL, "blkio: line after Total");
	is_int(ceems_cgroup_parse_cgroup1_blkio("8:0 Read 99999999999999999999999\n", &r, &w), -ERANGE,
	       "blkio: overflow");
	is_int(ceems_cgroup_parse_cgroup1_blkio("8:0 Read 18446744073709551615\n8:1 Read 1\n", &r, &w), -ERANGE,
	       "blkio: sum overflow");
	ok(r == 9 && w == 9, "blkio: outputs untouched on errors");
}

static void
test_parse_cpu_list(void)
{
	static struct ceems_cpuset set;

	is_int(ceems_cgroup_parse_cpu_list("0-3,8,10-11\n", &set), 0, "cpu list: ranges and singles");
	is_int(set.count, 7, "cpu list: 7 CPUs");
	ok(ceems_cgroup_parse_cpuset_has(&set, 8) && !ceems_cgroup_parse_cpuset_has(&set, 9) && ceems_cgroup_parse_cpuset_has(&set, 11) &&
	   !ceems_cgroup_parse_cpuset_has(&set, 12), "cpu list: membership");
	is_int(ceems_cgroup_parse_cpu_list("1,1,0-1\n", &set), 0, "cpu list: overlaps");
	is_int(set.count, 2, "cpu list: overlaps counted once");
	is_int(ceems_cgroup_parse_cpu_list("0-8191\n", &set), 0, "cpu list: the largest set");
	is_int(set.count, 8192, "cpu list: 8192 CPUs");
	is_int(ceems_cgroup_parse_cpu_list("\n", &set), 0, "cpu list: empty line");
	is_int(set.count, 0, "cpu list: empty set");
	is_int(ceems_cgroup_parse_cpu_list("3\n", &set), 0, "cpu list: one CPU");
	is_int(ceems_cgroup_parse_cpu_list("8192\n", &set), -ERANGE, "cpu list: CPU 8192 out of range");
	is_int(ceems_cgroup_parse_cpu_list("0-99999999999999999999999\n", &set), -ERANGE, "cpu list: overflow");
	is_int(ceems_cgroup_parse_cpu_list("3-1\n", &set), -EINVAL, "cpu list: reversed range");
	is_int(ceems_cgroup_parse_cpu_list("1,,2\n", &set), -EINVAL, "cpu list: empty item");
	is_int(ceems_cgroup_parse_cpu_list("1-\n", &set), -EINVAL, "cpu list: open range");
	is_int(ceems_cgroup_parse_cpu_list(",1\n", &set), -EINVAL, "cpu list: leading comma");
	is_int(ceems_cgroup_parse_cpu_list("1,\n", &set), -EINVAL, "cpu list: trailing comma");
	is_int(ceems_cgroup_parse_cpu_list("0-3:2/4\n", &set), -EINVAL, "cpu list: stride syntax refused");
	is_int(ceems_cgroup_parse_cpu_list("-1\n", &set), -EINVAL, "cpu list: negative");
	is_int(ceems_cgroup_parse_cpu_list("garbage", &set), -EINVAL, "cpu list: garbage");
	ok(set.count == 1 && ceems_cgroup_parse_cpuset_has(&set, 3), "cpu list: set untouched by every failure");
}

/* ---------------------------------------------------------------- */

static void
test_v1_job_and_steps(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	char prefix[4096];
	int err;

	load_job("cgroup/v1/cgroup-localhost-batch.txt", 42, "cgroup/v1/mountinfo.txt", &job, &mnt);
	snprintf(prefix, sizeof(prefix), "%s", fixture_path("cgroup/v1"));

	r = ceems_cgroup_stats_reader_open(&job, &mnt, prefix, &err);
	ok(r != NULL && err == 0, "v1 job 42: reader opened from /proc/PID/cgroup and mountinfo");
	if (r == NULL)
		return;
	is_int(ceems_cgroup_stats_reader_nfiles(r), 10, "v1: 3 cpuacct + 6 memory + 1 cpuset files kept open");
	is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v1: read");
	is_int(st.present, V1_JOB_FIELDS, "v1: everything but pids and IO (Slurm uses neither)");
	is_int(st.failed, 0, "v1: nothing failed");
	is_int(st.flags, 0, "v1: exact values, no fallbacks");
	is_int(st.cpu_usage_ns, UINT64_C(2483101234), "v1: cpuacct.usage");
	is_int(st.cpu_user_ns, UINT64_C(2180000000), "v1: cpuacct.usage_user (ns, not ticks)");
	is_int(st.cpu_system_ns, UINT64_C(290000000), "v1: cpuacct.usage_sys");
	is_int(st.mem_current_bytes, 157286400, "v1: memory.usage_in_bytes");
	is_int(st.mem_peak_bytes, 209715200, "v1: memory.max_usage_in_bytes");
	is_int(st.mem_limit_bytes, 1073741824, "v1: memory.limit_in_bytes");
	is_int(st.mem_rss_bytes, 134217728, "v1: rss = total_rss (job's own rss line is 0; rss_huge inside)");
	is_int(st.mem_cache_bytes, 20971520, "v1: cache = total_cache");
	is_int(st.mem_fail_count, 3, "v1: memory.failcnt");
	is_int(st.oom_kills, 1, "v1: oom_control oom_kill");
	is_int(st.ncpus_allocated, 3, "v1: cpuset 2-3,6 is 3 CPUs");
	ok(ceems_cgroup_parse_cpuset_has(&st.cpuset, 6) && !ceems_cgroup_parse_cpuset_has(&st.cpuset, 4), "v1: cpuset bits");
	is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v1: second read of the same fds");
	is_int(st.cpu_usage_ns, UINT64_C(2483101234), "v1: same value again");
	is_int(ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_CPU_USAGE, &st), 0, "v1: read CPU usage only");
	is_int(st.present, CEEMS_CGF_CPU_USAGE, "v1: one file read, one field present");
	is_int(st.cpu_usage_ns, UINT64_C(2483101234), "v1: usage from the partial read");
	is_int(ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_MEM_RSS | CEEMS_CGF_CPUSET, &st), 0,
	       "v1: read rss and cpuset only");
	is_int(st.present, CEEMS_CGF_MEM_RSS | CEEMS_CGF_MEM_CACHE | CEEMS_CGF_CPUSET,
	       "v1: memory.stat brings cache along, nothing else read");
	ceems_cgroup_stats_reader_close(r);

	r = open_at(&job, &mnt, prefix, "step_batch", &err);
	ok(r != NULL, "v1 step_batch: reader opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v1 step_batch: read");
		is_int(st.present, V1_JOB_FIELDS, "v1 step_batch: same fields as the job");
		is_int(st.cpu_usage_ns, UINT64_C(2401000000), "v1 step_batch: its own CPU time");
		is_int(st.mem_rss_bytes, 130023424, "v1 step_batch: its own rss");
		is_int(st.mem_fail_count, 2, "v1 step_batch: its own failcnt");
		ceems_cgroup_stats_reader_close(r);
	}
	r = open_at(&job, &mnt, prefix, "step_extern", &err);
	ok(r != NULL, "v1 step_extern: reader opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v1 step_extern: read");
		is_int(st.cpu_usage_ns, 1503111, "v1 step_extern: CPU time");
		is_int(st.mem_rss_bytes, 73728, "v1 step_extern: rss");
		ceems_cgroup_stats_reader_close(r);
	}
	r = open_at(&job, &mnt, prefix, "step_0", &err);
	ok(r == NULL && err == -ENOENT, "v1: a step that does not exist is -ENOENT");
	r = open_at(&job, &mnt, prefix, "../job_41", &err);
	ok(r == NULL && err == -EINVAL, "v1: a step path with .. is refused");
	r = open_at(&job, &mnt, prefix, "/step_batch", &err);
	ok(r == NULL && err == -EINVAL, "v1: an absolute step path is refused");
	r = open_at(&job, &mnt, prefix, "step_batch/", &err);
	ok(r == NULL && err == -EINVAL, "v1: a step path with a trailing slash is refused");
}

static void
test_v1_multiple_slurmd(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	char prefix[4096];
	int err;

	snprintf(prefix, sizeof(prefix), "%s", fixture_path("cgroup/v1"));
	load_job("cgroup/v1/cgroup-node1-step0.txt", 100, "cgroup/v1/mountinfo.txt", &job, &mnt);
	r = ceems_cgroup_stats_reader_open(&job, &mnt, prefix, &err);
	ok(r != NULL, "multi-slurmd node1: job 100 opened under slurm_node1");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "node1: read");
		is_int(st.cpu_usage_ns, UINT64_C(9000000000), "node1: its CPU time");
		is_int(st.ncpus_allocated, 2, "node1: cpuset 0-1");
		is_int(st.mem_limit_bytes, UINT64_C(2147483648), "node1: limit");
		is_int(st.mem_fail_count, 0, "node1: failcnt");
		ceems_cgroup_stats_reader_close(r);
	}
	load_job("cgroup/v1/cgroup-node2-step0.txt", 100, "cgroup/v1/mountinfo.txt", &job, &mnt);
	r = ceems_cgroup_stats_reader_open(&job, &mnt, prefix, &err);
	ok(r != NULL, "multi-slurmd node2: same job id, other node's tree");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "node2: read");
		is_int(st.cpu_usage_ns, UINT64_C(17000000000), "node2: its own CPU time, not node1's");
		is_int(st.ncpus_allocated, 4, "node2: cpuset 4-7");
		ok(ceems_cgroup_parse_cpuset_has(&st.cpuset, 4) && !ceems_cgroup_parse_cpuset_has(&st.cpuset, 0), "node2: cpu bits");
		is_int(st.mem_fail_count, 5, "node2: failcnt");
		ceems_cgroup_stats_reader_close(r);
	}
}

static void
test_v1_blkio(void)
{
	static struct ceems_cgroup_dirs dirs;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	int err;

	/* Slurm puts no job in blkio: read the hierarchy's root instead, as
	 * a site-made blkio cgroup would be read. */
	memset(&dirs, 0, sizeof(dirs));
	dirs.version = CEEMS_CGROUP_V1;
	snprintf(dirs.dir[CEEMS_CG_BLKIO], sizeof(dirs.dir[0]), "%s",
		 fixture_path("cgroup/v1/sys/fs/cgroup/blkio"));
	r = ceems_cgroup_stats_reader_open_dirs(&dirs, &err);
	ok(r != NULL, "v1 blkio: reader on a single blkio directory");
	if (r == NULL)
		return;
	is_int(ceems_cgroup_stats_reader_nfiles(r), 2, "v1 blkio: bytes and ops files");
	is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v1 blkio: read");
	is_int(st.present, IO_FIELDS, "v1 blkio: only IO present");
	is_int(st.io_read_bytes, 1052672 + 524288000, "v1 blkio: read bytes");
	is_int(st.io_write_bytes, 4096 + 73400320, "v1 blkio: write bytes");
	is_int(st.io_read_ops, 257 + 4000, "v1 blkio: read ops");
	is_int(st.io_write_ops, 1 + 560, "v1 blkio: write ops");
	ceems_cgroup_stats_reader_close(r);
}

static void
test_v2(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	char prefix[4096];
	int err;

	load_job("cgroup/v2/cgroup-node01-step0.txt", 4242, "cgroup/v2/mountinfo.txt", &job, &mnt);
	snprintf(prefix, sizeof(prefix), "%s", fixture_path("cgroup/v2"));
	r = ceems_cgroup_stats_reader_open(&job, &mnt, prefix, &err);
	ok(r != NULL, "v2 job 4242 under node01_slurmstepd.scope: opened");
	if (r == NULL)
		return;
	is_int(ceems_cgroup_stats_reader_nfiles(r), 11,
	       "v2: nine files kept open, and its steps' slurm/cpu.stat");
	is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v2: read");
	is_int(st.present, V1_JOB_FIELDS | CEEMS_CGF_PIDS | IO_FIELDS, "v2: every field present");
	is_int(st.flags, 0, "v2: kernel peak, no fallback");
	/* Less the step daemons' (step_S/slurm), test_cgroup_stepd. */
	is_int(st.cpu_usage_ns, UINT64_C(7290000000), "v2: usage_usec in ns");
	is_int(st.cpu_user_ns, UINT64_C(6785000000), "v2: user_usec in ns");
	is_int(st.cpu_system_ns, UINT64_C(505000000), "v2: system_usec in ns");
	is_int(st.mem_current_bytes, 268435456, "v2: memory.current");
	is_int(st.mem_peak_bytes, 402653184, "v2: memory.peak");
	is_int(st.mem_limit_bytes, UINT64_C(4294967296), "v2: memory.max");
	is_int(st.mem_rss_bytes, 201326592, "v2: rss = anon (anon_thp is inside, not added)");
	is_int(st.mem_cache_bytes, 50331648, "v2: cache = file");
	is_int(st.oom_kills, 1, "v2: memory.events oom_kill (not oom)");
	is_int(st.mem_fail_count, 7, "v2: memory.events max");
	is_int(st.pids_current, 12, "v2: pids.current");
	is_int(st.io_read_bytes, 104857600 + 4096, "v2: io.stat rbytes over two devices");
	is_int(st.io_write_bytes, 52428800, "v2: wbytes");
	is_int(st.io_read_ops, 1601, "v2: rios");
	is_int(st.io_write_ops, 800, "v2: wios");
	is_int(st.ncpus_allocated, 4, "v2: cpuset.cpus.effective 4-7");
	ceems_cgroup_stats_reader_close(r);

	r = open_at(&job, &mnt, prefix, "step_extern", &err);
	ok(r != NULL, "v2 step_extern: opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v2 step_extern: read");
		ok(st.mem_limit_bytes == CEEMS_CGROUP_UNLIMITED && (st.present & CEEMS_CGF_MEM_LIMIT),
		   "v2 step_extern: memory.max \"max\" is a present unlimited limit");
		ok((st.present & IO_FIELDS) == IO_FIELDS && st.io_read_bytes == 0,
		   "v2 step_extern: empty io.stat is measured zero IO");
		is_int(st.pids_current, 1, "v2 step_extern: pids");
		ceems_cgroup_stats_reader_close(r);
	}
	r = open_at(&job, &mnt, prefix, "step_0/user/task_0", &err);
	ok(r != NULL, "v2 task_0 (a leaf with cpu.stat only): opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v2 task_0: read");
		is_int(st.present, CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM,
		       "v2 task_0: memory and the rest absent, not 0");
		is_int(st.cpu_usage_ns, UINT64_C(7290000000), "v2 task_0: CPU time");
		is_int(st.failed, 0, "v2 task_0: absent is not failed");
		ceems_cgroup_stats_reader_close(r);
	}
}

/* ---------------------------------------------------------------- */
/* Damaged copies of the fixture trees                               */

static char tmpdir[256];

static const char *
tmp_copy(const char *fixture)
{
	char cmd[8192];
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/ceems-cgstats-XXXXXX",
		 base != NULL && base[0] != '\0' ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(cmd, sizeof(cmd), "cp -R '%s/.' '%s'", fixture_path(fixture), tmpdir);
	if (system(cmd) != 0) {
		printf("Bail out! %s failed\n", cmd);
		exit(1);
	}
	return tmpdir;
}

static void
tmp_remove(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", tmpdir);
}

/* Write TEXT to DIR/NAME, replacing it. */
static void
put(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", path);
		exit(1);
	}
}

static void
drop(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unlink(path) != 0) {
		printf("Bail out! cannot remove %s\n", path);
		exit(1);
	}
}

#define V2_JOB "sys/fs/cgroup/system.slice/node01_slurmstepd.scope/job_4242"
#define V1_MEM_JOB "sys/fs/cgroup/memory/slurm_localhost/uid_1000/job_42"
#define V1_CPU_JOB "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_42"

static void
test_v2_damaged(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	char dir[4096], cmd[4200];
	const char *root;
	int err;

	load_job("cgroup/v2/cgroup-node01-step0.txt", 4242, "cgroup/v2/mountinfo.txt", &job, &mnt);

	/* A kernel before 5.19: no memory.peak. */
	root = tmp_copy("cgroup/v2");
	snprintf(dir, sizeof(dir), "%s/%s", root, V2_JOB);
	drop(dir, "memory.peak");
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r != NULL, "v2 without memory.peak: opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "no peak: read");
		ok((st.present & CEEMS_CGF_MEM_PEAK) && (st.flags & CEEMS_CGS_PEAK_SAMPLED),
		   "no peak: peak present and flagged as sampled");
		is_int(st.mem_peak_bytes, 268435456, "no peak: first sample is memory.current");
		put(dir, "memory.current", "536870912\n");
		ceems_cgroup_stats_reader_read(r, &st);
		is_int(st.mem_peak_bytes, 536870912, "no peak: follows a higher current");
		put(dir, "memory.current", "1048576\n");
		ceems_cgroup_stats_reader_read(r, &st);
		is_int(st.mem_peak_bytes, 536870912, "no peak: keeps the maximum seen");
		is_int(st.mem_current_bytes, 1048576, "no peak: current is current");
		put(dir, "memory.current", "600000000\n");
		ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_CPU_USAGE, &st);
		ok(!(st.present & CEEMS_CGF_MEM_PEAK), "no peak: a CPU-only read neither reports nor samples the peak");
		ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_MEM_PEAK, &st);
		is_int(st.mem_peak_bytes, 600000000, "no peak: a peak-only read samples memory.current");
		ceems_cgroup_stats_reader_close(r);
	}

	/* Bad contents in files opened before they went bad. */
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r != NULL, "v2 damaged: opened");
	if (r != NULL) {
		warnings = 0;
		put(dir, "memory.stat", "garbage\n");
		put(dir, "memory.events", "low 0\nhigh 0\nmax 7\noom_ki");
		put(dir, "memory.current", "-1\n");
		put(dir, "pids.current", "99999999999999999999999\n");
		put(dir, "io.stat", "259:0 rbytes=1 wbytes=2 rios=3 wios=x\n");
		put(dir, "cpuset.cpus.effective", "");
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "damaged: read still succeeds");
		is_int(st.present, CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM |
		       CEEMS_CGF_MEM_LIMIT,
		       "damaged: only the sound files' fields are present");
		is_int(st.failed, CEEMS_CGF_MEM_RSS | CEEMS_CGF_MEM_CACHE | CEEMS_CGF_OOM_KILLS |
		       CEEMS_CGF_MEM_FAILS | CEEMS_CGF_MEM_CURRENT | CEEMS_CGF_PIDS | IO_FIELDS |
		       CEEMS_CGF_CPUSET,
		       "damaged: garbage, truncated, negative, overflow, bad io, empty cpuset all failed");
		ok(st.mem_rss_bytes == 0 && st.pids_current == 0, "damaged: failed fields are not filled in");
		is_int(warnings, 6, "damaged: one warning per bad file");
		ceems_cgroup_stats_reader_read(r, &st);
		is_int(warnings, 6, "damaged: not logged again on the next tick");
		put(dir, "pids.current", "13\n");
		ceems_cgroup_stats_reader_read(r, &st);
		ok((st.present & CEEMS_CGF_PIDS) && st.pids_current == 13, "damaged: a repaired file is read again");
		ceems_cgroup_stats_reader_close(r);
	}

	/* A file replaced by a symlink is not followed (open is refused). */
	snprintf(cmd, sizeof(cmd), "ln -sf /etc/hostname '%s/memory.max'", dir);
	if (system(cmd) == 0) {
		r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
		ok(r != NULL, "v2 symlinked memory.max: opened");
		if (r != NULL) {
			ceems_cgroup_stats_reader_read(r, &st);
			ok(!(st.present & CEEMS_CGF_MEM_LIMIT) && !(st.failed & CEEMS_CGF_MEM_LIMIT),
			   "symlinked memory.max: not followed, limit absent");
			ceems_cgroup_stats_reader_close(r);
		}
	}

	/* The job directory is gone before the reader opens. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# rm failed\n");
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r == NULL && err == -ENOENT, "v2 job directory gone: -ENOENT at open, no crash");
	tmp_remove();
}

static void
test_v1_damaged(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *r;
	static struct ceems_cgroup_stats st;
	char dir[4096], cmd[4200];
	const char *root;
	int err;

	load_job("cgroup/v1/cgroup-localhost-batch.txt", 42, "cgroup/v1/mountinfo.txt", &job, &mnt);
	root = tmp_copy("cgroup/v1");

	/* A kernel before 4.7: CPU split only in ticks. */
	snprintf(dir, sizeof(dir), "%s/%s", root, V1_CPU_JOB);
	drop(dir, "cpuacct.usage_user");
	drop(dir, "cpuacct.usage_sys");
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r != NULL, "v1 without usage_user/sys: opened");
	if (r != NULL) {
		long hz = sysconf(_SC_CLK_TCK);

		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "ticks: read");
		ok(st.flags & CEEMS_CGS_CPU_TICKS, "ticks: flagged");
		is_int(st.cpu_user_ns, UINT64_C(218) * (1000000000 / (uint64_t)hz),
		       "ticks: cpuacct.stat user ticks at this host's CLK_TCK");
		is_int(st.cpu_usage_ns, UINT64_C(2483101234), "ticks: total still exact from cpuacct.usage");
		ceems_cgroup_stats_reader_close(r);
	}

	/* The cpuset controller does not hold the job (ConstrainCores=no). */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/sys/fs/cgroup/cpuset/slurm_localhost'", root);
	if (system(cmd) != 0)
		printf("# rm failed\n");
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r != NULL, "v1 without a cpuset dir: opened");
	if (r != NULL) {
		ceems_cgroup_stats_reader_read(r, &st);
		ok(!(st.present & CEEMS_CGF_CPUSET) && st.ncpus_allocated == 0,
		   "v1 without cpuset: allocation absent");
		ceems_cgroup_stats_reader_close(r);
	}

	/* Every directory gone. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s' '%s/%s'", root, V1_CPU_JOB, root, V1_MEM_JOB);
	if (system(cmd) != 0)
		printf("# rm failed\n");
	r = ceems_cgroup_stats_reader_open(&job, &mnt, root, &err);
	ok(r == NULL && err == -ENOENT, "v1 job gone: -ENOENT at open");
	tmp_remove();
}

/* ---------------------------------------------------------------- */
/* cgroup.procs                                                      */

static void
test_parse_pids(void)
{
	const char *text = "12\n0\n99999999999\n345\n\n7\nx9\n8\n", *p = text;
	uint32_t pid, got[8];
	unsigned n = 0;

	while (n < 8 && ceems_cgroup_parse_next_pid(&p, &pid))
		got[n++] = pid;
	ok(n == 3 && got[0] == 12 && got[1] == 345 && got[2] == 7,
	   "cgroup.procs: ids read, 0 and beyond 32 bits skipped, stops at a line that is no id (%u)", n);
	p = "";
	ok(!ceems_cgroup_parse_next_pid(&p, &pid), "cgroup.procs: an empty file has none");
}

/* ---------------------------------------------------------------- */
/* OOM kills of a cgroup and those below it                          */

#define OOM_TEXT(n) "oom_kill_disable 0\nunder_oom 0\noom_kill " n "\n"

/* The kills of READER's subtree, or -errno. */
static long long
tree_kills(struct ceems_cgroup_reader *r)
{
	uint64_t kills = 0;
	int ret = ceems_cgroup_stats_reader_oom_kills(r, &kills);

	return ret < 0 ? ret : (long long)kills;
}

static void
test_oom_tree(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	struct ceems_cgroup_reader *jr, *sr;
	char dir[4096], cmd[4200];
	const char *root;
	uint64_t kills;
	int err;

	/* v1: job_42 counts 1 of its own, step_batch 1; their tasks 0. */
	load_job("cgroup/v1/cgroup-localhost-batch.txt", 42, "cgroup/v1/mountinfo.txt", &job, &mnt);
	root = tmp_copy("cgroup/v1");
	jr = open_at(&job, &mnt, root, NULL, &err);
	sr = open_at(&job, &mnt, root, "step_batch", &err);
	if (jr == NULL || sr == NULL) {
		printf("Bail out! cannot open the v1 job and step readers\n");
		exit(1);
	}
	is_int(tree_kills(jr), 2, "v1 OOM kills: the job's own and its step's");
	is_int(tree_kills(sr), 1, "v1 OOM kills: the step's");
	/* The kernel counts a kill in the killed process's cgroup: a task's. */
	snprintf(dir, sizeof(dir), "%s/%s/step_batch/task_0", root, V1_MEM_JOB);
	put(dir, "memory.oom_control", OOM_TEXT("3"));
	is_int(tree_kills(sr), 4, "v1 OOM kills: a task's count is the step's");
	is_int(tree_kills(jr), 5, "v1 OOM kills: and the job's");
	snprintf(dir, sizeof(dir), "%s/%s/step_extern/task_0", root, V1_MEM_JOB);
	put(dir, "memory.oom_control", "oom_kill many\n");
	is_int(tree_kills(jr), 5, "v1 OOM kills: an unreadable count is left out");
	/* Slurm removes the task's cgroup as the step ends. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s/step_batch/task_0'", root, V1_MEM_JOB);
	if (system(cmd) != 0)
		printf("# rm failed\n");
	is_int(tree_kills(sr), 1, "v1 OOM kills: a removed task's count is gone, the rest read");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/%s/step_batch'", root, V1_MEM_JOB);
	if (system(cmd) != 0)
		printf("# rm failed\n");
	is_int(tree_kills(sr), -ENOENT, "v1 OOM kills: the step removed: none to read");
	snprintf(dir, sizeof(dir), "%s/%s/step_batch", root, V1_MEM_JOB);
	is_int(ceems_cgroup_oom_kills_v1_tree(dir, &kills), -ENOENT,
	       "v1 OOM kills: no directory, -ENOENT");
	ceems_cgroup_stats_reader_close(jr);
	ceems_cgroup_stats_reader_close(sr);
	tmp_remove();

	/* v2: memory.events counts up the tree, one file says it. */
	load_job("cgroup/v2/cgroup-node01-step0.txt", 4242, "cgroup/v2/mountinfo.txt", &job, &mnt);
	jr = open_at(&job, &mnt, fixture_path("cgroup/v2"), NULL, &err);
	ok(jr != NULL, "v2 job reader opens");
	if (jr != NULL) {
		is_int(tree_kills(jr), 1, "v2 OOM kills: memory.events of the job");
		ceems_cgroup_stats_reader_close(jr);
	}
}

/* ---------------------------------------------------------------- */
/* A real v1 cgroup removed under an open reader                     */

static void
skip(const char *why)
{
	ok(true, "# skip %s", why);
}

static void
test_real_vanish(void)
{
	static char text[65536];
	static struct ceems_cgroup_mounts mnt;
	static struct ceems_cgroup_dirs dirs;
	static struct ceems_cgroup_stats st;
	struct ceems_cgroup_reader *r;
	char name[64];
	int err;

	if (geteuid() != 0) {
		skip("real cgroup: not root");
		return;
	}
	if (ceems_fileio_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mnt) < 0 ||
	    mnt.v1[CEEMS_CG_MEMORY][0] == '\0' || mnt.v1[CEEMS_CG_CPUACCT][0] == '\0') {
		skip("real cgroup: no v1 memory and cpuacct hierarchies");
		return;
	}
	memset(&dirs, 0, sizeof(dirs));
	dirs.version = CEEMS_CGROUP_V1;
	snprintf(name, sizeof(name), "ceems-test-%ld", (long)getpid());
	snprintf(dirs.dir[CEEMS_CG_MEMORY], sizeof(dirs.dir[0]), "%s/%s", mnt.v1[CEEMS_CG_MEMORY], name);
	snprintf(dirs.dir[CEEMS_CG_CPUACCT], sizeof(dirs.dir[0]), "%s/%s", mnt.v1[CEEMS_CG_CPUACCT], name);
	if (mkdir(dirs.dir[CEEMS_CG_MEMORY], 0755) != 0) {
		skip("real cgroup: cannot create a memory cgroup");
		return;
	}
	if (mkdir(dirs.dir[CEEMS_CG_CPUACCT], 0755) != 0) {
		rmdir(dirs.dir[CEEMS_CG_MEMORY]);
		skip("real cgroup: cannot create a cpuacct cgroup");
		return;
	}
	r = ceems_cgroup_stats_reader_open_dirs(&dirs, &err);
	ok(r != NULL, "real v1 cgroup: opened");
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "real v1 cgroup: read");
		ok((st.present & (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_CURRENT | CEEMS_CGF_MEM_RSS)) ==
		   (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_CURRENT | CEEMS_CGF_MEM_RSS),
		   "real v1 cgroup: the kernel's own formats parse");
		is_int(st.failed, 0, "real v1 cgroup: no file failed");
	}
	rmdir(dirs.dir[CEEMS_CG_MEMORY]);
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "real: memory dir removed, cpuacct still read");
		ok((st.flags & CEEMS_CGS_PARTLY_GONE) && !(st.present & CEEMS_CGF_MEM_CURRENT) &&
		   (st.present & CEEMS_CGF_CPU_USAGE), "real: partly gone, memory absent, CPU present");
	}
	rmdir(dirs.dir[CEEMS_CG_CPUACCT]);
	if (r != NULL) {
		is_int(ceems_cgroup_stats_reader_read(r, &st), -ENODEV, "real: all removed: -ENODEV");
		is_int(st.present, 0, "real: nothing present after -ENODEV");
		ceems_cgroup_stats_reader_close(r);
	}
}

int
main(void)
{
	ceems_log_set_handler(count_warnings, NULL);
	test_parse_numbers();
	test_parse_keyed();
	test_parse_io();
	test_parse_cpu_list();
	test_v1_job_and_steps();
	test_v1_multiple_slurmd();
	test_v1_blkio();
	test_v2();
	test_v2_damaged();
	test_v1_damaged();
	test_parse_pids();
	test_oom_tree();
	test_real_vanish();
	return done_testing();
}
