/* measure_internal.h - what the parts of the measured figures' JSON
 * codec (measure_json.c, measure_io.c, measure_gpu.c, measure_err.c) share and no user of libceems
 * needs.  Not installed; nothing here is exported (the shared library
 * exports only ceems_*). */
#ifndef CEEMS_MEASURE_INTERNAL_H
#define CEEMS_MEASURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "model/measure.h"

struct json_object;

/* measure_io.c: the report's eBPF members (io, net, ebpf_dropped,
 * ebpf_absent) from IO into OBJ, and back (-EINVAL with ERR). */
void ceems_measure_io_to_json(struct json_object *obj,
			const struct ceems_agent_io_report *io, bool *ok);
int ceems_measure_io_from_json(const struct json_object *obj,
			 struct ceems_agent_io_report *io, char *err,
			 size_t err_size);

/* measure_gpu.c: the report's "gpus" member from R into OBJ (none
 * without GPUs), and back from its array ARR (-EINVAL with ERR). */
void ceems_measure_gpu_to_json(struct json_object *obj,
			  const struct ceems_agent_job_report *r, bool *ok);
int ceems_measure_gpu_from_json(const struct json_object *arr,
			   struct ceems_agent_job_report *r, char *err,
			   size_t err_size);

/* measure_err.c: the error bound E into the domain objects of the
 * report's "ledger" object LEDGER, and back (-EINVAL with ERR). */
void ceems_measure_err_to_json(struct json_object *ledger,
			       const struct ceems_energy_err_report *e,
			       bool *ok);
int ceems_measure_err_from_json(const struct json_object *ledger,
				struct ceems_energy_err_report *e, char *err,
				size_t err_size);

#endif /* CEEMS_MEASURE_INTERNAL_H */
