/* accuracy-driver.c - drives the node agent's engine (lib/agent/agent.h) for
 * the accuracy test (tests/integration/accuracy.bats), the way
 * tools/ceems-agent drives it, but against the fake powercap tree of
 * tests/doubles/fake-rapl: energy from that tree, CPU time from the real
 * /proc and the real cgroups of the jobs' processes.
 *
 * It opens the ground-truth window of fake-rapl (SIGUSR1, answered by
 * TRUTH.started), registers the jobs, ticks on the agent's timers for the
 * run's duration, closes the window (SIGTERM, answered by TRUTH: the
 * double has then stopped and its counters stand still), deregisters the
 * jobs and prints what the agent attributed to each, as key=value lines:
 *
 *     job_<ID>_package_j, _static_package_j, _dram_j, _cpu_s,
 *     _elapsed_s, _alloc_cores, _package_coverage, _gap_s,
 *     _idle_unlearned (1: some tick split it with no idle power learned)
 *
 * usage: accuracy-driver --sysfs DIR --rapl-pid PID --truth FILE
 *          --state-dir DIR [--duration-s 9] [--tick-ms 100]
 *          [--idle-w W|learn] [--dram-idle-w W|learn] [--warmup-s S]
 *          JOBID:PID:CORES...
 *
 * --warmup-s ticks the agent for S seconds before the window opens, so
 * that a learned idle power can be learned (the jobs' processes should
 * then stay quiet that long); it prints warmup_busy_mean and
 * warmup_busy_sd, the node's busy CPUs per tick over it as /proc/stat
 * tells them (a load that did not vary teaches no idle power). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "cgroup/cgroup_path.h"
#include "base/conf.h"
#include "base/fileio.h"
#include "model/ledger.h"
#include "base/log.h"

#define MAX_JOBS 16
#define SEC 1000000000ULL

struct job_arg {
	uint32_t jobid;
	pid_t pid;
	uint32_t cores;
};

static struct {
	char sysfs[CEEMS_CONFIG_PATH_MAX];
	char state_dir[CEEMS_CONFIG_PATH_MAX];
	char truth[CEEMS_CONFIG_PATH_MAX];
	pid_t rapl_pid;
	double duration_s, tick_s, warmup_s;
	double idle_w, dram_idle_w;	/* < 0: learn */
	struct job_arg jobs[MAX_JOBS];
	size_t njobs;
} opt;

/* The node's busy CPUs per warmup tick: count, mean, sum of squares. */
static struct {
	uint64_t last_ticks, last_ns;
	unsigned n;
	double mean, m2;
} warm;

static void
fail(const char *what, const char *arg)
{
	fprintf(stderr, "accuracy-driver: %s %s\n", what, arg);
	exit(1);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void
sleep_until(uint64_t t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(t / SEC);
	ts.tv_nsec = (long)(t % SEC);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

/* Wait up to TIMEOUT_S for PATH to exist (fake-rapl's answers). */
static void
wait_for_file(const char *path, double timeout_s)
{
	uint64_t end = now_ns() + (uint64_t)(timeout_s * 1e9);

	while (access(path, F_OK) != 0) {
		if (now_ns() > end)
			fail("fake-rapl did not answer: no", path);
		usleep(500);
	}
}

static double
power_arg(const char *o, const char *v)
{
	char *end;
	double w;

	if (v == NULL)
		fail("a value is needed after", o);
	if (strcmp(v, "learn") == 0)
		return -1;
	w = strtod(v, &end);
	if (*end != '\0' || !(w >= 0 && w <= 1e5))
		fail("bad power for", o);
	return w;
}

static double
seconds_arg(const char *o, const char *v, double min, double max)
{
	char *end;
	double s;

	if (v == NULL)
		fail("a value is needed after", o);
	s = strtod(v, &end);
	if (*end != '\0' || !(s >= min && s <= max))
		fail("bad value for", o);
	return s;
}

static void
job_arg(const char *v)
{
	struct job_arg *j;
	unsigned long jobid, pid, cores;
	char *end;

	if (opt.njobs == MAX_JOBS)
		fail("too many jobs at", v);
	j = &opt.jobs[opt.njobs++];
	jobid = strtoul(v, &end, 10);
	if (*end != ':' || jobid == 0 || jobid > UINT32_MAX)
		fail("bad job (JOBID:PID:CORES):", v);
	pid = strtoul(end + 1, &end, 10);
	if (*end != ':' || pid == 0 || pid > 4194304)
		fail("bad job (JOBID:PID:CORES):", v);
	cores = strtoul(end + 1, &end, 10);
	if (*end != '\0' || cores > 4096)
		fail("bad job (JOBID:PID:CORES):", v);
	j->jobid = (uint32_t)jobid;
	j->pid = (pid_t)pid;
	j->cores = (uint32_t)cores;
}

static void
parse_args(int argc, char **argv)
{
	opt.duration_s = 9;
	opt.tick_s = 0.1;
	opt.idle_w = -1;
	opt.dram_idle_w = -1;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = argv[i + 1];

		if (strcmp(o, "--sysfs") == 0 && v != NULL)
			snprintf(opt.sysfs, sizeof(opt.sysfs), "%s", argv[++i]);
		else if (strcmp(o, "--state-dir") == 0 && v != NULL)
			snprintf(opt.state_dir, sizeof(opt.state_dir), "%s", argv[++i]);
		else if (strcmp(o, "--truth") == 0 && v != NULL)
			snprintf(opt.truth, sizeof(opt.truth), "%s", argv[++i]);
		else if (strcmp(o, "--rapl-pid") == 0)
			opt.rapl_pid = (pid_t)seconds_arg(o, argv[++i], 1, 4194304);
		else if (strcmp(o, "--duration-s") == 0)
			opt.duration_s = seconds_arg(o, argv[++i], 0.1, 600);
		else if (strcmp(o, "--tick-ms") == 0)
			opt.tick_s = seconds_arg(o, argv[++i], 10, 10000) / 1e3;
		else if (strcmp(o, "--warmup-s") == 0)
			opt.warmup_s = seconds_arg(o, argv[++i], 0, 600);
		else if (strcmp(o, "--idle-w") == 0)
			opt.idle_w = power_arg(o, argv[++i]);
		else if (strcmp(o, "--dram-idle-w") == 0)
			opt.dram_idle_w = power_arg(o, argv[++i]);
		else if (o[0] != '-')
			job_arg(o);
		else
			fail("unknown option", o);
	}
	if (opt.sysfs[0] == '\0' || opt.truth[0] == '\0' ||
	    opt.state_dir[0] == '\0' || opt.rapl_pid == 0 || opt.njobs == 0)
		fail("usage: accuracy-driver --sysfs DIR --rapl-pid PID --truth FILE --state-dir DIR [--duration-s S] [--tick-ms MS] [--idle-w W|learn] [--dram-idle-w W|learn] [--warmup-s S] JOBID:PID:CORES...", "");
}

/* The job's cgroup as one of its processes sees it, as the plugin would
 * hand it to the agent. */
static void
job_spec(const struct job_arg *arg, struct ceems_agent_job_spec *spec)
{
	char path[64], text[8192];
	int ret;

	memset(spec, 0, sizeof(*spec));
	spec->jobid = arg->jobid;
	spec->uid = 0;
	spec->alloc_cores = arg->cores;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)arg->pid);
	if (ceems_fileio_read_text_file(path, text, sizeof(text)) < 0)
		fail("cannot read", path);
	ret = ceems_cgroup_path_job_from_proc(text, arg->jobid, &spec->cgroup);
	if (ret < 0)
		fail("no job_<ID> cgroup in", path);
}

/* The node's non-idle time in USER_HZ ticks, as the agent counts it
 * (user, nice, system, irq, softirq, steal); 0 when unreadable. */
static uint64_t
node_busy_ticks(void)
{
	unsigned long long v[8] = { 0 };
	FILE *fp = fopen("/proc/stat", "re");
	int n;

	if (fp == NULL)
		return 0;
	n = fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(fp);
	if (n != 8)
		return 0;
	return v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
}

/* Add one warmup tick's busy CPUs to the running mean and variance. */
static void
observe_busy(void)
{
	uint64_t ticks = node_busy_ticks(), t = now_ns();
	double busy, delta;

	if (warm.last_ns != 0 && ticks >= warm.last_ticks && t > warm.last_ns) {
		busy = (double)(ticks - warm.last_ticks) /
		       (double)sysconf(_SC_CLK_TCK) / ((double)(t - warm.last_ns) / 1e9);
		warm.n++;
		delta = busy - warm.mean;
		warm.mean += delta / warm.n;
		warm.m2 += delta * (busy - warm.mean);
	}
	warm.last_ticks = ticks;
	warm.last_ns = t;
}

/* Run the agent's two timers until END: the main tick, and the faster
 * source sampling a counter that wraps quickly asks for. */
static void
run_until(struct ceems_agent *a, uint64_t *next_tick, uint64_t end,
	  bool warmup)
{
	uint64_t tick_ns = (uint64_t)(opt.tick_s * 1e9);
	uint64_t sample_ns = ceems_agent_open_source_interval_ns(a);
	uint64_t next_sample = *next_tick - tick_ns + sample_ns;

	while (*next_tick <= end) {
		if (sample_ns < tick_ns && next_sample < *next_tick) {
			sleep_until(next_sample);
			ceems_agent_open_sample_sources(a, now_ns());
			next_sample += sample_ns;
			continue;
		}
		sleep_until(*next_tick);
		ceems_agent_tick(a, now_ns());
		if (warmup)
			observe_busy();
		*next_tick += tick_ns;
		next_sample = *next_tick - tick_ns + sample_ns;
	}
}

static void
print_report(const struct ceems_agent_job_report *r)
{
	double coverage = -1;
	uint32_t id = r->jobid;

	ceems_job_figures_ledger_coverage(&r->ledger, CEEMS_DOMAIN_PACKAGE, &coverage);
	printf("job_%u_package_j=%.6f\n", id,
	       r->ledger.joules[CEEMS_DOMAIN_PACKAGE]);
	printf("job_%u_static_package_j=%.6f\n", id,
	       r->ledger.static_j[CEEMS_DOMAIN_PACKAGE]);
	printf("job_%u_dram_j=%.6f\n", id, r->ledger.joules[CEEMS_DOMAIN_DRAM]);
	printf("job_%u_cpu_s=%.6f\n", id, r->cpu_s);
	printf("job_%u_elapsed_s=%.6f\n", id, r->elapsed_s);
	printf("job_%u_alloc_cores=%u\n", id, r->alloc_cores);
	printf("job_%u_package_coverage=%.6f\n", id, coverage);
	printf("job_%u_gap_s=%.6f\n", id, r->gap_s);
	printf("job_%u_idle_unlearned=%d\n", id,
	       r->ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] ||
	       r->ledger.idle_unlearned[CEEMS_DOMAIN_DRAM]);
}

int
main(int argc, char **argv)
{
	struct ceems_agent_job_spec specs[MAX_JOBS];
	struct ceems_agent_job_report report;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[512] = "", path[CEEMS_CONFIG_PATH_MAX + 16];
	uint64_t t0, next_tick, tick_ns;
	int ret;

	parse_args(argc, argv);
	for (size_t i = 0; i < opt.njobs; i++)
		job_spec(&opt.jobs[i], &specs[i]);

	ceems_conf_defaults(&c);
	snprintf(c.sysfs_root, sizeof(c.sysfs_root), "%s", opt.sysfs);
	snprintf(c.procfs_root, sizeof(c.procfs_root), "/proc");
	snprintf(c.cgroupfs_prefix, sizeof(c.cgroupfs_prefix), "%s", "");
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", opt.state_dir);
	c.zone[0] = '\0';	/* energy only: no emissions table needed */
	c.interval_ns = (uint64_t)(opt.tick_s * 1e9);
	c.source_hwmon = false;
	c.source_pm_counters = false;
	c.idle_power_package_w = opt.idle_w;
	c.idle_power_dram_w = opt.dram_idle_w;
	c.max_jobs = MAX_JOBS;

	t0 = now_ns();
	a = ceems_agent_open(&c, t0, err, sizeof(err));
	if (a == NULL)
		fail("the agent does not open:", err);
	/* As the agent does: its first tick starts once it is open. */
	t0 = now_ns();
	if (ceems_agent_open_start(a, t0) < 0)
		fail("the agent does not start:", "jobs held before it did");
	tick_ns = c.interval_ns;
	next_tick = t0 + tick_ns;
	printf("source_interval_s=%.6f\n",
	       (double)ceems_agent_open_source_interval_ns(a) / 1e9);
	if (opt.warmup_s > 0) {
		run_until(a, &next_tick, t0 + (uint64_t)(opt.warmup_s * 1e9),
			  true);
		printf("warmup_busy_mean=%.6f\nwarmup_busy_sd=%.6f\n",
		       warm.mean, warm.n > 1 ? sqrt(warm.m2 / warm.n) : 0);
	}

	/* Open the truth window, then register at once: the double's step
	 * at the signal is the last counter value before the jobs. */
	snprintf(path, sizeof(path), "%s.started", opt.truth);
	if (kill(opt.rapl_pid, SIGUSR1) < 0)
		fail("cannot signal fake-rapl:", strerror(errno));
	wait_for_file(path, 5);
	t0 = now_ns();
	for (size_t i = 0; i < opt.njobs; i++) {
		ret = ceems_agent_register(a, &specs[i], now_ns());
		if (ret < 0)
			fail("registration refused:", strerror(-ret));
	}
	next_tick = t0 + tick_ns;
	run_until(a, &next_tick, t0 + (uint64_t)(opt.duration_s * 1e9), false);

	/* Close the window: the double takes a last step and stops, so the
	 * counters the deregistrations read are the window's end. */
	if (kill(opt.rapl_pid, SIGTERM) < 0)
		fail("cannot signal fake-rapl:", strerror(errno));
	wait_for_file(opt.truth, 5);
	for (size_t i = 0; i < opt.njobs; i++) {
		ret = ceems_agent_deregister(a, opt.jobs[i].jobid, now_ns(),
					     &report);
		if (ret < 0)
			fail("deregistration failed:", strerror(-ret));
		print_report(&report);
	}
	ceems_agent_open_close(a);
	return 0;
}
