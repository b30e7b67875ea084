/* measure_err.c - a job's energy error bound in the JSON of its report
 * (the protocol's REPORT, the record's "measurements"): in each domain
 * object of "ledger", "err_j" (the bound, J) and "err" (its parts:
 * "source", "lag", "idle_power", "gaps"), only where the bound is known
 * (doc/record-format.md).  The model is lib/model/energy_err.h. */
#include "config.h"

#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/measure_internal.h"
#include "base/json_util.h"

void
ceems_measure_err_to_json(struct json_object *ledger,
			  const struct ceems_energy_err_report *e, bool *ok)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		struct json_object *dom, *parts;
		double total;

		dom = ceems_json_util_get(ledger,
					  ceems_job_figures_energy_domain_name(d));
		if (dom == NULL || !ceems_energy_err_report_domain(e, d, &total))
			continue;
		ceems_json_util_add_double(dom, "err_j", total, ok);
		parts = json_object_new_object();
		ceems_json_util_add(dom, "err", parts, ok);
		for (int k = 0; parts != NULL && k < CEEMS_ERR_PARTS; k++)
			ceems_json_util_add_double(parts,
						   ceems_energy_err_part_name(k),
						   e->part_j[d][k], ok);
	}
}

/* Domain D's "err" object OBJ into E. */
static int
parts_from_json(const struct json_object *obj, int d,
		struct ceems_energy_err_report *e, char *err, size_t err_size)
{
	const char *name = ceems_job_figures_energy_domain_name(d);
	char where[96];

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size,
					     "report.ledger.%s.err must be an object",
					     name);
	for (int k = 0; k < CEEMS_ERR_PARTS; k++) {
		const char *part = ceems_energy_err_part_name(k);
		struct json_object *val = ceems_json_util_get(obj, part);
		int r;

		snprintf(where, sizeof(where), "report.ledger.%s.err.%s", name,
			 part);
		if (val == NULL)
			return ceems_json_util_error(err, err_size, "%s is missing",
						     where);
		if ((r = ceems_json_util_read_real(val, where, 0, INFINITY,
						   &e->part_j[d][k], err,
						   err_size)) < 0)
			return r;
	}
	e->have[d] = true;
	e->known = true;
	return 0;
}

int
ceems_measure_err_from_json(const struct json_object *ledger,
			    struct ceems_energy_err_report *e, char *err,
			    size_t err_size)
{
	memset(e, 0, sizeof(*e));
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		struct json_object *dom, *parts;
		int r;

		dom = ceems_json_util_get(ledger,
					  ceems_job_figures_energy_domain_name(d));
		if (dom == NULL || !json_object_is_type(dom, json_type_object) ||
		    (parts = ceems_json_util_get(dom, "err")) == NULL)
			continue;
		if ((r = parts_from_json(parts, d, e, err, err_size)) < 0)
			return r;
	}
	return 0;
}
