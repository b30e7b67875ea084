/* replay.c - spooled records into PostgreSQL, in order, with backoff
 * (replay.h).  One database connection is kept while there is work and
 * closed when the spool is empty or after a failure: an idle node holds
 * no connection.  Records go in batches, one statement each
 * (ceems.upsert_job_records): one record per statement cannot reach the
 * ingest rate of 5,000 records a second (doc/performance.md).  A batch is all or nothing; when the database
 * refuses one, its records are stored again one by one, so that only the
 * bad record is set aside. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "record/record.h"
#include "record/replay.h"
#include "record/spool.h"
#include "record/storage.h"
#include "base/clock.h"

/* A batch: "[rec,rec,...]", where each record is in it and the names
 * of their files (copies: a batch sent at the end of one run is still in
 * the database's hands during the next, whose listing is another). */
struct replay_batch {
	char *text;
	size_t len, size;
	unsigned count;
	char (*names)[CEEMS_SPOOL_NAME_MAX];
	const char **name_at;		/* names[i], for the spool's calls */
	size_t *offset, *length;
};

struct ceems_replay {
	const struct ceems_config *config;
	struct ceems_replay_limits limits;
	struct ceems_db *db;
	uint64_t backoff_ns;		/* 0: the last call succeeded */
	unsigned batch_now;		/* halved after a failed batch */
	struct ceems_job_record record;
	char text[CEEMS_RECORD_MAX + 1];
	/* Two batches: while the database stores the one sent, the next
	 * is read from the spool into the other. */
	struct replay_batch batches[2];
	struct replay_batch *filling;	/* being read */
	struct replay_batch *sent;	/* in the database's hands, or NULL;
					 * may outlive the run that sent it */
	struct replay_batch *committed;	/* stored, still in the spool, or NULL */
	int *removed;			/* per record of a removal */
};

/* A batch's text stays under this (the records' own limit is 256 KiB;
 * typical records are 2 KiB). */
#define BATCH_BYTES_MAX (8u << 20)

void
ceems_replay_default_limits(struct ceems_replay_limits *l)
{
	l->max_records = 5000;
	l->batch_max = 500;
	l->budget_ns = 2 * UINT64_C(1000000000);
	l->backoff_min_ns = 5 * UINT64_C(1000000000);
	l->backoff_max_ns = 600 * UINT64_C(1000000000);
	l->more_ns = 0;
	l->idle_ns = 30 * UINT64_C(1000000000);
	l->temp_age_s = 3600;
}

static int
batch_init(struct replay_batch *b, unsigned max)
{
	unsigned i;

	b->names = calloc(max, sizeof(b->names[0]));
	b->name_at = calloc(max, sizeof(*b->name_at));
	b->offset = calloc(max, sizeof(*b->offset));
	b->length = calloc(max, sizeof(*b->length));
	if (b->names == NULL || b->name_at == NULL || b->offset == NULL ||
	    b->length == NULL)
		return -ENOMEM;
	for (i = 0; i < max; i++)
		b->name_at[i] = b->names[i];
	return 0;
}

static void
batch_free(struct replay_batch *b)
{
	free(b->text);
	free(b->names);
	free(b->name_at);
	free(b->offset);
	free(b->length);
}

struct ceems_replay *
ceems_replay_new(const struct ceems_config *config,
		 const struct ceems_replay_limits *limits)
{
	struct ceems_replay *rp = calloc(1, sizeof(*rp));

	if (rp == NULL)
		return NULL;
	rp->config = config;
	if (limits != NULL)
		rp->limits = *limits;
	else
		ceems_replay_default_limits(&rp->limits);
	if (rp->limits.batch_max == 0)
		rp->limits.batch_max = 1;
	rp->batch_now = rp->limits.batch_max;
	rp->filling = &rp->batches[0];
	rp->removed = calloc(rp->limits.batch_max, sizeof(*rp->removed));
	if (rp->removed == NULL ||
	    batch_init(&rp->batches[0], rp->limits.batch_max) < 0 ||
	    batch_init(&rp->batches[1], rp->limits.batch_max) < 0) {
		ceems_replay_free(rp);
		return NULL;
	}
	return rp;
}

void
ceems_replay_free(struct ceems_replay *rp)
{
	if (rp == NULL)
		return;
	ceems_storage_db_close(rp->db);
	batch_free(&rp->batches[0]);
	batch_free(&rp->batches[1]);
	free(rp->removed);
	free(rp);
}

static void
batch_empty(struct replay_batch *b)
{
	b->count = 0;
	b->len = 0;
}

/* Close the connection.  A batch still in flight is forgotten
 * unconfirmed: its records stay in the spool, and storing them again
 * changes nothing. */
static void
drop_connection(struct ceems_replay *rp)
{
	ceems_storage_db_close(rp->db);
	rp->db = NULL;
	if (rp->sent != NULL) {
		batch_empty(rp->sent);
		rp->sent = NULL;
	}
}

/* A failure: wait longer each time, up to the maximum. */
static uint64_t
back_off(struct ceems_replay *rp, struct ceems_replay_stats *st,
	 const char *what)
{
	const struct ceems_replay_limits *l = &rp->limits;

	drop_connection(rp);
	if (rp->backoff_ns == 0)
		rp->backoff_ns = l->backoff_min_ns;
	else if (rp->backoff_ns >= l->backoff_max_ns / 2)
		rp->backoff_ns = l->backoff_max_ns;
	else
		rp->backoff_ns *= 2;
	ceems_warning("spool %s: %s; %u record%s wait%s there, next try in %.0f s",
		      rp->config->spool_dir, what, st->left, st->left == 1 ? "" : "s",
		      st->left == 1 ? "s" : "", (double)rp->backoff_ns / 1e9);
	return rp->backoff_ns;
}

/* Store the record NAME (already read into rp->record / rp->text).
 * Returns 0 stored, 1 set aside, <0 failure (ERR). */
static int
store_one(struct ceems_replay *rp, const char *name, char *err,
	  size_t err_size)
{
	const char *dir = rp->config->spool_dir;
	char why[600];
	int r;

	if (rp->db == NULL &&
	    (r = ceems_storage_db_connect(rp->config, &rp->db, err, err_size)) < 0)
		return r;
	r = ceems_storage_db_upsert(rp->db, rp->text, err, err_size);
	if (r == -EBADMSG) {
		snprintf(why, sizeof(why), "refused by the database: %s", err);
		r = ceems_spool_quarantine(dir, name, why);
		if (r < 0) {
			snprintf(err, err_size, "cannot set aside %s: %s", name,
				 strerror(-r));
			return r;
		}
		return 1;
	}
	if (r < 0)
		return r;
	/* Committed: only now may the spool forget it.  Should the removal
	 * fail, the next replay stores it again, which changes nothing. */
	r = ceems_spool_remove(dir, name);
	if (r < 0 && r != -ENOENT)
		ceems_warning("spool %s: %s is stored but cannot be removed: %s",
			      dir, name, strerror(-r));
	return 0;
}

/* Add the record in rp->text (LEN bytes) to the batch being read.
 * -ENOMEM. */
static int
batch_add(struct ceems_replay *rp, const char *name, size_t len)
{
	struct replay_batch *b = rp->filling;
	size_t need = b->len + len + 3;	/* '[' or ',', then "]\0" */

	if (need > b->size) {
		size_t size = b->size > 0 ? b->size : 65536;
		char *p;

		while (size < need)
			size *= 2;
		p = realloc(b->text, size);
		if (p == NULL)
			return -ENOMEM;
		b->text = p;
		b->size = size;
	}
	b->text[b->len++] = b->count == 0 ? '[' : ',';
	snprintf(b->names[b->count], sizeof(b->names[0]), "%s", name);
	b->offset[b->count] = b->len;
	b->length[b->count] = len;
	memcpy(b->text + b->len, rp->text, len);
	b->len += len;
	b->count++;
	return 0;
}

static bool
batch_full(const struct ceems_replay *rp)
{
	return rp->filling->count >= rp->batch_now ||
	       rp->filling->len >= BATCH_BYTES_MAX;
}

/* Store B's records one by one (a batch of one, or a refused batch).
 * Returns 0 or the first failure; counts into ST. */
static int
store_each(struct ceems_replay *rp, const struct replay_batch *b,
	   struct ceems_replay_stats *st, char *err, size_t err_size)
{
	unsigned i;
	int r;

	for (i = 0; i < b->count; i++) {
		memcpy(rp->text, b->text + b->offset[i], b->length[i]);
		rp->text[b->length[i]] = '\0';
		r = store_one(rp, b->names[i], err, err_size);
		if (r < 0)
			return r;
		if (r == 0)
			st->stored++;
		else
			st->set_aside++;
		st->left--;
	}
	return 0;
}

/* Wait for the outcome of the batch in flight, if any.  Committed, it
 * becomes rp->committed, for batch_forget; refused (one record is bad),
 * its records are stored one by one, the bad one set aside.  Returns 0
 * or a failure (ERR); the records not stored stay in the spool. */
static int
batch_await(struct ceems_replay *rp, struct ceems_replay_stats *st,
	    char *err, size_t err_size)
{
	struct replay_batch *b = rp->sent;
	int r;

	if (b == NULL)
		return 0;
	rp->sent = NULL;
	r = ceems_storage_db_upsert_batch_finish(rp->db, err, err_size);
	if (r == 0) {
		rp->committed = b;
		return 0;
	}
	if (r == -EBADMSG) {
		ceems_info("spool %s: a batch of %u records was refused (%s): "
			   "storing them one by one", rp->config->spool_dir,
			   b->count, err);
		r = store_each(rp, b, st, err, err_size);
	} else if (rp->batch_now > 1) {
		/* Perhaps too much for the statement timeout: smaller
		 * batches next time, down to one record. */
		rp->batch_now /= 2;
	}
	batch_empty(b);
	return r;
}

/* Remove the committed batch's records from the spool: only now may it
 * forget them (one directory sync for the batch: a sync per file
 * limited the replay). */
static void
batch_forget(struct ceems_replay *rp, struct ceems_replay_stats *st)
{
	const char *dir = rp->config->spool_dir;
	struct replay_batch *b = rp->committed;
	unsigned i;

	if (b == NULL)
		return;
	rp->committed = NULL;
	if (ceems_spool_remove_stored(dir, b->name_at, b->count, rp->removed) < 0)
		for (i = 0; i < b->count; i++)
			if (rp->removed[i] < 0 && rp->removed[i] != -ENOENT)
				ceems_warning("spool %s: %s is stored but cannot be removed: %s",
					      dir, b->names[i], strerror(-rp->removed[i]));
	st->stored += b->count;
	st->left -= b->count;
	if (rp->batch_now < rp->limits.batch_max)
		rp->batch_now = rp->batch_now * 2 < rp->limits.batch_max ?
				rp->batch_now * 2 : rp->limits.batch_max;
	batch_empty(b);
}

/* The outcome of the batch in flight, then the batch read handed to
 * the database; the spool forgets the committed one while the database
 * works on the next.  A single record is stored at once (the
 * single-record statement).  Returns 0 or a failure (ERR). */
static int
batch_flush(struct ceems_replay *rp, struct ceems_replay_stats *st,
	    char *err, size_t err_size)
{
	struct replay_batch *b = rp->filling;
	int r;

	r = batch_await(rp, st, err, err_size);
	if (r < 0 || b->count < 2) {
		batch_forget(rp, st);
		if (r == 0 && b->count == 1)
			r = store_each(rp, b, st, err, err_size);
		batch_empty(b);
		return r;
	}
	b->text[b->len] = ']';
	b->text[b->len + 1] = '\0';
	if (rp->db == NULL)
		r = ceems_storage_db_connect(rp->config, &rp->db, err, err_size);
	if (r == 0) {
		r = ceems_storage_db_upsert_batch_send(rp->db, b->text, err, err_size);
		if (r < 0 && rp->batch_now > 1)
			rp->batch_now /= 2;	/* as a failed batch */
	}
	batch_forget(rp, st);
	if (r < 0) {
		batch_empty(b);
		return r;
	}
	rp->sent = b;
	rp->filling = b == &rp->batches[0] ? &rp->batches[1] : &rp->batches[0];
	return 0;
}

/* Whether NAME is one of the records of CARRIED, the batch the previous
 * run left in flight, while it still is (*NEXT: where to look first;
 * both lists are in name order).  Once its outcome is in, its files are
 * gone or stored again one by one: nothing more to skip. */
static bool
in_flight(const struct ceems_replay *rp, const struct replay_batch *carried,
	  const char *name, unsigned *next)
{
	const struct replay_batch *b = carried;
	int c = 1;

	if (b == NULL || b != rp->sent)
		return false;
	while (*next < b->count && (c = strcmp(b->names[*next], name)) < 0)
		(*next)++;
	return *next < b->count && c == 0;
}

uint64_t
ceems_replay_run(struct ceems_replay *rp, struct ceems_replay_stats *stats)
{
	const struct ceems_replay_limits *l = &rp->limits;
	const char *dir = rp->config->spool_dir;
	struct ceems_replay_stats local, *st = stats != NULL ? stats : &local;
	struct ceems_spool_list list;
	uint64_t start = ceems_clock_monotonic_ns();
	char err[512], what[700];
	const struct replay_batch *carried = rp->sent;
	unsigned next_in_flight = 0;
	bool more;
	size_t i;
	int r;

	memset(st, 0, sizeof(*st));
	if (!ceems_storage_have_database(rp->config)) {
		st->error = -ENOTSUP;
		return l->idle_ns;
	}
	r = ceems_spool_sweep(dir, l->temp_age_s);
	if (r < 0)
		ceems_debug("spool %s: cannot sweep temporary files: %s", dir,
			    strerror(-r));
	r = ceems_spool_list(dir, l->max_records, &list);
	if (r < 0) {
		st->error = r;
		snprintf(what, sizeof(what), "cannot list the records: %s", strerror(-r));
		return back_off(rp, st, what);
	}
	st->left = (unsigned)list.total;
	for (i = 0; i < list.count; i++) {
		size_t len;

		if (i >= l->max_records || ceems_clock_monotonic_ns() - start >= l->budget_ns)
			break;
		if (in_flight(rp, carried, list.names[i], &next_in_flight))
			continue;	/* sent by the previous run */
		r = ceems_spool_read(dir, list.names[i], &rp->record, rp->text,
				     sizeof(rp->text), &len, err, sizeof(err));
		if (r == -ENOENT) {	/* gone meanwhile (an admin) */
			st->left--;
			continue;
		}
		if (r == -EINVAL) {
			char why[600];

			snprintf(why, sizeof(why), "corrupted: %s", err);
			r = ceems_spool_quarantine(dir, list.names[i], why);
			if (r < 0) {
				st->error = r;
				snprintf(what, sizeof(what), "cannot set aside the "
					 "corrupted %s: %s", list.names[i], strerror(-r));
				break;
			}
			st->set_aside++;
			st->left--;
			continue;
		}
		if (r < 0) {
			st->error = r;
			snprintf(what, sizeof(what), "cannot read %s: %s",
				 list.names[i], strerror(-r));
			break;
		}
		r = batch_add(rp, list.names[i], len);
		if (r == 0 && batch_full(rp))
			r = batch_flush(rp, st, err, sizeof(err));
		if (r < 0) {
			/* In order: a record that cannot be stored now
			 * holds back the younger ones. */
			st->error = r;
			snprintf(what, sizeof(what), "database: %s",
				 r == -ENOMEM ? "out of memory for a batch" : err);
			break;
		}
	}
	/* Records beyond this run's limits: the last batch stays in the
	 * database's hands while the next run lists the spool and reads,
	 * rather than leaving the database idle meanwhile. */
	more = i < list.count || list.count < list.total;
	if (st->error == 0) {
		/* The last batch read, then the outcome of the last sent
		 * (with more to come: the last sent stays in flight). */
		r = !more || rp->filling->count > 0 ?
		    batch_flush(rp, st, err, sizeof(err)) : 0;
		if (r == 0 && !more)
			r = batch_await(rp, st, err, sizeof(err));
		else if (r == 0 && rp->sent != NULL)
			ceems_debug("spool %s: a batch of %u records is stored "
				    "while the next run reads", dir, rp->sent->count);
		if (r < 0) {
			st->error = r;
			snprintf(what, sizeof(what), "database: %s", err);
		}
	} else {
		/* A record could not be read: the batch sent before may
		 * still have been stored; WHAT already says what failed. */
		(void)batch_await(rp, st, err, sizeof(err));
	}
	batch_forget(rp, st);
	batch_empty(rp->filling);	/* what a failure left is still spooled */
	ceems_spool_list_free(&list);
	if (st->stored > 0)
		ceems_info("spool %s: %u record%s stored in the database, %u left",
			   dir, st->stored, st->stored == 1 ? "" : "s", st->left);
	if (st->error != 0) {
		if (st->stored > 0)	/* it worked a moment ago */
			rp->backoff_ns = 0;
		return back_off(rp, st, what);
	}
	rp->backoff_ns = 0;
	if (st->left > 0)
		return l->more_ns;
	drop_connection(rp);
	return l->idle_ns;
}
