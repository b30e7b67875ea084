/* marks_series.c - the work a job's counters gained interval by
 * interval (model/marks.h), so that the work done can be set beside the
 * power drawn: "where the energy went".  Kept apart from marks.c because
 * it is the one part of the marks that knows time.
 *
 * The intervals are aligned on the Unix epoch with the agent's series
 * resolution, as the job's series rows are (agent_series.h), so that
 * PostgreSQL can put the two side by side (ceems.job_work_series).  A
 * mark adds its work to the interval in which it was taken: the
 * library sends a counter at most once a second, so an interval's
 * work is the job's within about a second.  Bounded in memory: a
 * counter keeps CEEMS_MARKS_ROWS rows, and a full one has every
 * counter's rows merged into intervals twice as long (sums), never
 * cut: a long job keeps its whole span, more coarsely. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "model/marks.h"
#include "base/json_util.h"

/* The longest interval rows are merged into: a week. */
#define MAX_INTERVAL_S (7 * 86400u)

/* The start of the interval of length LEN (s) that holds T. */
static int64_t
interval_start(int64_t t, uint32_t len)
{
	int64_t q = t / (int64_t)len;

	if (t < 0 && q * (int64_t)len != t)
		q--;
	return q * (int64_t)len;
}

/* Every counter's rows merged into intervals of twice M's. */
static void
coarsen(struct ceems_marks *m)
{
	m->interval_s *= 2;
	for (uint32_t i = 0; i < m->n && i < CEEMS_MARKS_MAX; i++) {
		struct ceems_marks_counter *c = &m->c[i];
		uint32_t out = 0;

		for (uint32_t k = 0; k < c->nrows; k++) {
			int64_t t = interval_start(c->rows[k].t, m->interval_s);

			if (out > 0 && c->rows[out - 1].t == t) {
				c->rows[out - 1].work += c->rows[k].work;
				continue;
			}
			c->rows[out].t = t;
			c->rows[out].work = c->rows[k].work;
			out++;
		}
		c->nrows = out;
	}
}

void
ceems_marks_series_add(struct ceems_marks *m, uint32_t i, double delta,
		       int64_t unix_s, uint32_t base_s)
{
	struct ceems_marks_counter *c;
	int64_t t;

	if (i >= m->n || i >= CEEMS_MARKS_MAX || !(delta > 0) || !isfinite(delta) ||
	    base_s == 0)
		return;
	c = &m->c[i];
	if (m->interval_s == 0)
		m->interval_s = base_s;
	for (;;) {
		t = interval_start(unix_s, m->interval_s);
		/* The wall clock set back: the work goes to the last row,
		 * never before it (rows stay in order). */
		if (c->nrows > 0 && t <= c->rows[c->nrows - 1].t) {
			c->rows[c->nrows - 1].work += delta;
			return;
		}
		if (c->nrows < CEEMS_MARKS_ROWS)
			break;
		if (m->interval_s > MAX_INTERVAL_S / 2) {
			/* A job of months: its last row takes the rest. */
			c->rows[c->nrows - 1].work += delta;
			return;
		}
		coarsen(m);
	}
	c->rows[c->nrows].t = t;
	c->rows[c->nrows].work = delta;
	c->nrows++;
}

void
ceems_marks_series_to_json(struct json_object *o,
			   const struct ceems_marks_counter *c,
			   uint32_t interval_s, bool *ok)
{
	struct json_object *rows;

	if (c->nrows == 0 || interval_s == 0)
		return;
	rows = json_object_new_array();
	for (uint32_t k = 0; rows != NULL && k < c->nrows && k < CEEMS_MARKS_ROWS; k++) {
		struct json_object *row = json_object_new_array();

		if (row == NULL || json_object_array_add(rows, row) != 0) {
			json_object_put(row);
			*ok = false;
			break;
		}
		if (json_object_array_add(row, json_object_new_int64(c->rows[k].t)) != 0 ||
		    json_object_array_add(row, ceems_json_util_double(c->rows[k].work)) != 0)
			*ok = false;
	}
	ceems_json_util_add(o, "interval_s", json_object_new_int64(interval_s), ok);
	ceems_json_util_add(o, "intervals", rows, ok);
}

/* Row K of ROWS into C->rows[K], checked after the row before it. */
static int
row_from_json(const struct json_object *rows, size_t k, const char *where,
	      uint32_t interval_s, struct ceems_marks_counter *c, char *err,
	      size_t err_size)
{
	const struct json_object *row = json_object_array_get_idx(rows, k);
	const struct json_object *t, *w;
	int64_t tv;

	if (!json_object_is_type(row, json_type_array) ||
	    json_object_array_length(row) != 2)
		return ceems_json_util_error(err, err_size, "%s.intervals[%zu] must "
			"be [t, work]", where, k);
	t = json_object_array_get_idx(row, 0);
	w = json_object_array_get_idx(row, 1);
	if (!json_object_is_type(t, json_type_int) ||
	    (tv = json_object_get_int64(t)) < 0 || tv > INT64_C(1) << 40 ||
	    tv % interval_s != 0 || (k > 0 && tv <= c->rows[k - 1].t))
		return ceems_json_util_error(err, err_size, "%s.intervals[%zu]: t "
			"must be a multiple of interval_s, after the row before",
			where, k);
	c->rows[k].t = tv;
	if (ceems_json_util_read_real(w, where, 0, CEEMS_MARKS_VALUE_MAX,
				      &c->rows[k].work, err, err_size) < 0 ||
	    !(c->rows[k].work > 0))
		return ceems_json_util_error(err, err_size, "%s.intervals[%zu]: work "
			"must be a number above 0, up to 2^53", where, k);
	return 0;
}

int
ceems_marks_series_from_json(const struct json_object *o, const char *where,
			     struct ceems_marks_counter *c, uint32_t *interval_s,
			     char *err, size_t err_size)
{
	const struct json_object *len = ceems_json_util_get(o, "interval_s");
	const struct json_object *rows = ceems_json_util_get(o, "intervals");
	uint64_t r;
	size_t n;
	int ret;

	c->nrows = 0;
	if (len == NULL && rows == NULL)
		return 0;
	if (len == NULL || rows == NULL || !json_object_is_type(rows, json_type_array))
		return ceems_json_util_error(err, err_size, "%s needs interval_s and "
			"an array intervals together", where);
	if ((ret = ceems_json_util_read_uint(len, where, 1, MAX_INTERVAL_S, &r, err,
					     err_size)) < 0)
		return ret;
	if (*interval_s != 0 && r != *interval_s)
		return ceems_json_util_error(err, err_size, "%s: interval_s %llu is "
			"not the other counters' %u", where, (unsigned long long)r,
			*interval_s);
	n = json_object_array_length(rows);
	if (n == 0 || n > CEEMS_MARKS_ROWS)
		return ceems_json_util_error(err, err_size, "%s has 1 to %d intervals",
			where, CEEMS_MARKS_ROWS);
	for (size_t k = 0; k < n; k++)
		if ((ret = row_from_json(rows, k, where, (uint32_t)r, c, err,
					 err_size)) < 0)
			return ret;
	c->nrows = (uint32_t)n;
	*interval_s = (uint32_t)r;
	return 0;
}
