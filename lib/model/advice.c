/* advice.c - a job's carbon-aware advice as the JSON object
 * "advice" of the agent's reply and of the record
 * (doc/record-format.md), and what the job side does with it.  Apart
 * from carbon_advice.c, which needs the series, because the plugin
 * reads the advice without one.  Unknown is not zero: a job whose time
 * no series covered has no advice, and no object. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/carbon_advice.h"

static const char *const verdict_names[] = {
	[CEEMS_ADVICE_WORTH] = "worth",
	[CEEMS_ADVICE_NO_SERIES] = "no series",
	[CEEMS_ADVICE_BAD_JOB] = "no energy",
	[CEEMS_ADVICE_SHORT] = "short",
	[CEEMS_ADVICE_CHAIN] = "dependency chain",
	[CEEMS_ADVICE_SMALL] = "small saving",
};

const char *
ceems_advice_verdict_name(enum ceems_advice_verdict v)
{
	if ((unsigned)v >= sizeof(verdict_names) / sizeof(verdict_names[0]))
		return "unknown";
	return verdict_names[v];
}

bool
ceems_advice_known(const struct ceems_advice *a)
{
	return a->verdict != CEEMS_ADVICE_NO_SERIES &&
	       a->verdict != CEEMS_ADVICE_BAD_JOB;
}

void
ceems_advice_none(struct ceems_advice *out)
{
	memset(out, 0, sizeof(*out));
	out->verdict = CEEMS_ADVICE_NO_SERIES;
}

void
ceems_advice_in_chain(struct ceems_advice *a)
{
	if (a->verdict == CEEMS_ADVICE_WORTH || a->verdict == CEEMS_ADVICE_SMALL)
		a->verdict = CEEMS_ADVICE_CHAIN;
}

struct json_object *
ceems_advice_to_json(const struct ceems_advice *a)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return NULL;
	ceems_json_util_add(obj, "verdict", json_object_new_string(
			ceems_advice_verdict_name(a->verdict)), &ok);
	ceems_json_util_add_double(obj, "actual_g", a->actual_g, &ok);
	ceems_json_util_add(obj, "best_start",
			    json_object_new_int64(a->best_start), &ok);
	ceems_json_util_add_double(obj, "best_g", a->best_g, &ok);
	if (!ok) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

static int
verdict_parse(const char *name)
{
	for (int v = CEEMS_ADVICE_WORTH; v <= CEEMS_ADVICE_SMALL; v++)
		if (strcmp(name, ceems_advice_verdict_name(v)) == 0)
			return v;
	return -EINVAL;
}

int
ceems_advice_from_json(const struct json_object *obj,
			      struct ceems_advice *out, char *err,
			      size_t err_size)
{
	static const char *const known[] = { "verdict", "actual_g",
		"best_start", "best_g", NULL };
	struct ceems_advice a;
	struct json_object *val;
	char name[32];
	uint64_t u;
	int v;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "advice must be an object");
	if (ceems_json_util_check_keys(obj, "advice", known, err, err_size) < 0)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	if ((val = ceems_json_util_get(obj, "verdict")) == NULL ||
	    ceems_json_util_read_string(val, "advice.verdict", name, sizeof(name),
					err, err_size) < 0)
		return val == NULL ? ceems_json_util_error(err, err_size,
				"advice.verdict is missing") : -EINVAL;
	v = verdict_parse(name);
	/* No series, no energy: no advice, and no object. */
	if (v < 0 || v == CEEMS_ADVICE_NO_SERIES || v == CEEMS_ADVICE_BAD_JOB)
		return ceems_json_util_error(err, err_size,
				"advice.verdict '%s' is not a verdict", name);
	a.verdict = (enum ceems_advice_verdict)v;
	if ((val = ceems_json_util_get(obj, "actual_g")) == NULL ||
	    ceems_json_util_read_real(val, "advice.actual_g", 0, 1e15,
				      &a.actual_g, err, err_size) < 0)
		return val == NULL ? ceems_json_util_error(err, err_size,
				"advice.actual_g is missing") : -EINVAL;
	if ((val = ceems_json_util_get(obj, "best_g")) == NULL ||
	    ceems_json_util_read_real(val, "advice.best_g", 0, a.actual_g,
				      &a.best_g, err, err_size) < 0)
		return val == NULL ? ceems_json_util_error(err, err_size,
				"advice.best_g is missing") : -EINVAL;
	if ((val = ceems_json_util_get(obj, "best_start")) == NULL ||
	    ceems_json_util_read_uint(val, "advice.best_start", 1,
				      CEEMS_INTENSITY_MAX_TIME, &u, err,
				      err_size) < 0)
		return val == NULL ? ceems_json_util_error(err, err_size,
				"advice.best_start is missing") : -EINVAL;
	a.best_start = (int64_t)u;
	a.saving_g = a.actual_g - a.best_g;
	a.saving_frac = a.actual_g > 0 ? a.saving_g / a.actual_g : 0;
	*out = a;
	return 0;
}
