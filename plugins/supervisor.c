/* supervisor.c - the process that keeps the node agent running on behalf
 * of slurmd.
 *
 * Why a process and not a thread: up to Slurm 24.05, slurm_spank_init in
 * slurmd context runs before slurmd daemonizes (fork, the parent exits),
 * so a thread started there dies with the pre-fork parent; and a fault in
 * measurement must never take slurmd down.  The supervisor is forked twice
 * (the middle process calls setsid and exits at once), so it is nobody's
 * child in slurmd, survives the daemonization and never becomes slurmd's
 * zombie.
 *
 * How it learns that slurmd is gone, even when slurmd crashed: slurmd
 * keeps the write end of a pipe (O_CLOEXEC, so slurmstepd and scripts do
 * not inherit it) whose read end the supervisor polls; end of file means
 * that no slurmd process is left.  It then sends the agent SIGTERM (the
 * agent checkpoints its jobs), waits, SIGKILLs it after STOP_TIMEOUT_S,
 * and exits.  The agent also gets SIGTERM if the supervisor itself dies
 * (PR_SET_PDEATHSIG).
 *
 * The supervisor is a fork of slurmd, a threaded program, that never
 * execs: only async-signal-safe calls may be made in it (no malloc, no
 * stdio, no printf).  Everything it needs is prepared in slurmd before the
 * fork (struct plan); its log lines are assembled by hand (struct line)
 * with UTC time stamps, because localtime is not async-signal-safe.
 * Every fork is _Fork where the C library has it (glibc 2.34): fork
 * runs the pthread_atfork handlers of whatever slurmd loaded, in a child
 * whose other threads vanished holding their locks; _Fork runs none.
 *
 * slurmd waits for nothing without a deadline: the start waits at most
 * START_WAIT_MS for the middle process, the stop at most its caller's
 * timeout. */
#include "config.h"

#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "supervisor.h"

/* Restart backoff: the first restart after a stable run waits
 * BACKOFF_MIN_S, each quick death after that doubles the wait up to
 * BACKOFF_MAX_S.  An agent that ran STABLE_S seconds ran stably.  An agent
 * that refuses to start because the previous one (of the slurmd before a
 * restart) still answers on the socket is retried the same way. */
#define BACKOFF_MIN_S 1
#define BACKOFF_MAX_S 60
#define STABLE_S 60

/* How long the agent gets to checkpoint and exit after SIGTERM. */
#define STOP_TIMEOUT_S 10

/* How long slurmd waits for the middle process to report and exit. */
#define START_WAIT_MS 5000

/* The agent's whole environment: nothing of slurmd's leaks into it. */
#define AGENT_ENV_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"

/* Everything the supervisor needs, prepared before the fork. */
static struct plan {
	char agent[PATH_MAX];
	char config[PATH_MAX];
	char log[PATH_MAX];
	char opt_config[3];
	char opt_interval[11];
	char interval[32];
	char env_path[sizeof(AGENT_ENV_PATH)];
	char *argv[6];
	char *envp[2];
	pid_t slurmd_pid;
	int lifeline;		/* read end */
	int done;		/* write end, held until the supervisor exits */
} plan;

static volatile sig_atomic_t got_child;
static volatile sig_atomic_t got_term;

/* ------------------------------------------------------------------ */
/* Log lines, built without stdio                                      */
/* ------------------------------------------------------------------ */

struct line {
	char buf[1024];
	size_t len;
};

static void
line_str(struct line *l, const char *s)
{
	while (*s != '\0' && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = *s++;
}

/* V in decimal, at least WIDTH digits (zero-padded). */
static void
line_num_pad(struct line *l, long long v, int width)
{
	char digits[24];
	int n = 0;
	unsigned long long u;

	if (v < 0) {
		line_str(l, "-");
		u = 0ULL - (unsigned long long)v;
	} else {
		u = (unsigned long long)v;
	}
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u != 0 && n < (int)sizeof(digits));
	while (n < width && n < (int)sizeof(digits))
		digits[n++] = '0';
	while (n > 0 && l->len < sizeof(l->buf) - 1)
		l->buf[l->len++] = digits[--n];
}

static void
line_num(struct line *l, long long v)
{
	line_num_pad(l, v, 1);
}

/* The current time in the agent's log format, in UTC:
 * 2026-11-22T10:00:00.123+0000.  The date comes from the day count with
 * the usual era arithmetic of the proleptic Gregorian calendar. */
static void
line_stamp(struct line *l)
{
	struct timespec ts;
	long long days, secs, era, y;
	unsigned doe, yoe, doy, mp, d, m;

	if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
		ts.tv_sec = 0, ts.tv_nsec = 0;
	days = ts.tv_sec / 86400;
	secs = ts.tv_sec % 86400;
	if (secs < 0) {
		secs += 86400;
		days--;
	}
	days += 719468;		/* from 1970-01-01 to 0000-03-01 */
	era = (days >= 0 ? days : days - 146096) / 146097;
	doe = (unsigned)(days - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	y = (long long)yoe + era * 400 + (m <= 2);

	line_num_pad(l, y, 4);
	line_str(l, "-");
	line_num_pad(l, m, 2);
	line_str(l, "-");
	line_num_pad(l, d, 2);
	line_str(l, "T");
	line_num_pad(l, secs / 3600, 2);
	line_str(l, ":");
	line_num_pad(l, secs / 60 % 60, 2);
	line_str(l, ":");
	line_num_pad(l, secs % 60, 2);
	line_str(l, ".");
	line_num_pad(l, ts.tv_nsec / 1000000, 3);
	line_str(l, "+0000");
}

static void
line_begin(struct line *l, const char *level)
{
	l->len = 0;
	line_stamp(l);
	line_str(l, " " CEEMS_SUPERVISOR_NAME "[");
	line_num(l, getpid());
	line_str(l, "]: ");
	line_str(l, level);
	line_str(l, ": ");
}

/* One write per line: the log is opened O_APPEND, lines stay whole. */
static void
line_end(struct line *l)
{
	l->buf[l->len++] = '\n';
	if (write(STDERR_FILENO, l->buf, l->len) < 0) {
		/* Nowhere left to say it. */
	}
}

/* strerror is not async-signal-safe: the names of the errors a fork or an
 * exec can meet, and the number otherwise. */
static void
line_errno(struct line *l, int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ ENOENT, "no such file (ENOENT)" },
		{ EACCES, "permission denied (EACCES)" },
		{ EPERM, "operation not permitted (EPERM)" },
		{ ENOEXEC, "not an executable (ENOEXEC)" },
		{ ENOTDIR, "not a directory (ENOTDIR)" },
		{ ELOOP, "too many symbolic links (ELOOP)" },
		{ ETXTBSY, "text file busy (ETXTBSY)" },
		{ ENOMEM, "out of memory (ENOMEM)" },
		{ EAGAIN, "resource temporarily unavailable (EAGAIN)" },
		{ EMFILE, "too many open files (EMFILE)" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].err == err) {
			line_str(l, names[i].name);
			return;
		}
	}
	line_str(l, "errno ");
	line_num(l, err);
}

static void
line_signal(struct line *l, int sig)
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

	line_str(l, "signal ");
	line_num(l, sig);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].sig == sig) {
			line_str(l, " (");
			line_str(l, names[i].name);
			line_str(l, ")");
			return;
		}
	}
}

/* "exited with status N" or "was killed by signal N (NAME)" */
static void
line_wait_status(struct line *l, int status)
{
	if (WIFEXITED(status)) {
		line_str(l, "exited with status ");
		line_num(l, WEXITSTATUS(status));
	} else if (WIFSIGNALED(status)) {
		line_str(l, "was killed by ");
		line_signal(l, WTERMSIG(status));
		if (WCOREDUMP(status))
			line_str(l, ", core dumped");
	} else {
		line_str(l, "ended with wait status ");
		line_num(l, status);
	}
}

/* ------------------------------------------------------------------ */
/* The supervisor process                                              */
/* ------------------------------------------------------------------ */

static long long
monotonic_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* fork without atfork handlers where possible (see the top comment). */
static pid_t
fork_plain(void)
{
#ifdef HAVE__FORK
	return _Fork();
#else
	return fork();
#endif
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

static void
on_signal(int sig)
{
	if (sig == SIGCHLD)
		got_child = 1;
	else
		got_term = 1;
}

static int
open_log(void)
{
	return open(plan.log, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW |
		    O_NOCTTY | O_CLOEXEC, 0640);
}

/* Put FD on TARGET, inheritable (dup2 onto itself would keep O_CLOEXEC). */
static void
move_fd(int fd, int target)
{
	if (fd == target)
		(void)fcntl(fd, F_SETFD, 0);
	else
		(void)dup2(fd, target);
}

static void
close_range_from(unsigned first, unsigned last)
{
	struct rlimit rl;

	if (first > last)
		return;
#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, last, 0) == 0)
		return;
#endif
	/* Kernels before 5.9: one close per possible descriptor. */
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1U << 20))
		rl.rlim_cur = 1U << 20;
	if (last >= rl.rlim_cur)
		last = (unsigned)rl.rlim_cur - 1;
	for (unsigned fd = first; fd <= last && fd >= first; fd++)
		(void)close((int)fd);
}

/* Close every descriptor slurmd had open (sockets, log files, plugin
 * files) but 0-2, KEEP_A and KEEP_B (both above 2). */
static void
close_inherited(int keep_a, int keep_b)
{
	unsigned lo = (unsigned)(keep_a < keep_b ? keep_a : keep_b);
	unsigned hi = (unsigned)(keep_a < keep_b ? keep_b : keep_a);

	close_range_from(3, lo - 1);
	close_range_from(lo + 1, hi - 1);
	close_range_from(hi + 1, ~0U);
}

/* Reopen the log (so that a rotated log file is followed at each start)
 * and start the agent.  Returns its pid, or -1. */
static pid_t
start_agent(void)
{
	struct line l;
	pid_t self = getpid(), pid;
	int fd, err;

	fd = open_log();
	if (fd >= 0) {
		move_fd(fd, STDERR_FILENO);
		if (fd != STDERR_FILENO)
			(void)close(fd);
	} else {
		err = errno;
		line_begin(&l, "warning");
		line_str(&l, "cannot reopen ");
		line_str(&l, plan.log);
		line_str(&l, ": ");
		line_errno(&l, err);
		line_end(&l);
	}

	pid = fork_plain();
	if (pid < 0) {
		err = errno;
		line_begin(&l, "error");
		line_str(&l, "cannot fork the agent: ");
		line_errno(&l, err);
		line_end(&l);
		return -1;
	}
	if (pid == 0) {
		struct sigaction dfl;
		sigset_t none;

		/* Ignored signals stay ignored across execve: reset them. */
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		sigemptyset(&dfl.sa_mask);
		(void)sigaction(SIGPIPE, &dfl, NULL);
		(void)sigaction(SIGHUP, &dfl, NULL);
		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);
		/* If the supervisor dies, the agent checkpoints and exits
		 * rather than run on unsupervised. */
		(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != self)
			_exit(126);
		execve(plan.argv[0], plan.argv, plan.envp);
		err = errno;
		line_begin(&l, "error");
		line_str(&l, "cannot execute the agent ");
		line_str(&l, plan.argv[0]);
		line_str(&l, ": ");
		line_errno(&l, err);
		line_end(&l);
		_exit(127);
	}
	line_begin(&l, "info");
	line_str(&l, "started the agent: pid ");
	line_num(&l, pid);
	line_str(&l, ", ");
	line_str(&l, plan.agent);
	line_str(&l, " -c ");
	line_str(&l, plan.config);
	line_end(&l);
	return pid;
}

/* SIGTERM, then SIGKILL after STOP_TIMEOUT_S; reap it. */
static void
stop_agent(pid_t agent, const sigset_t *wait_mask)
{
	long long deadline = monotonic_ms() + STOP_TIMEOUT_S * 1000LL;
	struct line l;
	int status;
	pid_t p;

	if (kill(agent, SIGTERM) < 0 && errno != ESRCH) {
		line_begin(&l, "warning");
		line_str(&l, "cannot send SIGTERM to the agent: ");
		line_errno(&l, errno);
		line_end(&l);
	}
	for (;;) {
		struct timespec ts;
		long long left;

		p = waitpid(agent, &status, WNOHANG);
		if (p == agent)
			break;
		if (p < 0 && errno != EINTR)
			return;		/* not our child any more */
		left = deadline - monotonic_ms();
		if (left <= 0) {
			line_begin(&l, "warning");
			line_str(&l, "the agent (pid ");
			line_num(&l, agent);
			line_str(&l, ") did not stop within ");
			line_num(&l, STOP_TIMEOUT_S);
			line_str(&l, " s of SIGTERM: sending SIGKILL");
			line_end(&l);
			(void)kill(agent, SIGKILL);
			/* Bounded too: a process stuck in the kernel
			 * (uninterruptible sleep) is left to init. */
			deadline = monotonic_ms() + 2000;
			while ((p = waitpid(agent, &status, WNOHANG)) == 0 &&
			       monotonic_ms() < deadline) {
				ts = ms_to_timespec(10);
				(void)ppoll(NULL, 0, &ts, wait_mask);
			}
			if (p != agent)
				return;
			break;
		}
		/* Woken early by SIGCHLD. */
		ts = ms_to_timespec(left);
		(void)ppoll(NULL, 0, &ts, wait_mask);
		got_child = 0;
	}
	line_begin(&l, "info");
	line_str(&l, "the agent (pid ");
	line_num(&l, agent);
	line_str(&l, ") ");
	line_wait_status(&l, status);
	line_end(&l);
}

/* The supervisor's life: start the agent, restart it when it dies, stop
 * it when slurmd is gone or on SIGTERM/SIGINT, then exit. */
static void __attribute__((noreturn))
supervise(void)
{
	struct sigaction sa;
	sigset_t handled, wait_mask;
	struct line l;
	pid_t agent = 0;
	long long started = 0, next_start, now;
	int backoff = BACKOFF_MIN_S, fd, null_fd, lifeline, done;
	const char *why = NULL;

	/* slurmd's handlers expect slurmd's threads and state. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++) {
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &sa, NULL);
	}

	/* Descriptors: ours above 2 (slurmd may have run with 0-2 closed),
	 * /dev/null on 0 and 1, the log on 2, nothing else of slurmd's. */
	lifeline = fcntl(plan.lifeline, F_DUPFD_CLOEXEC, 3);
	done = fcntl(plan.done, F_DUPFD_CLOEXEC, 3);
	if (lifeline < 0 || done < 0)
		_exit(1);
	(void)close(plan.lifeline);
	(void)close(plan.done);
	plan.lifeline = lifeline;
	plan.done = done;
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	fd = open_log();
	if (null_fd >= 0) {
		move_fd(null_fd, STDIN_FILENO);
		move_fd(null_fd, STDOUT_FILENO);
		move_fd(fd >= 0 ? fd : null_fd, STDERR_FILENO);
	} else if (fd >= 0) {
		move_fd(fd, STDERR_FILENO);
	}
	close_inherited(lifeline, done);

	(void)prctl(PR_SET_NAME, CEEMS_SUPERVISOR_NAME);
	if (chdir("/") < 0) {
		/* Nothing depends on the working directory. */
	}
	umask(022);

	/* Signals arrive only inside ppoll, so none is lost between a check
	 * and the wait. */
	sigemptyset(&handled);
	sigaddset(&handled, SIGCHLD);
	sigaddset(&handled, SIGTERM);
	sigaddset(&handled, SIGINT);
	(void)sigprocmask(SIG_BLOCK, &handled, &wait_mask);
	sigemptyset(&wait_mask);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_NOCLDSTOP;
	(void)sigaction(SIGCHLD, &sa, NULL);
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	(void)sigaction(SIGHUP, &sa, NULL);
	(void)sigaction(SIGPIPE, &sa, NULL);

	line_begin(&l, "info");
	line_str(&l, "supervising the node agent for slurmd pid ");
	line_num(&l, plan.slurmd_pid);
	line_end(&l);

	next_start = monotonic_ms();
	while (why == NULL) {
		struct pollfd pfd;
		struct timespec ts;
		int n, status;
		pid_t p;

		now = monotonic_ms();
		if (agent <= 0 && now >= next_start) {
			agent = start_agent();
			started = now;
			if (agent < 0) {
				agent = 0;
				next_start = now + backoff * 1000LL;
				backoff = backoff * 2 > BACKOFF_MAX_S ?
					BACKOFF_MAX_S : backoff * 2;
			}
		}

		pfd.fd = lifeline;
		pfd.events = POLLIN;
		pfd.revents = 0;
		ts = ms_to_timespec(next_start - now);
		n = ppoll(&pfd, 1, agent > 0 ? NULL : &ts, &wait_mask);
		if (got_term) {
			why = "SIGTERM or SIGINT";
			break;
		}
		if (n > 0 && pfd.revents != 0) {
			char buf[64];
			ssize_t r = read(lifeline, buf, sizeof(buf));

			/* Nobody writes on the pipe: only its end means
			 * anything. */
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN) ||
			    (pfd.revents & POLLNVAL) != 0)
				why = "slurmd is gone";
		}
		if (!got_child)
			continue;
		got_child = 0;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			long long ran_ms, delay;

			if (p != agent)
				continue;
			now = monotonic_ms();
			ran_ms = now - started;
			if (ran_ms >= STABLE_S * 1000LL)
				backoff = BACKOFF_MIN_S;
			delay = backoff;
			backoff = backoff * 2 > BACKOFF_MAX_S ?
				BACKOFF_MAX_S : backoff * 2;
			agent = 0;
			next_start = now + delay * 1000;

			line_begin(&l, "warning");
			line_str(&l, "the agent (pid ");
			line_num(&l, p);
			line_str(&l, ") ");
			line_wait_status(&l, status);
			line_str(&l, " after ");
			line_num(&l, ran_ms / 1000);
			line_str(&l, ".");
			line_num_pad(&l, ran_ms % 1000 / 100, 1);
			line_str(&l, " s; restarting it in ");
			line_num(&l, delay);
			line_str(&l, " s");
			line_end(&l);
		}
	}

	line_begin(&l, "info");
	line_str(&l, why);
	line_str(&l, agent > 0 ? ": stopping the agent" : ": exiting");
	line_end(&l);
	if (agent > 0)
		stop_agent(agent, &wait_mask);
	line_begin(&l, "info");
	line_str(&l, "supervisor exits");
	line_end(&l);
	_exit(0);
}

/* ------------------------------------------------------------------ */
/* slurmd's side                                                       */
/* ------------------------------------------------------------------ */

static int
copy_path(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (src[0] != '/' || n >= size)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

static void
close_pair(int fds[2])
{
	for (int i = 0; i < 2; i++) {
		if (fds[i] >= 0)
			(void)close(fds[i]);
		fds[i] = -1;
	}
}

/* Read the supervisor's pid from the middle process, waiting until
 * DEADLINE (monotonic ms) at most.  The bytes read, or -1. */
static ssize_t
read_report(int fd, int *value, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	long long left;
	int n;

	while ((left = deadline - monotonic_ms()) > 0) {
		n = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		return read(fd, value, sizeof(*value));
	}
	return -1;
}

/* Reap the middle process, waiting until DEADLINE at most (it exits at
 * once; a slurmd that reaps its children itself may have done it).  One
 * that has not exited by then (stopped, say) is killed and given one
 * more second, rather than left a zombie of slurmd. */
static void
reap_middle(pid_t mid, long long deadline)
{
	bool killed = false;
	pid_t p;

	while ((p = waitpid(mid, NULL, WNOHANG)) == 0 || (p < 0 && errno == EINTR)) {
		if (monotonic_ms() >= deadline) {
			if (killed)
				return;
			(void)kill(mid, SIGKILL);
			killed = true;
			deadline = monotonic_ms() + 1000;
		}
		(void)poll(NULL, 0, 5);
	}
}

int
ceems_supervisor_start(const struct ceems_supervisor_spec *spec,
		       struct ceems_supervisor *sv)
{
	int life[2] = { -1, -1 }, done[2] = { -1, -1 }, report[2] = { -1, -1 };
	int err = 0, value = -EIO;
	ssize_t n;
	pid_t mid;

	sv->pid = -1;
	sv->lifeline = -1;
	sv->done = -1;
	if (copy_path(plan.agent, sizeof(plan.agent), spec->agent_path) < 0 ||
	    copy_path(plan.config, sizeof(plan.config), spec->config_path) < 0 ||
	    copy_path(plan.log, sizeof(plan.log), spec->log_path) < 0)
		return -EINVAL;
	memcpy(plan.opt_config, "-c", 3);
	memcpy(plan.env_path, AGENT_ENV_PATH, sizeof(AGENT_ENV_PATH));
	plan.argv[0] = plan.agent;
	plan.argv[1] = plan.opt_config;
	plan.argv[2] = plan.config;
	plan.argv[3] = NULL;
	if (spec->interval != NULL) {
		if (strlen(spec->interval) >= sizeof(plan.interval))
			return -ENAMETOOLONG;
		memcpy(plan.opt_interval, "--interval", 11);
		memcpy(plan.interval, spec->interval, strlen(spec->interval) + 1);
		plan.argv[3] = plan.opt_interval;
		plan.argv[4] = plan.interval;
		plan.argv[5] = NULL;
	}
	plan.envp[0] = plan.env_path;
	plan.envp[1] = NULL;
	plan.slurmd_pid = getpid();

	if (pipe2(life, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0 ||
	    pipe2(report, O_CLOEXEC) < 0) {
		err = -errno;
		goto fail;
	}
	plan.lifeline = life[0];
	plan.done = done[1];

	mid = fork_plain();
	if (mid < 0) {
		err = -errno;
		goto fail;
	}
	if (mid == 0) {
		pid_t pid;

		(void)close(life[1]);
		(void)close(done[0]);
		(void)close(report[0]);
		(void)setsid();
		pid = fork_plain();
		if (pid == 0) {
			(void)close(report[1]);
			supervise();
		}
		value = pid < 0 ? -errno : (int)pid;
		if (write(report[1], &value, sizeof(value)) < 0) {
			/* slurmd sees a short read. */
		}
		_exit(0);
	}

	(void)close(life[0]);
	life[0] = -1;
	(void)close(done[1]);
	done[1] = -1;
	(void)close(report[1]);
	report[1] = -1;
	n = read_report(report[0], &value, monotonic_ms() + START_WAIT_MS);
	/* The middle process exits at once; reap it (slurmd may reap it
	 * first: then waitpid fails with ECHILD, which is fine). */
	reap_middle(mid, monotonic_ms() + START_WAIT_MS);
	close_pair(report);
	if (n != (ssize_t)sizeof(value)) {
		err = -EIO;
		goto fail;
	}
	if (value < 0) {
		err = value;
		goto fail;
	}
	sv->pid = value;
	sv->lifeline = life[1];
	sv->done = done[0];
	return 0;

fail:
	close_pair(life);
	close_pair(done);
	close_pair(report);
	return err;
}

int
ceems_supervisor_stop(struct ceems_supervisor *sv, int timeout_ms)
{
	long long deadline = monotonic_ms() + timeout_ms;
	int ret = -ETIMEDOUT;

	if (sv->lifeline >= 0) {
		(void)close(sv->lifeline);
		sv->lifeline = -1;
	}
	while (sv->done >= 0) {
		struct pollfd pfd = { .fd = sv->done, .events = POLLIN };
		long long left = deadline - monotonic_ms();
		int n;

		if (left <= 0)
			break;
		n = poll(&pfd, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0) {
			char c;

			/* The supervisor never writes: end of file is its
			 * exit. */
			if (read(sv->done, &c, 1) <= 0) {
				ret = 0;
				break;
			}
		}
		if (n < 0)
			break;
	}
	if (sv->done >= 0) {
		(void)close(sv->done);
		sv->done = -1;
	}
	return ret;
}
