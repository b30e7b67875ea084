/* checks.c - the parsers' contracts as checks, for the fuzz targets and
 * the mutation test (see checks.h).  Rules come from the parsers'
 * headers; where a rule can be computed independently (the value of a
 * plain decimal, the lines of a table) the check computes it and
 * compares, so that a parser that wrongly refuses good input fails too. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "sources/gres.h"
#include "record/job_note.h"
#include "sources/bmc.h"
#include "cgroup/cgroup_path.h"
#include "cgroup/step_ids.h"
#include "cgroup/cgroup_stats.h"
#include "base/conf.h"
#include "base/conf_value.h"
#include "model/emissions.h"
#include "model/energy.h"
#include "sources/gpu_internal.h"
#include "sources/hwmon.h"
#include "sources/perf_cgroup.h"
#include "sources/perf_job.h"
#include "sources/pm_counters.h"
#include "sources/proc_stats.h"
#include "sources/rapl.h"
#include "sources/task_io.h"

#include "checks.h"

/* Is RET 0 or one of the negative errnos the parser documents?  The list
 * ends with 0. */
static bool
ret_allowed(int ret, const int *allowed)
{
	if (ret == 0)
		return true;
	for (; *allowed != 0; allowed++)
		if (ret == *allowed)
			return true;
	return false;
}

static bool
nul_within(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

/* A copy of the N bytes at S with a NUL after them, in a block of its
 * own so that the sanitizers see any read past it. */
static char *
dup_range(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p != NULL) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

/* What a plain sysfs/cgroupfs decimal file ("123" or "123\n") holds,
 * computed without the parsers: 0 and *V; -ERANGE when its leading
 * digits do not fit in 64 bits (whatever follows them), else -EINVAL
 * when TEXT is not such a file. */
static int
expected_decimal(const char *text, uint64_t *v)
{
	const char *p = text, *digits;
	size_t n;

	while (*p == '0' && p[1] >= '0' && p[1] <= '9')
		p++;
	digits = p;
	while (*p >= '0' && *p <= '9')
		p++;
	n = (size_t)(p - digits);
	if (n > 20 || (n == 20 && strncmp(digits, "18446744073709551615",
					  20) > 0))
		return -ERANGE;
	if (n == 0 || !(p[0] == '\0' || (p[0] == '\n' && p[1] == '\0')))
		return -EINVAL;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v = *v * 10 + (uint64_t)(digits[i] - '0');
	return 0;
}

/* ------------------------------------------------------------------ */
/* cgroup_path                                                         */
/* ------------------------------------------------------------------ */

/* A job path: "" or absolute, NUL-terminated, ending in /job_JOBID or,
 * where SLUID is true (the unified tree), in a SLUID. */
static bool
job_path_ok(const char *path, size_t size, uint32_t jobid, bool sluid)
{
	char tail[32];
	const char *last;
	size_t n, tn;

	if (!nul_within(path, size))
		return false;
	if (path[0] == '\0')
		return true;
	if (path[0] != '/')
		return false;
	n = strlen(path);
	last = strrchr(path, '/') + 1;
	if (sluid && ceems_step_ids_is_sluid(last, strlen(last)))
		return true;
	tn = (size_t)snprintf(tail, sizeof(tail), "/job_%" PRIu32, jobid);
	return n >= tn && strcmp(path + n - tn, tail) == 0;
}

/* A slurmstepd's ids from a title or a cgroup line: 0 with a job and a
 * step the agent can name, or -EINVAL. */
static const char *
check_step_ids(const char *data)
{
	char step[16];
	uint32_t jobid = 0;
	int ret;

	for (int from_title = 0; from_title < 2; from_title++) {
		memset(step, 'x', sizeof(step));
		ret = from_title ? ceems_step_ids_from_title(data, &jobid, step, 8) :
				   ceems_step_ids_from_cgroup(data, &jobid, step, 8);
		if (ret != 0 && ret != -EINVAL)
			return "ceems_step_ids: undocumented return code";
		if (step[8] != 'x')
			return "ceems_step_ids: overran the step's buffer";
		if (ret == 0 && (jobid == 0 || !nul_within(step, 8) ||
				 !ceems_step_ids_name_ok(step)))
			return "ceems_step_ids: a job or step that is none";
	}
	return NULL;
}

/* Either both of a mount point and its root are set, or neither. */
static bool
mount_pair_ok(const char *mnt, const char *root)
{
	if (!nul_within(mnt, CEEMS_CGROUP_PATH_MAX) ||
	    !nul_within(root, CEEMS_CGROUP_PATH_MAX))
		return false;
	return (mnt[0] == '\0') == (root[0] == '\0');
}

/* Feed a parsed job and parsed mounts to the functions that build
 * directories from them. */
static const char *
check_job_dirs(const struct ceems_cgroup_job *job,
	       const struct ceems_cgroup_mounts *mounts)
{
	static const int dir_errors[] = { -ENOENT, -ENAMETOOLONG, 0 };
	static const int dirs_errors[] = { -ENOENT, -EINVAL, -ENAMETOOLONG, 0 };
	static const char *const subdirs[] = { NULL, "step_0", "../x" };
	struct ceems_cgroup_dirs dirs;
	char out[CEEMS_CGROUP_DIR_MAX], small[24];

	for (int c = 0; c <= CEEMS_CG_NCONTROLLERS; c++) {
		int ret = ceems_cgroup_path_job_dir(job, mounts,
					       (enum ceems_cgroup_controller)c,
					       "/prefix", out, sizeof(out));

		if (!ret_allowed(ret, dir_errors))
			return "ceems_cgroup_path_job_dir: undocumented return code";
		if (ret == 0 && (!nul_within(out, sizeof(out)) ||
				 strncmp(out, "/prefix/", 8) != 0))
			return "ceems_cgroup_path_job_dir: not under the prefix";
		memset(small, 'x', sizeof(small));
		ret = ceems_cgroup_path_job_dir(job, mounts,
					   (enum ceems_cgroup_controller)c, "",
					   small, 16);
		if (!ret_allowed(ret, dir_errors) || small[16] != 'x' ||
		    (ret == 0 && !nul_within(small, 16)))
			return "ceems_cgroup_path_job_dir: overran a small buffer";
	}
	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		int ret = ceems_cgroup_stats_dirs_for_job(job, mounts, "/p",
						    subdirs[i], &dirs);

		if (!ret_allowed(ret, dirs_errors))
			return "ceems_cgroup_stats_dirs_for_job: undocumented return code";
		if (i == 2 && ret != -EINVAL)
			return "ceems_cgroup_stats_dirs_for_job: accepted a '..' subdir";
		for (int c = 0; ret == 0 && c <= CEEMS_CG_NCONTROLLERS; c++)
			if (!nul_within(dirs.dir[c], sizeof(dirs.dir[c])) ||
			    (dirs.dir[c][0] != '\0' &&
			     strncmp(dirs.dir[c], "/p/", 3) != 0))
				return "ceems_cgroup_stats_dirs_for_job: bad directory";
	}
	return NULL;
}

/* A real job and real mounts, to pair with what the input parses to. */
static const char fixed_cgroup[] =
	"12:cpuset:/slurm_n/uid_1/job_42/step_0\n"
	"5:memory:/slurm_n/uid_1/job_42/step_0/task_0\n"
	"3:cpu,cpuacct:/slurm_n/uid_1/job_42/step_0/task_0\n"
	"0::/system.slice/n_slurmstepd.scope/job_42/step_0\n";
static const char fixed_mountinfo[] =
	"30 24 0:26 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
	"31 24 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	"32 24 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup "
	"rw,cpu,cpuacct\n"
	"35 24 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

const char *
fuzz_check_cgroup_path(const char *data, size_t len)
{
	static const uint32_t jobids[] = { 42, 100, 4242, 1, UINT32_MAX };
	static const int job_errors[] = { -ENOENT, -EINVAL, -ENAMETOOLONG, 0 };
	static const int mount_errors[] = { -EINVAL, 0 };
	static struct ceems_cgroup_job job, fixed_job;
	static struct ceems_cgroup_mounts mounts, fixed_mounts;
	static bool have_fixed;
	const char *problem;
	int ret;

	(void)len;
	if ((problem = check_step_ids(data)) != NULL)
		return problem;
	if (!have_fixed) {
		if (ceems_cgroup_path_job_from_proc(fixed_cgroup, 42, &fixed_job) != 0 ||
		    ceems_cgroup_path_mounts_from_mountinfo(fixed_mountinfo,
						       &fixed_mounts) != 0)
			return "cgroup_path: the fixed job or mounts do not parse";
		have_fixed = true;
	}
	for (size_t i = 0; i < sizeof(jobids) / sizeof(jobids[0]); i++) {
		bool any_v1 = false;

		ret = ceems_cgroup_path_job_from_proc(data, jobids[i], &job);
		if (!ret_allowed(ret, job_errors))
			return "ceems_cgroup_path_job_from_proc: undocumented return code";
		if (ret < 0)
			continue;
		if (!job_path_ok(job.unified, sizeof(job.unified), jobids[i], true))
			return "ceems_cgroup_path_job_from_proc: bad unified path";
		for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
			if (!job_path_ok(job.v1[c], sizeof(job.v1[c]), jobids[i], false))
				return "ceems_cgroup_path_job_from_proc: bad v1 path";
			any_v1 |= job.v1[c][0] != '\0';
		}
		if (job.version == CEEMS_CGROUP_V1 ? !any_v1 :
		    job.version != CEEMS_CGROUP_V2 || any_v1 ||
		    job.unified[0] == '\0')
			return "ceems_cgroup_path_job_from_proc: version does not match "
			       "the paths found";
		if ((problem = check_job_dirs(&job, &fixed_mounts)) != NULL)
			return problem;
	}

	{
		static char perf_mount[CEEMS_CGROUP_PATH_MAX];

		memset(perf_mount, 'x', sizeof(perf_mount));
		ret = ceems_perf_cgroup_mount_from_mountinfo(data, perf_mount,
						      sizeof(perf_mount));
		if (!ret_allowed(ret, mount_errors))
			return "ceems_perf_cgroup_mount_from_mountinfo: undocumented return code";
		if (ret == 0 && (!nul_within(perf_mount, sizeof(perf_mount)) ||
				 (perf_mount[0] != '\0' && perf_mount[0] != '/')))
			return "ceems_perf_cgroup_mount_from_mountinfo: not an absolute path or none";
	}
	ret = ceems_cgroup_path_mounts_from_mountinfo(data, &mounts);
	if (!ret_allowed(ret, mount_errors))
		return "ceems_cgroup_path_mounts_from_mountinfo: undocumented return code";
	if (ret < 0)
		return NULL;
	if (!mount_pair_ok(mounts.unified, mounts.unified_root))
		return "ceems_cgroup_path_mounts_from_mountinfo: bad unified mount";
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (!mount_pair_ok(mounts.v1[c], mounts.v1_root[c]))
			return "ceems_cgroup_path_mounts_from_mountinfo: bad v1 mount";
	return check_job_dirs(&fixed_job, &mounts);
}

/* ------------------------------------------------------------------ */
/* cgroup_stats                                                        */
/* ------------------------------------------------------------------ */

/* The counter each present bit stands for. */
static uint64_t *
stats_field(struct ceems_cgroup_stats *st, uint32_t bit)
{
	switch (bit) {
	case CEEMS_CGF_CPU_USER: return &st->cpu_user_ns;
	case CEEMS_CGF_CPU_SYSTEM: return &st->cpu_system_ns;
	case CEEMS_CGF_CPU_USAGE: return &st->cpu_usage_ns;
	case CEEMS_CGF_MEM_RSS: return &st->mem_rss_bytes;
	case CEEMS_CGF_MEM_CACHE: return &st->mem_cache_bytes;
	case CEEMS_CGF_OOM_KILLS: return &st->oom_kills;
	case CEEMS_CGF_MEM_FAILS: return &st->mem_fail_count;
	case CEEMS_CGF_IO_READ_BYTES: return &st->io_read_bytes;
	case CEEMS_CGF_IO_WRITE_BYTES: return &st->io_write_bytes;
	case CEEMS_CGF_IO_READ_OPS: return &st->io_read_ops;
	case CEEMS_CGF_IO_WRITE_OPS: return &st->io_write_ops;
	default: return NULL;
	}
}

enum stats_parser { P_CPU2, P_MEM2, P_EVENTS2, P_IO2, P_CPUACCT1, P_MEM1,
		    P_OOM1, NSTATS_PARSERS };

static const struct {
	const char *name;
	uint32_t owned;		/* the present bits it may set */
	bool all;		/* it sets every owned bit on success */
	uint64_t quantum;	/* every value it stores is a multiple */
} stats_parsers[NSTATS_PARSERS] = {
	[P_CPU2] = { "ceems_cgroup_parse_cgroup2_cpu_stat", CEEMS_CGF_CPU_USAGE |
		     CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM, false, 1000 },
	[P_MEM2] = { "ceems_cgroup_parse_cgroup2_memory_stat", CEEMS_CGF_MEM_RSS |
		     CEEMS_CGF_MEM_CACHE, false, 1 },
	[P_EVENTS2] = { "ceems_cgroup_parse_cgroup2_memory_events",
			CEEMS_CGF_OOM_KILLS | CEEMS_CGF_MEM_FAILS, false, 1 },
	[P_IO2] = { "ceems_cgroup_parse_cgroup2_io_stat", CEEMS_CGF_IO_READ_BYTES |
		    CEEMS_CGF_IO_WRITE_BYTES | CEEMS_CGF_IO_READ_OPS |
		    CEEMS_CGF_IO_WRITE_OPS, true, 1 },
	/* USER_HZ 100: 10 ms a tick. */
	[P_CPUACCT1] = { "ceems_cgroup_parse_cgroup1_cpuacct_stat",
			 CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM, false,
			 10000000 },
	[P_MEM1] = { "ceems_cgroup_parse_cgroup1_memory_stat", CEEMS_CGF_MEM_RSS |
		     CEEMS_CGF_MEM_CACHE, false, 1 },
	[P_OOM1] = { "ceems_cgroup_parse_cgroup1_oom_control", CEEMS_CGF_OOM_KILLS,
		     true, 1 },
};

static int
run_stats_parser(enum stats_parser p, const char *text,
		 struct ceems_cgroup_stats *st)
{
	switch (p) {
	case P_CPU2: return ceems_cgroup_parse_cgroup2_cpu_stat(text, st);
	case P_MEM2: return ceems_cgroup_parse_cgroup2_memory_stat(text, st);
	case P_EVENTS2: return ceems_cgroup_parse_cgroup2_memory_events(text, st);
	case P_IO2: return ceems_cgroup_parse_cgroup2_io_stat(text, st);
	case P_CPUACCT1:
		return ceems_cgroup_parse_cgroup1_cpuacct_stat(text, 100, st);
	case P_MEM1: return ceems_cgroup_parse_cgroup1_memory_stat(text, st);
	case P_OOM1: return ceems_cgroup_parse_cgroup1_oom_control(text, st);
	case NSTATS_PARSERS: break;
	}
	return -ENOSYS;
}

/* A parser of a whole stats file: documented codes, nothing touched on
 * error, only its own fields (and present bits) touched on success. */
static bool
stats_parser_ok(enum stats_parser p, const char *text)
{
	static const int errors[] = { -EINVAL, -ERANGE, -ENODATA, 0 };
	struct ceems_cgroup_stats before, st, rest;
	uint32_t owned = stats_parsers[p].owned;
	int ret;

	/* A pattern where present bits are clear: what the parser must not
	 * touch keeps it. */
	memset(&before, 0xa5, sizeof(before));
	before.present = 0;
	st = before;
	ret = run_stats_parser(p, text, &st);
	if (!ret_allowed(ret, errors))
		return false;
	if (ret < 0)
		return memcmp(&st, &before, sizeof(st)) == 0;
	if ((st.present & ~owned) != 0 || st.present == 0 ||
	    (stats_parsers[p].all && st.present != owned))
		return false;
	rest = st;
	rest.present = before.present;
	for (uint32_t bit = 1; bit != 0 && bit <= owned; bit <<= 1) {
		if (!(owned & bit))
			continue;
		if ((st.present & bit) &&
		    *stats_field(&st, bit) % stats_parsers[p].quantum != 0)
			return false;
		*stats_field(&rest, bit) = *stats_field(&before, bit);
	}
	return memcmp(&rest, &before, sizeof(rest)) == 0;
}

static bool
single_values_ok(const char *text)
{
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aULL;
	uint64_t v = mark, want = 0;
	int ret, want_ret = expected_decimal(text, &want);

	ret = ceems_number_parse_u64(text, &v);
	if (ret != want_ret || (ret == 0 ? v != want : v != mark))
		return false;

	v = mark;
	ret = ceems_cgroup_parse_u64_or_max(text, &v);
	if (strcmp(text, "max") == 0 || strcmp(text, "max\n") == 0) {
		if (ret != 0 || v != CEEMS_CGROUP_UNLIMITED)
			return false;
	} else if (ret != want_ret || (ret == 0 ? v != want : v != mark)) {
		return false;
	}

	v = mark;
	ret = ceems_cgroup_parse_cgroup1_limit(text, &v);
	if (want_ret == 0 && want >= (UINT64_C(1) << 62))
		want = CEEMS_CGROUP_UNLIMITED;
	if (!ret_allowed(ret, errors) || ret != want_ret ||
	    (ret == 0 ? v != want : v != mark))
		return false;
	return true;
}

static bool
flat_keyed_ok(const char *text)
{
	static const char *const keys[] = {
		"usage_usec", "user_usec", "anon", "file", "oom_kill", "max",
		"total_rss", "nr_periods",
	};
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	const size_t nkeys = sizeof(keys) / sizeof(keys[0]);
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aULL;
	uint64_t values[sizeof(keys) / sizeof(keys[0])];
	uint32_t found = 0xdeadbeef;
	int ret;

	for (size_t i = 0; i < nkeys; i++)
		values[i] = mark;
	ret = ceems_cgroup_parse_flat_keyed(text, keys, nkeys, values, &found);
	if (!ret_allowed(ret, errors))
		return false;
	if (ret < 0)
		found = 0;
	else if ((found & ~((1u << nkeys) - 1)) != 0)
		return false;
	for (size_t i = 0; i < nkeys; i++)
		if (!(found & (1u << i)) && values[i] != mark)
			return false;
	return true;
}

static bool
blkio_ok(const char *text)
{
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aULL;
	uint64_t r = mark, w = mark;
	int ret = ceems_cgroup_parse_cgroup1_blkio(text, &r, &w);

	if (!ret_allowed(ret, errors))
		return false;
	return ret == 0 || (r == mark && w == mark);
}

static bool
cpu_list_ok(const char *text)
{
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	static struct ceems_cpuset set, before;
	uint32_t count = 0;
	int ret;

	memset(&before, 0xa5, sizeof(before));
	set = before;
	ret = ceems_cgroup_parse_cpu_list(text, &set);
	if (!ret_allowed(ret, errors))
		return false;
	if (ret < 0)
		return memcmp(&set, &before, sizeof(set)) == 0;
	for (size_t i = 0; i < sizeof(set.bits) / sizeof(set.bits[0]); i++)
		count += (uint32_t)__builtin_popcountll(set.bits[i]);
	if (count != set.count || count > CEEMS_CPUSET_MAX_CPUS)
		return false;
	if ((text[0] == '\0' || strcmp(text, "\n") == 0) && count != 0)
		return false;
	for (unsigned cpu = 0; cpu < CEEMS_CPUSET_MAX_CPUS; cpu += 97)
		if (ceems_cgroup_parse_cpuset_has(&set, cpu) !=
		    (((set.bits[cpu / 64] >> (cpu % 64)) & 1u) != 0))
			return false;
	return !ceems_cgroup_parse_cpuset_has(&set, CEEMS_CPUSET_MAX_CPUS);
}

const char *
fuzz_check_cgroup_stats(const char *data, size_t len)
{
	(void)len;
	for (int p = 0; p < NSTATS_PARSERS; p++)
		if (!stats_parser_ok((enum stats_parser)p, data))
			return stats_parsers[p].name;
	if (!single_values_ok(data))
		return "ceems_number_parse_u64, _u64_or_max or _cgroup1_limit: wrong "
		       "value or code for a single-value file";
	if (!flat_keyed_ok(data))
		return "ceems_cgroup_parse_flat_keyed: bad code, found bits or values";
	if (!blkio_ok(data))
		return "ceems_cgroup_parse_cgroup1_blkio: bad code, or sums set on error";
	if (!cpu_list_ok(data))
		return "ceems_cgroup_parse_cpu_list: bad code, count or set";
	{
		const char *p = data;
		uint32_t pid;
		unsigned n = 0;

		/* Every id taken moves the cursor forward, within the text. */
		while (ceems_cgroup_parse_next_pid(&p, &pid)) {
			if (pid == 0 || p <= data || p > data + strlen(data) || ++n > len)
				return "ceems_cgroup_parse_next_pid: a 0, or the cursor out of the text";
		}
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* proc_stats                                                          */
/* ------------------------------------------------------------------ */

static bool
proc_stat_ok(const char *text, long clk_tck)
{
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	struct ceems_node_cpu cpu;
	uint64_t quantum = UINT64_C(1000000000) / (uint64_t)clk_tck, busy;
	size_t lines = 0;
	int ret;

	memset(&cpu, 0, sizeof(cpu));
	ret = ceems_proc_stats_parse_proc_stat(text, clk_tck, &cpu);
	if (!ret_allowed(ret, errors))
		return false;
	if (ret < 0)
		return true;
	for (const char *p = text; *p != '\0'; p++)
		lines += *p == '\n';
	busy = cpu.user_ns + cpu.nice_ns + cpu.system_ns + cpu.irq_ns +
	    cpu.softirq_ns;
	if (busy < cpu.user_ns || cpu.busy_ns != busy ||
	    cpu.total_ns != busy + cpu.idle_ns + cpu.iowait_ns ||
	    cpu.total_ns < busy || cpu.ncpus >= lines)
		return false;
	{
		const uint64_t all[] = { cpu.user_ns, cpu.nice_ns,
					 cpu.system_ns, cpu.idle_ns,
					 cpu.iowait_ns, cpu.irq_ns,
					 cpu.softirq_ns, cpu.steal_ns };

		for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
			if (all[i] % quantum != 0)
				return false;
	}
	return true;
}

static bool
meminfo_ok(const char *text)
{
	static const int errors[] = { -EINVAL, -ERANGE, -ENODATA, 0 };
	struct ceems_node_mem mem;
	int ret;

	memset(&mem, 0, sizeof(mem));
	ret = ceems_proc_stats_parse_proc_meminfo(text, &mem);
	if (!ret_allowed(ret, errors))
		return false;
	if (ret < 0)
		return true;
	if (!(mem.present & CEEMS_NMF_TOTAL) || (mem.present & ~0x1ffu) != 0)
		return false;
	{
		const uint64_t v[] = { mem.total, mem.free, mem.available,
				       mem.buffers, mem.cached, mem.anon_pages,
				       mem.shmem, mem.swap_total,
				       mem.swap_free };

		/* In the order of the CEEMS_NMF_* bits. */
		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
			if (v[i] % 1024 != 0)
				return false;
			if (!(mem.present & (1u << i)) && v[i] != 0)
				return false;
		}
	}
	return true;
}

const char *
fuzz_check_proc_stats(const char *data, size_t len)
{
	(void)len;
	if (!proc_stat_ok(data, 100) || !proc_stat_ok(data, 1000000))
		return "ceems_proc_stats_parse_proc_stat: bad code or inconsistent sums";
	if (!meminfo_ok(data))
		return "ceems_proc_stats_parse_proc_meminfo: bad code or present bits";
	{
		struct ceems_node_cpu cpu;

		if (ceems_proc_stats_parse_proc_stat(data, 0, &cpu) != -EINVAL ||
		    ceems_proc_stats_parse_proc_stat(data, -100, &cpu) != -EINVAL)
			return "ceems_proc_stats_parse_proc_stat: accepted a bad clk_tck";
	}
	{
		static const int errors[] = { -EINVAL, -ERANGE, 0 };
		uint32_t uid = 0;
		int ret = ceems_proc_stats_parse_proc_status_uid(data, &uid);
		const char *line = data;
		char want[16];

		if (!ret_allowed(ret, errors))
			return "ceems_proc_stats_parse_proc_status_uid: undocumented return code";
		/* A uid found is the first figure of a line that starts
		 * with "Uid:", as it is written there. */
		while (line != NULL && strncmp(line, "Uid:", 4) != 0)
			line = (line = strchr(line, '\n')) != NULL ? line + 1 : NULL;
		if (ret == 0) {
			if (line == NULL)
				return "ceems_proc_stats_parse_proc_status_uid: a uid without a Uid: line";
			line += 4;
			line += strspn(line, " \t");
			snprintf(want, sizeof(want), "%" PRIu32, uid);
			if (strncmp(line + strspn(line, "0"), want + strspn(want, "0"),
				    strlen(want + strspn(want, "0"))) != 0)
				return "ceems_proc_stats_parse_proc_status_uid: not the line's first figure";
		}
	}
	{
		static const int errors[] = { -EINVAL, -ERANGE, 0 };
		uint64_t ticks = 7;
		int ret = ceems_proc_stats_parse_pid_start(data, &ticks);

		if (!ret_allowed(ret, errors))
			return "ceems_proc_stats_parse_pid_start: undocumented return code";
		if (ret < 0 && ticks != 7)
			return "ceems_proc_stats_parse_pid_start: output set on error";
		if (ret == 0 && strrchr(data, ')') == NULL)
			return "ceems_proc_stats_parse_pid_start: a start without a command";
	}
	{
		static const int errors[] = { -EINVAL, -ERANGE, 0 };
		struct ceems_task_io_counts c = { 7, 7, 7, 7 };
		int ret = ceems_task_io_parse(data, &c);

		if (!ret_allowed(ret, errors))
			return "ceems_task_io_parse: undocumented return code";
		if (ret < 0 && (c.rchar != 7 || c.wchar != 7 || c.syscr != 7 || c.syscw != 7))
			return "ceems_task_io_parse: output set on error";
		if (ret == 0 && (strstr(data, "rchar:") == NULL || strstr(data, "syscw:") == NULL))
			return "ceems_task_io_parse: counts without their lines";
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* conf                                                                */
/* ------------------------------------------------------------------ */

static bool
duration_ok(uint64_t ns, double min, double max)
{
	return (double)ns >= min && (double)ns <= max;
}

static bool
path_ok(const char *path, size_t size)
{
	return nul_within(path, size) && path[0] == '/';
}

static bool
name_ok(const char *s, size_t size, bool may_be_empty)
{
	if (!nul_within(s, size) || (s[0] == '\0' && !may_be_empty))
		return false;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' ||
		      *s == '-'))
			return false;
	return true;
}

static bool
watts_ok(double w)
{
	return w == -1 || (isfinite(w) && w >= 0 && w <= 100000);
}

/* A libpq connection string as the parser may accept it: printable,
 * and without a password in it (ceems.conf(5): passwords belong in a
 * service file or ~/.pgpass), neither "password = ..." nor the secret of
 * a URI's "user:secret@". */
static bool
conninfo_ok(const char *s, size_t size)
{
	const char *scheme, *auth, *at;
	size_t n;

	if (!nul_within(s, size))
		return false;
	for (const char *p = s; *p != '\0'; p++) {
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
		if (strncasecmp(p, "password", 8) == 0) {
			const char *q = p + 8;

			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '=')
				return false;
		}
	}
	if ((scheme = strstr(s, "://")) != NULL) {
		auth = scheme + 3;
		n = strcspn(auth, "/?");
		at = memchr(auth, '@', n);
		if (at != NULL && memchr(auth, ':', (size_t)(at - auth)) != NULL)
			return false;
	}
	return true;
}

/* Every value a successful parse leaves is one the parser accepts. */
static bool
config_valid(const struct ceems_config *c)
{
	return duration_ok(c->interval_ns, 10e6, 3600e9) &&
	    duration_ok(c->checkpoint_interval_ns, 0, 3600e9) &&
	    duration_ok(c->usage_interval_ns, 10e6, 3600e9) &&
	    c->max_jobs >= 1 && c->max_jobs <= 65536 &&
	    path_ok(c->socket_path, sizeof(c->socket_path)) &&
	    path_ok(c->state_dir, sizeof(c->state_dir)) &&
	    path_ok(c->spool_dir, sizeof(c->spool_dir)) &&
	    path_ok(c->sysfs_root, sizeof(c->sysfs_root)) &&
	    path_ok(c->procfs_root, sizeof(c->procfs_root)) &&
	    path_ok(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix)) &&
	    path_ok(c->emissions_table, sizeof(c->emissions_table)) &&
	    conninfo_ok(c->database, sizeof(c->database)) &&
	    conninfo_ok(c->sacct_database, sizeof(c->sacct_database)) &&
	    duration_ok(c->database_timeout_ns, 100e6, 60e9) &&
	    c->spool_max_bytes >= 4096 &&
	    c->spool_max_bytes <= UINT64_C(1125899906842624) &&
	    (strcmp(c->log_level, "error") == 0 ||
	     strcmp(c->log_level, "warning") == 0 ||
	     strcmp(c->log_level, "info") == 0 ||
	     strcmp(c->log_level, "debug") == 0) &&
	    watts_ok(c->idle_power_package_w) &&
	    watts_ok(c->idle_power_dram_w) &&
	    name_ok(c->cluster, sizeof(c->cluster), true) &&
	    name_ok(c->zone, sizeof(c->zone), true) &&
	    isfinite(c->pue) && c->pue >= 1.0 && c->pue <= 5.0;
}

const char *
fuzz_check_conf(const char *data, size_t len)
{
	static struct ceems_config before, config;
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aULL;
	char err[256], small[32];
	uint64_t ns = mark;
	int ret;

	(void)len;
	ceems_conf_defaults(&before);
	if (!config_valid(&before))
		return "ceems_conf_defaults: a default is out of range";
	config = before;
	memset(err, 'x', sizeof(err));
	ret = ceems_conf_parse(&config, data, "fuzz.conf", err, sizeof(err));
	if (ret != 0 && ret != -1)
		return "ceems_conf_parse: returned neither 0 nor -1";
	if (ret < 0) {
		if (memcmp(&config, &before, sizeof(config)) != 0)
			return "ceems_conf_parse: changed the config on error";
		if (!nul_within(err, sizeof(err)) ||
		    strncmp(err, "fuzz.conf:", 10) != 0)
			return "ceems_conf_parse: no 'NAME:LINE: problem' message";
		/* A short message buffer is cut, not overrun. */
		memset(small, 'x', sizeof(small));
		config = before;
		if (ceems_conf_parse(&config, data, "fuzz.conf", small, 12) != -1 ||
		    !nul_within(small, 12) || small[12] != 'x')
			return "ceems_conf_parse: overran a short message buffer";
	} else if (!config_valid(&config)) {
		return "ceems_conf_parse: accepted a value out of range";
	}

	ret = ceems_conf_value_duration(data, &ns);
	if (ret != 0 && ret != -1)
		return "ceems_conf_value_duration: returned neither 0 nor -1";
	if (ret < 0 ? ns != mark :
	    !(data[0] >= '0' && data[0] <= '9') || ns > UINT64_C(1000000000000000001))
		return "ceems_conf_value_duration: bad value, or value set on error";
	return fuzz_check_conf_keys(data, len);
}

/* ------------------------------------------------------------------ */
/* emissions                                                           */
/* ------------------------------------------------------------------ */

/* The lines of a table text that are neither blank nor comments: each
 * is either a row or counted as bad. */
static size_t
table_content_lines(const char *buf, size_t len, size_t *nlines)
{
	size_t pos = 0, n = 0;

	*nlines = 0;
	while (pos < len) {
		const char *line = buf + pos;
		const char *nl = memchr(line, '\n', len - pos);
		size_t llen = nl != NULL ? (size_t)(nl - line) : len - pos, j;

		pos += llen + (nl != NULL);
		(*nlines)++;
		if (llen > 0 && line[llen - 1] == '\r')
			llen--;
		for (j = 0; j < llen && (line[j] == ' ' || line[j] == '\t'); j++)
			;
		if (j < llen && line[j] != '#')
			n++;
	}
	return n;
}

static bool
upper_code(const char *s, size_t n)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 'A' || s[i] > 'Z')
			return false;
	return true;
}

static bool
row_valid(const struct ceems_emissions_row *r, size_t nlines)
{
	if (!nul_within(r->zone, sizeof(r->zone)) ||
	    !nul_within(r->alpha3, sizeof(r->alpha3)) ||
	    !nul_within(r->source, sizeof(r->source)))
		return false;
	if (strcmp(r->zone, "WORLD") != 0 && !upper_code(r->zone, 2))
		return false;
	if (r->alpha3[0] != '\0' && !upper_code(r->alpha3, 3))
		return false;
	if (r->source[0] == '\0' || !name_ok(r->source, sizeof(r->source), false))
		return false;
	return r->year >= 1900 && r->year <= 9999 && isfinite(r->g_per_kwh) &&
	    r->g_per_kwh >= 0 && r->g_per_kwh <= 10000 && r->line >= 1 &&
	    r->line <= nlines;
}

static const char *
check_table(const struct ceems_emissions_table *t, size_t content,
	    size_t nlines)
{
	static const int lookup_errors[] = { -EINVAL, -ENOENT, 0 };
	struct ceems_emission_factor f;

	if (t->nrows == 0 || t->rows == NULL)
		return "ceems_emissions_table_parse: success without a row";
	if (t->nrows + t->nbad != content)
		return "ceems_emissions_table_parse: rows + bad lines != lines";
	if ((t->nbad == 0) != (t->first_bad_line == 0) ||
	    t->first_bad_line > nlines)
		return "ceems_emissions_table_parse: bad first_bad_line";
	for (size_t i = 0; i < t->nrows; i++) {
		const struct ceems_emissions_row *r = &t->rows[i];

		if (!row_valid(r, nlines))
			return "ceems_emissions_table_parse: invalid row kept";
		if (i > 0) {
			int c = strcmp(t->rows[i - 1].zone, r->zone);

			if (c > 0 || (c == 0 && t->rows[i - 1].year >= r->year))
				return "ceems_emissions_table_parse: rows not "
				       "sorted or duplicates kept";
		}
	}
	/* Each kept row is found again by its zone and year. */
	for (size_t i = 0; i < t->nrows && i < 16; i++) {
		const struct ceems_emissions_row *r = &t->rows[i];
		int ret = ceems_emissions_lookup(t, r->zone, r->year, &f);

		if (ret != 0 || f.year != r->year || f.g_per_kwh != r->g_per_kwh ||
		    strcmp(f.zone, r->zone) != 0 ||
		    strcmp(f.source, r->source) != 0 ||
		    !ceems_job_figures_emission_factor_valid(&f))
			return "ceems_emissions_lookup: a kept row is not found";
		if (r->alpha3[0] != '\0' &&
		    (ceems_emissions_lookup(t, r->alpha3, 3000, &f) != 0 ||
		     !ceems_job_figures_emission_factor_valid(&f)))
			return "ceems_emissions_lookup: alpha-3 code not found";
	}
	{
		static const char *const zones[] = { "fr", "XX", "world", "",
						     "F", "FRAN", "W0RLD" };

		for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
			int ret = ceems_emissions_lookup(t, zones[i], 2021, &f);

			if (!ret_allowed(ret, lookup_errors) ||
			    (ret == 0 && !ceems_job_figures_emission_factor_valid(&f)))
				return "ceems_emissions_lookup: bad code or factor";
		}
	}
	return NULL;
}

const char *
fuzz_check_emissions(const char *data, size_t len)
{
	static const int errors[] = { -ENODATA, -ENOMEM, -EINVAL, 0 };
	struct ceems_emissions_table t;
	size_t nlines, content = table_content_lines(data, len, &nlines);
	const char *problem = NULL;
	int ret;

	memset(&t, 0xa5, sizeof(t));
	ret = ceems_emissions_table_parse(data, len, &t);
	if (!ret_allowed(ret, errors))
		return "ceems_emissions_table_parse: undocumented return code";
	if (ret < 0) {
		if (t.rows != NULL || t.nrows != 0)
			return "ceems_emissions_table_parse: rows left after an error";
		return NULL;
	}
	problem = check_table(&t, content, nlines);
	ceems_emissions_table_free(&t);
	if (problem == NULL && (t.rows != NULL || t.nrows != 0))
		problem = "ceems_emissions_table_free: table not emptied";
	return problem;
}

/* ------------------------------------------------------------------ */
/* energy sources                                                      */
/* ------------------------------------------------------------------ */

static bool
domain_device_ok(enum ceems_energy_domain d, int device, int max_device)
{
	return d >= CEEMS_DOMAIN_PACKAGE && d < CEEMS_DOMAIN_COUNT &&
	    device >= -1 && device <= max_device;
}

static const char *
check_classifiers(const char *line, const char *rest)
{
	static const int rapl_errors[] = { -ENOENT, -EINVAL, 0 };
	static const int enoent[] = { -ENOENT, 0 };
	enum ceems_energy_domain d;
	int device, ret;

	ret = ceems_rapl_classify_zone(line, &d, &device);
	if (!ret_allowed(ret, rapl_errors))
		return "ceems_rapl_classify_zone: undocumented return code";
	if (ret == 0 && (!domain_device_ok(d, device, 65535) ||
			 d == CEEMS_DOMAIN_GPU ||
			 (d == CEEMS_DOMAIN_PACKAGE) != (device >= 0 &&
							 strncmp(line, "package-", 8) == 0) ||
			 (d == CEEMS_DOMAIN_DRAM && device != -1)))
		return "ceems_rapl_classify_zone: bad domain or device";

	ret = ceems_hwmon_classify(line, rest, &d, &device);
	if (!ret_allowed(ret, enoent))
		return "ceems_hwmon_classify: undocumented return code";
	if (ret == 0 && (!domain_device_ok(d, device, 65535) ||
			 d == CEEMS_DOMAIN_GPU ||
			 (d == CEEMS_DOMAIN_NODE && device != -1)))
		return "ceems_hwmon_classify: bad domain or device";

	ret = ceems_pm_counters_classify(line, &d, &device);
	if (!ret_allowed(ret, enoent))
		return "ceems_pm_counters_classify: undocumented return code";
	if (ret == 0 && (!domain_device_ok(d, device, 4095) ||
			 (d == CEEMS_DOMAIN_GPU && device < 0)))
		return "ceems_pm_counters_classify: bad domain or device";
	return NULL;
}

/* The fields of a canonical bus id "dddd:bb:dd.f" (lower-case hex, a
 * domain of 4 to 8 digits); false when S is not one. */
static bool
canonical_bus_id(const char *s, unsigned long *field)
{
	size_t n = strspn(s, "0123456789abcdef");
	char *end;
	int i;

	if (n < 4 || n > 8 || s[n] != ':')
		return false;
	for (i = 0; i < 4; i++) {
		size_t want = i == 0 ? n : i == 3 ? 1 : 2;

		if (strspn(s, "0123456789abcdef") != want)
			return false;
		field[i] = strtoul(s, &end, 16);
		if (*end != (i < 2 ? ':' : i == 2 ? '.' : '\0'))
			return false;
		s = end + (i < 3);
	}
	return field[3] <= 7 && field[2] <= 0x1f;
}

/* ceems_gpu_backend_bus_id_normalise: "" on error; on success a canonical bus
 * id holding the numbers of the input ([domain:]bus:device.function in
 * hex), that normalises to itself. */
static const char *
check_bus_id(const char *data)
{
	char out[CEEMS_GPU_ID_MAX], again[CEEMS_GPU_ID_MAX];
	unsigned long got[4], in[4] = { 0, 0, 0, 0 };
	const char *p = data;
	int nfields = 0, ret;
	char *end;

	memset(out, 'x', sizeof(out));
	ret = ceems_gpu_backend_bus_id_normalise(data, out, sizeof(out));
	if (ret != 0 && ret != -EINVAL)
		return "ceems_gpu_backend_bus_id_normalise: undocumented return code";
	if (ret != 0)
		return out[0] == '\0' ? NULL :
			"ceems_gpu_backend_bus_id_normalise: output left on error";
	if (!canonical_bus_id(out, got))
		return "ceems_gpu_backend_bus_id_normalise: output not canonical";
	while (nfields < 4 && isxdigit((unsigned char)*p)) {
		in[nfields++] = strtoul(p, &end, 16);
		p = *end != '\0' ? end + 1 : end;
	}
	if (nfields == 3) {
		memmove(in + 1, in, 3 * sizeof(in[0]));
		in[0] = 0;
	}
	if (memcmp(in, got, sizeof(in)) != 0)
		return "ceems_gpu_backend_bus_id_normalise: numbers changed";
	if (ceems_gpu_backend_bus_id_normalise(out, again, sizeof(again)) != 0 ||
	    strcmp(out, again) != 0)
		return "ceems_gpu_backend_bus_id_normalise: not idempotent";
	return NULL;
}

/* A value of the BMC's credentials file: 1 to MAX bytes, one line. */
static bool
credential_ok(const char *v, size_t max)
{
	size_t n = strlen(v);

	return n >= 1 && n <= max && strpbrk(v, "\n\r") == NULL;
}

/* The BMC's credentials file and bmc_workarounds: 0 or -EINVAL, a value
 * that fits and lies in the text, a reason on error, flags only known
 * ones. */
static const char *
check_bmc_texts(const char *data)
{
	static const int einval[] = { -EINVAL, 0 };
	const unsigned known = (CEEMS_BMC_WORKAROUND_NOCHECKSUMCHECK << 1) - 1;
	struct ceems_bmc_credentials cr;
	char why[256];
	unsigned flags = 0x80000000u;
	int ret;

	why[0] = '\0';
	ret = ceems_bmc_creds_parse(data, &cr, why, sizeof(why));
	if (!ret_allowed(ret, einval))
		return "ceems_bmc_creds_parse: undocumented return code";
	if (ret == 0 && (!credential_ok(cr.username, CEEMS_BMC_USER_MAX) ||
			 !credential_ok(cr.password, CEEMS_BMC_PASSWORD_MAX) ||
			 strstr(data, cr.username) == NULL ||
			 strstr(data, cr.password) == NULL))
		return "ceems_bmc_creds_parse: value not from one line of the text";
	if (ret < 0 && why[0] == '\0')
		return "ceems_bmc_creds_parse: no reason given";

	why[0] = '\0';
	ret = ceems_bmc_ipmi_parse_workarounds(data, &flags, why, sizeof(why));
	if (!ret_allowed(ret, einval))
		return "ceems_bmc_ipmi_parse_workarounds: undocumented return code";
	if (ret == 0 && (flags & ~known) != 0)
		return "ceems_bmc_ipmi_parse_workarounds: unknown flag set";
	if (ret < 0 && why[0] == '\0')
		return "ceems_bmc_ipmi_parse_workarounds: no reason given";
	return NULL;
}

const char *
fuzz_check_energy(const char *data, size_t len)
{
	static const int errors[] = { -EINVAL, -ERANGE, 0 };
	const uint64_t mark = 0x5a5a5a5a5a5a5a5aULL;
	uint64_t v = mark, want = 0;
	const char *nl, *problem;
	char *line, *rest;
	size_t textlen = strlen(data);
	int ret, want_ret;

	(void)len;
	if ((problem = check_bus_id(data)) != NULL)
		return problem;
	want_ret = expected_decimal(data, &want);
	ret = ceems_number_parse_u64(data, &v);
	if (ret != want_ret || (ret == 0 ? v != want : v != mark))
		return "ceems_number_parse_u64: wrong value or code";

	/* "<joules> J <timestamp> us": the joules are the leading digits. */
	v = mark;
	ret = ceems_pm_counters_parse(data, &v);
	if (!ret_allowed(ret, errors))
		return "ceems_pm_counters_parse: undocumented return code";
	if (ret == 0) {
		size_t digits = strspn(data, "0123456789");
		char *number = dup_range(data, digits);

		if (number == NULL)
			return NULL;
		want_ret = expected_decimal(number, &want);
		free(number);
		if (want_ret != 0 || v != want || data[digits] != ' ')
			return "ceems_pm_counters_parse: wrong joules";
	} else if (v != mark) {
		return "ceems_pm_counters_parse: value set on error";
	}

	/* Names and labels are read with their newline cut. */
	nl = memchr(data, '\n', textlen);
	line = dup_range(data, nl != NULL ? (size_t)(nl - data) : textlen);
	rest = nl != NULL ? dup_range(nl + 1, strcspn(nl + 1, "\n")) :
	    dup_range("", 0);
	problem = line != NULL && rest != NULL ?
	    check_classifiers(line, rest) : NULL;
	if (problem == NULL && line != NULL)
		problem = check_classifiers(data, line);
	free(line);
	free(rest);
	if (problem == NULL)
		problem = check_bmc_texts(data);
	return problem;
}

/* ------------------------------------------------------------------ */
/* agent_proto                                                         */
/* ------------------------------------------------------------------ */

/* A path the agent may open below a hierarchy: "" (not given), or
 * absolute without empty, "." or ".." components or control characters. */
static bool
spec_path_ok(const char *path, size_t size)
{
	const char *p;

	if (!nul_within(path, size))
		return false;
	if (path[0] == '\0')
		return true;
	if (path[0] != '/' || path[1] == '\0')
		return false;
	for (p = path; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	for (p = path; *p != '\0';) {
		size_t n;

		p++;
		n = strcspn(p, "/");
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
	}
	return true;
}

static const char *
check_spec(const struct ceems_agent_job_spec *s)
{
	bool any_v1 = false;

	if (s->jobid == 0 || s->uid == UINT32_MAX ||
	    s->alloc_cores > CEEMS_CPUSET_MAX_CPUS)
		return "ceems_agent_proto_request_decode: job id, uid or cores out of range";
	if (!spec_path_ok(s->cgroup.unified, sizeof(s->cgroup.unified)))
		return "ceems_agent_proto_request_decode: unsafe unified path";
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		if (!spec_path_ok(s->cgroup.v1[c], sizeof(s->cgroup.v1[c])))
			return "ceems_agent_proto_request_decode: unsafe v1 path";
		any_v1 |= s->cgroup.v1[c][0] != '\0';
	}
	if (s->cgroup.version == CEEMS_CGROUP_V2 ? s->cgroup.unified[0] == '\0' :
	    s->cgroup.version != CEEMS_CGROUP_V1 || !any_v1)
		return "ceems_agent_proto_request_decode: job without a path for its "
		       "cgroup version";
	for (int i = 0; i < CEEMS_LEDGER_MAX_GPUS; i++)
		if (!isfinite(s->gpu_share[i]) || s->gpu_share[i] < 0 ||
		    s->gpu_share[i] > 1)
			return "ceems_agent_proto_request_decode: gpu share out of [0, 1]";
	if (s->start_time < 0 || s->start_time > CEEMS_AGENT_START_TIME_MAX)
		return "ceems_agent_proto_request_decode: start time out of range";
	if (!nul_within(s->cluster, sizeof(s->cluster)))
		return "ceems_agent_proto_request_decode: cluster not terminated";
	for (const char *p = s->cluster; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return "ceems_agent_proto_request_decode: control character "
			       "in the cluster";
	if (s->ngpu_ids > CEEMS_AGENT_MAX_GPU_IDS)
		return "ceems_agent_proto_request_decode: too many GPU identifiers";
	for (uint32_t i = 0; i < s->ngpu_ids; i++) {
		if (!nul_within(s->gpu_ids[i], sizeof(s->gpu_ids[i])) ||
		    s->gpu_ids[i][0] == '\0')
			return "ceems_agent_proto_request_decode: GPU identifier "
			       "empty or not terminated";
		for (const char *p = s->gpu_ids[i]; *p != '\0'; p++)
			if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
				return "ceems_agent_proto_request_decode: space or "
				       "non-ASCII in a GPU identifier";
	}
	return NULL;
}

static bool
same_request(const struct ceems_agent_request *a,
	     const struct ceems_agent_request *b)
{
	if (a->op != b->op || a->jobid != b->jobid)
		return false;
	if (strcmp(a->by, b->by) != 0 || a->have_status != b->have_status ||
	    (a->have_status && a->status != b->status))
		return false;
	if (a->op == CEEMS_AGENT_OP_MARK)
		return strcmp(a->mark_name, b->mark_name) == 0 &&
		       strcmp(a->mark_unit, b->mark_unit) == 0 &&
		       a->mark_mode == b->mark_mode &&
		       a->mark_value == b->mark_value;
	if (a->op != CEEMS_AGENT_OP_REGISTER)
		return true;
	for (int i = 0; i < CEEMS_LEDGER_MAX_GPUS; i++)
		if (a->spec.gpu_share[i] != b->spec.gpu_share[i])
			return false;
	if (a->spec.ngpu_ids != b->spec.ngpu_ids)
		return false;
	for (uint32_t i = 0; i < a->spec.ngpu_ids; i++)
		if (strcmp(a->spec.gpu_ids[i], b->spec.gpu_ids[i]) != 0)
			return false;
	return a->spec.jobid == b->spec.jobid && a->spec.uid == b->spec.uid &&
	    a->spec.alloc_cores == b->spec.alloc_cores &&
	    a->spec.alloc_mem_bytes == b->spec.alloc_mem_bytes &&
	    a->spec.cgroup.version == b->spec.cgroup.version &&
	    a->spec.start_time == b->spec.start_time &&
	    strcmp(a->spec.cluster, b->spec.cluster) == 0 &&
	    strcmp(a->spec.cgroup.unified, b->spec.cgroup.unified) == 0 &&
	    memcmp(a->spec.cgroup.v1, b->spec.cgroup.v1,
		   sizeof(a->spec.cgroup.v1)) == 0;
}

static const char *
check_request(const char *data, size_t len)
{
	static const int errors[] = { -EINVAL, -EMSGSIZE, 0 };
	static struct ceems_agent_request req, again;
	static char text[CEEMS_AGENT_MSG_MAX];
	char err[256];
	const char *problem;
	int ret, n;

	memset(err, 'x', sizeof(err));
	ret = ceems_agent_proto_request_decode(data, len, &req, err, sizeof(err));
	if (!ret_allowed(ret, errors))
		return "ceems_agent_proto_request_decode: undocumented return code";
	if (ret < 0) {
		if (!nul_within(err, sizeof(err)) || err[0] == '\0')
			return "ceems_agent_proto_request_decode: error without a sentence";
		return NULL;
	}
	if (req.op < CEEMS_AGENT_OP_REGISTER || req.op > CEEMS_AGENT_OP_MARK)
		return "ceems_agent_proto_request_decode: unknown op accepted";
	/* A mark the agent takes is one marks.h can apply. */
	if (req.op == CEEMS_AGENT_OP_MARK &&
	    (!ceems_marks_name_ok(req.mark_name) || !ceems_marks_name_ok(req.mark_unit) ||
	     (req.mark_mode != CEEMS_MARKS_ADD && req.mark_mode != CEEMS_MARKS_SET) ||
	     (req.mark_tag[0] != '\0' && !ceems_marks_name_ok(req.mark_tag)) ||
	     !(req.mark_value >= 0 && req.mark_value <= CEEMS_MARKS_VALUE_MAX)))
		return "ceems_agent_proto_request_decode: a mark marks.h refuses";
	if (req.op != CEEMS_AGENT_OP_STATUS && req.jobid == 0)
		return "ceems_agent_proto_request_decode: job id 0 accepted";
	if (req.op == CEEMS_AGENT_OP_REGISTER) {
		if (req.jobid != req.spec.jobid)
			return "ceems_agent_proto_request_decode: jobid is not the spec's";
		if ((problem = check_spec(&req.spec)) != NULL)
			return problem;
	}
	/* What the agent accepted, a client can send again, unchanged. */
	n = ceems_agent_proto_request_encode(&req, text, sizeof(text));
	if (n <= 0 || (size_t)n >= sizeof(text) || text[n] != '\0')
		return "ceems_agent_proto_request_encode: cannot encode a decoded request";
	if (ceems_agent_proto_request_decode(text, (size_t)n, &again, err,
				       sizeof(err)) != 0 ||
	    !same_request(&req, &again))
		return "ceems_agent_proto_request_encode: decoding its text gives "
		       "another request";
	return NULL;
}

/* The GPUs of a decoded report: within the node's count, named, every
 * measured figure in its range, the unmeasured ones left at 0. */
static const char *
check_report_gpus(const struct ceems_agent_job_report *r)
{
	if (r->ngpus > CEEMS_LEDGER_MAX_GPUS)
		return "ceems_agent_proto_reply_decode: more GPUs than a node has";
	for (uint32_t i = 0; i < r->ngpus; i++) {
		const struct ceems_agent_gpu_report *g = &r->gpus[i];
		const bool have[] = { g->have_util, g->have_mem_util,
				      g->have_sm_active, g->have_sm_occupancy,
				      g->have_tensor_active, g->have_fp_active };
		const double pct[] = { g->util_pct, g->mem_util_pct,
				       g->sm_active_pct, g->sm_occupancy_pct,
				       g->tensor_active_pct, g->fp_active_pct };

		if (!nul_within(g->uuid, sizeof(g->uuid)) ||
		    !nul_within(g->bus_id, sizeof(g->bus_id)) ||
		    (g->uuid[0] == '\0' && g->bus_id[0] == '\0'))
			return "ceems_agent_proto_reply_decode: a GPU without a name";
		if (!(g->share > 0 && g->share <= 1) || g->instance < -1)
			return "ceems_agent_proto_reply_decode: GPU share or instance out of range";
		if (!(g->energy_j >= 0) || isinf(g->energy_j) ||
		    (!g->have_energy && g->energy_j != 0))
			return "ceems_agent_proto_reply_decode: GPU energy out of range";
		for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++)
			if (!(pct[k] >= 0 && pct[k] <= 100) || (!have[k] && pct[k] != 0))
				return "ceems_agent_proto_reply_decode: GPU percentage out "
				       "of range, or set though unknown";
		if (g->mem_peak_bytes > (uint64_t)INT64_MAX ||
		    g->mem_total_bytes > (uint64_t)INT64_MAX ||
		    (!g->have_mem_peak && g->mem_peak_bytes != 0))
			return "ceems_agent_proto_reply_decode: GPU memory out of range";
	}
	return NULL;
}

/* NaN or a figure in MIN..MAX. */
static bool
unknown_or_within(double v, double min, double max)
{
	return isnan(v) || (v >= min && v <= max);
}

/* Same values, NaN equal to NaN. */
static bool
same_cell(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

/* A decoded time series (lib/model/agent_series.h): in its bounds, and its
 * JSON form read back is the same series. */
static const char *
check_series(const struct ceems_series *s)
{
	struct json_object *obj;
	struct ceems_series *back = NULL;
	const char *problem = NULL;
	char err[256];

	if (s->nrows > CEEMS_SERIES_MAX_ROWS || s->resolution_s == 0 ||
	    s->resolution_s > INT32_MAX)
		return "ceems_agent_series_from_json: too many rows or a bad resolution";
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct ceems_series_row *r = &s->rows[i];

		if ((i > 0 && r->t <= s->rows[i - 1].t) ||
		    !unknown_or_within(r->cpu_s, 0, INFINITY) ||
		    !unknown_or_within(r->mem_bytes, 0, INFINITY) ||
		    !(r->interval_s >= 0) ||
		    !unknown_or_within(r->gpu_util_pct, 0, 100))
			return "ceems_agent_series_from_json: a row out of order or range";
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!unknown_or_within(r->joules[d], 0, INFINITY))
				return "ceems_agent_series_from_json: negative energy";
	}
	if ((obj = ceems_agent_series_to_json(s)) == NULL)
		return "ceems_agent_series_to_json: failed on a series it had read";
	if (ceems_agent_series_from_json(obj, &back, err, sizeof(err)) != 0)
		problem = "ceems_agent_series_from_json: refused its own JSON form";
	for (uint32_t i = 0; problem == NULL && i < s->nrows; i++) {
		const struct ceems_series_row *x = &s->rows[i], *y;

		if (back->nrows != s->nrows) {
			problem = "ceems_agent_series_to_json: rows lost";
			break;
		}
		y = &back->rows[i];
		if (x->t != y->t || !same_cell(x->cpu_s, y->cpu_s) ||
		    !same_cell(x->interval_s, y->interval_s) ||
		    !same_cell(x->gpu_util_pct, y->gpu_util_pct))
			problem = "ceems_agent_series_to_json: a row read back differs";
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!same_cell(x->joules[d], y->joules[d]))
				problem = "ceems_agent_series_to_json: energy read back differs";
	}
	ceems_agent_series_free(back);
	json_object_put(obj);
	return problem;
}

/* A decoded perf object (lib/model/measure_perf.c): known statuses, counts of
 * known events only, none negative or NaN; unknown counts absent. */
static const char *
check_perf_report(const struct ceems_perf_report *p)
{
	if (p->sw_status >= CEEMS_PERF_NSTATUS || p->hw_status >= CEEMS_PERF_NSTATUS)
		return "ceems_measure_perf_report_from_json: unknown status";
	if ((p->present & ~((1u << CEEMS_PERF_NEVENTS) - 1)) != 0)
		return "ceems_measure_perf_report_from_json: present bit of no event";
	if (!(p->running_fraction >= 0 && p->running_fraction <= 1) &&
	    !(p->present == 0 && p->running_fraction == 0))
		return "ceems_measure_perf_report_from_json: running fraction out of [0, 1]";
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++) {
		bool have = (p->present & (1u << e)) != 0;

		if (have ? !(p->value[e] >= 0) || !isfinite(p->value[e]) :
		    p->value[e] != 0)
			return "ceems_measure_perf_report_from_json: count negative, NaN or set while absent";
	}
	return NULL;
}

/* The work a decoded reply carries: what marks.h could have kept. */
static const char *
check_marks(const struct ceems_marks *m)
{
	if (m->n > CEEMS_MARKS_MAX)
		return "ceems_agent_proto_reply_decode: more counters than a job keeps";
	for (uint32_t i = 0; i < m->n; i++)
		if (!ceems_marks_name_ok(m->c[i].name) ||
		    !ceems_marks_name_ok(m->c[i].unit) ||
		    !(m->c[i].work >= 0 && m->c[i].work <= CEEMS_MARKS_VALUE_MAX))
			return "ceems_agent_proto_reply_decode: a counter marks.h refuses";
	return NULL;
}

/* The carbon-aware advice a decoded reply carries: known and sane, or
 * none (model/carbon_advice.h). */
static const char *
check_advice(const char *data, size_t len)
{
	static struct ceems_agent_job_report report;
	struct ceems_advice a;
	char err[256];

	if (ceems_agent_proto_reply_decode_work(data, len, &report, NULL, NULL,
						&a, err, sizeof(err)) < 0)
		return NULL;
	ceems_agent_series_free(report.series);
	if (a.verdict == CEEMS_ADVICE_NO_SERIES)
		return NULL;
	if (!ceems_advice_known(&a) || a.verdict > CEEMS_ADVICE_SMALL)
		return "ceems_agent_proto_reply_decode_work: advice of no verdict";
	if (!(a.actual_g >= 0) || !isfinite(a.actual_g) || !(a.best_g >= 0) ||
	    a.best_g > a.actual_g || !(a.saving_g >= 0) || a.best_start <= 0 ||
	    !(a.saving_frac >= 0 && a.saving_frac <= 1))
		return "ceems_agent_proto_reply_decode_work: advice out of range";
	return NULL;
}

static const char *
check_reply(const char *data, size_t len)
{
	static const int errors[] = {
		-EPROTO, -EREMOTEIO, -EEXIST, -ENOENT, -ENOSPC, -EPERM,
		-EINVAL, -EMSGSIZE, -EBUSY, -EIO, -ENOMEM, -EACCES, 0,
	};
	static struct ceems_agent_job_report report;
	static struct ceems_marks marks;
	char err[256];
	const char *problem;
	int ret;

	memset(err, 'x', sizeof(err));
	ret = ceems_agent_proto_reply_decode(data, len, NULL, err, sizeof(err));
	if (!ret_allowed(ret, errors))
		return "ceems_agent_proto_reply_decode: undocumented return code";
	if (ret < 0 && (!nul_within(err, sizeof(err)) || err[0] == '\0'))
		return "ceems_agent_proto_reply_decode: error without a sentence";
	if ((problem = check_advice(data, len)) != NULL)
		return problem;
	memset(&report, 0, sizeof(report));
	ret = ceems_agent_proto_reply_decode_marks(data, len, &report, &marks,
						   err, sizeof(err));
	if (!ret_allowed(ret, errors))
		return "ceems_agent_proto_reply_decode: undocumented return code";
	if (ret < 0)
		return NULL;
	if ((problem = check_marks(&marks)) != NULL) {
		ceems_agent_series_free(report.series);
		return problem;
	}
	if (report.jobid == 0 || (report.usage.present & ~CEEMS_CGF_ALL) != 0 ||
	    (report.usage.failed & ~CEEMS_CGF_ALL) != 0 ||
	    report.usage.cpuset.count > CEEMS_CPUSET_MAX_CPUS)
		return "ceems_agent_proto_reply_decode: report out of range";
	{
		const struct ceems_job_ledger *l = &report.ledger;
		const double v[] = { report.elapsed_s, report.cpu_s,
				     report.gap_s, l->lifetime_s,
				     l->emissions_g, l->emissions_covered_s };

		for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			if (!(v[i] >= 0) || isnan(v[i]))
				return "ceems_agent_proto_reply_decode: negative or NaN "
				       "figure in a report";
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!(l->joules[d] >= 0) || !(l->static_j[d] >= 0) ||
			    !(l->covered_s[d] >= 0))
				return "ceems_agent_proto_reply_decode: negative or NaN "
				       "energy in a report";
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (l->idle_unlearned[d] && !l->measured[d])
				return "ceems_agent_proto_reply_decode: idle_unlearned "
				       "in a domain not measured";
		if (!nul_within(l->factor.source, sizeof(l->factor.source)) ||
		    !nul_within(l->factor.zone, sizeof(l->factor.zone)))
			return "ceems_agent_proto_reply_decode: unterminated factor string";
	}
	if (report.series != NULL) {
		problem = check_series(report.series);
		ceems_agent_series_free(report.series);
		report.series = NULL;
		if (problem != NULL)
			return problem;
	}
	problem = check_report_gpus(&report);
	return problem != NULL ? problem : check_perf_report(&report.perf);
}

const char *
fuzz_check_agent_proto(const char *data, size_t len)
{
	const char *problem = check_request(data, len);

	return problem != NULL ? problem : check_reply(data, len);
}

/* ---- job notes (lib/record/job_note.h) ---- */

const char *
fuzz_check_job_note(const char *data, size_t len)
{
	static const int errors[] = { -EINVAL, 0 };
	static struct ceems_job_note note, again;
	static char text[CEEMS_NOTE_MAX + 1];
	char err[256];
	int ret, n;

	memset(err, 'x', sizeof(err));
	ret = ceems_job_note_decode(data, len, &note, err, sizeof(err));
	if (!ret_allowed(ret, errors))
		return "ceems_job_note_decode: undocumented return code";
	if (ret < 0) {
		if (!nul_within(err, sizeof(err)) || err[0] == '\0')
			return "ceems_job_note_decode: error without a sentence";
		return NULL;
	}
	if (note.meta.jobid == 0)
		return "ceems_job_note_decode: job id 0 accepted";
	if (strcmp(note.by, "extern") != 0 && strcmp(note.by, "epilog") != 0)
		return "ceems_job_note_decode: a writer other than extern or epilog";
	if (!nul_within(note.why, sizeof(note.why)))
		return "ceems_job_note_decode: why not terminated";
	/* What the agent accepted, the plugin can write again: the same
	 * writer, reason, job and times (free text such as the account is
	 * made safe where it enters, lib/base/text.h, not kept byte for byte).
	  * */
	n = ceems_job_note_encode(&note, text, sizeof(text));
	if (n <= 0 || (size_t)n >= sizeof(text))
		return "ceems_job_note_encode: cannot encode a decoded note";
	if (ceems_job_note_decode(text, (size_t)n, &again, err, sizeof(err)) != 0 ||
	    strcmp(note.by, again.by) != 0 || strcmp(note.why, again.why) != 0 ||
	    note.meta.jobid != again.meta.jobid ||
	    note.meta.uid != again.meta.uid ||
	    note.meta.start_time != again.meta.start_time ||
	    note.meta.end_time != again.meta.end_time)
		return "ceems_job_note_encode: decoding its text gives another note";
	return NULL;
}

/* ---- Slurm's GPU allocation (lib/sources/gres.h) ---- */

static bool
gres_match_all(const char *nodes, void *arg)
{
	(void)arg;
	return nodes[0] != '\0';
}

const char *
fuzz_check_gres(const char *data, size_t len)
{
	static char files[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];
	uint32_t idx[16];
	unsigned int line = 0;
	size_t n = 99;
	int r;

	r = ceems_gres_detail_gpu_indices(data, idx, 16, &n);
	if (r != 0 && r != -EINVAL && r != -E2BIG)
		return "ceems_gres_detail_gpu_indices: undocumented return code";
	if (n > 16)
		return "ceems_gres_detail_gpu_indices: more indices than room";
	for (size_t i = 1; r == 0 && i < n; i++)
		if (idx[i] <= idx[i - 1])
			return "ceems_gres_detail_gpu_indices: indices not "
			       "ascending and distinct";
	{
		struct ceems_gres_shared sh[8];
		size_t ns = 99;

		r = ceems_gres_detail_shared(data, sh, 8, &ns);
		if (r != 0 && r != -EINVAL && r != -E2BIG)
			return "ceems_gres_detail_shared: undocumented return code";
		for (size_t i = 0; r == 0 && i < ns; i++)
			if (sh[i].ndev == 0 || !nul_within(sh[i].name, sizeof(sh[i].name)))
				return "ceems_gres_detail_shared: a share of no device";
	}
	r = ceems_gres_conf_gpu_files(data, len, gres_match_all, NULL, files,
				      &n, &line);
	if (r != 0 && r != -EINVAL && r != -E2BIG)
		return "ceems_gres_conf_gpu_files: undocumented return code";
	if (r == 0 && line != 0)
		return "ceems_gres_conf_gpu_files: a line number on success";
	if (n > CEEMS_GRES_MAX_FILES)
		return "ceems_gres_conf_gpu_files: more files than room";
	for (size_t i = 0; r == 0 && i < n; i++)
		if (!nul_within(files[i], sizeof(files[i])) ||
		    files[i][0] != '/')
			return "ceems_gres_conf_gpu_files: a file that is not "
			       "an absolute, terminated path";
	if (r == 0) {
		double counts[CEEMS_GRES_MAX_FILES];

		r = ceems_gres_conf_shared_counts(data, len, gres_match_all,
						  NULL, "shard", files, n,
						  counts, &line);
		if (r != 0 && r != -EINVAL && r != -E2BIG)
			return "ceems_gres_conf_shared_counts: undocumented return code";
		for (size_t i = 0; r == 0 && i < n; i++)
			if (!isfinite(counts[i]) || counts[i] < 0)
				return "ceems_gres_conf_shared_counts: a count "
				       "that is not a number >= 0";
	}
	return NULL;
}
