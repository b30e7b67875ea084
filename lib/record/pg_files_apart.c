/* pg_files_apart.c - the files libpq may read (pg_files.c), found in a
 * child process.
 *
 * Why: the node agent must allow these files before it confines itself,
 * and finding them takes libpq (its parser of connection strings and
 * service files).  Loaded into the agent, libpq would stay: the TLS
 * libraries it brings (libcrypto, libssl, p11-kit) pin themselves and
 * no dlclose gives them back, 2 MiB of resident memory in a process
 * that never connects (its replay process does).  A child of a fork
 * loads libpq, lists the files, and the paths of the libraries libpq
 * brought (so that the confinement lets the replay process load them
 * wherever they are), then exits; the agent reads the list from a pipe.
 *
 * The child's records on the pipe: a kind byte, the text, a NUL.  Its
 * exit status is 0 or the errno of its failure, with an error record. */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "record/pg_files.h"

#define RECORD_FILE 'f'
#define RECORD_DIR 'd'
#define RECORD_LIBRARY 'l'
#define RECORD_ERROR 'e'
/* A child that lists more, or takes longer (a home on a dead network
 * file system), is not waited for. */
#define APART_MAX_BYTES (256 * 1024)
#define APART_TIMEOUT_NS (10 * UINT64_C(1000000000))

/* In the child: one record (dprintf writes it whole, or the parent
 * sees a truncated list as a failure). */
static void
put_record(int fd, char kind, const char *text)
{
	(void)dprintf(fd, "%c%s%c", kind, text, '\0');
}

static void
put_file(const char *path, bool is_dir, void *arg)
{
	put_record(*(int *)arg, is_dir ? RECORD_DIR : RECORD_FILE, path);
}

struct loaded {
	size_t before;		/* objects loaded before libpq */
	size_t seen;
	int fd;
};

static int
count_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)info;
	(void)size;
	((struct loaded *)arg)->before++;
	return 0;
}

/* The objects after the first BEFORE: what loading libpq added (the
 * loader appends to its list). */
static int
put_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct loaded *l = arg;

	(void)size;
	if (l->seen++ >= l->before && info->dlpi_name != NULL &&
	    info->dlpi_name[0] == '/')
		put_record(l->fd, RECORD_LIBRARY, info->dlpi_name);
	return 0;
}

static _Noreturn void
child_main(int fd, const char *conninfo, const char *const *homes,
	   size_t nhomes)
{
	struct loaded l = { 0, 0, fd };
	char err[512];
	int r;

	dl_iterate_phdr(count_loaded, &l);
	for (size_t i = 0; i < nhomes; i++) {
		r = ceems_pg_files(conninfo, homes[i], put_file, &fd, err,
				   sizeof(err));
		if (r < 0) {
			put_record(fd, RECORD_ERROR, err);
			_exit(-r & 0xff);
		}
	}
	dl_iterate_phdr(put_loaded, &l);
	_exit(0);
}

/* Read the child's records from FD until it closes, at most until
 * DEADLINE.  The bytes in BUF, or -EIO (late) / -ENOBUFS (too many). */
static ssize_t
read_records(int fd, char *buf, size_t size, uint64_t deadline)
{
	size_t have = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = ceems_clock_monotonic_ns();
		ssize_t n;

		if (now >= deadline)
			return -EIO;
		n = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n <= 0)
			continue;
		if (have == size)
			return -ENOBUFS;
		n = read(fd, buf + have, size - have);
		if (n < 0 && errno != EINTR)
			return -errno;
		if (n == 0)
			return (ssize_t)have;
		if (n > 0)
			have += (size_t)n;
	}
}

/* Hand the records of BUF to ADD and LIBRARY when the child succeeded
 * (DELIVER), and its error record, if any, to ERR. */
static void
hand_out(const char *buf, size_t len, bool deliver, ceems_pg_file_fn add,
	 ceems_pg_file_fn library, void *arg, char *err, size_t err_size)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *text = p + 1, *nul = memchr(text, '\0', (size_t)(end - text));

		if (nul == NULL)
			break;		/* a truncated record: the child failed */
		if (deliver && (*p == RECORD_FILE || *p == RECORD_DIR))
			add(text, *p == RECORD_DIR, arg);
		else if (deliver && *p == RECORD_LIBRARY)
			library(text, false, arg);
		else if (*p == RECORD_ERROR)
			snprintf(err, err_size, "%s", text);
		p = nul + 1;
	}
}

int
ceems_pg_files_apart(const char *conninfo, const char *const *homes,
		     size_t nhomes, ceems_pg_file_fn add,
		     ceems_pg_file_fn library, void *arg, char *err,
		     size_t err_size)
{
	char *buf = malloc(APART_MAX_BYTES);
	ssize_t len;
	int fds[2], status = 0, r;
	pid_t pid;

	snprintf(err, err_size, "the process that lists libpq's files failed");
	if (buf == NULL)
		return -ENOMEM;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		r = -errno;
		free(buf);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		free(buf);
		return r;
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1], conninfo, homes, nhomes);
	}
	close(fds[1]);
	len = read_records(fds[0], buf, APART_MAX_BYTES,
			   ceems_clock_monotonic_ns() + APART_TIMEOUT_NS);
	close(fds[0]);
	if (len < 0)
		(void)kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (len < 0) {
		snprintf(err, err_size, "the process that lists libpq's files %s",
			 len == -ENOBUFS ? "listed too much" : "did not finish in time");
		free(buf);
		return (int)len;
	}
	r = !WIFEXITED(status) ? -EIO : -WEXITSTATUS(status);
	if (r == 0 && err_size > 0)
		err[0] = '\0';
	hand_out(buf, (size_t)len, r == 0, add, library, arg, err, err_size);
	free(buf);
	return r;
}
