/* agent_proto_spec.c - the job spec of the node agent's protocol (the
 * job's identity, its cgroup, and when known Slurm's start time and
 * cluster, sent with "register") as JSON, both
 * ways.  The spec comes from other processes and names cgroup paths
 * that the agent, running as root, opens files below: the decoder is
 * strict, and vets each path so that nothing climbs out of the
 * hierarchy.
 *
 * Separate from the messages (agent_proto.c) and the report (the
 * model's, measure_json.c) because it is the one part of a request that
 * leads the agent to the file system. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "base/json_util.h"

/* A cgroup path as /proc/PID/cgroup shows it: absolute, no "." or ".."
 * component, no empty component.  The agent runs as root and opens
 * files below it, so nothing may climb out of the hierarchy. */
static int
check_cgroup_path(const char *path, const char *where, char *err,
		  size_t err_size)
{
	const char *p;

	if (path[0] != '/')
		return ceems_json_util_error(err, err_size, "%s must be an absolute path", where);
	if (path[1] == '\0')
		return ceems_json_util_error(err, err_size,
			      "%s is the hierarchy's root, not a job's cgroup", where);
	for (p = path; *p != '\0';) {
		size_t len;

		p++;	/* past '/' */
		len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return ceems_json_util_error(err, err_size,
				      "%s must not hold empty, '.' or '..' components",
				      where);
		p += len;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Job spec                                                            */
/* ------------------------------------------------------------------ */

/* A GPU identifier is short printable ASCII without spaces: what UUIDs,
 * bus ids and "dev:195:0" are made of.  Anything else is garbage. */
static bool
gpu_id_valid(const char *id)
{
	size_t n = 0;

	for (const char *p = id; *p != '\0'; p++, n++)
		if (!isalnum((unsigned char)*p) && strchr(":._/-", *p) == NULL)
			return false;
	return n > 0 && n < CEEMS_AGENT_GPU_ID_MAX;
}

static struct json_object *
gpu_ids_to_json(const struct ceems_agent_job_spec *spec)
{
	struct json_object *arr = json_object_new_array();

	for (uint32_t i = 0; arr != NULL && i < spec->ngpu_ids &&
			     i < CEEMS_AGENT_MAX_GPU_IDS; i++) {
		struct json_object *id;

		if (!gpu_id_valid(spec->gpu_ids[i]))
			continue;
		id = json_object_new_string(spec->gpu_ids[i]);
		if (id == NULL || json_object_array_add(arr, id) != 0) {
			json_object_put(id);
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static int
gpu_ids_from_json(struct json_object *val, struct ceems_agent_job_spec *s,
		  char *err, size_t err_size)
{
	size_t n;
	int r;

	if (!json_object_is_type(val, json_type_array))
		return ceems_json_util_error(err, err_size, "job.gpus must be an array");
	n = json_object_array_length(val);
	if (n > CEEMS_AGENT_MAX_GPU_IDS)
		return ceems_json_util_error(err, err_size,
			      "job.gpus has more than %d entries",
			      CEEMS_AGENT_MAX_GPU_IDS);
	for (size_t i = 0; i < n; i++) {
		char where[32];

		snprintf(where, sizeof(where), "job.gpus[%zu]", i);
		if ((r = ceems_json_util_read_string(json_object_array_get_idx(val, i),
				where, s->gpu_ids[i], sizeof(s->gpu_ids[i]),
				err, err_size)) < 0)
			return r;
		if (!gpu_id_valid(s->gpu_ids[i]))
			return ceems_json_util_error(err, err_size,
				"%s is not a GPU identifier (a UUID, a bus id, "
				"dev:MAJOR:MINOR or gres:N)", where);
	}
	s->ngpu_ids = (uint32_t)n;
	return 0;
}

struct json_object *
ceems_agent_proto_spec_to_json(const struct ceems_agent_job_spec *spec)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *cg = json_object_new_object();
	struct json_object *v1 = json_object_new_object();
	bool ok = obj != NULL && cg != NULL && v1 != NULL;
	size_t ngpus = 0;

	if (!ok) {
		json_object_put(obj);
		json_object_put(cg);
		json_object_put(v1);
		return NULL;
	}
	ceems_json_util_add(obj, "jobid", json_object_new_int64(spec->jobid), &ok);
	ceems_json_util_add(obj, "uid", json_object_new_int64(spec->uid), &ok);

	ceems_json_util_add(cg, "version", json_object_new_int((int)spec->cgroup.version), &ok);
	if (spec->cgroup.unified[0] != '\0')
		ceems_json_util_add(cg, "unified",
			       ceems_json_util_new_text(spec->cgroup.unified,
						   sizeof(spec->cgroup.unified)), &ok);
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (spec->cgroup.v1[c][0] != '\0')
			ceems_json_util_add(v1, ceems_cgroup_path_controller_name(c),
			    ceems_json_util_new_text(spec->cgroup.v1[c],
						sizeof(spec->cgroup.v1[c])), &ok);
	if (json_object_object_length(v1) > 0)
		ceems_json_util_add(cg, "v1", v1, &ok);
	else
		json_object_put(v1);
	ceems_json_util_add(obj, "cgroup", cg, &ok);

	/* 0 means "let the agent read the cgroup": not a value to send. */
	if (spec->alloc_cores != 0)
		ceems_json_util_add(obj, "alloc_cores", json_object_new_int64(spec->alloc_cores), &ok);
	if (spec->alloc_mem_bytes != 0)
		ceems_json_util_add(obj, "alloc_mem_bytes", ceems_json_util_new_u64(spec->alloc_mem_bytes), &ok);
	for (size_t i = 0; i < CEEMS_LEDGER_MAX_GPUS; i++)
		if (spec->gpu_share[i] > 0)
			ngpus = i + 1;
	if (ngpus > 0) {
		struct json_object *arr = json_object_new_array();

		if (arr == NULL)
			ok = false;
		for (size_t i = 0; arr != NULL && i < ngpus; i++) {
			double share = spec->gpu_share[i];

			if (!isfinite(share) || share < 0)
				share = 0;
			if (json_object_array_add(arr, ceems_json_util_double(share)) != 0)
				ok = false;
		}
		ceems_json_util_add(obj, "gpu_share", arr, &ok);
	}
	/* Only when asked: an agent older than the key still registers
	 * every other job. */
	if (spec->series)
		ceems_json_util_add(obj, "series", json_object_new_boolean(1), &ok);
	/* Only when known, for the same reason. */
	if (spec->start_time > 0)
		ceems_json_util_add(obj, "start_time",
			       json_object_new_int64(spec->start_time), &ok);
	if (spec->cluster[0] != '\0')
		ceems_json_util_add(obj, "cluster",
			       ceems_json_util_new_text(spec->cluster,
						   sizeof(spec->cluster)), &ok);
	if (spec->ngpu_ids > 0)
		ceems_json_util_add(obj, "gpus", gpu_ids_to_json(spec), &ok);
	/* Only when asked, as series. */
	if (spec->perf)
		ceems_json_util_add(obj, "perf", json_object_new_boolean(1), &ok);
	if (!ok) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

static int
cgroup_from_json(const struct json_object *obj, struct ceems_cgroup_job *cg,
		 char *err, size_t err_size)
{
	static const char *const known[] = { "version", "unified", "v1", NULL };
	struct json_object *val;
	uint64_t version;
	bool any_v1 = false;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "job.cgroup must be an object");
	if ((r = ceems_json_util_check_keys(obj, "job.cgroup", known, err, err_size)) < 0)
		return r;
	val = ceems_json_util_get(obj, "version");
	if (val == NULL)
		return ceems_json_util_error(err, err_size, "job.cgroup.version is missing");
	if ((r = ceems_json_util_read_uint(val, "job.cgroup.version", 1, 2, &version, err,
			   err_size)) < 0)
		return r;
	cg->version = version == 1 ? CEEMS_CGROUP_V1 : CEEMS_CGROUP_V2;

	if ((val = ceems_json_util_get(obj, "unified")) != NULL) {
		if ((r = ceems_json_util_read_string(val, "job.cgroup.unified", cg->unified,
				     sizeof(cg->unified), err, err_size)) < 0 ||
		    (r = check_cgroup_path(cg->unified, "job.cgroup.unified",
					   err, err_size)) < 0)
			return r;
	}
	if ((val = ceems_json_util_get(obj, "v1")) != NULL) {
		if (!json_object_is_type(val, json_type_object))
			return ceems_json_util_error(err, err_size, "job.cgroup.v1 must be an object");
		json_object_object_foreach(val, key, path) {
			char where[64];
			int c;

			for (c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
				if (strcmp(key, ceems_cgroup_path_controller_name(c)) == 0)
					break;
			if (c == CEEMS_CG_NCONTROLLERS)
				return ceems_json_util_error(err, err_size,
					      "job.cgroup.v1 has an unknown controller '%.40s'",
					      key);
			snprintf(where, sizeof(where), "job.cgroup.v1.%s", key);
			if ((r = ceems_json_util_read_string(path, where, cg->v1[c],
					     sizeof(cg->v1[c]), err, err_size)) < 0 ||
			    (r = check_cgroup_path(cg->v1[c], where, err,
						   err_size)) < 0)
				return r;
			any_v1 = true;
		}
	}
	if (cg->version == CEEMS_CGROUP_V2 && cg->unified[0] == '\0')
		return ceems_json_util_error(err, err_size,
			      "job.cgroup.unified is missing for a cgroup v2 job");
	if (cg->version == CEEMS_CGROUP_V1 && !any_v1)
		return ceems_json_util_error(err, err_size,
			      "job.cgroup.v1 names no controller for a cgroup v1 job");
	return 0;
}

int
ceems_agent_proto_spec_from_json(const struct json_object *obj,
			       struct ceems_agent_job_spec *spec, char *err,
			       size_t err_size)
{
	static const char *const known[] = {
		"jobid", "uid", "cgroup", "alloc_cores", "alloc_mem_bytes",
		"gpu_share", "series", "start_time", "cluster", "gpus", "perf", NULL,
	};
	struct ceems_agent_job_spec s;
	struct json_object *val;
	uint64_t u;
	int r;

	memset(&s, 0, sizeof(s));
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "job must be an object");
	if ((r = ceems_json_util_check_keys(obj, "job", known, err, err_size)) < 0)
		return r;

	if ((val = ceems_json_util_get(obj, "jobid")) == NULL)
		return ceems_json_util_error(err, err_size, "job.jobid is missing");
	if ((r = ceems_json_util_read_uint(val, "job.jobid", 1, UINT32_MAX, &u, err, err_size)) < 0)
		return r;
	s.jobid = (uint32_t)u;
	/* (uid_t)-1 means "no user" to the kernel: never a job's owner. */
	if ((val = ceems_json_util_get(obj, "uid")) == NULL)
		return ceems_json_util_error(err, err_size, "job.uid is missing");
	if ((r = ceems_json_util_read_uint(val, "job.uid", 0, UINT32_MAX - 1, &u, err, err_size)) < 0)
		return r;
	s.uid = (uint32_t)u;
	if ((val = ceems_json_util_get(obj, "cgroup")) == NULL)
		return ceems_json_util_error(err, err_size, "job.cgroup is missing");
	if ((r = cgroup_from_json(val, &s.cgroup, err, err_size)) < 0)
		return r;

	if ((val = ceems_json_util_get(obj, "alloc_cores")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "job.alloc_cores", 0, CEEMS_CPUSET_MAX_CPUS,
				   &u, err, err_size)) < 0)
			return r;
		s.alloc_cores = (uint32_t)u;
	}
	if ((val = ceems_json_util_get(obj, "alloc_mem_bytes")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "job.alloc_mem_bytes", 0, UINT64_MAX, &u,
				   err, err_size)) < 0)
			return r;
		s.alloc_mem_bytes = u;
	}
	if ((val = ceems_json_util_get(obj, "gpu_share")) != NULL) {
		size_t n;

		if (!json_object_is_type(val, json_type_array))
			return ceems_json_util_error(err, err_size, "job.gpu_share must be an array");
		n = json_object_array_length(val);
		if (n > CEEMS_LEDGER_MAX_GPUS)
			return ceems_json_util_error(err, err_size,
				      "job.gpu_share has more than %d devices",
				      CEEMS_LEDGER_MAX_GPUS);
		for (size_t i = 0; i < n; i++) {
			char where[48];

			snprintf(where, sizeof(where), "job.gpu_share[%zu]", i);
			if ((r = ceems_json_util_read_real(json_object_array_get_idx(val, i), where,
					   0, 1, &s.gpu_share[i], err, err_size)) < 0)
				return r;
		}
	}
	if ((val = ceems_json_util_get(obj, "series")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "job.series", &s.series, err, err_size)) < 0)
		return r;
	/* Absent: not known.  0 is not a start time either: a client that
	 * does not know one leaves the key out. */
	if ((val = ceems_json_util_get(obj, "start_time")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "job.start_time", 1,
				   CEEMS_AGENT_START_TIME_MAX, &u, err,
				   err_size)) < 0)
			return r;
		s.start_time = (int64_t)u;
	}
	if ((val = ceems_json_util_get(obj, "cluster")) != NULL) {
		if ((r = ceems_json_util_read_string(val, "job.cluster", s.cluster,
				     sizeof(s.cluster), err, err_size)) < 0)
			return r;
		if (s.cluster[0] == '\0')
			return ceems_json_util_error(err, err_size,
				      "job.cluster is empty (leave it out when not known)");
	}
	if ((val = ceems_json_util_get(obj, "gpus")) != NULL &&
	    (r = gpu_ids_from_json(val, &s, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "perf")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "job.perf", &s.perf, err, err_size)) < 0)
		return r;
	*spec = s;
	return 0;
}
