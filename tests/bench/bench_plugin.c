/* bench_plugin.c - the latency the SPANK plugin adds to a job's start and
 * end (target: at most 10 ms each), measured against a running node agent
 * (tools/ceems-agent, started by tests/bench/run-plugin.sh) with N other
 * jobs registered in real cgroups.
 *
 * Each repetition is one job, in real cgroups of its own that this
 * process moves itself into (as slurmstepd is in its job's cgroups), and
 * runs the calls the plugin makes, in the plugin's order, through the
 * same functions (lib/client/jobside.c):
 *
 *   start, first step   load the configuration, find the job's cgroup
 *                       from /proc/self/cgroup (+ mountinfo, siblings),
 *                       register the job, start the step (extern);
 *   start, later step   the same in the next step: the registration is
 *                       answered "exists" (batch);
 *   end, batch step     the step's end call to the agent and the summary
 *                       formatted (task_exit of the batch step);
 *   end, job            one deregister with the job's metadata (the
 *                       final figures).  Then, untimed, the epilog's
 *                       word, on which the agent writes the record
 *                       (spool, fsync; the replay child takes it into
 *                       PostgreSQL when one is configured).
 *
 * Not in the figures: what Slurm itself does around the callbacks, and
 * the plugin's RPC to slurmctld for the job's metadata, which runs in a
 * child process at the job's start (plugins/job_start.c), the step's
 * end waiting 300 ms at most for its answer.
 *
 * With -H SECONDS it registers the other jobs, prints "held N" and
 * holds them for SECONDS before it deregisters them, timing nothing:
 * the window in which tests/bench/run-agent-jobs.sh measures the
 * agent's whole process with N jobs.
 *
 * Usage: bench_plugin -c CONF [-n OTHER_JOBS] [-r REPS] [-j FIRST_JOBID]
 *        [-H SECONDS]
 * Runs as root (it creates cgroups).  Prints "key value" lines. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "record/job_note.h"
#include "base/conf.h"
#include "bench_time.h"
#include "client/jobside.h"
#include "model/job.h"
#include "base/log.h"
#include "summary/summary.h"

#define TIMEOUT_MS 1000

enum phase { START_FIRST, START_NEXT, END_STEP, END_JOB, NPHASES };
static const char *phase_names[NPHASES] = {
	"start_first_step", "start_later_step", "end_batch_step", "end_job",
};

static int v1;			/* else v2 */
static char group[64];		/* our parent cgroup, under each root */
static const char *v1_controllers[] = { "cpuacct", "memory", "cpuset" };

static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	(void)close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int
copy_file(const char *from, const char *to)
{
	char buf[4096];
	ssize_t n;
	int fd = open(from, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return write_file(to, buf);
}

/* mkdir the cgroup NAME ("" = our parent group) in every hierarchy. */
static int
make_cgroup(const char *name)
{
	char dir[512], from[600], to[600];

	if (!v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s", group, name);
		return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s%s",
			 v1_controllers[i], group, name);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	/* A cpuset cgroup takes no task before it has CPUs and nodes; the
	 * agent counts a job's cores from it. */
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/cpuset/%s%s", group, name);
	snprintf(from, sizeof(from), "/sys/fs/cgroup/cpuset/cpuset.cpus");
	snprintf(to, sizeof(to), "%s/cpuset.cpus", dir);
	if (copy_file(from, to) < 0)
		return -EIO;
	snprintf(from, sizeof(from), "/sys/fs/cgroup/cpuset/cpuset.mems");
	snprintf(to, sizeof(to), "%s/cpuset.mems", dir);
	return copy_file(from, to) < 0 ? -EIO : 0;
}

static void
remove_cgroup(const char *name)
{
	char dir[512];

	if (!v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s%s", group, name);
		(void)rmdir(dir);
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s%s",
			 v1_controllers[i], group, name);
		(void)rmdir(dir);
	}
}

/* Move this process into cgroup NAME ("" and group "": the roots). */
static int
move_self(const char *grp, const char *name)
{
	char path[600], pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (!v1) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s%s/cgroup.procs",
			 grp, name);
		return write_file(path, pid);
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s%s/cgroup.procs",
			 v1_controllers[i], grp, name);
		if (write_file(path, pid) < 0)
			return -1;
	}
	return 0;
}

static void
spec_of(uint32_t jobid, struct ceems_agent_job_spec *spec)
{
	char path[CEEMS_CGROUP_PATH_MAX];

	memset(spec, 0, sizeof(*spec));
	spec->jobid = jobid;
	spec->uid = 0;
	snprintf(path, sizeof(path), "/%s/job_%u", group, jobid);
	if (v1) {
		spec->cgroup.version = CEEMS_CGROUP_V1;
		snprintf(spec->cgroup.v1[CEEMS_CG_CPUACCT], CEEMS_CGROUP_PATH_MAX, "%s", path);
		snprintf(spec->cgroup.v1[CEEMS_CG_MEMORY], CEEMS_CGROUP_PATH_MAX, "%s", path);
		snprintf(spec->cgroup.v1[CEEMS_CG_CPUSET], CEEMS_CGROUP_PATH_MAX, "%s", path);
	} else {
		spec->cgroup.version = CEEMS_CGROUP_V2;
		snprintf(spec->cgroup.unified, CEEMS_CGROUP_PATH_MAX, "%s", path);
	}
}

static void
report_phase(const char *name, double *t, int n)
{
	size_t p99 = (size_t)((n - 1) * 0.99 + 0.5);

	qsort(t, (size_t)n, sizeof(*t), bench_cmp_double);
	printf("%s_median_ms %.3f\n", name, t[n / 2]);
	printf("%s_p99_ms %.3f\n", name, t[p99]);
	printf("%s_max_ms %.3f\n", name, t[n - 1]);
}

static void
fake_meta(uint32_t jobid, struct ceems_job_meta *meta)
{
	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	meta->uid = 0;
	snprintf(meta->user, sizeof(meta->user), "root");
	snprintf(meta->account, sizeof(meta->account), "bench");
	snprintf(meta->partition, sizeof(meta->partition), "debug");
	snprintf(meta->name, sizeof(meta->name), "bench job");
	snprintf(meta->node, sizeof(meta->node), "localhost");
	snprintf(meta->nodes, sizeof(meta->nodes), "localhost");
	snprintf(meta->state, sizeof(meta->state), "COMPLETED");
	meta->exit_code = 0;
	meta->alloc_cpus = 1;
	meta->nnodes = 1;
	meta->start_time = (int64_t)time(NULL) - 60;
	meta->end_time = (int64_t)time(NULL);
}

static void
quiet(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		fprintf(stderr, "bench_plugin: %s\n", message);
}

int
main(int argc, char **argv)
{
	static struct ceems_agent_job_report report;
	static char summary[8192];
	struct ceems_config config;
	struct ceems_agent_job_spec spec;
	struct ceems_cgroup_job cgroup;
	struct ceems_job_meta meta;
	const char *conf = NULL;
	char name[64], err[512], notes[CEEMS_CONFIG_PATH_MAX + 8];
	double *t[NPHASES], t0;
	uint32_t first = 7000000;
	int others = 0, reps = 200, hold = 0, opt, status = 0, registered = 0, r;

	while ((opt = getopt(argc, argv, "c:n:r:j:H:")) != -1) {
		switch (opt) {
		case 'c': conf = optarg; break;
		case 'n': others = atoi(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 'j': first = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'H': hold = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: bench_plugin -c CONF [-n OTHER_JOBS] [-r REPS] [-j FIRST_JOBID] [-H SECONDS]\n");
			return 2;
		}
	}
	if (conf == NULL || others < 0 || others > 60000 || reps < 1 ||
	    hold < 0 || hold > 86400) {
		fprintf(stderr, "usage: bench_plugin -c CONF [-n OTHER_JOBS] [-r REPS] [-j FIRST_JOBID] [-H SECONDS]\n");
		return 2;
	}
	ceems_log_set_handler(quiet, NULL);
	ceems_conf_defaults(&config);
	if (ceems_conf_load(&config, conf, err, sizeof(err)) < 0 ||
	    ceems_job_note_dir(&config, notes, sizeof(notes)) < 0) {
		fprintf(stderr, "bench_plugin: %s\n", err);
		return 2;
	}
	if (access("/sys/fs/cgroup/cpuacct/cgroup.procs", F_OK) == 0)
		v1 = 1;
	else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0) {
		fprintf(stderr, "bench_plugin: no cgroup v1 cpuacct nor v2 tree\n");
		return 2;
	}
	snprintf(group, sizeof(group), "ceems_bench_%d", (int)getpid());
	if (make_cgroup("") < 0) {
		fprintf(stderr, "bench_plugin: cannot create cgroups (run as root): %s\n",
			strerror(errno));
		return 2;
	}
	for (int p = 0; p < NPHASES; p++)
		t[p] = calloc((size_t)reps, sizeof(double));

	/* The other jobs: registered, their cgroups empty (the agent still
	 * reads each one at every tick). */
	for (int i = 0; i < others; i++) {
		uint32_t jobid = first + (uint32_t)i;

		snprintf(name, sizeof(name), "/job_%u", jobid);
		spec_of(jobid, &spec);
		if (make_cgroup(name) < 0 ||
		    ceems_agent_client_register_job(config.socket_path, &spec, TIMEOUT_MS,
						    err, sizeof(err)) < 0) {
			fprintf(stderr, "bench_plugin: job %u: %s\n", jobid, err);
			status = 1;
			goto out;
		}
		registered++;
	}
	if (hold > 0) {
		printf("held %d\n", registered);
		fflush(stdout);
		sleep((unsigned)hold);
		goto out;
	}

	for (int rep = 0; rep < reps; rep++) {
		uint32_t jobid = first + (uint32_t)others + (uint32_t)rep;

		snprintf(name, sizeof(name), "/job_%u", jobid);
		if (make_cgroup(name) < 0 || move_self(group, name) < 0) {
			fprintf(stderr, "bench_plugin: cannot enter cgroup %s%s\n",
				group, name);
			status = 1;
			goto out;
		}

		/* Job start, first step (extern). */
		t0 = bench_now_ms();
		ceems_conf_defaults(&config);
		(void)ceems_conf_load(&config, conf, err, sizeof(err));
		r = ceems_jobside_find_cgroup(getpid(), jobid, &cgroup, err, sizeof(err));
		if (r == 0) {
			memset(&spec, 0, sizeof(spec));
			spec.jobid = jobid;
			spec.cgroup = cgroup;
			r = ceems_jobside_start(config.socket_path, &spec, "extern", 1,
						TIMEOUT_MS, err, sizeof(err));
		}
		t[START_FIRST][rep] = bench_now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "bench_plugin: job %u start: %s\n", jobid, err);
			status = 1;
			goto out;
		}

		/* Job start, a later step (batch). */
		t0 = bench_now_ms();
		ceems_conf_defaults(&config);
		(void)ceems_conf_load(&config, conf, err, sizeof(err));
		r = ceems_jobside_find_cgroup(getpid(), jobid, &cgroup, err, sizeof(err));
		if (r == 0) {
			memset(&spec, 0, sizeof(spec));
			spec.jobid = jobid;
			spec.cgroup = cgroup;
			r = ceems_jobside_start(config.socket_path, &spec, "batch", 1,
						TIMEOUT_MS, err, sizeof(err));
		}
		t[START_NEXT][rep] = bench_now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "bench_plugin: job %u batch start: %s\n", jobid, err);
			status = 1;
			goto out;
		}

		/* The job runs for a moment: let the agent tick over it. */
		usleep(20000);

		/* The batch step ends: its figures, the summary. */
		t0 = bench_now_ms();
		r = ceems_agent_client_step_end(config.socket_path, jobid, "batch",
						TIMEOUT_MS, &report, err, sizeof(err));
		if (r == 0) {
			fake_meta(jobid, &meta);
			r = ceems_summary_format(&meta, &report,
						 CEEMS_SUMMARY_FULL, summary,
						 sizeof(summary)) < 0 ? -ENOSPC : 0;
		}
		t[END_STEP][rep] = bench_now_ms() - t0;
		if (r < 0) {
			fprintf(stderr, "bench_plugin: job %u batch end: %s\n", jobid, err);
			status = 1;
			goto out;
		}

		/* The job ends (extern step's exit): final figures, record. */
		t0 = bench_now_ms();
		fake_meta(jobid, &meta);
		r = ceems_jobside_end(config.socket_path, notes, &meta, "extern",
				      TIMEOUT_MS, &report, err, sizeof(err));
		t[END_JOB][rep] = bench_now_ms() - t0;
		if (r > 0)
			r = -EIO;	/* the agent did not take it: a note */
		/* The epilog's word, untimed (slurmd runs it after the job):
		 * the agent writes the record to the spool then, in its
		 * loop, where the next job's calls may wait for it. */
		if (r == 0)
			r = ceems_jobside_end(config.socket_path, notes, &meta,
					      "epilog", TIMEOUT_MS, &report, err,
					      sizeof(err));
		if (r < 0) {
			fprintf(stderr, "bench_plugin: job %u end: %s\n", jobid, err);
			status = 1;
			goto out;
		}
		(void)move_self("", "");
		remove_cgroup(name);
	}

	printf("other_jobs %d\nrepetitions %d\nstorage %s\n", others, reps,
	       config.database[0] != '\0' ? "database" : "spool");
	for (int p = 0; p < NPHASES; p++)
		report_phase(phase_names[p], t[p], reps);

out:
	(void)move_self("", "");
	for (int i = 0; i < registered; i++) {
		uint32_t jobid = first + (uint32_t)i;

		(void)ceems_agent_client_deregister_job(config.socket_path, jobid,
							TIMEOUT_MS, &report, err,
							sizeof(err));
		(void)ceems_agent_client_release_job(config.socket_path, jobid,
						     TIMEOUT_MS, err, sizeof(err));
	}
	for (int i = 0; i < others + reps; i++) {
		snprintf(name, sizeof(name), "/job_%u", first + (uint32_t)i);
		remove_cgroup(name);
	}
	remove_cgroup("");
	for (int p = 0; p < NPHASES; p++)
		free(t[p]);
	return status;
}
