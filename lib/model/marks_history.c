/* marks_history.c - the JSON form of a job's comparison with the same
 * user's earlier runs (struct ceems_marks_history, marks.h), which the
 * agent's reply to a step's end carries to the summary.  The plugin
 * decodes it from the agent's socket: strictly, every figure in range. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "model/marks.h"
#include "base/json_util.h"

struct json_object *
ceems_marks_history_to_json(const struct ceems_marks_history *h)
{
	struct json_object *arr = json_object_new_array();
	bool ok = arr != NULL;

	for (uint32_t i = 0; ok && i < h->n && i < CEEMS_MARKS_MAX; i++) {
		const struct ceems_marks_history_counter *c = &h->c[i];
		struct json_object *o = ceems_marks_json_entry(arr, c->name, c->unit, &ok);

		if (o == NULL)
			break;
		ceems_json_util_add(o, "runs", json_object_new_int64(c->runs), &ok);
		ceems_json_util_add(o, "median_j", ceems_json_util_double(c->median_j), &ok);
		ceems_json_util_add_double(o, "median_cpu_eff", c->median_cpu_eff, &ok);
	}
	if (!ok) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

static int
counter_from_json(const struct json_object *o, size_t i,
		  struct ceems_marks_history_counter *c, char *err,
		  size_t err_size)
{
	static const char *const known[] = { "name", "unit", "runs", "median_j",
					     "median_cpu_eff", NULL };
	struct json_object *val;
	char where[32];
	uint64_t runs;
	int r;

	snprintf(where, sizeof(where), "history[%zu]", i);
	if ((r = ceems_marks_json_read_entry(o, where, known, c->name, c->unit,
					     err, err_size)) < 0)
		return r;
	if (ceems_json_util_get(o, "runs") == NULL || ceems_json_util_get(o, "median_j") == NULL)
		return ceems_json_util_error(err, err_size, "%s needs runs and median_j", where);
	if ((r = ceems_json_util_read_uint(ceems_json_util_get(o, "runs"), where,
				1, 1000, &runs, err, err_size)) < 0 ||
	    (r = ceems_json_util_read_real(ceems_json_util_get(o, "median_j"), where,
				0, 1e300, &c->median_j, err, err_size)) < 0)
		return r;
	c->runs = (uint32_t)runs;
	c->median_cpu_eff = NAN;
	if ((val = ceems_json_util_get(o, "median_cpu_eff")) != NULL &&
	    (r = ceems_json_util_read_real(val, where, 0, 1e6, &c->median_cpu_eff,
					   err, err_size)) < 0)
		return r;
	if (!(c->median_j > 0))
		return ceems_json_util_error(err, err_size, "%s: a median of 0", where);
	return 0;
}

int
ceems_marks_history_from_json(const struct json_object *obj,
			      struct ceems_marks_history *h, char *err,
			      size_t err_size)
{
	struct ceems_marks_history out;
	size_t n;
	int r;

	if (!json_object_is_type(obj, json_type_array))
		return ceems_json_util_error(err, err_size, "history must be an array");
	n = json_object_array_length(obj);
	if (n > CEEMS_MARKS_MAX)
		return ceems_json_util_error(err, err_size,
			"history has more than %d counters", CEEMS_MARKS_MAX);
	memset(&out, 0, sizeof(out));
	for (size_t i = 0; i < n; i++)
		if ((r = counter_from_json(json_object_array_get_idx(obj, i), i,
					   &out.c[i], err, err_size)) < 0)
			return r;
	out.n = (uint32_t)n;
	*h = out;
	return 0;
}
