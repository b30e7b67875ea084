/* measure_merge.c - one report for a whole multi-node job from its
 * nodes' reports (measure.h), by the rules the database's merge of the
 * nodes' records follows (doc/storage.md "jobs and job_nodes"): figures
 * summed over the nodes, memory the largest node's, coverage as covered
 * time over the summed lifetime, and a figure that some node lacks is
 * absent, not a partial sum (unknown is not zero).  The end-of-job
 * summary of a multi-node job prints this report beside each node's. */
#include "config.h"

#include <string.h>

#include "model/measure.h"

static void
merge_usage(struct ceems_cgroup_stats *w, const struct ceems_cgroup_stats *p)
{
	w->present &= p->present;
	w->failed |= p->failed;
	w->flags |= p->flags;
	w->cpu_user_ns += p->cpu_user_ns;
	w->cpu_system_ns += p->cpu_system_ns;
	w->cpu_usage_ns += p->cpu_usage_ns;
	w->mem_current_bytes += p->mem_current_bytes;
	if (p->mem_peak_bytes > w->mem_peak_bytes)
		w->mem_peak_bytes = p->mem_peak_bytes;
	if (p->mem_rss_bytes > w->mem_rss_bytes)
		w->mem_rss_bytes = p->mem_rss_bytes;
	if (p->mem_cache_bytes > w->mem_cache_bytes)
		w->mem_cache_bytes = p->mem_cache_bytes;
	if (p->mem_limit_bytes > w->mem_limit_bytes)
		w->mem_limit_bytes = p->mem_limit_bytes;
	w->oom_kills += p->oom_kills;
	w->mem_fail_count += p->mem_fail_count;
	w->pids_current += p->pids_current;
	w->io_read_bytes += p->io_read_bytes;
	w->io_write_bytes += p->io_write_bytes;
	w->io_read_ops += p->io_read_ops;
	w->io_write_ops += p->io_write_ops;
	w->ncpus_allocated += p->ncpus_allocated;
}

static void
merge_ledger(struct ceems_job_ledger *w, const struct ceems_job_ledger *p)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		/* A domain one node measures and another does not (a GPU
		 * node beside a CPU node) is summed over those that do: its
		 * coverage says how much of the job's life it saw. */
		w->joules[d] += p->joules[d];
		w->static_j[d] += p->static_j[d];
		w->covered_s[d] += p->covered_s[d];
		w->measured[d] = w->measured[d] || p->measured[d];
		w->idle_unlearned[d] = w->idle_unlearned[d] || p->idle_unlearned[d];
	}
	w->lifetime_s += p->lifetime_s;
	if (p->have_emissions) {
		if (!w->have_emissions)
			w->factor = p->factor;
		else if (strcmp(w->factor.source, p->factor.source) != 0 ||
			 w->factor.g_per_kwh != p->factor.g_per_kwh ||
			 w->factor.pue != p->factor.pue)
			w->factor_changed = true;
		w->have_emissions = true;
		w->factor_timed = w->factor_timed || p->factor_timed;
		if (p->factor_fallback > w->factor_fallback)
			w->factor_fallback = p->factor_fallback;
	}
	w->factor_changed = w->factor_changed || p->factor_changed;
	w->emissions_g += p->emissions_g;
	w->emissions_covered_s += p->emissions_covered_s;
}

/* The error bounds of two nodes' figures (their ledgers WL and PL, not
 * merged yet) add up; a domain one node measures without a bound has
 * none for the whole job. */
static void
merge_err(struct ceems_energy_err_report *w, const struct ceems_job_ledger *wl,
	  const struct ceems_energy_err_report *p,
	  const struct ceems_job_ledger *pl)
{
	w->known = w->known && p->known;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		w->have[d] = (w->have[d] || !wl->measured[d]) &&
		    (p->have[d] || !pl->measured[d]) &&
		    (wl->measured[d] || pl->measured[d]);
		for (int k = 0; k < CEEMS_ERR_PARTS; k++)
			w->part_j[d][k] += p->part_j[d][k];
	}
}

static void
merge_io(struct ceems_agent_io_report *w, const struct ceems_agent_io_report *p)
{
	w->have_io = w->have_io && p->have_io;
	/* A node that counted per tick: the sum has its meaning (every
	 * descriptor's bytes, no errors). */
	if (p->counting == CEEMS_IO_PER_TICK)
		w->counting = CEEMS_IO_PER_TICK;
	w->read_bytes += p->read_bytes;
	w->read_ops += p->read_ops;
	w->read_errors += p->read_errors;
	w->write_bytes += p->write_bytes;
	w->write_ops += p->write_ops;
	w->write_errors += p->write_errors;
	w->have_net = w->have_net && p->have_net;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++)
			for (int k = 0; k < 2; k++) {
				w->net_bytes[i][j][k] += p->net_bytes[i][j][k];
				w->net_msgs[i][j][k] += p->net_msgs[i][j][k];
			}
	w->dropped += p->dropped;
	if (w->absent_why[0] == '\0' && p->absent_why[0] != '\0')
		memcpy(w->absent_why, p->absent_why, sizeof(w->absent_why));
	w->unmeasured_s += p->unmeasured_s;
}

static void
merge_perf(struct ceems_perf_report *w, const struct ceems_perf_report *p)
{
	/* A status that differs: the worse (the higher) says it. */
	if (p->sw_status != CEEMS_PERF_MEASURED)
		w->sw_status = p->sw_status > w->sw_status ? p->sw_status : w->sw_status;
	if (p->hw_status != CEEMS_PERF_MEASURED)
		w->hw_status = p->hw_status > w->hw_status ? p->hw_status : w->hw_status;
	w->present &= p->present;
	if (p->running_fraction < w->running_fraction)
		w->running_fraction = p->running_fraction;
	for (int e = 0; e < CEEMS_PERF_NEVENTS; e++)
		w->value[e] += p->value[e];
	w->unmeasured_s += p->unmeasured_s;
}

void
ceems_measure_merge_report(struct ceems_agent_job_report *whole,
			   const struct ceems_agent_job_report *part,
			   bool first)
{
	double observed;

	if (first) {
		*whole = *part;
		/* Steps, gaps and the series are each node's own: the
		 * whole job's report has none of them. */
		whole->nsteps = 0;
		whole->ngaps = 0;
		whole->nrecovered = 0;
		whole->series = NULL;
		return;
	}
	/* The CPU time each node saw, over the core-seconds it watched: the
	 * whole job's observed time is what makes cpu_s / (observed x
	 * cores) that ratio, summed. */
	observed = (whole->elapsed_s - whole->gap_s) * whole->alloc_cores +
		   (part->elapsed_s - part->gap_s) * part->alloc_cores;
	whole->alloc_cores += part->alloc_cores;
	if (part->elapsed_s > whole->elapsed_s)
		whole->elapsed_s = part->elapsed_s;
	whole->gap_s = whole->alloc_cores > 0 ?
		       whole->elapsed_s - observed / whole->alloc_cores : 0;
	if (whole->gap_s < 0)
		whole->gap_s = 0;
	if (part->alloc_mem_bytes > whole->alloc_mem_bytes)
		whole->alloc_mem_bytes = part->alloc_mem_bytes;
	whole->cpu_s += part->cpu_s;
	whole->recovered_s += part->recovered_s;
	whole->cgroup_gone = whole->cgroup_gone && part->cgroup_gone;
	whole->have_tail = whole->have_tail && part->have_tail;
	if (part->tail_s < whole->tail_s)
		whole->tail_s = part->tail_s;
	whole->tail_cpu_s += part->tail_cpu_s;
	merge_usage(&whole->usage, &part->usage);
	merge_err(&whole->err, &whole->ledger, &part->err, &part->ledger);
	merge_ledger(&whole->ledger, &part->ledger);
	for (uint32_t i = 0; i < part->ngpus &&
	     whole->ngpus < CEEMS_LEDGER_MAX_GPUS; i++)
		whole->gpus[whole->ngpus++] = part->gpus[i];
	merge_io(&whole->io, &part->io);
	merge_perf(&whole->perf, &part->perf);
}
