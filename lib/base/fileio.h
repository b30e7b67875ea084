/* fileio.h - small, bounded reads of kernel-provided text files
 * (/proc, sysfs, cgroupfs): no symlink following, no unbounded buffers;
 * and the one whole-buffer write (write_all, pwrite_all) every writer
 * uses. */
#ifndef CEEMS_FILEIO_H
#define CEEMS_FILEIO_H

#include <dirent.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stddef.h>

/* Read the whole file PATH into BUF (SIZE bytes, NUL-terminated).
 * Returns the length read, or -errno.  A file that does not fit is
 * -EFBIG: a truncated kernel file would be misparsed. */
ssize_t ceems_fileio_read_text_file(const char *path, char *buf, size_t size);

/* Same, relative to the directory descriptor DIRFD. */
ssize_t ceems_fileio_read_text_file_at(int dirfd, const char *path, char *buf,
				size_t size);

/* pread the whole of an already open FD from offset 0 (counter files are
 * kept open and re-read every tick).  Same return convention.  It reads
 * until pread returns 0, so a file that comes in pieces (/proc/stat,
 * /proc/meminfo on a large machine) is read whole. */
ssize_t ceems_fileio_pread_text(int fd, char *buf, size_t size);

/* The first SIZE - 1 bytes of FD at most, NUL-terminated: a full buffer
 * is not an error (the caller tells whether it has read enough, e.g.
 * all the cpu lines of /proc/stat).  The length, or -errno. */
ssize_t ceems_fileio_pread_head(int fd, char *buf, size_t size);

/* The same with a single pread, for sysfs attributes and cgroupfs
 * counter files only: each is produced by one show() call and handed
 * over whole when the buffer is larger, so a read that does not fill BUF
 * is the whole file and the second, empty pread of ceems_fileio_pread_text is
 * saved.  Same return convention: a file of SIZE bytes or more is
 * -EFBIG.  Not for /proc files, which may come in page-sized pieces. */
ssize_t ceems_fileio_pread_text_once(int fd, char *buf, size_t size);

/* Write all LEN bytes of BUF to FD, as OpenSSH's atomicio does: a
 * short write goes on from where it stopped, EINTR is tried again.  0,
 * or -errno of the first other failure (-EAGAIN on a non-blocking FD
 * that is full: the caller decides whether to wait), or -EIO when the
 * kernel wrote nothing and said no error; errno is set to the same, for
 * callers that pass errno on.  What was written before a failure stays
 * written. */
int ceems_fileio_write_all(int fd, const void *buf, size_t len);

/* The same with pwrite at offset OFF, the file offset left alone. */
int ceems_fileio_pwrite_all(int fd, const void *buf, size_t len, off_t off);

/* Read exactly LEN bytes of FD at offset OFF into BUF: a short read goes
 * on, EINTR is tried again.  0, -errno, or -ENODATA when the file ends
 * before LEN bytes (a record cut short is not a record). */
int ceems_fileio_pread_all(int fd, void *buf, size_t len, off_t off);

/* TEXT into DIR/NAME (mode 0600), whole or not at all: a new file
 * (never one found at the temporary name DIR/.NAME.tmp), synced, renamed
 * over the old, and the directory synced so that the rename survives a
 * crash.  0 or -errno. */
int ceems_fileio_replace(const char *dir, const char *name, const char *text);

/* The entries of a directory, read with getdents64 into a buffer of
 * the reader's own: no allocation, so that the agent's ticks may list a
 * directory (opendir's stream is malloc'ed).  The directory's descriptor
 * stays the caller's, usable with openat meanwhile. */
struct ceems_dir_reader {
	int fd;
	size_t len, pos;
	/* The kernel's records are 8-byte aligned within it. */
	_Alignas(8) char buf[4096];
};

/* Start reading the directory open on DIRFD from its first entry. */
void ceems_fileio_dir_open(struct ceems_dir_reader *r, int dirfd);
/* Its next entry (d_name, d_type), NULL at the end or on an error. */
const struct dirent64 *ceems_fileio_dir_next(struct ceems_dir_reader *r);

/* Create directory PATH with MODE, and its missing parents with 0755
 * (like mkdir -p).  An existing directory is fine.  0 or -errno. */
int ceems_fileio_mkdir_p(const char *path, mode_t mode);

/* Make directory PATH with MODE unless it exists, open it (a link is not
 * followed) and stat it into ST, for the caller to judge its owner and
 * mode: its descriptor, or -1 with errno set. */
int ceems_fileio_open_made_dir(const char *path, mode_t mode, struct stat *st);

#endif
