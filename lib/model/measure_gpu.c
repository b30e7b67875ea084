/* measure_gpu.c - a job report's GPUs (struct
 * ceems_agent_gpu_report: the device, the job's share of it, its energy,
 * utilisation and memory figures, each only when measured) as the
 * report's "gpus" member, both ways (measure_json.c). */
#include "config.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/measure.h"
#include "model/measure_internal.h"

/* A GPU's percentages on the wire: name, have flag, value. */
static const struct {
	const char *name;
	size_t have, value;
} gpu_pcts[] = {
#define P(f) { #f "_pct", offsetof(struct ceems_agent_gpu_report, have_##f), \
	       offsetof(struct ceems_agent_gpu_report, f##_pct) }
	P(util), P(mem_util), P(sm_active), P(sm_occupancy),
	P(tensor_active), P(fp_active),
#undef P
};
#define NGPU_PCTS (sizeof(gpu_pcts) / sizeof(gpu_pcts[0]))

/* A GPU the job held: identity, then each figure only when measured. */
static struct json_object *
gpu_to_json(const struct ceems_agent_gpu_report *g, bool *ok)
{
	struct json_object *obj = json_object_new_object();

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	if (g->uuid[0] != '\0')
		ceems_json_util_add(obj, "uuid", ceems_json_util_new_text(g->uuid, sizeof(g->uuid)), ok);
	if (g->bus_id[0] != '\0')
		ceems_json_util_add(obj, "bus_id",
			       ceems_json_util_new_text(g->bus_id, sizeof(g->bus_id)), ok);
	if (g->instance >= 0)
		ceems_json_util_add(obj, "instance", json_object_new_int(g->instance), ok);
	ceems_json_util_add_double(obj, "share", g->share, ok);
	if (g->power_integrated)
		ceems_json_util_add(obj, "power_integrated", json_object_new_boolean(1), ok);
	if (g->have_energy)
		ceems_json_util_add_double(obj, "energy_j", g->energy_j, ok);
	for (size_t i = 0; i < NGPU_PCTS; i++) {
		bool have;
		double v;

		memcpy(&have, (const char *)g + gpu_pcts[i].have, sizeof(have));
		memcpy(&v, (const char *)g + gpu_pcts[i].value, sizeof(v));
		if (have)
			ceems_json_util_add_double(obj, gpu_pcts[i].name, v, ok);
	}
	if (g->have_mem_peak)
		ceems_json_util_add(obj, "mem_peak_bytes", ceems_json_util_new_u64(g->mem_peak_bytes), ok);
	if (g->mem_total_bytes != 0)
		ceems_json_util_add(obj, "mem_total_bytes", ceems_json_util_new_u64(g->mem_total_bytes), ok);
	return obj;
}

void
ceems_measure_gpu_to_json(struct json_object *obj,
			 const struct ceems_agent_job_report *r, bool *ok)
{
	struct json_object *gpus;

	if (r->ngpus == 0)
		return;
	gpus = json_object_new_array();
	for (uint32_t i = 0; gpus != NULL && i < r->ngpus &&
			     i < CEEMS_LEDGER_MAX_GPUS; i++) {
		struct json_object *g = gpu_to_json(&r->gpus[i], ok);

		if (g == NULL || json_object_array_add(gpus, g) < 0) {
			json_object_put(g);
			*ok = false;
		}
	}
	ceems_json_util_add(obj, "gpus", gpus, ok);
}

/* Bytes beyond this are no GPU's: PostgreSQL's bigint holds them. */
#define GPU_BYTES_MAX ((uint64_t)INT64_MAX)

static int
gpu_from_json(const struct json_object *obj, struct ceems_agent_gpu_report *g,
	      char *err, size_t err_size)
{
	struct json_object *val;
	uint64_t u;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "report.gpus[] must be objects");
	memset(g, 0, sizeof(*g));
	g->instance = -1;
	if ((val = ceems_json_util_get(obj, "uuid")) != NULL &&
	    (r = ceems_json_util_read_string(val, "report.gpus[].uuid", g->uuid,
					sizeof(g->uuid), err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "bus_id")) != NULL &&
	    (r = ceems_json_util_read_string(val, "report.gpus[].bus_id", g->bus_id,
					sizeof(g->bus_id), err, err_size)) < 0)
		return r;
	/* The device is known by one of them, or it is no device. */
	if (g->uuid[0] == '\0' && g->bus_id[0] == '\0')
		return ceems_json_util_error(err, err_size,
					"report.gpus[] has neither uuid nor bus_id");
	if ((val = ceems_json_util_get(obj, "instance")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "report.gpus[].instance", 0,
					      INT32_MAX, &u, err, err_size)) < 0)
			return r;
		g->instance = (int)u;
	}
	if ((val = ceems_json_util_get(obj, "share")) == NULL)
		return ceems_json_util_error(err, err_size, "report.gpus[].share is missing");
	if ((r = ceems_json_util_read_real(val, "report.gpus[].share", 0, 1, &g->share,
				      err, err_size)) < 0)
		return r;
	if (g->share <= 0)
		return ceems_json_util_error(err, err_size,
					"report.gpus[].share must be above 0");
	if ((val = ceems_json_util_get(obj, "power_integrated")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "report.gpus[].power_integrated",
				      &g->power_integrated, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "energy_j")) != NULL) {
		if ((r = ceems_json_util_read_real(val, "report.gpus[].energy_j", 0,
					      INFINITY, &g->energy_j, err, err_size)) < 0)
			return r;
		g->have_energy = true;
	}
	for (size_t i = 0; i < NGPU_PCTS; i++) {
		const bool yes = true;
		char where[48];
		double v;

		if ((val = ceems_json_util_get(obj, gpu_pcts[i].name)) == NULL)
			continue;
		snprintf(where, sizeof(where), "report.gpus[].%s", gpu_pcts[i].name);
		if ((r = ceems_json_util_read_real(val, where, 0, 100, &v, err,
					      err_size)) < 0)
			return r;
		memcpy((char *)g + gpu_pcts[i].value, &v, sizeof(v));
		memcpy((char *)g + gpu_pcts[i].have, &yes, sizeof(yes));
	}
	if ((val = ceems_json_util_get(obj, "mem_peak_bytes")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "report.gpus[].mem_peak_bytes", 0,
					      GPU_BYTES_MAX, &g->mem_peak_bytes,
					      err, err_size)) < 0)
			return r;
		g->have_mem_peak = true;
	}
	if ((val = ceems_json_util_get(obj, "mem_total_bytes")) != NULL &&
	    (r = ceems_json_util_read_uint(val, "report.gpus[].mem_total_bytes", 1,
				      GPU_BYTES_MAX, &g->mem_total_bytes, err,
				      err_size)) < 0)
		return r;
	return 0;
}

int
ceems_measure_gpu_from_json(const struct json_object *arr,
			   struct ceems_agent_job_report *r, char *err,
			   size_t err_size)
{
	size_t n;
	int ret;

	if (!json_object_is_type(arr, json_type_array))
		return ceems_json_util_error(err, err_size, "report.gpus must be an array");
	n = json_object_array_length(arr);
	if (n > CEEMS_LEDGER_MAX_GPUS)
		return ceems_json_util_error(err, err_size, "report.gpus has more than %d GPUs",
					CEEMS_LEDGER_MAX_GPUS);
	for (size_t i = 0; i < n; i++)
		if ((ret = gpu_from_json(json_object_array_get_idx(arr, i),
					 &r->gpus[i], err, err_size)) < 0)
			return ret;
	r->ngpus = (uint32_t)n;
	return 0;
}
