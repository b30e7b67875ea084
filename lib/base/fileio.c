/* fileio.c - bounded reads of kernel text files, whole-buffer writes. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/tick_path.h"

/* pread from offset 0 until end of file or LIMIT bytes.  The count, or
 * -errno. */
static ssize_t
pread_upto(int fd, char *buf, size_t limit)
{
	size_t used = 0;

	while (used < limit) {
		ssize_t n = pread(fd, buf + used, limit - used, (off_t)used);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	return (ssize_t)used;
}

/* One loop for write and pwrite, so that both keep one contract.  OFF
 * < 0 means write. */
static int
write_upto_end(int fd, const char *p, size_t len, off_t off)
{
	while (len > 0) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0) {
			errno = EIO;
			return -EIO;
		}
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int
ceems_fileio_write_all(int fd, const void *buf, size_t len)
{
	return write_upto_end(fd, buf, len, -1);
}

int
ceems_fileio_pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	if (off < 0)
		return -EINVAL;
	return write_upto_end(fd, buf, len, off);
}

int
ceems_fileio_pread_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len > 0) {
		ssize_t n = pread(fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* FD from offset 0 into BUF (SIZE bytes), NUL-terminated: the whole
 * file when WHOLE (-EFBIG when it does not fit), else as much as fits. */
static ssize_t
pread_nul(int fd, char *buf, size_t size, bool whole)
{
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	/* The whole file: one byte more than fits tells it does not. */
	n = pread_upto(fd, buf, whole ? size : size - 1);
	if (n < 0)
		return n;
	if ((size_t)n == size)
		return -EFBIG;
	buf[n] = '\0';
	return n;
}

ssize_t
ceems_fileio_pread_text(int fd, char *buf, size_t size)
{
	return pread_nul(fd, buf, size, true);
}

ssize_t
ceems_fileio_pread_head(int fd, char *buf, size_t size)
{
	return pread_nul(fd, buf, size, false);
}

CEEMS_TICK_PATH ssize_t
ceems_fileio_pread_text_once(int fd, char *buf, size_t size)
{
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	do {
		n = pread(fd, buf, size, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* No room left for the NUL: the file may go on past SIZE. */
	if ((size_t)n == size)
		return -EFBIG;
	buf[n] = '\0';
	return n;
}

ssize_t
ceems_fileio_read_text_file_at(int dirfd, const char *path, char *buf, size_t size)
{
	ssize_t ret;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ret = ceems_fileio_pread_text(fd, buf, size);
	close(fd);
	return ret;
}

ssize_t
ceems_fileio_read_text_file(const char *path, char *buf, size_t size)
{
	return ceems_fileio_read_text_file_at(AT_FDCWD, path, buf, size);
}

int
ceems_fileio_mkdir_p(const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	struct stat st;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	for (char *p = dir + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(dir, mode) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (stat(dir, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	return 0;
}

int
ceems_fileio_replace(const char *dir, const char *name, const char *text)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	size_t len = strlen(text);
	int fd, dfd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name) >= (int)sizeof(tmp) ||
	    snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = ceems_fileio_write_all(fd, text, len);
	if (err == 0 && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && err == 0)
		err = -errno;
	if (err == 0 && rename(tmp, path) < 0)
		err = -errno;
	if (err < 0) {
		(void)unlink(tmp);
		return err;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		(void)close(dfd);
	}
	return 0;
}

void
ceems_fileio_dir_open(struct ceems_dir_reader *r, int dirfd)
{
	r->fd = dirfd;
	r->len = r->pos = 0;
	if (lseek(dirfd, 0, SEEK_SET) < 0)
		r->fd = -1;
}

const struct dirent64 *
ceems_fileio_dir_next(struct ceems_dir_reader *r)
{
	const struct dirent64 *e;

	if (r->fd < 0)
		return NULL;
	if (r->pos >= r->len) {
		long n = syscall(SYS_getdents64, r->fd, r->buf, sizeof(r->buf));

		if (n <= 0) {
			r->fd = -1;
			return NULL;
		}
		r->len = (size_t)n;
		r->pos = 0;
	}
	e = (const struct dirent64 *)(const void *)(r->buf + r->pos);
	r->pos += e->d_reclen;
	return e;
}

int
ceems_fileio_open_made_dir(const char *path, mode_t mode, struct stat *st)
{
	int fd, err;

	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0) {
		err = errno;
		(void)close(fd);
		errno = err;
		return -1;
	}
	return fd;
}
