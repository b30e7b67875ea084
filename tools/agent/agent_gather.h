/* agent_gather.h - the agent's gather listener: where the batch node of
 * a multi-node job asks this node's agent for its part of the job's
 * figures (lib/client/gather_proto.h, doc/gather.md).
 *
 * A thread of its own, so that the network and munged never hold the
 * tick: it accepts on gather_port, reads one munge credential per
 * connection (a bounded size, a bounded time), has munged check it
 * (root of a node of this cluster, meant for this node, never seen
 * before), asks the agent's own socket for the job's report as of now,
 * and answers with a credential only root can decode.  Everything else
 * gets the connection closed and a line in the log, a few a minute, the
 * rest counted. */
#ifndef CEEMS_AGENT_GATHER_H
#define CEEMS_AGENT_GATHER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/conf.h"

/* Connections served at once; more wait in the kernel's backlog. */
#define AGENT_GATHER_CONNS 16

struct agent_gather_conn;

struct agent_gather {
	const struct ceems_config *config;
	int listen_fd;		/* -1: no listener */
	int stop_fd;		/* eventfd: the thread returns */
	uint16_t port;
	char node[CEEMS_NODE_NAME_MAX];
	pthread_t thread;
	bool running;
	struct agent_gather_conn *conns;	/* AGENT_GATHER_CONNS */
	uint64_t answered, refused;
	/* Refusals logged in the window from WINDOW_MS, and those not. */
	int64_t window_ms;
	unsigned int logged;
	uint64_t unlogged;
	int64_t pause_until_ms;	/* accept paused until then */
};

/* Listen on this node's gather port (config's gather_port, or its line
 * in the gather_nodes file), for node NODE.  0, 1 when the gather is off
 * (gather_port 0: nothing to do), -1 after logging why. */
int agent_gather_open(struct agent_gather *g, const struct ceems_config *config,
		      const char *node);

/* Start the thread: after the agent's confinement and capability drop,
 * which bind each thread that exists then (Landlock is per thread). */
int agent_gather_start(struct agent_gather *g);

/* Stop the thread and close everything. */
void agent_gather_close(struct agent_gather *g);

#endif
