/* fake-rapl-node.c - the per-node mode of tests/doubles/fake-rapl (see
 * fake-rapl-node.h): a Slurm node's busy time from its own cgroup, its
 * jobs found under it with their ground truth, and the node's own
 * /proc/stat for the agent.
 *
 * Several slurmd on one host share the host's CPUs and /proc/stat, so a
 * node's package power cannot follow /proc/stat (it would see every
 * node's jobs); it follows the CPU time of the node's cgroup instead,
 * which holds that node's jobs and steps only.  The agent splits the
 * active power by each job's share of the node's busy time, which it
 * reads from procfs_root/stat: the same figure is written there, so the
 * agent on a simulated node sees the node the power model sees. */
#include "config.h"

#include "fake-rapl-node.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void
node_die(const char *what, const char *arg)
{
	fprintf(stderr, "fake-rapl: %s %s: %s\n", what, arg, strerror(errno));
	exit(1);
}

static ssize_t
slurp(const char *path, char *buf, size_t size)
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

/* The CPU time of cgroup DIR, ns: cpuacct.usage (v1) or cpu.stat's
 * usage_usec (v2).  -1 when it cannot be read (the cgroup is gone). */
static int
cgroup_usage(const char *dir, bool v2, uint64_t *ns)
{
	char path[PATH_MAX], buf[4096];
	unsigned long long v;
	const char *p;

	snprintf(path, sizeof(path), "%s/%s", dir, v2 ? "cpu.stat" : "cpuacct.usage");
	if (slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	if (!v2) {
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

/* CPUs in a kernel CPU list such as "0-3,8"; 0 for an empty one. */
static unsigned int
count_cpus(const char *list)
{
	unsigned int n = 0;
	const char *p = list;
	char *end;

	while (*p != '\0' && *p != '\n') {
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return 0;
		if (*end == '-') {
			p = end + 1;
			hi = strtoul(p, &end, 10);
			if (end == p || hi < lo)
				return 0;
		}
		n += (unsigned int)(hi - lo + 1);
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

static unsigned int
job_cores(const struct fr_node *n, const struct fr_job *j)
{
	char path[PATH_MAX + 32], buf[1024];

	snprintf(path, sizeof(path), "%s/%s/%s", n->cpuset, j->rel,
		 n->v2 ? "cpuset.cpus.effective" : "cpuset.cpus");
	if (slurp(path, buf, sizeof(buf)) <= 0)
		return 0;
	return count_cpus(buf);
}

static struct fr_job *
find_job(struct fr_node *n, unsigned long id)
{
	/* An ended job stays ended: its id is not seen again. */
	for (size_t i = 0; i < n->njobs; i++)
		if (n->jobs[i].id == id)
			return &n->jobs[i];
	return NULL;
}

/* A job_J directory seen at NOW under the node's cgroup, at REL. */
static void
see_job(struct fr_node *n, const char *rel, const char *name, uint64_t now)
{
	char *end;
	unsigned long id = strtoul(name + 4, &end, 10);
	struct fr_job *j;

	if (*end != '\0' || end == name + 4 || find_job(n, id) != NULL)
		return;
	if (n->njobs == FR_NODE_MAX_JOBS) {
		errno = ENOSPC;
		node_die("too many jobs under", n->cgroup);
	}
	j = &n->jobs[n->njobs++];
	memset(j, 0, sizeof(*j));
	j->id = id;
	snprintf(j->rel, sizeof(j->rel), "%s", rel);
	j->first_ns = j->last_ns = now;
}

/* New job_J directories: under the node's cgroup (v2) or its uid_U
 * directories (v1). */
static void
scan_jobs(struct fr_node *n, uint64_t now)
{
	char path[PATH_MAX], rel[PATH_MAX / 2];
	struct dirent *e, *f;
	DIR *top, *uid;

	if ((top = opendir(n->cgroup)) == NULL)
		return;
	while ((e = readdir(top)) != NULL) {
		if (strncmp(e->d_name, "job_", 4) == 0) {
			see_job(n, e->d_name, e->d_name, now);
			continue;
		}
		if (strncmp(e->d_name, "uid_", 4) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", n->cgroup, e->d_name);
		if ((uid = opendir(path)) == NULL)
			continue;
		while ((f = readdir(uid)) != NULL)
			if (strncmp(f->d_name, "job_", 4) == 0) {
				snprintf(rel, sizeof(rel), "%.100s/%.100s",
					 e->d_name, f->d_name);
				see_job(n, rel, f->d_name, now);
			}
		closedir(uid);
	}
	closedir(top);
}

/* Each live job's CPU time and cores at NOW; a job whose cgroup cannot
 * be read any more has ended at its last sight.  Returns the ended. */
static unsigned int
update_jobs(struct fr_node *n, uint64_t now)
{
	char path[PATH_MAX];
	unsigned int ended = 0;
	uint64_t usage;

	for (size_t i = 0; i < n->njobs; i++) {
		struct fr_job *j = &n->jobs[i];

		if (j->ended)
			continue;
		snprintf(path, sizeof(path), "%s/%s", n->cgroup, j->rel);
		if (cgroup_usage(path, n->v2, &usage) < 0) {
			struct stat st;

			/* Gone, not merely unreadable for a moment. */
			if (stat(path, &st) < 0 && errno == ENOENT) {
				j->ended = true;
				ended++;
			}
			continue;
		}
		/* A new cgroup: all its CPU time is the job's. */
		if (usage > j->usage_ns)
			j->usage_ns = usage;
		if (j->cores == 0)
			j->cores = job_cores(n, j);
		j->last_ns = now;
	}
	return ended;
}

/* The node's busy time: its cgroup's CPU time since this double
 * started (or since the cgroup was made, when slurmd made it later). */
static void
update_busy(struct fr_node *n)
{
	uint64_t usage;

	if (cgroup_usage(n->cgroup, n->v2, &usage) < 0) {
		n->present = false;
		return;
	}
	if (!n->present)	/* made since: it started at 0 */
		n->last_usage_ns = 0;
	if (usage >= n->last_usage_ns)
		n->busy_ns += usage - n->last_usage_ns;
	n->last_usage_ns = usage;
	n->present = true;
}

/* The node's /proc/stat: its busy time as user time, the rest of its
 * CPUs' time as idle, evenly over its cpuN lines, and the lines after
 * them that a reader expects.  Fixed width, rewritten in place with
 * one pwrite: the agent keeps the file open (through the bind mount
 * of its procfs_root) and preads it. */
static void
write_stat(struct fr_node *n, uint64_t now)
{
	char text[4096];
	size_t len = 0;
	uint64_t tick_ns = 1000000000ULL / (uint64_t)n->clk_tck;
	uint64_t busy = n->busy_ns / tick_ns;
	uint64_t all = (now - n->start_ns) / tick_ns * n->ncpus;

	if (n->stat_fd < 0)
		return;
	if (all > busy && all - busy > n->idle_ticks)
		n->idle_ticks = all - busy;	/* never backwards */
	len += (size_t)snprintf(text + len, sizeof(text) - len,
		"cpu  %020" PRIu64 " 0 0 %020" PRIu64 " 0 0 0 0 0 0\n",
		busy, n->idle_ticks);
	for (unsigned int c = 0; c < n->ncpus && len < sizeof(text); c++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
			"cpu%u %020" PRIu64 " 0 0 %020" PRIu64 " 0 0 0 0 0 0\n",
			c, busy / n->ncpus, n->idle_ticks / n->ncpus);
	if (len < sizeof(text))
		len += (size_t)snprintf(text + len, sizeof(text) - len,
			"intr 0\nctxt 0\nbtime 0\nprocesses 0\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n");
	if (len >= sizeof(text)) {
		errno = ENAMETOOLONG;
		node_die("too many CPUs for the /proc/stat of", n->cgroup);
	}
	if (pwrite(n->stat_fd, text, len, 0) != (ssize_t)len)
		node_die("cannot write the /proc/stat of", n->cgroup);
}

void
fr_node_init(struct fr_node *n, const char *cgroup, const char *cpuset,
	     const char *stat_path, unsigned int ncpus, long clk_tck, uint64_t now)
{
	char path[PATH_MAX];
	struct stat st;

	memset(n, 0, sizeof(*n));
	if (snprintf(n->cgroup, sizeof(n->cgroup), "%s", cgroup) >= (int)sizeof(n->cgroup) ||
	    snprintf(n->cpuset, sizeof(n->cpuset), "%s", cpuset != NULL ? cpuset : cgroup) >=
	    (int)sizeof(n->cpuset)) {
		errno = ENAMETOOLONG;
		node_die("path too long:", cgroup);
	}
	/* v1's cpuacct hierarchy has cpuacct.usage in every cgroup, v2
	 * none; before slurmd makes the node's cgroup, its parent tells
	 * (by name: the kernel cannot resolve a missing slurm_NODE/..). */
	snprintf(path, sizeof(path), "%s", cgroup);
	if (strrchr(path, '/') != NULL)
		*strrchr(path, '/') = '\0';
	if (strlen(path) + sizeof("/cpuacct.usage") > sizeof(path)) {
		errno = ENAMETOOLONG;
		node_die("path too long:", cgroup);
	}
	strcat(path, "/cpuacct.usage");
	n->v2 = stat(path, &st) < 0;
	n->ncpus = ncpus;
	n->clk_tck = clk_tck;
	n->start_ns = now;
	n->stat_fd = -1;
	/* What the cgroup used before this double started is not the
	 * node's busy time of this run. */
	n->present = cgroup_usage(n->cgroup, n->v2, &n->last_usage_ns) == 0;
	if (stat_path != NULL) {
		n->stat_fd = open(stat_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (n->stat_fd < 0)
			node_die("cannot create", stat_path);
		write_stat(n, now);
	}
}

unsigned int
fr_node_step(struct fr_node *n, uint64_t now)
{
	unsigned int ended;

	update_busy(n);
	scan_jobs(n, now);
	ended = update_jobs(n, now);
	write_stat(n, now);
	return ended;
}

void
fr_node_write_jobs(const struct fr_node *n, FILE *f, double idle_w, double k_w)
{
	for (size_t i = 0; i < n->njobs; i++) {
		const struct fr_job *j = &n->jobs[i];
		double life = (double)(j->last_ns - j->first_ns) / 1e9;
		double cpu = (double)j->usage_ns / 1e9;

		fprintf(f, "job_%lu_cores=%u\njob_%lu_life_s=%.6f\n"
			"job_%lu_cpu_s=%.6f\njob_%lu_package_j=%.6f\n"
			"job_%lu_ended=%d\n",
			j->id, j->cores, j->id, life, j->id, cpu, j->id,
			idle_w * j->cores / n->ncpus * life + k_w * cpu,
			j->id, j->ended ? 1 : 0);
	}
}
