/* replay.h - the node agent's replay of the spool into PostgreSQL: the
 * records that could not be stored at the end of their job, oldest first,
 * each removed from the spool only after the database has committed it
 * (the upsert is idempotent, so a record stored twice, after a crash
 * between commit and removal, changes nothing).  Corrupted files and
 * records the database refuses are set aside in rejected/ while the rest
 * go on.  The work of one call is bounded (a number of records and a
 * time budget, plus at most one database timeout) so that a stop or a
 * new configuration is never held up long; failures back off
 * exponentially. */
#ifndef CEEMS_REPLAY_H
#define CEEMS_REPLAY_H

#include <stdint.h>

#include "base/conf.h"

struct ceems_replay_limits {
	unsigned max_records;		/* per call */
	unsigned batch_max;		/* records per statement (1: one by
					 * one, the single-record function) */
	uint64_t budget_ns;		/* no new record started past this */
	uint64_t backoff_min_ns;	/* first wait after a failure */
	uint64_t backoff_max_ns;	/* doubled up to this */
	uint64_t more_ns;		/* wait when records are left */
	uint64_t idle_ns;		/* wait when the spool is empty */
	int64_t temp_age_s;		/* temporary files older are swept */
};

/* 5,000 records or 2 s a call, 500 a statement; 5 s doubling to 10 min
 * after failures; the next call at once when records are left, after
 * 30 s when the spool is empty.  The replay has a process of its own
 * (the agent's loop never waits for it), so a backlog drains at the
 * database's pace: a pause between calls only left the database idle. */
void ceems_replay_default_limits(struct ceems_replay_limits *limits);

struct ceems_replay_stats {
	unsigned stored;	/* committed and removed from the spool */
	unsigned set_aside;	/* corrupted or refused: moved to rejected/ */
	unsigned left;		/* records still in the spool */
	int error;		/* 0, or why the call stopped (-errno) */
};

struct ceems_replay;

/* CONFIG must outlive the replay.  LIMITS NULL: the defaults.  NULL on
 * allocation failure. */
struct ceems_replay *ceems_replay_new(const struct ceems_config *config,
				      const struct ceems_replay_limits *limits);
void ceems_replay_free(struct ceems_replay *replay);

/* One bounded pass over the spool.  STATS (may be NULL) says what it
 * did.  Returns the nanoseconds to wait before the next call. */
uint64_t ceems_replay_run(struct ceems_replay *replay,
			  struct ceems_replay_stats *stats);

#endif
