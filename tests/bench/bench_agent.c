/* bench_agent.c - CPU time and memory of the node agent's tick.
 *
 * Builds a node of N Slurm jobs as fixture trees (cgroup v1 job
 * directories with the files of tests/fixtures job 42, the two-socket RAPL
 * tree, /proc/stat and meminfo), opens the engine as the agent does
 * (1 s tick, full cgroup readings every 10 s), registers the jobs and then
 * times T ticks.  Only the tick calls are timed, with the process CPU
 * clock (user + system: the preads count), so neither the setup nor the
 * rewriting of counters between ticks is in the figures.
 *
 * It also counts every malloc/calloc/realloc of the process during the
 * ticks (the issue asks for none on the steady-state path) and reports
 * the resident memory after setup.  tests/bench/run.sh runs it for
 * several N and prints the table of doc/performance.md.
 *
 * It also times, on the wall clock, the blocks a request arriving during
 * a tick must wait for: the whole tick, or with -p each part of a tick
 * taken as the agent takes it (tools/agent/agent_server.c: parts of
 * CEEMS_AGENT_TICK_PART_JOBS jobs until a millisecond has passed, then
 * the end); the longest block is the longest a request waits.
 *
 * With -g N -G LIB the node also has N GPUs of the NVML double LIB
 * (tests/doubles/nvml_double.c, with its profiling metrics and a
 * scenario file in the tree): job i holds GPU i mod N, and every tick
 * reads the GPUs' energy and usage.  The figures are then ceems's own
 * cost per GPU; a real driver's calls add their own (ioctls).
 *
 * With -m RATE the first job marks its work RATE times a second through
 * the agent's own mark path (ceems_agent_marks_apply, what a mark
 * request reaches once its caller is checked), spread over the second
 * before each tick, in every other window of 10 ticks; in the windows
 * between, the process spins on the CPU clock as long as the last
 * marking second took, touching no memory.  Any CPU work just before a
 * tick slows it on a loaded machine (the scheduler, the caches), marks
 * or not: the spin puts the same in front of the other ticks, so that
 * the ratio of the two windows' ticks, in the same run, is what the
 * marks themselves do to the tick (doc/performance.md, "A job marking
 * its work").  The marks' own CPU time is timed apart.
 *
 * Usage: bench_agent [-n JOBS] [-t TICKS] [-s] [-k] [-p] [-d DIR]
 *                    [-g GPUS -G LIB] [-i] [-m RATE]
 *   -s  static counters: do not rewrite any counter between ticks
 *   -k  keep the fixture tree (its path is printed)
 *   -p  take each tick in parts, as the agent does
 *   -d  keep the state file in DIR (e.g. on a disk filesystem, as the
 *       agent's state_dir is) rather than in the fixture tree
 *   -i  idle power configured (package 60 W, DRAM 10 W), as an admin may
 *       set it: the agent then learns none (without -i it learns it, the
 *       default: the regression of lib/model/idle_fit.c runs every tick) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "base/log.h"
#include "bench_time.h"
#include "../unit/fixture.h"
#include "../unit/tmptree.h"

#define SEC 1000000000ULL
#define NODE_CPUS 128
#define JOB_DIR "slurm_localhost/uid_1000/job_%u"
#define FIXTURE_JOB "cgroup/v1/sys/fs/cgroup/%s/slurm_localhost/uid_1000/job_42"
#define FIRST_JOBID 1000

/* ------------------------------------------------------------------ */
/* Allocation counter                                                  */
/* ------------------------------------------------------------------ */

/* glibc lets a program replace malloc, and then its own functions call
 * the replacement too; forwarding to glibc's allocator (exported as
 * __libc_*) keeps the heap as it is and counts every allocation of the
 * process, whoever makes it.  The sanitizers bring their own allocator:
 * there nothing is counted. */
#if defined(__SANITIZE_ADDRESS__)
#define COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COUNT_ALLOCS 0
#endif
#endif
#ifndef COUNT_ALLOCS
#define COUNT_ALLOCS 1
#endif

static unsigned long nallocs;

#if COUNT_ALLOCS
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t nmemb, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);

void *
malloc(size_t size)
{
	nallocs++;
	return __libc_malloc(size);
}

void *
calloc(size_t nmemb, size_t size)
{
	nallocs++;
	return __libc_calloc(nmemb, size);
}

void *
realloc(void *ptr, size_t size)
{
	nallocs++;
	return __libc_realloc(ptr, size);
}

void
free(void *ptr)
{
	__libc_free(ptr);
}
#endif

/* ------------------------------------------------------------------ */
/* The fixture node                                                    */
/* ------------------------------------------------------------------ */

static char root[PATH_MAX];		/* the whole tree */
static char sys_root[PATH_MAX + 8];	/* RAPL */
static char cg_root[PATH_MAX + 8];	/* cgroupfs prefix */
static char proc_root[PATH_MAX + 8];
static char text[65536];

/* The RAPL counters the bench moves: the fixture's values and ranges,
 * and a power in watts below each domain's maximum (a faster counter
 * would be a reset).  They wrap at their range as the hardware's do. */
#define PKG_RANGE 262143328850ULL
#define DRAM_RANGE 65712999613ULL
static const struct {
	const char *file;
	unsigned long long base_uj, range_uj;
	unsigned watts;
} rapl_counters[] = {
	{ "class/powercap/intel-rapl:0/energy_uj", 100000000, PKG_RANGE, 120 },
	{ "class/powercap/intel-rapl:0:0/energy_uj", 50000000, PKG_RANGE, 100 },
	{ "class/powercap/intel-rapl:0:1/energy_uj", 20000000, DRAM_RANGE, 12 },
	{ "class/powercap/intel-rapl:1/energy_uj", 200000000, PKG_RANGE, 110 },
	{ "class/powercap/intel-rapl:1:0/energy_uj", 60000000, PKG_RANGE, 90 },
	{ "class/powercap/intel-rapl:1:1/energy_uj", 30000000, DRAM_RANGE, 11 },
	{ "class/powercap/intel-rapl-mmio:0/energy_uj", 100000000, PKG_RANGE, 5 },
};
#define NRAPL (sizeof(rapl_counters) / sizeof(rapl_counters[0]))

static void
die(const char *what)
{
	fprintf(stderr, "bench_agent: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* snprintf that refuses to cut a path short. */
static void path_printf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
path_printf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size) {
		fprintf(stderr, "bench_agent: path too long: %s\n", buf);
		exit(1);
	}
}

/* Copy the regular files of directory FROM into the new directory TO
 * (the job's own files; the step directories are not read). */
static void
copy_files(const char *from, const char *to)
{
	struct dirent *de;
	DIR *dir;

	if (mkdir(to, 0755) < 0 && errno != EEXIST)
		tmptree_die("mkdir", to);
	dir = opendir(from);
	if (dir == NULL)
		tmptree_die("opendir", from);
	while ((de = readdir(dir)) != NULL) {
		char src[PATH_MAX], rel[PATH_MAX];
		struct stat st;

		path_printf(src, sizeof(src), "%s/%s", from, de->d_name);
		if (lstat(src, &st) < 0)
			tmptree_die("lstat", src);
		if (!S_ISREG(st.st_mode))
			continue;
		if (ceems_fileio_read_text_file(src, text, sizeof(text)) < 0)
			tmptree_die("read", src);
		path_printf(rel, sizeof(rel), "%s/%s", to + strlen(root) + 1,
			 de->d_name);
		tmptree_write(root, rel, text);
	}
	closedir(dir);
}

/* mkdir -p of ROOT/REL. */
static void
make_dirs(const char *rel)
{
	char path[PATH_MAX];

	path_printf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + strlen(root) + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			tmptree_die("mkdir", path);
		*p = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		tmptree_die("mkdir", path);
}

/* /proc/stat of a NODE_CPUS-CPU node that has been busy BUSY ticks. */
static void
write_proc_stat(unsigned long long busy)
{
	size_t n;

	n = (size_t)snprintf(text, sizeof(text),
			     "cpu  %llu 0 %llu 9000000 1500 0 2000 0 0 0\n",
			     busy, busy / 10);
	for (int c = 0; c < NODE_CPUS && n < sizeof(text) - 128; c++)
		n += (size_t)snprintf(text + n, sizeof(text) - n,
				      "cpu%d %llu 0 %llu 70000 12 0 16 0 0 0\n",
				      c, busy / NODE_CPUS,
				      busy / NODE_CPUS / 10);
	snprintf(text + n, sizeof(text) - n,
		 "intr 123456789 0 0\nctxt 987654321\nbtime 1700000000\n"
		 "processes 123456\nprocs_running 3\nprocs_blocked 0\n"
		 "softirq 1234567 0 0 0 0 0 0 0 0 0 0\n");
	tmptree_write(root, "proc/stat", text);
}

/* Kept-open descriptors of each job's cpuacct.usage, to move it. */
static int *job_usage_fd;

static void
make_jobs(unsigned njobs)
{
	static const char *const controllers[] = { "cpu,cpuacct", "memory",
						   "cpuset" };
	char from[PATH_MAX], rel[PATH_MAX], to[PATH_MAX * 2];

	job_usage_fd = calloc(njobs, sizeof(*job_usage_fd));
	if (job_usage_fd == NULL)
		die("calloc");
	for (unsigned i = 0; i < njobs; i++) {
		unsigned jobid = FIRST_JOBID + i;

		for (size_t c = 0; c < 3; c++) {
			path_printf(from, sizeof(from), "%s/" FIXTURE_JOB,
				 fixture_root(), controllers[c]);
			path_printf(rel, sizeof(rel), "cg/sys/fs/cgroup/%s/" JOB_DIR,
				 controllers[c], jobid);
			make_dirs(rel);
			path_printf(to, sizeof(to), "%s/%s", root, rel);
			copy_files(from, to);
		}
		path_printf(to, sizeof(to), "%s/sys/fs/cgroup/cpu,cpuacct/" JOB_DIR
			 "/cpuacct.usage", cg_root, jobid);
		job_usage_fd[i] = open(to, O_WRONLY | O_CLOEXEC);
		if (job_usage_fd[i] < 0)
			die(to);
	}
}

static void
make_node(unsigned njobs)
{
	/* The RAPL tree at the top: the sysfs root is the tree's root. */
	path_printf(root, sizeof(root), "%s", tmptree_new(fixture_path("sys/rapl-intel")));
	path_printf(sys_root, sizeof(sys_root), "%s", root);
	path_printf(cg_root, sizeof(cg_root), "%s/cg", root);
	path_printf(proc_root, sizeof(proc_root), "%s/proc", root);
	make_dirs("proc/self");
	make_dirs("state");
	tmptree_write(root, "proc/self/mountinfo",
		      fixture_text("cgroup/v1/mountinfo.txt", text, sizeof(text)));
	tmptree_write(root, "proc/meminfo",
		      fixture_text("proc/meminfo", text, sizeof(text)));
	write_proc_stat(1000000);
	make_jobs(njobs);
}

/* Write V in decimal over the file behind FD, in place. */
static void
rewrite_fd(int fd, unsigned long long v)
{
	char num[32];
	int n = snprintf(num, sizeof(num), "%llu\n", v);

	if (pwrite(fd, num, (size_t)n, 0) != n || ftruncate(fd, n) < 0)
		die("rewrite counter");
}

static void
rewrite_path(const char *dir, const char *rel, unsigned long long v)
{
	char num[32];

	snprintf(num, sizeof(num), "%llu\n", v);
	tmptree_write(dir, rel, num);
}

/* Move every counter by one second of a half-busy node whose busy CPU
 * time is shared evenly by the jobs. */
static void
advance(unsigned long long step, unsigned njobs)
{
	const unsigned long long busy_ticks = NODE_CPUS / 2 * 100;	/* USER_HZ */

	for (size_t r = 0; r < NRAPL; r++)
		rewrite_path(sys_root, rapl_counters[r].file,
			     (rapl_counters[r].base_uj +
			      step * rapl_counters[r].watts * 1000000ULL) %
			     rapl_counters[r].range_uj);
	write_proc_stat(1000000 + step * busy_ticks);
	for (unsigned i = 0; i < njobs; i++)
		rewrite_fd(job_usage_fd[i], 2483101234ULL +
			   step * (NODE_CPUS / 2 * SEC / njobs));
}

/* ------------------------------------------------------------------ */
/* Measurement                                                         */
/* ------------------------------------------------------------------ */

static uint64_t
cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* The one function run.sh's callgrind run collects (--toggle-collect),
 * kept out of line so that its name stays in the binary. */
void bench_tick(struct ceems_agent *agent, uint64_t now_ns);

/* The blocks of the last ticks, in ms, for their order statistics. */
static double *blocks;
static size_t nblocks, blocks_size;
static double end_ms_max;

static void
add_block(double ms)
{
	if (nblocks == blocks_size) {
		blocks_size = blocks_size ? 2 * blocks_size : 4096;
		/* Outside the counted window: see tick_allocs. */
		blocks = realloc(blocks, blocks_size * sizeof(*blocks));
		if (blocks == NULL)
			die("realloc");
	}
	blocks[nblocks++] = ms;
}

/* One tick in parts, as tools/agent/agent_server.c takes it: parts of
 * CEEMS_AGENT_TICK_PART_JOBS jobs until 1 ms has passed, then the end. */
static void
tick_in_parts(struct ceems_agent *agent, uint64_t now_ns)
{
	double t0 = bench_now_ms(), t;
	bool done = false;

	ceems_agent_tick_begin(agent, now_ns);
	while (!done) {
		done = ceems_agent_tick_read(agent, CEEMS_AGENT_TICK_PART_JOBS);
		if (!done && bench_now_ms() - t0 < 1.0)
			continue;
		if (done)
			break;
		add_block(bench_now_ms() - t0);
		t0 = bench_now_ms();
	}
	ceems_agent_tick_end(agent, now_ns);
	t = bench_now_ms() - t0;
	add_block(t);
	if (t > end_ms_max)
		end_ms_max = t;
}

static bool in_parts;

__attribute__((noinline)) void
bench_tick(struct ceems_agent *agent, uint64_t now_ns)
{
	double t0;

	if (in_parts) {
		tick_in_parts(agent, now_ns);
		return;
	}
	t0 = bench_now_ms();
	ceems_agent_tick(agent, now_ns);
	add_block(bench_now_ms() - t0);
}

/* The process's memory as ps and /proc/self/status show it, in KiB:
 * VmRSS, its peak VmHWM, and the two parts of VmRSS that matter here,
 * RssAnon (the heap), RssFile (mapped files: libraries, and a state
 * file mapped into memory) and RssShmem (the same for a file on tmpfs,
 * where the bench's trees are). */
struct rss {
	unsigned long rss, hwm, anon, file, shmem;
};

static void
read_rss(struct rss *r)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	memset(r, 0, sizeof(*r));
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "VmRSS:", 6) == 0)
			r->rss = strtoul(line + 6, NULL, 10);
		else if (strncmp(line, "VmHWM:", 6) == 0)
			r->hwm = strtoul(line + 6, NULL, 10);
		else if (strncmp(line, "RssAnon:", 8) == 0)
			r->anon = strtoul(line + 8, NULL, 10);
		else if (strncmp(line, "RssFile:", 8) == 0)
			r->file = strtoul(line + 8, NULL, 10);
		else if (strncmp(line, "RssShmem:", 9) == 0)
			r->shmem = strtoul(line + 9, NULL, 10);
	}
	fclose(f);
}

static void
raise_fd_limit(unsigned njobs)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("getrlimit");
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		die("setrlimit");
	/* About 10 counter files per job for the agent, one for the bench. */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 12ULL * njobs + 64) {
		fprintf(stderr, "bench_agent: %u jobs need about %u descriptors, the hard limit is %llu\n",
			njobs, 12 * njobs + 64, (unsigned long long)rl.rlim_cur);
		exit(1);
	}
}

/* -m: marks a second, 0 none; what the agent took and refused, and
 * the CPU time they cost. */
static unsigned long mark_rate;
static uint64_t marks_taken, marks_refused, mark_cpu_ns, mark_second_ns;

/* RATE marks of job JOBID spread over the second from FROM_NS. */
static void
mark_second(struct ceems_agent *a, uint32_t jobid, uint64_t from_ns)
{
	char err[256];
	uint64_t t0 = cpu_now_ns();

	for (unsigned long k = 0; k < mark_rate; k++) {
		int r = ceems_agent_marks_apply(a, jobid, "samples", "samples",
						NULL, CEEMS_MARKS_ADD, 1,
						from_ns + k * SEC / mark_rate,
						err, sizeof(err));

		if (r == 0)
			marks_taken++;
		else if (r == -EBUSY)
			marks_refused++;
		else
			die(err);
	}
	mark_second_ns = cpu_now_ns() - t0;
	mark_cpu_ns += mark_second_ns;
}

/* The control of a quiet second: as much CPU as the last marking one. */
static void
spin_second(void)
{
	uint64_t t0 = cpu_now_ns();

	while (cpu_now_ns() - t0 < mark_second_ns)
		;
}

static void
usage(void)
{
	fprintf(stderr, "usage: bench_agent [-n JOBS] [-t TICKS] [-s] [-k] [-p] [-d DIR] [-g GPUS -G LIB] [-i] [-m RATE]\n");
	exit(2);
}

/* A scenario of NGPUS busy devices for the NVML double, in the tree. */
static void
write_gpu_scenario(unsigned ngpus)
{
	char path[PATH_MAX], dev[512];
	FILE *f;

	path_printf(path, sizeof(path), "%s/gpu.scenario", root);
	f = fopen(path, "w");
	if (f == NULL)
		die("fopen");
	fputs("init=ok\n", f);
	for (unsigned g = 0; g < ngpus; g++) {
		snprintf(dev, sizeof(dev),
			 "[device]\nuuid=GPU-00000000-0000-0000-0000-%012u\n"
			 "bus_id=00000000:%02X:00.0\nname=Bench\nminor=%u\n"
			 "power_w=300\npower_limit_w=700\nutil=80\n"
			 "mem_util=40\nmemory_total=85899345920\n"
			 "memory_used=1073741824\ngpm_sm_active=60\n"
			 "gpm_sm_occupancy=30\ngpm_tensor=20\ngpm_fp32=10\n",
			 g, 0x10 + g, g);
		fputs(dev, f);
	}
	if (fclose(f) != 0)
		die("fclose");
	setenv("CEEMS_GPU_DOUBLE_SCENARIO", path, 1);
}

int
main(int argc, char **argv)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";
	unsigned long njobs = 1, nticks = 1000;
	bool rewrite = true, keep = false;
	const char *state_dir = NULL;
	uint64_t now = 100 * SEC, t0, total_ns = 0, full_ns = 0, clock_ns;
	unsigned long nfull = 0, allocs_before, tick_allocs = 0;
	uint64_t ckpt_ns = 0, win_ns[2] = { 0, 0 };
	unsigned long win_ticks[2] = { 0, 0 };
	struct rss setup, end;
	unsigned long ngpus = 0;
	const char *gpu_lib = NULL;
	bool idle_configured = false;
	int opt;

	while ((opt = getopt(argc, argv, "n:t:skpd:g:G:im:")) != -1) {
		switch (opt) {
		case 'n':
			njobs = strtoul(optarg, NULL, 10);
			break;
		case 't':
			nticks = strtoul(optarg, NULL, 10);
			break;
		case 's':
			rewrite = false;
			break;
		case 'k':
			keep = true;
			break;
		case 'd':
			state_dir = optarg;
			break;
		case 'p':
			in_parts = true;
			break;
		case 'g':
			ngpus = strtoul(optarg, NULL, 10);
			break;
		case 'G':
			gpu_lib = optarg;
			break;
		case 'i':
			idle_configured = true;
			break;
		case 'm':
			mark_rate = strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (njobs < 1 || njobs > 65536 || nticks < 1 || ngpus > 16 ||
	    (ngpus > 0 && gpu_lib == NULL))
		usage();
	raise_fd_limit((unsigned)njobs);
	ceems_log_set_level(CEEMS_LOG_WARNING);
	make_node((unsigned)njobs);

	ceems_conf_defaults(&c);
	path_printf(c.sysfs_root, sizeof(c.sysfs_root), "%s", sys_root);
	path_printf(c.procfs_root, sizeof(c.procfs_root), "%s", proc_root);
	path_printf(c.cgroupfs_prefix, sizeof(c.cgroupfs_prefix), "%s", cg_root);
	if (state_dir != NULL)
		path_printf(c.state_dir, sizeof(c.state_dir), "%s", state_dir);
	else
		path_printf(c.state_dir, sizeof(c.state_dir), "%s/state", root);
	path_printf(c.emissions_table, sizeof(c.emissions_table),
		 "%s/../../lib/data/carbon-intensity.tsv", fixture_root());
	snprintf(c.zone, sizeof(c.zone), "FR");
	c.interval_ns = SEC;
	c.usage_interval_ns = 10 * SEC;
	if (idle_configured) {
		c.idle_power_package_w = 60;
		c.idle_power_dram_w = 10;
	}
	snprintf(c.gpu_rocm_smi_library, sizeof(c.gpu_rocm_smi_library), "none");
	snprintf(c.gpu_nvml_library, sizeof(c.gpu_nvml_library), "%s",
		 ngpus > 0 ? gpu_lib : "none");
	if (ngpus > 0)
		write_gpu_scenario((unsigned)ngpus);
	if (c.max_jobs < njobs)
		c.max_jobs = (uint32_t)njobs;
	a = ceems_agent_open(&c, now, err, sizeof(err));
	if (a == NULL) {
		fprintf(stderr, "bench_agent: agent: %s\n", err);
		return 1;
	}
	/* As the agent does when it starts. */
	ceems_agent_open_start(a, now);
	ceems_agent_restore(a, now);
	for (unsigned i = 0; i < njobs; i++) {
		struct ceems_agent_job_spec spec;
		unsigned jobid = FIRST_JOBID + i;
		int ret;

		memset(&spec, 0, sizeof(spec));
		spec.jobid = jobid;
		spec.uid = 1000;
		snprintf(text, sizeof(text),
			 "8:memory:/" JOB_DIR "/step_batch/task_0\n"
			 "7:cpuset:/" JOB_DIR "/step_batch\n"
			 "6:cpu,cpuacct:/" JOB_DIR "/step_batch/task_0\n"
			 "0::/system.slice/slurmd.service\n",
			 jobid, jobid, jobid);
		if (ngpus > 0) {
			snprintf(spec.gpu_ids[0], sizeof(spec.gpu_ids[0]),
				 "dev:195:%lu", i % ngpus);
			spec.ngpu_ids = 1;
		}
		if (ceems_cgroup_path_job_from_proc(text, jobid, &spec.cgroup) != 0 ||
		    (ret = ceems_agent_register(a, &spec, now)) != 0) {
			fprintf(stderr, "bench_agent: cannot register job %u\n",
				jobid);
			return 1;
		}
	}
	/* One tick so that every job has a previous reading. */
	now += SEC;
	if (rewrite)
		advance(1, (unsigned)njobs);
	ceems_agent_tick(a, now);
	read_rss(&setup);
	/* Room for the blocks before the counted window. */
	blocks_size = nticks * (njobs / CEEMS_AGENT_TICK_PART_JOBS + 2);
	blocks = malloc(blocks_size * sizeof(*blocks));
	if (blocks == NULL)
		die("malloc");
	nblocks = 0;

	t0 = cpu_now_ns();
	for (int i = 0; i < 1000; i++)
		(void)cpu_now_ns();
	clock_ns = (cpu_now_ns() - t0) / 1000;

	for (unsigned long t = 1; t <= nticks; t++) {
		/* Windows of 10 ticks, each with one full tick, marking
		 * first (the spins of the others take its time). */
		bool full, marking = mark_rate > 0 && (t - 1) / 10 % 2 == 0;
		uint64_t dt;

		if (marking)
			mark_second(a, FIRST_JOBID, now);
		else if (mark_rate > 0)
			spin_second();
		now += SEC;
		if (rewrite)
			advance(t + 1, (unsigned)njobs);
		full = now % (10 * SEC) == 0;
		allocs_before = nallocs;
		t0 = cpu_now_ns();
		bench_tick(a, now);
		dt = cpu_now_ns() - t0;
		tick_allocs += nallocs - allocs_before;
		dt = dt > clock_ns ? dt - clock_ns : 0;
		/* The checkpoint after each tick (checkpoint_interval is
		 * the tick's by default), timed apart. */
		t0 = cpu_now_ns();
		ceems_agent_checkpoint(a, now);
		ckpt_ns += cpu_now_ns() - t0;
		total_ns += dt;
		win_ns[marking] += dt;
		win_ticks[marking]++;
		if (full) {
			full_ns += dt;
			nfull++;
		}
	}
	read_rss(&end);

	printf("jobs %lu\n", njobs);
	printf("ticks %lu\n", nticks);
	printf("full_ticks %lu\n", nfull);
	printf("counters %s\n", rewrite ? "moving" : "static");
	printf("clock_overhead_us %.3f\n", (double)clock_ns / 1e3);
	printf("tick_us %.2f\n", (double)total_ns / 1e3 / (double)nticks);
	printf("light_tick_us %.2f\n", nticks > nfull ?
	       (double)(total_ns - full_ns) / 1e3 / (double)(nticks - nfull) : 0.0);
	printf("full_tick_us %.2f\n", nfull > 0 ?
	       (double)full_ns / 1e3 / (double)nfull : 0.0);
	printf("budget_us %.2f\n", 20.0 + 5.0 * (double)njobs);
	printf("ticks_in_parts %s\n", in_parts ? "yes" : "no");
	printf("blocks %zu\n", nblocks);
	printf("block_median_ms %.3f\n", bench_sort_median(blocks, nblocks));
	printf("block_p99_ms %.3f\n", nblocks ? blocks[(nblocks * 99) / 100] : 0.0);
	printf("block_max_ms %.3f\n", nblocks ? blocks[nblocks - 1] : 0.0);
	if (in_parts)
		printf("end_max_ms %.3f\n", end_ms_max);
	if (COUNT_ALLOCS)
		printf("tick_allocs %lu\n", tick_allocs);
	else
		printf("tick_allocs unchecked\n");
	printf("checkpoint_us %.2f\n", (double)ckpt_ns / 1e3 / (double)nticks);
	if (mark_rate > 0 && win_ticks[0] > 0 && win_ticks[1] > 0) {
		double quiet = (double)win_ns[0] / 1e3 / (double)win_ticks[0];
		double marking = (double)win_ns[1] / 1e3 / (double)win_ticks[1];

		printf("mark_rate %lu\n", mark_rate);
		printf("tick_us_spin %.2f\n", quiet);
		printf("tick_us_marking %.2f\n", marking);
		printf("tick_ratio %.3f\n", quiet > 0 ? marking / quiet : 0.0);
		printf("marks_taken %llu\n", (unsigned long long)marks_taken);
		printf("marks_refused %llu\n", (unsigned long long)marks_refused);
		printf("mark_ns %.1f\n", (double)mark_cpu_ns /
		       (double)(marks_taken + marks_refused));
	}
	printf("rss_setup_kib %lu\n", setup.rss);
	printf("rss_end_kib %lu\n", end.rss);
	printf("rss_anon_kib %lu\n", end.anon);
	printf("rss_file_kib %lu\n", end.file);
	printf("rss_shmem_kib %lu\n", end.shmem);
	printf("hwm_kib %lu\n", end.hwm);
	printf("njobs_agent %zu\n", ceems_agent_njobs(a));

	ceems_agent_open_close(a);
	for (unsigned i = 0; i < njobs; i++)
		close(job_usage_fd[i]);
	free(job_usage_fd);
	free(blocks);
	if (keep)
		printf("tree %s\n", root);
	else
		tmptree_remove(root);
	return tick_allocs != 0 ? 3 : 0;
}
