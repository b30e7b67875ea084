/* gather_client.c - the batch node's side of the gather
 * (gather_client.h).
 *
 * Three passes against one deadline: for each node, its address (the
 * gather_nodes file or gather_host, then the name service) and its
 * request (a munge credential naming the job, the node and a nonce);
 * then every connection opened at once, non-blocking, and one poll loop
 * that sends each request and reads each answer; then each answer
 * decoded (munged again) and checked: root made it, it repeats the
 * request's line, and it holds the agent's reply. */
#include "config.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "client/agent_proto.h"
#include "client/gather_client.h"
#include "client/gather_cred.h"
#include "client/gather_proto.h"

/* munge's own default, where munge_socket is "". */
#define MUNGE_DEFAULT_SOCKET "/run/munge/munge.socket.2"
/* A gather_nodes file for tens of thousands of nodes. */
#define NODES_FILE_MAX (4u << 20)

struct peer {
	int fd;			/* -1: done, or never opened */
	struct ceems_gather_request req;
	char *out;		/* length and credential */
	size_t out_len, sent;
	unsigned char head[4];	/* the answer's length, big-endian */
	char *in;		/* the answer, once its length is read */
	size_t in_have, in_len;	/* bytes read, length and answer */
};

int
ceems_gather_client_nodes_load(const struct ceems_config *config, char **text,
			char *err, size_t err_size)
{
	ssize_t n;

	*text = NULL;
	if (config->gather_nodes[0] == '\0')
		return 0;
	if ((*text = malloc(NODES_FILE_MAX)) == NULL) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	n = ceems_fileio_read_text_file(config->gather_nodes, *text,
					NODES_FILE_MAX);
	if (n < 0) {
		snprintf(err, err_size, "cannot read gather_nodes %s: %s",
			 config->gather_nodes, strerror((int)-n));
		free(*text);
		*text = NULL;
		return (int)n;
	}
	return 0;
}

static void
fail(struct ceems_gather_node *node, int status, const char *why)
{
	node->status = status;
	snprintf(node->why, sizeof(node->why), "%.*s",
		 (int)sizeof(node->why) - 1, why);
}

static void
make_nonce(char *out)
{
	unsigned char raw[CEEMS_GATHER_NONCE_LEN / 2];

	if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
		/* Only a replay's detection rests on it, and munge
		 * refuses replays already: time is a fair fallback. */
		uint64_t t = ceems_clock_monotonic_ns() ^ (uint64_t)getpid();

		memcpy(raw, &t, sizeof(raw));
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* The node's request: framed credential in P->out. */
static int
prepare_request(const struct ceems_config *config, uint32_t jobid,
		struct ceems_gather_node *node, struct peer *p)
{
	char line[CEEMS_GATHER_LINE_MAX], err[256], *cred;
	size_t len;
	uint32_t be;
	int n;

	p->req.jobid = jobid;
	snprintf(p->req.node, sizeof(p->req.node), "%s", node->node);
	make_nonce(p->req.nonce);
	if ((n = ceems_gather_proto_request_format(&p->req, line, sizeof(line))) < 0) {
		fail(node, -EINVAL, "not a node name");
		return -1;
	}
	/* Decodable by root only: the agent is root, and a user who took
	 * the port of a node whose agent is down gets nothing of use. */
	if (ceems_gather_cred_encode(config->munge_socket, line, (size_t)n,
				     true, &cred, err, sizeof(err)) < 0) {
		fail(node, -EIO, err);
		return -1;
	}
	len = strlen(cred);
	if ((p->out = malloc(4 + len)) == NULL) {
		free(cred);
		fail(node, -ENOMEM, "out of memory");
		return -1;
	}
	be = htonl((uint32_t)len);
	memcpy(p->out, &be, 4);
	memcpy(p->out + 4, cred, len);
	p->out_len = 4 + len;
	free(cred);
	return 0;
}

/* Connect, non-blocking, to the node's agent. */
static int
open_connection(const struct ceems_config *config, const char *map,
		struct ceems_gather_node *node, struct peer *p)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[CEEMS_CONFIG_PATH_MAX], port_text[8], err[256];
	uint16_t port;
	int r, fd;

	r = ceems_gather_proto_endpoint(config, map, node->node, host, sizeof(host),
				  &port, err, sizeof(err));
	if (r < 0) {
		fail(node, r, err);
		return -1;
	}
	snprintf(port_text, sizeof(port_text), "%u", port);
	if ((r = getaddrinfo(host, port_text, &hints, &ai)) != 0) {
		snprintf(err, sizeof(err), "%.128s: %s", host, gai_strerror(r));
		fail(node, -EHOSTUNREACH, err);
		return -1;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 &&
		       errno != EINPROGRESS)) {
		snprintf(err, sizeof(err), "%.128s port %u: %s", host, port,
			 strerror(errno));
		fail(node, -errno, err);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	p->fd = fd;
	return 0;
}

static void
peer_close(struct peer *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* Send what is left of the request, then read the answer; when it is
 * whole, close. */
static void
on_ready(struct ceems_gather_node *node, struct peer *p, short revents)
{
	ssize_t n;

	if (p->sent < p->out_len) {
		n = send(p->fd, p->out + p->sent, p->out_len - p->sent,
			 MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n < 0) {
			fail(node, errno == ECONNREFUSED ? -ECONNREFUSED : -EIO,
			     errno == ECONNREFUSED ? "no gather listener"
						   : strerror(errno));
			peer_close(p);
			return;
		}
		p->sent += (size_t)n;
		return;
	}
	if (!(revents & (POLLIN | POLLHUP | POLLERR)))
		return;
	n = p->in_have < 4 ?
	    recv(p->fd, p->head + p->in_have, 4 - p->in_have, 0) :
	    recv(p->fd, p->in + (p->in_have - 4), 4 + p->in_len - p->in_have, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		fail(node, -ECONNRESET, "the agent closed the connection without "
		     "an answer (see its log)");
		peer_close(p);
		return;
	}
	p->in_have += (size_t)n;
	if (p->in_have == 4) {
		uint32_t be;

		memcpy(&be, p->head, 4);
		p->in_len = ntohl(be);
		/* The answer's room once its length is known and sane. */
		if (p->in_len == 0 || p->in_len > CEEMS_GATHER_CRED_MAX) {
			fail(node, -EPROTO, "an answer of a length out of bounds");
			peer_close(p);
		} else if ((p->in = malloc(p->in_len + 1)) == NULL) {
			fail(node, -ENOMEM, "out of memory");
			peer_close(p);
		}
		return;
	}
	if (p->in_have == 4 + p->in_len) {
		p->in[p->in_len] = '\0';
		node->status = 1;	/* whole: decoded after the loop */
		peer_close(p);
	}
}

/* The answer P holds into NODE's report. */
static void
decode_answer(const struct ceems_config *config,
	      struct ceems_gather_node *node, struct peer *p)
{
	char err[CEEMS_AGENT_ERROR_MAX], *payload = NULL;
	const char *reply;
	size_t len, reply_len;
	int r;

	if (memchr(p->in, '\0', p->in_len) != NULL) {
		fail(node, -EPROTO, "the answer is not a credential");
		return;
	}
	r = ceems_gather_cred_decode(config->munge_socket, p->in, &payload,
				     &len, err, sizeof(err));
	if (r < 0) {
		fail(node, r, err);
		return;
	}
	if (ceems_gather_proto_answer_split(payload, len, &p->req, &reply,
				      &reply_len) < 0) {
		fail(node, -EPROTO, "the answer is not to this request");
	} else if ((r = ceems_agent_proto_reply_decode(reply, reply_len,
						       &node->report, err,
						       sizeof(err))) < 0) {
		fail(node, r, err);
	} else {
		node->status = 0;
		node->why[0] = '\0';
	}
	free(payload);
}

/* Poll every open connection until all are done or DEADLINE. */
static void
exchange(struct ceems_gather_node *nodes, struct peer *peers, size_t n,
	 int64_t deadline)
{
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	size_t *which = calloc(n, sizeof(*which));

	if (pfd == NULL || which == NULL)
		goto out;
	for (;;) {
		int64_t left = deadline - ceems_clock_monotonic_ms();
		nfds_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (peers[i].fd < 0)
				continue;
			which[k] = i;
			pfd[k++] = (struct pollfd){
				.fd = peers[i].fd,
				.events = peers[i].sent < peers[i].out_len ?
					  POLLOUT : POLLIN };
		}
		if (k == 0 || left <= 0)
			break;
		if (poll(pfd, k, (int)left) < 0 && errno != EINTR)
			break;
		for (nfds_t j = 0; j < k; j++)
			if (pfd[j].revents != 0)
				on_ready(&nodes[which[j]], &peers[which[j]],
					 pfd[j].revents);
	}
out:
	free(pfd);
	free(which);
}

/* Whether munged listens on its socket, asked without waiting: libmunge
 * tries a socket nobody listens on again and again for seconds. */
static bool
munged_listens(const char *socket_path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	const char *path = socket_path[0] != '\0' ? socket_path :
			   MUNGE_DEFAULT_SOCKET;
	int fd, r;

	if (strlen(path) >= sizeof(a.sun_path))
		return true;	/* libmunge will say what is wrong */
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true;
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	r = r == 0 || errno == EAGAIN || errno == EINPROGRESS;
	close(fd);
	return r;
}

int
ceems_gather_client_ask(const struct ceems_config *config, uint32_t jobid,
			struct ceems_gather_node *nodes, size_t n,
			int timeout_ms, int check_ms)
{
	int64_t deadline = ceems_clock_monotonic_ms() + timeout_ms;
	struct peer *peers;
	char *map = NULL, err[256];
	int answered = 0;

	if (config->gather_port == 0)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		fail(&nodes[i], -ETIMEDOUT, "no answer in time");
	if (!munged_listens(config->munge_socket)) {
		snprintf(err, sizeof(err), "munged does not listen on %s",
			 config->munge_socket[0] != '\0' ? config->munge_socket :
			 MUNGE_DEFAULT_SOCKET);
		for (size_t i = 0; i < n; i++)
			fail(&nodes[i], -EIO, err);
		return 0;
	}
	if ((peers = calloc(n, sizeof(*peers))) == NULL)
		return -ENOMEM;
	if (ceems_gather_client_nodes_load(config, &map, err, sizeof(err)) < 0) {
		for (size_t i = 0; i < n; i++)
			fail(&nodes[i], -EIO, err);
		free(peers);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		peers[i].fd = -1;
		if (ceems_clock_monotonic_ms() >= deadline) {
			fail(&nodes[i], -ETIMEDOUT, "not asked: no time left");
			continue;
		}
		if (prepare_request(config, jobid, &nodes[i], &peers[i]) == 0)
			(void)open_connection(config, map, &nodes[i], &peers[i]);
	}
	free(map);
	exchange(nodes, peers, n, deadline);
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].status == 1 &&
		    ceems_clock_monotonic_ms() >= deadline + check_ms)
			fail(&nodes[i], -ETIMEDOUT, "no time left to check its answer");
		else if (nodes[i].status == 1)
			decode_answer(config, &nodes[i], &peers[i]);
		if (nodes[i].status == -ETIMEDOUT && peers[i].fd >= 0)
			fail(&nodes[i], -ETIMEDOUT, "no answer in time");
		if (nodes[i].status == 0)
			answered++;
		peer_close(&peers[i]);
		free(peers[i].out);
		free(peers[i].in);
	}
	free(peers);
	return answered;
}
