/* measure_perf.c - a job's perf figures (struct ceems_perf_report) as JSON,
 * both ways: the "perf" object of the agent's report and of the job's
 * record (doc/record-format.md), and the names of its events and
 * statuses.  In the client half of libceems: the plugin decodes reports.
 *
 *   "perf": { "software": "measured", "hardware": "not supported",
 *             "running_fraction": 1, "task_clock": 1.2e9,
 *             "context_switches": 10, ... }
 *
 * A count is there only when measured (unknown is not zero); the two
 * statuses are always there. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/measure.h"

static const char *const event_names[CEEMS_PERF_NEVENTS] = {
	"task_clock", "context_switches", "cpu_migrations", "page_faults",
	"cycles", "instructions", "cache_references", "cache_misses",
	"branch_misses",
};

static const char *const status_names[CEEMS_PERF_NSTATUS] = {
	"off", "measured", "not supported", "no permission",
	"not measured: descriptor budget", "no perf_event cgroup",
	"agent restarted", "failed",
};

const char *
ceems_measure_perf_status_name(unsigned status)
{
	return status < CEEMS_PERF_NSTATUS ? status_names[status] : "unknown";
}

const char *
ceems_measure_perf_event_name(unsigned event)
{
	return event < CEEMS_PERF_NEVENTS ? event_names[event] : "unknown";
}

int
ceems_measure_perf_status_parse(const char *name)
{
	for (unsigned s = 0; s < CEEMS_PERF_NSTATUS; s++)
		if (strcmp(name, status_names[s]) == 0)
			return (int)s;
	return -EINVAL;
}

bool
ceems_measure_perf_report_any(const struct ceems_perf_report *r)
{
	return r->sw_status != CEEMS_PERF_OFF || r->hw_status != CEEMS_PERF_OFF;
}

struct json_object *
ceems_measure_perf_report_to_json(const struct ceems_perf_report *r, bool *ok)
{
	struct json_object *obj = json_object_new_object();

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	ceems_json_util_add(obj, "software",
		       json_object_new_string(ceems_measure_perf_status_name(r->sw_status)), ok);
	ceems_json_util_add(obj, "hardware",
		       json_object_new_string(ceems_measure_perf_status_name(r->hw_status)), ok);
	if (r->present != 0)
		ceems_json_util_add_double(obj, "running_fraction", r->running_fraction, ok);
	if (r->present != 0 && r->unmeasured_s > 0)
		ceems_json_util_add_double(obj, "unmeasured_s", r->unmeasured_s, ok);
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++)
		if (r->present & (1u << e))
			ceems_json_util_add_double(obj, event_names[e], r->value[e], ok);
	return obj;
}

static int
status_from_json(const struct json_object *obj, const char *key,
		 uint8_t *out, char *err, size_t err_size)
{
	struct json_object *val = ceems_json_util_get(obj, key);
	char name[48], where[32];
	int r;

	snprintf(where, sizeof(where), "perf.%s", key);
	if (val == NULL)
		return ceems_json_util_error(err, err_size, "%s is missing", where);
	if ((r = ceems_json_util_read_string(val, where, name, sizeof(name), err,
					err_size)) < 0)
		return r;
	if ((r = ceems_measure_perf_status_parse(name)) < 0)
		return ceems_json_util_error(err, err_size, "%s is not a perf status", where);
	*out = (uint8_t)r;
	return 0;
}

int
ceems_measure_perf_report_from_json(const struct json_object *obj,
			    struct ceems_perf_report *out, char *err,
			    size_t err_size)
{
	static const char *const known[] = {
		"software", "hardware", "running_fraction", "task_clock",
		"context_switches", "cpu_migrations", "page_faults", "cycles",
		"instructions", "cache_references", "cache_misses",
		"branch_misses", "unmeasured_s", NULL,
	};
	struct ceems_perf_report r;
	struct json_object *val;
	int ret;

	memset(&r, 0, sizeof(r));
	r.running_fraction = 1;
	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "perf must be an object");
	if ((ret = ceems_json_util_check_keys(obj, "perf", known, err, err_size)) < 0 ||
	    (ret = status_from_json(obj, "software", &r.sw_status, err, err_size)) < 0 ||
	    (ret = status_from_json(obj, "hardware", &r.hw_status, err, err_size)) < 0)
		return ret;
	if ((val = ceems_json_util_get(obj, "running_fraction")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "perf.running_fraction", 0, 1,
					&r.running_fraction, err, err_size)) < 0)
		return ret;
	if ((val = ceems_json_util_get(obj, "unmeasured_s")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "perf.unmeasured_s", 0, 1e10,
					&r.unmeasured_s, err, err_size)) < 0)
		return ret;
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++) {
		char where[40];

		if ((val = ceems_json_util_get(obj, event_names[e])) == NULL)
			continue;
		snprintf(where, sizeof(where), "perf.%s", event_names[e]);
		if ((ret = ceems_json_util_read_real(val, where, 0, 1e300,
						&r.value[e], err, err_size)) < 0)
			return ret;
		r.present |= 1u << e;
	}
	*out = r;
	return 0;
}
