/* measure_json.c - a job's measured figures (measure.h: usage, ledger,
 * steps, gaps, GPUs) as JSON, both ways: the biggest part of the node
 * agent's replies, also kept in the agent's state and as the spool's
 * records' "measurements".  The decoder checks every type and range, but
 * is tolerant of unknown keys so that an agent can grow fields without
 * breaking older clients.
 *
 * Separate from the messages (agent_proto.c) and the record (record.c),
 * which both embed it: the report has its own tables of fields and its
 * own rules for what may be absent.  Its GPUs are coded in measure_gpu.c,
 * its eBPF figures in measure_io.c. */
#include "config.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "cgroup/step_ids.h"
#include "model/measure.h"
#include "model/measure_internal.h"

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

		if (!ceems_cgroup_parse_cpuset_has(set, cpu))
			continue;
		while (last + 1 < CEEMS_CPUSET_MAX_CPUS &&
		       ceems_cgroup_parse_cpuset_has(set, last + 1))
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
			ceems_json_util_add(obj, usage_fields[i].name, json_object_new_string("max"), ok);
		else
			ceems_json_util_add(obj, usage_fields[i].name, ceems_json_util_new_u64(v), ok);
	}
	if (st->present & CEEMS_CGF_CPUSET) {
		/* Worst case "0,2,4,...,8190": about 20 KiB. */
		size_t size = 6 * CEEMS_CPUSET_MAX_CPUS;
		char *list = malloc(size);

		if (list == NULL) {
			*ok = false;
		} else {
			cpuset_to_list(&st->cpuset, list, size);
			ceems_json_util_add(obj, "cpuset", json_object_new_string(list), ok);
			free(list);
		}
		ceems_json_util_add(obj, "ncpus_allocated", json_object_new_int64(st->cpuset.count), ok);
	}
	for (uint32_t bit = 1; bit & CEEMS_CGF_ALL; bit <<= 1) {
		const char *name = field_name(bit);

		if (!(st->failed & bit) || name == NULL)
			continue;
		if (failed == NULL) {
			failed = json_object_new_array();
			ceems_json_util_add(obj, "failed", failed, ok);
			if (failed == NULL)
				break;
		}
		if (json_object_array_add(failed, json_object_new_string(name)) != 0)
			*ok = false;
	}
	for (size_t i = 0; i < sizeof(usage_flags) / sizeof(usage_flags[0]); i++)
		if (st->flags & usage_flags[i].bit)
			ceems_json_util_add(obj, usage_flags[i].name, json_object_new_boolean(1), ok);
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
	ceems_json_util_add_double(obj, "lifetime_s", l->lifetime_s, ok);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		struct json_object *dom;
		double coverage;

		if (!l->measured[d])
			continue;
		dom = json_object_new_object();
		ceems_json_util_add(obj, ceems_job_figures_energy_domain_name(d), dom, ok);
		if (dom == NULL)
			break;
		/* Energy over no covered time is unknown, not zero. */
		if (l->covered_s[d] > 0) {
			ceems_json_util_add_double(dom, "joules", l->joules[d], ok);
			if (d == CEEMS_DOMAIN_PACKAGE || d == CEEMS_DOMAIN_DRAM)
				ceems_json_util_add_double(dom, "static_j", l->static_j[d], ok);
		}
		ceems_json_util_add_double(dom, "covered_s", l->covered_s[d], ok);
		if (ceems_job_figures_ledger_coverage(l, d, &coverage))
			ceems_json_util_add_double(dom, "coverage", coverage, ok);
		if (l->idle_unlearned[d])
			ceems_json_util_add(dom, "idle_unlearned",
				       json_object_new_boolean(1), ok);
	}
	/* A zone priced nothing when no energy was measured: the emissions
	 * are unknown, not 0 g (doc/record-format.md). */
	if (l->have_emissions && ceems_job_figures_ledger_energy_known(l)) {
		struct json_object *em = json_object_new_object();
		struct json_object *f = json_object_new_object();

		ceems_json_util_add(obj, "emissions", em, ok);
		if (em == NULL) {
			json_object_put(f);
			return obj;
		}
		ceems_json_util_add_double(em, "grams", l->emissions_g, ok);
		ceems_json_util_add_double(em, "covered_s", l->emissions_covered_s, ok);
		ceems_json_util_add(em, "factor", f, ok);
		if (f != NULL) {
			ceems_json_util_add(f, "source",
				       ceems_json_util_new_text(l->factor.source,
							   sizeof(l->factor.source)), ok);
			ceems_json_util_add(f, "zone",
				       ceems_json_util_new_text(l->factor.zone,
							   sizeof(l->factor.zone)), ok);
			ceems_json_util_add(f, "year", json_object_new_int(l->factor.year), ok);
			ceems_json_util_add_double(f, "g_per_kwh", l->factor.g_per_kwh, ok);
			ceems_json_util_add_double(f, "pue", l->factor.pue, ok);
		}
		ceems_json_util_add(em, "factor_changed", json_object_new_boolean(l->factor_changed), ok);
		if (l->factor_timed)
			ceems_json_util_add_double(em, "fallback", l->factor_fallback, ok);
	}
	return obj;
}

/* A step's figures; energy only for the domains its job's node measured. */
/* {"s": x, "cpu_s": y}: the CPU time of the report's last seconds. */
static struct json_object *
tail_to_json(const struct ceems_agent_job_report *r, bool *ok)
{
	struct json_object *obj = json_object_new_object();

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	ceems_json_util_add(obj, "s", json_object_new_int64(r->tail_s), ok);
	ceems_json_util_add_double(obj, "cpu_s", r->tail_cpu_s, ok);
	return obj;
}

static int
tail_from_json(const struct json_object *obj, struct ceems_agent_job_report *r,
	       char *err, size_t err_size)
{
	struct json_object *val;
	uint64_t s;
	double cpu;
	int ret;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "report.tail must be an object");
	if ((val = ceems_json_util_get(obj, "s")) == NULL ||
	    (ret = ceems_json_util_read_uint(val, "report.tail.s", 1,
					     CEEMS_AGENT_TAIL_MAX_S,
					     &s, err, err_size)) < 0)
		return val == NULL ?
		       ceems_json_util_error(err, err_size, "report.tail.s is missing") : ret;
	if ((val = ceems_json_util_get(obj, "cpu_s")) == NULL ||
	    (ret = ceems_json_util_read_real(val, "report.tail.cpu_s", 0, FLT_MAX,
					     &cpu, err, err_size)) < 0)
		return val == NULL ?
		       ceems_json_util_error(err, err_size, "report.tail.cpu_s is missing") : ret;
	r->have_tail = true;
	r->tail_s = (uint16_t)s;
	r->tail_cpu_s = (float)cpu;
	return 0;
}

static struct json_object *
step_to_json(const struct ceems_agent_step_report *st,
	     const struct ceems_job_ledger *l, bool *ok)
{
	struct json_object *obj = json_object_new_object(), *j;

	if (obj == NULL) {
		*ok = false;
		return NULL;
	}
	ceems_json_util_add(obj, "id", ceems_json_util_new_text(st->id, sizeof(st->id)), ok);
	ceems_json_util_add(obj, "ended", json_object_new_boolean(st->ended), ok);
	ceems_json_util_add_double(obj, "elapsed_s", st->elapsed_s, ok);
	if (st->have_cpu)
		ceems_json_util_add_double(obj, "cpu_s", st->cpu_s, ok);
	if (st->have_mem_peak)
		ceems_json_util_add(obj, "mem_peak_bytes", ceems_json_util_new_u64(st->mem_peak_bytes), ok);
	if (st->have_oom_kills)
		ceems_json_util_add(obj, "oom_kills", ceems_json_util_new_u64(st->oom_kills), ok);
	if (st->have_tasks)
		ceems_json_util_add(obj, "tasks", ceems_json_util_new_u64(st->tasks), ok);
	j = json_object_new_object();
	for (int d = 0; j != NULL && d < CEEMS_DOMAIN_COUNT; d++)
		if (l->measured[d] && st->have_joules[d])
			ceems_json_util_add_double(j, ceems_job_figures_energy_domain_name(d), st->joules[d], ok);
	ceems_json_util_add(obj, "joules", j, ok);
	return obj;
}

/* Intervals (gaps, recovered) as [{"start": UNIX, "end": UNIX}]. */
static struct json_object *
intervals_to_json(const struct ceems_agent_gap *list, uint32_t n, bool *ok)
{
	struct json_object *arr = json_object_new_array();

	for (uint32_t i = 0; arr != NULL && i < n && i < CEEMS_AGENT_MAX_GAPS; i++) {
		struct json_object *g = json_object_new_object();
		bool g_ok = g != NULL;

		if (g != NULL) {
			ceems_json_util_add_double(g, "start", list[i].start, &g_ok);
			ceems_json_util_add_double(g, "end", list[i].end, &g_ok);
		}
		if (!g_ok || json_object_array_add(arr, g) != 0) {
			json_object_put(g);
			*ok = false;
		}
	}
	return arr;
}

struct json_object *
ceems_measure_json_report_to_json(const struct ceems_agent_job_report *r)
{
	struct json_object *obj = json_object_new_object(), *ledger;
	bool ok = obj != NULL;

	if (!ok)
		return NULL;
	ceems_json_util_add(obj, "jobid", json_object_new_int64(r->jobid), &ok);
	ceems_json_util_add(obj, "uid", json_object_new_int64(r->uid), &ok);
	if (r->alloc_cores != 0)
		ceems_json_util_add(obj, "alloc_cores", json_object_new_int64(r->alloc_cores), &ok);
	if (r->alloc_mem_bytes != 0)
		ceems_json_util_add(obj, "alloc_mem_bytes", ceems_json_util_new_u64(r->alloc_mem_bytes), &ok);
	ceems_json_util_add_double(obj, "elapsed_s", r->elapsed_s, &ok);
	if (r->usage.present & (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER |
				CEEMS_CGF_CPU_SYSTEM))
		ceems_json_util_add_double(obj, "cpu_s", r->cpu_s, &ok);
	ceems_json_util_add_double(obj, "gap_s", r->gap_s, &ok);
	ceems_json_util_add(obj, "cgroup_gone", json_object_new_boolean(r->cgroup_gone), &ok);
	if (r->have_tail)
		ceems_json_util_add(obj, "tail", tail_to_json(r, &ok), &ok);
	ceems_json_util_add(obj, "usage", usage_to_json(&r->usage, &ok), &ok);
	ledger = ledger_to_json(&r->ledger, &ok);
	if (ledger != NULL)
		ceems_measure_err_to_json(ledger, &r->err, &ok);
	ceems_json_util_add(obj, "ledger", ledger, &ok);
	if (r->ngaps > 0)
		ceems_json_util_add(obj, "gaps", intervals_to_json(r->gaps, r->ngaps, &ok), &ok);
	if (r->recovered_s > 0)
		ceems_json_util_add_double(obj, "recovered_s", r->recovered_s, &ok);
	if (r->nrecovered > 0)
		ceems_json_util_add(obj, "recovered",
			       intervals_to_json(r->recovered, r->nrecovered, &ok), &ok);
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
		ceems_json_util_add(obj, "steps", steps, &ok);
	}
	ceems_measure_gpu_to_json(obj, r, &ok);
	ceems_measure_io_to_json(obj, &r->io, &ok);
	if (ceems_measure_perf_report_any(&r->perf))
		ceems_json_util_add(obj, "perf", ceems_measure_perf_report_to_json(&r->perf, &ok), &ok);
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
		return ceems_json_util_error(err, err_size, "report.usage must be an object");
	for (size_t i = 0; i < NUSAGE_FIELDS; i++) {
		char where[64];
		uint64_t v;

		if ((val = ceems_json_util_get(obj, usage_fields[i].name)) == NULL)
			continue;
		snprintf(where, sizeof(where), "report.usage.%s", usage_fields[i].name);
		if (usage_fields[i].bit == CEEMS_CGF_MEM_LIMIT &&
		    json_object_is_type(val, json_type_string) &&
		    strcmp(json_object_get_string(val), "max") == 0)
			v = CEEMS_CGROUP_UNLIMITED;
		else if ((r = ceems_json_util_read_uint(val, where, 0, UINT64_MAX, &v, err,
					err_size)) < 0)
			return r;
		memcpy((char *)st + usage_fields[i].offset, &v, sizeof(v));
		st->present |= usage_fields[i].bit;
	}
	if ((val = ceems_json_util_get(obj, "cpuset")) != NULL) {
		if (!json_object_is_type(val, json_type_string) ||
		    ceems_cgroup_parse_cpu_list(json_object_get_string(val), &st->cpuset) < 0)
			return ceems_json_util_error(err, err_size,
				      "report.usage.cpuset must be a CPU list such as \"0-3,8\"");
		st->ncpus_allocated = st->cpuset.count;
		st->present |= CEEMS_CGF_CPUSET;
	}
	if ((val = ceems_json_util_get(obj, "failed")) != NULL) {
		if (!json_object_is_type(val, json_type_array))
			return ceems_json_util_error(err, err_size, "report.usage.failed must be an array");
		for (size_t i = 0; i < json_object_array_length(val); i++) {
			struct json_object *name = json_object_array_get_idx(val, i);

			if (!json_object_is_type(name, json_type_string))
				return ceems_json_util_error(err, err_size,
					      "report.usage.failed must hold field names");
			/* A name this client does not know is skipped. */
			st->failed |= field_bit(json_object_get_string(name));
		}
	}
	for (size_t i = 0; i < sizeof(usage_flags) / sizeof(usage_flags[0]); i++) {
		bool b = false;

		if ((val = ceems_json_util_get(obj, usage_flags[i].name)) == NULL)
			continue;
		if ((r = ceems_json_util_read_bool(val, usage_flags[i].name, &b, err, err_size)) < 0)
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
		return ceems_json_util_error(err, err_size, "report.ledger.emissions must be an object");
	l->have_emissions = true;
	if ((val = ceems_json_util_get(obj, "grams")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ledger.emissions.grams", 0, INFINITY,
			   &l->emissions_g, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "covered_s")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ledger.emissions.covered_s", 0, INFINITY,
			   &l->emissions_covered_s, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "factor_changed")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "report.ledger.emissions.factor_changed",
			   &l->factor_changed, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "fallback")) != NULL) {
		double fallback;

		if ((r = ceems_json_util_read_real(val, "report.ledger.emissions.fallback",
				   0, 1, &fallback, err, err_size)) < 0)
			return r;
		l->factor_timed = true;
		l->factor_fallback = (float)fallback;
	}
	if ((f = ceems_json_util_get(obj, "factor")) == NULL)
		return 0;
	if (!json_object_is_type(f, json_type_object))
		return ceems_json_util_error(err, err_size,
			      "report.ledger.emissions.factor must be an object");
	if ((val = ceems_json_util_get(f, "source")) != NULL &&
	    (r = ceems_json_util_read_string(val, "report.ledger.emissions.factor.source",
			     l->factor.source, sizeof(l->factor.source), err,
			     err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(f, "zone")) != NULL &&
	    (r = ceems_json_util_read_string(val, "report.ledger.emissions.factor.zone",
			     l->factor.zone, sizeof(l->factor.zone), err,
			     err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(f, "year")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "report.ledger.emissions.factor.year", 0,
				   9999, &year, err, err_size)) < 0)
			return r;
		l->factor.year = (int)year;
	}
	if ((val = ceems_json_util_get(f, "g_per_kwh")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ledger.emissions.factor.g_per_kwh", 0,
			   INFINITY, &l->factor.g_per_kwh, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(f, "pue")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ledger.emissions.factor.pue", 0,
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
		return ceems_json_util_error(err, err_size, "report.ledger must be an object");
	if ((val = ceems_json_util_get(obj, "lifetime_s")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ledger.lifetime_s", 0, INFINITY,
			   &l->lifetime_s, err, err_size)) < 0)
		return r;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		const char *name = ceems_job_figures_energy_domain_name(d);
		struct json_object *dom = ceems_json_util_get(obj, name);
		static const char *const parts[] = { "joules", "static_j", "covered_s" };
		double *dest[3];

		if (dom == NULL)
			continue;
		if (!json_object_is_type(dom, json_type_object))
			return ceems_json_util_error(err, err_size, "report.ledger.%s must be an object",
				      name);
		l->measured[d] = true;
		dest[0] = &l->joules[d];
		dest[1] = &l->static_j[d];
		dest[2] = &l->covered_s[d];
		for (int i = 0; i < 3; i++) {
			char where[64];

			if ((val = ceems_json_util_get(dom, parts[i])) == NULL)
				continue;
			snprintf(where, sizeof(where), "report.ledger.%s.%s", name,
				 parts[i]);
			if ((r = ceems_json_util_read_real(val, where, 0, INFINITY, dest[i], err,
					   err_size)) < 0)
				return r;
		}
		if ((val = ceems_json_util_get(dom, "idle_unlearned")) != NULL) {
			char where[64];

			/* Only the CPU domains have a static power to learn
			 * (doc/record-format.md): a flag elsewhere is a
			 * record this agent never wrote. */
			if (d != CEEMS_DOMAIN_PACKAGE && d != CEEMS_DOMAIN_DRAM)
				return ceems_json_util_error(err, err_size,
					"report.ledger.%s.idle_unlearned: only the package and dram domains have an idle power to learn",
					name);
			snprintf(where, sizeof(where),
				 "report.ledger.%s.idle_unlearned", name);
			if ((r = ceems_json_util_read_bool(val, where,
						      &l->idle_unlearned[d],
						      err, err_size)) < 0)
				return r;
		}
	}
	if ((val = ceems_json_util_get(obj, "emissions")) != NULL &&
	    (r = emissions_from_json(val, l, err, err_size)) < 0)
		return r;
	/* Records written before the rule above carry "grams": 0 with no
	 * energy measured: read as unknown, as the writer now leaves them. */
	if (!ceems_job_figures_ledger_energy_known(l)) {
		l->have_emissions = false;
		l->emissions_g = 0;
		l->emissions_covered_s = 0;
		l->factor_changed = false;
		l->factor_timed = false;
		l->factor_fallback = 0;
		memset(&l->factor, 0, sizeof(l->factor));
	}
	return 0;
}

static int
step_from_json(const struct json_object *obj,
	       struct ceems_agent_step_report *st, char *err, size_t err_size)
{
	struct json_object *val, *j;
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "report.steps[] must be objects");
	if ((val = ceems_json_util_get(obj, "id")) == NULL)
		return ceems_json_util_error(err, err_size, "report.steps[].id is missing");
	if ((r = ceems_json_util_read_string(val, "report.steps[].id", st->id, sizeof(st->id),
			     err, err_size)) < 0)
		return r;
	if (!ceems_step_ids_name_ok(st->id))
		return ceems_json_util_error(err, err_size, "report.steps[].id is not a step name");
	if ((val = ceems_json_util_get(obj, "ended")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "report.steps[].ended", &st->ended, err,
			   err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "elapsed_s")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.steps[].elapsed_s", 0, INFINITY,
			   &st->elapsed_s, err, err_size)) < 0)
		return r;
	/* A figure is measured when it is there (records written before
	 * the flags existed always had them). */
	if ((val = ceems_json_util_get(obj, "cpu_s")) != NULL) {
		if ((r = ceems_json_util_read_real(val, "report.steps[].cpu_s", 0,
				   INFINITY, &st->cpu_s, err, err_size)) < 0)
			return r;
		st->have_cpu = true;
	}
	if ((val = ceems_json_util_get(obj, "mem_peak_bytes")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "report.steps[].mem_peak_bytes", 0,
				   UINT64_MAX, &st->mem_peak_bytes, err,
				   err_size)) < 0)
			return r;
		st->have_mem_peak = true;
	}
	if ((val = ceems_json_util_get(obj, "oom_kills")) != NULL) {
		uint64_t kills;

		if ((r = ceems_json_util_read_uint(val, "report.steps[].oom_kills", 0,
				   UINT32_MAX, &kills, err, err_size)) < 0)
			return r;
		st->oom_kills = (uint32_t)kills;
		st->have_oom_kills = true;
	}
	if ((val = ceems_json_util_get(obj, "tasks")) != NULL) {
		uint64_t tasks;

		if ((r = ceems_json_util_read_uint(val, "report.steps[].tasks", 1,
				   UINT16_MAX, &tasks, err, err_size)) < 0)
			return r;
		st->tasks = (uint16_t)tasks;
		st->have_tasks = true;
	}
	if ((j = ceems_json_util_get(obj, "joules")) == NULL)
		return 0;
	if (!json_object_is_type(j, json_type_object))
		return ceems_json_util_error(err, err_size, "report.steps[].joules must be an object");
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if ((val = ceems_json_util_get(j, ceems_job_figures_energy_domain_name(d))) == NULL)
			continue;
		if ((r = ceems_json_util_read_real(val, "report.steps[].joules", 0,
				   INFINITY, &st->joules[d], err, err_size)) < 0)
			return r;
		st->have_joules[d] = true;
	}
	return 0;
}

/* The intervals array NAME ("report.gaps", "report.recovered") into
 * LIST, *N of them. */
static int
intervals_from_json(const struct json_object *arr, const char *name,
		    struct ceems_agent_gap *list, uint32_t *n_out, char *err,
		    size_t err_size)
{
	char what[64];
	size_t n;
	int ret;

	if (!json_object_is_type(arr, json_type_array))
		return ceems_json_util_error(err, err_size, "%s must be an array", name);
	n = json_object_array_length(arr);
	if (n > CEEMS_AGENT_MAX_GAPS)
		return ceems_json_util_error(err, err_size, "%s has more than %d intervals",
					name, CEEMS_AGENT_MAX_GAPS);
	for (size_t i = 0; i < n; i++) {
		const struct json_object *g = json_object_array_get_idx(arr, i);
		struct json_object *val;

		if (!json_object_is_type(g, json_type_object))
			return ceems_json_util_error(err, err_size, "%s[] must be objects", name);
		snprintf(what, sizeof(what), "%s[].start", name);
		if ((val = ceems_json_util_get(g, "start")) == NULL ||
		    (ret = ceems_json_util_read_real(val, what, 0, 1e11, &list[i].start,
						err, err_size)) < 0)
			return val == NULL ? ceems_json_util_error(err, err_size,
							      "%s is missing", what) : ret;
		snprintf(what, sizeof(what), "%s[].end", name);
		if ((val = ceems_json_util_get(g, "end")) == NULL ||
		    (ret = ceems_json_util_read_real(val, what, 0, 1e11, &list[i].end,
						err, err_size)) < 0)
			return val == NULL ? ceems_json_util_error(err, err_size,
							      "%s is missing", what) : ret;
		if (list[i].end < list[i].start)
			return ceems_json_util_error(err, err_size, "%s[] ends before it starts", name);
	}
	*n_out = (uint32_t)n;
	return 0;
}

static int
steps_from_json(const struct json_object *arr,
		struct ceems_agent_job_report *r, char *err, size_t err_size)
{
	size_t n;
	int ret;

	if (!json_object_is_type(arr, json_type_array))
		return ceems_json_util_error(err, err_size, "report.steps must be an array");
	n = json_object_array_length(arr);
	if (n > CEEMS_AGENT_MAX_STEPS)
		return ceems_json_util_error(err, err_size, "report.steps has more than %d steps",
			      CEEMS_AGENT_MAX_STEPS);
	for (size_t i = 0; i < n; i++)
		if ((ret = step_from_json(json_object_array_get_idx(arr, i),
					  &r->steps[i], err, err_size)) < 0)
			return ret;
	r->nsteps = (uint32_t)n;
	return 0;
}

int
ceems_measure_json_report_from_json(const struct json_object *obj,
				 struct ceems_agent_job_report *report,
				 char *err, size_t err_size)
{
	struct ceems_agent_job_report *r;
	struct json_object *val;
	uint64_t u;
	int ret = -EINVAL;

	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "report must be an object");
	/* Built aside (the struct is large for a stack: the cpuset), so that
	 * REPORT is untouched on error. */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return ceems_json_util_error(err, err_size, "out of memory decoding a report");
	ceems_job_figures_ledger_init(&r->ledger);

	if ((val = ceems_json_util_get(obj, "jobid")) == NULL) {
		ceems_json_util_error(err, err_size, "report.jobid is missing");
		goto out;
	}
	if ((ret = ceems_json_util_read_uint(val, "report.jobid", 1, UINT32_MAX, &u, err, err_size)) < 0)
		goto out;
	r->jobid = (uint32_t)u;
	if ((val = ceems_json_util_get(obj, "uid")) == NULL) {
		ret = ceems_json_util_error(err, err_size, "report.uid is missing");
		goto out;
	}
	if ((ret = ceems_json_util_read_uint(val, "report.uid", 0, UINT32_MAX, &u, err, err_size)) < 0)
		goto out;
	r->uid = (uint32_t)u;
	if ((val = ceems_json_util_get(obj, "alloc_cores")) != NULL) {
		if ((ret = ceems_json_util_read_uint(val, "report.alloc_cores", 0, UINT32_MAX, &u,
				     err, err_size)) < 0)
			goto out;
		r->alloc_cores = (uint32_t)u;
	}
	if ((val = ceems_json_util_get(obj, "alloc_mem_bytes")) != NULL &&
	    (ret = ceems_json_util_read_uint(val, "report.alloc_mem_bytes", 0, UINT64_MAX,
			     &r->alloc_mem_bytes, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "elapsed_s")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "report.elapsed_s", 0, INFINITY, &r->elapsed_s,
			     err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "cpu_s")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "report.cpu_s", 0, INFINITY, &r->cpu_s, err,
			     err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "gap_s")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "report.gap_s", 0, INFINITY, &r->gap_s, err,
			     err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "cgroup_gone")) != NULL &&
	    (ret = ceems_json_util_read_bool(val, "report.cgroup_gone", &r->cgroup_gone, err,
			     err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "tail")) != NULL &&
	    (ret = tail_from_json(val, r, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "usage")) != NULL &&
	    (ret = usage_from_json(val, &r->usage, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "ledger")) != NULL &&
	    ((ret = ledger_from_json(val, &r->ledger, err, err_size)) < 0 ||
	     (ret = ceems_measure_err_from_json(val, &r->err, err,
						err_size)) < 0))
		goto out;
	if ((val = ceems_json_util_get(obj, "gaps")) != NULL &&
	    (ret = intervals_from_json(val, "report.gaps", r->gaps, &r->ngaps,
				       err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "recovered_s")) != NULL &&
	    (ret = ceems_json_util_read_real(val, "report.recovered_s", 0, INFINITY,
					&r->recovered_s, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "recovered")) != NULL &&
	    (ret = intervals_from_json(val, "report.recovered", r->recovered,
				       &r->nrecovered, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "steps")) != NULL &&
	    (ret = steps_from_json(val, r, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "gpus")) != NULL &&
	    (ret = ceems_measure_gpu_from_json(val, r, err, err_size)) < 0)
		goto out;
	if ((ret = ceems_measure_io_from_json(obj, &r->io, err, err_size)) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "perf")) != NULL &&
	    (ret = ceems_measure_perf_report_from_json(val, &r->perf, err, err_size)) < 0)
		goto out;
	*report = *r;
	ret = 0;
out:
	free(r);
	return ret;
}
