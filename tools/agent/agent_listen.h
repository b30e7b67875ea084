/* agent_listen.h - the node agent's listening socket (agent_listen.c). */
#ifndef CEEMS_AGENT_LISTEN_H
#define CEEMS_AGENT_LISTEN_H

#include <sys/types.h>

/* The socket file the agent created, to remove only that one. */
struct agent_socket {
	dev_t dev;
	ino_t ino;
};

/* Listen on PATH (its directory made, a dead agent's socket removed):
 * the non-blocking listening descriptor, or -errno after logging why
 * (-EADDRINUSE: another agent listens there). */
int agent_listen_open(const char *path, struct agent_socket *sock);

/* Remove PATH if it is still the socket SOCK describes. */
void agent_listen_remove(const char *path, const struct agent_socket *sock);

#endif
