/* sacct_spool.h - ceems-sacct's backend when no database is configured:
 * the job records of the spool directory (lib/record/spool.h), read through a
 * directory descriptor, every file opened relative to it by the name the
 * directory lists, without following symlinks.  An installation may make
 * ceems-sacct setgid to the group owning the spool: the group is held
 * only while this reads the spool, and records not the caller's are
 * dropped as they are decoded (doc/install.md). */
#ifndef CEEMS_SACCT_SPOOL_H
#define CEEMS_SACCT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "sacct_query.h"

/* Open DIR.  Returns a descriptor, -ENOENT for a missing directory (an
 * empty spool), or another -errno with ERR filled. */
int sacct_spool_open(const char *dir, char *err, size_t err_size);

/* Read the records of the spool at DIRFD that Q may select (owned by
 * Q->only_uid unless UINT32_MAX; of its clusters and jobs, started before
 * its window's end) into RECS, sorted, each with its optional "series"
 * member.  Files that cannot be read or decoded are skipped and counted
 * in *SKIPPED.  Returns 0 or -errno with ERR. */
int sacct_spool_load(int dirfd, const struct sacct_query *q,
		     struct sacct_records *recs, size_t *skipped, char *err,
		     size_t err_size);

/* Parse a record's "series" member (its JSON text, LEN bytes) into S.
 * Pure: for the tests and the fuzz target.  0 or -1 with ERR. */
int sacct_spool_series_parse(const char *text, size_t len, struct sacct_series *s,
		       char *err, size_t err_size);

#endif
