/* test_agent_client.c - the agent client against a busy agent: an agent
 * that answers a connection EBUSY (its client slots taken by another
 * user) and one whose queue of connections is full.  The client must try
 * again within its deadline, send the same request again, and neither
 * block nor give up at the first refusal. */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "../tap.h"

#define MAX_FILLERS 4096

static char err[512];

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int
listen_on(const char *path, int backlog)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int lfd;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lfd, backlog) < 0) {
		printf("Bail out! cannot set up a test server on %s\n", path);
		exit(1);
	}
	return lfd;
}

/* Answer FD's request: ok when it is a release of job 42, else an error. */
static void
answer(int fd)
{
	static char in[CEEMS_AGENT_MSG_MAX + 1], out[512];
	static struct ceems_agent_request req;
	char why[256];
	ssize_t n = recv(fd, in, sizeof(in) - 1, 0);
	int len;

	if (n <= 0)
		return;
	in[n] = '\0';
	if (ceems_agent_proto_request_decode(in, (size_t)n, &req, why, sizeof(why)) == 0 &&
	    req.op == CEEMS_AGENT_OP_RELEASE && req.jobid == 42)
		len = ceems_agent_proto_reply_ok(NULL, out, sizeof(out));
	else
		len = ceems_agent_proto_reply_error(-EINVAL, "not the request sent",
					      out, sizeof(out));
	send(fd, out, (size_t)len, 0);
}

/* A server that refuses the first BUSY connections EBUSY without reading
 * them, as the agent does when it has no slot, then answers one. */
static pid_t
serve_busy(const char *path, int busy)
{
	int lfd = listen_on(path, 16);
	pid_t pid = fork();

	if (pid == 0) {
		char out[256];
		int n = ceems_agent_proto_reply_error(-EBUSY, "the agent has too many clients",
						out, sizeof(out));

		for (int i = 0; i < busy; i++) {
			int fd = accept(lfd, NULL, NULL);

			send(fd, out, (size_t)n, 0);
			close(fd);
		}
		int fd = accept(lfd, NULL, NULL);

		answer(fd);
		sleep(1);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void
test_busy_reply(const char *path)
{
	pid_t pid = serve_busy(path, 3);
	double t0 = now_s();
	int r = ceems_agent_client_release_job(path, 42, 2000, err, sizeof(err));

	is_int(r, 0, "three EBUSY answers, then the request goes through");
	ok(now_s() - t0 < 0.5, "within milliseconds (%.1f ms)", (now_s() - t0) * 1e3);
	reap(pid);

	pid = serve_busy(path, 1000000);
	t0 = now_s();
	r = ceems_agent_client_release_job(path, 42, 300, err, sizeof(err));
	is_int(r, -EBUSY, "an agent busy past the deadline: -EBUSY");
	ok(now_s() - t0 >= 0.29 && now_s() - t0 < 0.6,
	   "tried until the deadline and no longer (%.0f ms)", (now_s() - t0) * 1e3);
	reap(pid);
}

/* Connect to PATH until its queue is full; the number held in FDS. */
static int
fill_queue(const char *path, int *fds)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n = 0;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	while (n < MAX_FILLERS) {
		int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);

		if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
			close(fd);
			break;
		}
		fds[n++] = fd;
	}
	return n;
}

/* After DELAY_MS, accept every queued connection and answer the one that
 * sends a request (the fillers never do). */
static pid_t
serve_late(int lfd, int delay_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		static struct pollfd pfd[MAX_FILLERS + 8];
		nfds_t n = 0;

		poll(NULL, 0, delay_ms);
		fcntl(lfd, F_SETFL, O_NONBLOCK);
		for (;;) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0 && n < MAX_FILLERS + 8) {
				pfd[n].fd = fd;
				pfd[n++].events = POLLIN;
			}
			if (poll(pfd, n, 10) <= 0)
				continue;
			for (nfds_t i = 0; i < n; i++)
				if (pfd[i].revents & POLLIN) {
					answer(pfd[i].fd);
					sleep(1);
					_exit(0);
				}
		}
	}
	return pid;
}

static void
test_full_queue(const char *path)
{
	static int fds[MAX_FILLERS];
	int lfd = listen_on(path, 0);
	int nfill = fill_queue(path, fds);
	double t0 = now_s();
	pid_t pid;
	int r;

	ok(nfill > 0 && nfill < MAX_FILLERS, "the server's queue is full after %d "
	   "connections", nfill);
	r = ceems_agent_client_release_job(path, 42, 200, err, sizeof(err));
	is_int(r, -EBUSY, "a queue full until the deadline: -EBUSY, no blocking");
	ok(now_s() - t0 >= 0.19 && now_s() - t0 < 0.5, "after the deadline (%.0f ms)",
	   (now_s() - t0) * 1e3);

	pid = serve_late(lfd, 100);
	t0 = now_s();
	r = ceems_agent_client_release_job(path, 42, 2000, err, sizeof(err));
	is_int(r, 0, "the queue drains within the deadline: the request goes through");
	ok(now_s() - t0 >= 0.09 && now_s() - t0 < 1.0,
	   "once the server accepts (%.0f ms)", (now_s() - t0) * 1e3);
	reap(pid);
	for (int i = 0; i < nfill; i++)
		close(fds[i]);
	close(lfd);
}

int
main(void)
{
	char dir[] = "/tmp/ceems-client-XXXXXX";
	char path[96];

	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/agent.sock", dir);
	signal(SIGPIPE, SIG_IGN);
	test_busy_reply(path);
	test_full_queue(path);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
