/* bench_perf.c - what perf counters add to the node agent's tick: N
 * jobs, each with its own real cgroup (made under the perf_event
 * hierarchy's root, removed at the end) and its software events open on
 * every online CPU, as the agent opens them (lib/sources/perf_job.c); then T
 * ticks that read every job's events, timed with the process CPU clock.
 * Also the time to open one job's events (a registration's share).
 *
 * Needs root and a perf_event hierarchy (the agent's own needs).
 * Usage: bench_perf [-n JOBS] [-t TICKS]
 * Prints: jobs, descriptors, open ms per job, read us per tick, us per
 * job per tick. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "base/fileio.h"
#include "sources/perf_cgroup.h"
#include "sources/perf_job.h"

static double
cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	static struct ceems_cgroup_mounts mounts;
	static char text[1 << 20];
	struct ceems_perf_budget budget;
	struct ceems_perf_job **jobs;
	struct ceems_cpuset cpus;
	struct rlimit rl;
	char perf_v1[512], root[1024], dir[1200];
	int njobs = 128, nticks = 1000, opt;
	double t0, open_ns, read_ns;
	size_t fds = 0;

	while ((opt = getopt(argc, argv, "n:t:")) != -1) {
		if (opt == 'n')
			njobs = atoi(optarg);
		else if (opt == 't')
			nticks = atoi(optarg);
		else
			return 2;
	}
	if (njobs < 1 || nticks < 1 ||
	    ceems_fileio_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mounts) < 0 ||
	    ceems_perf_cgroup_mount_from_mountinfo(text, perf_v1, sizeof(perf_v1)) < 0 ||
	    ceems_perf_cgroup_root(&mounts, perf_v1, "", root, sizeof(root)) < 0 ||
	    ceems_fileio_read_text_file("/sys/devices/system/cpu/online", text,
				 sizeof(text)) < 0 ||
	    ceems_cgroup_parse_cpu_list(text, &cpus) < 0) {
		fprintf(stderr, "bench_perf: no perf_event hierarchy or CPU list here\n");
		return 1;
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	ceems_perf_job_budget_init(&budget, 16777216);
	jobs = calloc((size_t)njobs, sizeof(*jobs));
	if (jobs == NULL)
		return 1;
	open_ns = 0;
	for (int i = 0; i < njobs; i++) {
		int fd;

		snprintf(dir, sizeof(dir), "%s/ceems_bench_perf_%d_%d", root,
			 (int)getpid(), i);
		if (mkdir(dir, 0755) < 0 ||
		    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
			fprintf(stderr, "bench_perf: %s: %s\n", dir, strerror(errno));
			return 1;
		}
		t0 = cpu_ns();
		jobs[i] = ceems_perf_job_open(fd, &cpus, true, false, &budget);
		open_ns += cpu_ns() - t0;
		close(fd);
		fds += ceems_perf_job_nfds(jobs[i]);
	}
	t0 = cpu_ns();
	for (int t = 0; t < nticks; t++)
		for (int i = 0; i < njobs; i++)
			ceems_perf_job_read(jobs[i]);
	read_ns = cpu_ns() - t0;
	printf("jobs %d  descriptors %zu  open %.3f ms/job  read %.1f us/tick  %.3f us/job/tick\n",
	       njobs, fds, open_ns / njobs / 1e6, read_ns / nticks / 1e3,
	       read_ns / nticks / njobs / 1e3);
	for (int i = 0; i < njobs; i++) {
		ceems_perf_job_close(jobs[i], &budget);
		snprintf(dir, sizeof(dir), "%s/ceems_bench_perf_%d_%d", root,
			 (int)getpid(), i);
		rmdir(dir);
	}
	free(jobs);
	return fds == (size_t)njobs * cpus.count * CEEMS_PERF_NSW ? 0 : 1;
}
