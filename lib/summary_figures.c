/* summary_figures.c - the figures of the end-of-job summary, computed
 * once from the job's metadata and the agent's report into struct
 * figures, where each figure carries whether it is known (ARCHITECTURE
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

#include "emissions.h"

#include "summary_internal.h"

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
summary_state_is(const struct figures *f, const char *state)
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
		      summary_state_is(f, "COMPLETED") ||
		      summary_state_is(f, "TIMEOUT") ||
		      summary_state_is(f, "RUNNING");
}

static void
figures_time(const struct ceems_job_meta *m,
	     const struct ceems_agent_job_report *r, struct figures *f)
{
	if (m->start_time > 0 && m->end_time >= m->start_time) {
		f->have_elapsed = true;
		f->elapsed_s = (double)(m->end_time - m->start_time);
	} else if (r != NULL && summary_usable(r->elapsed_s)) {
		f->have_elapsed = true;
		f->elapsed_s = r->elapsed_s;
	}
	/* Slurm's NO_VAL and INFINITE are the two values below it. */
	if (m->time_limit_min > 0 && m->time_limit_min < CEEMS_UNKNOWN_U32 - 1) {
		f->have_limit = true;
		f->limit_s = 60.0 * m->time_limit_min;
	}
	/* The agent adds CPU time only over the ticks it saw: the time it
	 * was down (gap_s) is left out of both sides of the ratio. */
	if (r != NULL && summary_usable(r->elapsed_s) &&
	    summary_usable(r->gap_s) && r->elapsed_s > r->gap_s) {
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
	    summary_usable(r->cpu_s) && f->have_observed && f->observed_s > 0 &&
	    r->cpu_s / f->observed_s < MAX_CORES) {
		f->have_cpu = true;
		f->used_cores = r->cpu_s / f->observed_s;
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
		 summary_state_is(f, "OUT_OF_MEMORY");
	f->hit_limit = u != NULL && (u->present & CEEMS_CGF_MEM_FAILS) &&
		       u->mem_fail_count > 0;
}

static void
figures_energy(const struct ceems_agent_job_report *r, struct figures *f)
{
	const struct ceems_job_ledger *l;
	double lifetime;
	int d;

	if (r == NULL)
		return;
	l = &r->ledger;
	f->cov_min = 1;
	f->cov_max = 0;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double c;

		/* A domain that covered none of the job's life measured
		 * nothing for it: not 0 J. */
		if (!l->measured[d] || !summary_usable(l->joules[d]) ||
		    !summary_usable(l->static_j[d]) || !(l->covered_s[d] > 0))
			continue;
		f->measured[d] = true;
		f->joules[d] = l->joules[d];
		f->static_j[d] = l->static_j[d];
		f->any_energy = true;
		f->total_j += l->joules[d];
		if (ceems_job_ledger_coverage(l, (enum ceems_energy_domain)d,
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
	if (l->have_emissions && summary_usable(l->emissions_g) &&
	    ceems_emission_factor_valid(&l->factor)) {
		f->have_carbon = true;
		f->grams = l->emissions_g;
		f->factor = l->factor;
		clean(f->zone, sizeof(f->zone), l->factor.zone,
		      sizeof(l->factor.zone), 5);
		f->factor_changed = l->factor_changed;
		lifetime = l->lifetime_s;
		if (summary_usable(lifetime) && lifetime > 0 &&
		    summary_usable(l->emissions_covered_s)) {
			f->carbon_cov = l->emissions_covered_s / lifetime;
			if (f->carbon_cov > 1)
				f->carbon_cov = 1;
			f->carbon_partial = f->carbon_cov < COVERAGE_FULL &&
					    f->carbon_cov < f->cov_min - 0.005;
		}
	}
}

void
summary_figures_compute(const struct ceems_job_meta *m,
			const struct ceems_agent_job_report *r,
			const struct ceems_summary_gpu *gpu, struct figures *f)
{
	memset(f, 0, sizeof(*f));
	f->have_report = r != NULL;
	figures_identity(m, f);
	figures_time(m, r, f);
	figures_usage(m, r, f);
	figures_energy(r, f);
	if (gpu != NULL && gpu->ndevices > 0 &&
	    gpu->ndevices <= CEEMS_LEDGER_MAX_GPUS) {
		f->gpu = gpu;
		f->gpus_held = gpu->ndevices;
	} else {
		f->gpus_held = m->alloc_gpus;
	}
}
