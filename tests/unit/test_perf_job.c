/* test_perf_job.c - a job's perf counters on a real cgroup this test
 * makes: a child process moved into it does a known amount of work
 * (page faults, sleeps, CPU time), which it measures itself with
 * getrusage; the job's counts must agree within 5% (the task clock
 * also within what a hypervisor stole meanwhile).  Then the budget,
 * hardware events (not supported on a node without a PMU, never zeros),
 * the scaling, the finding of the perf_event mount, and the adoption
 * of a v1 job's processes.  Parts that need root and a writable cgroup
 * tree are skipped elsewhere. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "base/fileio.h"
#include "sources/perf_cgroup.h"
#include "sources/perf_job.h"
#include "../tap.h"

#include <json-c/json.h>

#define NPAGES 8192
#define NSLEEPS 400

struct child_counts {
	double faults;
	double switches;
	double cpu_ns;
};

struct child {
	pid_t pid;
	int go[2];		/* parent -> child: start, then exit */
	int result[2];		/* child -> parent: its counts */
};

/* One byte to the child; a dead child shows in the checks after. */
static void
poke(int fd, char b)
{
	if (write(fd, &b, 1) != 1)
		printf("# the child is gone: %s\n", strerror(errno));
}

static void
skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_count, why);
}

static double
ru_cpu_ns(const struct rusage *r)
{
	return (r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e9 +
	       (r->ru_utime.tv_usec + r->ru_stime.tv_usec) * 1e3;
}

/* The CPU time the hypervisor stole from this machine's CPUs so far, in
 * ns (/proc/stat's steal column, all CPUs), or 0 where it is unknown.
 * perf's task clock runs while a task is on its CPU, stolen time
 * included; the scheduler's runtime, which getrusage reports, leaves
 * stolen time out on kernels with paravirtual time accounting. */
static double
steal_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (f == NULL)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return 0;
	return (double)v[7] * 1e9 / (double)sysconf(_SC_CLK_TCK);
}

/* The child's work, measured by itself. */
static void
child_work(struct child *c)
{
	struct rusage r0, r1;
	struct child_counts out;
	struct timespec ts = { 0, 20000 }, t0, t1;
	long page = sysconf(_SC_PAGESIZE);
	volatile unsigned long spin = 0;
	char *mem;
	char b;

	if (read(c->go[0], &b, 1) != 1)
		_exit(1);
	getrusage(RUSAGE_SELF, &r0);
	mem = mmap(NULL, (size_t)NPAGES * (size_t)page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(1);
	(void)madvise(mem, (size_t)NPAGES * (size_t)page, MADV_NOHUGEPAGE);
	for (long i = 0; i < NPAGES; i++)
		mem[i * page] = 1;
	for (int i = 0; i < NSLEEPS; i++)
		nanosleep(&ts, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			spin += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L +
		 (t1.tv_nsec - t0.tv_nsec) < 200000000L);
	(void)spin;	/* the work is the point; newer gcc asks it be read */
	getrusage(RUSAGE_SELF, &r1);
	out.faults = (double)(r1.ru_minflt + r1.ru_majflt -
			      r0.ru_minflt - r0.ru_majflt);
	out.switches = (double)(r1.ru_nvcsw + r1.ru_nivcsw -
				r0.ru_nvcsw - r0.ru_nivcsw);
	out.cpu_ns = ru_cpu_ns(&r1) - ru_cpu_ns(&r0);
	if (write(c->result[1], &out, sizeof(out)) != (ssize_t)sizeof(out))
		_exit(1);
	_exit(read(c->go[0], &b, 1) == 1 ? 0 : 1);
}

static int
child_start(struct child *c)
{
	if (pipe(c->go) < 0 || pipe(c->result) < 0)
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0)
		child_work(c);
	return 0;
}

static void
child_finish(struct child *c)
{
	poke(c->go[1], 'x');
	(void)waitpid(c->pid, NULL, 0);
	close(c->go[0]);
	close(c->go[1]);
	close(c->result[0]);
	close(c->result[1]);
}

static int
write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int
move_to(const char *dir, pid_t pid)
{
	char path[1024], text[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(text, sizeof(text), "%d\n", (int)pid);
	return write_text(path, text);
}

static bool
near5(double got, double want)
{
	double tol = want * 0.05 + 5;

	return got >= want - tol && got <= want + tol;
}

/* The counts of a child's work in cgroup DIR, against its own. */
static void
check_counts(const char *dir, const struct ceems_cpuset *cpus)
{
	struct ceems_perf_budget budget;
	struct ceems_perf_report r;
	struct ceems_perf_job *pj;
	struct child_counts own;
	struct child c;
	double stolen;
	int fd;

	ceems_perf_job_budget_init(&budget, 65536);
	if (child_start(&c) < 0 || move_to(dir, c.pid) < 0) {
		ok(0, "a child moved into the test's cgroup");
		return;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	pj = ceems_perf_job_open(fd, cpus, true, true, &budget);
	close(fd);
	ceems_perf_job_report(pj, &r);
	if (r.sw_status == CEEMS_PERF_NO_PERMISSION) {
		skip("perf_event_open in cgroup mode is not permitted here");
		ceems_perf_job_close(pj, &budget);
		child_finish(&c);
		return;
	}
	is_str(ceems_measure_perf_status_name(r.sw_status), "measured",
	       "software events open on the job's cgroup");
	is_int(budget.used, ceems_perf_job_nfds(pj),
	       "the budget counts the job's descriptors");
	stolen = steal_ns();
	poke(c.go[1], 'g');
	if (read(c.result[0], &own, sizeof(own)) != (ssize_t)sizeof(own)) {
		ok(0, "the child's own counts");
		child_finish(&c);
		return;
	}
	/* What was stolen meanwhile, one clock tick of rounding per CPU
	 * at each end: the most the task clock may count beyond the
	 * child's own runtime on a virtual machine. */
	stolen = steal_ns() - stolen;
	if (stolen > 0)
		stolen += 2e9 * (double)sysconf(_SC_NPROCESSORS_ONLN) /
			  (double)sysconf(_SC_CLK_TCK);
	ceems_perf_job_read(pj);
	ceems_perf_job_report(pj, &r);
	ok(own.faults >= NPAGES, "the child faulted its %d pages (%.0f)",
	   NPAGES, own.faults);
	ok(near5(r.value[CEEMS_PERF_PAGE_FAULTS], own.faults),
	   "page faults within 5%% of getrusage: %.0f, %.0f",
	   r.value[CEEMS_PERF_PAGE_FAULTS], own.faults);
	ok(own.switches >= NSLEEPS, "the child slept %d times (%.0f switches)",
	   NSLEEPS, own.switches);
	ok(near5(r.value[CEEMS_PERF_CONTEXT_SWITCHES], own.switches),
	   "context switches within 5%% of getrusage: %.0f, %.0f",
	   r.value[CEEMS_PERF_CONTEXT_SWITCHES], own.switches);
	ok(r.value[CEEMS_PERF_TASK_CLOCK] >= own.cpu_ns * 0.95 &&
	   r.value[CEEMS_PERF_TASK_CLOCK] <= own.cpu_ns * 1.05 + 5e6 + stolen,
	   "task clock within 5%% of getrusage: %.0f ns, %.0f ns "
	   "(%.0f ns stolen by the hypervisor meanwhile)",
	   r.value[CEEMS_PERF_TASK_CLOCK], own.cpu_ns, stolen);
	ok((r.present & (1u << CEEMS_PERF_CPU_MIGRATIONS)) != 0,
	   "CPU migrations measured (%.0f)", r.value[CEEMS_PERF_CPU_MIGRATIONS]);
	if (r.hw_status == CEEMS_PERF_MEASURED) {
		ok(r.value[CEEMS_PERF_CYCLES] > 0, "cycles counted (a PMU here)");
	} else {
		is_str(ceems_measure_perf_status_name(r.hw_status), "not supported",
		       "no PMU: hardware events are not supported");
		ok((r.present >> CEEMS_PERF_FIRST_HW) == 0,
		   "no PMU: no hardware figure, not zeros");
	}
	child_finish(&c);
	ceems_perf_job_close(pj, &budget);
	is_int(budget.used, 0, "closing gives the descriptors back");
}

/* Jobs beyond the budget are not measured, and say so. */
static void
check_budget(const char *dir, const struct ceems_cpuset *cpus)
{
	struct ceems_perf_budget budget;
	struct ceems_perf_report r1, r2;
	struct ceems_perf_job *a, *b;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ceems_perf_job_budget_init(&budget, cpus->count * CEEMS_PERF_NSW);
	a = ceems_perf_job_open(fd, cpus, true, false, &budget);
	b = ceems_perf_job_open(fd, cpus, true, false, &budget);
	ceems_perf_job_report(a, &r1);
	ceems_perf_job_report(b, &r2);
	is_str(ceems_measure_perf_status_name(r1.sw_status), "measured",
	       "budget: the first job is measured");
	is_str(ceems_measure_perf_status_name(r2.sw_status),
	       "not measured: descriptor budget",
	       "budget: the second is not, and says why");
	is_int(r2.present, 0, "budget: the second has no figures");
	is_int(ceems_perf_job_nfds(b), 0, "budget: it holds no descriptor");
	ceems_perf_job_close(a, &budget);
	ceems_perf_job_close(b, &budget);
	a = ceems_perf_job_open(fd, cpus, true, false, &budget);
	ceems_perf_job_report(a, &r1);
	is_str(ceems_measure_perf_status_name(r1.sw_status), "measured",
	       "budget: a job after the first ended is measured");
	ceems_perf_job_close(a, &budget);
	close(fd);
}

static void
check_scale(void)
{
	is_near(ceems_perf_job_scale(1000, 10, 10), 1000, 0, "scale: not multiplexed");
	is_near(ceems_perf_job_scale(1000, 10, 5), 2000, 1e-9, "scale: ran half the time");
	is_near(ceems_perf_job_scale(0, 0, 0), 0, 0, "scale: never enabled is 0");
	ok(ceems_perf_job_scale(7, 10, 0) < 0, "scale: enabled, never ran is unknown");
}

/* The budget is at most half the open-files limit: the other half stays
 * for the agent's cgroup files, sockets and database. */
static void
check_budget_rlimit(void)
{
	struct ceems_perf_budget b;
	struct rlimit saved, low;

	if (getrlimit(RLIMIT_NOFILE, &saved) < 0) {
		skip("getrlimit(RLIMIT_NOFILE) fails");
		return;
	}
	low = saved;
	low.rlim_cur = 200;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0) {
		skip("cannot lower RLIMIT_NOFILE");
		return;
	}
	is_int(ceems_perf_job_budget_init(&b, 65536), 100,
	       "budget: half of an open-files limit of 200");
	is_int(ceems_perf_job_budget_init(&b, 64), 64,
	       "budget: the configured limit when lower");
	(void)setrlimit(RLIMIT_NOFILE, &saved);
}

/* The sweep removes empty job_* directories, and nothing else. */
static void
check_sweep(void)
{
	char root[] = "/tmp/ceems-test-sweep.XXXXXX", path[128];

	if (mkdtemp(root) == NULL) {
		skip("mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/job_1", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/job_2", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/job_2/busy", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/other", root);
	mkdir(path, 0755);
	is_int(ceems_perf_cgroup_sweep(root), 1, "sweep: one empty job directory removed");
	snprintf(path, sizeof(path), "%s/job_2", root);
	ok(access(path, F_OK) == 0, "sweep: a job directory not empty stays");
	snprintf(path, sizeof(path), "%s/other", root);
	ok(access(path, F_OK) == 0, "sweep: what is not a job's stays");
	rmdir(path);
	snprintf(path, sizeof(path), "%s/job_2/busy", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/job_2", root);
	rmdir(path);
	rmdir(root);
}

static void
check_mountinfo(void)
{
	char mnt[256];

	ok(ceems_perf_cgroup_mount_from_mountinfo(
		   "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n"
		   "31 25 0:27 / /sys/fs/cgroup/perf_event rw,nosuid - cgroup cgroup rw,perf_event\n",
		   mnt, sizeof(mnt)) == 0 &&
	   strcmp(mnt, "/sys/fs/cgroup/perf_event") == 0,
	   "mountinfo: the v1 perf_event mount");
	ok(ceems_perf_cgroup_mount_from_mountinfo(
		   "30 25 0:26 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n"
		   "31 25 0:27 /sub /mnt/pe rw - cgroup cgroup rw,perf_event\n",
		   mnt, sizeof(mnt)) == 0 && mnt[0] == '\0',
	   "mountinfo: no v1 perf_event root mount: none");
}

/* A v1 job made here, with a process in a step; its perf_event cgroup
 * is made by adoption, and the process is in it. */
static void
check_adopt(const struct ceems_cgroup_mounts *mounts, const char *perf_v1,
	    const struct ceems_cpuset *cpus)
{
	struct ceems_cgroup_job job;
	char base[1024], step[1200], adopted[1024], text[4096], want[128];
	uint32_t jobid = 3000000000u + (uint32_t)getpid() % 1000000u;
	struct child c;
	int fd;

	if (mounts->v1[CEEMS_CG_CPUACCT][0] == '\0') {
		skip("no v1 cpuacct hierarchy: adoption is for cgroup v1 jobs");
		return;
	}
	snprintf(base, sizeof(base), "%s/ceems_test_perf_%d",
		 mounts->v1[CEEMS_CG_CPUACCT], (int)getpid());
	snprintf(step, sizeof(step), "%s/job_%u/step_0", base, jobid);
	if (ceems_fileio_mkdir_p(step, 0755) < 0) {
		skip("cannot make a v1 cgroup here");
		return;
	}
	memset(&job, 0, sizeof(job));
	job.version = CEEMS_CGROUP_V1;
	snprintf(job.v1[CEEMS_CG_CPUACCT], sizeof(job.v1[0]),
		 "/ceems_test_perf_%d/job_%u", (int)getpid(), jobid);
	if (child_start(&c) < 0 || move_to(step, c.pid) < 0) {
		ok(0, "adopt: a child in the v1 job's step");
		goto out;
	}
	fd = ceems_perf_cgroup_open(&job, jobid, mounts, perf_v1, "", true,
				    adopted, sizeof(adopted));
	ok(fd >= 0 && adopted[0] != '\0', "adopt: the job's perf cgroup made (%s)",
	   adopted);
	snprintf(want, sizeof(want), "/%s/job_%u\n", CEEMS_PERF_ADOPT_DIR, jobid);
	snprintf(text, sizeof(text), "/proc/%d/cgroup", (int)c.pid);
	if (ceems_fileio_read_text_file(text, text, sizeof(text)) < 0)
		text[0] = '\0';
	ok(strstr(text, want) != NULL, "adopt: the step's process is in it");
	if (fd >= 0) {
		struct ceems_perf_budget budget;
		struct ceems_perf_report r;
		struct ceems_perf_job *pj;
		struct child_counts own;

		ceems_perf_job_budget_init(&budget, 65536);
		pj = ceems_perf_job_open(fd, cpus, true, false, &budget);
		poke(c.go[1], 'g');
		if (read(c.result[0], &own, sizeof(own)) != (ssize_t)sizeof(own))
			printf("# the child's counts did not come\n");
		ceems_perf_job_read(pj);
		ceems_perf_job_report(pj, &r);
		ok(r.sw_status != CEEMS_PERF_MEASURED ||
		   r.value[CEEMS_PERF_PAGE_FAULTS] >= NPAGES,
		   "adopt: the work of the step's process is counted (%.0f faults)",
		   r.value[CEEMS_PERF_PAGE_FAULTS]);
		ceems_perf_job_close(pj, &budget);
		close(fd);
	}
	child_finish(&c);
	ceems_perf_cgroup_remove(adopted);
	ok(access(adopted, F_OK) < 0, "adopt: its directory goes at the end");
out:
	rmdir(step);
	snprintf(step, sizeof(step), "%s/job_%u", base, jobid);
	rmdir(step);
	rmdir(base);
}

/* A report made of measured counts (the software group of N events
 * counting PER each), for the resume checks. */
static void
measured(struct ceems_perf_report *r, unsigned sw, unsigned hw, double per)
{
	memset(r, 0, sizeof(*r));
	r->sw_status = (uint8_t)sw;
	r->hw_status = (uint8_t)hw;
	r->running_fraction = 1;
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++) {
		unsigned status = e < CEEMS_PERF_FIRST_HW ? sw : hw;

		if (status == CEEMS_PERF_MEASURED) {
			r->present |= 1u << e;
			r->value[e] = per * (e + 1);
		}
	}
}

/* After an agent restart: the earlier agent's counts and the later's
 * add up, the time between is said; a group either could not count is
 * absent, its status saying why, never a part taken for the whole. */
static void
check_resume(void)
{
	struct ceems_perf_report before, now, out, back;
	struct json_object *obj;
	char err[256];
	bool okj = true;

	measured(&before, CEEMS_PERF_MEASURED, CEEMS_PERF_NOT_SUPPORTED, 1000);
	before.unmeasured_s = 2;
	measured(&now, CEEMS_PERF_MEASURED, CEEMS_PERF_NOT_SUPPORTED, 10);
	now.running_fraction = 0.5;
	ceems_perf_job_report_resume(&before, &now, 3.5, &out);
	is_int(out.sw_status, CEEMS_PERF_MEASURED, "both measured: measured");
	ok(out.value[CEEMS_PERF_PAGE_FAULTS] ==
	   before.value[CEEMS_PERF_PAGE_FAULTS] + now.value[CEEMS_PERF_PAGE_FAULTS],
	   "the counts before and after the restart add up (%.0f)",
	   out.value[CEEMS_PERF_PAGE_FAULTS]);
	is_near(out.unmeasured_s, 5.5, 1e-12, "the time no agent counted, with the earlier restart's");
	is_near(out.running_fraction, 0.5, 0, "the lowest running fraction");
	is_int(out.hw_status, CEEMS_PERF_NOT_SUPPORTED, "hardware: as it was");
	ok((out.present >> CEEMS_PERF_FIRST_HW) == 0, "no hardware counts");

	measured(&now, CEEMS_PERF_NO_CGROUP, CEEMS_PERF_OFF, 10);
	ceems_perf_job_report_resume(&before, &now, 3.5, &out);
	ok(out.sw_status == CEEMS_PERF_NO_CGROUP && out.present == 0,
	   "not counted after the restart: absent, the later status says why");

	measured(&before, CEEMS_PERF_OFF, CEEMS_PERF_OFF, 0);
	measured(&now, CEEMS_PERF_MEASURED, CEEMS_PERF_OFF, 10);
	ceems_perf_job_report_resume(&before, &now, 3.5, &out);
	ok(out.sw_status == CEEMS_PERF_RESTARTED && out.present == 0,
	   "counted after the restart only (an agent that kept none): absent, agent restarted");

	measured(&before, CEEMS_PERF_MEASURED, CEEMS_PERF_OFF, 1000);
	measured(&now, CEEMS_PERF_MEASURED, CEEMS_PERF_OFF, 10);
	ceems_perf_job_report_resume(&before, &now, 1.25, &out);
	obj = ceems_measure_perf_report_to_json(&out, &okj);
	memset(&back, 0, sizeof(back));
	ok(okj && obj != NULL &&
	   ceems_measure_perf_report_from_json(obj, &back, err, sizeof(err)) == 0,
	   "a resumed report encodes and decodes");
	is_near(back.unmeasured_s, 1.25, 0, "unmeasured_s goes through JSON");
	json_object_put(obj);
}

int
main(void)
{
	static struct ceems_cgroup_mounts mounts;
	static char text[1 << 20];
	struct ceems_cpuset cpus;
	char perf_v1[512], root[1024], dir[1100];

	check_scale();
	check_resume();
	check_budget_rlimit();
	check_sweep();
	check_mountinfo();
	if (geteuid() != 0 ||
	    ceems_fileio_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mounts) < 0 ||
	    ceems_perf_cgroup_mount_from_mountinfo(text, perf_v1, sizeof(perf_v1)) < 0 ||
	    ceems_perf_cgroup_root(&mounts, perf_v1, "", root, sizeof(root)) < 0 ||
	    ceems_fileio_read_text_file("/sys/devices/system/cpu/online", text,
				 sizeof(text)) < 0 ||
	    ceems_cgroup_parse_cpu_list(text, &cpus) < 0) {
		skip("not root, or no perf_event cgroup hierarchy here");
		return done_testing();
	}
	snprintf(dir, sizeof(dir), "%s/ceems_test_perf_%d", root, (int)getpid());
	if (mkdir(dir, 0755) < 0) {
		skip("cannot make a cgroup here");
		return done_testing();
	}
	check_counts(dir, &cpus);
	check_budget(dir, &cpus);
	rmdir(dir);
	check_adopt(&mounts, perf_v1, &cpus);
	return done_testing();
}
