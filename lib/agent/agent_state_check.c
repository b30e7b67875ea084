/* agent_state_check.c - what the node agent reads back from its state
 * file is checked like any outside input: a torn write, a damaged disk
 * or an older agent's bytes must not become a job's figures. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "agent/agent_state_checksum.h"
#include "agent/agent_state_layout.h"

/* A bool read back from disk holds 0 or 1, or it is not a bool: look at
 * its byte, since loading any other value as a bool is undefined. */
static bool
flag_sane(const bool *flag)
{
	unsigned char byte;

	memcpy(&byte, flag, 1);
	return byte <= 1;
}

static bool
step_sane(const struct ceems_agent_step_report *st)
{
	if (memchr(st->id, '\0', sizeof(st->id)) == NULL ||
	    !isfinite(st->cpu_s) || st->cpu_s < 0 ||
	    !isfinite(st->elapsed_s) || st->elapsed_s < 0)
		return false;
	if (!flag_sane(&st->ended) || !flag_sane(&st->have_cpu) ||
	    !flag_sane(&st->have_mem_peak) || !flag_sane(&st->have_oom_kills) ||
	    !flag_sane(&st->have_tasks) || (st->have_tasks && st->tasks == 0))
		return false;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (!isfinite(st->joules[d]) || st->joules[d] < 0 ||
		    !flag_sane(&st->have_joules[d]))
			return false;
	return true;
}

/* The parts that figures and final reports share. */
static bool
parts_sane(uint32_t ngaps, const struct ceems_agent_gap *gaps,
	   uint32_t nsteps, const struct ceems_agent_step_report *steps,
	   double cpu_s, double gap_s, const struct ceems_job_ledger *l)
{
	if (nsteps > CEEMS_AGENT_MAX_STEPS || ngaps > CEEMS_AGENT_MAX_GAPS)
		return false;
	for (uint32_t i = 0; i < ngaps; i++)
		if (!isfinite(gaps[i].start) || !isfinite(gaps[i].end) ||
		    gaps[i].start > gaps[i].end)
			return false;
	for (uint32_t i = 0; i < nsteps; i++)
		if (!step_sane(&steps[i]))
			return false;
	if (!isfinite(cpu_s) || cpu_s < 0 || !isfinite(gap_s) ||
	    gap_s < 0 || !isfinite(l->lifetime_s) || l->lifetime_s < 0 ||
	    !isfinite(l->emissions_g) || l->emissions_g < 0)
		return false;
	/* idle_unlearned is what was padding in the files of earlier
	 * agents, written from zeroed structures. */
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (!isfinite(l->joules[d]) || l->joules[d] < 0 ||
		    !isfinite(l->covered_s[d]) || l->covered_s[d] < 0 ||
		    !flag_sane(&l->idle_unlearned[d]))
			return false;
	/* The intensity series' figures are what was padding too. */
	if (!flag_sane(&l->factor_timed) || !isfinite(l->factor_fallback) ||
	    l->factor_fallback < 0 || l->factor_fallback > 1)
		return false;
	return true;
}

/* Recovered intervals, like gaps. */
static bool
recovered_sane(double recovered_s, uint32_t n,
	       const struct ceems_agent_gap *r)
{
	if (!isfinite(recovered_s) || recovered_s < 0 ||
	    n > CEEMS_AGENT_MAX_GAPS)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!isfinite(r[i].start) || !isfinite(r[i].end) ||
		    r[i].start > r[i].end)
			return false;
	return true;
}

/* eBPF figures: flags that are flags, a terminated reason. */
static bool
io_sane(const struct ceems_agent_io_report *io)
{
	return flag_sane(&io->have_io) && flag_sane(&io->have_net) &&
	       flag_sane(&io->have_tcp_retrans) &&
	       memchr(io->absent_why, '\0', sizeof(io->absent_why)) != NULL &&
	       isfinite(io->unmeasured_s) && io->unmeasured_s >= 0;
}

/* An energy error bound: flags and parts a bound can be. */
static bool
err_sane(const struct ceems_energy_err_report *e)
{
	if (!flag_sane(&e->known))
		return false;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!flag_sane(&e->have[d]))
			return false;
		for (int k = 0; k < CEEMS_ERR_PARTS; k++)
			if (!isfinite(e->part_j[d][k]) || e->part_j[d][k] < 0)
				return false;
	}
	return true;
}

/* perf figures: known statuses, counts and fractions in range. */
static bool
perf_sane(const struct ceems_perf_report *p)
{
	if (p->sw_status >= CEEMS_PERF_NSTATUS ||
	    p->hw_status >= CEEMS_PERF_NSTATUS ||
	    (p->present >> CEEMS_PERF_NEVENTS) != 0 ||
	    !isfinite(p->running_fraction) || p->running_fraction < 0 ||
	    p->running_fraction > 1 || !isfinite(p->unmeasured_s) ||
	    p->unmeasured_s < 0)
		return false;
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++)
		if (!isfinite(p->value[e]) || p->value[e] < 0)
			return false;
	return true;
}

bool
ceems_agent_state_check_figures_sane(const struct state_figures *f)
{
	return f->have_cpu <= 1 && ceems_agent_gpu_job_sane(&f->gpu) &&
	       io_sane(&f->io) && perf_sane(&f->perf) &&
	       recovered_sane(f->recovered_s, f->nrecovered, f->recovered) &&
	       parts_sane(f->ngaps, f->gaps, f->nsteps, f->steps, f->cpu_s,
			  f->gap_s, &f->ledger);
}

const struct state_figures *
ceems_agent_state_check_best_copy(const struct slot_copy copy[2], uint64_t *seq)
{
	const struct slot_copy *best = NULL;

	for (int c = 0; c < 2; c++) {
		const struct slot_copy *k = &copy[c];
		size_t want;

		if (k->head.seq == 0 ||
		    (best != NULL && k->head.seq <= best->head.seq) ||
		    k->fig.nsteps > CEEMS_AGENT_MAX_STEPS)
			continue;
		want = offsetof(struct state_figures, steps) +
		       k->fig.nsteps * sizeof(k->fig.steps[0]);
		if (k->head.len != want ||
		    k->head.check != ceems_agent_state_checksum_lanes(&k->fig, want) ||
		    !ceems_agent_state_check_figures_sane(&k->fig))
			continue;
		best = k;
	}
	if (best == NULL)
		return NULL;
	*seq = best->head.seq;
	return &best->fig;
}

/* A final report's GPUs: terminated strings, numbers in range. */
static bool
gpu_reports_sane(const struct ceems_agent_job_report *r)
{
	if (r->ngpus > CEEMS_LEDGER_MAX_GPUS)
		return false;
	for (uint32_t i = 0; i < r->ngpus; i++) {
		const struct ceems_agent_gpu_report *g = &r->gpus[i];
		const double pct[] = {
			g->util_pct, g->mem_util_pct, g->sm_active_pct,
			g->sm_occupancy_pct, g->tensor_active_pct,
			g->fp_active_pct,
		};

		if (memchr(g->uuid, '\0', sizeof(g->uuid)) == NULL ||
		    memchr(g->bus_id, '\0', sizeof(g->bus_id)) == NULL ||
		    !isfinite(g->share) || g->share < 0 || g->share > 1 ||
		    !isfinite(g->energy_j) || g->energy_j < 0)
			return false;
		for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++)
			if (!isfinite(pct[k]) || pct[k] < 0)
				return false;
	}
	return true;
}

bool
ceems_agent_state_check_final_sane(const struct ceems_agent_job_spec *spec,
		 const struct slot_final *final)
{
	const struct ceems_agent_job_report *r = &final->report;

	return spec->jobid != 0 && r->jobid == spec->jobid &&
	       gpu_reports_sane(r) && io_sane(&r->io) && perf_sane(&r->perf) &&
	       err_sane(&r->err) &&
	       recovered_sane(r->recovered_s, r->nrecovered, r->recovered) &&
	       flag_sane(&r->cgroup_gone) && flag_sane(&r->have_tail) &&
	       (!r->have_tail || (r->tail_s >= CEEMS_AGENT_TAIL_S &&
				  r->tail_s <= CEEMS_AGENT_TAIL_MAX_S)) &&
	       isfinite(r->tail_cpu_s) && r->tail_cpu_s >= 0 &&
	       isfinite(r->elapsed_s) &&
	       r->elapsed_s >= 0 && final->start_time > 0 &&
	       final->end_time >= final->start_time &&
	       parts_sane(r->ngaps, r->gaps, r->nsteps, r->steps, r->cpu_s,
			  r->gap_s, &r->ledger);
}

/* Every string of metadata read back from disk ends inside its buffer. */
void
ceems_agent_state_check_terminate_meta(struct ceems_job_meta *m)
{
	m->cluster[sizeof(m->cluster) - 1] = '\0';
	m->node[sizeof(m->node) - 1] = '\0';
	m->user[sizeof(m->user) - 1] = '\0';
	m->account[sizeof(m->account) - 1] = '\0';
	m->partition[sizeof(m->partition) - 1] = '\0';
	m->qos[sizeof(m->qos) - 1] = '\0';
	m->name[sizeof(m->name) - 1] = '\0';
	m->state[sizeof(m->state) - 1] = '\0';
	m->nodes[sizeof(m->nodes) - 1] = '\0';
}

bool
ceems_agent_state_check_node_sane(const struct state_node *n)
{
	if (n->tick_ns == 0 || n->ncounters > STATE_MAX_COUNTERS ||
	    n->have_busy > STATE_NODE_JOB_LEFT ||
	    n->check != ceems_agent_state_checksum_lanes((const char *)n + sizeof(n->check),
				       sizeof(*n) - sizeof(n->check)))
		return false;
	for (uint32_t i = 0; i < n->ncounters; i++) {
		const struct state_counter *c = &n->counters[i];

		if (memchr(c->name, '\0', sizeof(c->name)) == NULL ||
		    c->domain >= CEEMS_DOMAIN_COUNT || c->have > 1 ||
		    (c->range != 0 && c->raw > c->range))
			return false;
	}
	return true;
}
