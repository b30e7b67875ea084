/* agent_gather.c - the agent's gather listener (agent_gather.h).
 *
 * One thread, one poll: the listening socket, a stop eventfd, and up to
 * AGENT_GATHER_CONNS connections, each reading a 4-byte length and a
 * credential of at most REQUEST_MAX bytes within CONN_TIMEOUT_MS of its
 * accept.  A complete request is served there and then: munged decodes
 * it (a local round trip), the agent's own socket gives the report (the
 * main thread answers between two events), munged encodes the answer,
 * and the answer is written with a send timeout.  Requests come once per
 * multi-node job's end from its batch node, so serving them one after
 * the other is enough; a slow or hostile peer only holds its own slot
 * until its deadline. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_gather.h"
#include "base/clock.h"
#include "base/log.h"
#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "client/gather_client.h"
#include "client/gather_cred.h"
#include "client/gather_proto.h"

/* A request's credential is a few hundred bytes, sent at once after the
 * connection: a peer that sends less within CONN_TIMEOUT_MS is not the
 * batch node. */
#define REQUEST_MAX 4096
#define CONN_TIMEOUT_MS 1000
#define AGENT_CALL_MS 1000
/* One address holds at most this many of the connection slots. */
#define CONNS_PER_PEER 4
/* Refusals logged per window; the rest are counted, and said once. */
#define REFUSALS_LOGGED 10
#define REFUSAL_WINDOW_MS 60000
/* After accept failed for want of descriptors: a pause, not a spin. */
#define ACCEPT_PAUSE_MS 100

struct agent_gather_conn {
	int fd;			/* -1: free */
	int64_t deadline_ms;
	size_t have;		/* bytes read: length, then credential */
	uint32_t len;
	char peer[64];
	char buf[4 + REQUEST_MAX + 1];
};

static void
conn_close(struct agent_gather_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* A refusal, in the log as long as the window's share lasts; what is
 * beyond it is counted and said when the window ends, so that a peer
 * cannot flood the log (and the pipe the tick's lines share). */
static void
refuse(struct agent_gather *g, const char *peer, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void
refuse(struct agent_gather *g, const char *peer, const char *fmt, ...)
{
	int64_t now = ceems_clock_monotonic_ms();
	char why[256];
	va_list ap;

	g->refused++;
	if (now - g->window_ms >= REFUSAL_WINDOW_MS) {
		if (g->unlogged > 0)
			ceems_warning("gather: %llu more refusals in the last "
				      "minute, not logged one by one",
				      (unsigned long long)g->unlogged);
		g->window_ms = now;
		g->logged = 0;
		g->unlogged = 0;
	}
	if (g->logged >= REFUSALS_LOGGED) {
		g->unlogged++;
		return;
	}
	g->logged++;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	ceems_warning("gather: refused %s: %s", peer, why);
}

/* A munge credential's text: "MUNGE:", then base64 and its ':'. */
static bool
looks_like_credential(const char *s, size_t len)
{
	if (len < 7 || memcmp(s, "MUNGE:", 6) != 0)
		return false;
	for (size_t i = 6; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '+' ||
		      s[i] == '/' || s[i] == '=' || s[i] == ':' ||
		      (s[i] == '\n' && i == len - 1)))
			return false;
	return true;
}

/* Listen on PORT, IPv6 and IPv4 alike where the kernel allows it. */
static int
listen_on(uint16_t port)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	int one = 1, zero = 0, fd;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 &&
		    listen(fd, 64) == 0)
			return fd;
		close(fd);
	}
	/* No IPv6 on this node. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a4, sizeof(a4)) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int
agent_gather_open(struct agent_gather *g, const struct ceems_config *config,
		  const char *node)
{
	char host[CEEMS_CONFIG_PATH_MAX], err[256];
	char *map = NULL;
	int r;

	memset(g, 0, sizeof(*g));
	g->config = config;
	g->listen_fd = g->stop_fd = -1;
	if (config->gather_port == 0)
		return 1;
	if (node == NULL || !ceems_conf_node_name_ok(node)) {
		ceems_warning("no gather listener: this node has no name that "
			      "the batch node could ask for (give --node)");
		return 1;
	}
	snprintf(g->node, sizeof(g->node), "%s", node);
	if (ceems_gather_client_nodes_load(config, &map, err, sizeof(err)) < 0) {
		ceems_error("no gather listener: %s", err);
		return -1;
	}
	r = ceems_gather_proto_endpoint(config, map, node, host, sizeof(host),
				  &g->port, err, sizeof(err));
	free(map);
	if (r < 0) {
		ceems_error("no gather listener: %s", err);
		return -1;
	}
	if ((g->listen_fd = listen_on(g->port)) < 0) {
		ceems_error("no gather listener on port %u: %s (gather_port)",
			    g->port, strerror(-g->listen_fd));
		g->listen_fd = -1;
		return -1;
	}
	g->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	g->conns = calloc(AGENT_GATHER_CONNS, sizeof(*g->conns));
	if (g->stop_fd < 0 || g->conns == NULL) {
		ceems_error("no gather listener: %s", strerror(errno ? errno : ENOMEM));
		agent_gather_close(g);
		return -1;
	}
	for (int i = 0; i < AGENT_GATHER_CONNS; i++)
		g->conns[i].fd = -1;
	return 0;
}

/* The agent's reply to the report of REQ's job, as of now, into REPLY:
 * its length; a refusal of the agent is a reply too. */
static int
ask_agent(struct agent_gather *g, const struct ceems_gather_request *req,
	  char *reply, size_t size)
{
	char request[96];

	snprintf(request, sizeof(request),
		 "{\"op\":\"report\",\"jobid\":%u,\"now\":true}", req->jobid);
	return ceems_agent_client_call(g->config->socket_path, request,
				       AGENT_CALL_MS, reply, size);
}

/* Write all of BUF (LEN bytes) to a blocking FD with a send timeout. */
static int
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The answer to REQ with the agent's REPLY, on C. */
static int
answer(struct agent_gather *g, struct agent_gather_conn *c,
       const struct ceems_gather_request *req, const char *reply,
       size_t reply_len)
{
	char line[CEEMS_GATHER_LINE_MAX], err[256], *payload, *cred = NULL;
	struct timeval tv = { .tv_sec = CONN_TIMEOUT_MS / 1000 };
	int n = ceems_gather_proto_request_format(req, line, sizeof(line));
	int r;
	uint32_t be;

	if (n < 0 || (payload = malloc((size_t)n + reply_len)) == NULL)
		return -1;
	memcpy(payload, line, (size_t)n);
	memcpy(payload + n, reply, reply_len);
	r = ceems_gather_cred_encode(g->config->munge_socket, payload,
				     (size_t)n + reply_len, true, &cred, err,
				     sizeof(err));
	free(payload);
	if (r < 0) {
		ceems_warning("gather: job %u for %s: %s", req->jobid, c->peer, err);
		return -1;
	}
	be = htonl((uint32_t)strlen(cred));
	/* Blocking, bounded by the send timeout: an answer is tens of
	 * kilobytes at most, which the socket's buffer nearly always takes
	 * at once. */
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	(void)fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) & ~O_NONBLOCK);
	r = send_all(c->fd, (const char *)&be, sizeof(be)) < 0 ||
	    send_all(c->fd, cred, strlen(cred)) < 0 ? -1 : 0;
	free(cred);
	return r;
}

/* C holds a whole request: serve it, then close. */
static void
serve(struct agent_gather *g, struct agent_gather_conn *c)
{
	static char reply[CEEMS_AGENT_MSG_MAX + 1];
	struct ceems_gather_request req;
	char err[256], *payload = NULL;
	size_t len;
	int n;

	c->buf[4 + c->len] = '\0';
	/* Not munged's to judge what is no credential at all. */
	if (!looks_like_credential(c->buf + 4, c->len)) {
		refuse(g, c->peer, "not a credential");
		goto out;
	}
	if (ceems_gather_cred_decode(g->config->munge_socket, c->buf + 4,
				     &payload, &len, err, sizeof(err)) < 0) {
		refuse(g, c->peer, "%s", err);
		goto out;
	}
	if (ceems_gather_proto_request_parse(payload, len, &req, err, sizeof(err)) < 0) {
		refuse(g, c->peer, "%s", err);
		goto out;
	}
	/* A credential meant for another node: played back here. */
	if (strcmp(req.node, g->node) != 0) {
		refuse(g, c->peer, "the request is for node %s, this is %s",
		       req.node, g->node);
		goto out;
	}
	n = ask_agent(g, &req, reply, sizeof(reply));
	if (n < 0) {
		refuse(g, c->peer, "job %u: the agent did not answer: %s",
		       req.jobid, strerror(-n));
		goto out;
	}
	if (answer(g, c, &req, reply, (size_t)n) == 0) {
		g->answered++;
		ceems_debug("gather: job %u's figures sent to %s", req.jobid,
			    c->peer);
	}
out:
	free(payload);
	conn_close(c);
}

/* Read what C has; serve it once whole. */
static void
on_readable(struct agent_gather *g, struct agent_gather_conn *c)
{
	size_t want = c->have < 4 ? 4 : 4 + (size_t)c->len;
	ssize_t n = recv(c->fd, c->buf + c->have, want - c->have, 0);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->have += (size_t)n;
	if (c->have == 4) {
		uint32_t be;

		memcpy(&be, c->buf, 4);
		c->len = ntohl(be);
		if (c->len == 0 || c->len > REQUEST_MAX) {
			refuse(g, c->peer, "a request of %u bytes", c->len);
			conn_close(c);
		}
		return;
	}
	if (c->have == 4 + (size_t)c->len)
		serve(g, c);
}

/* ADDR of SS as text into PEER (SIZE bytes). */
static void
peer_name(const struct sockaddr_storage *ss, char *peer, size_t size)
{
	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			  peer, (socklen_t)size);
	else if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			  peer, (socklen_t)size);
	else
		snprintf(peer, size, "?");
}

/* A slot for a connection from PEER: a free one; none when PEER holds
 * its share; else the oldest one's, closed (a connection that has held
 * a slot longest is the likeliest not to be the batch node, which sends
 * its request at once). */
static struct agent_gather_conn *
take_slot(struct agent_gather *g, const char *peer)
{
	struct agent_gather_conn *free_slot = NULL, *oldest = NULL;
	unsigned int same = 0;

	for (int i = 0; i < AGENT_GATHER_CONNS; i++) {
		struct agent_gather_conn *c = &g->conns[i];

		if (c->fd < 0) {
			if (free_slot == NULL)
				free_slot = c;
			continue;
		}
		if (strcmp(c->peer, peer) == 0)
			same++;
		if (oldest == NULL || c->deadline_ms < oldest->deadline_ms)
			oldest = c;
	}
	if (same >= CONNS_PER_PEER)
		return NULL;
	if (free_slot != NULL)
		return free_slot;
	refuse(g, oldest->peer, "every connection slot held: closed to "
	       "make room");
	conn_close(oldest);
	return oldest;
}

static void
on_accept(struct agent_gather *g)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct agent_gather_conn *c;
	char peer[64];
	int fd;

	fd = accept4(g->listen_fd, (struct sockaddr *)&ss, &sl,
		     SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM)
			g->pause_until_ms = ceems_clock_monotonic_ms() +
					    ACCEPT_PAUSE_MS;
		return;
	}
	peer_name(&ss, peer, sizeof(peer));
	if ((c = take_slot(g, peer)) == NULL) {
		refuse(g, peer, "%d connections of its own open already",
		       CONNS_PER_PEER);
		close(fd);
		return;
	}
	c->fd = fd;
	c->have = 0;
	c->len = 0;
	c->deadline_ms = ceems_clock_monotonic_ms() + CONN_TIMEOUT_MS;
	memcpy(c->peer, peer, sizeof(c->peer));
}

static void *
gather_thread(void *arg)
{
	struct agent_gather *g = arg;
	struct pollfd pfd[2 + AGENT_GATHER_CONNS];
	struct agent_gather_conn *owner[2 + AGENT_GATHER_CONNS];

	for (;;) {
		int64_t now = ceems_clock_monotonic_ms(), wait = -1;
		nfds_t n = 0;

		pfd[n++] = (struct pollfd){ .fd = g->stop_fd, .events = POLLIN };
		/* A pause after accept ran out of descriptors: -1 is not
		 * polled. */
		pfd[n++] = (struct pollfd){
			.fd = now < g->pause_until_ms ? -1 : g->listen_fd,
			.events = POLLIN };
		if (now < g->pause_until_ms)
			wait = g->pause_until_ms - now;
		for (int i = 0; i < AGENT_GATHER_CONNS; i++) {
			struct agent_gather_conn *c = &g->conns[i];

			if (c->fd < 0)
				continue;
			if (c->deadline_ms <= now) {
				refuse(g, c->peer, "no whole request in %d ms",
				       CONN_TIMEOUT_MS);
				conn_close(c);
				continue;
			}
			if (wait < 0 || c->deadline_ms - now < wait)
				wait = c->deadline_ms - now;
			owner[n] = c;
			pfd[n++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		}
		if (poll(pfd, n, (int)wait) < 0) {
			if (errno == EINTR)
				continue;
			ceems_error("gather: poll: %s", strerror(errno));
			return NULL;
		}
		if (pfd[0].revents != 0)
			return NULL;
		for (nfds_t i = 2; i < n; i++)
			if (pfd[i].revents != 0)
				on_readable(g, owner[i]);
		if (pfd[1].revents != 0)
			on_accept(g);
	}
}

int
agent_gather_start(struct agent_gather *g)
{
	sigset_t all, old;
	int r;

	if (g->listen_fd < 0)
		return 0;
	/* Signals stay with the agent's main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&g->thread, NULL, gather_thread, g);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		ceems_error("gather: cannot start its thread: %s", strerror(r));
		return -1;
	}
	g->running = true;
	ceems_info("gather: listening on port %u for node %s", g->port, g->node);
	return 0;
}

void
agent_gather_close(struct agent_gather *g)
{
	uint64_t one = 1;

	if (g->running) {
		if (write(g->stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(g->thread, NULL);
		g->running = false;
	}
	if (g->conns != NULL)
		for (int i = 0; i < AGENT_GATHER_CONNS; i++)
			conn_close(&g->conns[i]);
	free(g->conns);
	g->conns = NULL;
	if (g->listen_fd >= 0)
		close(g->listen_fd);
	if (g->stop_fd >= 0)
		close(g->stop_fd);
	g->listen_fd = g->stop_fd = -1;
}
