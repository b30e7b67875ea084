/* job_json.c - a job's metadata (struct ceems_job_meta) as the JSON
 * object "job": the record's (doc/record-format.md), the one a
 * deregistration carries so that the agent can write the record itself
 * (agent_proto.h), and a job note's (job_note.h).  Unknown fields are
 * left out, never written as 0 (design invariant 5); the decoder is
 * strict. */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/job.h"

/* A metadata field: how it is stored and what "unknown" is. */
enum field_kind {
	F_STRING,	/* "" unknown */
	F_U32,		/* CEEMS_UNKNOWN_U32 unknown */
	F_U32_ZERO,	/* 0 unknown */
	F_U64_ZERO,	/* 0 unknown */
	F_I64_ZERO,	/* 0 unknown (times) */
	F_EXIT,		/* -1 unknown */
	F_SIGNAL,	/* 0 none */
	F_DEPENDENCY,	/* enum ceems_job_dependency: true when listed, else left
			 * out, so that an older agent, whose decoder is strict,
			 * still takes every other job's metadata */
};

struct field {
	const char *name;
	enum field_kind kind;
	size_t offset, size;
};

#define META(name, kind) \
	{ #name, kind, offsetof(struct ceems_job_meta, name), \
	  sizeof(((struct ceems_job_meta *)0)->name) }

static const struct field meta_fields[] = {
	META(cluster, F_STRING), META(node, F_STRING),
	META(array_job_id, F_U32), META(array_task_id, F_U32),
	META(gid, F_U32), META(user, F_STRING), META(account, F_STRING),
	META(partition, F_STRING), META(qos, F_STRING), META(name, F_STRING),
	META(state, F_STRING), META(exit_code, F_EXIT),
	META(exit_signal, F_SIGNAL), META(submit_time, F_I64_ZERO),
	META(start_time, F_I64_ZERO), META(end_time, F_I64_ZERO),
	META(time_limit_min, F_U32), META(alloc_cpus, F_U32_ZERO),
	META(req_mem_bytes, F_U64_ZERO), META(alloc_gpus, F_U32_ZERO),
	META(nnodes, F_U32_ZERO), META(nodes, F_STRING),
	META(dependency, F_DEPENDENCY),
};
#define NFIELDS (sizeof(meta_fields) / sizeof(meta_fields[0]))

static struct json_object *
meta_to_json(const struct ceems_job_meta *m, bool *ok)
{
	struct json_object *obj = json_object_new_object();

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	ceems_json_util_add(obj, "jobid", json_object_new_int64(m->jobid), ok);
	ceems_json_util_add(obj, "uid", json_object_new_int64(m->uid), ok);
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct field *f = &meta_fields[i];
		const char *p = (const char *)m + f->offset;
		uint32_t u32;
		uint64_t u64;
		int64_t i64;
		int32_t i32;

		switch (f->kind) {
		case F_STRING:
			if (p[0] != '\0')
				ceems_json_util_add(obj, f->name,
					       ceems_json_util_new_text(p, f->size), ok);
			break;
		case F_U32:
		case F_U32_ZERO:
			memcpy(&u32, p, sizeof(u32));
			if (u32 != (f->kind == F_U32 ? CEEMS_UNKNOWN_U32 : 0))
				ceems_json_util_add(obj, f->name, json_object_new_int64(u32), ok);
			break;
		case F_U64_ZERO:
			memcpy(&u64, p, sizeof(u64));
			if (u64 != 0)
				ceems_json_util_add(obj, f->name, ceems_json_util_new_u64(u64), ok);
			break;
		case F_I64_ZERO:
			memcpy(&i64, p, sizeof(i64));
			if (i64 != 0)
				ceems_json_util_add(obj, f->name, json_object_new_int64(i64), ok);
			break;
		case F_EXIT:
		case F_SIGNAL:
			memcpy(&i32, p, sizeof(i32));
			if (i32 != (f->kind == F_EXIT ? -1 : 0))
				ceems_json_util_add(obj, f->name, json_object_new_int(i32), ok);
			break;
		case F_DEPENDENCY:
			if (*p == CEEMS_JOB_DEPENDENCY_LISTED)
				ceems_json_util_add(obj, f->name,
						    json_object_new_boolean(1), ok);
			break;
		}
	}
	return obj;
}

static int
meta_from_json(const struct json_object *obj, struct ceems_job_meta *m,
	       char *err, size_t err_size)
{
	static const char *known[NFIELDS + 3];
	struct json_object *val;
	uint64_t u;
	double d;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "job must be an object");
	if (known[0] == NULL) {
		known[0] = "jobid";
		known[1] = "uid";
		for (size_t i = 0; i < NFIELDS; i++)
			known[i + 2] = meta_fields[i].name;
	}
	if ((r = ceems_json_util_check_keys(obj, "job", known, err, err_size)) < 0)
		return r;
	ceems_job_meta_init(m);
	if ((val = ceems_json_util_get(obj, "jobid")) == NULL)
		return ceems_json_util_error(err, err_size, "job.jobid is missing");
	if ((r = ceems_json_util_read_uint(val, "job.jobid", 1, UINT32_MAX - 1, &u,
				      err, err_size)) < 0)
		return r;
	m->jobid = (uint32_t)u;
	if ((val = ceems_json_util_get(obj, "uid")) == NULL)
		return ceems_json_util_error(err, err_size, "job.uid is missing");
	if ((r = ceems_json_util_read_uint(val, "job.uid", 0, UINT32_MAX - 1, &u,
				      err, err_size)) < 0)
		return r;
	m->uid = (uint32_t)u;
	for (size_t i = 0; i < NFIELDS; i++) {
		const struct field *f = &meta_fields[i];
		char *p = (char *)m + f->offset;
		char where[48];

		if ((val = ceems_json_util_get(obj, f->name)) == NULL)
			continue;
		snprintf(where, sizeof(where), "job.%s", f->name);
		switch (f->kind) {
		case F_STRING:
			/* Names from Slurm in a record written before
			 * control characters were escaped (text.h) may hold
			 * some: read, not lost.  The state is a word of ours. */
			r = strcmp(f->name, "state") != 0 ?
			    ceems_json_util_read_text(val, where, p, f->size, err, err_size) :
			    ceems_json_util_read_string(val, where, p, f->size, err, err_size);
			break;
		case F_U32:
		case F_U32_ZERO:
			r = ceems_json_util_read_uint(val, where, 0, UINT32_MAX - 1, &u,
						 err, err_size);
			if (r == 0) {
				uint32_t v = (uint32_t)u;

				memcpy(p, &v, sizeof(v));
			}
			break;
		case F_U64_ZERO:
			r = ceems_json_util_read_uint(val, where, 0, UINT64_MAX, &u,
						 err, err_size);
			if (r == 0)
				memcpy(p, &u, sizeof(u));
			break;
		case F_I64_ZERO:
			/* Unix times from 1970 to 2200. */
			r = ceems_json_util_read_uint(val, where, 1, 7258118400ULL, &u,
						 err, err_size);
			if (r == 0) {
				int64_t v = (int64_t)u;

				memcpy(p, &v, sizeof(v));
			}
			break;
		case F_EXIT:
		case F_SIGNAL:
			r = ceems_json_util_read_real(val, where, 0, 255, &d, err,
						 err_size);
			if (r == 0 && d != (double)(int32_t)d)
				r = ceems_json_util_error(err, err_size,
						     "%s must be a whole number", where);
			if (r == 0) {
				int32_t v = (int32_t)d;

				memcpy(p, &v, sizeof(v));
			}
			break;
		case F_DEPENDENCY:
			if (!json_object_is_type(val, json_type_boolean)) {
				r = ceems_json_util_error(err, err_size,
						     "%s must be a boolean", where);
				break;
			}
			*p = json_object_get_boolean(val) ?
			     CEEMS_JOB_DEPENDENCY_LISTED : CEEMS_JOB_DEPENDENCY_NONE;
			r = 0;
			break;
		}
		if (r < 0)
			return r;
	}
	return 0;
}

struct json_object *
ceems_job_json_meta_to_json(const struct ceems_job_meta *meta)
{
	bool ok = true;
	struct json_object *obj = meta_to_json(meta, &ok);

	if (!ok) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

int
ceems_job_json_meta_from_json(const struct json_object *obj,
			 struct ceems_job_meta *meta, char *err,
			 size_t err_size)
{
	return meta_from_json(obj, meta, err, err_size);
}
