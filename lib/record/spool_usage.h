/* spool_usage.h - the spool's size and record count, kept in SPOOL/.usage
 * so that checking the soft cap does not list the whole spool at every
 * write (spool_usage.c).  Internal to libceems's spool. */
#ifndef CEEMS_SPOOL_USAGE_H
#define CEEMS_SPOOL_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPOOL_USAGE_FILE ".usage"

struct spool_usage {
	int fd;			/* SPOOL/.usage, locked; -1 when unusable */
	uint64_t bytes;		/* what the spool holds before the change */
	uint64_t count;
};

/* Lock the usage file of the spool descriptor DFD and load the figures;
 * when the file is missing, unreadable or older than the directory,
 * count the directory (the only listing).  Never fails and never
 * waits long: without a usable file (or its lock within 200 ms), U->fd
 * is -1 and the figures come from a listing. */
void ceems_spool_usage_begin(int dfd, struct spool_usage *u);

/* After the change made under ceems_spool_usage_begin: record the figures
 * plus DBYTES and DCOUNT with the directory's new modification time,
 * unlock. */
void ceems_spool_usage_end(int dfd, struct spool_usage *u, int64_t dbytes,
		     int64_t dcount);

/* Parse the text of a usage file ("BYTES COUNT SEC NSEC\n").  Pure;
 * returns 0, or -1 for anything else. */
int ceems_spool_usage_parse(const char *buf, size_t len, uint64_t *bytes,
		      uint64_t *count, int64_t *sec, long *nsec);

/* Directory entries examined by listings since the process started:
 * for tests (a cap check must not list the spool at every write). */
uint64_t ceems_spool_usage_entries_examined(void);

#endif
