/* agent_listen.c - the node agent's listening socket: its directory
 * made, a stale socket of a dead agent removed (never a live agent's,
 * never a file that is no socket), bound mode 0666 (authorization is by
 * peer credentials), and removed at the end unless another agent has
 * replaced it. */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent_admit.h"
#include "agent_listen.h"
#include "base/conf.h"
#include "base/fileio.h"
#include "base/log.h"

/* mkdir -p of the socket's directory, 0755 (clients of any uid must
 * reach the socket; authorization is by peer credentials). */
static int
make_parent_dirs(const char *path)
{
	char dir[CEEMS_CONFIG_PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	return ceems_fileio_mkdir_p(dir, 0755);
}

/* A socket file left by an agent that died is removed; one another agent
 * still listens on, or a file that is no socket, is left alone. */
static int
clear_stale_socket(const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		ceems_error("%s exists and is not a socket: not removing it; "
			    "set another `socket' in the configuration", path);
		return -EEXIST;
	}
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (struct sockaddr *)&addr, sizeof(addr));
	close(fd);
	if (r == 0 || errno == EAGAIN) {
		ceems_error("another agent is listening on %s: not starting a second one",
			    path);
		return -EADDRINUSE;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	ceems_info("removed the stale socket %s of an earlier agent", path);
	return 0;
}

int
agent_listen_open(const char *path, struct agent_socket *sock)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, r;

	if (strlen(path) >= sizeof(addr.sun_path)) {
		ceems_error("socket path %s is longer than %zu bytes", path,
			    sizeof(addr.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	if ((r = make_parent_dirs(path)) < 0) {
		ceems_error("cannot create the directory of %s: %s", path, strerror(-r));
		return r;
	}
	if ((r = clear_stale_socket(path)) < 0) {
		if (r != -EEXIST && r != -EADDRINUSE)
			ceems_error("cannot remove the stale socket %s: %s", path,
				    strerror(-r));
		return r;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    chmod(path, 0666) < 0 || lstat(path, &st) < 0 ||
	    listen(fd, AGENT_LISTEN_BACKLOG) < 0) {
		r = -errno;
		ceems_error("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	sock->dev = st.st_dev;
	sock->ino = st.st_ino;
	return fd;
}

void
agent_listen_remove(const char *path, const struct agent_socket *sock)
{
	struct stat st;

	if (lstat(path, &st) == 0 && st.st_dev == sock->dev &&
	    st.st_ino == sock->ino)
		unlink(path);
}
