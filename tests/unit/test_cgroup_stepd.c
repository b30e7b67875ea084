/* test_cgroup_stepd.c - on cgroup v2 a job's and a step's CPU time leave
 * out Slurm's step daemons (step_S/slurm): the v2 fixture tree with its
 * slurm/ and user/ sub-cgroups of known usage, a step that goes away
 * mid-job, a step found late (the CPU time given never goes back), and,
 * when run as root where the unified hierarchy is mounted, a real
 * slurm/ cgroup that burns CPU and is then removed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cgroup/cgroup_stats.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define V2_JOB "sys/fs/cgroup/system.slice/node01_slurmstepd.scope/job_4242"
#define USEC UINT64_C(1000)

static void
skip(const char *why)
{
	ok(true, "# skip %s", why);
}

/* A/B into OUT, or bail out: a test path too long is the test's bug. */
static void
join(char *out, size_t size, const char *a, const char *b)
{
	if (snprintf(out, size, "%s/%s", a, b) >= (int)size) {
		printf("Bail out! path too long: %s/%s\n", a, b);
		exit(1);
	}
}

static void
quiet(enum ceems_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	printf("# log: %s\n", msg);
}

/* A reader of the v2 directory DIR (the job's, or one of its steps'). */
static struct ceems_cgroup_reader *
open_dir(const char *dir)
{
	struct ceems_cgroup_dirs dirs;
	int err;

	memset(&dirs, 0, sizeof(dirs));
	dirs.version = CEEMS_CGROUP_V2;
	snprintf(dirs.dir[CEEMS_CG_NCONTROLLERS], sizeof(dirs.dir[0]), "%s", dir);
	return ceems_cgroup_stats_reader_open_dirs(&dirs, &err);
}

/* The CPU usage reader R gives now, in ns; UINT64_MAX when it cannot
 * be read. */
static uint64_t
usage_of(struct ceems_cgroup_reader *r)
{
	struct ceems_cgroup_stats st;

	if (ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_CPU_USAGE, &st) < 0 ||
	    !(st.present & CEEMS_CGF_CPU_USAGE))
		return UINT64_MAX;
	return st.cpu_usage_ns;
}

static void
put_cpu(const char *root, const char *rel, unsigned long usage_usec)
{
	char text[128];

	snprintf(text, sizeof(text), "usage_usec %lu\nuser_usec %lu\nsystem_usec 0\n",
		 usage_usec, usage_usec);
	tmptree_write(root, rel, text);
}

/* The fixture: job 7341234 us = step_extern 41234 (all of it its
 * slurmstepd's) + step_0 7300000 (user 7290000, slurm 10000). */
static void
test_fixture(void)
{
	struct ceems_cgroup_reader *r;
	struct ceems_cgroup_stats st;
	char dir[PATH_MAX];

	join(dir, sizeof(dir), fixture_path("cgroup/v2"), V2_JOB);
	r = open_dir(dir);
	ok(r != NULL, "v2 job: opened");
	if (r == NULL)
		return;
	is_int(ceems_cgroup_stats_reader_nfiles(r), 11,
	       "v2 job: nine counter files and the two steps' slurm/cpu.stat");
	is_int(ceems_cgroup_stats_reader_read(r, &st), 0, "v2 job: read");
	is_int(st.cpu_usage_ns, 7290000 * USEC,
	       "v2 job: usage less both slurmstepds = step_0/user's");
	is_int(st.cpu_user_ns, 6785000 * USEC, "v2 job: user_usec less theirs");
	is_int(st.cpu_system_ns, 505000 * USEC, "v2 job: system_usec less theirs");
	is_int(ceems_cgroup_stats_reader_rescan(r), 0, "v2 job: a rescan adds none twice");
	ceems_cgroup_stats_reader_close(r);

	join(dir, sizeof(dir), fixture_path("cgroup/v2"), V2_JOB "/step_0");
	r = open_dir(dir);
	ok(r != NULL, "v2 step_0: opened");
	if (r != NULL) {
		is_int(usage_of(r), 7290000 * USEC, "v2 step_0: its tasks' CPU, not its slurmstepd's");
		ceems_cgroup_stats_reader_close(r);
	}
	join(dir, sizeof(dir), fixture_path("cgroup/v2"), V2_JOB "/step_extern");
	r = open_dir(dir);
	ok(r != NULL, "v2 step_extern: opened");
	if (r != NULL) {
		is_int(usage_of(r), 0, "v2 step_extern: only its slurmstepd ran: 0, present");
		ceems_cgroup_stats_reader_close(r);
	}
}

/* Steps come and go while the job runs. */
static void
test_steps_come_and_go(void)
{
	struct ceems_cgroup_reader *r;
	char dir[PATH_MAX], path[PATH_MAX];
	const char *root = tmptree_new(fixture_path("cgroup/v2"));

	join(dir, sizeof(dir), root, V2_JOB);
	r = open_dir(dir);
	ok(r != NULL, "copy: opened");
	if (r == NULL) {
		tmptree_remove(root);
		return;
	}
	is_int(usage_of(r), 7290000 * USEC, "copy: as the fixture");

	/* step_0 ends: its cgroup goes, the job's cpu.stat keeps its CPU
	 * time, and the extern step's tasks use another second. */
	join(path, sizeof(path), dir, "step_0");
	tmptree_remove(path);
	put_cpu(dir, "cpu.stat", 8341234);
	is_int(usage_of(r), 8290000 * USEC,
	       "step_0 gone: its slurmstepd's last reading stays out");

	/* step_1 starts; its slurmstepd used 20000 us, its tasks 500000. */
	join(path, sizeof(path), dir, "step_1/slurm");
	if (ceems_fileio_mkdir_p(path, 0755) < 0)
		tmptree_die("mkdir", path);
	put_cpu(dir, "step_1/slurm/cpu.stat", 20000);
	put_cpu(dir, "cpu.stat", 8861234);
	is_int(usage_of(r), 8810000 * USEC, "step_1 not yet followed: its slurmstepd counted");
	is_int(ceems_cgroup_stats_reader_rescan(r), 1, "rescan: step_1/slurm found");
	is_int(usage_of(r), 8810000 * USEC,
	       "found late: what was given is not taken back (held, not 8790000)");
	put_cpu(dir, "cpu.stat", 8981234);
	is_int(usage_of(r), 8910000 * USEC, "then step_1's slurmstepd is left out");
	ceems_cgroup_stats_reader_close(r);
	tmptree_remove(root);
}

/* Where burn's work goes, so that no compiler drops it. */
static volatile unsigned long burn_sink;

/* Burn about MS milliseconds of CPU. */
static void
burn(long ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			burn_sink += (unsigned long)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A child process moved into DIR/cgroup.procs burns MS of CPU.  False
 * when it could not be moved. */
static bool
burn_in(const char *dir, long ms)
{
	char path[PATH_MAX];
	int status;
	pid_t pid;

	join(path, sizeof(path), dir, "cgroup.procs");
	pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int fd = open(path, O_WRONLY);

		if (fd < 0 || write(fd, "0\n", 2) != 2)
			_exit(3);
		close(fd);
		burn(ms);
		_exit(0);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void
test_real_v2(void)
{
	static char text[65536];
	static struct ceems_cgroup_mounts mnt;
	char job[PATH_MAX], step[PATH_MAX], slurm[PATH_MAX];
	struct ceems_cgroup_reader *r;
	unsigned nfiles;
	uint64_t u;

	if (geteuid() != 0) {
		skip("real v2 cgroup: not root");
		return;
	}
	if (ceems_fileio_read_text_file("/proc/self/mountinfo", text, sizeof(text)) < 0 ||
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mnt) < 0 ||
	    mnt.unified[0] == '\0') {
		skip("real v2 cgroup: no unified hierarchy");
		return;
	}
	snprintf(job, sizeof(job), "%s/ceems-stepd-%ld", mnt.unified, (long)getpid());
	join(step, sizeof(step), job, "step_0");
	join(slurm, sizeof(slurm), step, "slurm");
	if (mkdir(job, 0755) != 0 || mkdir(step, 0755) != 0 || mkdir(slurm, 0755) != 0) {
		rmdir(step);
		rmdir(job);
		skip("real v2 cgroup: cannot create cgroups");
		return;
	}
	r = open_dir(job);
	ok(r != NULL, "real v2: job opened");
	if (r != NULL && burn_in(slurm, 200)) {
		struct ceems_cgroup_reader *own = open_dir(slurm);

		/* The kernel counted it (or the check below proves nothing). */
		ok(own != NULL && (u = usage_of(own)) >= 150 * 1000000ULL &&
		   u != UINT64_MAX, "real v2: step_0/slurm's own cpu.stat has the 200 ms");
		ceems_cgroup_stats_reader_close(own);
		nfiles = ceems_cgroup_stats_reader_nfiles(r);
		u = usage_of(r);
		ok(u < 50 * 1000000ULL,
		   "real v2: 200 ms burnt in step_0/slurm are not the job's");
		printf("# job's usage: %llu ns\n", (unsigned long long)u);
		rmdir(slurm);
		rmdir(step);
		u = usage_of(r);
		ok(u < 50 * 1000000ULL, "real v2: nor once step_0 is removed");
		is_int(ceems_cgroup_stats_reader_nfiles(r), nfiles - 1,
		       "real v2: the removed slurm/cpu.stat is closed");
	} else {
		skip("real v2 cgroup: no process could be moved into it");
	}
	ceems_cgroup_stats_reader_close(r);
	rmdir(slurm);
	rmdir(step);
	rmdir(job);
}

int
main(void)
{
	ceems_log_set_handler(quiet, NULL);
	test_fixture();
	test_steps_come_and_go();
	test_real_v2();
	return done_testing();
}
