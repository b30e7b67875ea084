/* sacct_merge.c - a job's node records merged into ceems-sacct rows, the
 * way ceems.refresh_job merges them into ceems.jobs (002_upsert.sql), so
 * that the spool and the database show the same figures: metadata field
 * by field from the newest record that has it, figures summed over the
 * nodes (memory: the largest node), coverage as covered time over the
 * nodes' summed lifetime.  Also the query's filters and the small
 * parsers of -s and -j.
 *
 * Only the spool's records go through this merge (the listing without a
 * database, and the spool's records the database does not hold yet):
 * with a database, ceems-sacct reads the rows ceems.refresh_job merged
 * into ceems.jobs and merges nothing itself.  The two merges must agree;
 * tests/integration/sacct.bats lists every golden case from both. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/measure.h"
#include "sacct_query.h"

struct ceems_job_record *
sacct_merge_records_add(struct sacct_records *recs, struct sacct_series **series)
{
	struct ceems_job_record *v;
	struct sacct_series *s;
	size_t cap;

	if (recs->n == recs->cap) {
		cap = recs->cap != 0 ? recs->cap * 2 : 16;
		if ((v = realloc(recs->v, cap * sizeof(*v))) == NULL)
			return NULL;
		recs->v = v;
		if ((s = realloc(recs->series, cap * sizeof(*s))) == NULL)
			return NULL;
		recs->series = s;
		recs->cap = cap;
	}
	memset(&recs->series[recs->n], 0, sizeof(recs->series[0]));
	if (series != NULL)
		*series = &recs->series[recs->n];
	return &recs->v[recs->n++];
}

void
sacct_merge_records_free(struct sacct_records *recs)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		free(recs->series[i].rows);
	free(recs->v);
	free(recs->series);
	memset(recs, 0, sizeof(*recs));
}

static int
cmp_records(const struct ceems_job_record *a, const struct ceems_job_record *b)
{
	int c;

	if (a->meta.start_time != b->meta.start_time)
		return a->meta.start_time < b->meta.start_time ? -1 : 1;
	if ((c = strcmp(a->meta.cluster, b->meta.cluster)) != 0)
		return c;
	if (a->meta.jobid != b->meta.jobid)
		return a->meta.jobid < b->meta.jobid ? -1 : 1;
	if ((c = strcmp(a->meta.node, b->meta.node)) != 0)
		return c;
	if (a->written_at != b->written_at)
		return a->written_at < b->written_at ? -1 : 1;
	return 0;
}

/* Insertion sort of an index: the records and their series move
 * together, and a spool's listing is nearly sorted already. */
void
sacct_merge_records_sort(struct sacct_records *recs)
{
	struct ceems_job_record tmp;
	struct sacct_series ts;
	size_t i, j;

	for (i = 1; i < recs->n; i++) {
		if (cmp_records(&recs->v[i - 1], &recs->v[i]) <= 0)
			continue;
		tmp = recs->v[i];
		ts = recs->series[i];
		for (j = i; j > 0 && cmp_records(&recs->v[j - 1], &tmp) > 0; j--) {
			recs->v[j] = recs->v[j - 1];
			recs->series[j] = recs->series[j - 1];
		}
		recs->v[j] = tmp;
		recs->series[j] = ts;
	}
}

static bool
same_job(const struct ceems_job_record *a, const struct ceems_job_record *b)
{
	return a->meta.jobid == b->meta.jobid &&
		a->meta.start_time == b->meta.start_time &&
		strcmp(a->meta.cluster, b->meta.cluster) == 0;
}

static void
copy_str(char *dst, size_t size, const char *src)
{
	if (src[0] != '\0')
		snprintf(dst, size, "%s", src);
}

/* The newer record's known fields replace the older ones'.  -1 when
 * out of memory (for ROWS' text). */
/* A node's IO and network (eBPF) into the job's sums. */
static void
merge_io(struct sacct_row *row, const struct ceems_agent_io_report *io)
{
	double in = 0, out = 0;

	/* Counted per tick: every descriptor's bytes, not the files'
	 * that ReadBytes says (as the database's io_source does). */
	if (io->have_io && io->counting != CEEMS_IO_PER_TICK) {
		sacct_row_add_known(&row->io_read_bytes, (double)io->read_bytes);
		sacct_row_add_known(&row->io_write_bytes, (double)io->write_bytes);
		sacct_row_add_known(&row->io_nodes, 1);
	}
	if (!io->have_net)
		return;
	sacct_row_add_known(&row->net_nodes, 1);
	for (int p = 0; p < 2; p++)
		for (int f = 0; f < 2; f++) {
			in += (double)io->net_bytes[CEEMS_IO_IN][p][f];
			out += (double)io->net_bytes[CEEMS_IO_OUT][p][f];
		}
	sacct_row_add_known(&row->net_in_bytes, in);
	sacct_row_add_known(&row->net_out_bytes, out);
}

static int
merge_meta(struct sacct_rows *rows, struct sacct_row *row,
	   const struct ceems_job_meta *m)
{
	copy_str(row->cluster, sizeof(row->cluster), m->cluster);
	row->jobid = m->jobid;
	if (m->array_job_id != CEEMS_UNKNOWN_U32) {
		row->array_job_id = m->array_job_id;
		row->array_task_id = m->array_task_id;
	}
	row->uid = m->uid;
	copy_str(row->user, sizeof(row->user), m->user);
	copy_str(row->account, sizeof(row->account), m->account);
	copy_str(row->partition, sizeof(row->partition), m->partition);
	copy_str(row->qos, sizeof(row->qos), m->qos);
	if (m->name[0] != '\0' &&
	    (row->name = sacct_row_text(rows, m->name, SACCT_NAME_MAX)) == NULL)
		return -1;
	copy_str(row->state, sizeof(row->state), m->state);
	if (m->nodes[0] != '\0' &&
	    (row->nodes = sacct_row_text(rows, m->nodes, SACCT_NODES_MAX)) == NULL)
		return -1;
	if (m->exit_code >= 0)
		row->exit_code = m->exit_code;
	if (m->exit_signal > 0)
		row->exit_signal = m->exit_signal;
	if (m->submit_time > 0)
		row->submit_time = m->submit_time;
	if (m->start_time > 0)
		row->start_time = m->start_time;
	if (m->end_time > 0)
		row->end_time = m->end_time;
	if (m->time_limit_min != CEEMS_UNKNOWN_U32)
		row->time_limit_min = m->time_limit_min;
	if (m->alloc_cpus > 0)
		row->alloc_cpus = m->alloc_cpus;
	if (m->req_mem_bytes > 0)
		row->req_mem_bytes = m->req_mem_bytes;
	if (m->alloc_gpus > 0)
		row->alloc_gpus = m->alloc_gpus;
	if (m->nnodes > 0)
		row->nnodes = m->nnodes;
	return 0;
}

static void
take_max(double *max, double x)
{
	if (isfinite(x) && (!isfinite(*max) || x > *max))
		*max = x;
}

static double *
domain_slot(struct sacct_row *row, int d)
{
	switch (d) {
	case CEEMS_DOMAIN_PACKAGE: return &row->package_j;
	case CEEMS_DOMAIN_DRAM: return &row->dram_j;
	case CEEMS_DOMAIN_GPU: return &row->gpu_j;
	default: return &row->node_j;
	}
}

static bool
cpu_known(const struct ceems_agent_job_report *rep)
{
	return (rep->usage.present & (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER |
				      CEEMS_CGF_CPU_SYSTEM)) != 0;
}

/* The GPU figures of the job's records FIRST..LAST-1, as
 * ceems.refresh_job_gpus makes them (migration 018): utilisation and SM
 * activity weighted by each GPU's share, the peaks and the memory
 * summed when every GPU's is known. */
static void
gpu_figures(const struct sacct_records *recs, size_t first, size_t last,
	    struct sacct_row *row)
{
	double util = 0, util_w = 0, sm = 0, sm_w = 0, total = 0, peak = 0;
	size_t ngpus = 0, ntotal = 0, npeak = 0;

	for (size_t i = first; i < last; i++) {
		const struct ceems_agent_job_report *rep = &recs->v[i].report;

		for (uint32_t k = 0; k < rep->ngpus && k < CEEMS_LEDGER_MAX_GPUS; k++) {
			const struct ceems_agent_gpu_report *g = &rep->gpus[k];

			ngpus++;
			if (g->have_util) {
				util += g->share * g->util_pct;
				util_w += g->share;
			}
			if (g->have_sm_active) {
				sm += g->share * g->sm_active_pct;
				sm_w += g->share;
			}
			if (g->have_mem_peak) {
				peak += (double)g->mem_peak_bytes;
				npeak++;
			}
			if (g->mem_total_bytes > 0) {
				total += (double)g->mem_total_bytes;
				ntotal++;
			}
		}
	}
	if (util_w > 0)
		row->gpu_util_pct = fmin(100, util / util_w);
	if (sm_w > 0)
		row->gpu_sm_pct = fmin(100, sm / sm_w);
	if (ngpus > 0 && ntotal == ngpus)
		row->gpu_mem_total_bytes = total;
	/* A sum over some GPUs would understate the peak: all or none. */
	if (ngpus > 0 && npeak == ngpus)
		sacct_row_add_known(&row->gpu_mem_peak_bytes, peak);
}

/* The job's row from its records FIRST..LAST-1 (one job), its strings
 * in ROWS' text.  -1 when out of memory. */
/* One node's count E into SUM: NaN once a node did not measure it (a
 * partial sum would pass for the whole), as ceems.job_perf. */
static void
add_perf_count(double *sum, const struct ceems_perf_report *p, unsigned e,
	       bool first)
{
	if ((p->present & (1u << e)) == 0)
		*sum = NAN;
	else if (first)
		*sum = p->value[e];
	else
		*sum += p->value[e];
}

static void
add_perf(struct sacct_row *row, const struct ceems_perf_report *p, bool first)
{
	add_perf_count(&row->perf_ctxsw, p, CEEMS_PERF_CONTEXT_SWITCHES, first);
	add_perf_count(&row->perf_page_faults, p, CEEMS_PERF_PAGE_FAULTS, first);
	add_perf_count(&row->perf_migrations, p, CEEMS_PERF_CPU_MIGRATIONS, first);
	add_perf_count(&row->perf_cycles, p, CEEMS_PERF_CYCLES, first);
	add_perf_count(&row->perf_instructions, p, CEEMS_PERF_INSTRUCTIONS, first);
}

/* The job's energy error bound as ceems.job_figures makes it (migration
 * 030): each node's, its domains' with energy added when each has one,
 * and the nodes' added when each node with energy has one. */
static void
err_figures(const struct sacct_records *recs, size_t first, size_t last,
	    struct sacct_row *row)
{
	double sum = 0, x;
	bool any = false;

	for (size_t i = first; i < last; i++) {
		const struct ceems_agent_job_report *r = &recs->v[i].report;

		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			if (!r->ledger.measured[d] || !(r->ledger.covered_s[d] > 0))
				continue;
			if (!ceems_energy_err_report_domain(&r->err, d, &x))
				return;		/* unknown, not smaller */
			sum += x;
			any = true;
		}
	}
	if (any)
		row->energy_err_j = sum;
}

/* The carbon-aware advice's saving as the database's listing makes it
 * (migration 033): the nodes' added when every node with emissions has
 * advice. */
static void
saving_figures(const struct sacct_records *recs, size_t first, size_t last,
	       struct sacct_row *row)
{
	double sum = 0;
	bool any = false;

	for (size_t i = first; i < last; i++) {
		const struct ceems_job_record *r = &recs->v[i];

		if (r->have_advice) {
			sum += r->advice.saving_g;
			any = true;
		} else if (r->report.ledger.have_emissions) {
			return;		/* unknown, not smaller */
		}
	}
	if (any)
		row->saving_g = sum;
}

/* The job's data-quality figures as ceems.job_figures makes them
 * (migration 024): the nodes' shares at the yearly carbon intensity
 * weighted by their energy (their plain mean where none has energy),
 * and each domain flagged when any node's was. */
static void
quality_figures(const struct sacct_records *recs, size_t first, size_t last,
		struct sacct_row *row)
{
	const struct ceems_job_ledger *l;
	double weighted = NAN, weight = NAN, shares = 0, total;
	size_t i, nshares = 0;
	bool have_total;
	int d, flags = -1;

	for (i = first; i < last; i++) {
		l = &recs->v[i].report.ledger;
		if (l->measured[CEEMS_DOMAIN_PACKAGE] || l->measured[CEEMS_DOMAIN_DRAM]) {
			if (flags < 0)
				flags = 0;
			if (l->measured[CEEMS_DOMAIN_PACKAGE] &&
			    l->idle_unlearned[CEEMS_DOMAIN_PACKAGE])
				flags |= SACCT_IDLE_UNLEARNED_PACKAGE;
			if (l->measured[CEEMS_DOMAIN_DRAM] &&
			    l->idle_unlearned[CEEMS_DOMAIN_DRAM])
				flags |= SACCT_IDLE_UNLEARNED_DRAM;
		}
		if (!l->have_emissions || !l->factor_timed)
			continue;
		shares += (double)l->factor_fallback;
		nshares++;
		have_total = false;
		total = 0;
		for (d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (l->measured[d] && l->covered_s[d] > 0) {
				total += l->joules[d];
				have_total = true;
			}
		if (have_total) {
			sacct_row_add_known(&weighted, (double)l->factor_fallback * total);
			sacct_row_add_known(&weight, total);
		}
	}
	if (flags >= 0)
		row->idle_unlearned = flags;
	if (nshares == 0)
		return;
	if (weight > 0)
		row->ci_fallback = weighted / weight;
	else
		row->ci_fallback = shares / (double)nshares;
	if (row->ci_fallback > 1)
		row->ci_fallback = 1;
}

/* The job's main counter of work (doc/marks.md): per name and unit, the
 * work and marks summed over its node records; the one with the most
 * marks (then the first name) is the row's, as ceems-sacct's database
 * listing picks from ceems.job_work.  Its energy per unit when the
 * job's energy is known. */
static void
work_figures(const struct sacct_records *recs, size_t first, size_t last,
	     struct sacct_row *row)
{
	struct ceems_marks sum;
	const struct ceems_marks_counter *best = NULL;

	memset(&sum, 0, sizeof(sum));
	for (size_t i = first; i < last; i++) {
		const struct ceems_marks *m = &recs->v[i].marks;

		for (uint32_t k = 0; k < m->n && k < CEEMS_MARKS_MAX; k++) {
			uint32_t j;

			for (j = 0; j < sum.n; j++)
				if (strcmp(sum.c[j].name, m->c[k].name) == 0 &&
				    strcmp(sum.c[j].unit, m->c[k].unit) == 0)
					break;
			if (j == sum.n) {
				if (sum.n == CEEMS_MARKS_MAX)
					continue;
				sum.c[sum.n++] = m->c[k];
				continue;
			}
			sum.c[j].work += m->c[k].work;
			sum.c[j].marks += m->c[k].marks;
		}
	}
	for (uint32_t j = 0; j < sum.n; j++)
		if (best == NULL || sum.c[j].marks > best->marks ||
		    (sum.c[j].marks == best->marks &&
		     strcmp(sum.c[j].name, best->name) < 0))
			best = &sum.c[j];
	if (best == NULL)
		return;
	row->work = best->work;
	copy_str(row->work_unit, sizeof(row->work_unit), best->unit);
	if (isfinite(row->total_j) && best->work > 0)
		row->energy_per_work = row->total_j / best->work;
}

static int
job_row(const struct sacct_records *recs, size_t first, size_t last,
	struct sacct_rows *rows, struct sacct_row *row)
{
	const struct ceems_job_record **order;
	const struct ceems_job_record *r, *tmp;
	const struct ceems_emission_factor *factor = NULL;
	const char *factor_node = NULL;
	double covered[CEEMS_DOMAIN_COUNT], lifetime = NAN, peak_sum = NAN;
	double elapsed_max = NAN, total, cov;
	bool measured[CEEMS_DOMAIN_COUNT] = { false }, have_total;
	size_t i, j, n = last - first;
	int d;

	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		covered[d] = NAN;
	/* Metadata: oldest record first (by written_at, then node), so the
	 * newest one that has a field decides it. */
	order = calloc(n, sizeof(*order));
	for (i = 0; order != NULL && i < n; i++) {
		order[i] = &recs->v[first + i];
		for (j = i; j > 0 && (order[j - 1]->written_at > order[j]->written_at ||
				      (order[j - 1]->written_at == order[j]->written_at &&
				       strcmp(order[j - 1]->meta.node, order[j]->meta.node) > 0)); j--) {
			tmp = order[j - 1];
			order[j - 1] = order[j];
			order[j] = tmp;
		}
	}
	for (i = 0; i < n; i++)
		if (merge_meta(rows, row, order != NULL ? &order[i]->meta :
			       &recs->v[first + i].meta) < 0) {
			free(order);
			return -1;
		}
	free(order);

	row->nodes_reported = (uint32_t)n;
	for (i = first; i < last; i++) {
		r = &recs->v[i];
		take_max(&elapsed_max, r->report.elapsed_s);
		if (cpu_known(&r->report))
			sacct_row_add_known(&row->cpu_s, r->report.cpu_s);
		if (r->report.usage.present & CEEMS_CGF_MEM_PEAK) {
			take_max(&row->mem_peak_bytes, (double)r->report.usage.mem_peak_bytes);
			sacct_row_add_known(&peak_sum, (double)r->report.usage.mem_peak_bytes);
		}
		sacct_row_add_known(&lifetime, r->report.ledger.lifetime_s);
		have_total = false;
		total = 0;
		for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			if (!r->report.ledger.measured[d])
				continue;
			measured[d] = true;
			sacct_row_add_known(&covered[d], r->report.ledger.covered_s[d]);
			if (r->report.ledger.covered_s[d] > 0) {
				sacct_row_add_known(domain_slot(row, d), r->report.ledger.joules[d]);
				total += r->report.ledger.joules[d];
				have_total = true;
			}
		}
		if (have_total)
			sacct_row_add_known(&row->total_j, total);
		merge_io(row, &r->report.io);
		add_perf(row, &r->report.perf, i == first);
		if (r->report.ledger.have_emissions) {
			sacct_row_add_known(&row->emissions_g, r->report.ledger.emissions_g);
			if (factor_node == NULL || strcmp(r->meta.node, factor_node) < 0) {
				factor = &r->report.ledger.factor;
				factor_node = r->meta.node;
			}
		}
	}
	if (row->start_time > 0 && row->end_time > 0)
		row->elapsed_s = (double)(row->end_time - row->start_time);
	else
		row->elapsed_s = elapsed_max;
	if (row->elapsed_s > 0 && row->alloc_cpus > 0 && isfinite(row->cpu_s))
		row->cpu_eff = row->cpu_s / (row->elapsed_s * row->alloc_cpus);
	if (row->req_mem_bytes > 0 && isfinite(peak_sum))
		row->mem_eff = peak_sum / (double)row->req_mem_bytes;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!measured[d] || !(lifetime > 0) || !isfinite(covered[d]))
			continue;
		cov = covered[d] / lifetime;
		if (cov > 1)
			cov = 1;
		if (!isfinite(row->quality) || cov < row->quality)
			row->quality = cov;
	}
	if (factor != NULL) {
		row->g_per_kwh = factor->g_per_kwh;
		row->pue = factor->pue;
	}
	gpu_figures(recs, first, last, row);
	quality_figures(recs, first, last, row);
	work_figures(recs, first, last, row);
	err_figures(recs, first, last, row);
	saving_figures(recs, first, last, row);
	return 0;
}

/* The job's steps, summed over its nodes, after the job row. */
static int
step_rows(const struct sacct_records *recs, size_t first, size_t last,
	  const struct sacct_row *job, const struct sacct_query *q,
	  struct sacct_rows *rows)
{
	const struct ceems_agent_step_report *st;
	const struct ceems_job_record *r;
	struct sacct_row *row;
	size_t i, k, base = rows->n;
	uint32_t s;
	double total;
	bool have_total;
	int d;

	for (i = first; i < last; i++) {
		r = &recs->v[i];
		for (s = 0; s < r->report.nsteps && s < CEEMS_AGENT_MAX_STEPS; s++) {
			st = &r->report.steps[s];
			if (!sacct_merge_query_wants_step(q, job, st->id))
				continue;
			for (k = base; k < rows->n; k++)
				if (strcmp(rows->v[k].step, st->id) == 0)
					break;
			if (k == rows->n) {
				if ((row = sacct_row_add(rows)) == NULL ||
				    sacct_row_step_of(rows, row, job, st->id) < 0)
					return -ENOMEM;
			}
			row = &rows->v[k];
			row->nodes_reported++;
			/* The sum of every node's count, unknown (NaN) as
			 * soon as one node's is: a partial sum is no count. */
			if (!st->have_tasks)
				row->ntasks = NAN;
			else if (row->nodes_reported == 1)
				row->ntasks = st->tasks;
			else
				row->ntasks += st->tasks;
			take_max(&row->elapsed_s, st->elapsed_s);
			sacct_row_add_known(&row->cpu_s, st->cpu_s);
			if (st->have_mem_peak)
				take_max(&row->mem_peak_bytes, (double)st->mem_peak_bytes);
			have_total = false;
			total = 0;
			for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
				if (!r->report.ledger.measured[d])
					continue;
				sacct_row_add_known(domain_slot(row, d), st->joules[d]);
				total += st->joules[d];
				have_total = true;
			}
			if (have_total)
				sacct_row_add_known(&row->total_j, total);
		}
	}
	return 0;
}

/* The first of Q's -j entries (sorted by job id: sacct_merge_jobsel_sort)
 * whose job id is ID, or Q->njobs. */
static size_t
first_of(const struct sacct_query *q, uint32_t id)
{
	size_t lo = 0, hi = q->njobs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (q->jobs[mid].jobid < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Does an entry of Q for job id ID (the job's own, TASK == UINT32_MAX;
 * or its array's, TASK its task) take STEP: NULL any entry, else an
 * entry of the whole job or of that step ("" the job's own line)? */
static bool
names_of(const struct sacct_query *q, uint32_t id, uint32_t task, const char *step)
{
	for (size_t i = first_of(q, id); i < q->njobs && q->jobs[i].jobid == id; i++) {
		const struct sacct_jobsel *sel = &q->jobs[i];

		if (sel->array_task != UINT32_MAX && sel->array_task != task)
			continue;
		if (step == NULL || sel->step[0] == '\0' || strcmp(sel->step, step) == 0)
			return true;
	}
	return false;
}

bool
sacct_merge_query_names(const struct sacct_query *q, uint32_t jobid,
			uint32_t array_job_id, uint32_t array_task_id,
			const char *step)
{
	if (q->njobs == 0)
		return true;
	/* The job's own id names it whole, not one of its tasks. */
	if (names_of(q, jobid, UINT32_MAX, step))
		return true;
	return array_job_id != UINT32_MAX &&
	       names_of(q, array_job_id, array_task_id, step);
}

bool
sacct_merge_query_wants_step(const struct sacct_query *q,
			     const struct sacct_row *job, const char *step)
{
	return sacct_merge_query_names(q, job->jobid, job->array_job_id,
				       job->array_task_id, step);
}

bool
sacct_merge_query_wants_job(const struct sacct_query *q,
			    const struct sacct_row *job)
{
	return sacct_merge_query_wants_step(q, job, "");
}

static int
jobsel_cmp(const void *pa, const void *pb)
{
	const struct sacct_jobsel *a = pa, *b = pb;

	if (a->jobid != b->jobid)
		return a->jobid < b->jobid ? -1 : 1;
	if (a->array_task != b->array_task)
		return a->array_task < b->array_task ? -1 : 1;
	return strcmp(a->step, b->step);
}

void
sacct_merge_jobsel_sort(struct sacct_query *q)
{
	size_t i, n = 0;

	if (q->njobs == 0)
		return;
	qsort(q->jobs, q->njobs, sizeof(q->jobs[0]), jobsel_cmp);
	for (i = 1; i < q->njobs; i++)
		if (jobsel_cmp(&q->jobs[n], &q->jobs[i]) != 0)
			q->jobs[++n] = q->jobs[i];
	q->njobs = n + 1;
}

int
sacct_merge_jobsel_add(struct sacct_query *q, const struct sacct_jobsel *sel)
{
	struct sacct_jobsel *v;
	size_t cap;

	if (q->njobs == q->jobs_cap) {
		cap = q->jobs_cap > 0 ? 2 * q->jobs_cap : 16;
		if ((v = realloc(q->jobs, cap * sizeof(*v))) == NULL)
			return -1;
		q->jobs = v;
		q->jobs_cap = cap;
	}
	q->jobs[q->njobs++] = *sel;
	return 0;
}

int
sacct_merge_one(const struct sacct_records *recs, size_t i,
		struct sacct_rows *rows, struct sacct_row *row)
{
	sacct_row_init(row);
	return job_row(recs, i, i + 1, rows, row) < 0 ? -ENOMEM : 0;
}

int
sacct_merge(const struct sacct_records *recs, const struct sacct_query *q,
	    struct sacct_rows *rows)
{
	struct sacct_row job, *row;
	size_t first, last;

	for (first = 0; first < recs->n; first = last) {
		for (last = first + 1; last < recs->n &&
		     same_job(&recs->v[first], &recs->v[last]); last++)
			;
		sacct_row_init(&job);
		if (job_row(recs, first, last, rows, &job) < 0)
			return -ENOMEM;
		if (!sacct_merge_query_selects(q, &job))
			continue;
		if (sacct_merge_query_wants_job(q, &job)) {
			if ((row = sacct_row_add(rows)) == NULL)
				return -ENOMEM;
			*row = job;
		}
		if (!q->allocations &&
		    step_rows(recs, first, last, &job, q, rows) < 0)
			return -ENOMEM;
	}
	return 0;
}

int
sacct_merge_name_add(char (**list)[SACCT_NAME_LEN], size_t *n, size_t *cap,
		     const char *name)
{
	char (*v)[SACCT_NAME_LEN];
	size_t c;

	if (*n == *cap) {
		c = *cap > 0 ? *cap * 2 : 8;
		if (c > SIZE_MAX / SACCT_NAME_LEN ||
		    (v = realloc(*list, c * SACCT_NAME_LEN)) == NULL)
			return -1;
		*list = v;
		*cap = c;
	}
	snprintf((*list)[*n], SACCT_NAME_LEN, "%s", name);
	(*n)++;
	return 0;
}

static bool
in_list(const char (*list)[SACCT_NAME_LEN], size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

bool
sacct_merge_query_selects(const struct sacct_query *q, const struct sacct_row *row)
{
	int64_t until = row->end_time > 0 ? row->end_time : row->start_time;
	size_t i;
	bool hit;

	if (!sacct_merge_query_names(q, row->jobid, row->array_job_id,
				     row->array_task_id, NULL))
		return false;
	if (!(row->start_time < (int64_t)q->end && until >= (int64_t)q->start))
		return false;
	if (!q->all_users && !in_list(q->users, q->nusers, row->user))
		return false;
	if (q->naccounts > 0 && !in_list(q->accounts, q->naccounts, row->account))
		return false;
	if (q->npartitions > 0 &&
	    !in_list(q->partitions, q->npartitions, row->partition))
		return false;
	if (q->nclusters > 0 && !in_list(q->clusters, q->nclusters, row->cluster))
		return false;
	if (q->nstates > 0) {
		for (i = 0, hit = false; i < q->nstates; i++)
			if (strcmp(q->states[i], row->state) == 0)
				hit = true;
		if (!hit)
			return false;
	}
	return true;
}

int
sacct_merge_state_parse(const char *text, char *out, size_t size)
{
	static const struct {
		const char *shrt, *name;
	} states[] = {
		{ "CD", "COMPLETED" }, { "F", "FAILED" }, { "CA", "CANCELLED" },
		{ "TO", "TIMEOUT" }, { "OOM", "OUT_OF_MEMORY" },
		{ "NF", "NODE_FAIL" }, { "PR", "PREEMPTED" },
		{ "BF", "BOOT_FAIL" }, { "DL", "DEADLINE" }, { "RQ", "REQUEUED" },
		{ "R", "RUNNING" },
	};
	size_t i;

	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		if (strcasecmp(text, states[i].shrt) == 0 ||
		    strcasecmp(text, states[i].name) == 0) {
			snprintf(out, size, "%s", states[i].name);
			return 0;
		}
	}
	return -1;
}

/* A decimal id of 1 to 4294967294 at *P, moved past it: 0 or -1. */
static int
parse_id(const char **p, uint32_t *out, unsigned long min)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtoul(*p, &end, 10);
	if (errno != 0 || v < min || v >= 4294967295UL)
		return -1;
	*out = (uint32_t)v;
	*p = end;
	return 0;
}

int
sacct_merge_jobsel_parse(const char *text, struct sacct_jobsel *sel)
{
	const char *p = text, *c;
	size_t len;

	if (parse_id(&p, &sel->jobid, 1) < 0)
		return -1;
	sel->array_task = UINT32_MAX;
	sel->step[0] = '\0';
	if (*p == '_' && (p++, parse_id(&p, &sel->array_task, 0) < 0))
		return -1;
	if (*p == '\0')
		return 0;
	if (*p != '.')
		return -1;
	p++;
	len = strlen(p);
	if (len == 0 || len >= sizeof(sel->step))
		return -1;
	for (c = p; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' &&
		    *c != '+' && *c != '.')
			return -1;
	memcpy(sel->step, p, len + 1);
	return 0;
}
