/* summary_figures.c - the figures of the end-of-job summary, computed
 * once from the job's metadata and the agent's report into struct
 * figures, where each figure carries whether it is known (design
 * invariant 5: not measured is never shown as 0).
 *
 * Separate from the notes and the layout, which only read the figures:
 * this is the one place that trusts or rejects what came from outside,
 * and cleans strings (user, account, nodes, zone) to printable ASCII. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/emissions.h"

#include "summary/summary_internal.h"

#define COVERAGE_FULL 0.995	/* below: the figure says its coverage */

/* Copy at most SRCMAX bytes of SRC (which need not be NUL-terminated)
 * into DST as printable ASCII: any other byte becomes '?'.  Longer than
 * KEEP characters, it is cut and ends in "...". */
static void
clean(char *dst, size_t size, const char *src, size_t srcmax, size_t keep)
{
	size_t n = strnlen(src, srcmax), i, o = 0;

	if (keep + 4 > size)
		keep = size - 4;
	for (i = 0; i < n && o < keep; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (i < n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

bool
ceems_summary_figures_state_is(const struct figures *f, const char *state)
{
	return strcmp(f->state, state) == 0;
}

static void
figures_identity(const struct ceems_job_meta *m, struct figures *f)
{
	if (m->array_job_id != CEEMS_UNKNOWN_U32 &&
	    m->array_task_id != CEEMS_UNKNOWN_U32)
		snprintf(f->jobid, sizeof(f->jobid), "%u_%u", m->array_job_id,
			 m->array_task_id);
	else
		snprintf(f->jobid, sizeof(f->jobid), "%u", m->jobid);
	if (strnlen(m->user, sizeof(m->user)) > 0)
		clean(f->user, sizeof(f->user), m->user, sizeof(m->user), 32);
	else
		snprintf(f->user, sizeof(f->user), "uid %u", m->uid);
	clean(f->account, sizeof(f->account), m->account, sizeof(m->account),
	      32);
	clean(f->state, sizeof(f->state), m->state, sizeof(m->state), 24);
	clean(f->nodes, sizeof(f->nodes), m->nodes, sizeof(m->nodes), 60);
	clean(f->node, sizeof(f->node), m->node, sizeof(m->node), 32);
	if (f->nodes[0] == '\0')
		memcpy(f->nodes, f->node, sizeof(f->node));
	f->nnodes = m->nnodes;

	f->exit[0] = '\0';
	if (m->exit_code > 0 && m->exit_signal > 0)
		snprintf(f->exit, sizeof(f->exit), "exit %d, signal %d",
			 m->exit_code, m->exit_signal);
	else if (m->exit_code > 0)
		snprintf(f->exit, sizeof(f->exit), "exit %d", m->exit_code);
	else if (m->exit_signal > 0)
		snprintf(f->exit, sizeof(f->exit), "signal %d", m->exit_signal);

	f->full_run = f->state[0] == '\0' ||
		      ceems_summary_figures_state_is(f, "COMPLETED") ||
		      ceems_summary_figures_state_is(f, "TIMEOUT") ||
		      ceems_summary_figures_state_is(f, "RUNNING");
}

static void
figures_time(const struct ceems_job_meta *m,
	     const struct ceems_agent_job_report *r, struct figures *f)
{
	if (m->start_time > 0 && m->end_time >= m->start_time) {
		f->have_elapsed = true;
		f->elapsed_s = (double)(m->end_time - m->start_time);
	} else if (r != NULL && ceems_summary_units_usable(r->elapsed_s)) {
		f->have_elapsed = true;
		f->elapsed_s = r->elapsed_s;
	}
	/* Slurm's NO_VAL and INFINITE are kept as words, not limits. */
	if (m->time_limit_min > 0 && m->time_limit_min < CEEMS_TIME_LIMIT_PARTITION) {
		f->have_limit = true;
		f->limit_s = 60.0 * m->time_limit_min;
	}
	/* The agent adds CPU time only over the ticks it saw: the time it
	 * was down (gap_s) is left out of both sides of the ratio. */
	if (r != NULL && ceems_summary_units_usable(r->elapsed_s) &&
	    ceems_summary_units_usable(r->gap_s) && r->elapsed_s > r->gap_s) {
		f->have_observed = true;
		f->observed_s = r->elapsed_s - r->gap_s;
	}
}

static void
figures_usage(const struct ceems_job_meta *m,
	      const struct ceems_agent_job_report *r, struct figures *f)
{
	const struct ceems_cgroup_stats *u = r != NULL ? &r->usage : NULL;

	if (r != NULL && r->alloc_cores > 0) {
		f->have_held = true;
		f->held = r->alloc_cores;
	} else if (m->alloc_cpus > 0 && m->nnodes <= 1) {
		f->have_held = true;
		f->held = m->alloc_cpus;
	}
	/* No node has a million cores: more is garbage, not a figure.  A job
	 * shorter than a tick has its CPU time all the same: its cgroup was
	 * read when its step ended. */
	if (u != NULL && (u->present & CEEMS_CGF_CPU_USAGE) &&
	    ceems_summary_units_usable(r->cpu_s) && f->have_observed && f->observed_s > 0 &&
	    r->cpu_s / f->observed_s < MAX_CORES) {
		f->have_cpu = true;
		f->used_cores = r->cpu_s / f->observed_s;
	}
	if (r != NULL && r->have_tail && r->tail_s > 0 &&
	    ceems_summary_units_usable(r->tail_cpu_s) &&
	    r->tail_cpu_s / r->tail_s < MAX_CORES) {
		f->have_tail = true;
		f->tail_s = r->tail_s;
		f->tail_cores = r->tail_cpu_s / r->tail_s;
	}

	if (r != NULL && r->alloc_mem_bytes > 0 &&
	    r->alloc_mem_bytes < MAX_BYTES) {
		f->have_req = true;
		f->req = r->alloc_mem_bytes;
	} else if (m->req_mem_bytes > 0 && m->req_mem_bytes < MAX_BYTES &&
		   m->nnodes <= 1) {
		f->have_req = true;
		f->req = m->req_mem_bytes;
	}
	if (u != NULL && (u->present & CEEMS_CGF_MEM_PEAK) &&
	    u->mem_peak_bytes < MAX_BYTES) {
		f->have_peak = true;
		f->peak = u->mem_peak_bytes;
		f->peak_sampled = (u->flags & CEEMS_CGS_PEAK_SAMPLED) != 0;
	}
	if (u != NULL && (u->present & CEEMS_CGF_OOM_KILLS)) {
		f->have_oom_kills = true;
		f->oom_kills = u->oom_kills;
	}
	f->oom = (f->have_oom_kills && f->oom_kills > 0) ||
		 ceems_summary_figures_state_is(f, "OUT_OF_MEMORY");
	f->hit_limit = u != NULL && (u->present & CEEMS_CGF_MEM_FAILS) &&
		       u->mem_fail_count > 0;
}

static void
figures_energy(const struct ceems_agent_job_report *r, struct figures *f)
{
	const struct ceems_job_ledger *l;
	double lifetime, err_j;
	int d;

	if (r == NULL)
		return;
	l = &r->ledger;
	f->cov_min = 1;
	f->cov_max = 0;
	f->have_err = r->err.known;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double c;

		/* A domain that covered none of the job's life measured
		 * nothing for it: not 0 J. */
		if (!l->measured[d] || !ceems_summary_units_usable(l->joules[d]) ||
		    !ceems_summary_units_usable(l->static_j[d]) || !(l->covered_s[d] > 0))
			continue;
		f->measured[d] = true;
		f->joules[d] = l->joules[d];
		f->static_j[d] = l->static_j[d];
		if (l->idle_unlearned[d])
			f->idle_unlearned = true;
		f->any_energy = true;
		f->total_j += l->joules[d];
		if (ceems_energy_err_report_domain(&r->err, d, &err_j))
			f->err_j += err_j;
		else
			f->have_err = false;
		if (ceems_job_figures_ledger_coverage(l, (enum ceems_energy_domain)d,
					      &c) && isfinite(c)) {
			if (c < f->cov_min)
				f->cov_min = c;
			if (c > f->cov_max)
				f->cov_max = c;
		}
	}
	if (!f->any_energy)
		return;
	f->partial = f->cov_min < COVERAGE_FULL;

	/* Emissions mean something only over measured energy. */
	if (l->have_emissions && ceems_summary_units_usable(l->emissions_g) &&
	    ceems_job_figures_emission_factor_valid(&l->factor)) {
		f->have_carbon = true;
		f->grams = l->emissions_g;
		f->factor = l->factor;
		clean(f->zone, sizeof(f->zone), l->factor.zone,
		      sizeof(l->factor.zone), 5);
		f->factor_changed = l->factor_changed;
		if (l->factor_timed && l->factor_fallback > 0 &&
		    l->factor_fallback <= 1) {
			/* Up, so that a trace reads 1%, but not past what
			 * the float holds: 0.2 stored is 0.2000000030. */
			f->factor_fallback_pct = (int)ceil(
			    (double)l->factor_fallback * 100 - 1e-3);
			if (f->factor_fallback_pct < 1)
				f->factor_fallback_pct = 1;
		}
		lifetime = l->lifetime_s;
		if (ceems_summary_units_usable(lifetime) && lifetime > 0 &&
		    ceems_summary_units_usable(l->emissions_covered_s)) {
			f->carbon_cov = l->emissions_covered_s / lifetime;
			if (f->carbon_cov > 1)
				f->carbon_cov = 1;
			f->carbon_partial = f->carbon_cov < COVERAGE_FULL &&
					    f->carbon_cov < f->cov_min - 0.005;
		}
	}
}

bool
ceems_summary_figures_gpu_util(const struct ceems_agent_gpu_report *g, double *pct)
{
	if (!g->have_util || !isfinite(g->util_pct) || g->util_pct < 0 ||
	    g->util_pct > 100)
		return false;
	*pct = g->util_pct;
	return true;
}

/* A device's weight in the job's means: its share of the device (a MIG
 * slice counts for its slice), 1 when the share is garbage. */
static double
gpu_weight(const struct ceems_agent_gpu_report *g)
{
	return isfinite(g->share) && g->share > 0 && g->share <= 1 ?
	       g->share : 1;
}

/* "GPU 3b:00.0" (the bus id without its PCI domain), "GPU af:00.0
 * MIG 3", or the UUID's start when the bus id is not known; only
 * characters of such names, so that a device's name cannot break the
 * layout. */
static void
gpu_name(char *buf, size_t size, const struct ceems_agent_gpu_report *g)
{
	const char *id = g->bus_id[0] != '\0' ? g->bus_id : g->uuid;
	size_t max = g->bus_id[0] != '\0' ? sizeof(g->bus_id) : sizeof(g->uuid);
	char name[16];
	size_t n = 0;

	if (g->bus_id[0] != '\0' && strncmp(id, "0000:", 5) == 0)
		id += 5;
	for (size_t i = 0; i < max && id[i] != '\0' && n < 12; i++) {
		char c = id[i];

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		    (c >= 'A' && c <= 'Z') || c == ':' || c == '.' || c == '-')
			name[n++] = c;
	}
	name[n] = '\0';
	snprintf(buf, size, "GPU %s", n > 0 ? name : "?");
	if (g->instance >= 0 && g->instance < 1000)
		ceems_summary_units_appendf(buf, size, " MIG %d", g->instance);
}

static void
figures_gpu_idle(const struct ceems_agent_gpu_report *g, struct figures *f)
{
	char name[40];

	/* Name a few devices; a node has at most 16. */
	if (f->gpu_nidle < 3) {
		gpu_name(name, sizeof(name), g);
		ceems_summary_units_appendf(f->gpu_idle_list, sizeof(f->gpu_idle_list),
			"%s%s", f->gpu_nidle ? ", " : "", name);
	} else if (f->gpu_nidle == 3) {
		ceems_summary_units_appendf(f->gpu_idle_list, sizeof(f->gpu_idle_list),
			", ...");
	}
	f->gpu_nidle++;
	if (g->have_energy && ceems_summary_units_usable(g->energy_j))
		f->gpu_idle_j += g->energy_j;
	else
		f->have_gpu_idle_j = false;
}

/* The GPU figures from the report's devices: means weighted by each
 * device's share (all held the whole job), sums of memory and energy
 * only when every device has the figure. */
static void
figures_gpu(const struct ceems_agent_job_report *r, struct figures *f)
{
	double busy_w = 0, busy = 0, sm_w = 0, sm = 0;
	bool all_total = true;

	f->ngpus = r->ngpus;
	f->gpus = r->gpus;
	f->gpus_held = r->ngpus;
	f->have_gpu_idle_j = true;
	f->have_gpu_mem = f->have_gpu_j = true;
	for (unsigned int i = 0; i < r->ngpus; i++) {
		const struct ceems_agent_gpu_report *g = &r->gpus[i];
		double w = gpu_weight(g), pct;

		if (g->instance >= 0)
			f->gpu_nmig++;
		if (ceems_summary_figures_gpu_util(g, &pct)) {
			busy += w * pct;
			busy_w += w;
			f->gpu_nbusy++;
			if (pct < GPU_IDLE_PCT)
				figures_gpu_idle(g, f);
		}
		if (g->have_sm_active && isfinite(g->sm_active_pct) &&
		    g->sm_active_pct >= 0 && g->sm_active_pct <= 100) {
			sm += w * g->sm_active_pct;
			sm_w += w;
			f->gpu_nsm++;
		}
		if (g->have_mem_peak && g->mem_peak_bytes <= MAX_BYTES)
			f->gpu_mem_peak += g->mem_peak_bytes;
		else
			f->have_gpu_mem = false;
		if (g->mem_total_bytes > 0 && g->mem_total_bytes <= MAX_BYTES)
			f->gpu_mem_total += g->mem_total_bytes;
		else
			all_total = false;
		if (g->have_energy && ceems_summary_units_usable(g->energy_j))
			f->gpu_j += g->energy_j;
		else
			f->have_gpu_j = false;
		if (g->power_integrated && g->have_energy)
			f->gpu_power_integrated = true;
	}
	if (f->gpu_nbusy > 0)
		f->gpu_busy_pct = busy / busy_w;
	f->have_gpu_sm = sm_w > 0;
	if (f->have_gpu_sm)
		f->gpu_sm_pct = sm / sm_w;
	if (!all_total)
		f->gpu_mem_total = 0;
}

void
ceems_summary_figures_compute(const struct ceems_job_meta *m,
			const struct ceems_agent_job_report *r,
			struct figures *f)
{
	memset(f, 0, sizeof(*f));
	f->have_report = r != NULL;
	figures_identity(m, f);
	figures_time(m, r, f);
	figures_usage(m, r, f);
	figures_energy(r, f);
	if (r != NULL && r->ngpus > 0 && r->ngpus <= CEEMS_LEDGER_MAX_GPUS)
		figures_gpu(r, f);
	else
		f->gpus_held = m->alloc_gpus;
	if (r != NULL && r->perf.sw_status == CEEMS_PERF_MEASURED &&
	    (r->perf.present & (1u << CEEMS_PERF_PAGE_FAULTS)) &&
	    (r->perf.present & (1u << CEEMS_PERF_TASK_CLOCK))) {
		f->have_faults = true;
		f->page_faults = r->perf.value[CEEMS_PERF_PAGE_FAULTS];
		f->task_clock_s = r->perf.value[CEEMS_PERF_TASK_CLOCK] / 1e9;
	}
}

void
ceems_summary_figures_node(const struct figures *f,
			   const struct ceems_summary_node *node,
			   struct figures *out)
{
	struct ceems_job_meta m = *f->meta;

	/* One node's figures: its own allocation, not the job's. */
	m.nnodes = 1;
	m.alloc_cpus = 0;
	m.req_mem_bytes = 0;
	ceems_summary_figures_compute(&m, node->report, out);
}

void
ceems_summary_figures_clean(char *dst, size_t size, const char *src,
			    size_t keep)
{
	if (src == NULL)
		src = "";
	clean(dst, size, src, strlen(src) + 1, keep);
}
