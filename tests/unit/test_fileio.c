/* test_fileio.c - the bounded reads of lib/base/fileio.c: the size limit at
 * its exact edge, reading kept-open files again from offset 0, errors,
 * and, where this machine has them, that one pread reads a whole sysfs or
 * cgroupfs file (the premise of ceems_fileio_pread_text_once); and its
 * whole-buffer writes through short writes, signals and a full pipe. */
#include "config.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/fileio.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

typedef ssize_t (*pread_text_fn)(int fd, char *buf, size_t size);

static const char *root;
static char label_buf[256];

/* The test name "FN: WHAT" (is_int and is_str take a plain string). */
static const char *
label(const char *fn, const char *what)
{
	snprintf(label_buf, sizeof(label_buf), "%s: %s", fn, what);
	return label_buf;
}

static int
open_rel(const char *rel, int flags)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return open(path, flags | O_CLOEXEC);
}

/* Write TEXT to REL and read it back through FN into an 8-byte buffer. */
static ssize_t
read_back(pread_text_fn fn, const char *rel, const char *text, char *buf)
{
	ssize_t n;
	int fd;

	tmptree_write(root, rel, text);
	fd = open_rel(rel, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = fn(fd, buf, 8);
	close(fd);
	return n;
}

static void
test_limits(pread_text_fn fn, const char *name)
{
	char buf[8];
	int fd;

	is_int(read_back(fn, "f", "abc\n", buf), 4, label(name, "a short file"));
	is_str(buf, "abc\n", label(name, "its text, NUL-terminated"));
	is_int(read_back(fn, "f", "", buf), 0, label(name, "an empty file"));
	is_str(buf, "", label(name, "empty text"));
	is_int(read_back(fn, "f", "1234567", buf), 7, label(name, "size - 1 bytes fit"));
	is_str(buf, "1234567", label(name, "all of them"));
	is_int(read_back(fn, "f", "12345678", buf), -EFBIG, label(name, "size bytes do not fit"));
	is_int(read_back(fn, "f", "a much longer file than the buffer\n", buf), -EFBIG,
	       label(name, "a longer file is -EFBIG, not cut"));

	/* Kept open and read again: from offset 0 whatever the position. */
	tmptree_write(root, "f", "1000\n");
	fd = open_rel("f", O_RDONLY);
	is_int(fn(fd, buf, sizeof(buf)), 5, label(name, "first read"));
	is_int(read(fd, buf, 3), 3, label(name, "the file position moved"));
	tmptree_write(root, "f", "20\n");
	is_int(fn(fd, buf, sizeof(buf)), 3, label(name, "rewritten in place, read again"));
	is_str(buf, "20\n", label(name, "the new, shorter text from offset 0"));
	is_int(fn(fd, buf, 0), -EINVAL, label(name, "no room for the NUL"));
	close(fd);

	is_int(fn(fd, buf, sizeof(buf)), -EBADF, label(name, "closed descriptor"));
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	is_int(fn(fd, buf, sizeof(buf)), -EISDIR, label(name, "a directory"));
	close(fd);
}

static size_t
count_lines(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* On this machine's own kernel files: one pread gets as many lines as
 * reading to the end does, ending in a newline.  Values may move between
 * the two reads; the lines of these files do not come and go. */
static void
test_kernel_files(void)
{
	static const char *const paths[] = {
		"/sys/devices/system/cpu/online",		/* sysfs */
		"/sys/fs/cgroup/memory/memory.stat",		/* cgroup v1 */
		"/sys/fs/cgroup/memory.stat",			/* cgroup v2 */
		"/sys/fs/cgroup/cpuacct/cpuacct.usage",
		"/sys/fs/cgroup/cpu.stat",
	};
	static char once[16384], whole[16384];
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);
		ssize_t n1, n2;

		if (fd < 0) {
			ok(1, "# SKIP kernel file %s: %s", paths[i], strerror(errno));
			continue;
		}
		n1 = ceems_fileio_pread_text_once(fd, once, sizeof(once));
		n2 = ceems_fileio_pread_text(fd, whole, sizeof(whole));
		close(fd);
		ok(n1 > 0 && n2 > 0 && once[n1 - 1] == '\n' &&
		   count_lines(once) == count_lines(whole),
		   "kernel file %s: one pread reads it whole (%zd, %zd bytes)",
		   paths[i], n1, n2);
	}
}

static void
test_mkdir_p(void)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/a/b/c", root);
	is_int(ceems_fileio_mkdir_p(path, 0700), 0, "mkdir_p: creates missing parents");
	ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700,
	   "mkdir_p: the leaf has the mode asked for");
	snprintf(path, sizeof(path), "%s/a/b", root);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0755, "mkdir_p: parents are 0755");
	is_int(ceems_fileio_mkdir_p(path, 0700), 0, "mkdir_p: an existing directory is fine");
	snprintf(path, sizeof(path), "%s/stat", root);
	is_int(ceems_fileio_mkdir_p(path, 0700), -ENOTDIR, "mkdir_p: a file in the way is an error");
	snprintf(path, sizeof(path), "%s/stat/x", root);
	is_int(ceems_fileio_mkdir_p(path, 0700), -ENOTDIR, "mkdir_p: a file as a parent is an error");
}

/* A directory of more entries than one getdents64 call returns into the
 * reader's buffer: each seen once, and again from the start. */
static void
test_dir_reader(void)
{
	static struct ceems_dir_reader r;
	const struct dirent64 *e;
	char dir[2048], name[2300];
	static bool seen[300];
	unsigned n, twice = 0;
	int fd;

	snprintf(dir, sizeof(dir), "%s/many", root);
	mkdir(dir, 0755);
	for (unsigned i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "%s/entry-%03u-%0100d", dir, i, 0);
		close(open(name, O_WRONLY | O_CREAT, 0644));
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	for (int pass = 0; pass < 2; pass++) {
		memset(seen, 0, sizeof(seen));
		n = 0;
		ceems_fileio_dir_open(&r, fd);
		while ((e = ceems_fileio_dir_next(&r)) != NULL) {
			unsigned i;

			if (e->d_name[0] == '.')
				continue;
			if (sscanf(e->d_name, "entry-%3u-", &i) != 1 || i >= 300 ||
			    e->d_type != DT_REG || seen[i])
				twice++;
			else
				seen[i] = true;
			n++;
		}
		ok(n == 300, "dir reader: pass %d lists each of 300 entries (>4 KiB of them)", pass + 1);
	}
	is_int(twice, 0, "dir reader: none twice, none malformed");
	close(fd);
	ceems_fileio_dir_open(&r, -1);
	ok(ceems_fileio_dir_next(&r) == NULL, "dir reader: a bad descriptor lists nothing");
}

static volatile sig_atomic_t alarms;

static void
on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A child that drains the pipe slowly, 4 KiB at a time, and exits 0 when
 * it read exactly LEN bytes of the pattern i % 251. */
static pid_t
slow_reader(int rfd, int wfd, size_t len)
{
	pid_t pid = fork();
	unsigned char buf[4096];
	size_t got = 0;
	bool same = true;

	if (pid != 0)
		return pid;
	close(wfd);
	for (;;) {
		ssize_t n = read(rfd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			same = same && buf[i] == (unsigned char)((got + (size_t)i) % 251);
		got += (size_t)n;
		usleep(200);
	}
	_exit(same && got == len ? 0 : 1);
}

/* 1 MiB into a pipe (64 KiB) whose reader is slow, under a 1-ms timer
 * whose handler does not restart system calls: the writes block, come
 * back short or with EINTR, and every byte still arrives once, in order. */
static void
test_write_all_signals(void)
{
	const size_t len = 1 << 20;
	unsigned char *buf = malloc(len);
	struct sigaction sa = { .sa_handler = on_alarm }, old;
	struct itimerval tick = { { 0, 1000 }, { 0, 1000 } }, stop = { { 0, 0 }, { 0, 0 } };
	int fds[2], status = -1, r;
	pid_t pid;

	if (!ok(buf != NULL && pipe(fds) == 0, "write_all: a buffer and a pipe")) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < len; i++)
		buf[i] = (unsigned char)(i % 251);
	pid = slow_reader(fds[0], fds[1], len);
	close(fds[0]);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarms = 0;
	setitimer(ITIMER_REAL, &tick, NULL);
	r = ceems_fileio_write_all(fds[1], buf, len);
	setitimer(ITIMER_REAL, &stop, NULL);
	sigaction(SIGALRM, &old, NULL);
	close(fds[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	is_int(r, 0, "write_all: 1 MiB through a slow pipe under signals");
	ok(alarms > 0, "write_all: signals came while it wrote (%d)", (int)alarms);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "write_all: the reader got every byte once, in order");
	free(buf);
}

/* A full non-blocking pipe is -EAGAIN, not a loop: what fit stays
 * written.  A bad descriptor and an empty buffer. */
static void
test_write_all_errors(void)
{
	static char buf[1 << 18];
	int fds[2], queued = -1, cap;

	if (!ok(pipe2(fds, O_NONBLOCK) == 0, "write_all: a non-blocking pipe"))
		return;
	cap = fcntl(fds[1], F_GETPIPE_SZ);
	is_int(ceems_fileio_write_all(fds[1], buf, sizeof(buf)), -EAGAIN,
	       "write_all: a full non-blocking pipe is -EAGAIN");
	ioctl(fds[0], FIONREAD, &queued);
	is_int(queued, cap, "write_all: what fit before it is still in the pipe");
	is_int(ceems_fileio_write_all(fds[1], buf, 0), 0,
	       "write_all: nothing to write is done at once");
	close(fds[0]);
	close(fds[1]);
	is_int(ceems_fileio_write_all(fds[1], "x", 1), -EBADF,
	       "write_all: a closed descriptor is -EBADF");
}

/* pwrite_all lands at its offset and leaves the file offset alone. */
static void
test_pwrite_all(void)
{
	char path[PATH_MAX], back[16] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/pwrite", root);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	is_int(ceems_fileio_pwrite_all(fd, "abcdef", 6, 100), 0,
	       "pwrite_all: six bytes at offset 100");
	is_int(pread(fd, back, 6, 100), 6, "pwrite_all: they read back");
	is_str(back, "abcdef", "pwrite_all: the same bytes");
	is_int(lseek(fd, 0, SEEK_CUR), 0, "pwrite_all: the file offset stays 0");
	memset(back, 0, sizeof(back));
	is_int(ceems_fileio_pread_all(fd, back, 6, 100), 0, "pread_all: six bytes at offset 100");
	is_str(back, "abcdef", "pread_all: the bytes pwrite_all wrote");
	is_int(ceems_fileio_pread_all(fd, back, 7, 100), -ENODATA,
	       "pread_all: a file that ends first is -ENODATA");
	is_int(ceems_fileio_pwrite_all(fd, "x", 1, -1), -EINVAL,
	       "pwrite_all: a negative offset is -EINVAL");
	close(fd);
	is_int(ceems_fileio_pwrite_all(fd, "x", 1, 0), -EBADF,
	       "pwrite_all: a closed descriptor is -EBADF");
}

int
main(void)
{
	/* A scratch directory; any small fixture tree will do. */
	root = tmptree_new(fixture_path("proc"));
	test_limits(ceems_fileio_pread_text, "pread_text");
	test_limits(ceems_fileio_pread_text_once, "pread_text_once");
	test_kernel_files();
	test_mkdir_p();
	test_dir_reader();
	test_write_all_signals();
	test_write_all_errors();
	test_pwrite_all();
	tmptree_remove(root);
	return done_testing();
}
