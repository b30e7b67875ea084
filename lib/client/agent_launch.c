/* agent_launch.c - one supervised node agent per node, whoever starts it.
 *
 * The supervisor ("ceems-agent --supervise", tools/agent/agent_supervise.c)
 * holds an open file description lock on STATE_DIR/agent.pid for as long
 * as it runs, and keeps its own pid and its agent's in that file.  A
 * slurmd (or an admin's ceems-agent --start) that finds the lock held
 * adopts the running supervisor instead of starting a second one; one
 * that takes the lock hands it to the supervisor it starts, through fork
 * and exec, so that no other process can take it in between: of two
 * slurmds starting at once, the lock decides.  The kernel drops the lock
 * when its holder is gone, so a pid file left by a crash or a reboot is
 * told apart from a live one without trusting its contents.
 *
 * ceems_agent_launch runs inside slurmd, a threaded program: between fork
 * and exec only async-signal-safe calls are made (no malloc, no stdio),
 * everything the child needs is prepared before the first fork, and the
 * forks are _Fork where the C library has it (glibc 2.34), which runs
 * none of the pthread_atfork handlers of whatever slurmd loaded.  The
 * supervisor is forked twice (the middle process calls setsid and exits),
 * so it is never slurmd's child or zombie, survives slurmd's
 * daemonization, and is not stopped with slurmd. */
#include "config.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/agent_launch.h"
#include "base/clock.h"
#include "base/conf.h"
#include "base/fileio.h"
#include "base/spawn.h"

/* How long the caller waits for the supervisor's exec (or its failure). */
#define START_WAIT_MS 5000

/* The supervisor's whole environment: nothing of slurmd's leaks into it. */
#define LAUNCH_ENV_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

/* The descriptor the supervisor finds its lock on (--lock-fd). */
#define LAUNCH_LOCK_FD 3
/* The report pipe's write end in the child, closed by a successful exec. */
#define LAUNCH_REPORT_FD 4
/* Where the child parks its descriptors before putting them in place. */
#define LAUNCH_PARK_FD 10

int
ceems_agent_launch_pid_path(const char *state_dir, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s", state_dir, CEEMS_AGENT_PID_FILE);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* FD (PATH) must be a regular file of this uid's: any other (a link
 * followed at creation, another user's file) is refused, and group or
 * other access is taken away, so that no other user can open it and
 * hold a lock on it. */
static int
check_pid_file(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	if ((st.st_mode & 07777) != 0600 && fchmod(fd, 0600) < 0)
		return -errno;
	return 0;
}

/* Who holds the lock FD's file description could not take: a
 * supervisor holds a write lock; a read lock is someone else's. */
static int
lock_holder(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	if (fcntl(fd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	return fl.l_type == F_RDLCK ? -EBUSY : -EWOULDBLOCK;
}

int
ceems_agent_launch_lock_take(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, err;

	if (slash != NULL && slash != path &&
	    (size_t)(slash - path) < sizeof(dir)) {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
		(void)ceems_fileio_mkdir_p(dir, 0700);
	}
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
		  0600);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	if ((err = check_pid_file(fd)) < 0) {
		(void)close(fd);
		return err;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		err = errno;
		if (err == EAGAIN || err == EACCES)
			err = -lock_holder(fd);
		(void)close(fd);
		return -err;
	}
	return fd;
}

const char *
ceems_agent_launch_lock_strerror(int err)
{
	switch (err) {
	case -EBUSY:
		return "a process that is no ceems-agent supervisor holds a read lock on it (it opened the file while others could read it): find it with lslocks or fuser, end it, then start the agent again";
	case -EPERM:
		return "it is not a regular file owned by root (a link, or another user's file): remove it, then start the agent again";
	case -EWOULDBLOCK:
		return "a supervisor holds its lock";
	default:
		return strerror(-err);
	}
}

int
ceems_agent_launch_lock_write(int fd, pid_t supervisor, pid_t agent)
{
	char line[48];
	int n = snprintf(line, sizeof(line), "%ld %ld\n", (long)supervisor,
			 (long)agent);

	if (ftruncate(fd, 0) < 0)
		return -errno;
	return ceems_fileio_pwrite_all(fd, line, (size_t)n, 0);
}

/* "SUPERVISOR AGENT\n", each a positive decimal below 2^31 (AGENT may be
 * 0).  Anything else leaves the one it cannot read 0. */
void
ceems_agent_launch_pid_parse(const char *buf, size_t len, pid_t *supervisor,
		      pid_t *agent)
{
	pid_t *out[2] = { supervisor, agent };
	size_t i = 0;

	*supervisor = 0;
	*agent = 0;
	for (int k = 0; k < 2; k++) {
		long v = 0;
		size_t digits = 0;

		while (i < len && buf[i] == ' ')
			i++;
		while (i < len && buf[i] >= '0' && buf[i] <= '9' && digits < 10) {
			v = v * 10 + (buf[i] - '0');
			i++;
			digits++;
		}
		if (digits == 0 || v > INT_MAX ||
		    (i < len && buf[i] != ' ' && buf[i] != '\n'))
			return;
		*out[k] = (pid_t)v;
	}
}

int
ceems_agent_launch_lock_probe(const char *path, pid_t *supervisor, pid_t *agent)
{
	/* A write lock is tested: every holder conflicts with it, and its
	 * type says whose it is. */
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char buf[64];
	ssize_t n;
	int fd, err;

	*supervisor = 0;
	*agent = 0;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fcntl(fd, F_OFD_GETLK, &fl) < 0) {
		err = errno;
		(void)close(fd);
		return -err;
	}
	if (fl.l_type == F_UNLCK || fl.l_type == F_RDLCK) {
		(void)close(fd);
		return fl.l_type == F_UNLCK ? 0 : -EBUSY;
	}
	n = pread(fd, buf, sizeof(buf), 0);
	(void)close(fd);
	if (n > 0)
		ceems_agent_launch_pid_parse(buf, (size_t)n, supervisor, agent);
	return 1;
}

/* ------------------------------------------------------------------ */
/* Fork and exec                                                       */
/* ------------------------------------------------------------------ */

/* Everything the child needs, prepared before the fork. */
struct launch_plan {
	char *argv[16];
	char *envp[3];
	char env_path[sizeof(LAUNCH_ENV_PATH)];
	char env_slurm_conf[PATH_MAX + 16];
	char agent[PATH_MAX], config[PATH_MAX], log[PATH_MAX], interval[32];
	char node[CEEMS_NODE_NAME_MAX];
	char lock_fd[4];
	int null_fd, log_fd, lock, report;
};

/* In the grandchild: descriptors in place, signals as a new program
 * expects them, exec.  Async-signal-safe calls only.  On failure, the
 * errno goes up the report pipe. */
static void __attribute__((noreturn))
exec_supervisor(struct launch_plan *p)
{
	struct sigaction dfl;
	sigset_t none;
	int null_fd, log_fd, lock, report, out = p->report, err;

	/* Park ours above anything 0-4 may hold, then put them in place
	 * (dup2 leaves the copies inheritable; the report stays O_CLOEXEC). */
	null_fd = fcntl(p->null_fd, F_DUPFD_CLOEXEC, LAUNCH_PARK_FD);
	log_fd = fcntl(p->log_fd >= 0 ? p->log_fd : p->null_fd,
		       F_DUPFD_CLOEXEC, LAUNCH_PARK_FD);
	lock = fcntl(p->lock, F_DUPFD_CLOEXEC, LAUNCH_PARK_FD);
	report = fcntl(p->report, F_DUPFD_CLOEXEC, LAUNCH_PARK_FD);
	if (null_fd < 0 || log_fd < 0 || lock < 0 || report < 0)
		goto fail;
	out = report;
	if (dup2(null_fd, STDIN_FILENO) < 0 || dup2(null_fd, STDOUT_FILENO) < 0 ||
	    dup2(log_fd, STDERR_FILENO) < 0 || dup2(lock, LAUNCH_LOCK_FD) < 0 ||
	    dup3(report, LAUNCH_REPORT_FD, O_CLOEXEC) < 0)
		goto fail;
	out = LAUNCH_REPORT_FD;
	ceems_spawn_close_from(LAUNCH_REPORT_FD + 1);

	/* slurmd's handlers expect slurmd; ignored signals stay ignored
	 * across execve and the mask is inherited: reset both. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir("/") < 0) {
		/* Nothing depends on the working directory. */
	}
	umask(022);
	execve(p->argv[0], p->argv, p->envp);
fail:
	err = errno;
	if (write(out, &err, sizeof(err)) < 0) {
		/* The caller sees no report and a short wait. */
	}
	_exit(127);
}

/* Wait until DEADLINE for the report pipe's end of file (every copy of
 * its write end closed: the middle process exited, the supervisor
 * exec'ed) or an errno from a failed exec.  0 or -errno. */
static int
wait_report(int fd, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long left;
	int err;
	ssize_t n;

	while ((left = deadline - ceems_clock_monotonic_ms()) > 0) {
		n = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ETIMEDOUT;
		n = read(fd, &err, sizeof(err));
		if (n == 0)
			return 0;
		if (n == (ssize_t)sizeof(err))
			return -err;
		if (n < 0 && errno == EINTR)
			continue;
		return -EIO;
	}
	return -ETIMEDOUT;
}

/* Reap the middle process (it exits at once); one still there at
 * DEADLINE is killed and given one more second, never left a zombie. */
static void
reap_middle(pid_t mid, long long deadline)
{
	bool killed = false;
	pid_t p;

	while ((p = waitpid(mid, NULL, WNOHANG)) == 0 ||
	       (p < 0 && errno == EINTR)) {
		if (ceems_clock_monotonic_ms() >= deadline) {
			if (killed)
				return;
			(void)kill(mid, SIGKILL);
			killed = true;
			deadline = ceems_clock_monotonic_ms() + 1000;
		}
		(void)poll(NULL, 0, 5);
	}
}

static int
copy_arg(char *dst, size_t size, const char *src)
{
	int n = snprintf(dst, size, "%s", src);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int
plan_argv(struct launch_plan *p, const struct ceems_launch_spec *spec)
{
	static char opt_supervise[] = "--supervise", opt_agent[] = "--agent",
		    opt_config[] = "-c", opt_interval[] = "--interval",
		    opt_log[] = "--log", opt_lock[] = "--lock-fd",
		    opt_node[] = "--node";
	const char *slurm_conf;
	int i = 0;

	if (spec->agent[0] != '/' || spec->config[0] != '/' ||
	    spec->log[0] != '/')
		return -EINVAL;
	if (copy_arg(p->agent, sizeof(p->agent), spec->agent) < 0 ||
	    copy_arg(p->config, sizeof(p->config), spec->config) < 0 ||
	    copy_arg(p->log, sizeof(p->log), spec->log) < 0 ||
	    (spec->interval != NULL &&
	     copy_arg(p->interval, sizeof(p->interval), spec->interval) < 0) ||
	    (spec->node != NULL &&
	     copy_arg(p->node, sizeof(p->node), spec->node) < 0))
		return -ENAMETOOLONG;
	memcpy(p->env_path, LAUNCH_ENV_PATH, sizeof(LAUNCH_ENV_PATH));
	snprintf(p->lock_fd, sizeof(p->lock_fd), "%d", LAUNCH_LOCK_FD);
	p->argv[i++] = p->agent;
	p->argv[i++] = opt_supervise;
	p->argv[i++] = opt_agent;
	p->argv[i++] = p->agent;
	p->argv[i++] = opt_config;
	p->argv[i++] = p->config;
	if (spec->interval != NULL) {
		p->argv[i++] = opt_interval;
		p->argv[i++] = p->interval;
	}
	if (spec->node != NULL) {
		p->argv[i++] = opt_node;
		p->argv[i++] = p->node;
	}
	p->argv[i++] = opt_log;
	p->argv[i++] = p->log;
	p->argv[i++] = opt_lock;
	p->argv[i++] = p->lock_fd;
	p->argv[i] = NULL;
	p->envp[0] = p->env_path;
	p->envp[1] = NULL;
	/* slurmd's slurm.conf, for ceems-jobinfo's libslurm (Slurm's
	 * clients find it as SLURM_CONF, else at the default path or
	 * configless): an absolute path, nothing else of slurmd's. */
	slurm_conf = getenv("SLURM_CONF");
	if (slurm_conf != NULL && slurm_conf[0] == '/' &&
	    strlen(slurm_conf) < PATH_MAX) {
		snprintf(p->env_slurm_conf, sizeof(p->env_slurm_conf),
			 "SLURM_CONF=%s", slurm_conf);
		p->envp[1] = p->env_slurm_conf;
		p->envp[2] = NULL;
	}
	return 0;
}

pid_t
ceems_agent_launch(const struct ceems_launch_spec *spec, int lock_fd)
{
	struct launch_plan plan;
	int report[2] = { -1, -1 }, pidpipe[2] = { -1, -1 }, err = 0;
	pid_t mid, sv = -1;

	memset(&plan, 0, sizeof(plan));
	if ((err = plan_argv(&plan, spec)) < 0)
		return err;
	plan.lock = lock_fd;
	plan.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	plan.log_fd = open(spec->log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
			   O_NOCTTY | O_CLOEXEC, 0640);
	if (plan.null_fd < 0 || pipe2(report, O_CLOEXEC) < 0 ||
	    pipe2(pidpipe, O_CLOEXEC) < 0) {
		err = -errno;
		goto out;
	}
	plan.report = report[1];

	mid = ceems_spawn_fork();
	if (mid < 0) {
		err = -errno;
		goto out;
	}
	if (mid == 0) {
		pid_t pid;

		(void)setsid();
		pid = ceems_spawn_fork();
		if (pid == 0)
			exec_supervisor(&plan);
		if (write(pidpipe[1], &pid, sizeof(pid)) < 0) {
			/* The caller sees a short read. */
		}
		_exit(0);
	}
	(void)close(report[1]);
	report[1] = -1;
	(void)close(pidpipe[1]);
	pidpipe[1] = -1;
	err = wait_report(report[0], ceems_clock_monotonic_ms() + START_WAIT_MS);
	reap_middle(mid, ceems_clock_monotonic_ms() + START_WAIT_MS);
	if (err == 0 && read(pidpipe[0], &sv, sizeof(sv)) != (ssize_t)sizeof(sv))
		err = -EIO;
	if (err == 0 && sv < 0)
		err = -EAGAIN;	/* the middle process could not fork */
out:
	for (int i = 0; i < 2; i++) {
		if (report[i] >= 0)
			(void)close(report[i]);
		if (pidpipe[i] >= 0)
			(void)close(pidpipe[i]);
	}
	if (plan.null_fd >= 0)
		(void)close(plan.null_fd);
	if (plan.log_fd >= 0)
		(void)close(plan.log_fd);
	return err < 0 ? err : sv;
}
