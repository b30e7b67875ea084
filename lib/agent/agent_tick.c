/* agent_tick.c - one tick of the node agent: read the energy sources,
 * the node's and each job's and step's usage, learn the idle power,
 * split the node's energy over the jobs (ledger) and their steps, and
 * save each job's figures.
 *
 * Separate from the job requests (agent.c), which call the readings of
 * this file at a job's or step's edges (register, step end, leave). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "model/agent_series.h"
#include "agent/agent_finish.h"
#include "agent/agent_state.h"
#include "model/emissions.h"
#include "model/energy.h"
#include "base/fileio.h"
#include "sources/hwmon.h"
#include "model/ledger_carry.h"
#include "base/log.h"
#include "sources/pm_counters.h"
#include "sources/proc_stats.h"
#include "sources/rapl.h"
#include "base/tick_path.h"

/* Add one counter's tick to a ledger reading: any gap makes the whole
 * reading a gap (a domain split from part of its counters would charge
 * jobs for a wrong total). */
static void
add_to_reading(struct ceems_ledger_reading *r,
	       const struct ceems_energy_take *t)
{
	if (!r->measured) {
		r->measured = true;
		r->gap = CEEMS_GAP_NONE;
		r->joules = 0;
	}
	if (r->gap != CEEMS_GAP_NONE)
		return;
	if (t->gap != CEEMS_GAP_NONE) {
		r->gap = t->gap;
		r->joules = 0;
		return;
	}
	r->joules += t->joules;
}

CEEMS_TICK_PATH void
ceems_agent_tick_collect_energy(struct ceems_agent *a, uint64_t now_ns,
		     struct ceems_ledger_node_tick *node)
{
	double dt_s = a->err_take_ns != 0 && now_ns > a->err_take_ns ?
	    (double)(now_ns - a->err_take_ns) / 1e9 : 0;

	a->err_take_ns = now_ns;
	for (size_t s = 0; s < a->nsources; s++) {
		const struct ceems_energy_source *src = a->sources[s];

		ceems_energy_source_sample(a->sources[s], now_ns);
		ceems_energy_source_take(a->sources[s], a->takes[s]);
		for (size_t i = 0; i < src->ncounters; i++) {
			const struct ceems_energy_counter *c = &src->counters[i];
			const struct ceems_energy_take *t = &a->takes[s][i];

			if (a->domain_source[c->domain] != (int)s)
				continue;
			ceems_agent_err_take(a, &a->sources[s]->counters[i], t,
					     dt_s);
			switch (c->domain) {
			case CEEMS_DOMAIN_PACKAGE:
				add_to_reading(&node->package, t);
				break;
			case CEEMS_DOMAIN_DRAM:
				add_to_reading(&node->dram, t);
				break;
			case CEEMS_DOMAIN_NODE:
				add_to_reading(&node->node, t);
				break;
			case CEEMS_DOMAIN_GPU:
				if (c->device < 0 ||
				    c->device >= CEEMS_LEDGER_MAX_GPUS)
					break;
				add_to_reading(&node->gpu[c->device], t);
				if ((size_t)c->device + 1 > node->ngpus)
					node->ngpus = (size_t)c->device + 1;
				break;
			case CEEMS_DOMAIN_COUNT:
				break;
			}
		}
	}
}

static void
collect_node_usage(struct ceems_agent *a,
		   struct ceems_ledger_node_tick *node)
{
	struct ceems_node_cpu cpu;
	struct ceems_node_mem mem;

	node->node_cores = a->node_cpu.ncpus;
	a->node_busy_known = false;
	if (ceems_proc_stats_read_cpu(a->proc, &cpu) == 0) {
		if (a->have_node_cpu && cpu.busy_ns >= a->node_cpu.busy_ns) {
			node->node_busy_cpu_s =
				(double)(cpu.busy_ns - a->node_cpu.busy_ns) / 1e9;
			a->node_busy_known = true;
		}
		a->node_cpu = cpu;
		a->have_node_cpu = true;
		node->node_cores = cpu.ncpus;
	}
	/* Memory is a level the split weighs the jobs' RSS against, and
	 * their RSS is read on full readings: the node's with it. */
	if (!a->tick_full && a->last_node.node_mem_total_bytes > 0) {
		node->node_mem_total_bytes = a->last_node.node_mem_total_bytes;
		node->node_mem_used_bytes = a->last_node.node_mem_used_bytes;
	} else if (ceems_proc_stats_read_mem(a->proc, &mem) == 0 &&
	    (mem.present & CEEMS_NMF_TOTAL)) {
		node->node_mem_total_bytes = mem.total;
		if ((mem.present & CEEMS_NMF_AVAILABLE) && mem.available <= mem.total)
			node->node_mem_used_bytes = mem.total - mem.available;
	}
}

static void
idle_learner_add(struct idle_learner *l, double w)
{
	double sorted[IDLE_SAMPLES];

	l->w[l->next] = w;
	l->next = (l->next + 1) % IDLE_SAMPLES;
	if (l->n < IDLE_SAMPLES)
		l->n++;
	if (l->n < IDLE_MIN_SAMPLES)
		return;
	/* Insertion sort of at most 64 values, on quiet ticks only. */
	for (unsigned i = 0; i < l->n; i++) {
		unsigned j = i;

		while (j > 0 && sorted[j - 1] > l->w[i]) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = l->w[i];
	}
	l->value = l->n % 2 ? sorted[l->n / 2] :
		   (sorted[l->n / 2 - 1] + sorted[l->n / 2]) / 2;
}

/* Log where a learned idle power comes from when that changes: an admin
 * reads there when jobs stop being flagged, and from what. */
static void
note_idle_source(struct ceems_agent *a, int d, enum idle_source now,
		 double watts)
{
	static const char *const how[] = {
		[IDLE_QUIET] = "from the node's quiet ticks",
		[IDLE_FIT] = "by regression on the node's busy CPUs",
		[IDLE_RESTORED] = "by an earlier agent",
	};

	if (a->idle_source[d] == now)
		return;
	a->idle_source[d] = now;
	if (now != IDLE_UNLEARNED)
		ceems_info("idle power of the %s learned %s: %.1f W (idle_power_%s in ceems.conf sets a measured value instead)",
			   d == CEEMS_DOMAIN_PACKAGE ? "package" : "DRAM",
			   how[now], watts,
			   d == CEEMS_DOMAIN_PACKAGE ? "package" : "dram");
}

/* Domain D's idle power was just learned, IDLE_W: every running job's
 * ticks split before are split again with it (model/ledger_restate.h),
 * its steps' with it, and what that moves to idle and from the system
 * waits for the status totals of this tick. */
static void
restate_jobs(struct ceems_agent *a, int d, double idle_w)
{
	double jobs_j = 0, idle_j = idle_w * a->unlearned_idle_s[d];
	size_t n = 0;

	if (!isfinite(idle_w) || idle_w <= 0)
		return;

	for (size_t i = 0; i < a->njobs; i++) {
		struct agent_job *j = a->jobs[i];
		double gained;

		for (uint32_t k = 0; k < j->nsteps; k++) {
			struct agent_step *st = &j->steps[k];
			double joules = st->r.joules[d] + idle_w * st->unlearned_w[d];

			st->r.joules[d] = joules > 0 ? joules : 0;
			st->unlearned_w[d] = 0;
		}
		if (!j->ledger.idle_unlearned[d])
			continue;
		gained = ceems_ledger_restate_account(&j->ledger, &j->unlearned,
						      d, idle_w);
		ceems_agent_series_restate(j->series, d, idle_w, gained);
		jobs_j += gained;
		n++;
	}
	a->unlearned_idle_s[d] = 0;
	a->restated_idle_j[d] += idle_j;
	a->restated_system_j[d] -= idle_j + jobs_j;
	if (n > 0)
		ceems_info("%zu running job%s split again with the idle power of the %s learned now: %+.1f J to them",
			   n, n == 1 ? "'s earlier ticks" : "s' earlier ticks",
			   d == CEEMS_DOMAIN_PACKAGE ? "package" : "DRAM", jobs_j);
}

/* The static power of a domain: configured, else learned from the
 * node's quiet ticks, else from the regression of its power on its busy
 * CPUs over every tick (lib/model/idle_fit.h); 0 until learned (all energy is
 * then active), and the tick says so for the jobs' data quality. */
static void
set_idle_power(struct ceems_agent *a, struct ceems_ledger_node_tick *node)
{
	const double configured[2] = { a->config.idle_power_package_w,
				       a->config.idle_power_dram_w };
	const struct ceems_ledger_reading *readings[2] = { &node->package,
							   &node->dram };
	const int domains[2] = { CEEMS_DOMAIN_PACKAGE, CEEMS_DOMAIN_DRAM };
	double busy_fraction = 1;

	if (node->node_cores > 0)
		busy_fraction = node->node_busy_cpu_s /
				(node->dt_s * node->node_cores);
	for (int i = 0; i < 2; i++) {
		int d = domains[i];
		const struct ceems_ledger_reading *r = readings[i];
		bool learned_before = a->idle_source[d] != IDLE_UNLEARNED;
		double fitted;

		if (configured[i] >= 0) {
			node->idle_power_w[d] = configured[i];
			continue;
		}
		/* Only ticks of about the normal length: the short ones a
		 * registration forces are below the counters' resolution. */
		if (r->measured && r->gap == CEEMS_GAP_NONE &&
		    a->node_busy_known &&
		    node->dt_s * 2e9 >= (double)a->config.interval_ns) {
			if (busy_fraction < IDLE_BUSY_FRACTION)
				idle_learner_add(&a->idle[d],
						 r->joules / node->dt_s);
			/* DRAM power follows memory traffic, not busy
			 * CPUs: a line on them reads steady traffic as
			 * static power (doc/attribution.md). */
			if (d == CEEMS_DOMAIN_PACKAGE)
				ceems_idle_fit_add(&a->idle_fit[d],
						   node->node_busy_cpu_s /
						   node->dt_s,
						   node->node_cores,
						   r->joules / node->dt_s);
		}
		node->idle_power_unlearned[d] = false;
		if (a->idle[d].value > 0) {
			node->idle_power_w[d] = a->idle[d].value;
			note_idle_source(a, d, IDLE_QUIET, a->idle[d].value);
		} else if (ceems_idle_fit_value(&a->idle_fit[d], &fitted)) {
			node->idle_power_w[d] = fitted;
			a->idle_learned_w[d] = fitted;
			note_idle_source(a, d, IDLE_FIT, fitted);
		} else if (a->idle_source[d] == IDLE_RESTORED) {
			node->idle_power_w[d] = a->idle_restored_w[d];
		} else {
			node->idle_power_w[d] = 0;
			node->idle_power_unlearned[d] = true;
			continue;
		}
		if (!learned_before)
			restate_jobs(a, d, node->idle_power_w[d]);
	}
}

/* Read a running step's counters for the tick being taken: its CPU
 * counter waits in st->rd for the tick's end; its memory (on full
 * readings) is a level, not a count, and is kept at once. */
static void
read_step(struct ceems_agent *a, struct agent_step *st, bool full)
{
	struct ceems_cgroup_stats *cs = &a->scratch;
	uint32_t want = full ? (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_RSS |
				CEEMS_CGF_MEM_PEAK) : CEEMS_CGF_CPU_USAGE;

	st->rd.waiting = false;
	if (st->reader == NULL)
		return;
	st->rd.waiting = true;
	st->rd.seq = a->tick_seq;
	st->rd.have_cpu = false;
	st->rd.ret = ceems_cgroup_stats_reader_read_some(st->reader, want, cs);
	if (st->rd.ret < 0)
		return;
	if (cs->present & CEEMS_CGF_CPU_USAGE) {
		st->rd.have_cpu = true;
		st->rd.cpu_usage_ns = cs->cpu_usage_ns;
	}
	if (full && (cs->present & CEEMS_CGF_MEM_RSS)) {
		st->rss_bytes = cs->mem_rss_bytes;
		st->have_rss = true;
	}
	if (full && (cs->present & CEEMS_CGF_MEM_PEAK)) {
		st->r.have_mem_peak = true;
		st->r.mem_peak_bytes = cs->mem_peak_bytes;
	}
}

/* A running step's CPU time for this tick, from its reading (used up).
 * A step not read for this tick (started since its job was read) has
 * none yet: its baseline stays for the next.  A step whose cgroup went
 * away keeps its last figures. */
static void
apply_step(struct ceems_agent *a, struct agent_step *st)
{
	bool fresh = st->rd.waiting && st->rd.seq == a->tick_seq;

	st->rd.waiting = false;
	if (st->reader == NULL) {
		if (!st->end_pending)
			st->tick_cpu_s = 0;
		return;
	}
	st->tick_cpu_s = 0;
	if (!fresh || !st->rd.have_cpu)
		return;
	if (st->have_cpu && st->rd.cpu_usage_ns >= st->cpu_last_ns) {
		st->tick_cpu_s = (double)(st->rd.cpu_usage_ns -
					  st->cpu_last_ns) / 1e9;
		/* A baseline alone measures nothing yet. */
		st->r.have_cpu = true;
	}
	st->cpu_last_ns = st->rd.cpu_usage_ns;
	st->have_cpu = true;
}

/* Read a running step's CPU time for this tick (and its memory on full
 * readings) at once. */
void
ceems_agent_tick_collect_step(struct ceems_agent *a, struct agent_step *st, bool full)
{
	read_step(a, st, full);
	apply_step(a, st);
}

/* Split the job's share of this tick among its running steps: by CPU
 * time, memory by RSS.  The denominator is never below the job's own
 * figure, so the steps never get more than the job. */
CEEMS_TICK_PATH void
ceems_agent_tick_split_to_steps(struct agent_job *j,
		     const struct ceems_ledger_job_share *share,
		     const struct ceems_ledger_job_tick *t)
{
	double sum_cpu = 0, sum_rss = 0, wcpu, wrss;

	for (uint32_t i = 0; i < j->nsteps; i++) {
		if (j->steps[i].reader == NULL && !j->steps[i].end_pending)
			continue;	/* ended: holds nothing any more */
		sum_cpu += j->steps[i].tick_cpu_s;
		sum_rss += (double)j->steps[i].rss_bytes;
	}
	wcpu = sum_cpu > t->cpu_s ? sum_cpu : t->cpu_s;
	wrss = sum_rss > (double)t->rss_bytes ? sum_rss : (double)t->rss_bytes;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		struct agent_step *st = &j->steps[i];

		if (st->reader == NULL && !st->end_pending)
			continue;
		/* A step that ended in this tick: its CPU time was counted
		 * when it ended, its energy comes now, once. */
		if (st->end_pending)
			st->end_pending = false;
		else
			st->r.cpu_s += st->tick_cpu_s;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			double num = d == CEEMS_DOMAIN_DRAM ?
				     (double)st->rss_bytes : st->tick_cpu_s;
			double den = d == CEEMS_DOMAIN_DRAM ? wrss : wcpu;

			/* Its part is known only when the job's was and the
			 * step's own cgroup gave the figure it is split by. */
			if (share->covered[d] &&
			    (d == CEEMS_DOMAIN_DRAM ? st->have_rss : st->have_cpu))
				st->r.have_joules[d] = true;
			if (den > 0 && share->joules[d] > 0)
				st->r.joules[d] += share->joules[d] * num / den;
			if (den > 0)
				st->unlearned_w[d] +=
				    ceems_ledger_restate_per_w(share, d, num / den);
		}
	}
}

/* Whether this full reading of cgroup v1 job J looks for processes of
 * the job not followed yet (a walk of its cgroup.procs files, about a
 * dozen system calls per directory, every process's status read).  The
 * fork hook follows the children of followed processes and each step's
 * start walks the job, so a walk finds only a process moved into the
 * job from outside (an adopted ssh session): once a minute, not at
 * every full reading, whose other reads are a few system calls a job. */
static bool
walk_due(struct ceems_agent *a, struct agent_job *j)
{
	if (j->walk_ns != 0 && a->tick_begin_ns >= j->walk_ns &&
	    a->tick_begin_ns - j->walk_ns < CEEMS_AGENT_WALK_NS)
		return false;
	j->walk_ns = a->tick_begin_ns;
	return true;
}

/* Read job J's counters for the tick being taken: its CPU counter waits
 * in j->rd for the tick's end; a full reading's levels (memory, IO) are
 * kept at once.  Read into scratch: a failed reading (the cgroup going
 * away at the job's end) must not wipe the last good one. */
CEEMS_TICK_PATH static void
read_job(struct ceems_agent *a, struct agent_job *j, bool full)
{
	struct ceems_cgroup_stats *st = &a->scratch;
	uint32_t want = full ? CEEMS_CGF_ALL : CEEMS_CGF_CPU_USAGE;
	bool idle;

	j->rd.waiting = true;
	j->rd.seq = a->tick_seq;
	j->rd.have_cpu = false;
	j->rd.ret = 0;
	/* The eBPF and perf counts are cumulative: the ledger needs none of
	 * them, the record their totals, a time series each of its rows.
	 * Light ticks leave them be (a system call per CPU of the job for
	 * perf, two for eBPF), unless the job keeps a series. */
	j->rd.counts = full || j->series != NULL;
	if (j->tio != NULL)
		/* Per tick, at every tick: what a process takes when it
		 * leaves the job is what it did since the last reading
		 * (agent_task_io.c). */
		ceems_agent_task_io_job_read(a, j, true);
	else if (j->rd.counts)
		ceems_agent_bpf_job_read(a, j, full &&
					 (j->spec.cgroup.version != CEEMS_CGROUP_V1 ||
					  walk_due(a, j)));
	if (j->gone)
		return;
	/* A step the agent was not told of (one that started before the
	 * job was adopted) still has its slurmstepd found (cgroup v2). */
	if (full)
		ceems_cgroup_stats_reader_rescan(j->reader);
	j->rd.ret = ceems_cgroup_stats_reader_read_some(j->reader, want, st);
	if (j->rd.ret < 0 || (st->present & CEEMS_CGF_CPU_USAGE) == 0)
		return;
	j->rd.have_cpu = true;
	j->rd.cpu_usage_ns = st->cpu_usage_ns;
	if (full)
		j->usage = *st;
	if (j->rd.counts)
		ceems_agent_perf_read(j);
	/* Last: the steps' readings reuse the scratch buffer.  A job that
	 * used no CPU since its last reading has steps that used none
	 * (cgroup CPU time counts the children's): on a light tick their
	 * readings are left for one that moves, their baselines kept. */
	idle = !full && j->have_cpu && st->cpu_usage_ns == j->cpu_last_ns;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		if (idle && j->steps[i].have_cpu) {
			j->steps[i].rd.waiting = false;
			continue;
		}
		read_step(a, &j->steps[i], full);
	}
}

CEEMS_TICK_PATH void
ceems_agent_tick_job_gpu_shares(const struct ceems_agent *a, const struct agent_job *j,
		     double share[CEEMS_LEDGER_MAX_GPUS])
{
	if (j->gpu.n > 0)
		ceems_agent_gpu_shares(a, &j->gpu, share);
	else if (j->spec_gpu_share)
		memcpy(share, j->spec.gpu_share,
		       CEEMS_LEDGER_MAX_GPUS * sizeof(share[0]));
	else
		memset(share, 0, CEEMS_LEDGER_MAX_GPUS * sizeof(share[0]));
}

/* Job J's usage for the tick ending at a->tick_ns, from its reading
 * (used up), into its ledger input T. */
CEEMS_TICK_PATH static void
apply_job(struct ceems_agent *a, struct agent_job *j,
	  struct ceems_ledger_job_tick *t)
{
	uint64_t cpu_ns = j->rd.cpu_usage_ns;
	bool have_cpu = j->rd.waiting && j->rd.have_cpu;
	int ret = j->rd.ret;

	j->rd.waiting = false;
	memset(t, 0, sizeof(*t));
	/* A job whose cgroup is gone holds nothing any more: it is no longer
	 * charged (it waits only for its deregistration). */
	if (j->gone)
		return;
	t->alloc_cores = j->alloc_cores;
	t->alloc_mem_bytes = j->alloc_mem_bytes;
	ceems_agent_tick_job_gpu_shares(a, j, t->gpu_share);
	if ((j->usage.present & CEEMS_CGF_MEM_RSS) != 0)
		t->rss_bytes = j->usage.mem_rss_bytes;
	for (uint32_t i = 0; i < j->nsteps; i++)
		apply_step(a, &j->steps[i]);
	if (!have_cpu) {
		if (ret == -ENODEV) {
			/* It held its resources until some time in this
			 * tick: this tick is its last, with the CPU time
			 * its last step's end saw. */
			j->gone = true;
			j->gone_ns = a->tick_ns;
			if (j->have_cpu && j->cpu_seen_ns > j->cpu_last_ns) {
				t->cpu_s = (double)(j->cpu_seen_ns -
						    j->cpu_last_ns) / 1e9;
				j->cpu_last_ns = j->cpu_seen_ns;
			}
			ceems_info("job %u: cgroup removed; its figures stop here",
				   j->spec.jobid);
			ceems_agent_extern_cgroup_gone(a, j, a->tick_ns);
		}
		return;
	}
	if (j->have_cpu && cpu_ns >= j->cpu_last_ns)
		t->cpu_s = (double)(cpu_ns - j->cpu_last_ns) / 1e9;
	j->cpu_last_ns = cpu_ns;
	if (!j->have_cpu) {
		j->cpu_base_ns = cpu_ns;
		j->have_cpu = true;
	}
}

/* Read one job's usage for this tick into its ledger input, at once. */
void
ceems_agent_tick_collect_job(struct ceems_agent *a, struct agent_job *j, bool full,
		  struct ceems_ledger_job_tick *t)
{
	read_job(a, j, full);
	apply_job(a, j, t);
}

/* A job's end: a full reading of this job alone (its memory peak and IO
 * as of now).  Forcing a full reading of every job instead cost a node
 * with 1000 jobs tens of milliseconds at each job's end, inside the
 * ending step (bench_plugin, doc/performance.md).  The CPU figures are
 * the tick's: this reading does not move the job's CPU baseline. */
void
ceems_agent_tick_full_reading(struct ceems_agent *a, struct agent_job *j)
{
	ceems_agent_perf_read(j);
	if (j->gone || j->reader == NULL)
		return;
	if (ceems_cgroup_stats_reader_read_some(j->reader, CEEMS_CGF_ALL,
					  &a->scratch) == 0 &&
	    (a->scratch.present & CEEMS_CGF_CPU_USAGE) != 0)
		j->usage = a->scratch;
}

/* A step's end: the job's CPU counter as of now, kept for the tick that
 * finds the job's cgroup gone.  Slurm removes that cgroup before the
 * extern step deregisters the job, so the last step's end is the last
 * time the job's CPU time can be read: without this, what the job used
 * after the last tick (up to a whole tick) would be lost.  The baseline
 * does not move: the tick charges it. */
void
ceems_agent_tick_note_job_cpu(struct ceems_agent *a, struct agent_job *j)
{
	if (j->gone || j->reader == NULL || !j->have_cpu)
		return;
	if (ceems_cgroup_stats_reader_read_some(j->reader, CEEMS_CGF_CPU_USAGE,
					  &a->scratch) == 0 &&
	    (a->scratch.present & CEEMS_CGF_CPU_USAGE) != 0 &&
	    a->scratch.cpu_usage_ns > j->cpu_seen_ns)
		j->cpu_seen_ns = a->scratch.cpu_usage_ns;
}

/* The part of the tick since the last one that job J was not there
 * (it registered during it, or was restored without the interval
 * before), in seconds. */
CEEMS_TICK_PATH double
ceems_agent_tick_job_absent_s(const struct ceems_agent *a, const struct agent_job *j)
{
	return j->tick_from_ns > a->last_tick_ns ?
	       (double)(j->tick_from_ns - a->last_tick_ns) / 1e9 : 0;
}

/* Counts read at an earlier tick than NOW_NS, into a checkpoint: an
 * agent that dies now loses what the job did since, which its successor
 * must say it did not count (the time is added to IO's and PERF's
 * unmeasured_s where they were measured). */
void
ceems_agent_tick_stale_counts(const struct agent_job *j, uint64_t now_ns,
			      struct ceems_agent_io_report *io,
			      struct ceems_perf_report *perf)
{
	double stale_s;

	if (j->counts_ns == 0 || now_ns <= j->counts_ns)
		return;
	stale_s = (double)(now_ns - j->counts_ns) / 1e9;
	/* IO counted per tick was read at this tick, light ones too. */
	if ((io->have_io || io->have_net) && j->tio == NULL)
		io->unmeasured_s += stale_s;
	if (perf->present != 0)
		perf->unmeasured_s += stale_s;
}

void
ceems_agent_tick_save_job(struct ceems_agent *a, const struct agent_job *j, uint64_t now_ns)
{
	struct state_figures fig;

	if (a->state == NULL || j->slot < 0)
		return;
	/* What goes to the file, padding included, is set; the steps not
	 * in use are not written. */
	memset(&fig, 0, offsetof(struct state_figures, steps) +
	       (j->nsteps <= CEEMS_AGENT_MAX_STEPS ? j->nsteps : 0) *
	       sizeof(fig.steps[0]));
	fig.tick_ns = now_ns;
	fig.cpu_base_ns = j->cpu_base_ns;
	fig.cpu_last_ns = j->cpu_last_ns;
	fig.have_cpu = j->have_cpu;
	fig.cgroup_ino = j->cgroup_ino;
	fig.recovered_s = j->recovered_s;
	fig.nrecovered = j->nrecovered;
	memcpy(fig.recovered, j->recovered, sizeof(fig.recovered));
	fig.cpu_s = j->cpu_s;
	fig.gap_s = j->gap_s;
	fig.ledger = j->ledger;
	fig.ngaps = j->ngaps;
	memcpy(fig.gaps, j->gaps, sizeof(fig.gaps));
	fig.gpu = j->gpu;
	ceems_agent_bpf_fill(a, j, &fig.io);
	ceems_agent_perf_report(a, j, &fig.perf);
	ceems_agent_tick_stale_counts(j, now_ns, &fig.io, &fig.perf);
	fig.nsteps = j->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		fig.steps[i] = j->steps[i].r;
		if (!j->steps[i].r.ended)
			fig.steps[i].elapsed_s =
				(double)(now_ns - j->steps[i].start_ns) / 1e9;
	}
	ceems_agent_state_slot_update(a->state, j->slot, &fig);
}

CEEMS_TICK_PATH void
ceems_agent_tick_begin(struct ceems_agent *a, uint64_t now_ns)
{
	if (a->tick_open || now_ns <= a->last_tick_ns)
		return;
	a->tick_open = true;
	a->tick_seq++;
	a->tick_begin_ns = now_ns;
	a->tick_full = now_ns - a->last_usage_ns >= a->config.usage_interval_ns;
	a->tick_cursor = 0;
}

CEEMS_TICK_PATH bool
ceems_agent_tick_open(const struct ceems_agent *a)
{
	return a->tick_open;
}

CEEMS_TICK_PATH bool
ceems_agent_tick_read(struct ceems_agent *a, size_t max_jobs)
{
	size_t n = 0;

	if (!a->tick_open)
		return true;
	while (a->tick_cursor < a->njobs && n < max_jobs) {
		struct agent_job *j = a->jobs[a->tick_cursor++];

		if (j->rd.waiting && j->rd.seq == a->tick_seq)
			continue;
		read_job(a, j, a->tick_full);
		n++;
	}
	return a->tick_cursor >= a->njobs;
}

/* A tick split with an idle power not learned: what J's account, and
 * its series' next row, gain per watt of it once it is. */
static void
note_unlearned_tick(struct ceems_agent *a, struct agent_job *j,
		    const struct ceems_ledger_job_share *share, uint64_t now_ns)
{
	ceems_ledger_restate_add(&j->unlearned, share,
				 ceems_agent_intensity_tick_factor(a, now_ns));
	for (int d = 0; d < CEEMS_SERIES_RESTATED; d++)
		ceems_agent_series_unlearned(j->series, d,
					     ceems_ledger_restate_per_w(share, d, 1));
}

/* Keep J's CPU time at two ticks at least CEEMS_AGENT_TAIL_S apart: a
 * report's tail starts at the older (ceems_agent_tick_tail). */
CEEMS_TICK_PATH static void
mark_tail(struct agent_job *j, uint64_t now_ns)
{
	if (j->tail_mark_ns[1] != 0 &&
	    now_ns - j->tail_mark_ns[1] < CEEMS_AGENT_TAIL_S * UINT64_C(1000000000))
		return;
	j->tail_mark_ns[0] = j->tail_mark_ns[1];
	j->tail_cpu_s[0] = j->tail_cpu_s[1];
	j->tail_mark_ns[1] = now_ns;
	j->tail_cpu_s[1] = j->cpu_s;
}

/* Charge every job its share of the split tick (or a gap). */
static void
charge_jobs(struct ceems_agent *a, const struct ceems_ledger_node_tick *node,
	    int split, uint64_t now_ns)
{
	for (size_t i = 0; i < a->njobs; i++) {
		struct agent_job *j = a->jobs[i];

		if (j->gone && j->gone_ns < now_ns)
			continue;
		if (split < 0) {
			/* The jobs' CPU time was read all the same. */
			ceems_ledger_add_gap(&j->ledger, node->dt_s);
			ceems_agent_err_gap(a, j, node->dt_s);
			j->gap_s += node->dt_s;
			j->cpu_s += a->job_ticks[i].cpu_s;
			mark_tail(j, now_ns);
			continue;
		}
		ceems_agent_intensity_charge_tick(a, &j->ledger, &a->shares[i],
				  node->dt_s - a->job_ticks[i].absent_s, now_ns);
		ceems_agent_err_charge(a, j, &a->err_tick, &a->shares[i],
				       node->ngpus, node->dt_s);
		if (a->last_node.idle_power_unlearned[CEEMS_DOMAIN_PACKAGE] ||
		    a->last_node.idle_power_unlearned[CEEMS_DOMAIN_DRAM])
			note_unlearned_tick(a, j, &a->shares[i], now_ns);
		ceems_agent_gpu_charge(a, &j->gpu, node, &a->shares[i],
				 node->dt_s - a->job_ticks[i].absent_s);
		j->cpu_s += a->job_ticks[i].cpu_s;
		mark_tail(j, now_ns);
		ceems_agent_tick_split_to_steps(j, &a->shares[i], &a->job_ticks[i]);
	}
}

CEEMS_TICK_PATH void
ceems_agent_tick_end(struct ceems_agent *a, uint64_t now_ns)
{
	struct ceems_ledger_node_tick node;
	int ret;

	if (!a->tick_open)
		return;
	a->tick_open = false;
	if (now_ns <= a->last_tick_ns)
		return;
	/* The jobs no part read: registered since, or moved in the table
	 * by a deregistration. */
	for (size_t i = 0; i < a->njobs; i++)
		if (!a->jobs[i]->rd.waiting || a->jobs[i]->rd.seq != a->tick_seq)
			read_job(a, a->jobs[i], a->tick_full);
	/* The node's counters, at one instant; the energy read for jobs
	 * that ended since the last tick first. */
	node = a->pending;
	memset(&a->pending, 0, sizeof(a->pending));
	a->tick_ns = now_ns;
	node.dt_s = (double)(now_ns - a->last_tick_ns) / 1e9;
	ceems_agent_tick_collect_energy(a, now_ns, &node);
	ceems_agent_gpu_read_usage(a);
	collect_node_usage(a, &node);
	set_idle_power(a, &node);
	ceems_agent_err_idle(a, &node);
	a->last_node = node;
	ceems_ledger_carry_apply(&a->carry, &node);
	for (size_t i = 0; i < a->njobs; i++) {
		if (a->jobs[i]->rd.waiting && a->jobs[i]->rd.counts)
			a->jobs[i]->counts_ns = now_ns;
		apply_job(a, a->jobs[i], &a->job_ticks[i]);
		a->job_ticks[i].absent_s = ceems_agent_tick_job_absent_s(a, a->jobs[i]);
	}
	if (a->tick_full)
		a->last_usage_ns = now_ns;

	ret = ceems_ledger_split(&node, a->job_ticks, a->njobs, a->shares,
				 &a->last_tick);
	if (ret < 0)
		ceems_error("ledger: cannot split this tick (%s); recorded as a gap",
			    strerror(-ret));
	ceems_agent_err_tick(a, node.dt_s);
	charge_jobs(a, &node, ret, now_ns);
	/* A restatement's amounts go with a tick the status totals take
	 * (one that measured the domain); else they wait for the next. */
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		a->unlearned_idle_s[d] += a->last_tick.unlearned_idle_s[d];
		if (!a->last_tick.measured[d])
			continue;
		a->last_tick.restated_idle_j[d] = a->restated_idle_j[d];
		a->last_tick.restated_system_j[d] = a->restated_system_j[d];
		a->restated_idle_j[d] = a->restated_system_j[d] = 0;
	}
	ceems_ledger_carry_restore(&a->carry, &a->last_tick);
	ceems_ledger_carry_clear(&a->carry);
	for (size_t i = 0; i < a->njobs; i++) {
		struct agent_job *j = a->jobs[i];

		if (!(j->gone && j->gone_ns < now_ns))
			ceems_agent_tick_series_observe(a, j, now_ns);
	}
	ceems_agent_recover_snapshot_node(a, now_ns);
	ceems_agent_idle_store_save(a, now_ns, false);
	a->last_tick_ns = now_ns;
	a->ticks_ended++;
	/* Once the tick is whole: an adopted job is charged from the next. */
	ceems_agent_adopt_scan(a, now_ns);
}

void
ceems_agent_tick(struct ceems_agent *a, uint64_t now_ns)
{
	ceems_agent_tick_begin(a, now_ns);
	ceems_agent_tick_read(a, SIZE_MAX);
	ceems_agent_tick_end(a, now_ns);
}
