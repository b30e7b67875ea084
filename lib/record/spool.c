/* spool.c - the durable spool of job records: crash-safe writes, the
 * soft size cap, the rejected folder, and the reader the replay and
 * ceems-sacct share (spool.h, doc/storage.md).
 *
 * Every operation works relative to a descriptor of the spool directory,
 * and every file is opened with O_NOFOLLOW: the spool is written as root
 * (slurmstepd), so no symlink planted in it may redirect a write. */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/log.h"
#include "record/spool.h"
#include "record/spool_usage.h"

#define TEMP_PREFIX ".tmp."
#define WHY_SUFFIX ".why"
/* Log lines are cut at 1024 bytes (log.c): a record is logged in pieces
 * well below that, prefix included. */
#define LOG_PIECE 768

__attribute__((format(printf, 3, 4))) static int
fail(char *err, size_t err_size, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	errno = saved;
	return -1;
}

/* Cluster and node names come from Slurm: keep them file-name safe. */
static void
sanitize(char *out, size_t size, const char *in)
{
	size_t n = 0;

	for (; *in != '\0' && n + 1 < size && n < 64; in++) {
		char c = *in;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
			out[n++] = c;
		else
			out[n++] = '_';
	}
	if (n == 0 && size > 1)
		out[n++] = '_';
	out[n] = '\0';
}

int
ceems_spool_name(const struct ceems_job_record *r, char *name, size_t size)
{
	char cluster[72], node[72];
	int n;

	sanitize(cluster, sizeof(cluster), r->meta.cluster);
	sanitize(node, sizeof(node), r->meta.node);
	n = snprintf(name, size, "%012lld-%s-%u-%lld-%s.json",
		     (long long)(r->written_at > 0 ? r->written_at : 0), cluster,
		     (unsigned)r->meta.jobid,
		     (long long)(r->meta.start_time > 0 ? r->meta.start_time : 0),
		     node);
	if (n < 0 || (size_t)n >= size || (size_t)n >= CEEMS_SPOOL_NAME_MAX)
		return -ENAMETOOLONG;
	return 0;
}

bool
ceems_spool_is_record_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && len < CEEMS_SPOOL_NAME_MAX &&
	       strcmp(name + len - 5, ".json") == 0;
}

/* Open DIR, creating it (one level, 0750) when CREATE and missing. */
static int
open_dir(const char *dir, bool create)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT && create) {
		if (mkdir(dir, 0750) < 0 && errno != EEXIST)
			return -1;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	return fd;
}

/* The rejected folder under the spool descriptor DFD. */
static int
open_rejected(int dfd)
{
	int fd;

	if (mkdirat(dfd, CEEMS_SPOOL_REJECTED, 0750) < 0 && errno != EEXIST)
		return -1;
	fd = openat(dfd, CEEMS_SPOOL_REJECTED,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd;
}

/* The I-th name for NAME that link_to_new_name tries: NAME itself, then
 * "~NN" before its extension ("x~01.json" sorts after "x.json"). */
static int
candidate_name(const char *name, int i, char *out, size_t size)
{
	const char *dot = strrchr(name, '.');
	size_t base = dot != NULL && dot != name ? (size_t)(dot - name) : strlen(name);
	int n;

	if (i == 0)
		n = snprintf(out, size, "%s", name);
	else
		n = snprintf(out, size, "%.*s~%02d%s", (int)base, name, i, name + base);
	if (n < 0 || (size_t)n >= size || (size_t)n >= CEEMS_SPOOL_NAME_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* Link FROM (in FROM_FD) as NAME in TO_FD without replacing anything: a
 * record already there under that name (the same job finalized twice
 * within a second) is kept, and this one gets another name.  FINAL
 * receives the name used. */
static int
link_to_new_name(int from_fd, const char *from, int to_fd, const char *name,
		 char *final, size_t final_size)
{
	for (int i = 0; i < 100; i++) {
		if (candidate_name(name, i, final, final_size) < 0)
			return -1;
		if (linkat(from_fd, from, to_fd, final, 0) == 0)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

/* The durable write: TEXT plus a newline into a new temporary file,
 * fsync, link under NAME (or NAME~NN), remove the temporary name, fsync
 * the directory.  Returns 0 with FINAL set, or -1 with errno (nothing
 * left behind). */
static int
durable_write(int dfd, const char *name, const char *text, size_t len,
	      char *final, size_t final_size)
{
	static unsigned counter;
	char temp[CEEMS_SPOOL_NAME_MAX + 48];
	int fd = -1, saved;

	for (int tries = 0; fd < 0; tries++) {
		snprintf(temp, sizeof(temp), TEMP_PREFIX "%ld.%u.%s", (long)getpid(),
			 counter++, name);
		fd = openat(dfd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			    O_CLOEXEC, 0640);
		if (fd < 0 && (errno != EEXIST || tries > 16))
			return -1;
	}
	if (ceems_fileio_write_all(fd, text, len) < 0 ||
	    ceems_fileio_write_all(fd, "\n", 1) < 0 || fsync(fd) < 0)
		goto fail;
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (link_to_new_name(dfd, temp, dfd, name, final, final_size) < 0)
		goto fail;
	/* Both names are the same file now: dropping the temporary one
	 * cannot lose the record. */
	unlinkat(dfd, temp, 0);
	if (fsync(dfd) < 0) {
		saved = errno;
		unlinkat(dfd, final, 0);
		fsync(dfd);
		errno = saved;
		return -1;
	}
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	unlinkat(dfd, temp, 0);
	errno = saved;
	return -1;
}

/* NAME.why beside a rejected record: when and why. */
static int
write_why(int rfd, const char *name, const char *why)
{
	char whyname[CEEMS_SPOOL_NAME_MAX + 8], text[1200], stamp[32], dummy[CEEMS_SPOOL_NAME_MAX + 8];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	snprintf(whyname, sizeof(whyname), "%s" WHY_SUFFIX, name);
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(stamp, sizeof(stamp), "%lld", (long long)now);
	n = snprintf(text, sizeof(text), "%s %s", stamp, why);
	if (n < 0)
		return -1;
	if ((size_t)n >= sizeof(text))
		n = (int)sizeof(text) - 1;
	/* A .why of the same name from an earlier rejection is replaced:
	 * it described a record no longer there under that name. */
	unlinkat(rfd, whyname, 0);
	return durable_write(rfd, whyname, text, (size_t)n, dummy, sizeof(dummy));
}

/* R's file name into BASE (CEEMS_SPOOL_NAME_MAX bytes), and DIR opened
 * (created when missing) to write it in: the descriptor, or -errno
 * with ERR filled. */
static int
open_for_record(const char *dir, const struct ceems_job_record *r,
		char *base, char *err, size_t err_size)
{
	int dfd, ret;

	if (ceems_spool_name(r, base, CEEMS_SPOOL_NAME_MAX) < 0) {
		errno = ENAMETOOLONG;
		fail(err, err_size, "job %u: no spool file name fits", r->meta.jobid);
		return -ENAMETOOLONG;
	}
	dfd = open_dir(dir, true);
	if (dfd < 0) {
		ret = -errno;
		fail(err, err_size, "spool %s: %s", dir, strerror(errno));
		return ret;
	}
	return dfd;
}

int
ceems_spool_put(const char *dir, uint64_t max_bytes,
		const struct ceems_job_record *r, const char *text, size_t len,
		char *name, size_t name_size, char *err, size_t err_size)
{
	char base[CEEMS_SPOOL_NAME_MAX];
	struct spool_usage usage;
	int dfd, ret = 0;

	if ((dfd = open_for_record(dir, r, base, err, err_size)) < 0)
		return dfd;
	ceems_spool_usage_begin(dfd, &usage);
	if (usage.bytes + len + 1 > max_bytes)
		/* Soft cap: the record is written all the same (dropping it
		 * would lose a job); the filesystem is the hard limit. */
		ceems_error("spool %s holds %llu bytes in %llu records, over its "
			    "spool_max_bytes of %llu: job %u's record is written "
			    "anyway (none is dropped); the records wait for the "
			    "database: check that it is reachable, or raise the cap",
			    dir, (unsigned long long)usage.bytes,
			    (unsigned long long)usage.count,
			    (unsigned long long)max_bytes, (unsigned)r->meta.jobid);
	if (durable_write(dfd, base, text, len, name, name_size) < 0) {
		ret = -errno;
		fail(err, err_size, "spool %s: cannot write %s: %s", dir, base,
		     strerror(errno));
		ceems_spool_usage_end(dfd, &usage, 0, 0);
	} else
		ceems_spool_usage_end(dfd, &usage, (int64_t)len + 1, 1);
	close(dfd);
	return ret;
}

int
ceems_spool_reject(const char *dir, const struct ceems_job_record *r,
		   const char *text, size_t len, const char *why, char *name,
		   size_t name_size, char *err, size_t err_size)
{
	char base[CEEMS_SPOOL_NAME_MAX];
	int dfd, rfd, ret = 0;

	if ((dfd = open_for_record(dir, r, base, err, err_size)) < 0)
		return dfd;
	rfd = open_rejected(dfd);
	if (rfd < 0) {
		ret = -errno;
		fail(err, err_size, "spool %s/%s: %s", dir, CEEMS_SPOOL_REJECTED,
		     strerror(errno));
		close(dfd);
		return ret;
	}
	if (durable_write(rfd, base, text, len, name, name_size) < 0) {
		ret = -errno;
		fail(err, err_size, "spool %s/%s: cannot write %s: %s", dir,
		     CEEMS_SPOOL_REJECTED, base, strerror(errno));
	} else if (write_why(rfd, name, why) < 0) {
		/* The record is safe; only the explanation is missing. */
		ceems_warning("spool %s/%s: cannot write %s" WHY_SUFFIX ": %s (it was "
			      "rejected because: %s)", dir, CEEMS_SPOOL_REJECTED, name,
			      strerror(errno), why);
	}
	close(rfd);
	close(dfd);
	return ret;
}

void
ceems_spool_log_record(const char *tag, const char *text, size_t len)
{
	size_t pieces = 0, off;

	/* Pieces end on a character boundary: never inside a UTF-8
	 * sequence (a job name may hold any). */
	for (off = 0; off < len; pieces++) {
		size_t n = len - off > LOG_PIECE ? LOG_PIECE : len - off;

		while (n > 1 && off + n < len &&
		       ((unsigned char)text[off + n] & 0xc0) == 0x80)
			n--;
		off += n;
	}
	ceems_error("ceems-record %s: the record could not be written anywhere; "
		    "it follows whole in %zu line%s: concatenate the text after "
		    "'part I/N: ' of each in order to get its JSON back, then "
		    "put it into the spool directory as %s",
		    tag, pieces, pieces == 1 ? "" : "s", tag);
	off = 0;
	for (size_t i = 1; off < len; i++) {
		size_t n = len - off > LOG_PIECE ? LOG_PIECE : len - off;

		while (n > 1 && off + n < len &&
		       ((unsigned char)text[off + n] & 0xc0) == 0x80)
			n--;
		ceems_error("ceems-record %s part %zu/%zu: %.*s", tag, i, pieces,
			    (int)n, text + off);
		off += n;
	}
}

/* ---- reader ---- */

static int
compare_names(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Sort LIST's names, oldest first, and keep the OLDEST first (all when
 * OLDEST is 0). */
static void
list_sort(struct ceems_spool_list *list, size_t oldest)
{
	if (list->count > 1)	/* an empty list has no array at all */
		qsort(list->names, list->count, sizeof(list->names[0]),
		      compare_names);
	if (oldest > 0 && list->count > oldest)
		list->count = oldest;
}

/* Add NAME to LIST (*CAP names allocated).  Names are appended and sorted
 * in bulk: readdir gives them in a hash's order, and keeping the list
 * sorted at each name moved half of it every time (a second and a half
 * to list 20,000 records).  With a bound (OLDEST > 0) the list is cut
 * back to the OLDEST first each time it holds twice as many; after a
 * cut, a name younger than all those kept is not added.  0 or -ENOMEM. */
static int
list_add(struct ceems_spool_list *list, size_t *cap, size_t oldest,
	 bool *cut, const char *name)
{
	if (*cut && strcmp(name, list->names[oldest - 1]) >= 0)
		return 0;	/* younger than all kept: the usual case */
	if (list->count == *cap) {
		size_t ncap = *cap == 0 ? 64 : *cap * 2;
		void *p;

		if (oldest > 0 && ncap > 2 * oldest)
			ncap = 2 * oldest;
		p = realloc(list->names, ncap * sizeof(list->names[0]));
		if (p == NULL)
			return -ENOMEM;
		list->names = p;
		*cap = ncap;
	}
	snprintf(list->names[list->count], CEEMS_SPOOL_NAME_MAX, "%s", name);
	list->count++;
	if (oldest > 0 && list->count == 2 * oldest) {
		list_sort(list, oldest);
		*cut = true;
	}
	return 0;
}

/* DIR opened for reading its entries: 0 with *D, or with *D NULL when
 * DIR is missing (an empty spool); -errno. */
static int
open_listing(const char *dir, DIR **d)
{
	int dfd, ret;

	*d = NULL;
	dfd = open_dir(dir, false);
	if (dfd < 0)
		return errno == ENOENT ? 0 : -errno;
	if ((*d = fdopendir(dfd)) == NULL) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	return 0;
}

/* Whether the entry E of DFD is a regular file: the type readdir gives
 * where the file system says (a stat per record made the replay's list
 * of a large spool cost more than storing it), else lstat's. */
static bool
is_regular(int dfd, const struct dirent *e)
{
	struct stat st;

	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_REG;
	return fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode);
}

int
ceems_spool_list(const char *dir, size_t oldest, struct ceems_spool_list *list)
{
	size_t cap = 0;
	bool cut = false;
	struct dirent *e;
	DIR *d;
	int dfd, ret;

	memset(list, 0, sizeof(*list));
	if ((ret = open_listing(dir, &d)) < 0 || d == NULL)
		return ret;
	dfd = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		if (!ceems_spool_is_record_name(e->d_name) || !is_regular(dfd, e))
			continue;
		list->total++;
		if (list_add(list, &cap, oldest, &cut, e->d_name) < 0) {
			closedir(d);
			ceems_spool_list_free(list);
			return -ENOMEM;
		}
	}
	closedir(d);
	list_sort(list, oldest);
	return 0;
}

void
ceems_spool_list_free(struct ceems_spool_list *list)
{
	free(list->names);
	memset(list, 0, sizeof(*list));
}

/* What kind of file MODE is, for the message that refuses it. */
static const char *
file_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	return "not a regular file";
}

ssize_t
ceems_spool_read_file(int dfd, const char *name, char *text, size_t size,
		      char *err, size_t err_size)
{
	struct stat st;
	ssize_t n;
	int fd;

	/* O_NONBLOCK: opening a FIFO named like a record must not wait
	 * for a writer (it would stall the replay); a regular file's
	 * reads ignore it. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK |
		    O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		fail(err, err_size, "%s, not a regular file: only the agent's "
		     "records belong in the spool", file_kind(st.st_mode));
		return -EINVAL;
	}
	n = ceems_fileio_pread_text(fd, text, size);
	close(fd);
	if (n == -EFBIG) {
		fail(err, err_size, "larger than a record can be (%d bytes)",
		     CEEMS_RECORD_MAX);
		return -EINVAL;
	}
	if (n < 0)
		return n;
	if (strlen(text) != (size_t)n) {
		fail(err, err_size, "a NUL byte in the file");
		return -EINVAL;
	}
	if (n == 0) {
		fail(err, err_size, "empty file");
		return -EINVAL;
	}
	return n;
}

int
ceems_spool_read(const char *dir, const char *name,
		 struct ceems_job_record *r, char *text, size_t size,
		 size_t *len, char *err, size_t err_size)
{
	ssize_t n;
	int dfd;

	if (!ceems_spool_is_record_name(name) || strchr(name, '/') != NULL) {
		fail(err, err_size, "%s is not a spool record name", name);
		return -EINVAL;
	}
	dfd = open_dir(dir, false);
	if (dfd < 0)
		return -errno;
	n = ceems_spool_read_file(dfd, name, text, size, err, err_size);
	close(dfd);
	if (n < 0)
		return (int)n;
	if (ceems_record_decode(text, (size_t)n, r, err, err_size) < 0)
		return -EINVAL;
	*len = (size_t)n;
	return 0;
}

int
ceems_spool_remove(const char *dir, const char *name)
{
	struct spool_usage usage;
	struct stat st;
	int dfd, ret = 0;

	if (!ceems_spool_is_record_name(name) || strchr(name, '/') != NULL)
		return -EINVAL;
	dfd = open_dir(dir, false);
	if (dfd < 0)
		return -errno;
	ceems_spool_usage_begin(dfd, &usage);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    unlinkat(dfd, name, 0) < 0) {
		ret = -errno;
		ceems_spool_usage_end(dfd, &usage, 0, 0);
	} else {
		ceems_spool_usage_end(dfd, &usage, S_ISREG(st.st_mode) ?
				-(int64_t)st.st_size : 0,
				S_ISREG(st.st_mode) ? -1 : 0);
		if (fsync(dfd) < 0)
			ret = -errno;
	}
	close(dfd);
	return ret;
}

int
ceems_spool_remove_stored(const char *dir, const char *const *names, size_t n,
			  int *results)
{
	struct spool_usage usage;
	struct stat st;
	int64_t bytes = 0, count = 0;
	int dfd, first = 0;

	dfd = open_dir(dir, false);
	if (dfd < 0) {
		first = -errno;
		for (size_t i = 0; results != NULL && i < n; i++)
			results[i] = first;
		return first;
	}
	ceems_spool_usage_begin(dfd, &usage);
	for (size_t i = 0; i < n; i++) {
		int r = 0;

		if (!ceems_spool_is_record_name(names[i]) || strchr(names[i], '/') != NULL)
			r = -EINVAL;
		else if (fstatat(dfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			 unlinkat(dfd, names[i], 0) < 0)
			r = -errno;
		else if (S_ISREG(st.st_mode)) {
			bytes -= (int64_t)st.st_size;
			count--;
		}
		if (results != NULL)
			results[i] = r;
		if (r < 0 && first == 0)
			first = r;
	}
	ceems_spool_usage_end(dfd, &usage, bytes, count);
	if (fsync(dfd) < 0 && first == 0)
		first = -errno;
	close(dfd);
	return first;
}

/* Move NAME of DFD into RFD under a name not in use there; FINAL
 * receives it.  Link then unlink: rename would replace a file there. */
static int
move_to_rejected(int dfd, int rfd, const char *name, char *final,
		 size_t final_size)
{
	if (link_to_new_name(dfd, name, rfd, name, final, final_size) < 0 ||
	    fsync(rfd) < 0 || unlinkat(dfd, name, 0) < 0 || fsync(dfd) < 0)
		return -1;
	return 0;
}

int
ceems_spool_quarantine(const char *dir, const char *name, const char *why)
{
	char final[CEEMS_SPOOL_NAME_MAX + 8];
	int dfd, rfd, ret = 0;

	if (name[0] == '\0' || strchr(name, '/') != NULL ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
	    strlen(name) >= CEEMS_SPOOL_NAME_MAX)
		return -EINVAL;
	dfd = open_dir(dir, false);
	if (dfd < 0)
		return -errno;
	rfd = open_rejected(dfd);
	if (rfd < 0) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	if (move_to_rejected(dfd, rfd, name, final, sizeof(final)) < 0)
		ret = -errno;
	else if (write_why(rfd, final, why) < 0)
		ceems_warning("spool %s/%s: cannot write %s" WHY_SUFFIX ": %s (it was "
			      "set aside because: %s)", dir, CEEMS_SPOOL_REJECTED,
			      final, strerror(errno), why);
	if (ret == 0)
		ceems_warning("spool %s: %s set aside in %s/: %s", dir, name,
			      CEEMS_SPOOL_REJECTED, why);
	close(rfd);
	close(dfd);
	return ret;
}

int
ceems_spool_sweep(const char *dir, int64_t age_s)
{
	char names[16][CEEMS_SPOOL_NAME_MAX];
	time_t now = time(NULL);
	struct dirent *e;
	size_t n = 0;
	int found = 0;
	DIR *d;
	int dfd, ret;

	if ((ret = open_listing(dir, &d)) < 0 || d == NULL)
		return ret;
	dfd = dirfd(d);
	/* At most 16 a call: the sweep is bounded work like the replay. */
	while ((e = readdir(d)) != NULL && n < 16) {
		struct stat st;

		if (strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) != 0 ||
		    strlen(e->d_name) >= CEEMS_SPOOL_NAME_MAX ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || now - st.st_mtime < age_s)
			continue;
		snprintf(names[n++], CEEMS_SPOOL_NAME_MAX, "%s", e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		if (ceems_spool_quarantine(dir, names[i],
					   "a temporary file left by a write that "
					   "never finished (a crash?): it may hold "
					   "a whole record") == 0)
			found++;
	return found;
}
