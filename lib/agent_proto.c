/* agent_proto.c - JSON encoding and strict decoding of the node agent's
 * messages (the format is described in agent_proto.h and ceems-agent(8)).
 * Requests come from other processes, so the decoder treats every byte
 * as hostile: bounded size and nesting, exact types, ranges checked,
 * paths vetted before the agent (running as root) opens anything below
 * them.  Replies are decoded type-checked but tolerant of unknown keys,
 * so that an agent can grow fields without breaking older clients. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent_proto.h"

/* Nesting of a valid message is at most 4 (reply, report, ledger,
 * domain); a little room, and no deeper. */
#define MSG_MAX_DEPTH 8

__attribute__((format(printf, 3, 4))) static int
seterr(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* Errno names on the wire                                             */
/* ------------------------------------------------------------------ */

static const struct {
	int code;
	const char *name;
} codes[] = {
	{ -EEXIST, "EEXIST" }, { -ENOENT, "ENOENT" }, { -ENOSPC, "ENOSPC" },
	{ -EPERM, "EPERM" }, { -EINVAL, "EINVAL" }, { -EMSGSIZE, "EMSGSIZE" },
	{ -EBUSY, "EBUSY" }, { -EIO, "EIO" }, { -ENOMEM, "ENOMEM" },
	{ -EACCES, "EACCES" },
};

const char *
ceems_agent_code_name(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "EIO";
}

int
ceems_agent_code_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].name, name) == 0)
			return codes[i].code;
	return -EREMOTEIO;
}

/* ------------------------------------------------------------------ */
/* Small JSON helpers                                                  */
/* ------------------------------------------------------------------ */

/* Add KEY: VAL to OBJ; a NULL VAL (allocation failure) fails the whole
 * encoding, tracked in *OK, so callers check once at the end. */
static void
add(struct json_object *obj, const char *key, struct json_object *val,
    bool *ok)
{
	if (val == NULL || json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		*ok = false;
	}
}

static struct json_object *
new_u64(uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX)
		return json_object_new_int64((int64_t)v);
	return json_object_new_uint64(v);
}

struct json_object *
ceems_json_double(double v)
{
	char text[40];

	if (!isfinite(v))
		return NULL;
	/* The shortest of 15, 16 or 17 digits that reads back as V: 0.1
	 * stays "0.1", not "0.10000000000000001". */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	/* Keep it a JSON double: "5" would read back as an integer. */
	if (strpbrk(text, ".eE") == NULL)
		strncat(text, ".0", sizeof(text) - strlen(text) - 1);
	return json_object_new_double_s(v, text);
}

/* A double that is not finite is not a measurement: the caller leaves
 * the key out. */
static void
add_double(struct json_object *obj, const char *key, double v, bool *ok)
{
	if (isfinite(v))
		add(obj, key, ceems_json_double(v), ok);
}

/* Read an unsigned integer: a JSON integer (not a double) in
 * [MIN, MAX].  WHERE names the field in the message. */
static int
read_uint(const struct json_object *val, const char *where, uint64_t min,
	  uint64_t max, uint64_t *out, char *err, size_t err_size)
{
	int64_t s;
	uint64_t u;

	if (!json_object_is_type(val, json_type_int))
		return seterr(err, err_size, "%s must be a whole number", where);
	s = json_object_get_int64(val);
	if (s < 0)
		return seterr(err, err_size, "%s must not be negative", where);
	u = (uint64_t)s;
	if (s == INT64_MAX)	/* maybe larger: json-c keeps those as uint64 */
		u = json_object_get_uint64(val);
	if (u < min || u > max)
		return seterr(err, err_size,
			      "%s must be between %llu and %llu", where,
			      (unsigned long long)min, (unsigned long long)max);
	*out = u;
	return 0;
}

/* A finite number (integer or not) in [MIN, MAX]. */
static int
read_real(const struct json_object *val, const char *where, double min,
	  double max, double *out, char *err, size_t err_size)
{
	double d;

	if (json_object_is_type(val, json_type_int)) {
		int64_t s = json_object_get_int64(val);

		d = s == INT64_MAX ? (double)json_object_get_uint64(val)
				   : (double)s;
	} else if (json_object_is_type(val, json_type_double)) {
		d = json_object_get_double(val);
	} else {
		return seterr(err, err_size, "%s must be a number", where);
	}
	if (!isfinite(d) || d < min || d > max)
		return seterr(err, err_size, "%s must be a number between %g and %g",
			      where, min, max);
	*out = d;
	return 0;
}

static int
read_bool(const struct json_object *val, const char *where, bool *out,
	  char *err, size_t err_size)
{
	if (!json_object_is_type(val, json_type_boolean))
		return seterr(err, err_size, "%s must be true or false", where);
	*out = json_object_get_boolean(val);
	return 0;
}

/* A string without NUL or control characters that fits SIZE with its
 * NUL. */
static int
read_string(const struct json_object *val, const char *where, char *out,
	    size_t size, char *err, size_t err_size)
{
	const char *s;
	int len;

	if (!json_object_is_type(val, json_type_string))
		return seterr(err, err_size, "%s must be a string", where);
	s = json_object_get_string((struct json_object *)(uintptr_t)val);
	len = json_object_get_string_len(val);
	if (len < 0 || (size_t)len >= size)
		return seterr(err, err_size, "%s is longer than %zu bytes", where,
			      size - 1);
	for (int i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return seterr(err, err_size,
				      "%s holds a control character", where);
	memcpy(out, s, (size_t)len);
	out[len] = '\0';
	return 0;
}

/* A cgroup path as /proc/PID/cgroup shows it: absolute, no "." or ".."
 * component, no empty component.  The agent runs as root and opens
 * files below it, so nothing may climb out of the hierarchy. */
static int
check_cgroup_path(const char *path, const char *where, char *err,
		  size_t err_size)
{
	const char *p;

	if (path[0] != '/')
		return seterr(err, err_size, "%s must be an absolute path", where);
	if (path[1] == '\0')
		return seterr(err, err_size,
			      "%s is the hierarchy's root, not a job's cgroup", where);
	for (p = path; *p != '\0';) {
		size_t len;

		p++;	/* past '/' */
		len = strcspn(p, "/");
		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return seterr(err, err_size,
				      "%s must not hold empty, '.' or '..' components",
				      where);
		p += len;
	}
	return 0;
}

/* Objects whose keys must all be known: the key set is checked first. */
static int
check_keys(const struct json_object *obj, const char *where,
	   const char *const *known, char *err, size_t err_size)
{
	json_object_object_foreach((struct json_object *)(uintptr_t)obj, key, val) {
		size_t i;

		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL)
			return seterr(err, err_size, "%s has an unknown field '%.40s'",
				      where, key);
		/* json-c stores null as a NULL value, which lookups would
		 * take for a missing key: refuse it here, by name. */
		if (val == NULL)
			return seterr(err, err_size, "%s: field '%s' is null",
				      where, key);
	}
	return 0;
}

static struct json_object *
get(const struct json_object *obj, const char *key)
{
	struct json_object *val = NULL;

	if (!json_object_object_get_ex(obj, key, &val))
		return NULL;
	return val;
}

/* ------------------------------------------------------------------ */
/* Job spec                                                            */
/* ------------------------------------------------------------------ */

struct json_object *
ceems_agent_job_spec_to_json(const struct ceems_agent_job_spec *spec)
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
	add(obj, "jobid", json_object_new_int64(spec->jobid), &ok);
	add(obj, "uid", json_object_new_int64(spec->uid), &ok);

	add(cg, "version", json_object_new_int((int)spec->cgroup.version), &ok);
	if (spec->cgroup.unified[0] != '\0')
		add(cg, "unified", json_object_new_string(spec->cgroup.unified), &ok);
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (spec->cgroup.v1[c][0] != '\0')
			add(v1, ceems_cgroup_controller_name(c),
			    json_object_new_string(spec->cgroup.v1[c]), &ok);
	if (json_object_object_length(v1) > 0)
		add(cg, "v1", v1, &ok);
	else
		json_object_put(v1);
	add(obj, "cgroup", cg, &ok);

	/* 0 means "let the agent read the cgroup": not a value to send. */
	if (spec->alloc_cores != 0)
		add(obj, "alloc_cores", json_object_new_int64(spec->alloc_cores), &ok);
	if (spec->alloc_mem_bytes != 0)
		add(obj, "alloc_mem_bytes", new_u64(spec->alloc_mem_bytes), &ok);
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
			if (json_object_array_add(arr, ceems_json_double(share)) != 0)
				ok = false;
		}
		add(obj, "gpu_share", arr, &ok);
	}
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
		return seterr(err, err_size, "job.cgroup must be an object");
	if ((r = check_keys(obj, "job.cgroup", known, err, err_size)) < 0)
		return r;
	val = get(obj, "version");
	if (val == NULL)
		return seterr(err, err_size, "job.cgroup.version is missing");
	if ((r = read_uint(val, "job.cgroup.version", 1, 2, &version, err,
			   err_size)) < 0)
		return r;
	cg->version = version == 1 ? CEEMS_CGROUP_V1 : CEEMS_CGROUP_V2;

	if ((val = get(obj, "unified")) != NULL) {
		if ((r = read_string(val, "job.cgroup.unified", cg->unified,
				     sizeof(cg->unified), err, err_size)) < 0 ||
		    (r = check_cgroup_path(cg->unified, "job.cgroup.unified",
					   err, err_size)) < 0)
			return r;
	}
	if ((val = get(obj, "v1")) != NULL) {
		if (!json_object_is_type(val, json_type_object))
			return seterr(err, err_size, "job.cgroup.v1 must be an object");
		json_object_object_foreach(val, key, path) {
			char where[64];
			int c;

			for (c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
				if (strcmp(key, ceems_cgroup_controller_name(c)) == 0)
					break;
			if (c == CEEMS_CG_NCONTROLLERS)
				return seterr(err, err_size,
					      "job.cgroup.v1 has an unknown controller '%.40s'",
					      key);
			snprintf(where, sizeof(where), "job.cgroup.v1.%s", key);
			if ((r = read_string(path, where, cg->v1[c],
					     sizeof(cg->v1[c]), err, err_size)) < 0 ||
			    (r = check_cgroup_path(cg->v1[c], where, err,
						   err_size)) < 0)
				return r;
			any_v1 = true;
		}
	}
	if (cg->version == CEEMS_CGROUP_V2 && cg->unified[0] == '\0')
		return seterr(err, err_size,
			      "job.cgroup.unified is missing for a cgroup v2 job");
	if (cg->version == CEEMS_CGROUP_V1 && !any_v1)
		return seterr(err, err_size,
			      "job.cgroup.v1 names no controller for a cgroup v1 job");
	return 0;
}

int
ceems_agent_job_spec_from_json(const struct json_object *obj,
			       struct ceems_agent_job_spec *spec, char *err,
			       size_t err_size)
{
	static const char *const known[] = {
		"jobid", "uid", "cgroup", "alloc_cores", "alloc_mem_bytes",
		"gpu_share", NULL,
	};
	struct ceems_agent_job_spec s;
	struct json_object *val;
	uint64_t u;
	int r;

	memset(&s, 0, sizeof(s));
	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "job must be an object");
	if ((r = check_keys(obj, "job", known, err, err_size)) < 0)
		return r;

	if ((val = get(obj, "jobid")) == NULL)
		return seterr(err, err_size, "job.jobid is missing");
	if ((r = read_uint(val, "job.jobid", 1, UINT32_MAX, &u, err, err_size)) < 0)
		return r;
	s.jobid = (uint32_t)u;
	/* (uid_t)-1 means "no user" to the kernel: never a job's owner. */
	if ((val = get(obj, "uid")) == NULL)
		return seterr(err, err_size, "job.uid is missing");
	if ((r = read_uint(val, "job.uid", 0, UINT32_MAX - 1, &u, err, err_size)) < 0)
		return r;
	s.uid = (uint32_t)u;
	if ((val = get(obj, "cgroup")) == NULL)
		return seterr(err, err_size, "job.cgroup is missing");
	if ((r = cgroup_from_json(val, &s.cgroup, err, err_size)) < 0)
		return r;

	if ((val = get(obj, "alloc_cores")) != NULL) {
		if ((r = read_uint(val, "job.alloc_cores", 0, CEEMS_CPUSET_MAX_CPUS,
				   &u, err, err_size)) < 0)
			return r;
		s.alloc_cores = (uint32_t)u;
	}
	if ((val = get(obj, "alloc_mem_bytes")) != NULL) {
		if ((r = read_uint(val, "job.alloc_mem_bytes", 0, UINT64_MAX, &u,
				   err, err_size)) < 0)
			return r;
		s.alloc_mem_bytes = u;
	}
	if ((val = get(obj, "gpu_share")) != NULL) {
		size_t n;

		if (!json_object_is_type(val, json_type_array))
			return seterr(err, err_size, "job.gpu_share must be an array");
		n = json_object_array_length(val);
		if (n > CEEMS_LEDGER_MAX_GPUS)
			return seterr(err, err_size,
				      "job.gpu_share has more than %d devices",
				      CEEMS_LEDGER_MAX_GPUS);
		for (size_t i = 0; i < n; i++) {
			char where[48];

			snprintf(where, sizeof(where), "job.gpu_share[%zu]", i);
			if ((r = read_real(json_object_array_get_idx(val, i), where,
					   0, 1, &s.gpu_share[i], err, err_size)) < 0)
				return r;
		}
	}
	*spec = s;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Job report                                                          */
/* ------------------------------------------------------------------ */

/* The usage fields on the wire: name, present bit, where in the struct.
 * The cpuset (bit CEEMS_CGF_CPUSET) is written apart, as a CPU list. */
static const struct {
	const char *name;
	uint32_t bit;
	size_t offset;
} usage_fields[] = {
#define U(f, b) { #f, b, offsetof(struct ceems_cgroup_stats, f) }
	U(cpu_user_ns, CEEMS_CGF_CPU_USER),
	U(cpu_system_ns, CEEMS_CGF_CPU_SYSTEM),
	U(cpu_usage_ns, CEEMS_CGF_CPU_USAGE),
	U(mem_current_bytes, CEEMS_CGF_MEM_CURRENT),
	U(mem_peak_bytes, CEEMS_CGF_MEM_PEAK),
	U(mem_rss_bytes, CEEMS_CGF_MEM_RSS),
	U(mem_cache_bytes, CEEMS_CGF_MEM_CACHE),
	U(mem_limit_bytes, CEEMS_CGF_MEM_LIMIT),
	U(oom_kills, CEEMS_CGF_OOM_KILLS),
	U(mem_fail_count, CEEMS_CGF_MEM_FAILS),
	U(pids_current, CEEMS_CGF_PIDS),
	U(io_read_bytes, CEEMS_CGF_IO_READ_BYTES),
	U(io_write_bytes, CEEMS_CGF_IO_WRITE_BYTES),
	U(io_read_ops, CEEMS_CGF_IO_READ_OPS),
	U(io_write_ops, CEEMS_CGF_IO_WRITE_OPS),
#undef U
};
#define NUSAGE_FIELDS (sizeof(usage_fields) / sizeof(usage_fields[0]))

static const struct {
	const char *name;
	uint32_t bit;
} usage_flags[] = {
	{ "peak_sampled", CEEMS_CGS_PEAK_SAMPLED },
	{ "cpu_ticks", CEEMS_CGS_CPU_TICKS },
	{ "partly_gone", CEEMS_CGS_PARTLY_GONE },
};

static const char *
field_name(uint32_t bit)
{
	if (bit == CEEMS_CGF_CPUSET)
		return "cpuset";
	for (size_t i = 0; i < NUSAGE_FIELDS; i++)
		if (usage_fields[i].bit == bit)
			return usage_fields[i].name;
	return NULL;
}

static uint32_t
field_bit(const char *name)
{
	if (strcmp(name, "cpuset") == 0)
		return CEEMS_CGF_CPUSET;
	for (size_t i = 0; i < NUSAGE_FIELDS; i++)
		if (strcmp(usage_fields[i].name, name) == 0)
			return usage_fields[i].bit;
	return 0;
}

/* Write SET as the kernel's CPU list ("0-3,8,10-11") into BUF; a
 * cpuset of 8192 CPUs in the worst alternating pattern needs about
 * 24 KiB, so BUF is sized for it by the caller. */
static void
cpuset_to_list(const struct ceems_cpuset *set, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned cpu = 0; cpu < CEEMS_CPUSET_MAX_CPUS; cpu++) {
		unsigned last = cpu;
		int n;

		if (!ceems_cpuset_has(set, cpu))
			continue;
		while (last + 1 < CEEMS_CPUSET_MAX_CPUS &&
		       ceems_cpuset_has(set, last + 1))
			last++;
		if (last == cpu)
			n = snprintf(buf + len, size - len, "%s%u",
				     len > 0 ? "," : "", cpu);
		else
			n = snprintf(buf + len, size - len, "%s%u-%u",
				     len > 0 ? "," : "", cpu, last);
		if (n < 0 || (size_t)n >= size - len) {
			buf[len] = '\0';
			return;
		}
		len += (size_t)n;
		cpu = last;
	}
}

static struct json_object *
usage_to_json(const struct ceems_cgroup_stats *st, bool *ok)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *failed = NULL;

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	for (size_t i = 0; i < NUSAGE_FIELDS; i++) {
		uint64_t v;

		if (!(st->present & usage_fields[i].bit))
			continue;
		memcpy(&v, (const char *)st + usage_fields[i].offset, sizeof(v));
		if (usage_fields[i].bit == CEEMS_CGF_MEM_LIMIT &&
		    v == CEEMS_CGROUP_UNLIMITED)
			add(obj, usage_fields[i].name, json_object_new_string("max"), ok);
		else
			add(obj, usage_fields[i].name, new_u64(v), ok);
	}
	if (st->present & CEEMS_CGF_CPUSET) {
		/* Worst case "0,2,4,...,8190": about 20 KiB. */
		size_t size = 6 * CEEMS_CPUSET_MAX_CPUS;
		char *list = malloc(size);

		if (list == NULL) {
			*ok = false;
		} else {
			cpuset_to_list(&st->cpuset, list, size);
			add(obj, "cpuset", json_object_new_string(list), ok);
			free(list);
		}
		add(obj, "ncpus_allocated", json_object_new_int64(st->cpuset.count), ok);
	}
	for (uint32_t bit = 1; bit & CEEMS_CGF_ALL; bit <<= 1) {
		const char *name = field_name(bit);

		if (!(st->failed & bit) || name == NULL)
			continue;
		if (failed == NULL) {
			failed = json_object_new_array();
			add(obj, "failed", failed, ok);
			if (failed == NULL)
				break;
		}
		if (json_object_array_add(failed, json_object_new_string(name)) != 0)
			*ok = false;
	}
	for (size_t i = 0; i < sizeof(usage_flags) / sizeof(usage_flags[0]); i++)
		if (st->flags & usage_flags[i].bit)
			add(obj, usage_flags[i].name, json_object_new_boolean(1), ok);
	return obj;
}

static struct json_object *
ledger_to_json(const struct ceems_job_ledger *l, bool *ok)
{
	struct json_object *obj = json_object_new_object();

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	add_double(obj, "lifetime_s", l->lifetime_s, ok);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		struct json_object *dom;
		double coverage;

		if (!l->measured[d])
			continue;
		dom = json_object_new_object();
		add(obj, ceems_energy_domain_name(d), dom, ok);
		if (dom == NULL)
			break;
		/* Energy over no covered time is unknown, not zero. */
		if (l->covered_s[d] > 0) {
			add_double(dom, "joules", l->joules[d], ok);
			if (d == CEEMS_DOMAIN_PACKAGE || d == CEEMS_DOMAIN_DRAM)
				add_double(dom, "static_j", l->static_j[d], ok);
		}
		add_double(dom, "covered_s", l->covered_s[d], ok);
		if (ceems_job_ledger_coverage(l, d, &coverage))
			add_double(dom, "coverage", coverage, ok);
	}
	if (l->have_emissions) {
		struct json_object *em = json_object_new_object();
		struct json_object *f = json_object_new_object();

		add(obj, "emissions", em, ok);
		if (em == NULL) {
			json_object_put(f);
			return obj;
		}
		add_double(em, "grams", l->emissions_g, ok);
		add_double(em, "covered_s", l->emissions_covered_s, ok);
		add(em, "factor", f, ok);
		if (f != NULL) {
			add(f, "source", json_object_new_string(l->factor.source), ok);
			add(f, "zone", json_object_new_string(l->factor.zone), ok);
			add(f, "year", json_object_new_int(l->factor.year), ok);
			add_double(f, "g_per_kwh", l->factor.g_per_kwh, ok);
			add_double(f, "pue", l->factor.pue, ok);
		}
		add(em, "factor_changed", json_object_new_boolean(l->factor_changed), ok);
	}
	return obj;
}

/* A step's figures; energy only for the domains its job's node measured. */
static struct json_object *
step_to_json(const struct ceems_agent_step_report *st,
	     const struct ceems_job_ledger *l, bool *ok)
{
	struct json_object *obj = json_object_new_object(), *j;

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	add(obj, "id", json_object_new_string(st->id), ok);
	add(obj, "ended", json_object_new_boolean(st->ended), ok);
	add_double(obj, "elapsed_s", st->elapsed_s, ok);
	add_double(obj, "cpu_s", st->cpu_s, ok);
	if (st->have_mem_peak)
		add(obj, "mem_peak_bytes", new_u64(st->mem_peak_bytes), ok);
	j = json_object_new_object();
	for (int d = 0; j != NULL && d < CEEMS_DOMAIN_COUNT; d++)
		if (l->measured[d])
			add_double(j, ceems_energy_domain_name(d), st->joules[d], ok);
	add(obj, "joules", j, ok);
	return obj;
}

struct json_object *
ceems_agent_job_report_to_json(const struct ceems_agent_job_report *r)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return NULL;
	add(obj, "jobid", json_object_new_int64(r->jobid), &ok);
	add(obj, "uid", json_object_new_int64(r->uid), &ok);
	if (r->alloc_cores != 0)
		add(obj, "alloc_cores", json_object_new_int64(r->alloc_cores), &ok);
	if (r->alloc_mem_bytes != 0)
		add(obj, "alloc_mem_bytes", new_u64(r->alloc_mem_bytes), &ok);
	add_double(obj, "elapsed_s", r->elapsed_s, &ok);
	if (r->usage.present & (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER |
				CEEMS_CGF_CPU_SYSTEM))
		add_double(obj, "cpu_s", r->cpu_s, &ok);
	add_double(obj, "gap_s", r->gap_s, &ok);
	add(obj, "cgroup_gone", json_object_new_boolean(r->cgroup_gone), &ok);
	add(obj, "usage", usage_to_json(&r->usage, &ok), &ok);
	add(obj, "ledger", ledger_to_json(&r->ledger, &ok), &ok);
	if (r->nsteps > 0) {
		struct json_object *steps = json_object_new_array();

		for (uint32_t i = 0; steps != NULL && i < r->nsteps &&
				     i < CEEMS_AGENT_MAX_STEPS; i++) {
			struct json_object *st = step_to_json(&r->steps[i],
							      &r->ledger, &ok);

			if (st == NULL || json_object_array_add(steps, st) < 0) {
				json_object_put(st);
				ok = false;
			}
		}
		add(obj, "steps", steps, &ok);
	}
	if (!ok) {
		json_object_put(obj);
		return NULL;
	}
	return obj;
}

static int
usage_from_json(const struct json_object *obj, struct ceems_cgroup_stats *st,
		char *err, size_t err_size)
{
	struct json_object *val;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "report.usage must be an object");
	for (size_t i = 0; i < NUSAGE_FIELDS; i++) {
		char where[64];
		uint64_t v;

		if ((val = get(obj, usage_fields[i].name)) == NULL)
			continue;
		snprintf(where, sizeof(where), "report.usage.%s", usage_fields[i].name);
		if (usage_fields[i].bit == CEEMS_CGF_MEM_LIMIT &&
		    json_object_is_type(val, json_type_string) &&
		    strcmp(json_object_get_string(val), "max") == 0)
			v = CEEMS_CGROUP_UNLIMITED;
		else if ((r = read_uint(val, where, 0, UINT64_MAX, &v, err,
					err_size)) < 0)
			return r;
		memcpy((char *)st + usage_fields[i].offset, &v, sizeof(v));
		st->present |= usage_fields[i].bit;
	}
	if ((val = get(obj, "cpuset")) != NULL) {
		if (!json_object_is_type(val, json_type_string) ||
		    ceems_parse_cpu_list(json_object_get_string(val), &st->cpuset) < 0)
			return seterr(err, err_size,
				      "report.usage.cpuset must be a CPU list such as \"0-3,8\"");
		st->ncpus_allocated = st->cpuset.count;
		st->present |= CEEMS_CGF_CPUSET;
	}
	if ((val = get(obj, "failed")) != NULL) {
		if (!json_object_is_type(val, json_type_array))
			return seterr(err, err_size, "report.usage.failed must be an array");
		for (size_t i = 0; i < json_object_array_length(val); i++) {
			struct json_object *name = json_object_array_get_idx(val, i);

			if (!json_object_is_type(name, json_type_string))
				return seterr(err, err_size,
					      "report.usage.failed must hold field names");
			/* A name this client does not know is skipped. */
			st->failed |= field_bit(json_object_get_string(name));
		}
	}
	for (size_t i = 0; i < sizeof(usage_flags) / sizeof(usage_flags[0]); i++) {
		bool b = false;

		if ((val = get(obj, usage_flags[i].name)) == NULL)
			continue;
		if ((r = read_bool(val, usage_flags[i].name, &b, err, err_size)) < 0)
			return r;
		if (b)
			st->flags |= usage_flags[i].bit;
	}
	return 0;
}

static int
emissions_from_json(const struct json_object *obj, struct ceems_job_ledger *l,
		    char *err, size_t err_size)
{
	struct json_object *val, *f;
	uint64_t year;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "report.ledger.emissions must be an object");
	l->have_emissions = true;
	if ((val = get(obj, "grams")) != NULL &&
	    (r = read_real(val, "report.ledger.emissions.grams", 0, INFINITY,
			   &l->emissions_g, err, err_size)) < 0)
		return r;
	if ((val = get(obj, "covered_s")) != NULL &&
	    (r = read_real(val, "report.ledger.emissions.covered_s", 0, INFINITY,
			   &l->emissions_covered_s, err, err_size)) < 0)
		return r;
	if ((val = get(obj, "factor_changed")) != NULL &&
	    (r = read_bool(val, "report.ledger.emissions.factor_changed",
			   &l->factor_changed, err, err_size)) < 0)
		return r;
	if ((f = get(obj, "factor")) == NULL)
		return 0;
	if (!json_object_is_type(f, json_type_object))
		return seterr(err, err_size,
			      "report.ledger.emissions.factor must be an object");
	if ((val = get(f, "source")) != NULL &&
	    (r = read_string(val, "report.ledger.emissions.factor.source",
			     l->factor.source, sizeof(l->factor.source), err,
			     err_size)) < 0)
		return r;
	if ((val = get(f, "zone")) != NULL &&
	    (r = read_string(val, "report.ledger.emissions.factor.zone",
			     l->factor.zone, sizeof(l->factor.zone), err,
			     err_size)) < 0)
		return r;
	if ((val = get(f, "year")) != NULL) {
		if ((r = read_uint(val, "report.ledger.emissions.factor.year", 0,
				   9999, &year, err, err_size)) < 0)
			return r;
		l->factor.year = (int)year;
	}
	if ((val = get(f, "g_per_kwh")) != NULL &&
	    (r = read_real(val, "report.ledger.emissions.factor.g_per_kwh", 0,
			   INFINITY, &l->factor.g_per_kwh, err, err_size)) < 0)
		return r;
	if ((val = get(f, "pue")) != NULL &&
	    (r = read_real(val, "report.ledger.emissions.factor.pue", 0,
			   INFINITY, &l->factor.pue, err, err_size)) < 0)
		return r;
	return 0;
}

static int
ledger_from_json(const struct json_object *obj, struct ceems_job_ledger *l,
		 char *err, size_t err_size)
{
	struct json_object *val;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "report.ledger must be an object");
	if ((val = get(obj, "lifetime_s")) != NULL &&
	    (r = read_real(val, "report.ledger.lifetime_s", 0, INFINITY,
			   &l->lifetime_s, err, err_size)) < 0)
		return r;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		const char *name = ceems_energy_domain_name(d);
		struct json_object *dom = get(obj, name);
		static const char *const parts[] = { "joules", "static_j", "covered_s" };
		double *dest[3];

		if (dom == NULL)
			continue;
		if (!json_object_is_type(dom, json_type_object))
			return seterr(err, err_size, "report.ledger.%s must be an object",
				      name);
		l->measured[d] = true;
		dest[0] = &l->joules[d];
		dest[1] = &l->static_j[d];
		dest[2] = &l->covered_s[d];
		for (int i = 0; i < 3; i++) {
			char where[64];

			if ((val = get(dom, parts[i])) == NULL)
				continue;
			snprintf(where, sizeof(where), "report.ledger.%s.%s", name,
				 parts[i]);
			if ((r = read_real(val, where, 0, INFINITY, dest[i], err,
					   err_size)) < 0)
				return r;
		}
	}
	if ((val = get(obj, "emissions")) != NULL)
		return emissions_from_json(val, l, err, err_size);
	return 0;
}

static bool
step_id_ok(const char *id)
{
	if (id[0] == '\0')
		return false;
	for (const char *p = id; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      *p == '+'))
			return false;
	return true;
}

static int
step_from_json(const struct json_object *obj,
	       struct ceems_agent_step_report *st, char *err, size_t err_size)
{
	struct json_object *val, *j;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "report.steps[] must be objects");
	if ((val = get(obj, "id")) == NULL)
		return seterr(err, err_size, "report.steps[].id is missing");
	if ((r = read_string(val, "report.steps[].id", st->id, sizeof(st->id),
			     err, err_size)) < 0)
		return r;
	if (!step_id_ok(st->id))
		return seterr(err, err_size, "report.steps[].id is not a step name");
	if ((val = get(obj, "ended")) != NULL &&
	    (r = read_bool(val, "report.steps[].ended", &st->ended, err,
			   err_size)) < 0)
		return r;
	if ((val = get(obj, "elapsed_s")) != NULL &&
	    (r = read_real(val, "report.steps[].elapsed_s", 0, INFINITY,
			   &st->elapsed_s, err, err_size)) < 0)
		return r;
	if ((val = get(obj, "cpu_s")) != NULL &&
	    (r = read_real(val, "report.steps[].cpu_s", 0, INFINITY,
			   &st->cpu_s, err, err_size)) < 0)
		return r;
	if ((val = get(obj, "mem_peak_bytes")) != NULL) {
		if ((r = read_uint(val, "report.steps[].mem_peak_bytes", 0,
				   UINT64_MAX, &st->mem_peak_bytes, err,
				   err_size)) < 0)
			return r;
		st->have_mem_peak = true;
	}
	if ((j = get(obj, "joules")) == NULL)
		return 0;
	if (!json_object_is_type(j, json_type_object))
		return seterr(err, err_size, "report.steps[].joules must be an object");
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if ((val = get(j, ceems_energy_domain_name(d))) != NULL &&
		    (r = read_real(val, "report.steps[].joules", 0, INFINITY,
				   &st->joules[d], err, err_size)) < 0)
			return r;
	return 0;
}

static int
steps_from_json(const struct json_object *arr,
		struct ceems_agent_job_report *r, char *err, size_t err_size)
{
	size_t n;
	int ret;

	if (!json_object_is_type(arr, json_type_array))
		return seterr(err, err_size, "report.steps must be an array");
	n = json_object_array_length(arr);
	if (n > CEEMS_AGENT_MAX_STEPS)
		return seterr(err, err_size, "report.steps has more than %d steps",
			      CEEMS_AGENT_MAX_STEPS);
	for (size_t i = 0; i < n; i++)
		if ((ret = step_from_json(json_object_array_get_idx(arr, i),
					  &r->steps[i], err, err_size)) < 0)
			return ret;
	r->nsteps = (uint32_t)n;
	return 0;
}

int
ceems_agent_job_report_from_json(const struct json_object *obj,
				 struct ceems_agent_job_report *report,
				 char *err, size_t err_size)
{
	struct ceems_agent_job_report *r;
	struct json_object *val;
	uint64_t u;
	int ret = -EINVAL;

	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return seterr(err, err_size, "report must be an object");
	/* Built aside (the struct is large for a stack: the cpuset), so that
	 * REPORT is untouched on error. */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return seterr(err, err_size, "out of memory decoding a report");
	ceems_job_ledger_init(&r->ledger);

	if ((val = get(obj, "jobid")) == NULL) {
		seterr(err, err_size, "report.jobid is missing");
		goto out;
	}
	if ((ret = read_uint(val, "report.jobid", 1, UINT32_MAX, &u, err, err_size)) < 0)
		goto out;
	r->jobid = (uint32_t)u;
	if ((val = get(obj, "uid")) == NULL) {
		ret = seterr(err, err_size, "report.uid is missing");
		goto out;
	}
	if ((ret = read_uint(val, "report.uid", 0, UINT32_MAX, &u, err, err_size)) < 0)
		goto out;
	r->uid = (uint32_t)u;
	if ((val = get(obj, "alloc_cores")) != NULL) {
		if ((ret = read_uint(val, "report.alloc_cores", 0, UINT32_MAX, &u,
				     err, err_size)) < 0)
			goto out;
		r->alloc_cores = (uint32_t)u;
	}
	if ((val = get(obj, "alloc_mem_bytes")) != NULL &&
	    (ret = read_uint(val, "report.alloc_mem_bytes", 0, UINT64_MAX,
			     &r->alloc_mem_bytes, err, err_size)) < 0)
		goto out;
	if ((val = get(obj, "elapsed_s")) != NULL &&
	    (ret = read_real(val, "report.elapsed_s", 0, INFINITY, &r->elapsed_s,
			     err, err_size)) < 0)
		goto out;
	if ((val = get(obj, "cpu_s")) != NULL &&
	    (ret = read_real(val, "report.cpu_s", 0, INFINITY, &r->cpu_s, err,
			     err_size)) < 0)
		goto out;
	if ((val = get(obj, "gap_s")) != NULL &&
	    (ret = read_real(val, "report.gap_s", 0, INFINITY, &r->gap_s, err,
			     err_size)) < 0)
		goto out;
	if ((val = get(obj, "cgroup_gone")) != NULL &&
	    (ret = read_bool(val, "report.cgroup_gone", &r->cgroup_gone, err,
			     err_size)) < 0)
		goto out;
	if ((val = get(obj, "usage")) != NULL &&
	    (ret = usage_from_json(val, &r->usage, err, err_size)) < 0)
		goto out;
	if ((val = get(obj, "ledger")) != NULL &&
	    (ret = ledger_from_json(val, &r->ledger, err, err_size)) < 0)
		goto out;
	if ((val = get(obj, "steps")) != NULL &&
	    (ret = steps_from_json(val, r, err, err_size)) < 0)
		goto out;
	*report = *r;
	ret = 0;
out:
	free(r);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/* Serialize OBJ into BUF and drop it.  Length, -ENOSPC or -ENOMEM. */
static int
finish(struct json_object *obj, char *buf, size_t size)
{
	const char *text;
	size_t len;

	if (obj == NULL)
		return -ENOMEM;
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL) {
		json_object_put(obj);
		return -ENOMEM;
	}
	len = strlen(text);
	if (len >= size || len > INT32_MAX) {
		json_object_put(obj);
		return -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	json_object_put(obj);
	return (int)len;
}

static const char *const op_names[] = {
	[CEEMS_AGENT_OP_REGISTER] = "register",
	[CEEMS_AGENT_OP_DEREGISTER] = "deregister",
	[CEEMS_AGENT_OP_REPORT] = "report",
	[CEEMS_AGENT_OP_STATUS] = "status",
	[CEEMS_AGENT_OP_STEP_START] = "step_start",
	[CEEMS_AGENT_OP_STEP_END] = "step_end",
};

int
ceems_agent_request_encode(const struct ceems_agent_request *req, char *buf,
			   size_t size)
{
	struct json_object *obj;
	bool ok = true;

	if (req->op < CEEMS_AGENT_OP_REGISTER || req->op > CEEMS_AGENT_OP_STEP_END)
		return -EINVAL;
	obj = json_object_new_object();
	if (obj == NULL)
		return -ENOMEM;
	add(obj, "op", json_object_new_string(op_names[req->op]), &ok);
	switch (req->op) {
	case CEEMS_AGENT_OP_REGISTER:
		add(obj, "job", ceems_agent_job_spec_to_json(&req->spec), &ok);
		break;
	case CEEMS_AGENT_OP_DEREGISTER:
	case CEEMS_AGENT_OP_REPORT:
		add(obj, "jobid", json_object_new_int64(req->jobid), &ok);
		break;
	case CEEMS_AGENT_OP_STATUS:
		break;
	case CEEMS_AGENT_OP_STEP_START:
	case CEEMS_AGENT_OP_STEP_END:
		add(obj, "jobid", json_object_new_int64(req->jobid), &ok);
		add(obj, "step", json_object_new_string(req->step), &ok);
		break;
	}
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

/* Parse exactly LEN bytes as one JSON value; NULL with ERR on failure.
 * STRICT refuses json-c's extensions (single quotes, NaN, comments...). */
static struct json_object *
parse_message(const char *buf, size_t len, bool strict, char *err,
	      size_t err_size)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	bool consumed_all = false;

	if (len == 0) {
		seterr(err, err_size, "empty message");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		seterr(err, err_size, "message holds a NUL byte: not JSON text");
		return NULL;
	}
	tok = json_tokener_new_ex(MSG_MAX_DEPTH);
	if (tok == NULL) {
		seterr(err, err_size, "out of memory parsing a message");
		return NULL;
	}
	if (strict)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	/* A bare number at the end of the input ("42") waits for more
	 * digits: a final NUL tells the tokener the input has ended. */
	if (obj == NULL && jerr == json_tokener_continue) {
		obj = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		consumed_all = true;	/* the first call took every byte */
	}
	if (obj == NULL || jerr != json_tokener_success) {
		if (jerr == json_tokener_continue ||
		    jerr == json_tokener_error_parse_eof)
			seterr(err, err_size, "message is not complete JSON (cut short?)");
		else
			seterr(err, err_size, "message is not valid JSON: %s",
			       json_tokener_error_desc(jerr));
		json_object_put(obj);
		obj = NULL;
	} else if (!consumed_all && json_tokener_get_parse_end(tok) != len) {
		/* Trailing whitespace is allowed, anything else is not. */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++) {
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' &&
			    buf[i] != '\r') {
				seterr(err, err_size,
				       "message has data after its JSON value");
				json_object_put(obj);
				obj = NULL;
				break;
			}
		}
	}
	json_tokener_free(tok);
	return obj;
}

int
ceems_agent_request_decode(const char *buf, size_t len,
			   struct ceems_agent_request *req, char *err,
			   size_t err_size)
{
	static const char *const known_jobid[] = { "op", "jobid", NULL };
	static const char *const known_register[] = { "op", "job", NULL };
	static const char *const known_status[] = { "op", NULL };
	static const char *const known_step[] = { "op", "jobid", "step", NULL };
	struct json_object *obj, *val;
	const char *op;
	uint64_t jobid;
	int r = -EINVAL;

	if (len > CEEMS_AGENT_MSG_MAX) {
		seterr(err, err_size, "request is larger than %d bytes",
		       CEEMS_AGENT_MSG_MAX);
		return -EMSGSIZE;
	}
	obj = parse_message(buf, len, true, err, err_size);
	if (obj == NULL)
		return -EINVAL;
	memset(req, 0, sizeof(*req));
	if (!json_object_is_type(obj, json_type_object)) {
		seterr(err, err_size, "request must be a JSON object");
		goto out;
	}
	val = get(obj, "op");
	if (val == NULL || !json_object_is_type(val, json_type_string)) {
		seterr(err, err_size, "request needs \"op\": one of register, "
		       "deregister, report, status, step_start, step_end");
		goto out;
	}
	op = json_object_get_string(val);
	if (strcmp(op, "register") == 0) {
		req->op = CEEMS_AGENT_OP_REGISTER;
		if ((r = check_keys(obj, "register request", known_register, err,
				    err_size)) < 0)
			goto out;
		if ((val = get(obj, "job")) == NULL) {
			r = seterr(err, err_size, "register request needs \"job\"");
			goto out;
		}
		if ((r = ceems_agent_job_spec_from_json(val, &req->spec, err,
							err_size)) < 0)
			goto out;
		req->jobid = req->spec.jobid;
	} else if (strcmp(op, "deregister") == 0 || strcmp(op, "report") == 0) {
		req->op = op[0] == 'd' ? CEEMS_AGENT_OP_DEREGISTER
				       : CEEMS_AGENT_OP_REPORT;
		if ((r = check_keys(obj, op[0] == 'd' ? "deregister request"
						      : "report request",
				    known_jobid, err, err_size)) < 0)
			goto out;
		if ((val = get(obj, "jobid")) == NULL) {
			r = seterr(err, err_size, "%s request needs \"jobid\"", op);
			goto out;
		}
		if ((r = read_uint(val, "jobid", 1, UINT32_MAX, &jobid, err,
				   err_size)) < 0)
			goto out;
		req->jobid = (uint32_t)jobid;
	} else if (strcmp(op, "step_start") == 0 || strcmp(op, "step_end") == 0) {
		req->op = op[5] == 's' ? CEEMS_AGENT_OP_STEP_START
				       : CEEMS_AGENT_OP_STEP_END;
		if ((r = check_keys(obj, "step request", known_step, err,
				    err_size)) < 0)
			goto out;
		if ((val = get(obj, "jobid")) == NULL) {
			r = seterr(err, err_size, "%s request needs \"jobid\"", op);
			goto out;
		}
		if ((r = read_uint(val, "jobid", 1, UINT32_MAX, &jobid, err,
				   err_size)) < 0)
			goto out;
		req->jobid = (uint32_t)jobid;
		if ((val = get(obj, "step")) == NULL) {
			r = seterr(err, err_size, "%s request needs \"step\"", op);
			goto out;
		}
		if ((r = read_string(val, "step", req->step, sizeof(req->step),
				     err, err_size)) < 0)
			goto out;
		if (!step_id_ok(req->step)) {
			r = seterr(err, err_size, "step must be a Slurm step name "
				   "(batch, extern, interactive, 0, 1, ...)");
			goto out;
		}
	} else if (strcmp(op, "status") == 0) {
		req->op = CEEMS_AGENT_OP_STATUS;
		if ((r = check_keys(obj, "status request", known_status, err,
				    err_size)) < 0)
			goto out;
	} else {
		r = seterr(err, err_size, "unknown op '%.40s': expected register, "
			   "deregister, report, status, step_start or step_end", op);
		goto out;
	}
	r = 0;
out:
	json_object_put(obj);
	return r;
}

int
ceems_agent_reply_ok(const struct ceems_agent_job_report *report, char *buf,
		     size_t size)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	add(obj, "ok", json_object_new_boolean(1), &ok);
	if (report != NULL)
		add(obj, "report", ceems_agent_job_report_to_json(report), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

int
ceems_agent_reply_error(int code, const char *message, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	add(obj, "ok", json_object_new_boolean(0), &ok);
	add(obj, "error", json_object_new_string(message), &ok);
	add(obj, "code", json_object_new_string(ceems_agent_code_name(code)), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

int
ceems_agent_reply_decode(const char *buf, size_t len,
			 struct ceems_agent_job_report *report, char *err,
			 size_t err_size)
{
	struct json_object *obj, *val;
	char why[256];
	int r = -EPROTO;

	obj = parse_message(buf, len, false, why, sizeof(why));
	if (obj == NULL) {
		seterr(err, err_size, "malformed reply from the agent: %s", why);
		return -EPROTO;
	}
	if (!json_object_is_type(obj, json_type_object) ||
	    (val = get(obj, "ok")) == NULL ||
	    !json_object_is_type(val, json_type_boolean)) {
		seterr(err, err_size, "malformed reply from the agent: no \"ok\"");
		goto out;
	}
	if (!json_object_get_boolean(val)) {
		struct json_object *msg = get(obj, "error");
		struct json_object *code = get(obj, "code");

		seterr(err, err_size, "%s",
		       msg != NULL && json_object_is_type(msg, json_type_string)
			       ? json_object_get_string(msg)
			       : "the agent refused the request without saying why");
		r = code != NULL && json_object_is_type(code, json_type_string)
			    ? ceems_agent_code_from_name(json_object_get_string(code))
			    : -EREMOTEIO;
		goto out;
	}
	if (report != NULL) {
		if ((val = get(obj, "report")) == NULL) {
			seterr(err, err_size, "malformed reply from the agent: no report");
			goto out;
		}
		if (ceems_agent_job_report_from_json(val, report, why,
						     sizeof(why)) < 0) {
			seterr(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
	}
	r = 0;
out:
	json_object_put(obj);
	return r;
}
