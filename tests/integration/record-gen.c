/* record-gen.c - writes one job record, exactly as the plugin would
 * (ceems_record_build + ceems_record_encode), for the schema tests:
 * schema.bats feeds it to ceems.upsert_job_record() so the SQL side is
 * always tested against the real encoder, never a hand copy of the format.
 *
 *   record-gen KEY=VALUE...
 *
 * Keys (anything else is an error): cluster node jobid uid user account
 * partition qos name state exit submit start end cores cpus alloc_gpus mem_bytes
 * elapsed cpu_s mem_peak package_j package_static_j dram_j
 * dram_static_j covered_s lifetime_s gap_s emissions_g zone pue
 * written_at finalized_by (extern, epilog or agent; extern if left out)
 * steps (number of steps: batch, extern, 0, 1...) bare_steps
 * (how many of the last steps have no CPU time and no energy measured,
 * as a step whose cgroup was never found), gpu_j (the ledger's GPU
 * energy), gpu=UUID,BUS,INSTANCE,SHARE,ENERGY_J,UTIL,MEM_PEAK,MEM_TOTAL,
 * SM_ACTIVE,POWER_INTEGRATED (one GPU the job held, repeatable; "-" for
 * an unknown figure, an absent name or no instance; the last is 0 or 1),
 * fallback (after zone: the node has an intensity series, and this share
 * of the energy, 0 to 1, was priced at the yearly figure; between 0 and
 * 1 the factor changed, the first one the series'), idle_unlearned
 * (package, dram or package,dram: ticks split before the node's idle
 * power was learned), err=DOMAIN,SOURCE,LAG,IDLE_POWER,GAPS (the
 * domain's energy error bound in its four parts, J; repeatable; none:
 * the bound is unknown), intensity=FILE (an intensity cache,
 * lib/model/intensity.h: the record gets its carbon-aware advice by it,
 * as the agent gives it, under advice_window, advice_min_g,
 * advice_min_pct and advice_min_s, by default 24 h, 0 g, 0% and 0 s),
 * dependency (yes or no: slurmctld listed one).
 * Energy keys left out are domains the node did not measure. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup_stats.h"
#include "model/carbon_advice.h"
#include "model/intensity.h"
#include "record/record.h"

struct args {
	struct ceems_job_meta meta;
	struct ceems_agent_job_report rep;
	double covered_s, lifetime_s;
	bool have_package, have_dram, have_gpu;
	int64_t written_at;
	char finalized_by[16];
	unsigned int nsteps;
	unsigned int bare_steps;
	char intensity[512];
	struct ceems_advice_opts advice;
};

static int
parse_double(const char *v, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(v, &end);
	return errno != 0 || end == v || *end != '\0' ? -1 : 0;
}

static int
parse_u64(const char *v, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	return errno != 0 || end == v || *end != '\0' ? -1 : 0;
}

static int
set_string(char *dst, size_t size, const char *v)
{
	if (strlen(v) >= size)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* The next comma-separated figure of *P: 0 with *HAVE false for "-". */
static int
next_figure(char **p, double *out, bool *have)
{
	char *f = strsep(p, ",");

	*have = false;
	*out = 0;
	if (f == NULL)
		return -1;
	if (strcmp(f, "-") == 0)
		return 0;
	*have = true;
	return parse_double(f, out);
}

/* gpu=UUID,BUS,INSTANCE,SHARE,ENERGY_J,UTIL,MEM_PEAK,MEM_TOTAL,SM,PI */
static int
add_gpu(struct ceems_agent_job_report *r, char *v)
{
	struct ceems_agent_gpu_report *g;
	char *uuid = strsep(&v, ","), *bus = strsep(&v, ",");
	double x[8];
	bool have[8];

	if (r->ngpus >= CEEMS_LEDGER_MAX_GPUS || uuid == NULL || bus == NULL)
		return -1;
	for (int i = 0; i < 8; i++)
		if (next_figure(&v, &x[i], &have[i]) < 0)
			return -1;
	if (v != NULL)
		return -1;
	g = &r->gpus[r->ngpus++];
	if (strcmp(uuid, "-") != 0 && set_string(g->uuid, sizeof(g->uuid), uuid) < 0)
		return -1;
	if (strcmp(bus, "-") != 0 && set_string(g->bus_id, sizeof(g->bus_id), bus) < 0)
		return -1;
	g->instance = have[0] ? (int)x[0] : -1;
	g->share = x[1];
	g->have_energy = have[2];
	g->energy_j = x[2];
	g->have_util = have[3];
	g->util_pct = x[3];
	g->have_mem_peak = have[4];
	g->mem_peak_bytes = (uint64_t)x[4];
	g->mem_total_bytes = (uint64_t)x[5];
	g->have_sm_active = have[6];
	g->sm_active_pct = x[6];
	g->power_integrated = x[7] != 0;
	return 0;
}

/* "DOMAIN,SOURCE,LAG,IDLE_POWER,GAPS": one domain's error bound. */
static int
set_err(struct ceems_energy_err_report *e, const char *v)
{
	char name[16];
	double p[CEEMS_ERR_PARTS];

	if (sscanf(v, "%15[a-z],%lf,%lf,%lf,%lf", name, &p[0], &p[1], &p[2],
		   &p[3]) != 5)
		return -1;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (strcmp(name, ceems_job_figures_energy_domain_name(d)) != 0)
			continue;
		e->known = e->have[d] = true;
		memcpy(e->part_j[d], p, sizeof(p));
		return 0;
	}
	return -1;
}

/* A node with an intensity series (lib/model/intensity.h) that priced SHARE
 * of the job's energy at the yearly figure; the zone is set. */
static int
set_fallback(struct ceems_job_ledger *l, double share)
{
	if (!l->have_emissions || !(share >= 0 && share <= 1))
		return -1;
	l->factor_timed = true;
	l->factor_fallback = (float)share;
	if (share < 1)
		snprintf(l->factor.source, sizeof(l->factor.source), "%s%s",
			 CEEMS_INTENSITY_SOURCE_PREFIX, l->factor.zone);
	l->factor_changed = share > 0 && share < 1;
	return 0;
}

/* The advice as the agent gives it (lib/agent/agent_finish.c): by the
 * series in the file, the record's start and dependency. */
static int
advise(const struct args *a, struct ceems_job_record *rec)
{
	struct ceems_intensity_series s;
	struct ceems_advice adv;
	char err[256];
	int r = ceems_intensity_load(a->intensity, &s, err, sizeof(err));

	if (r < 0) {
		fprintf(stderr, "record-gen: %s: %s\n", a->intensity,
			r == -EINVAL ? err : strerror(-r));
		return -1;
	}
	r = ceems_carbon_advice_of_report(&s, &rec->report, rec->meta.start_time,
			rec->meta.dependency == CEEMS_JOB_DEPENDENCY_LISTED,
			&a->advice, &adv);
	if (r == 0)
		ceems_record_set_advice(rec, &adv);
	ceems_intensity_free(&s);
	return r;
}

static int
apply(struct args *a, const char *key, const char *v)
{
	struct ceems_job_meta *m = &a->meta;
	struct ceems_agent_job_report *r = &a->rep;
	struct ceems_job_ledger *l = &r->ledger;
	uint64_t u = 0;
	double d = 0;

	if (strcmp(key, "cluster") == 0)
		return set_string(m->cluster, sizeof(m->cluster), v);
	if (strcmp(key, "node") == 0)
		return set_string(m->node, sizeof(m->node), v);
	if (strcmp(key, "user") == 0)
		return set_string(m->user, sizeof(m->user), v);
	if (strcmp(key, "account") == 0)
		return set_string(m->account, sizeof(m->account), v);
	if (strcmp(key, "partition") == 0)
		return set_string(m->partition, sizeof(m->partition), v);
	if (strcmp(key, "qos") == 0)
		return set_string(m->qos, sizeof(m->qos), v);
	if (strcmp(key, "name") == 0)
		return set_string(m->name, sizeof(m->name), v);
	if (strcmp(key, "state") == 0)
		return set_string(m->state, sizeof(m->state), v);
	if (strcmp(key, "finalized_by") == 0)
		return set_string(a->finalized_by, sizeof(a->finalized_by), v);
	if (strcmp(key, "gpu") == 0) {
		char copy[512];

		if (set_string(copy, sizeof(copy), v) < 0)
			return -1;
		return add_gpu(r, copy);
	}
	if (strcmp(key, "zone") == 0) {
		l->have_emissions = true;
		snprintf(l->factor.source, sizeof(l->factor.source), "record-gen");
		l->factor.year = 2024;
		l->factor.g_per_kwh = 300;
		if (l->factor.pue < 1)
			l->factor.pue = 1;
		return set_string(l->factor.zone, sizeof(l->factor.zone), v);
	}
	if (strcmp(key, "err") == 0)
		return set_err(&r->err, v);
	if (strcmp(key, "intensity") == 0)
		return set_string(a->intensity, sizeof(a->intensity), v);
	if (strcmp(key, "dependency") == 0) {
		m->dependency = strcmp(v, "yes") == 0 ? CEEMS_JOB_DEPENDENCY_LISTED :
				CEEMS_JOB_DEPENDENCY_NONE;
		return strcmp(v, "yes") == 0 || strcmp(v, "no") == 0 ? 0 : -1;
	}
	if (strcmp(key, "idle_unlearned") == 0) {
		if (strcmp(v, "package") == 0 || strcmp(v, "package,dram") == 0)
			l->idle_unlearned[CEEMS_DOMAIN_PACKAGE] = true;
		if (strcmp(v, "dram") == 0 || strcmp(v, "package,dram") == 0)
			l->idle_unlearned[CEEMS_DOMAIN_DRAM] = true;
		return l->idle_unlearned[CEEMS_DOMAIN_PACKAGE] ||
		    l->idle_unlearned[CEEMS_DOMAIN_DRAM] ? 0 : -1;
	}
	if (parse_double(v, &d) < 0)
		return -1;
	if (strcmp(key, "fallback") == 0)
		return set_fallback(l, d);
	if (strcmp(key, "advice_window") == 0)
		a->advice.window_s = (int64_t)d;
	else if (strcmp(key, "advice_min_g") == 0)
		a->advice.min_saving_g = d;
	else if (strcmp(key, "advice_min_pct") == 0)
		a->advice.min_saving_frac = d / 100;
	else if (strcmp(key, "advice_min_s") == 0)
		a->advice.min_duration_s = d;
	if (strncmp(key, "advice_", 7) == 0)
		return 0;
	/* Integer keys must be whole numbers. */
	if (d >= 0 && d == (double)(uint64_t)d)
		u = (uint64_t)d;
	if (strcmp(key, "jobid") == 0)
		m->jobid = r->jobid = (uint32_t)u;
	else if (strcmp(key, "uid") == 0)
		m->uid = r->uid = (uint32_t)u;
	else if (strcmp(key, "exit") == 0)
		m->exit_code = (int32_t)u;
	else if (strcmp(key, "submit") == 0)
		m->submit_time = (int64_t)u;
	else if (strcmp(key, "start") == 0)
		m->start_time = (int64_t)u;
	else if (strcmp(key, "end") == 0)
		m->end_time = (int64_t)u;
	else if (strcmp(key, "written_at") == 0)
		a->written_at = (int64_t)u;
	else if (strcmp(key, "cpus") == 0)
		m->alloc_cpus = (uint32_t)u;
	else if (strcmp(key, "alloc_gpus") == 0)
		m->alloc_gpus = (uint32_t)u;
	else if (strcmp(key, "cores") == 0)
		r->alloc_cores = (uint32_t)u;
	else if (strcmp(key, "nnodes") == 0)
		m->nnodes = (uint32_t)u;
	else if (strcmp(key, "mem_bytes") == 0 && parse_u64(v, &u) == 0)
		m->req_mem_bytes = r->alloc_mem_bytes = u;
	else if (strcmp(key, "elapsed") == 0)
		r->elapsed_s = d;
	else if (strcmp(key, "cpu_s") == 0) {
		r->cpu_s = d;
		r->usage.present |= CEEMS_CGF_CPU_USAGE;
		r->usage.cpu_usage_ns = (uint64_t)(d * 1e9);
	} else if (strcmp(key, "mem_peak") == 0 && parse_u64(v, &u) == 0) {
		r->usage.present |= CEEMS_CGF_MEM_PEAK;
		r->usage.mem_peak_bytes = u;
	} else if (strcmp(key, "package_j") == 0) {
		l->joules[CEEMS_DOMAIN_PACKAGE] = d;
		a->have_package = true;
	} else if (strcmp(key, "package_static_j") == 0)
		l->static_j[CEEMS_DOMAIN_PACKAGE] = d;
	else if (strcmp(key, "dram_j") == 0) {
		l->joules[CEEMS_DOMAIN_DRAM] = d;
		a->have_dram = true;
	} else if (strcmp(key, "gpu_j") == 0) {
		l->joules[CEEMS_DOMAIN_GPU] = d;
		a->have_gpu = true;
	} else if (strcmp(key, "dram_static_j") == 0)
		l->static_j[CEEMS_DOMAIN_DRAM] = d;
	else if (strcmp(key, "covered_s") == 0)
		a->covered_s = d;
	else if (strcmp(key, "lifetime_s") == 0)
		a->lifetime_s = d;
	else if (strcmp(key, "gap_s") == 0)
		r->gap_s = d;
	else if (strcmp(key, "emissions_g") == 0) {
		l->have_emissions = true;
		l->emissions_g = d;
	} else if (strcmp(key, "pue") == 0)
		l->factor.pue = d;
	else if (strcmp(key, "steps") == 0)
		a->nsteps = (unsigned int)u;
	else if (strcmp(key, "bare_steps") == 0)
		a->bare_steps = (unsigned int)u;
	else
		return -1;
	return 0;
}

/* Steps split the job's figures evenly: what a test can recompute. */
static void
add_steps(struct args *a)
{
	static const char *const named[] = { "batch", "extern" };
	struct ceems_agent_job_report *r = &a->rep;

	if (a->nsteps > CEEMS_AGENT_MAX_STEPS)
		a->nsteps = CEEMS_AGENT_MAX_STEPS;
	for (unsigned int i = 0; i < a->nsteps; i++) {
		struct ceems_agent_step_report *st = &r->steps[i];

		if (i < 2)
			snprintf(st->id, sizeof(st->id), "%s", named[i]);
		else
			snprintf(st->id, sizeof(st->id), "%u", i - 2);
		st->ended = true;
		st->elapsed_s = r->elapsed_s;
		if (i + a->bare_steps >= a->nsteps)
			continue;	/* nothing measured: no figures */
		st->have_cpu = (r->usage.present & CEEMS_CGF_CPU_USAGE) != 0;
		st->cpu_s = r->cpu_s / a->nsteps;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			st->have_joules[d] = r->ledger.measured[d];
			st->joules[d] = r->ledger.joules[d] / a->nsteps;
		}
		if (r->usage.present & CEEMS_CGF_MEM_PEAK) {
			st->have_mem_peak = true;
			st->mem_peak_bytes = r->usage.mem_peak_bytes / a->nsteps;
		}
	}
	r->nsteps = a->nsteps;
}

int
main(int argc, char **argv)
{
	static struct args a;
	static struct ceems_job_record rec;
	static char buf[CEEMS_RECORD_MAX];
	char err[256];
	int n;

	ceems_job_meta_init(&a.meta);
	ceems_job_figures_ledger_init(&a.rep.ledger);
	a.written_at = 1700000000;
	a.advice.window_s = 86400;
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (eq == NULL) {
			fprintf(stderr, "record-gen: %s is not KEY=VALUE\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		if (apply(&a, argv[i], eq + 1) < 0) {
			fprintf(stderr, "record-gen: bad %s=%s\n", argv[i], eq + 1);
			return 2;
		}
	}
	a.rep.ledger.lifetime_s = a.lifetime_s > 0 ? a.lifetime_s : a.rep.elapsed_s;
	if (a.have_package) {
		a.rep.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
		a.rep.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] =
			a.covered_s > 0 ? a.covered_s : a.rep.ledger.lifetime_s;
	}
	if (a.have_dram) {
		a.rep.ledger.measured[CEEMS_DOMAIN_DRAM] = true;
		a.rep.ledger.covered_s[CEEMS_DOMAIN_DRAM] =
			a.covered_s > 0 ? a.covered_s : a.rep.ledger.lifetime_s;
	}
	if (a.have_gpu) {
		a.rep.ledger.measured[CEEMS_DOMAIN_GPU] = true;
		a.rep.ledger.covered_s[CEEMS_DOMAIN_GPU] =
			a.covered_s > 0 ? a.covered_s : a.rep.ledger.lifetime_s;
	}
	if (a.rep.ledger.have_emissions)
		a.rep.ledger.emissions_covered_s = a.rep.ledger.lifetime_s;
	add_steps(&a);
	ceems_record_build(&rec, &a.meta, &a.rep,
			   a.finalized_by[0] != '\0' ? a.finalized_by : "extern",
			   a.written_at);
	if (a.intensity[0] != '\0' && advise(&a, &rec) < 0)
		return 1;
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	if (n < 0) {
		fprintf(stderr, "record-gen: encode: %s\n", strerror(-n));
		return 1;
	}
	/* The generator must not produce what the library itself refuses. */
	if (ceems_record_decode(buf, (size_t)n, &rec, err, sizeof(err)) < 0) {
		fprintf(stderr, "record-gen: the record does not decode: %s\n", err);
		return 1;
	}
	puts(buf);
	return 0;
}
