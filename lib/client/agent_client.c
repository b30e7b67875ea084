/* agent_client.c - the client side of the node agent's socket: one
 * request, one reply, bounded in time.  It runs inside slurmstepd at job
 * start and end, so it must never hang or signal: the socket is
 * non-blocking, every wait is a poll against one overall deadline, and an
 * absent agent (no socket file, nobody listening) fails at once
 * (design invariant 1: added latency stays in milliseconds).
 *
 * A busy agent is not an absent one: a connect that finds the agent's
 * queue full (EAGAIN), or a connection the agent answers EBUSY (its
 * client slots taken, perhaps by another user flooding the socket), is
 * tried again after a short pause until the deadline.  Neither has
 * reached the agent's engine, so trying again cannot do a request
 * twice. */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "base/clock.h"

/* Wait for EVENTS on FD until DEADLINE (ms, CLOCK_MONOTONIC). */
static int
wait_for(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = events };
		int64_t left = deadline - ceems_clock_monotonic_ms();
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* One connection: send REQUEST, receive the reply by DEADLINE. */
static int
agent_call_once(const struct sockaddr_un *addr, const void *request, size_t len,
		int64_t deadline, char *reply, size_t reply_size)
{
	ssize_t n;
	int fd, r;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* A unix connect never waits for the peer to accept: it succeeds,
	 * or fails at once (ENOENT, ECONNREFUSED, EAGAIN for a full
	 * backlog). */
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) < 0) {
		r = -errno;
		goto out;
	}
	for (;;) {
		n = send(fd, request, len, MSG_NOSIGNAL);
		if (n >= 0)
			break;
		/* Closed before the request went: an agent with no slot for
		 * this connection (its EBUSY reply may be waiting). */
		if (errno == EPIPE || errno == ECONNRESET) {
			r = -EAGAIN;
			goto out;
		}
		if (errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if ((r = wait_for(fd, POLLOUT, deadline)) < 0)
			goto out;
	}
	for (;;) {
		/* MSG_TRUNC: the real length, to tell a reply cut short. */
		n = recv(fd, reply, reply_size - 1, MSG_TRUNC);
		if (n >= 0)
			break;
		/* The agent closed the connection with the request unread
		 * (the kernel says so first, before any reply queued): a
		 * connection it had no slot for. */
		if (errno == ECONNRESET) {
			r = -EAGAIN;
			goto out;
		}
		if (errno != EAGAIN && errno != EINTR) {
			r = -errno;
			goto out;
		}
		if ((r = wait_for(fd, POLLIN, deadline)) < 0)
			goto out;
	}
	if (n == 0) {
		r = -ECONNRESET;	/* closed without replying */
		reply[0] = '\0';
	} else if ((size_t)n >= reply_size) {
		r = -EMSGSIZE;
		reply[reply_size - 1] = '\0';
	} else {
		reply[n] = '\0';
		r = (int)n;
	}
out:
	close(fd);
	return r;
}

/* The agent's answer to a connection it had no slot for
 * (tools/agent/agent_server.c): the request was not read. */
static bool
is_busy_reply(const char *reply, int n)
{
	return n > 0 && strncmp(reply, "{\"ok\":false,", 12) == 0 &&
	       strstr(reply, "\"code\":\"EBUSY\"") != NULL;
}

/* Sleep up to WANT_MS, never past DEADLINE; false when it has passed. */
static bool
pause_until(int want_ms, int64_t deadline)
{
	int64_t left = deadline - ceems_clock_monotonic_ms();

	if (left <= 0)
		return false;
	poll(NULL, 0, left < want_ms ? (int)left : want_ms);
	return true;
}

/* First and longest pause between tries, in ms. */
#define RETRY_FIRST_MS 1
#define RETRY_MAX_MS 20

int
ceems_agent_client_call_buf(const char *socket_path, const void *request,
			    size_t len, int timeout_ms, char *reply,
			    size_t reply_size)
{
	struct sockaddr_un addr;
	int64_t deadline = ceems_clock_monotonic_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int pause_ms = RETRY_FIRST_MS;
	bool busy = false;
	int r;

	if (socket_path == NULL || request == NULL || reply == NULL ||
	    reply_size < 2)
		return -EINVAL;
	if (len > CEEMS_AGENT_MSG_MAX)
		return -EMSGSIZE;
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(socket_path) >= sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);

	for (;;) {
		r = agent_call_once(&addr, request, len, deadline, reply, reply_size);
		/* A deadline that passes in a try after a refusal: the
		 * agent was busy, not silent. */
		if (r == -ETIMEDOUT && busy)
			return -EBUSY;
		if (r != -EAGAIN && !is_busy_reply(reply, r))
			return r;
		busy = true;
		if (!pause_until(pause_ms, deadline))
			return r == -EAGAIN ? -EBUSY : r;
		if (pause_ms < RETRY_MAX_MS)
			pause_ms *= 2;
	}
}

int
ceems_agent_client_call(const char *socket_path, const char *request,
			int timeout_ms, char *reply, size_t reply_size)
{
	if (request == NULL)
		return -EINVAL;
	return ceems_agent_client_call_buf(socket_path, request, strlen(request),
					   timeout_ms, reply, reply_size);
}

/* Send REQ and decode the reply into OUT (may be NULL). */
static int
typed_call(const char *socket_path, const struct ceems_agent_request *req,
	   int timeout_ms, struct ceems_agent_job_report *out,
	   struct ceems_agent_client_work *work, char *err, size_t err_size)
{
	/* Heap, not stack: slurmstepd threads may have small stacks.  Two
	 * buffers: the request must outlast a busy reply, to be sent again. */
	char *buf = malloc(CEEMS_AGENT_MSG_MAX + 1);
	char *reply = malloc(CEEMS_AGENT_MSG_MAX + 1);
	int n, r;

	if (buf == NULL || reply == NULL) {
		snprintf(err, err_size, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	n = ceems_agent_proto_request_encode(req, buf, CEEMS_AGENT_MSG_MAX + 1);
	if (n < 0) {
		snprintf(err, err_size, "cannot encode the request: %s",
			 strerror(-n));
		r = n;
		goto out;
	}
	n = ceems_agent_client_call_buf(socket_path, buf, (size_t)n, timeout_ms, reply,
					CEEMS_AGENT_MSG_MAX + 1);
	if (n < 0) {
		snprintf(err, err_size, "node agent at %s: %s", socket_path,
			 n == -EBUSY ? "busy until the deadline (its client slots "
			 "or its queue were full)" : strerror(-n));
		r = n;
		goto out;
	}
	r = ceems_agent_proto_reply_decode_work(reply, (size_t)n, out,
			work != NULL ? &work->marks : NULL,
			work != NULL ? &work->history : NULL,
			work != NULL ? &work->advice : NULL, err, err_size);
out:
	free(buf);
	free(reply);
	return r;
}

/* A request of OP for JOBID, zeroed otherwise; NULL (ERR says why) when
 * out of memory.  Requests are large (a job's metadata): not on the
 * stack of a slurmstepd thread. */
static struct ceems_agent_request *
new_request(enum ceems_agent_op op, uint32_t jobid, char *err, size_t err_size)
{
	struct ceems_agent_request *req = calloc(1, sizeof(*req));

	if (req == NULL) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	req->op = op;
	req->jobid = jobid;
	return req;
}

/* Send REQ, free it; WORK (may be NULL) gets the job's work when the
 * reply has it. */
static int
send_request_marks(const char *socket_path, struct ceems_agent_request *req,
		   int timeout_ms, struct ceems_agent_job_report *out,
		   struct ceems_agent_client_work *work, char *err, size_t err_size)
{
	int r;

	if (req == NULL)
		return -ENOMEM;
	r = typed_call(socket_path, req, timeout_ms, out, work, err, err_size);
	free(req);
	return r;
}

static int
send_request(const char *socket_path, struct ceems_agent_request *req,
	     int timeout_ms, struct ceems_agent_job_report *out, char *err,
	     size_t err_size)
{
	return send_request_marks(socket_path, req, timeout_ms, out, NULL, err,
				  err_size);
}

int
ceems_agent_client_register_job(const char *socket_path,
				const struct ceems_agent_job_spec *spec,
				int timeout_ms, char *err, size_t err_size)
{
	struct ceems_agent_request *req =
		new_request(CEEMS_AGENT_OP_REGISTER, spec->jobid, err, err_size);

	if (req != NULL)
		req->spec = *spec;
	return send_request(socket_path, req, timeout_ms, NULL, err, err_size);
}

/* Step STEP with TASKS tasks into REQ (a NULL REQ, whose allocation
 * failed, is left to send_request).  -1 with ERR and REQ freed when the
 * name does not fit. */
static int
set_step(struct ceems_agent_request *req, const char *step, uint32_t tasks,
	 char *err, size_t err_size)
{
	if (req == NULL)
		return 0;
	req->tasks = tasks;
	if (snprintf(req->step, sizeof(req->step), "%s", step) >=
	    (int)sizeof(req->step)) {
		free(req);
		snprintf(err, err_size, "step name '%s' is too long", step);
		return -1;
	}
	return 0;
}

int
ceems_agent_client_register_start(const char *socket_path,
				  const struct ceems_agent_job_spec *spec,
				  const char *step, uint32_t tasks, int timeout_ms,
				  char *err, size_t err_size)
{
	struct ceems_agent_request *req =
		new_request(CEEMS_AGENT_OP_REGISTER, spec->jobid, err, err_size);

	if (req != NULL)
		req->spec = *spec;
	if (set_step(req, step, tasks, err, err_size) < 0)
		return -EINVAL;
	return send_request(socket_path, req, timeout_ms, NULL, err, err_size);
}

int
ceems_agent_client_deregister_job(const char *socket_path, uint32_t jobid,
				  int timeout_ms, struct ceems_agent_job_report *out,
				  char *err, size_t err_size)
{
	return send_request(socket_path,
			    new_request(CEEMS_AGENT_OP_DEREGISTER, jobid, err, err_size),
			    timeout_ms, out, err, err_size);
}

static int
step_call(enum ceems_agent_op op, const char *socket_path, uint32_t jobid,
	  const char *step, uint32_t tasks, int timeout_ms,
	  struct ceems_agent_job_report *out, char *err, size_t err_size)
{
	struct ceems_agent_request *req = new_request(op, jobid, err, err_size);

	if (set_step(req, step, tasks, err, err_size) < 0)
		return -EINVAL;
	return send_request(socket_path, req, timeout_ms, out, err, err_size);
}

int
ceems_agent_client_step_start(const char *socket_path, uint32_t jobid,
			      const char *step, uint32_t tasks, int timeout_ms,
			      char *err, size_t err_size)
{
	return step_call(CEEMS_AGENT_OP_STEP_START, socket_path, jobid, step,
			 tasks, timeout_ms, NULL, err, err_size);
}

int
ceems_agent_client_step_end(const char *socket_path, uint32_t jobid,
			    const char *step, int timeout_ms,
			    struct ceems_agent_job_report *out, char *err,
			    size_t err_size)
{
	return step_call(CEEMS_AGENT_OP_STEP_END, socket_path, jobid, step, 0,
			 timeout_ms, out, err, err_size);
}

int
ceems_agent_client_report_job(const char *socket_path, uint32_t jobid,
			      int timeout_ms, struct ceems_agent_job_report *out,
			      char *err, size_t err_size)
{
	return send_request(socket_path,
			    new_request(CEEMS_AGENT_OP_REPORT, jobid, err, err_size),
			    timeout_ms, out, err, err_size);
}

int
ceems_agent_client_report_job_now(const char *socket_path, uint32_t jobid,
				  int timeout_ms,
				  struct ceems_agent_job_report *out, char *err,
				  size_t err_size)
{
	struct ceems_agent_request *req =
		new_request(CEEMS_AGENT_OP_REPORT, jobid, err, err_size);

	if (req != NULL)
		req->now = true;
	return send_request(socket_path, req, timeout_ms, out, err, err_size);
}

int
ceems_agent_client_release_job(const char *socket_path, uint32_t jobid,
			       int timeout_ms, char *err, size_t err_size)
{
	return send_request(socket_path,
			    new_request(CEEMS_AGENT_OP_RELEASE, jobid, err, err_size),
			    timeout_ms, NULL, err, err_size);
}

int
ceems_agent_client_end_job(const char *socket_path,
			   const struct ceems_job_meta *meta, const char *by,
			   int timeout_ms,
			   struct ceems_agent_job_report *out, char *err,
			   size_t err_size)
{
	struct ceems_agent_request *req =
		new_request(CEEMS_AGENT_OP_DEREGISTER, meta->jobid, err, err_size);

	if (req != NULL) {
		req->meta = *meta;
		req->have_meta = true;
		snprintf(req->by, sizeof(req->by), "%s", by);
	}
	return send_request(socket_path, req, timeout_ms, out, err, err_size);
}

int
ceems_agent_client_step_end_status(const char *socket_path, uint32_t jobid,
				   const char *step, int status, int timeout_ms,
				   struct ceems_agent_job_report *out, char *err,
				   size_t err_size)
{
	return ceems_agent_client_step_end_marks(socket_path, jobid, step, true,
						 status, timeout_ms, out, NULL,
						 err, err_size);
}

int
ceems_agent_client_step_end_marks(const char *socket_path, uint32_t jobid,
				  const char *step, bool have_status,
				  int status, int timeout_ms,
				  struct ceems_agent_job_report *out,
				  struct ceems_agent_client_work *work, char *err,
				  size_t err_size)
{
	struct ceems_agent_request *req =
		new_request(CEEMS_AGENT_OP_STEP_END, jobid, err, err_size);

	if (req != NULL &&
	    snprintf(req->step, sizeof(req->step), "%s", step) >=
	    (int)sizeof(req->step)) {
		free(req);
		snprintf(err, err_size, "step name '%s' is too long", step);
		return -EINVAL;
	}
	if (req != NULL) {
		req->have_status = have_status;
		req->status = status;
		if (work != NULL)
			snprintf(req->name, sizeof(req->name), "%s", work->job_name);
	}
	return send_request_marks(socket_path, req, timeout_ms, out, work, err,
				  err_size);
}
