/* report_rules.c - the rules of the periodic reports: a job's requests
 * against its use, the savings of smaller requests, per-user sums,
 * traffic lights and the suggestions several jobs back.  Thresholds and
 * each rule's "fires when" and "must not fire" are in doc/reports.md;
 * tests/unit/test_report_rules.c holds them. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_rules.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static bool
known(double v)
{
	return !isnan(v);
}

static double
grams_of(const struct report_job *j, double joules)
{
	/* The job's own factor: its emissions per joule charged. */
	if (!known(joules) || !known(j->emissions_g) || !known(j->total_j) ||
	    j->total_j <= 0)
		return NAN;
	return joules * j->emissions_g / j->total_j;
}

static enum report_skip
skip_of(const struct report_job *j)
{
	if (strcmp(j->state, "RUNNING") == 0)
		return REPORT_SKIP_RUNNING;
	if (!known(j->elapsed_s) || j->elapsed_s < REPORT_MIN_RUN_S)
		return REPORT_SKIP_SHORT;
	if ((known(j->nnodes) && known(j->nodes_reported) &&
	     j->nodes_reported < j->nnodes) ||
	    (known(j->coverage) && j->coverage < REPORT_MIN_COVERAGE) ||
	    (known(j->gap_s) &&
	     j->gap_s > (1 - REPORT_MIN_COVERAGE) * j->elapsed_s *
			(known(j->nnodes) ? j->nnodes : 1)))
		return REPORT_SKIP_QUALITY;
	if (known(j->since_first_s) && j->since_first_s < REPORT_NEW_USER_S)
		return REPORT_SKIP_NEW_USER;
	return REPORT_JUDGED;
}

/* Cores: at most half of them busy, on one node, and not held for the
 * memory that came with them. */
static void
judge_cpu(const struct report_job *j, struct report_finding *f)
{
	double used, sug;

	if (!known(j->alloc_cpus) || j->alloc_cpus < 2 || !known(j->cpu_time_s))
		return;
	/* A multi-node job's average can hide one busy node. */
	if (known(j->nnodes) && j->nnodes > 1)
		return;
	/* Cores asked for to get their memory: fewer cores, less memory. */
	if (known(j->mem_peak_bytes) && known(j->req_mem_bytes) &&
	    j->mem_peak_bytes >= 0.5 * j->req_mem_bytes)
		return;
	used = j->cpu_time_s / j->elapsed_s;
	if (used > 0.5 * j->alloc_cpus)
		return;
	sug = used <= 1 ? 1 : ceil(used * 1.1);
	if (sug >= j->alloc_cpus)
		return;
	f->fired = true;
	f->asked = j->alloc_cpus;
	f->suggested = sug;
	f->held_hours = (j->alloc_cpus - sug) * j->elapsed_s / 3600;
	f->saved_j = known(j->package_static_j) ?
		j->package_static_j * (j->alloc_cpus - sug) / j->alloc_cpus : NAN;
	f->saved_g = grams_of(j, f->saved_j);
}

static void
judge_mem(const struct report_job *j, struct report_finding *f)
{
	double sug;

	if (!known(j->req_mem_bytes) || j->req_mem_bytes < 2 * GIB ||
	    !known(j->mem_peak_bytes))
		return;
	/* A job killed for memory, or at its limit, wanted more. */
	if (strcmp(j->state, "OUT_OF_MEMORY") == 0 ||
	    j->mem_peak_bytes >= 0.9 * j->req_mem_bytes ||
	    j->mem_peak_bytes >= 0.25 * j->req_mem_bytes)
		return;
	sug = ceil(j->mem_peak_bytes * 1.25 / GIB) * GIB;
	if (sug < GIB)
		sug = GIB;
	if (j->req_mem_bytes - sug < GIB)
		return;
	f->fired = true;
	f->asked = j->req_mem_bytes;
	f->suggested = sug;
	f->held_hours = (j->req_mem_bytes - sug) / GIB * j->elapsed_s / 3600;
	f->saved_j = known(j->dram_static_j) ?
		j->dram_static_j * (j->req_mem_bytes - sug) / j->req_mem_bytes : NAN;
	f->saved_g = grams_of(j, f->saved_j);
}

static void
judge_gpu(const struct report_job *j, struct report_finding *f)
{
	double sug;

	if (!known(j->alloc_gpus) || j->alloc_gpus < 1 ||
	    j->elapsed_s < REPORT_MIN_GPU_RUN_S || !known(j->gpu_util_pct) ||
	    j->gpu_util_pct >= 25)
		return;
	if (j->alloc_gpus < 2) {
		/* One GPU busy 5% of the time may still be the right tool. */
		if (j->gpu_util_pct >= 5)
			return;
		sug = 0;
	} else {
		sug = ceil(j->alloc_gpus * j->gpu_util_pct / 100 * 1.25);
		if (sug < 1)
			sug = 1;
		if (sug >= j->alloc_gpus)
			return;
	}
	f->fired = true;
	f->asked = j->alloc_gpus;
	f->suggested = sug;
	f->held_hours = (j->alloc_gpus - sug) * j->elapsed_s / 3600;
	f->saved_j = known(j->gpu_j) ?
		j->gpu_j * (j->alloc_gpus - sug) / j->alloc_gpus : NAN;
	f->saved_g = grams_of(j, f->saved_j);
}

/* The time limit: only a run that completed shows how long it needs. */
static void
judge_time(const struct report_job *j, struct report_finding *f)
{
	double limit_s;

	if (!known(j->time_limit_min) || j->time_limit_min < 60 ||
	    strcmp(j->state, "COMPLETED") != 0)
		return;
	limit_s = j->time_limit_min * 60;
	if (j->elapsed_s >= 0.25 * limit_s)
		return;
	f->fired = true;
	f->asked = j->time_limit_min;
	f->suggested = ceil(j->elapsed_s * 1.5 / 900) * 15;
	f->held_hours = 0;
	f->saved_j = NAN;
	f->saved_g = NAN;
}

void
report_rules_judge(const struct report_job *job, struct report_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->skip = skip_of(job);
	if (out->skip != REPORT_JUDGED)
		return;
	judge_cpu(job, &out->area[REPORT_CPU]);
	judge_mem(job, &out->area[REPORT_MEM]);
	judge_gpu(job, &out->area[REPORT_GPU]);
	judge_time(job, &out->area[REPORT_TIME]);
}

bool
report_rules_alert(const struct report_job *j)
{
	return skip_of(j) == REPORT_JUDGED && known(j->alloc_gpus) && j->alloc_gpus >= 1 &&
	       j->elapsed_s >= REPORT_ALERT_MIN_S && known(j->gpu_util_pct) &&
	       j->gpu_util_pct < REPORT_ALERT_GPU_PCT;
}

/* What an alerting job cost: its GPU-hours, the GPUs' energy. */
static void
add_alert(struct report_sums *s, const struct report_job *j)
{
	if (s->alerts < REPORT_ALERT_IDS_MAX)
		s->alert_jobids[s->alerts] = j->jobid;
	if (s->alerts == 0)
		s->alert_energy_known = true;
	s->alerts++;
	s->alert_gpu_hours += j->alloc_gpus * j->elapsed_s / 3600;
	if (known(j->gpu_j) && known(grams_of(j, j->gpu_j))) {
		s->alert_j += j->gpu_j;
		s->alert_g += grams_of(j, j->gpu_j);
	} else {
		s->alert_energy_known = false;
	}
}

void
report_rules_sums_init(struct report_sums *s, const char *user)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->user, sizeof(s->user), "%s", user != NULL ? user : "");
}

/* The traffic lights' terms of a judged job. */
static void
add_light_terms(struct report_sums *s, const struct report_job *j)
{
	if (known(j->alloc_cpus) && known(j->cpu_time_s)) {
		s->used[REPORT_CPU] += j->cpu_time_s;
		s->held[REPORT_CPU] += j->alloc_cpus * j->elapsed_s;
		s->area_jobs[REPORT_CPU]++;
	}
	if (known(j->req_mem_bytes) && known(j->mem_peak_bytes)) {
		s->used[REPORT_MEM] += j->mem_peak_bytes * j->elapsed_s;
		s->held[REPORT_MEM] += j->req_mem_bytes * j->elapsed_s;
		s->area_jobs[REPORT_MEM]++;
	}
	if (known(j->alloc_gpus) && j->alloc_gpus >= 1 &&
	    j->elapsed_s >= REPORT_MIN_GPU_RUN_S && known(j->gpu_util_pct)) {
		s->used[REPORT_GPU] += j->gpu_util_pct / 100 * j->alloc_gpus * j->elapsed_s;
		s->held[REPORT_GPU] += j->alloc_gpus * j->elapsed_s;
		s->area_jobs[REPORT_GPU]++;
	}
	if (known(j->time_limit_min) && strcmp(j->state, "COMPLETED") == 0) {
		s->used[REPORT_TIME] += j->elapsed_s;
		s->held[REPORT_TIME] += j->time_limit_min * 60;
		s->area_jobs[REPORT_TIME]++;
	}
}

static struct report_suggestion *
suggestion_for(struct report_sums *s, enum report_area area, double asked)
{
	struct report_suggestion *g;

	for (size_t i = 0; i < s->n_suggestions; i++)
		if (s->suggestions[i].area == area && s->suggestions[i].asked == asked)
			return &s->suggestions[i];
	if (s->n_suggestions == REPORT_SUGGESTIONS_MAX)
		return NULL;
	g = &s->suggestions[s->n_suggestions++];
	memset(g, 0, sizeof(*g));
	g->area = area;
	g->asked = asked;
	g->energy_known = true;
	return g;
}

static void
add_finding(struct report_sums *s, const struct report_job *j,
	    enum report_area area, const struct report_finding *f)
{
	struct report_suggestion *g;

	s->fired[area]++;
	if (area == REPORT_CPU)
		s->idle_core_hours += (j->alloc_cpus - j->cpu_time_s / j->elapsed_s) *
				      j->elapsed_s / 3600;
	if (known(f->saved_j))
		s->idle_j += f->saved_j;
	if ((g = suggestion_for(s, area, f->asked)) == NULL)
		return;
	g->jobs++;
	if (f->suggested > g->suggested)
		g->suggested = f->suggested;
	g->held_hours += f->held_hours;
	if (known(f->saved_j) && known(f->saved_g)) {
		g->saved_j += f->saved_j;
		g->saved_g += f->saved_g;
	} else {
		g->energy_known = false;
	}
	g->wait_s += known(j->wait_s) ? j->wait_s : 0;
	if (j->elapsed_s > g->max_elapsed_s)
		g->max_elapsed_s = j->elapsed_s;
}

void
report_rules_add(struct report_sums *s, const struct report_job *j)
{
	struct report_verdict v;

	s->jobs++;
	if (known(j->elapsed_s)) {
		if (known(j->alloc_cpus))
			s->cpu_hours_alloc += j->alloc_cpus * j->elapsed_s / 3600;
		if (known(j->alloc_gpus))
			s->gpu_hours += j->alloc_gpus * j->elapsed_s / 3600;
	}
	if (known(j->cpu_time_s))
		s->cpu_hours_used += j->cpu_time_s / 3600;
	if (known(j->total_j)) {
		s->energy_j += j->total_j;
		s->energy_known = true;
	}
	if (known(j->emissions_g) && known(j->total_j)) {
		s->emissions_g += j->emissions_g;
		s->emissions_known = true;
	}
	report_rules_judge(j, &v);
	s->skipped[v.skip]++;
	if (report_rules_alert(j))
		add_alert(s, j);
	if (v.skip != REPORT_JUDGED)
		return;
	s->judged++;
	add_light_terms(s, j);
	for (int a = 0; a < REPORT_AREAS; a++)
		if (v.area[a].fired)
			add_finding(s, j, (enum report_area)a, &v.area[a]);
}

static double
suggestion_weight(const struct report_suggestion *g)
{
	/* Energy where every job's was known; else the hours (a core-hour
	 * of static power is some joules: rank those after). */
	if (g->energy_known && g->saved_j > 0)
		return 1e9 + g->saved_j;
	return g->held_hours;
}

/* Most saving first; ties by area and request, so that the order does
 * not depend on the order the jobs came in. */
static int
by_weight(const void *a, const void *b)
{
	const struct report_suggestion *x = a, *y = b;
	double wa = suggestion_weight(x), wb = suggestion_weight(y);

	if (wa != wb)
		return wa < wb ? 1 : -1;
	if (x->area != y->area)
		return x->area < y->area ? -1 : 1;
	return x->asked < y->asked ? -1 : x->asked > y->asked;
}

void
report_rules_finish(struct report_sums *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->n_suggestions; i++) {
		struct report_suggestion *g = &s->suggestions[i];

		if (g->jobs < REPORT_MIN_BACKING)
			continue;
		g->wait_s /= g->jobs;
		if (g->area == REPORT_TIME)
			g->suggested = ceil(g->max_elapsed_s * 1.5 / 900) * 15;
		s->suggestions[kept++] = *g;
	}
	s->n_suggestions = kept;
	qsort(s->suggestions, kept, sizeof(s->suggestions[0]), by_weight);
}

enum report_light
report_rules_light(const struct report_sums *s, enum report_area area,
		   double *ratio)
{
	/* green at or above the first, amber at or above the second */
	static const double limits[REPORT_AREAS][2] = {
		[REPORT_CPU] = { 0.75, 0.5 },
		[REPORT_MEM] = { 0.5, 0.25 },
		[REPORT_GPU] = { 0.5, 0.25 },
		[REPORT_TIME] = { 0.5, 0.25 },
	};
	double r;

	*ratio = NAN;
	if (s->area_jobs[area] < REPORT_MIN_BACKING || s->held[area] <= 0)
		return REPORT_LIGHT_NONE;
	r = s->used[area] / s->held[area];
	*ratio = r;
	if (r >= limits[area][0])
		return REPORT_LIGHT_GREEN;
	if (r >= limits[area][1])
		return REPORT_LIGHT_AMBER;
	return REPORT_LIGHT_RED;
}

const char *
report_rules_area_name(enum report_area area)
{
	static const char *const names[REPORT_AREAS] = {
		"CPU", "Memory", "GPU", "Time limit"
	};

	return area < REPORT_AREAS ? names[area] : "?";
}

const char *
report_rules_light_name(enum report_light light)
{
	switch (light) {
	case REPORT_LIGHT_GREEN:
		return "green";
	case REPORT_LIGHT_AMBER:
		return "amber";
	case REPORT_LIGHT_RED:
		return "red";
	default:
		return "no light";
	}
}

double
report_rules_weight(const struct report_sums *s)
{
	return s->idle_j > 0 ? 1e12 + s->idle_j : s->idle_core_hours;
}
