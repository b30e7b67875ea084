/* agent_server_clients.c - the node agent's socket and its clients.
 * Connections are accepted in batches, each admitted by the peer
 * credentials the kernel gives (SO_PEERCRED): root keeps a reserve of
 * client slots, every other uid may hold only a few (agent_admit.c) and
 * has one request per connection.  Everything is bounded: the number of
 * clients, the size of a message, the time a client may stay silent; a
 * misbehaving client is answered with an error or dropped, never allowed
 * to stall the ticks (design invariant 1).  Refusals are logged, at most
 * a burst of lines in a window. */
#include "config.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_admit.h"
#include "agent_listen.h"
#include "client/agent_proto.h"
#include "agent_server_internal.h"
#include "base/clock.h"
#include "base/log.h"

int
agent_server_clients_open_listener(struct server *s)
{
	int fd = agent_listen_open(s->config->socket_path, &s->sock);
	int r;

	if (fd < 0)
		return fd;
	if ((r = agent_server_watch_add(s, &s->listen, W_LISTEN, fd)) < 0) {
		close(fd);
		return r;
	}
	return 0;
}

static bool
may_log(struct server *s, uint64_t now)
{
	if (now - s->log_window_ns > LOG_WINDOW_NS) {
		if (s->log_suppressed > 0)
			ceems_warning("%u more refused or malformed requests were "
				      "not logged", s->log_suppressed);
		s->log_window_ns = now;
		s->log_lines = 0;
		s->log_suppressed = 0;
	}
	if (s->log_lines < LOG_BURST) {
		s->log_lines++;
		return true;
	}
	s->log_suppressed++;
	return false;
}

void
agent_server_clients_drop_client(struct server *s, struct client *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->w.fd, NULL);
	close(c->w.fd);
	c->used = false;
	s->nclients--;
	agent_admit_put(&s->admit, c->uid);
}

/* Send LEN bytes of the server's outbuf to C.  A client whose socket is full is not
 * reading its replies: it is dropped rather than waited for.  0, or -1
 * when the reply did not go. */
int
agent_server_clients_send_reply(struct server *s, struct client *c, int len)
{
	if (len < 0) {
		len = ceems_agent_proto_reply_error(-EIO, "the agent could not build its reply",
					      s->outbuf, sizeof(s->outbuf));
		if (len < 0)
			return -1;
	}
	if (send(c->w.fd, s->outbuf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (may_log(s, ceems_clock_monotonic_ns()))
			ceems_warning("client uid %u pid %d: cannot send the reply (%s): "
				      "dropped", (unsigned)c->uid, (int)c->pid,
				      strerror(errno));
		agent_server_clients_drop_client(s, c);
		return -1;
	}
	return 0;
}

/* Answer C with an error, logged as a refusal: as JSON, or as one line
 * when LINE (the line protocol's mark). */
static void
refuse_v(struct server *s, struct client *c, bool line, int code,
	 const char *fmt, va_list ap)
{
	char why[512];

	vsnprintf(why, sizeof(why), fmt, ap);
	/* The sentence may quote the client's bytes (an unknown key): no
	 * control character may reach the log and forge a line there. */
	for (char *p = why; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	s->refusals++;
	if (may_log(s, ceems_clock_monotonic_ns()))
		ceems_warning("refused a request from uid %u pid %d: %s",
			      (unsigned)c->uid, (int)c->pid, why);
	agent_server_clients_send_reply(s, c, line ?
		ceems_agent_proto_line_reply(code, why, s->outbuf, sizeof(s->outbuf)) :
		ceems_agent_proto_reply_error(code, why, s->outbuf, sizeof(s->outbuf)));
}

void
agent_server_clients_refuse(struct server *s, struct client *c, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	refuse_v(s, c, false, code, fmt, ap);
	va_end(ap);
}

void
agent_server_clients_refuse_line(struct server *s, struct client *c, int code,
				 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	refuse_v(s, c, true, code, fmt, ap);
	va_end(ap);
}

void
agent_server_clients_on_client(struct server *s, struct client *c, uint32_t events)
{
	ssize_t n;

	if (events & EPOLLIN) {
		/* MSG_TRUNC returns the real size of a message too large. */
		n = recv(c->w.fd, s->inbuf, sizeof(s->inbuf) - 1, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			agent_server_clients_drop_client(s, c);
			return;
		}
		if (n == 0) {	/* closed (or an empty message: same answer) */
			agent_server_clients_drop_client(s, c);
			return;
		}
		if (c->uid == 0)
			c->deadline_ns = ceems_clock_monotonic_ns() + AGENT_CLIENT_TIMEOUT_MS * UINT64_C(1000000);
		if ((size_t)n > CEEMS_AGENT_MSG_MAX) {
			s->requests++;
			agent_server_clients_refuse(s, c, -EMSGSIZE, "request of %zd bytes is larger than "
			       "the %d allowed", n, CEEMS_AGENT_MSG_MAX);
			return;
		}
		agent_server_dispatch_handle_request(s, c, (size_t)n);
		/* A job registered on an idle agent: back to the interval. */
		agent_server_timers_update_tick_timer(s);
		/* One request per connection for users other than root: a
		 * connection cannot be kept by sending a byte now and then. */
		if (c->used && c->uid != 0)
			agent_server_clients_drop_client(s, c);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR))
		agent_server_clients_drop_client(s, c);
}

/* Answer a connection that gets no slot with EBUSY and close it; its
 * client tries again (lib/client/agent_client.c).  Not logged one by one: the
 * refusals are tallied per uid (agent_admit_log). */
static void
refuse_connection(struct server *s, int fd)
{
	int n = ceems_agent_proto_reply_error(-EBUSY, "the agent has too many clients "
					"(or this user holds too many); try again",
					s->outbuf, sizeof(s->outbuf));

	if (n > 0)
		send(fd, s->outbuf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* A slot for a connection the admission allowed (there is one). */
static struct client *
free_slot(struct server *s)
{
	for (unsigned i = 0; i < AGENT_MAX_CLIENTS; i++)
		if (!s->clients[i].used)
			return &s->clients[i];
	return NULL;
}

/* Connections accepted per wakeup: a flood of connects must leave the
 * loop to the ticks and to the clients already in. */
#define ACCEPT_BATCH 64

void
agent_server_clients_on_accept(struct server *s)
{
	for (int k = 0; k < ACCEPT_BATCH; k++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev;
		struct client *c;
		int fd;

		fd = accept4(s->listen.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				ceems_warning("accept on %s: %s", s->config->socket_path,
					      strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			ceems_warning("cannot read a client's credentials: %s; dropped",
				      strerror(errno));
			close(fd);
			continue;
		}
		if (agent_admit_take(&s->admit, cred.uid) < 0 ||
		    (c = free_slot(s)) == NULL) {
			refuse_connection(s, fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->w.kind = W_CLIENT;
		c->w.fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->deadline_ns = ceems_clock_monotonic_ns() + AGENT_CLIENT_TIMEOUT_MS * UINT64_C(1000000);
		ev.events = EPOLLIN;
		ev.data.ptr = &c->w;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			ceems_warning("cannot watch a client: %s; dropped", strerror(errno));
			agent_admit_put(&s->admit, cred.uid);
			close(fd);
			continue;
		}
		c->used = true;
		s->nclients++;
	}
}

/* Drop silent clients; return the ms until the next deadline (-1 none). */
int
agent_server_clients_expire_clients(struct server *s)
{
	uint64_t now = ceems_clock_monotonic_ns(), next = UINT64_MAX;

	for (unsigned i = 0; i < AGENT_MAX_CLIENTS && s->nclients > 0; i++) {
		struct client *c = &s->clients[i];

		if (!c->used)
			continue;
		if (c->deadline_ns <= now) {
			ceems_debug("client uid %u pid %d silent for %d ms: dropped",
				    (unsigned)c->uid, (int)c->pid, AGENT_CLIENT_TIMEOUT_MS);
			agent_server_clients_drop_client(s, c);
			continue;
		}
		if (c->deadline_ns < next)
			next = c->deadline_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now) / 1000000u) + 1;
}
