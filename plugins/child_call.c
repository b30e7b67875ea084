/* child_call.c - a call that may block for long (an RPC to slurmctld,
 * which waits up to MessageTimeout when slurmctld is stopped or hung),
 * run in a forked child of slurmstepd, its answer read back through a
 * pipe until a deadline, the child killed at the deadline.
 *
 * Why a child process and not a thread: the step must never wait for
 * measurement (design invariant 1), so the step's end cannot join
 * a thread that is still in the RPC; and a thread left running cannot
 * be left behind either, since slurmstepd unloads the plugin (dlclose)
 * right after slurm_spank_exit and the thread would then run unmapped
 * code.  Keeping the plugin mapped (a dlopen of itself with
 * RTLD_NODELETE) would leave a thread inside libslurm while slurmstepd
 * exits and its libraries' destructors run.  A child has its own copy
 * of the plugin and of libslurm: killed at the deadline, nothing of it
 * is left in slurmstepd.  slurmstepd forks its tasks itself, and a
 * child of a threaded process may find a lock taken at the fork (in
 * libslurm, in the log): the deadline bounds that too, the answer is
 * then missing, as when slurmctld does not answer.
 *
 * The pid is only signalled when the pipe was still open at the
 * deadline, that is when the child was alive an instant before and
 * cannot have been reaped and its pid reused since (slurmstepd reaps
 * any child with wait3, so a child seen to have exited is not
 * signalled). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child_call.h"
#include "base/clock.h"
#include "base/fileio.h"

int
ceems_child_call_start(struct ceems_child_call *c, ceems_child_fn fn,
		       void *arg, size_t answer_size)
{
	int fds[2];
	pid_t pid;

	c->pid = -1;
	c->fd = -1;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid == 0) {
		void *answer = calloc(1, answer_size);

		/* The parent may have stopped reading: an error, not a
		 * signal.  No exit handler of slurmstepd runs here. */
		signal(SIGPIPE, SIG_IGN);
		close(fds[0]);
		if (answer != NULL)
			fn(arg, answer, answer_size, fds[1]);
		_exit(0);
	}
	close(fds[1]);
	c->pid = pid;
	c->fd = fds[0];
	return 0;
}

/* Read until SIZE bytes, the end of the pipe or DEADLINE (ms, the
 * monotonic clock).  Returns the bytes read; *EOF whether the pipe
 * ended. */
static size_t
read_until(int fd, char *buf, size_t size, int64_t deadline, bool *eof)
{
	size_t got = 0;

	*eof = false;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - ceems_clock_monotonic_ms();
		char sink[256];
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return got;
		if (got < size)
			n = read(fd, buf + got, size - got);
		else
			n = read(fd, sink, sizeof(sink));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			*eof = true;
			return got;
		}
		if (got < size)
			got += (size_t)n;
	}
}

int
ceems_child_call_finish(struct ceems_child_call *c, void *answer,
			size_t size, int wait_ms)
{
	char *buf;
	size_t got = 0;
	bool eof = false;
	int status;

	if (c->pid <= 0)
		return -ECHILD;
	buf = malloc(size);
	if (buf != NULL)
		got = read_until(c->fd, buf, size, ceems_clock_monotonic_ms() + wait_ms, &eof);
	/* Alive while the pipe is open: its pid is still its own. */
	if (!eof)
		kill(c->pid, SIGKILL);
	close(c->fd);
	/* Reaped here, or by slurmstepd's own wait (ECHILD); a child that
	 * does not die at once is left to it. */
	for (int i = 0; i < 20; i++) {
		pid_t r = waitpid(c->pid, &status, WNOHANG);

		if (r != 0)
			break;
		usleep(5000);
	}
	c->pid = -1;
	c->fd = -1;
	if (buf == NULL)
		return -ENOMEM;
	if (got == size)
		memcpy(answer, buf, size);
	free(buf);
	if (got == size)
		return 0;
	return eof ? -EIO : -ETIMEDOUT;
}

void
ceems_child_call_answer(int fd, const void *answer, size_t size)
{
	(void)ceems_fileio_write_all(fd, answer, size);
}
