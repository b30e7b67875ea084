/* spool_usage.c - the spool's size and record count for the soft cap
 * (spool_usage.h).
 *
 * Every record written to the spool checks the cap.  Listing the spool
 * for that made filling a spool of N records cost N^2/2 stat calls: a
 * long database outage on a busy node got slower with every job.  The
 * figures are kept instead in SPOOL/.usage, "BYTES COUNT SEC NSEC\n",
 * with the directory's modification time right after the change they
 * account for.  A writer locks the file (flock), trusts it only when
 * the directory has not changed since, and otherwise lists the
 * directory once; the writes and removals of spool.c update it, so a
 * spool filled or drained through libceems is listed once, not once per
 * record.  A change made by anything else (an admin's rm, a quarantine)
 * moves the directory's time, and the next writer lists again.  The
 * figure only decides a log line (the cap is soft), so a stale figure
 * (a filesystem with coarse timestamps) costs an early or late warning,
 * never a record.
 *
 * The lock is waited for only USAGE_LOCK_WAIT_MS: writers include the
 * plugin at a job's end in slurmstepd, and a holder that is stopped or
 * stuck (a replay process in uninterruptible sleep, one under a
 * debugger) must not hold every job's end on the node (invariant 1).
 * Past that the writer lists the spool itself and leaves the file alone;
 * the holder may then record figures short of that one record, which
 * again only moves a warning. */
#include "config.h"

#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/log.h"
#include "record/spool.h"
#include "record/spool_usage.h"

#define USAGE_LOCK_WAIT_MS 200
#define USAGE_LOCK_POLL_MS 2

static uint64_t entries_examined;

uint64_t
ceems_spool_usage_entries_examined(void)
{
	return entries_examined;
}

/* Same rule as spool.c: a record is NAME.json, not hidden. */
static int
is_record(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && len < CEEMS_SPOOL_NAME_MAX &&
	       strcmp(name + len - 5, ".json") == 0;
}

static void
list_spool(int dfd, uint64_t *bytes, uint64_t *count)
{
	int fd = dup(dfd);
	DIR *d;
	struct dirent *e;

	*bytes = 0;
	*count = 0;
	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (d == NULL) {
		close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d)) != NULL) {
		struct stat st;

		entries_examined++;
		if (!is_record(e->d_name) ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		*bytes += (uint64_t)st.st_size;
		(*count)++;
	}
	closedir(d);
}

static int
parse_u64(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

int
ceems_spool_usage_parse(const char *buf, size_t len, uint64_t *bytes,
		  uint64_t *count, int64_t *sec, long *nsec)
{
	const char *p = buf, *end = buf + len;
	uint64_t v[4];

	for (int i = 0; i < 4; i++) {
		if (parse_u64(&p, end, &v[i]) < 0)
			return -1;
		if (p >= end || *p != (i < 3 ? ' ' : '\n'))
			return -1;
		p++;
	}
	if (p != end || v[2] > INT64_MAX || v[3] >= 1000000000)
		return -1;
	*bytes = v[0];
	*count = v[1];
	*sec = (int64_t)v[2];
	*nsec = (long)v[3];
	return 0;
}

/* flock(LOCK_EX) on FD, waiting USAGE_LOCK_WAIT_MS at most.  0 or -1. */
static int
lock_bounded(int fd)
{
	const struct timespec poll_ts = { 0, USAGE_LOCK_POLL_MS * 1000000L };

	for (int waited = 0;; waited += USAGE_LOCK_POLL_MS) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		if ((errno != EWOULDBLOCK && errno != EINTR) ||
		    waited >= USAGE_LOCK_WAIT_MS)
			return -1;
		(void)nanosleep(&poll_ts, NULL);
	}
}

void
ceems_spool_usage_begin(int dfd, struct spool_usage *u)
{
	char buf[128];
	struct stat dst;
	ssize_t n;
	int64_t sec;
	long nsec;

	u->bytes = 0;
	u->count = 0;
	u->fd = openat(dfd, SPOOL_USAGE_FILE, O_RDWR | O_CREAT | O_NOFOLLOW |
		       O_CLOEXEC, 0640);
	if (u->fd >= 0 && lock_bounded(u->fd) < 0) {
		ceems_debug("spool: %s stays locked by another writer: the "
			    "spool is listed instead", SPOOL_USAGE_FILE);
		close(u->fd);
		u->fd = -1;
	}
	if (u->fd >= 0 && fstat(dfd, &dst) == 0 &&
	    (n = pread(u->fd, buf, sizeof(buf), 0)) > 0 &&
	    ceems_spool_usage_parse(buf, (size_t)n, &u->bytes, &u->count, &sec,
			      &nsec) == 0 &&
	    sec == (int64_t)dst.st_mtim.tv_sec && nsec == dst.st_mtim.tv_nsec)
		return;
	list_spool(dfd, &u->bytes, &u->count);
}

void
ceems_spool_usage_end(int dfd, struct spool_usage *u, int64_t dbytes,
		int64_t dcount)
{
	char buf[128];
	struct stat dst;
	int n;

	if (u->fd < 0)
		return;
	u->bytes = dbytes < 0 && (uint64_t)-dbytes > u->bytes ? 0 :
		   u->bytes + (uint64_t)dbytes;
	u->count = dcount < 0 && (uint64_t)-dcount > u->count ? 0 :
		   u->count + (uint64_t)dcount;
	/* Written in place: a new file or a rename would move the
	 * directory's time again.  Not synced: after a crash the figures
	 * are either current or older than the directory, then listed. */
	if (fstat(dfd, &dst) == 0) {
		n = snprintf(buf, sizeof(buf), "%llu %llu %lld %ld\n",
			     (unsigned long long)u->bytes,
			     (unsigned long long)u->count,
			     (long long)dst.st_mtim.tv_sec,
			     (long)dst.st_mtim.tv_nsec);
		if (n > 0 && (size_t)n < sizeof(buf) &&
		    (ceems_fileio_pwrite_all(u->fd, buf, (size_t)n, 0) < 0 ||
		     ftruncate(u->fd, n) < 0) &&
		    ftruncate(u->fd, 0) < 0)
			/* Unparsable either way: listed next time. */
			ceems_debug("spool: cannot update %s: %s",
				    SPOOL_USAGE_FILE, strerror(errno));
	}
	close(u->fd);	/* releases the lock */
	u->fd = -1;
}
