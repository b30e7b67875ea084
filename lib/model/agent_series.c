/* agent_series.c - a job's time series: bucketing of ticks, coarsening
 * when full, the JSON form (agent_series.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "model/agent_series.h"
#include "base/json_util.h"
#include "base/log.h"
#include "base/tick_path.h"

const char *const ceems_series_columns[CEEMS_SERIES_NCOLUMNS] = {
	"t", "interval_s", "cpu_s", "mem_bytes",
	"package_j", "dram_j", "gpu_j", "node_j", "gpu_util_pct",
	"read_bytes", "write_bytes", "net_in_bytes", "net_out_bytes",
	"page_faults", "ctx_switches", "ipc",
};

const enum ceems_series_merge ceems_series_merges[CEEMS_SERIES_NCOLUMNS] = {
	CEEMS_SERIES_MERGE_BUCKET, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_MAX,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_MEAN,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_SUM, CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_MEAN,
};
/* The first count column, and ipc's. */
#define COL_COUNTS 9
#define COL_IPC (COL_COUNTS + CEEMS_SC_NROW)

void
ceems_agent_series_counts_unknown(struct ceems_series_counts *c)
{
	for (int k = 0; k < CEEMS_SC_N; k++)
		c->v[k] = NAN;
}

/* First allocation: a short job needs no more. */
#define INITIAL_ROWS 16

struct ceems_series *
ceems_agent_series_new(uint32_t resolution_s, uint32_t max_rows)
{
	struct ceems_series *s;

	if (resolution_s == 0 || max_rows == 0)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	s->resolution_s = resolution_s;
	s->max_rows = max_rows;
	s->last_cpu_s = NAN;
	ceems_agent_series_counts_unknown(&s->last_counts);
	return s;
}

void
ceems_agent_series_free(struct ceems_series *s)
{
	if (s == NULL)
		return;
	free(s->rows);
	free(s);
}

struct ceems_series *
ceems_agent_series_dup(const struct ceems_series *s)
{
	struct ceems_series *d = malloc(sizeof(*d));

	if (d == NULL)
		return NULL;
	*d = *s;
	d->rows = NULL;
	d->cap = 0;
	if (s->nrows > 0) {
		d->rows = malloc(s->nrows * sizeof(*d->rows));
		if (d->rows == NULL) {
			free(d);
			return NULL;
		}
		memcpy(d->rows, s->rows, s->nrows * sizeof(*d->rows));
		d->cap = s->nrows;
	}
	return d;
}

/* Where NaN is "unknown", what A and B make when one of them is: the
 * other (unknown only when both are).  False when both are known. */
static bool
one_unknown(double a, double b, double *out)
{
	if (isnan(a) || isnan(b)) {
		*out = isnan(a) ? b : a;
		return true;
	}
	return false;
}

/* A + B, unknown only when both are. */
static double
sum_known(double a, double b)
{
	double v;

	return one_unknown(a, b, &v) ? v : a + b;
}

static double
max_known(double a, double b)
{
	double v;

	return one_unknown(a, b, &v) ? v : a > b ? a : b;
}

/* The mean of A over WA seconds and B over WB seconds, NaN "unknown":
 * unknown only when both are.  Kept between A and B, so rounding never
 * takes a mean of percentages past 100. */
static double
mean_by_time(double a, double wa, double b, double wb)
{
	double m;

	if (isnan(a))
		return b;
	if (isnan(b))
		return a;
	if (!(wa + wb > 0))
		return b;	/* no time to weigh by: the latest */
	m = (a * wa + b * wb) / (wa + wb);
	if (m < fmin(a, b))
		m = fmin(a, b);
	if (m > fmax(a, b))
		m = fmax(a, b);
	return m;
}

/* Add IPC weighed by W (the cycles it is of) to row R's mean. */
static void
add_ipc(struct ceems_series_row *r, double ipc, double w)
{
	if (isnan(ipc) || !(w > 0))
		return;
	/* A ratio, not a percentage: no bound to keep it under, but
	 * kept between the two all the same. */
	r->ipc = mean_by_time(r->ipc, r->ipc_w, ipc, w);
	r->ipc_w += w;
}

/* Add GPU_UTIL_PCT over DT_S seconds to row R's mean. */
static void
add_gpu_util(struct ceems_series_row *r, double gpu_util_pct, double dt_s)
{
	if (isnan(gpu_util_pct))
		return;
	r->gpu_util_pct = mean_by_time(r->gpu_util_pct, r->gpu_util_s,
				       gpu_util_pct, dt_s);
	r->gpu_util_s += dt_s;
}

static int64_t
bucket_of(double t, uint32_t resolution_s)
{
	return (int64_t)floor(t / resolution_s) * resolution_s;
}

void
ceems_agent_series_coarsen(struct ceems_series *s)
{
	uint32_t res = s->resolution_s * 2, k = 0;

	if (res < s->resolution_s)	/* would overflow: one bucket */
		res = UINT32_MAX;
	for (uint32_t i = 0; i < s->nrows; i++) {
		const struct ceems_series_row *r = &s->rows[i];
		int64_t t = bucket_of((double)r->t, res);

		if (k > 0 && s->rows[k - 1].t == t) {
			struct ceems_series_row *m = &s->rows[k - 1];

			m->interval_s += r->interval_s;
			m->cpu_s = sum_known(m->cpu_s, r->cpu_s);
			m->mem_bytes = max_known(m->mem_bytes, r->mem_bytes);
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
				m->joules[d] = sum_known(m->joules[d], r->joules[d]);
			add_gpu_util(m, r->gpu_util_pct, r->gpu_util_s);
			for (int c = 0; c < CEEMS_SC_NROW; c++)
				m->count[c] = sum_known(m->count[c], r->count[c]);
			add_ipc(m, r->ipc, r->ipc_w);
			for (int d = 0; d < CEEMS_SERIES_RESTATED; d++)
				m->unlearned_w[d] += r->unlearned_w[d];
			continue;
		}
		s->rows[k] = *r;
		s->rows[k].t = t;
		k++;
	}
	s->nrows = k;
	s->resolution_s = res;
}

/* Room for one more row: grow the array up to max_rows, else coarsen.
 * Returns false when no row can be added (coarsening merged nothing: a
 * series of one row per bucket of 2^31 s, or no memory). */
static bool
make_room(struct ceems_series *s)
{
	while (s->nrows >= s->cap) {
		uint32_t cap = s->cap == 0 ? INITIAL_ROWS : s->cap * 2;
		struct ceems_series_row *rows;

		if (cap > s->max_rows)
			cap = s->max_rows;
		if (cap > s->cap &&
		    (rows = realloc(s->rows, cap * sizeof(*rows))) != NULL) {
			s->rows = rows;
			s->cap = cap;
			continue;
		}
		/* Full, or no memory for more: a coarser series in the rows
		 * there are. */
		uint32_t before = s->nrows;

		ceems_agent_series_coarsen(s);
		if (s->nrows == before)
			return false;
	}
	return true;
}

int
ceems_agent_series_add(struct ceems_series *s, double end, double dt_s,
		 double cpu_s, double mem_bytes,
		 const double joules[CEEMS_DOMAIN_COUNT], double gpu_util_pct)
{
	return ceems_agent_series_add_counts(s, end, dt_s, cpu_s, mem_bytes, joules,
				       gpu_util_pct, NULL);
}

/* The row's IPC from the interval's DELTA: NaN without cycles in it. */
static double
delta_ipc(const struct ceems_series_counts *delta)
{
	double cyc = delta->v[CEEMS_SC_CYCLES];
	double ins = delta->v[CEEMS_SC_INSTRUCTIONS];

	return cyc > 0 && ins >= 0 ? ins / cyc : NAN;
}

/* DELTA's counts into row R. */
static void
add_counts(struct ceems_series_row *r, const struct ceems_series_counts *delta)
{
	for (int c = 0; c < CEEMS_SC_NROW; c++)
		if (delta->v[c] >= 0)
			r->count[c] = sum_known(r->count[c], delta->v[c]);
	add_ipc(r, delta_ipc(delta), delta->v[CEEMS_SC_CYCLES]);
}

int
ceems_agent_series_add_counts(struct ceems_series *s, double end, double dt_s,
			double cpu_s, double mem_bytes,
			const double joules[CEEMS_DOMAIN_COUNT],
			double gpu_util_pct,
			const struct ceems_series_counts *delta)
{
	struct ceems_series_row *r;
	double mid = end - dt_s / 2;
	int64_t t;

	if (!isfinite(end) || !isfinite(dt_s) || dt_s < 0 || mid < 0)
		return -EINVAL;
	t = bucket_of(mid, s->resolution_s);
	/* A later bucket needs a new row; the same bucket, or an earlier
	 * one (the wall clock stepped back), adds to the last row.  With
	 * no room at all (no memory), the last row takes it: never lost. */
	if (s->nrows == 0 || t > s->rows[s->nrows - 1].t) {
		if (make_room(s)) {
			/* Coarsening may have widened the buckets. */
			t = bucket_of(mid, s->resolution_s);
			if (s->nrows == 0 || t > s->rows[s->nrows - 1].t) {
				r = &s->rows[s->nrows++];
				r->t = t;
				r->interval_s = 0;
				r->cpu_s = NAN;
				r->mem_bytes = NAN;
				for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
					r->joules[d] = NAN;
				r->gpu_util_pct = NAN;
				r->gpu_util_s = 0;
				for (int c = 0; c < CEEMS_SC_NROW; c++)
					r->count[c] = NAN;
				r->ipc = NAN;
				r->ipc_w = 0;
				for (int d = 0; d < CEEMS_SERIES_RESTATED; d++)
					r->unlearned_w[d] = 0;
			}
		} else if (s->nrows == 0) {
			return -ENOMEM;
		}
	}
	r = &s->rows[s->nrows - 1];
	r->interval_s += dt_s;
	r->cpu_s = sum_known(r->cpu_s, cpu_s);
	if (!isnan(mem_bytes))
		r->mem_bytes = mem_bytes;	/* the latest: at the row's end */
	for (int d = 0; joules != NULL && d < CEEMS_DOMAIN_COUNT; d++)
		r->joules[d] = sum_known(r->joules[d], joules[d]);
	/* A reading out of range is no utilisation: unknown, not clamped. */
	if (gpu_util_pct >= 0 && gpu_util_pct <= 100)
		add_gpu_util(r, gpu_util_pct, dt_s);
	if (delta != NULL)
		add_counts(r, delta);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The agent's use                                                     */
/* ------------------------------------------------------------------ */

static void
set_baseline(struct ceems_series *s, uint64_t now_ns,
	     const struct ceems_job_ledger *l, double cpu_s)
{
	s->last_ns = now_ns;
	s->last_cpu_s = cpu_s;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		s->last_joules[d] = l->joules[d];
		s->last_covered_s[d] = l->covered_s[d];
	}
}

struct ceems_series *
ceems_agent_series_for_job(const struct ceems_config *c, bool wanted,
		     uint64_t now_ns, const struct ceems_job_ledger *l,
		     double cpu_s)
{
	struct ceems_series *s;
	struct timespec ts;
	uint64_t res_s;

	if (!wanted && !c->series_all)
		return NULL;
	/* Whole seconds (rows are aligned on them), never finer than the
	 * ticks that fill them. */
	res_s = (c->series_interval_ns + 500000000u) / 1000000000u;
	if (res_s * 1000000000u < c->interval_ns)
		res_s = (c->interval_ns + 999999999u) / 1000000000u;
	if (res_s > INT32_MAX)
		res_s = INT32_MAX;
	s = ceems_agent_series_new(res_s > 0 ? (uint32_t)res_s : 1,
			     CEEMS_SERIES_MAX_ROWS);
	if (s == NULL) {
		ceems_error("out of memory for a job's time series: the job is "
			    "measured without one");
		return NULL;
	}
	/* The agent's clock is monotonic; rows are in Unix time. */
	clock_gettime(CLOCK_REALTIME, &ts);
	s->unix_offset_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 -
			   (double)now_ns / 1e9;
	set_baseline(s, now_ns, l, cpu_s);
	return s;
}

void
ceems_agent_series_backdate(struct ceems_series *s, uint64_t since_ns)
{
	if (s != NULL && since_ns < s->last_ns)
		s->last_ns = since_ns;
}

void
ceems_agent_series_set_counts(struct ceems_series *s,
			const struct ceems_series_counts *now)
{
	if (s != NULL && now != NULL)
		s->last_counts = *now;
}

/* The counts since the last observation that had them into DELTA (the
 * baseline moves to NOW where known). */
static void
count_deltas(struct ceems_series *s, const struct ceems_series_counts *now,
	     struct ceems_series_counts *delta)
{
	for (int k = 0; k < CEEMS_SC_N; k++) {
		double v = now->v[k], last = s->last_counts.v[k];

		if (isnan(v)) {
			delta->v[k] = NAN;
			continue;
		}
		/* The first known: counted since the registration. */
		delta->v[k] = isnan(last) ? v : (v >= last ? v - last : 0);
		s->last_counts.v[k] = v;
	}
}

void
ceems_agent_series_last_counts(struct ceems_series *s,
			 const struct ceems_series_counts *now)
{
	struct ceems_series_counts delta;

	if (s == NULL || now == NULL || s->nrows == 0)
		return;
	count_deltas(s, now, &delta);
	add_counts(&s->rows[s->nrows - 1], &delta);
}

void
ceems_agent_series_observe(struct ceems_series *s, uint64_t now_ns,
		     const struct ceems_job_ledger *l, double cpu_s,
		     double mem_bytes, double gpu_util_pct)
{
	ceems_agent_series_observe_counts(s, now_ns, l, cpu_s, mem_bytes,
				    gpu_util_pct, NULL);
}

void
ceems_agent_series_observe_counts(struct ceems_series *s, uint64_t now_ns,
			    const struct ceems_job_ledger *l, double cpu_s,
			    double mem_bytes, double gpu_util_pct,
			    const struct ceems_series_counts *now)
{
	double joules[CEEMS_DOMAIN_COUNT];
	struct ceems_series_counts delta;
	double dcpu = NAN, dt_s;

	if (s == NULL)
		return;
	/* The clock is monotonic: NOW is never before the last one. */
	dt_s = now_ns > s->last_ns ? (double)(now_ns - s->last_ns) / 1e9 : 0;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double dj = l->joules[d] - s->last_joules[d];

		/* A domain is unknown in a row that neither covered it nor
		 * gained energy in it (a gap stays unknown rather than 0);
		 * energy gained in a tick that did not cover the domain
		 * whole (one of the job's GPUs in a gap) still counts, or
		 * the rows would fall short of the ledger. */
		if (l->covered_s[d] > s->last_covered_s[d] || dj != 0)
			joules[d] = dj > 0 ? dj : 0;
		else
			joules[d] = NAN;
	}
	if (!isnan(cpu_s))
		dcpu = isnan(s->last_cpu_s) ? cpu_s :
		       (cpu_s >= s->last_cpu_s ? cpu_s - s->last_cpu_s : 0);
	if (now != NULL)
		count_deltas(s, now, &delta);
	if (ceems_agent_series_add_counts(s, (double)now_ns / 1e9 + s->unix_offset_s,
				      dt_s, dcpu, mem_bytes, joules,
				      gpu_util_pct, now != NULL ? &delta : NULL) == 0)
		for (int d = 0; d < CEEMS_SERIES_RESTATED; d++) {
			s->rows[s->nrows - 1].unlearned_w[d] +=
			    (float)s->pending_unlearned_w[d];
			s->pending_unlearned_w[d] = 0;
		}
	set_baseline(s, now_ns, l, cpu_s);
}

CEEMS_TICK_PATH void
ceems_agent_series_unlearned(struct ceems_series *s, int d, double per_w)
{
	if (s != NULL && d >= 0 && d < CEEMS_SERIES_RESTATED && isfinite(per_w))
		s->pending_unlearned_w[d] += per_w;
}

void
ceems_agent_series_restate(struct ceems_series *s, int d, double idle_w,
			   double gained_j)
{
	if (s == NULL || d < 0 || d >= CEEMS_SERIES_RESTATED)
		return;
	for (uint32_t i = 0; i < s->nrows; i++) {
		struct ceems_series_row *r = &s->rows[i];
		double j = r->joules[d] + idle_w * (double)r->unlearned_w[d];

		if (!isnan(r->joules[d]))
			r->joules[d] = j > 0 ? j : 0;
		r->unlearned_w[d] = 0;
	}
	s->pending_unlearned_w[d] = 0;
	if (isfinite(gained_j))
		s->last_joules[d] += gained_j;
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */
/* ------------------------------------------------------------------ */

static struct json_object *
value_or_null(double v)
{
	/* json-c's NULL object is JSON null. */
	return isnan(v) ? NULL : ceems_json_util_double(v);
}

struct json_object *
ceems_agent_series_to_json(const struct ceems_series *s)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *cols = json_object_new_array();
	struct json_object *rows = json_object_new_array_ext((int)s->nrows);
	bool ok = obj != NULL && cols != NULL && rows != NULL;

	if (!ok) {
		json_object_put(obj);
		json_object_put(cols);
		json_object_put(rows);
		return NULL;
	}
	ceems_json_util_add(obj, "resolution_s", json_object_new_int64(s->resolution_s), &ok);
	for (int c = 0; c < CEEMS_SERIES_NCOLUMNS; c++)
		if (json_object_array_add(cols, json_object_new_string(ceems_series_columns[c])) != 0)
			ok = false;
	ceems_json_util_add(obj, "columns", cols, &ok);
	for (uint32_t i = 0; ok && i < s->nrows; i++) {
		const struct ceems_series_row *r = &s->rows[i];
		struct json_object *row = json_object_new_array_ext(CEEMS_SERIES_NCOLUMNS);
		struct json_object *v[CEEMS_SERIES_NCOLUMNS];

		if (row == NULL) {
			ok = false;
			break;
		}
		v[0] = json_object_new_int64(r->t);
		v[1] = ceems_json_util_double(r->interval_s);
		v[2] = value_or_null(r->cpu_s);
		v[3] = isnan(r->mem_bytes) ? NULL :
		       ceems_json_util_new_u64((uint64_t)r->mem_bytes);
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			v[4 + d] = value_or_null(r->joules[d]);
		v[8] = value_or_null(r->gpu_util_pct);
		for (int c = 0; c < CEEMS_SC_NROW; c++)
			v[COL_COUNTS + c] = value_or_null(r->count[c]);
		v[COL_IPC] = value_or_null(r->ipc);
		for (int c = 0; c < CEEMS_SC_NROW; c++)
			if (!isnan(r->count[c]) && v[COL_COUNTS + c] == NULL)
				ok = false;
		if (!isnan(r->ipc) && v[COL_IPC] == NULL)
			ok = false;
		if (v[0] == NULL || v[1] == NULL ||
		    (!isnan(r->cpu_s) && v[2] == NULL) ||
		    (!isnan(r->mem_bytes) && v[3] == NULL))
			ok = false;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!isnan(r->joules[d]) && v[4 + d] == NULL)
				ok = false;
		if (!isnan(r->gpu_util_pct) && v[8] == NULL)
			ok = false;
		for (int c = 0; c < CEEMS_SERIES_NCOLUMNS; c++)
			if (json_object_array_add(row, v[c]) != 0) {
				json_object_put(v[c]);
				ok = false;
			}
		if (json_object_array_add(rows, row) != 0) {
			json_object_put(row);
			ok = false;
		}
	}
	ceems_json_util_add(obj, "rows", rows, &ok);
	if (!ok) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

/* Value C of a row: a finite number >= 0, or null when NULLABLE. */
static int
read_cell(struct json_object *v, const char *where, bool nullable,
	  double max, double *out, char *err, size_t err_size)
{
	if (v == NULL) {
		if (!nullable)
			return ceems_json_util_error(err, err_size, "%s must not be null", where);
		*out = NAN;
		return 0;
	}
	return ceems_json_util_read_real(v, where, 0, max, out, err, err_size);
}

/* Row I's IO, network and perf columns (when NCOLS has them) into R. */
static int
counts_from_json(struct json_object *arr, size_t i, size_t ncols,
		 struct ceems_series_row *r, char *err, size_t err_size)
{
	char where[64];
	int ret;

	for (int c = 0; c < CEEMS_SC_NROW; c++)
		r->count[c] = NAN;
	r->ipc = NAN;
	r->ipc_w = 0;
	if (ncols < CEEMS_SERIES_NCOLUMNS)
		return 0;
	for (int c = 0; c < CEEMS_SC_NROW; c++) {
		snprintf(where, sizeof(where), "series.rows[%zu].%s", i,
			 ceems_series_columns[COL_COUNTS + c]);
		if ((ret = read_cell(json_object_array_get_idx(arr, (size_t)(COL_COUNTS + c)),
				     where, true, 1e300, &r->count[c], err,
				     err_size)) < 0)
			return ret;
	}
	snprintf(where, sizeof(where), "series.rows[%zu].ipc", i);
	if ((ret = read_cell(json_object_array_get_idx(arr, COL_IPC), where,
			     true, 1e6, &r->ipc, err, err_size)) < 0)
		return ret;
	/* Its cycles are not sent: weighed by the row's time. */
	if (!isnan(r->ipc))
		r->ipc_w = r->interval_s;
	return 0;
}

/* Row I of NCOLS values (the columns there are) into R. */
static int
row_from_json(struct json_object *arr, size_t i, size_t ncols,
	      struct ceems_series_row *r, char *err, size_t err_size)
{
	char where[64];
	uint64_t u;
	int ret;

	if (!json_object_is_type(arr, json_type_array) ||
	    json_object_array_length(arr) != ncols)
		return ceems_json_util_error(err, err_size,
					"series.rows[%zu] must be an array of %zu values",
					i, ncols);
	snprintf(where, sizeof(where), "series.rows[%zu].t", i);
	if (json_object_array_get_idx(arr, 0) == NULL)
		return ceems_json_util_error(err, err_size, "%s must not be null", where);
	/* Up to the year 9999. */
	if ((ret = ceems_json_util_read_uint(json_object_array_get_idx(arr, 0), where,
					0, 253402300799ULL, &u, err, err_size)) < 0)
		return ret;
	r->t = (int64_t)u;
	snprintf(where, sizeof(where), "series.rows[%zu].interval_s", i);
	if ((ret = read_cell(json_object_array_get_idx(arr, 1), where, false,
			     1e10, &r->interval_s, err, err_size)) < 0)
		return ret;
	snprintf(where, sizeof(where), "series.rows[%zu].cpu_s", i);
	if ((ret = read_cell(json_object_array_get_idx(arr, 2), where, true,
			     INFINITY, &r->cpu_s, err, err_size)) < 0)
		return ret;
	snprintf(where, sizeof(where), "series.rows[%zu].mem_bytes", i);
	if (json_object_array_get_idx(arr, 3) == NULL) {
		r->mem_bytes = NAN;
	} else {
		if ((ret = ceems_json_util_read_uint(json_object_array_get_idx(arr, 3),
						where, 0, UINT64_MAX, &u, err,
						err_size)) < 0)
			return ret;
		r->mem_bytes = (double)u;
	}
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		snprintf(where, sizeof(where), "series.rows[%zu].%s", i,
			 ceems_series_columns[4 + d]);
		if ((ret = read_cell(json_object_array_get_idx(arr, 4 + d), where,
				     true, INFINITY, &r->joules[d], err,
				     err_size)) < 0)
			return ret;
	}
	r->gpu_util_pct = NAN;
	r->gpu_util_s = 0;
	if (ncols > CEEMS_SERIES_NCOLUMNS_V1) {
		snprintf(where, sizeof(where), "series.rows[%zu].gpu_util_pct", i);
		if ((ret = read_cell(json_object_array_get_idx(arr, 8), where,
				     true, 100, &r->gpu_util_pct, err,
				     err_size)) < 0)
			return ret;
		/* The time it was read is not sent: the row's, as the
		 * database weighs it. */
		if (!isnan(r->gpu_util_pct))
			r->gpu_util_s = r->interval_s;
	}
	return counts_from_json(arr, i, ncols, r, err, err_size);
}

int
ceems_agent_series_from_json(const struct json_object *obj,
		       struct ceems_series **out, char *err, size_t err_size)
{
	static const char *const known[] = { "resolution_s", "columns", "rows",
		NULL };
	struct json_object *val, *rows;
	struct ceems_series *s;
	uint64_t res;
	size_t n, ncols;
	int ret;

	*out = NULL;
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "series must be an object");
	if ((ret = ceems_json_util_check_keys(obj, "series", known, err, err_size)) < 0)
		return ret;
	if ((val = ceems_json_util_get(obj, "resolution_s")) == NULL)
		return ceems_json_util_error(err, err_size, "series.resolution_s is missing");
	if ((ret = ceems_json_util_read_uint(val, "series.resolution_s", 1, INT32_MAX,
					&res, err, err_size)) < 0)
		return ret;
	/* All the columns, or those of the older form. */
	if ((val = ceems_json_util_get(obj, "columns")) == NULL ||
	    !json_object_is_type(val, json_type_array) ||
	    ((ncols = json_object_array_length(val)) != CEEMS_SERIES_NCOLUMNS &&
	     ncols != CEEMS_SERIES_NCOLUMNS_V2 &&
	     ncols != CEEMS_SERIES_NCOLUMNS_V1))
		return ceems_json_util_error(err, err_size,
					"series.columns must list the %d columns (or the first %d or %d)",
					CEEMS_SERIES_NCOLUMNS, CEEMS_SERIES_NCOLUMNS_V2,
					CEEMS_SERIES_NCOLUMNS_V1);
	for (int c = 0; c < (int)ncols; c++) {
		struct json_object *name = json_object_array_get_idx(val, (size_t)c);

		if (name == NULL || !json_object_is_type(name, json_type_string) ||
		    strcmp(json_object_get_string(name), ceems_series_columns[c]) != 0)
			return ceems_json_util_error(err, err_size,
						"series.columns[%d] must be \"%s\"",
						c, ceems_series_columns[c]);
	}
	if ((rows = ceems_json_util_get(obj, "rows")) == NULL ||
	    !json_object_is_type(rows, json_type_array))
		return ceems_json_util_error(err, err_size, "series.rows must be an array");
	n = json_object_array_length(rows);
	if (n > CEEMS_SERIES_MAX_ROWS)
		return ceems_json_util_error(err, err_size,
					"series.rows has more than %d rows",
					CEEMS_SERIES_MAX_ROWS);
	s = ceems_agent_series_new((uint32_t)res, CEEMS_SERIES_MAX_ROWS);
	if (s == NULL) {
		ceems_json_util_error(err, err_size, "out of memory");
		return -ENOMEM;
	}
	if (n > 0) {
		s->rows = calloc(n, sizeof(*s->rows));
		if (s->rows == NULL) {
			ceems_agent_series_free(s);
			ceems_json_util_error(err, err_size, "out of memory");
			return -ENOMEM;
		}
		s->cap = (uint32_t)n;
	}
	for (size_t i = 0; i < n; i++) {
		ret = row_from_json(json_object_array_get_idx(rows, i), i,
				    ncols, &s->rows[i], err, err_size);
		if (ret == 0 && i > 0 && s->rows[i].t <= s->rows[i - 1].t)
			ret = ceems_json_util_error(err, err_size,
					       "series.rows[%zu].t is not after the row before",
					       i);
		if (ret < 0) {
			ceems_agent_series_free(s);
			return ret;
		}
		s->nrows++;
	}
	*out = s;
	return 0;
}

/* OBJ as text, if it fits SIZE with its NUL: its length, -ENOSPC or
 * -ENOMEM. */
static int
serialize(struct json_object *obj, char *buf, size_t size)
{
	const char *text;
	size_t len;

	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL)
		return -ENOMEM;
	len = strlen(text);
	if (len + 1 > size || len > INT32_MAX)
		return -ENOSPC;
	memcpy(buf, text, len + 1);
	return (int)len;
}

int
ceems_agent_series_serialize_with(struct json_object *obj, const char *key,
			    const struct ceems_series *s, char *buf,
			    size_t size)
{
	struct ceems_series *coarse = NULL;
	const struct ceems_series *cur = s;
	int ret;

	if (s == NULL)
		return serialize(obj, buf, size);
	for (;;) {
		struct json_object *js = ceems_agent_series_to_json(cur);

		if (js == NULL) {
			ret = -ENOMEM;
			break;
		}
		/* Replaces (and drops) the previous attempt's member. */
		if (json_object_object_add(obj, key, js) != 0) {
			json_object_put(js);
			ret = -ENOMEM;
			break;
		}
		ret = serialize(obj, buf, size);
		if (ret != -ENOSPC || cur->nrows <= 1)
			break;
		if (coarse == NULL && (coarse = ceems_agent_series_dup(s)) == NULL) {
			ret = -ENOMEM;
			break;
		}
		/* One doubling of the buckets at a time, so the series is
		 * no coarser than it must be (more where rows are sparse and
		 * a doubling merges none). */
		{
			uint32_t before = coarse->nrows;

			do
				ceems_agent_series_coarsen(coarse);
			while (coarse->nrows == before &&
			       coarse->resolution_s < UINT32_MAX);
			/* Rows too far apart for any bucket to merge (only
			 * a forged series): it cannot get smaller. */
			if (coarse->nrows == before)
				break;
		}
		cur = coarse;
	}
	json_object_object_del(obj, key);
	ceems_agent_series_free(coarse);
	return ret;
}
