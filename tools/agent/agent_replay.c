/* agent_replay.c - the spool's replay in a process of its own
 * (agent_replay.h): the agent's side (spawn, watch, respawn, stop) and
 * the process's ("ceems-agent --replay").
 *
 * The agent may have threads when it starts the process, so the child
 * of the fork does nothing but put its descriptors in place, set its
 * signal mask, its parent-death signal, no_new_privs and an empty
 * capability set, and execute the agent's program, all plain system
 * calls prepared before the fork; then the program starts afresh, with
 * one thread.  Its descriptors are 0-2 as the agent's (stderr: the log),
 * the configuration's text (a sealed memfd, never on the command line)
 * and the pipe, nothing else: the listening socket above all, held by a
 * replay process, would make the next agent believe another one still
 * listens.  The agent's Landlock confinement and no_new_privs go with
 * the exec (the kernel keeps them); agent_confine.c lets the agent
 * execute its own program and read the libraries it was loaded with. */
#include "config.h"

#include <sys/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent_replay.h"
#include "base/fileio.h"
#include "base/log.h"
#include "record/replay.h"
#include "base/clock.h"
#include "base/spawn.h"

/* A process that dies is started again after RESPAWN_MIN_NS, doubled up
 * to RESPAWN_MAX_NS while they keep dying within RESPAWN_STABLE_NS. */
#define RESPAWN_MIN_NS (5 * UINT64_C(1000000000))
#define RESPAWN_MAX_NS (600 * UINT64_C(1000000000))
#define RESPAWN_STABLE_NS (600 * UINT64_C(1000000000))
#define STOP_WAIT_MS 2000

/* In the child of the fork: the program to execute, on this descriptor
 * (close-on-exec), and where descriptors are parked first. */
#define EXE_FD (AGENT_REPLAY_ALIVE_FD + 1)
#define PARK_FD 10

/* The longest first delay the process takes (ms). */
#define DELAY_MAX_MS 3600000u

extern char **environ;

struct agent_replay {
	const struct ceems_config *config;
	int config_fd;		/* sealed memfd: the configuration's text */
	int exe_fd;		/* O_PATH: the agent's own program */
	pid_t pid;
	int fd;			/* read end of the process's pipe, -1 none */
	uint64_t started_ns;
	uint64_t respawn_ns;	/* 0: the last process lived long */
};

/* Everything the child of the fork uses, made before the fork. */
struct exec_plan {
	char *argv[5];
	char **envp;
	char delay[24];
	char node[CEEMS_NODE_NAME_MAX];
	sigset_t mask;
	struct __user_cap_header_struct cap_header;
	struct __user_cap_data_struct no_caps[_LINUX_CAPABILITY_U32S_3];
	pid_t parent;
	int config_fd, alive_fd, exe_fd;
};

static char arg0[] = "ceems-agent", arg_replay[] = "--replay";

/* The configuration's text in a memfd sealed against any change. */
static int
config_memfd(const char *text)
{
	int fd = memfd_create("ceems-agent-config", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int err;

	if (fd < 0)
		return -errno;
	err = ceems_fileio_write_all(fd, text, strlen(text));
	if (err < 0) {
		close(fd);
		return err;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
		  F_SEAL_SEAL) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

struct agent_replay *
agent_replay_new(const struct ceems_config *config, const char *config_text)
{
	struct agent_replay *rp = calloc(1, sizeof(*rp));
	int r;

	if (rp == NULL) {
		ceems_error("replay: out of memory");
		return NULL;
	}
	rp->config = config;
	rp->fd = -1;
	rp->exe_fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (rp->exe_fd < 0) {
		ceems_error("replay: cannot open the agent's own program "
			    "(/proc/self/exe): %s; is /proc mounted?", strerror(errno));
		free(rp);
		return NULL;
	}
	if ((r = config_memfd(config_text)) < 0) {
		ceems_error("replay: cannot keep the configuration for the replay "
			    "process (memfd): %s", strerror(-r));
		close(rp->exe_fd);
		free(rp);
		return NULL;
	}
	rp->config_fd = r;
	return rp;
}

pid_t
agent_replay_pid(const struct agent_replay *rp)
{
	return rp->pid;
}

/* ------------------------------------------------------------------ */
/* The agent's side                                                    */
/* ------------------------------------------------------------------ */

/* In the child of the fork: async-signal-safe calls only (the agent's
 * other threads may hold any lock), then the exec.  Exit status 126: a
 * descriptor could not be put in place; 127: the exec failed. */
__attribute__((noreturn)) static void
exec_replay(struct exec_plan *p)
{
	int config_fd, alive_fd, exe_fd;

	/* Parked above 0-5 first: dup2 onto a descriptor that is the
	 * source of a later one would lose it. */
	config_fd = fcntl(p->config_fd, F_DUPFD_CLOEXEC, PARK_FD);
	alive_fd = fcntl(p->alive_fd, F_DUPFD_CLOEXEC, PARK_FD);
	exe_fd = fcntl(p->exe_fd, F_DUPFD_CLOEXEC, PARK_FD);
	if (config_fd < 0 || alive_fd < 0 || exe_fd < 0 ||
	    dup2(config_fd, AGENT_REPLAY_CONFIG_FD) < 0 ||
	    dup2(alive_fd, AGENT_REPLAY_ALIVE_FD) < 0 ||
	    dup3(exe_fd, EXE_FD, O_CLOEXEC) < 0)
		_exit(126);
	ceems_spawn_close_from(EXE_FD + 1);
	/* SIGUSR1 (a wake) and SIGHUP stay blocked until the new program
	 * has its handler: their default action would end it.  SIGTERM
	 * ends it from the start. */
	(void)sigprocmask(SIG_SETMASK, &p->mask, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != p->parent)
		_exit(1);
	/* No capability crosses the exec, even as root. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_capset, &p->cap_header, p->no_caps) < 0)
		_exit(126);
	fexecve(EXE_FD, p->argv, p->envp);
	_exit(127);
}

int
agent_replay_spawn(struct agent_replay *rp, uint64_t first_delay_ns)
{
	static struct exec_plan plan;
	uint64_t delay_ms = first_delay_ns / 1000000u;
	pid_t pid;
	int p[2];

	if (rp->pid > 0)
		return -EBUSY;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	memset(&plan, 0, sizeof(plan));
	snprintf(plan.delay, sizeof(plan.delay), "%llu", (unsigned long long)
		 (delay_ms > DELAY_MAX_MS ? DELAY_MAX_MS : delay_ms));
	plan.argv[0] = arg0;
	plan.argv[1] = arg_replay;
	plan.argv[2] = plan.delay;
	/* The agent's --node: the replay expands the same paths. */
	plan.argv[3] = rp->config->node[0] != '\0' ? plan.node : NULL;
	plan.argv[4] = NULL;
	snprintf(plan.node, sizeof(plan.node), "%s", rp->config->node);
	plan.envp = environ;
	sigemptyset(&plan.mask);
	sigaddset(&plan.mask, SIGUSR1);
	sigaddset(&plan.mask, SIGHUP);
	plan.cap_header.version = _LINUX_CAPABILITY_VERSION_3;
	plan.parent = getpid();
	plan.config_fd = rp->config_fd;
	plan.alive_fd = p[1];
	plan.exe_fd = rp->exe_fd;
	pid = ceems_spawn_fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0)
		exec_replay(&plan);
	close(p[1]);
	rp->pid = pid;
	rp->fd = p[0];
	rp->started_ns = ceems_clock_monotonic_ns();
	ceems_debug("replay of the spool in process %d", (int)pid);
	return rp->fd;
}

/* Collect the ended process (it has closed its pipe, so it is exiting). */
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
	else if (r == rp->pid && WIFEXITED(status) && WEXITSTATUS(status) >= 126)
		ceems_warning("replay process %d could not execute the agent's "
			      "program (status %d): is its file still there and "
			      "executable?", (int)rp->pid, WEXITSTATUS(status));
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
	/* End of file (the process writes nothing): it has ended.  It is
	 * past its exit's file closing, so waiting for it is short. */
	collect(rp, 1000);
	if (ceems_clock_monotonic_ns() - rp->started_ns >= RESPAWN_STABLE_NS || rp->respawn_ns == 0)
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
		/* Bounded: the process dies on SIGTERM even inside libpq. */
		(void)poll(&pfd, 1, STOP_WAIT_MS);
		collect(rp, 100);
	}
	close(rp->config_fd);
	close(rp->exe_fd);
	free(rp);
}

void
agent_replay_wake(struct agent_replay *rp)
{
	if (rp != NULL && rp->pid > 0)
		kill(rp->pid, SIGUSR1);
}

/* ------------------------------------------------------------------ */
/* The replay process                                                  */
/* ------------------------------------------------------------------ */

/* What the agent gave: its configuration's text on CONFIG_FD (a
 * regular file), its pipe on ALIVE_FD. */
static bool
given_by_agent(void)
{
	struct stat config_st, alive_st;

	return fstat(AGENT_REPLAY_CONFIG_FD, &config_st) == 0 &&
	       S_ISREG(config_st.st_mode) &&
	       config_st.st_size < CEEMS_CONFIG_TEXT_MAX &&
	       fstat(AGENT_REPLAY_ALIVE_FD, &alive_st) == 0 &&
	       S_ISFIFO(alive_st.st_mode);
}

int
agent_replay_load(int argc, char **argv, struct ceems_config *config,
		  uint64_t *first_delay_ns)
{
	char err[512], *text, *end;
	unsigned long long ms;
	ssize_t n;
	int r;

	if ((argc != 2 && argc != 3) || !given_by_agent()) {
		ceems_error("--replay is the agent's own replay process, started "
			    "by the agent with the descriptors it needs; it is not "
			    "for use by hand");
		return -1;
	}
	errno = 0;
	ms = strtoull(argv[1], &end, 10);
	if (errno != 0 || end == argv[1] || *end != '\0' || ms > DELAY_MAX_MS) {
		ceems_error("--replay: the first delay '%s' is not a number of "
			    "milliseconds", argv[1]);
		return -1;
	}
	*first_delay_ns = (uint64_t)ms * 1000000u;
	/* ps and the log name it as the agent, not the descriptor the
	 * program was executed from. */
	(void)prctl(PR_SET_NAME, arg0);
	if ((text = malloc(CEEMS_CONFIG_TEXT_MAX)) == NULL) {
		ceems_error("replay: out of memory");
		return -1;
	}
	n = ceems_fileio_pread_text(AGENT_REPLAY_CONFIG_FD, text, CEEMS_CONFIG_TEXT_MAX);
	ceems_conf_defaults(config);
	if (n < 0 || (size_t)n != strlen(text)) {
		ceems_error("replay: cannot read the agent's configuration: %s",
			    n < 0 ? strerror((int)-n) : "NUL byte");
		free(text);
		return -1;
	}
	r = ceems_conf_parse(config, text, "the agent's configuration", err,
			       sizeof(err));
	if (r == 0)
		r = ceems_conf_expand_node(config, argc == 3 ? argv[2] : NULL,
					   err, sizeof(err));
	free(text);
	(void)close(AGENT_REPLAY_CONFIG_FD);
	if (r < 0) {
		ceems_error("replay: %s", err);
		return -1;
	}
	return 0;
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

void
agent_replay_main(const struct ceems_config *config, uint64_t first_delay_ns)
{
	struct ceems_replay *replay;
	struct sigaction wake;
	sigset_t none;
	int pdeath = 0;
	uint64_t delay = first_delay_ns;

	/* SIGTERM ends it, even inside libpq; SIGHUP is for the agent. */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* No SA_RESTART: the wake must cut the sleep short (libpq retries
	 * its own waits after EINTR). */
	memset(&wake, 0, sizeof(wake));
	wake.sa_handler = on_wake;
	sigaction(SIGUSR1, &wake, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* Set before the exec, which keeps it: the process dies with the
	 * agent. */
	if (prctl(PR_GET_PDEATHSIG, &pdeath) < 0 || pdeath != SIGTERM) {
		ceems_error("replay: the exec lost the parent-death signal: "
			    "stopping rather than outlive the agent");
		exit(1);
	}
	/* The replay reads and removes the spool's files as their owner
	 * and talks to PostgreSQL: none of the agent's capabilities (none
	 * crossed the exec; this holds when the agent held none to drop). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || drop_all_caps() < 0) {
		ceems_error("replay: cannot drop every capability: %s",
			    strerror(errno));
		exit(1);
	}
	replay = ceems_replay_new(config, NULL);
	if (replay == NULL) {
		ceems_error("replay: out of memory");
		exit(1);
	}
	for (bool ok = true;;) {
		struct ceems_replay_stats stats;

		sleep_ns(delay, ok);
		delay = ceems_replay_run(replay, &stats);
		ok = stats.error == 0;
	}
}
