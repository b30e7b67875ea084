/* real_agent_job.c - one job that holds a GPU, told to a running node
 * agent (tools/ceems-agent) as the SPANK plugin tells it, without Slurm:
 * the driver of tests/gpu/real-agent.sh.
 *
 * It makes cgroups of its own, the job's and its steps' (as slurmd makes
 * them), moves itself into the extern step's (as slurmstepd is there),
 * runs the job's command in the batch step's, and makes the plugin's
 * calls in the plugin's order, through the same functions
 * (lib/client/jobside.c):
 *
 *   start, extern step  find the job's cgroup from /proc/self/cgroup,
 *                       register the job, start the extern step;
 *   start lookup        register again with what the plugin learns from
 *                       slurmctld: start time, cluster, and the job's
 *                       GPUs as the plugin names them (plugins/job_gpus.c:
 *                       "dev:MAJOR:MINOR" of the GRES device file, or a
 *                       UUID, bus id, "gres:N");
 *   start, batch step   the registration answered "exists";
 *   the job             COMMAND, forked in the cgroup, between IDLE
 *                       seconds before and after;
 *   end, batch step     the step's end with its wait status;
 *   end, job            one deregistration with the job's metadata
 *                       (extern), then the epilog's word, on which the
 *                       agent writes the record.
 *
 * It prints "key value" lines: the wall-clock times (Unix seconds) of
 * the registration and the deregistration, the job's lifetime at the
 * agent, the command's exit status.  The record itself is the agent's,
 * in its spool.
 *
 * Usage: real_agent_job -c CONF -j JOBID [-g GPU]... [-i IDLE_S]
 *                       -- COMMAND [ARG]...
 * GPU: a device file (/dev/nvidia0: its numbers, as the plugin stats
 * gres.conf's File=) or an identifier passed as it is.  Runs as root (it
 * creates cgroups). */
#include "config.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/conf.h"
#include "base/log.h"
#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "client/jobside.h"
#include "model/job.h"
#include "record/job_note.h"

#define TIMEOUT_MS 5000

static const char *v1_controllers[] = { "cpuacct", "memory", "cpuset" };
static int v1;			/* else v2 */
/* Ours under each root, the job's beneath it and its steps', named as
 * Slurm names them: PARENT/job_JOBID/step_extern, .../step_batch. */
static char parent[64], group[96], step_extern[128], step_batch[128];

static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
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
	int fd = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return write_file(to, buf);
}

/* mkdir GRP in every hierarchy. */
static int
make_cgroup(const char *grp)
{
	char dir[512], to[600];

	if (!v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", grp);
		return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s",
			 v1_controllers[i], grp);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	/* A cpuset cgroup takes no task before it has CPUs and nodes. */
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/cpuset/%s", grp);
	snprintf(to, sizeof(to), "%s/cpuset.cpus", dir);
	if (copy_file("/sys/fs/cgroup/cpuset/cpuset.cpus", to) < 0)
		return -EIO;
	snprintf(to, sizeof(to), "%s/cpuset.mems", dir);
	return copy_file("/sys/fs/cgroup/cpuset/cpuset.mems", to) < 0 ? -EIO : 0;
}

static void
remove_cgroup(const char *grp)
{
	char dir[512];

	if (!v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", grp);
		(void)rmdir(dir);
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s",
			 v1_controllers[i], grp);
		(void)rmdir(dir);
	}
}

static void
remove_cgroups(void)
{
	remove_cgroup(step_batch);
	remove_cgroup(step_extern);
	remove_cgroup(group);
	remove_cgroup(parent);
}

/* Move this process into GRP ("": the roots). */
static int
move_self(const char *grp)
{
	char path[600], pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (!v1) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", grp);
		return write_file(path, pid);
	}
	for (size_t i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/%s/cgroup.procs",
			 v1_controllers[i], grp);
		if (write_file(path, pid) < 0)
			return -1;
	}
	return 0;
}

/* The plugin's name for a GPU: a character device's numbers, as
 * plugins/job_gpus.c makes them from gres.conf's File=; else ARG. */
static void
gpu_id(const char *arg, char *id)
{
	struct stat st;

	if (stat(arg, &st) == 0 && S_ISCHR(st.st_mode))
		snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "dev:%u:%u",
			 major(st.st_rdev), minor(st.st_rdev));
	else
		snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "%s", arg);
}

static double
now_unix(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
job_meta(uint32_t jobid, int64_t start, int status,
	 struct ceems_job_meta *meta)
{
	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	meta->uid = 0;
	snprintf(meta->user, sizeof(meta->user), "root");
	snprintf(meta->account, sizeof(meta->account), "gpu");
	snprintf(meta->partition, sizeof(meta->partition), "gpu");
	snprintf(meta->name, sizeof(meta->name), "real-agent gpu_load");
	(void)gethostname(meta->node, sizeof(meta->node) - 1);
	snprintf(meta->nodes, sizeof(meta->nodes), "%s", meta->node);
	snprintf(meta->state, sizeof(meta->state), "%s",
		 WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "COMPLETED" :
		 "FAILED");
	meta->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	meta->alloc_cpus = 1;
	meta->alloc_gpus = 1;
	meta->nnodes = 1;
	meta->start_time = start;
	meta->end_time = (int64_t)time(NULL);
}

static void
to_stderr(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		fprintf(stderr, "real_agent_job: %s\n", message);
}

static int
run_command(char **argv, int *status)
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (move_self(step_batch) < 0) {
			fprintf(stderr, "real_agent_job: cannot enter cgroup %s\n",
				step_batch);
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "real_agent_job: %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/* Register the job as the plugin does at its start: the extern step,
 * then the start lookup's second registration with the GPUs, then the
 * batch step. */
static int
start_job(const char *socket, struct ceems_agent_job_spec *spec,
	  char gpus[][CEEMS_AGENT_GPU_ID_MAX], uint32_t ngpus, int64_t start,
	  char *err, size_t err_size)
{
	struct ceems_cgroup_job cgroup;
	uint32_t jobid = spec->jobid;
	int r;

	r = ceems_jobside_find_cgroup(getpid(), jobid, &cgroup, err, err_size);
	if (r < 0)
		return r;
	memset(spec, 0, sizeof(*spec));
	spec->jobid = jobid;
	spec->cgroup = cgroup;
	r = ceems_jobside_start(socket, spec, "extern", 1, TIMEOUT_MS, err,
				err_size);
	if (r < 0)
		return r;
	spec->start_time = start;
	snprintf(spec->cluster, sizeof(spec->cluster), "gpu");
	for (uint32_t i = 0; i < ngpus; i++)
		memcpy(spec->gpu_ids[i], gpus[i], CEEMS_AGENT_GPU_ID_MAX);
	spec->ngpu_ids = ngpus;
	r = ceems_agent_client_register_job(socket, spec, TIMEOUT_MS, err, err_size);
	if (r < 0 && r != -EEXIST)
		return r;
	return ceems_jobside_start(socket, spec, "batch", 1, TIMEOUT_MS, err,
				   err_size);
}

static int
usage(void)
{
	fprintf(stderr, "usage: real_agent_job -c CONF -j JOBID [-g GPU]... "
		"[-i IDLE_S] -- COMMAND [ARG]...\n");
	return 2;
}

int
main(int argc, char **argv)
{
	static struct ceems_agent_job_report report;
	static char gpus[CEEMS_AGENT_MAX_GPU_IDS][CEEMS_AGENT_GPU_ID_MAX];
	struct ceems_config config;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta;
	const char *conf = NULL;
	char err[512], notes[CEEMS_CONFIG_PATH_MAX + 8];
	uint32_t jobid = 0, ngpus = 0;
	unsigned int idle = 2;
	int64_t start;
	int opt, r, status = 0, rc = 1;

	while ((opt = getopt(argc, argv, "+c:j:g:i:")) != -1) {
		switch (opt) {
		case 'c': conf = optarg; break;
		case 'j': jobid = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'i': idle = (unsigned int)strtoul(optarg, NULL, 10); break;
		case 'g':
			if (ngpus >= CEEMS_AGENT_MAX_GPU_IDS)
				return usage();
			gpu_id(optarg, gpus[ngpus++]);
			break;
		default:
			return usage();
		}
	}
	if (conf == NULL || jobid == 0 || optind >= argc || idle > 3600)
		return usage();
	ceems_log_set_handler(to_stderr, NULL);
	ceems_conf_defaults(&config);
	if (ceems_conf_load(&config, conf, err, sizeof(err)) < 0 ||
	    ceems_job_note_dir(&config, notes, sizeof(notes)) < 0) {
		fprintf(stderr, "real_agent_job: %s\n", err);
		return 2;
	}
	if (access("/sys/fs/cgroup/cpuacct/cgroup.procs", F_OK) == 0)
		v1 = 1;
	else if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) != 0) {
		fprintf(stderr, "real_agent_job: no cgroup v1 cpuacct nor v2 tree\n");
		return 2;
	}
	snprintf(parent, sizeof(parent), "ceems_real_agent_%d", (int)getpid());
	snprintf(group, sizeof(group), "%s/job_%u", parent, jobid);
	snprintf(step_extern, sizeof(step_extern), "%s/step_extern", group);
	snprintf(step_batch, sizeof(step_batch), "%s/step_batch", group);
	if (make_cgroup(parent) < 0 || make_cgroup(group) < 0 ||
	    make_cgroup(step_extern) < 0 || make_cgroup(step_batch) < 0 ||
	    move_self(step_extern) < 0) {
		fprintf(stderr, "real_agent_job: cannot create or enter cgroup %s (run as root): %s\n",
			step_extern, strerror(errno));
		remove_cgroups();
		return 2;
	}
	for (uint32_t i = 0; i < ngpus; i++)
		printf("gpu_id %s\n", gpus[i]);

	start = (int64_t)time(NULL);
	printf("registered_unix %.3f\n", now_unix());
	spec.jobid = jobid;
	if (start_job(config.socket_path, &spec, gpus, ngpus, start, err,
		      sizeof(err)) < 0) {
		fprintf(stderr, "real_agent_job: job %u start: %s\n", jobid, err);
		goto out;
	}
	sleep(idle);
	printf("command_start_unix %.3f\n", now_unix());
	fflush(stdout);
	if ((r = run_command(argv + optind, &status)) < 0) {
		fprintf(stderr, "real_agent_job: %s: %s\n", argv[optind],
			strerror(-r));
		goto out;
	}
	printf("command_end_unix %.3f\ncommand_status %d\n", now_unix(), status);
	sleep(idle);

	r = ceems_agent_client_step_end_status(config.socket_path, jobid, "batch",
					     status, TIMEOUT_MS, &report, err,
					     sizeof(err));
	if (r < 0)
		fprintf(stderr, "real_agent_job: job %u batch end: %s\n", jobid, err);
	job_meta(jobid, start, status, &meta);
	r = ceems_jobside_end(config.socket_path, notes, &meta, "extern",
			      TIMEOUT_MS, &report, err, sizeof(err));
	printf("deregistered_unix %.3f\n", now_unix());
	if (r != 0) {
		fprintf(stderr, "real_agent_job: job %u end: %s\n", jobid, err);
		goto out;
	}
	printf("agent_elapsed_s %.3f\n", report.elapsed_s);
	r = ceems_jobside_end(config.socket_path, notes, &meta, "epilog",
			      TIMEOUT_MS, &report, err, sizeof(err));
	if (r != 0) {
		fprintf(stderr, "real_agent_job: job %u epilog: %s\n", jobid, err);
		goto out;
	}
	rc = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
out:
	fflush(stdout);
	(void)move_self("");
	remove_cgroups();
	return rc;
}
