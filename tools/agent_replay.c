/* agent_replay.c - the spool's replay in a child process of the agent
 * (agent_replay.h).  The agent is single-threaded, so the forked child
 * may call anything; it first closes every descriptor it inherited but
 * its pipe (the listening socket above all: held by a child, it would
 * make the next agent believe another one still listens) and dies with
 * its parent. */
#include "config.h"

#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_replay.h"
#include "log.h"
#include "replay.h"

/* A child that dies is started again after RESPAWN_MIN_NS, doubled up to
 * RESPAWN_MAX_NS while they keep dying within RESPAWN_STABLE_NS. */
#define RESPAWN_MIN_NS (5 * UINT64_C(1000000000))
#define RESPAWN_MAX_NS (600 * UINT64_C(1000000000))
#define RESPAWN_STABLE_NS (600 * UINT64_C(1000000000))
#define STOP_WAIT_MS 2000

struct agent_replay {
	const struct ceems_config *config;
	pid_t pid;
	int fd;			/* read end of the child's pipe, -1 none */
	uint64_t started_ns;
	uint64_t respawn_ns;	/* 0: the last child lived long */
};

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct agent_replay *
agent_replay_new(const struct ceems_config *config)
{
	struct agent_replay *rp = calloc(1, sizeof(*rp));

	if (rp == NULL)
		return NULL;
	rp->config = config;
	rp->fd = -1;
	return rp;
}

pid_t
agent_replay_pid(const struct agent_replay *rp)
{
	return rp->pid;
}

/* Close every descriptor from 3 up but KEEP (0-2 stay whatever KEEP). */
static void
close_inherited(int keep)
{
#ifdef SYS_close_range
	unsigned first = 3;

	if (keep >= 3) {
		if (keep > 3 &&
		    syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u) != 0)
			goto by_hand;
		first = (unsigned)keep + 1;
	}
	if (syscall(SYS_close_range, first, ~0u, 0u) == 0)
		return;
by_hand:
#endif
	{
		long max = sysconf(_SC_OPEN_MAX);

		if (max < 0 || max > 1048576)
			max = 1048576;
		for (int fd = 3; fd < max; fd++)
			if (fd != keep)
				close(fd);
	}
}

/* Set by SIGUSR1: the agent wrote a record (agent_replay_wake). */
static volatile sig_atomic_t woken;

static void
on_wake(int sig)
{
	(void)sig;
	woken = 1;
}

/* Sleep NS, less when woken (and WAKE_OK: after a failure, the backoff
 * stands, so that a database that is down is not hammered per job). */
static void
sleep_ns(uint64_t ns, bool wake_ok)
{
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (!(wake_ok && woken) && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	woken = 0;
}

static int
drop_all_caps(void)
{
	cap_t none = cap_init();	/* every set empty */
	int r;

	if (none == NULL)
		return -1;
	r = cap_set_proc(none);
	cap_free(none);
	return r;
}

__attribute__((noreturn)) static void
child_main(const struct ceems_config *config, int keep_fd, pid_t parent,
	   uint64_t first_delay_ns)
{
	struct ceems_replay *replay;
	struct sigaction wake;
	sigset_t none;
	uint64_t delay = first_delay_ns;

	close_inherited(keep_fd);
	/* The agent blocks its signals for its signalfd: the child takes
	 * the default actions (SIGTERM ends it, even inside libpq). */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_IGN);
	/* No SA_RESTART: the wake must cut the sleep short (libpq retries
	 * its own waits after EINTR). */
	memset(&wake, 0, sizeof(wake));
	wake.sa_handler = on_wake;
	sigaction(SIGUSR1, &wake, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
		_exit(1);
	/* The replay reads and removes the spool's files as their owner
	 * and talks to PostgreSQL: none of the agent's capabilities. */
	if (drop_all_caps() < 0) {
		ceems_error("replay: cannot drop the agent's capabilities: %s",
			    strerror(errno));
		_exit(1);
	}
	replay = ceems_replay_new(config, NULL);
	if (replay == NULL) {
		ceems_error("replay: out of memory");
		_exit(1);
	}
	for (bool ok = true;;) {
		struct ceems_replay_stats stats;

		sleep_ns(delay, ok);
		delay = ceems_replay_run(replay, &stats);
		ok = stats.error == 0;
	}
}

int
agent_replay_spawn(struct agent_replay *rp, uint64_t first_delay_ns)
{
	pid_t parent = getpid(), pid;
	int p[2];

	if (rp->pid > 0)
		return -EBUSY;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0)
		child_main(rp->config, p[1], parent, first_delay_ns);
	close(p[1]);
	rp->pid = pid;
	rp->fd = p[0];
	rp->started_ns = mono_ns();
	ceems_debug("replay of the spool in process %d", (int)pid);
	return rp->fd;
}

/* Collect the ended child (it has closed its pipe, so it is exiting). */
static void
collect(struct agent_replay *rp, int wait_ms)
{
	int status = 0;
	pid_t r;

	for (int waited = 0;; waited += 10) {
		r = waitpid(rp->pid, &status, WNOHANG);
		if (r != 0 || waited >= wait_ms)
			break;
		poll(NULL, 0, 10);
	}
	if (r == 0) {
		kill(rp->pid, SIGKILL);
		r = waitpid(rp->pid, &status, 0);
	}
	if (r == rp->pid && WIFSIGNALED(status) && WTERMSIG(status) != SIGTERM)
		ceems_warning("replay process %d killed by signal %d",
			      (int)rp->pid, WTERMSIG(status));
	else if (r == rp->pid && WIFEXITED(status) && WEXITSTATUS(status) != 0)
		ceems_warning("replay process %d exited with status %d",
			      (int)rp->pid, WEXITSTATUS(status));
	close(rp->fd);
	rp->fd = -1;
	rp->pid = 0;
}

uint64_t
agent_replay_on_event(struct agent_replay *rp)
{
	char c;
	ssize_t n;

	if (rp->pid <= 0)
		return RESPAWN_MIN_NS;
	n = read(rp->fd, &c, 1);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	/* End of file (the child writes nothing): it has ended.  It is
	 * past its exit's file closing, so waiting for it is short. */
	collect(rp, 1000);
	if (mono_ns() - rp->started_ns >= RESPAWN_STABLE_NS || rp->respawn_ns == 0)
		rp->respawn_ns = RESPAWN_MIN_NS;
	else if (rp->respawn_ns < RESPAWN_MAX_NS / 2)
		rp->respawn_ns *= 2;
	else
		rp->respawn_ns = RESPAWN_MAX_NS;
	ceems_warning("the spool's replay process ended: a new one in %.0f s",
		      (double)rp->respawn_ns / 1e9);
	return rp->respawn_ns;
}

void
agent_replay_free(struct agent_replay *rp)
{
	struct pollfd pfd;

	if (rp == NULL)
		return;
	if (rp->pid > 0) {
		kill(rp->pid, SIGTERM);
		pfd.fd = rp->fd;
		pfd.events = POLLIN;
		/* Bounded: the child dies on SIGTERM even inside libpq. */
		(void)poll(&pfd, 1, STOP_WAIT_MS);
		collect(rp, 100);
	}
	free(rp);
}

void
agent_replay_wake(struct agent_replay *rp)
{
	if (rp != NULL && rp->pid > 0)
		kill(rp->pid, SIGUSR1);
}
