/* agent_supervise.c - "ceems-agent --supervise": keep the node agent
 * running.
 *
 * The slurmd-side plugin (or an admin's ceems-agent --start) fork+execs
 * this supervisor once per node, detached and in a session of its own
 * (lib/client/agent_launch.c); it holds the lock of STATE_DIR/agent.pid and
 * keeps its pid and its agent's there.  It does not follow slurmd: a
 * slurmd stopped, restarted or reconfigured finds it running and adopts
 * it, so measurement goes on across slurmd restarts and upgrades.  It
 * stops the agent and exits on SIGTERM or SIGINT (ceems-agent --stop);
 * on SIGHUP (ceems-agent --restart) it stops the agent and executes the
 * agent program anew as supervisor, handing the lock on, so that both
 * pick up a new version.
 *
 * The agent is exec'ed anew at every start, with a clean environment
 * (PATH alone), /dev/null on 0 and 1, the log on 2, and no descriptor of
 * the supervisor's (the lock is close-on-exec: an orphaned agent cannot
 * keep it).  It gets SIGTERM if the supervisor dies (PR_SET_PDEATHSIG),
 * so it never runs unsupervised.  A quick death is retried with a
 * growing backoff; the log is reopened at each start (rotation). */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/agent_launch.h"
#include "agent_helper.h"
#include "agent_supervise.h"
#include "base/clock.h"
#include "base/conf.h"
#include "base/spawn.h"
#include "base/log.h"

/* Restart backoff: the first restart after a stable run waits
 * BACKOFF_MIN_S, each quick death after that doubles the wait up to
 * BACKOFF_MAX_S.  An agent that ran STABLE_S seconds ran stably.  An agent
 * that refuses to start because another one answers on the socket is
 * retried the same way. */
#define BACKOFF_MIN_S 1
#define BACKOFF_MAX_S 60
#define STABLE_S 60

/* How long the agent gets to checkpoint and exit after SIGTERM. */
#define STOP_TIMEOUT_S 10

/* The programs' whole environment: nothing of the caller's leaks in. */
static char clean_env_path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";

/* The supervisor's arguments, writable (execve's argv is char *). */
static struct {
	char agent[PATH_MAX], config[PATH_MAX], interval[32], log[PATH_MAX];
	char node[CEEMS_NODE_NAME_MAX];
	char lock_fd[16];
} args;

static char opt_supervise[] = "--supervise", opt_agent[] = "--agent",
	    opt_config[] = "-c", opt_interval[] = "--interval",
	    opt_log[] = "--log", opt_lock_fd[] = "--lock-fd",
	    opt_node[] = "--node";

static volatile sig_atomic_t got_child, got_term, got_hup;

/* ceems-jobinfo, run beside the agent (agent_helper.c). */
static struct agent_helper helper;

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_child = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

static struct timespec
ms_to_timespec(long long ms)
{
	struct timespec ts;

	if (ms < 0)
		ms = 0;
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	return ts;
}

/* Put the log on stderr (again: it may have been rotated). */
static void
reopen_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
		      O_NOCTTY | O_CLOEXEC, 0640);

	if (fd < 0) {
		ceems_warning("cannot reopen the log %s: %s; writing on where it was",
			      path, strerror(errno));
		return;
	}
	if (fd != STDERR_FILENO) {
		(void)dup2(fd, STDERR_FILENO);
		(void)close(fd);
	} else {
		(void)fcntl(fd, F_SETFD, 0);
	}
}

static const char *
signal_name(int sig)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = {
		{ SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" }, { SIGQUIT, "SIGQUIT" },
		{ SIGILL, "SIGILL" }, { SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" },
		{ SIGFPE, "SIGFPE" }, { SIGKILL, "SIGKILL" }, { SIGSEGV, "SIGSEGV" },
		{ SIGPIPE, "SIGPIPE" }, { SIGTERM, "SIGTERM" }, { SIGXCPU, "SIGXCPU" },
		{ SIGSYS, "SIGSYS" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	return "?";
}

/* "exited with status N" or "was killed by signal N (NAME)" */
static void
describe_status(int status, char *buf, size_t size)
{
	if (WIFEXITED(status))
		snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "was killed by signal %d (%s)%s",
			 WTERMSIG(status), signal_name(WTERMSIG(status)),
			 WCOREDUMP(status) ? ", core dumped" : "");
	else
		snprintf(buf, size, "ended with wait status %d", status);
}

/* The agent's argv: AGENT -c CONFIG [--interval INTERVAL] [--node NODE],
 * NULL after; how many, the NULL not counted (at most 7). */
static int
agent_argv(const struct agent_supervise_spec *spec, char **argv)
{
	int i = 0;

	argv[i++] = args.agent;
	argv[i++] = opt_config;
	argv[i++] = args.config;
	if (spec->interval != NULL) {
		argv[i++] = opt_interval;
		argv[i++] = args.interval;
	}
	if (spec->node != NULL) {
		argv[i++] = opt_node;
		argv[i++] = args.node;
	}
	argv[i] = NULL;
	return i;
}

static pid_t
start_agent(const struct agent_supervise_spec *spec)
{
	char *argv[8], *envp[] = { clean_env_path, NULL };
	pid_t self = getpid(), pid;

	reopen_log(spec->log);
	agent_argv(spec, argv);
	/* A plain fork: the supervisor never starts a thread nor loads a
	 * library that does (it links libceems but opens no source), so
	 * its child may log if the exec fails. */
	pid = fork();
	if (pid < 0) {
		ceems_error("cannot fork the agent: %s", strerror(errno));
		return -1;
	}
	if (pid == 0)
		ceems_spawn_exec_supervised(self, argv, envp, "the agent");
	ceems_info("started the agent: pid %d, %s -c %s%s%s", (int)pid,
		   spec->agent, spec->config, spec->interval != NULL ?
		   " --interval " : "", spec->interval != NULL ? spec->interval : "");
	return pid;
}

/* SIGTERM, then SIGKILL after STOP_TIMEOUT_S; reap it. */
static void
stop_agent(pid_t agent, const sigset_t *wait_mask)
{
	long long deadline = ceems_clock_monotonic_ms() + STOP_TIMEOUT_S * 1000LL;
	bool killed = false;
	char how[96];
	int status;
	pid_t p;

	if (kill(agent, SIGTERM) < 0 && errno != ESRCH)
		ceems_warning("cannot send SIGTERM to the agent: %s", strerror(errno));
	while ((p = waitpid(agent, &status, WNOHANG)) != agent) {
		struct timespec ts;
		long long left = deadline - ceems_clock_monotonic_ms();

		if (p < 0 && errno != EINTR)
			return;		/* not our child any more */
		if (left <= 0 && killed)
			return;		/* stuck in the kernel: left to init */
		if (left <= 0) {
			ceems_warning("the agent (pid %d) did not stop within %d s of SIGTERM: sending SIGKILL",
				      (int)agent, STOP_TIMEOUT_S);
			(void)kill(agent, SIGKILL);
			killed = true;
			deadline = ceems_clock_monotonic_ms() + 2000;
			continue;
		}
		/* Woken early by SIGCHLD. */
		ts = ms_to_timespec(left < 50 ? left : 50);
		(void)ppoll(NULL, 0, &ts, wait_mask);
		got_child = 0;
	}
	describe_status(status, how, sizeof(how));
	ceems_info("the agent (pid %d) %s", (int)agent, how);
}

/* Signals arrive only inside ppoll (WAIT_MASK), so none is lost between
 * a check and the wait. */
static void
setup_signals(sigset_t *wait_mask)
{
	struct sigaction sa;
	sigset_t handled;

	sigemptyset(&handled);
	sigaddset(&handled, SIGCHLD);
	sigaddset(&handled, SIGTERM);
	sigaddset(&handled, SIGINT);
	sigaddset(&handled, SIGHUP);
	(void)sigprocmask(SIG_BLOCK, &handled, NULL);
	sigemptyset(wait_mask);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	(void)sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	(void)sigaction(SIGPIPE, &sa, NULL);
}

/* SIGHUP: the agent is stopped; run the agent program as supervisor
 * anew (a new version, if installed), the lock handed on.  Returns only
 * if that exec failed. */
static void
reexec(const struct agent_supervise_spec *spec, int lock_fd)
{
	char *argv[16], *envp[] = { clean_env_path, helper.envp[1], NULL };
	sigset_t none;
	int i = 0;

	snprintf(args.lock_fd, sizeof(args.lock_fd), "%d", lock_fd);
	argv[i++] = args.agent;
	argv[i++] = opt_supervise;
	argv[i++] = opt_agent;
	i += agent_argv(spec, argv + i);	/* --agent's, then the agent's */
	argv[i++] = opt_log;
	argv[i++] = args.log;
	argv[i++] = opt_lock_fd;
	argv[i++] = args.lock_fd;
	argv[i] = NULL;
	ceems_info("SIGHUP: executing %s --supervise anew", spec->agent);
	(void)fcntl(lock_fd, F_SETFD, 0);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	execve(argv[0], argv, envp);
	ceems_error("cannot execute %s: %s; supervising on as before",
		    argv[0], strerror(errno));
	(void)fcntl(lock_fd, F_SETFD, FD_CLOEXEC);
}

/* Reap what died; when it is the agent, plan its restart. */
static void
reap(pid_t *agent, long long started, long long *next_start, int *backoff)
{
	char how[96];
	int status;
	pid_t p;

	while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
		long long now, ran_ms, delay;

		now = ceems_clock_monotonic_ms();
		if (agent_helper_reaped(&helper, p, status, now) || p != *agent)
			continue;
		ran_ms = now - started;
		if (ran_ms >= STABLE_S * 1000LL)
			*backoff = BACKOFF_MIN_S;
		delay = *backoff;
		*backoff = *backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : *backoff * 2;
		*agent = 0;
		*next_start = now + delay * 1000;
		describe_status(status, how, sizeof(how));
		ceems_warning("the agent (pid %d) %s after %lld.%lld s; restarting it in %lld s",
			      (int)p, how, ran_ms / 1000, ran_ms % 1000 / 100, delay);
	}
}

/* The lock: handed over by whoever exec'ed us, or taken here. */
static int
hold_lock(const struct agent_supervise_spec *spec)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	pid_t sv, agent;
	int fd = spec->lock_fd;

	if (fd >= 0) {
		/* It must be ours already: a second F_OFD_SETLK on the same
		 * open file description succeeds, any other fails. */
		if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
			ceems_error("--lock-fd %d is not a lock this process can hold: %s",
				    fd, strerror(errno));
			return -1;
		}
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	fd = ceems_agent_launch_lock_take(spec->pid_path);
	if (fd == -EWOULDBLOCK) {
		(void)ceems_agent_launch_lock_probe(spec->pid_path, &sv, &agent);
		ceems_error("a supervisor (pid %d) runs already for %s: see ceems-agent --stop and --restart",
			    (int)sv, spec->pid_path);
		return -1;
	}
	if (fd < 0)
		ceems_error("cannot lock %s: %s", spec->pid_path,
			    ceems_agent_launch_lock_strerror(fd));
	return fd;
}

static void
write_pids(int lock_fd, const char *path, pid_t agent)
{
	int r = ceems_agent_launch_lock_write(lock_fd, getpid(), agent);

	if (r < 0)
		ceems_warning("cannot write %s: %s; ceems-agent --stop and --restart cannot find this supervisor",
			      path, strerror(-r));
}

static int
copy_arg(char *dst, size_t size, const char *src)
{
	int n = snprintf(dst, size, "%s", src);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static int
copy_args(const struct agent_supervise_spec *spec)
{
	if (copy_arg(args.agent, sizeof(args.agent), spec->agent) < 0 ||
	    copy_arg(args.config, sizeof(args.config), spec->config) < 0 ||
	    copy_arg(args.log, sizeof(args.log), spec->log) < 0)
		return -1;
	if (spec->interval != NULL &&
	    copy_arg(args.interval, sizeof(args.interval), spec->interval) < 0)
		return -1;
	if (spec->node != NULL &&
	    copy_arg(args.node, sizeof(args.node), spec->node) < 0)
		return -1;
	return 0;
}

/* How long the loop may sleep: until the agent's restart (none while
 * it runs) or the helper's, whichever comes first. */
static long long
wait_ms(pid_t agent, long long next_start, long long now)
{
	long long ms = agent > 0 ? -1 : next_start - now;
	long long helper_ms = agent_helper_due_ms(&helper, now);

	if (helper_ms >= 0 && (ms < 0 || helper_ms < ms))
		ms = helper_ms;
	return ms < 0 ? 0 : ms;
}

int
agent_supervise(const struct agent_supervise_spec *spec)
{
	sigset_t wait_mask;
	pid_t agent = 0;
	long long started = 0, next_start;
	int backoff = BACKOFF_MIN_S, lock_fd, null_fd;

	(void)prctl(PR_SET_NAME, CEEMS_SUPERVISOR_NAME);
	reopen_log(spec->log);
	if (copy_args(spec) < 0) {
		ceems_error("an argument of --supervise is too long");
		return 1;
	}
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null_fd >= 0) {
		(void)dup2(null_fd, STDIN_FILENO);
		(void)dup2(null_fd, STDOUT_FILENO);
		(void)close(null_fd);
	}
	if ((lock_fd = hold_lock(spec)) < 0)
		return 1;
	setup_signals(&wait_mask);
	agent_helper_init(&helper, args.agent, args.config,
			  spec->node != NULL ? args.node : NULL, clean_env_path);
	write_pids(lock_fd, spec->pid_path, 0);
	ceems_info("supervising the node agent %s (lock %s)", spec->agent,
		   spec->pid_path);

	next_start = ceems_clock_monotonic_ms();
	while (!got_term) {
		long long now = ceems_clock_monotonic_ms();
		struct timespec ts;

		if (agent <= 0 && now >= next_start) {
			agent = start_agent(spec);
			started = now;
			if (agent < 0) {
				agent = 0;
				next_start = now + backoff * 1000LL;
				backoff = backoff * 2 > BACKOFF_MAX_S ?
					BACKOFF_MAX_S : backoff * 2;
			}
			write_pids(lock_fd, spec->pid_path, agent);
		}
		agent_helper_tick(&helper, now);
		ts = ms_to_timespec(wait_ms(agent, next_start, now));
		(void)ppoll(NULL, 0, agent > 0 &&
			    agent_helper_due_ms(&helper, now) < 0 ? NULL : &ts,
			    &wait_mask);
		if (got_child) {
			got_child = 0;
			reap(&agent, started, &next_start, &backoff);
			if (agent == 0)
				write_pids(lock_fd, spec->pid_path, 0);
		}
		if (got_hup && !got_term) {
			got_hup = 0;
			if (agent > 0)
				stop_agent(agent, &wait_mask);
			agent_helper_stop(&helper, &wait_mask);
			agent = 0;
			/* A SIGTERM during the stop wins: no new start. */
			if (!got_term)
				reexec(spec, lock_fd);
			next_start = ceems_clock_monotonic_ms();
		}
	}
	ceems_info("SIGTERM or SIGINT: %s", agent > 0 ? "stopping the agent" : "exiting");
	if (agent > 0)
		stop_agent(agent, &wait_mask);
	agent_helper_stop(&helper, &wait_mask);
	write_pids(lock_fd, spec->pid_path, 0);
	ceems_info("supervisor exits");
	return 0;
}
