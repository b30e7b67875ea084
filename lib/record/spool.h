/* spool.h - the durable spool of job records (config spool_dir): one
 * JSON file per record (doc/record-format.md), written so that a crash or
 * a power cut leaves either the whole record or none of it (temporary
 * file, fsync, link, fsync of the directory).  Records wait here for
 * PostgreSQL (the node agent replays them, lib/record/replay.h), or stay here
 * for good when no database is configured: ceems-sacct then reads them
 * with the reader below.  What must not be stored (invalid records,
 * records the database refuses, corrupted files) is kept in the
 * "rejected" folder with a NAME.why file: nothing is ever dropped
 * (design invariant 3).  The size cap and what happens at it are
 * documented in doc/storage.md. */
#ifndef CEEMS_SPOOL_H
#define CEEMS_SPOOL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "record/record.h"

#define CEEMS_SPOOL_REJECTED "rejected"
#define CEEMS_SPOOL_NAME_MAX 256

/* The spool's file name of R: "<written_at>-<cluster>-<jobid>-<start>-
 * <node>.json", written_at zero-padded to 12 digits so that names sort
 * by time, cluster and node reduced to [A-Za-z0-9._-].  Returns 0 or
 * -ENAMETOOLONG. */
int ceems_spool_name(const struct ceems_job_record *r, char *name,
		     size_t size);

/* Whether NAME, as a directory lists it, is a record's: not hidden (no
 * temporary file), ending in ".json", shorter than CEEMS_SPOOL_NAME_MAX.
 * The replay and ceems-sacct read the same files. */
bool ceems_spool_is_record_name(const char *name);

/* Write TEXT (LEN bytes: R's JSON) durably into DIR (created, mode 0750,
 * when missing).  MAX_BYTES is a soft cap: a record that brings the
 * spool past it is written all the same, with an error logged.  The file
 * name goes to NAME.  Returns 0, or -errno with ERR filled (ENOSPC and
 * EDQUOT when the filesystem is full): nothing was written then, and the
 * caller still holds the only copy (see ceems_spool_log_record). */
int ceems_spool_put(const char *dir, uint64_t max_bytes,
		    const struct ceems_job_record *r, const char *text,
		    size_t len, char *name, size_t name_size, char *err,
		    size_t err_size);

/* Keep a record that must not be stored into DIR/rejected/, durably,
 * with NAME.why holding WHY.  Same conventions as ceems_spool_put. */
int ceems_spool_reject(const char *dir, const struct ceems_job_record *r,
		       const char *text, size_t len, const char *why,
		       char *name, size_t name_size, char *err,
		       size_t err_size);

/* The last resort when no file could be written: log TEXT whole at error
 * level, cut into lines "ceems-record TAG part I/N: ..." that the log
 * keeps whole; concatenated in order they give the JSON back. */
void ceems_spool_log_record(const char *tag, const char *text, size_t len);

/* ---- reader (the replay, ceems-sacct) ---- */

struct ceems_spool_list {
	size_t count;				/* names returned */
	char (*names)[CEEMS_SPOOL_NAME_MAX];	/* oldest first */
	size_t total;				/* records in the spool */
};

/* The records waiting in DIR, oldest first (temporary files and the
 * rejected folder are not records); only the OLDEST first ones when
 * OLDEST > 0 (the replay: memory stays bounded whatever the backlog),
 * all with 0 (ceems-sacct).  TOTAL always counts them all.  A
 * missing DIR is an empty spool.  Returns 0 or -errno; free with
 * ceems_spool_list_free. */
int ceems_spool_list(const char *dir, size_t oldest,
		     struct ceems_spool_list *list);
void ceems_spool_list_free(struct ceems_spool_list *list);

/* Read the record file NAME of the spool directory DFD whole into TEXT
 * (SIZE bytes, NUL-terminated), without decoding it: the reader the
 * replay and ceems-sacct share.  Only a regular file is read: a FIFO or
 * device named like a record is refused without waiting on it.  Returns
 * the length; -EINVAL when the file is no record (not a regular file,
 * too large, a NUL byte, empty: ERR says why); other -errno when it
 * cannot be read. */
ssize_t ceems_spool_read_file(int dfd, const char *name, char *text,
			      size_t size, char *err, size_t err_size);

/* Read and decode the record NAME of DIR.  TEXT (SIZE bytes, at least
 * CEEMS_RECORD_MAX + 1 to read any valid record) receives its JSON and
 * *LEN its length.  Returns 0; -EINVAL when the file is corrupted or
 * the record invalid (ERR says why: quarantine it); -ENOENT when it has
 * gone meanwhile; other -errno when it cannot be read now. */
int ceems_spool_read(const char *dir, const char *name,
		     struct ceems_job_record *r, char *text, size_t size,
		     size_t *len, char *err, size_t err_size);

/* Remove the record NAME once stored elsewhere (durably: the directory
 * is synced).  0 or -errno. */
int ceems_spool_remove(const char *dir, const char *name);

/* Remove the records NAMES[0..N) once all are stored, with one sync of
 * the directory for them all: a removal lost in a crash only means the
 * record is replayed, which changes nothing.  Returns 0 or the first
 * -errno; RESULTS[i], when not NULL, receives each one's. */
int ceems_spool_remove_stored(const char *dir, const char *const *names,
			      size_t n, int *results);

/* Move NAME into DIR/rejected/ with NAME.why holding WHY.  0 or -errno. */
int ceems_spool_quarantine(const char *dir, const char *name,
			   const char *why);

/* Temporary files older than AGE_S seconds are what a crash in the middle
 * of a write left: move them into rejected/ (they may hold a whole
 * record) rather than delete them.  Returns how many, or -errno. */
int ceems_spool_sweep(const char *dir, int64_t age_s);

#endif
