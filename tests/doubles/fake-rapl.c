/* fake-rapl.c - a test double of RAPL hardware for the accuracy test
 * (tests/integration/accuracy.bats).  It keeps a powercap tree under a
 * directory (ROOT/class/powercap/intel-rapl:0, package-0, with a dram
 * subzone intel-rapl:0:1) whose counters follow a known power model of
 * the machine's real CPU activity:
 *
 *     P_package = P_idle + k * (node busy CPU-seconds per second)
 *     P_dram    = P_dram (constant)
 *
 * with the node's busy time read from the real /proc/stat (user, nice,
 * system, irq, softirq: the same non-idle time the agent uses) every
 * period.  By default both counters wrap at a deliberately small
 * max_energy_range_uj (30 J and 2 J), so that the agent's wrap handling
 * is part of what the accuracy tests test; --package-range-uj and
 * --dram-range-uj set others (tests/demo.sh gives the ranges of real
 * packages, which wrap after hundreds of kJ).
 *
 * Alongside, it integrates the ground truth the agent should find for
 * each cgroup given on the command line, with the model's own reasoning:
 * a cgroup holding C of the node's N CPUs and using CPU at rate c gets
 *
 *     P_idle * C / N * dt  +  k * c * dt
 *
 * (held cores pay their static power, used CPU its active power).  The
 * cgroup's CPU time comes from its cpuacct.usage (v1, ns) or cpu.stat
 * usage_usec (v2).  The double parses /proc and the cgroup files itself,
 * not with libceems, so that the truth does not share the code it judges.
 *
 * The ground truth is integrated over a window the agent's driver opens
 * with SIGUSR1 (answered by creating TRUTH.started) and closes with
 * SIGTERM or SIGINT; at each signal the double takes a step at once, so
 * the window's ends are the counter values the agent reads next.  Then it
 * writes TRUTH (key=value lines, atomically) and exits, leaving the
 * counters still.  Without SIGUSR1 the window is the whole run.
 *
 * With --node-cgroup DIR the double is one Slurm node of several on this
 * host (tests/harness/slurm.sh, CEEMS_TEST_NODES): the node's busy time
 * is the CPU time of its own cgroup DIR (v1: the cpuacct hierarchy's
 * slurm_NODE, with --node-cpuset the cpuset hierarchy's; v2: the
 * NODE_slurmstepd.scope), not the host's /proc/stat, which every node's
 * jobs share.  Its jobs are found under DIR as Slurm makes and removes
 * their cgroups, and each job's truth (the formula above, C from its
 * cpuset, over its cgroup's life) is written to TRUTH as job_J_... lines
 * whenever a job's cgroup goes, so that a test reads a finished job's
 * truth while the double runs on.  --stat FILE keeps there the node's
 * own /proc/stat (its busy time, --ncpus CPUs), which the harness
 * mounts over the stat of the agent's procfs_root: the agent then
 * splits the node's power by the node's busy time, as on a machine of
 * its own.  The parsing is tests/doubles/fake-rapl-node.c.
 *
 * Counter files are rewritten in place, fixed width with leading zeros,
 * with one pwrite: the agent keeps them open and preads them, as it does
 * sysfs attributes, so a rename would leave it reading a stale inode.
 *
 * usage: fake-rapl --root DIR --truth FILE [--period-ms 10]
 *          [--idle-w 40] [--k-w 15] [--dram-w 4]
 *          [--package-range-uj 30000000] [--dram-range-uj 2000000]
 *          [--proc /proc] [--node-cgroup DIR [--node-cpuset DIR]
 *          [--stat FILE] [--ncpus N]] [NAME:CORES:USAGE_FILE...]
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fake-rapl-node.h"

#define MAX_CGROUPS 16
#define COUNTER_WIDTH 20	/* digits of a counter file, zero-padded */

struct cgroup_truth {
	char name[64];
	unsigned int cores;
	char usage_path[PATH_MAX];
	bool v2;		/* cpu.stat usage_usec rather than ns */
	uint64_t last_ns;
	double cpu_s;		/* CPU time inside the window */
	double package_j;	/* ground truth inside the window */
};

struct zone {
	const char *dir;	/* under ROOT/class/powercap */
	int energy_fd;
	uint64_t range_uj;
	double total_j;		/* since start, never wrapped */
	uint64_t wraps;
};

static struct {
	char root[PATH_MAX];
	char truth[PATH_MAX];
	char proc[PATH_MAX];
	const char *node_cgroup, *node_cpuset, *node_stat;
	unsigned int node_ncpus;	/* --ncpus; 0: /proc/stat's */
	struct fr_node node;		/* with --node-cgroup */
	double period_s;
	double idle_w, k_w, dram_w;
	long clk_tck;
	unsigned int ncpus;

	struct zone package, dram;
	struct cgroup_truth cgroups[MAX_CGROUPS];
	size_t ncgroups;

	uint64_t last_step_ns;
	uint64_t last_busy_ns;
	bool window_open;
	uint64_t window_start_ns;
	double window_s;
	double window_busy_s;
	double window_package_j;
	double window_dram_j;
	uint64_t steps;
} fr;

/* "fake-rapl: WHAT ARG: the errno message", then exit. */
static void
die(const char *what, const char *arg)
{
	fprintf(stderr, "fake-rapl: %s %s: %s\n", what, arg, strerror(errno));
	exit(1);
}

/* A bad command line: no errno to tell. */
static void
usage_error(const char *what, const char *arg)
{
	fprintf(stderr, "fake-rapl: %s %s\n", what, arg);
	fprintf(stderr, "usage: fake-rapl --root DIR --truth FILE [--period-ms MS] [--idle-w W] [--k-w W] [--dram-w W] [--package-range-uj UJ] [--dram-range-uj UJ] [--proc DIR] [--node-cgroup DIR [--node-cpuset DIR] [--stat FILE] [--ncpus N]] [NAME:CORES:USAGE_FILE...]\n");
	exit(2);
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static ssize_t
read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)total < size - 1 &&
	       (n = read(fd, buf + total, size - 1 - (size_t)total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return total;
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);

	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0)
		die("cannot write", path);
}

/* The node's busy time and CPU count from /proc/stat's cpu lines. */
static int
read_node_busy(uint64_t *busy_ns, unsigned int *ncpus)
{
	char path[PATH_MAX + 8], buf[1 << 16];
	unsigned long long v[7];
	const char *line;
	unsigned int n = 0;

	snprintf(path, sizeof(path), "%s/stat", fr.proc);
	if (read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* user nice system idle iowait irq softirq */
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]) != 7)
		return -1;
	for (line = strchr(buf, '\n'); line != NULL;
	     line = strchr(line + 1, '\n'))
		if (strncmp(line + 1, "cpu", 3) == 0 &&
		    line[4] >= '0' && line[4] <= '9')
			n++;
	*busy_ns = (v[0] + v[1] + v[2] + v[5] + v[6]) *
		   (1000000000ULL / (unsigned long long)fr.clk_tck);
	*ncpus = n;
	return 0;
}

static int
read_cgroup_usage(const struct cgroup_truth *cg, uint64_t *ns)
{
	char buf[4096];
	unsigned long long v;
	const char *p;

	if (read_file(cg->usage_path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!cg->v2) {
		if (sscanf(buf, "%llu", &v) != 1)
			return -1;
		*ns = v;
		return 0;
	}
	p = strstr(buf, "usage_usec ");
	if (p == NULL || sscanf(p, "usage_usec %llu", &v) != 1)
		return -1;
	*ns = v * 1000ULL;
	return 0;
}

static void
zone_path(char *out, size_t size, const struct zone *z, const char *attr)
{
	if (snprintf(out, size, "%s/class/powercap/%s/%s", fr.root, z->dir,
		     attr) >= (int)size)
		usage_error("path too long under", fr.root);
}

static void
write_counter(struct zone *z)
{
	char text[COUNTER_WIDTH + 2];
	uint64_t uj = (uint64_t)(z->total_j * 1e6);
	uint64_t wraps = uj / z->range_uj;

	if (wraps > z->wraps)
		z->wraps = wraps;
	snprintf(text, sizeof(text), "%0*" PRIu64 "\n", COUNTER_WIDTH,
		 uj % z->range_uj);
	if (pwrite(z->energy_fd, text, strlen(text), 0) !=
	    (ssize_t)strlen(text))
		die("cannot write the counter of", z->dir);
}

static void
make_zone(struct zone *z, const char *dir, const char *name,
	  uint64_t range_uj, double max_power_w)
{
	char path[PATH_MAX + 64], text[64];

	z->dir = dir;
	z->range_uj = range_uj;
	zone_path(path, sizeof(path), z, "");
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("cannot create", path);
	zone_path(path, sizeof(path), z, "name");
	snprintf(text, sizeof(text), "%s\n", name);
	write_file(path, text);
	zone_path(path, sizeof(path), z, "enabled");
	write_file(path, "1\n");
	zone_path(path, sizeof(path), z, "max_energy_range_uj");
	snprintf(text, sizeof(text), "%" PRIu64 "\n", range_uj);
	write_file(path, text);
	/* The limits give the agent the zone's wrap period. */
	zone_path(path, sizeof(path), z, "constraint_0_name");
	write_file(path, "long_term\n");
	zone_path(path, sizeof(path), z, "constraint_0_power_limit_uw");
	snprintf(text, sizeof(text), "%.0f\n", max_power_w * 0.8e6);
	write_file(path, text);
	zone_path(path, sizeof(path), z, "constraint_0_max_power_uw");
	snprintf(text, sizeof(text), "%.0f\n", max_power_w * 1e6);
	write_file(path, text);
	zone_path(path, sizeof(path), z, "constraint_0_time_window_us");
	write_file(path, "999424\n");
	zone_path(path, sizeof(path), z, "energy_uj");
	z->energy_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			    0644);
	if (z->energy_fd < 0)
		die("cannot create", path);
	write_counter(z);
}

static void
make_tree(void)
{
	char path[PATH_MAX + 64];
	/* Limits well above the model's power (a few tens of W), as real
	 * ones are: the agent's sanity bound must not reject the deltas. */
	const double package_max_w = 100, dram_max_w = 10;

	if (mkdir(fr.root, 0755) < 0 && errno != EEXIST)
		die("cannot create", fr.root);
	snprintf(path, sizeof(path), "%s/class", fr.root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/powercap", fr.root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/powercap/intel-rapl", fr.root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/class/powercap/intel-rapl/enabled",
		 fr.root);
	write_file(path, "1\n");
	make_zone(&fr.package, "intel-rapl:0", "package-0",
		  fr.package.range_uj, package_max_w);
	make_zone(&fr.dram, "intel-rapl:0:1", "dram", fr.dram.range_uj,
		  dram_max_w);
}

static void write_truth(void);

/* The node's busy time so far, ns: /proc/stat's, or with --node-cgroup
 * its own cgroup's (whose jobs ending ask for the truth to be written). */
static uint64_t
node_busy(uint64_t now)
{
	uint64_t busy;
	unsigned int ncpus;

	if (fr.node_cgroup != NULL) {
		if (fr_node_step(&fr.node, now) > 0)
			write_truth();
		return fr.node.busy_ns;
	}
	if (read_node_busy(&busy, &ncpus) < 0 || ncpus != fr.ncpus)
		die("unreadable /proc/stat, or its CPUs changed, under", fr.proc);
	return busy;
}

/* Advance the model to NOW: counters, then the ground truth. */
static void
step(uint64_t now)
{
	double dt = (double)(now - fr.last_step_ns) / 1e9;
	double busy_s, package_j;
	uint64_t busy = node_busy(now);
	/* /proc/stat is kept per CPU and summed; a CPU's figure never goes
	 * back, but clamp anyway rather than model negative power. */
	busy_s = busy >= fr.last_busy_ns ?
		 (double)(busy - fr.last_busy_ns) / 1e9 : 0;
	package_j = fr.idle_w * dt + fr.k_w * busy_s;
	fr.package.total_j += package_j;
	fr.dram.total_j += fr.dram_w * dt;
	write_counter(&fr.package);
	write_counter(&fr.dram);

	for (size_t i = 0; i < fr.ncgroups; i++) {
		struct cgroup_truth *cg = &fr.cgroups[i];
		uint64_t usage;
		double cpu_s = 0;

		if (read_cgroup_usage(cg, &usage) < 0)
			die("cannot read", cg->usage_path);
		if (usage >= cg->last_ns)
			cpu_s = (double)(usage - cg->last_ns) / 1e9;
		cg->last_ns = usage;
		if (!fr.window_open)
			continue;
		cg->cpu_s += cpu_s;
		cg->package_j += fr.idle_w * cg->cores / fr.ncpus * dt +
				 fr.k_w * cpu_s;
	}
	if (fr.window_open) {
		fr.window_s += dt;
		fr.window_busy_s += busy_s;
		fr.window_package_j += package_j;
		fr.window_dram_j += fr.dram_w * dt;
	}
	fr.last_step_ns = now;
	fr.last_busy_ns = busy;
	fr.steps++;
}

static void
write_truth(void)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", fr.truth);
	f = fopen(tmp, "w");
	if (f == NULL)
		die("cannot write", tmp);
	fprintf(f, "model_idle_w=%.6f\nmodel_k_w=%.6f\nmodel_dram_w=%.6f\n",
		fr.idle_w, fr.k_w, fr.dram_w);
	fprintf(f, "ncpus=%u\nsteps=%" PRIu64 "\n", fr.ncpus, fr.steps);
	fprintf(f, "window_s=%.6f\nnode_busy_cpu_s=%.6f\n", fr.window_s,
		fr.window_busy_s);
	fprintf(f, "node_package_j=%.6f\nnode_dram_j=%.6f\n",
		fr.window_package_j, fr.window_dram_j);
	fprintf(f, "package_wraps=%" PRIu64 "\ndram_wraps=%" PRIu64 "\n",
		fr.package.wraps, fr.dram.wraps);
	for (size_t i = 0; i < fr.ncgroups; i++) {
		const struct cgroup_truth *cg = &fr.cgroups[i];

		fprintf(f, "%s_cores=%u\n%s_cpu_s=%.6f\n%s_package_j=%.6f\n",
			cg->name, cg->cores, cg->name, cg->cpu_s, cg->name,
			cg->package_j);
	}
	if (fr.node_cgroup != NULL)
		fr_node_write_jobs(&fr.node, f, fr.idle_w, fr.k_w);
	if (fclose(f) != 0 || rename(tmp, fr.truth) < 0)
		die("cannot write", fr.truth);
}

static void
add_cgroup(const char *arg)
{
	struct cgroup_truth *cg;
	const char *colon1 = strchr(arg, ':'), *colon2;
	char *end;
	unsigned long cores;

	if (fr.ncgroups == MAX_CGROUPS)
		usage_error("too many cgroups at", arg);
	colon2 = colon1 != NULL ? strchr(colon1 + 1, ':') : NULL;
	if (colon1 == NULL || colon2 == NULL ||
	    (size_t)(colon1 - arg) >= sizeof(cg->name) || colon1 == arg)
		usage_error("bad cgroup argument (NAME:CORES:USAGE_FILE):", arg);
	cg = &fr.cgroups[fr.ncgroups++];
	memcpy(cg->name, arg, (size_t)(colon1 - arg));
	cores = strtoul(colon1 + 1, &end, 10);
	if (end != colon2 || cores == 0 || cores > 4096)
		usage_error("bad core count in", arg);
	cg->cores = (unsigned int)cores;
	snprintf(cg->usage_path, sizeof(cg->usage_path), "%s", colon2 + 1);
	cg->v2 = strstr(cg->usage_path, "cpu.stat") != NULL;
}

static double
number_arg(const char *opt, const char *arg, double min, double max)
{
	char *end;
	double v;

	if (arg == NULL)
		usage_error("a value is needed after", opt);
	v = strtod(arg, &end);
	if (*end != '\0' || !(v >= min && v <= max))
		usage_error("bad value for", opt);
	return v;
}

static void
parse_args(int argc, char **argv)
{
	fr.period_s = 0.010;
	fr.idle_w = 40;
	fr.k_w = 15;
	fr.dram_w = 4;
	fr.package.range_uj = 30000000;
	fr.dram.range_uj = 2000000;
	snprintf(fr.proc, sizeof(fr.proc), "/proc");
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(o, "--root") == 0 && v != NULL)
			snprintf(fr.root, sizeof(fr.root), "%s", argv[++i]);
		else if (strcmp(o, "--truth") == 0 && v != NULL)
			snprintf(fr.truth, sizeof(fr.truth), "%s", argv[++i]);
		else if (strcmp(o, "--proc") == 0 && v != NULL)
			snprintf(fr.proc, sizeof(fr.proc), "%s", argv[++i]);
		else if (strcmp(o, "--node-cgroup") == 0 && v != NULL)
			fr.node_cgroup = argv[++i];
		else if (strcmp(o, "--node-cpuset") == 0 && v != NULL)
			fr.node_cpuset = argv[++i];
		else if (strcmp(o, "--stat") == 0 && v != NULL)
			fr.node_stat = argv[++i];
		else if (strcmp(o, "--ncpus") == 0)
			fr.node_ncpus = (unsigned int)number_arg(o, argv[++i], 1, 4096);
		else if (strcmp(o, "--period-ms") == 0)
			fr.period_s = number_arg(o, argv[++i], 1, 1000) / 1e3;
		else if (strcmp(o, "--idle-w") == 0)
			fr.idle_w = number_arg(o, argv[++i], 0, 1000);
		else if (strcmp(o, "--k-w") == 0)
			fr.k_w = number_arg(o, argv[++i], 0, 1000);
		else if (strcmp(o, "--dram-w") == 0)
			fr.dram_w = number_arg(o, argv[++i], 0, 1000);
		else if (strcmp(o, "--package-range-uj") == 0)
			fr.package.range_uj = (uint64_t)number_arg(o, argv[++i], 1000, 1e15);
		else if (strcmp(o, "--dram-range-uj") == 0)
			fr.dram.range_uj = (uint64_t)number_arg(o, argv[++i], 1000, 1e15);
		else if (o[0] != '-')
			add_cgroup(o);
		else
			usage_error("unknown option", o);
	}
	if (fr.root[0] == '\0' || fr.truth[0] == '\0')
		usage_error("--root and --truth are required", "");
	if (fr.node_cgroup == NULL &&
	    (fr.node_cpuset != NULL || fr.node_stat != NULL || fr.node_ncpus != 0))
		usage_error("--node-cpuset, --stat and --ncpus need", "--node-cgroup");
}

int
main(int argc, char **argv)
{
	sigset_t signals;
	uint64_t next, t;
	char path[PATH_MAX + 16];

	parse_args(argc, argv);
	fr.clk_tck = sysconf(_SC_CLK_TCK);
	if (fr.clk_tck <= 0 || 1000000000L % fr.clk_tck != 0)
		usage_error("odd clock tick rate", "");

	/* Signals are taken synchronously, between steps, so that a step
	 * is never cut in half and the window opens exactly at one. */
	sigemptyset(&signals);
	sigaddset(&signals, SIGUSR1);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigprocmask(SIG_BLOCK, &signals, NULL);

	if (read_node_busy(&fr.last_busy_ns, &fr.ncpus) < 0 || fr.ncpus == 0)
		die("cannot read /proc/stat under", fr.proc);
	if (fr.node_cgroup != NULL) {
		/* The node's CPUs as slurm.conf gives them, its busy time
		 * its cgroup's from now on. */
		if (fr.node_ncpus != 0)
			fr.ncpus = fr.node_ncpus;
		fr_node_init(&fr.node, fr.node_cgroup, fr.node_cpuset,
			     fr.node_stat, fr.ncpus, fr.clk_tck, now_ns());
		fr.last_busy_ns = fr.node.busy_ns;
	}
	for (size_t i = 0; i < fr.ncgroups; i++)
		if (read_cgroup_usage(&fr.cgroups[i], &fr.cgroups[i].last_ns) < 0)
			die("cannot read", fr.cgroups[i].usage_path);
	make_tree();
	fr.last_step_ns = now_ns();
	fr.window_open = true;	/* until SIGUSR1 asks for a later start */
	fr.window_start_ns = fr.last_step_ns;
	snprintf(path, sizeof(path), "%s/ready", fr.root);
	write_file(path, "1\n");

	next = fr.last_step_ns;
	for (;;) {
		struct timespec wait;
		uint64_t remain;
		int sig;

		next += (uint64_t)(fr.period_s * 1e9);
		t = now_ns();
		if (next < t)	/* late (a busy machine): no catching up */
			next = t;
		remain = next - t;
		wait.tv_sec = (time_t)(remain / 1000000000ULL);
		wait.tv_nsec = (long)(remain % 1000000000ULL);
		sig = sigtimedwait(&signals, NULL, &wait);
		if (sig < 0 && errno != EAGAIN && errno != EINTR)
			die("sigtimedwait", "");
		step(now_ns());
		if (sig == SIGUSR1) {
			/* The window starts here: forget what came before. */
			for (size_t i = 0; i < fr.ncgroups; i++) {
				fr.cgroups[i].cpu_s = 0;
				fr.cgroups[i].package_j = 0;
			}
			fr.window_s = fr.window_busy_s = 0;
			fr.window_package_j = fr.window_dram_j = 0;
			fr.window_start_ns = fr.last_step_ns;
			snprintf(path, sizeof(path), "%s.started", fr.truth);
			write_file(path, "1\n");
			next = fr.last_step_ns;
		} else if (sig == SIGTERM || sig == SIGINT) {
			write_truth();
			return 0;
		}
	}
}
