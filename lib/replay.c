/* replay.c - spooled records into PostgreSQL, in order, with backoff
 * (replay.h).  One database connection is kept while there is work and
 * closed when the spool is empty or after a failure: an idle node holds
 * no connection. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "record.h"
#include "replay.h"
#include "spool.h"
#include "storage.h"

struct ceems_replay {
	const struct ceems_config *config;
	struct ceems_replay_limits limits;
	struct ceems_db *db;
	uint64_t backoff_ns;		/* 0: the last call succeeded */
	struct ceems_job_record record;
	char text[CEEMS_RECORD_MAX + 1];
};

void
ceems_replay_default_limits(struct ceems_replay_limits *l)
{
	l->max_records = 64;
	l->budget_ns = 200 * UINT64_C(1000000);
	l->backoff_min_ns = 5 * UINT64_C(1000000000);
	l->backoff_max_ns = 600 * UINT64_C(1000000000);
	l->more_ns = 250 * UINT64_C(1000000);
	l->idle_ns = 30 * UINT64_C(1000000000);
	l->temp_age_s = 3600;
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
	return rp;
}

void
ceems_replay_free(struct ceems_replay *rp)
{
	if (rp == NULL)
		return;
	ceems_db_close(rp->db);
	free(rp);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
drop_connection(struct ceems_replay *rp)
{
	ceems_db_close(rp->db);
	rp->db = NULL;
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
	    (r = ceems_db_connect(rp->config, &rp->db, err, err_size)) < 0)
		return r;
	r = ceems_db_upsert(rp->db, rp->text, err, err_size);
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

uint64_t
ceems_replay_run(struct ceems_replay *rp, struct ceems_replay_stats *stats)
{
	const struct ceems_replay_limits *l = &rp->limits;
	const char *dir = rp->config->spool_dir;
	struct ceems_replay_stats local, *st = stats != NULL ? stats : &local;
	struct ceems_spool_list list;
	uint64_t start = mono_ns();
	char err[512], what[700];
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

		if (i >= l->max_records || mono_ns() - start >= l->budget_ns)
			break;
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
		r = store_one(rp, list.names[i], err, sizeof(err));
		if (r < 0) {
			/* In order: a record that cannot be stored now
			 * holds back the younger ones. */
			st->error = r;
			snprintf(what, sizeof(what), "database: %s", err);
			break;
		}
		if (r == 0)
			st->stored++;
		else
			st->set_aside++;
		st->left--;
	}
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
