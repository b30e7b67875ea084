/* agent_server_watch.c - a descriptor joins the node agent's event loop:
 * its epoll set, with the kind of watch that says who handles it.  The
 * timers, the socket, the signals and the job notes all register
 * through it, so it is none of theirs. */
#include "config.h"

#include <sys/epoll.h>

#include <errno.h>

#include "agent_server_internal.h"

int
agent_server_watch_add(struct server *s, struct watch *w, enum watch_kind kind, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	w->kind = kind;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->fd = fd;
	return 0;
}
