/* agent_restore.c - the node agent's jobs read back from its state file
 * after a restart: each job is attached again with its figures.  The
 * time the agent was down is accounted by the first tick when the
 * counters allow it (agent_recover.c), and recorded as recovered; else
 * it is a gap in the job's accounting.
 *
 * Separate from the job requests (agent.c): a restored job has not come
 * through register, and its spec is read from disk, so it is checked
 * again here. */
#include "config.h"

#include <errno.h>
#include <math.h>
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
#include "base/hotmem.h"
#include "sources/hwmon.h"
#include "model/ledger_carry.h"
#include "base/log.h"
#include "sources/pm_counters.h"
#include "sources/proc_stats.h"
#include "sources/rapl.h"

/* Add the interval START to END (Unix s) to a list of at most
 * CEEMS_AGENT_MAX_GAPS: a later one extends the last. */
static void
add_interval(struct ceems_agent_gap *list, uint32_t *n, double start,
	     double end)
{
	if (*n < CEEMS_AGENT_MAX_GAPS) {
		list[*n].start = start;
		list[*n].end = end;
		(*n)++;
	} else {
		list[CEEMS_AGENT_MAX_GAPS - 1].end = end;
	}
}

struct restore_ctx {
	struct ceems_agent *agent;
	uint64_t now_ns;
	/* The node's verdict on recovering the interval since the
	 * checkpoint, and that checkpoint's tick. */
	enum ceems_recover_verdict node;
	uint64_t snap_tick_ns;
};

/* Whether job J, just attached again, can have the interval since its
 * checkpointed figures FIG recovered. */
static enum ceems_recover_verdict
job_verdict(const struct restore_ctx *ctx, const struct agent_job *j,
	    const struct state_figures *fig)
{
	struct ceems_recover_job facts = {
		.figures_tick_ns = fig->tick_ns,
		.node_tick_ns = ctx->snap_tick_ns,
		.have_cpu_then = fig->have_cpu == 1,
		.have_cpu_now = j->have_cpu,
		.cpu_then_ns = fig->cpu_last_ns,
		.cpu_now_ns = j->cpu_last_ns,
		.cgroup_ino_then = fig->cgroup_ino,
		.cgroup_ino_now = j->cgroup_ino,
		.gone = j->gone,
	};

	if (ctx->node != CEEMS_RECOVER_OK)
		return ctx->node;
	return ceems_agent_recover_job_verdict(&facts);
}

/* The DOWN_S seconds up to now: recovered (the next tick charges the
 * job from its checkpoint, CPU time included), or a gap. */
static void
account_down_time(const struct restore_ctx *ctx, struct agent_job *j,
		  const struct state_figures *fig, double down_s,
		  enum ceems_recover_verdict v)
{
	struct timespec ts;
	double now_unix;

	j->tick_from_ns = ctx->now_ns;
	if (down_s <= 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	now_unix = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	if (v == CEEMS_RECOVER_OK) {
		j->tick_from_ns = fig->tick_ns;
		j->cpu_last_ns = fig->cpu_last_ns;
		j->recovered_s += down_s;
		add_interval(j->recovered, &j->nrecovered, now_unix - down_s,
			     now_unix);
		return;
	}
	ceems_ledger_add_gap(&j->ledger, down_s);
	j->gap_s += down_s;
	add_interval(j->gaps, &j->ngaps, now_unix - down_s, now_unix);
}

/* Make every string of a spec read back from disk end inside its buffer. */
static void
terminate_spec_strings(struct ceems_agent_job_spec *s)
{
	s->cgroup.unified[sizeof(s->cgroup.unified) - 1] = '\0';
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		s->cgroup.v1[c][sizeof(s->cgroup.v1[c]) - 1] = '\0';
	s->cluster[sizeof(s->cluster) - 1] = '\0';
	for (uint32_t i = 0; i < CEEMS_AGENT_MAX_GPU_IDS; i++)
		s->gpu_ids[i][sizeof(s->gpu_ids[i]) - 1] = '\0';
}

/* The job's GPU accounts as saved, when they still name the same
 * devices (a device lost, the rest are numbered anew); else its GPUs
 * matched again (their figures start over). */
static void
restore_gpus(struct ceems_agent *a, struct agent_job *j,
	     const struct agent_gpu_job *saved)
{
	bool fits = ceems_agent_gpu_job_sane(saved);

	for (uint32_t k = 0; fits && k < saved->n; k++)
		fits = (size_t)saved->acc[k].device < a->gpus.n &&
		       saved->acc[k].device_key ==
		       ceems_agent_gpu_device_key(a, (size_t)saved->acc[k].device);
	if (fits && saved->n > 0)
		j->gpu = *saved;
	else
		ceems_agent_gpu_resolve(a, &j->spec, &j->gpu);
}

static int
restore_job(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	    uint64_t registered_ns, const struct state_figures *fig)
{
	struct restore_ctx *ctx = arg;
	struct ceems_agent *a = ctx->agent;
	struct agent_job *j;
	enum ceems_recover_verdict verdict;
	double down_s;

	if (a->njobs >= a->config.max_jobs || !ceems_agent_spec_valid(spec) ||
	    ceems_agent_find_job(a, spec->jobid, NULL) != NULL ||
	    fig->tick_ns > ctx->now_ns || registered_ns > fig->tick_ns)
		return 1;
	j = ceems_hotmem_calloc(1, sizeof(*j));
	if (j == NULL)
		return 1;
	ceems_agent_job_set_spec(j, spec);
	terminate_spec_strings(&j->spec);
	j->slot = slot;
	j->extern_pidfd = -1;	/* its slurmstepd unknown after a restart */
	j->registered_ns = registered_ns;
	j->ledger = fig->ledger;
	/* Its energy's error over the earlier agent's time is not kept. */
	ceems_energy_err_account_init(&j->err);
	j->err.known = false;
	/* Its ticks split by an earlier agent before the idle power was
	 * learned are not here to restate. */
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		j->unlearned.partial[d] = j->ledger.idle_unlearned[d];
	restore_gpus(a, j, &fig->gpu);
	j->cpu_s = fig->cpu_s;
	j->gap_s = fig->gap_s;
	j->ngaps = fig->ngaps;
	memcpy(j->gaps, fig->gaps, sizeof(j->gaps));
	j->recovered_s = fig->recovered_s;
	j->nrecovered = fig->nrecovered;
	memcpy(j->recovered, fig->recovered, sizeof(j->recovered));
	down_s = (double)(ctx->now_ns - fig->tick_ns) / 1e9;
	if (ceems_agent_attach_job(a, j) < 0) {
		/* The job ended while the agent was down: keep its figures
		 * for the deregistration that will ask for them. */
		j->gone = true;
		j->gone_ns = fig->tick_ns;
	}
	verdict = job_verdict(ctx, j, fig);
	account_down_time(ctx, j, fig, down_s, verdict);
	j->cpu_base_ns = fig->cpu_base_ns;
	j->nsteps = fig->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		struct agent_step *st = &j->steps[i];

		st->r = fig->steps[i];
		st->r.id[sizeof(st->r.id) - 1] = '\0';
		st->start_ns = st->r.elapsed_s * 1e9 < (double)fig->tick_ns ?
			       fig->tick_ns - (uint64_t)(st->r.elapsed_s * 1e9) : 0;
		st->r.elapsed_s = st->r.ended ? st->r.elapsed_s : 0;
		if (!st->r.ended && !j->gone)
			st->reader = ceems_agent_open_step_reader(a, j, st->r.id);
	}
	/* The rows before the restart are not kept (the record's gaps say
	 * when the agent was down): the series restarts here. */
	j->series = ceems_agent_series_for_job(&a->config, j->spec.series,
					 j->tick_from_ns, &j->ledger, j->cpu_s);
	/* The kernel freed the earlier agent's eBPF maps and perf events
	 * with it: counting starts again, added to what it checkpointed;
	 * the time since, counted by none, is said in the report (whatever
	 * the energy's verdict: no counter covers it). */
	ceems_agent_bpf_resume(a, j, &fig->io, down_s > 0 ? down_s : 0);
	ceems_agent_perf_resume(a, j, &fig->perf, down_s > 0 ? down_s : 0);
	j->counts_ns = ctx->now_ns;
	if (j->series != NULL) {
		struct ceems_series_counts counts;

		/* Its rows count from here, as its energy's do. */
		ceems_agent_tick_series_counts(a, j, &counts);
		ceems_agent_series_set_counts(j->series, &counts);
	}
	/* The work it marked before the restart, if it marked any. */
	{
		struct ceems_marks m;

		if (ceems_agent_marks_load(a->config.state_dir, spec->jobid, &m) == 0 &&
		    m.n > 0 && (j->marks = malloc(sizeof(*j->marks))) != NULL)
			*j->marks = m;
	}
	a->jobs[a->njobs++] = j;
	ceems_agent_adopt_learn(a, &j->spec.cgroup);
	if (verdict == CEEMS_RECOVER_OK)
		ceems_info("job %u restored from state: the %.1f s the agent was down are recovered from the counters",
			   spec->jobid, down_s);
	else
		ceems_info("job %u restored from state: %.1f s not accounted while the agent was down (%s)",
			   spec->jobid, down_s, ceems_agent_recover_verdict_name(verdict));
	/* A recovered job's slot keeps the figures of the checkpoint, the
	 * time its ledger reaches: the next tick's checkpoint moves both. */
	if (verdict != CEEMS_RECOVER_OK)
		ceems_agent_tick_save_job(a, j, ctx->now_ns);
	return 0;
}

/* A job deregistered before the restart, never released: back to the
 * finishing table, never to the live jobs.  Its release may have been
 * lost with the old agent, so it gets a whole finish_grace from now for
 * a retried release or deregistration; then the agent writes its record
 * (a second one beside the plugin's has the same identity when the
 * plugin's metadata was kept: the upsert makes it one). */
static int
restore_finishing(void *arg, int slot,
		  const struct ceems_agent_job_spec *spec,
		  const struct ceems_agent_job_report *report,
		  int64_t start_time, int64_t end_time,
		  const struct ceems_job_meta *meta)
{
	struct restore_ctx *ctx = arg;
	struct agent_finish_job fj = {
		.slot = slot,
		.start_time = start_time,
		.end_time = end_time,
		/* hand_to_finish kept Slurm's start time when it had it. */
		.start_from_slurm = spec->start_time > 0 &&
				    spec->start_time == start_time,
	};

	memcpy(fj.cluster, spec->cluster, sizeof(fj.cluster));
	fj.cluster[sizeof(fj.cluster) - 1] = '\0';
	/* Its marks, kept at its deregistration, for its record. */
	(void)ceems_agent_marks_load(ctx->agent->config.state_dir, report->jobid,
				     &fj.marks);

	if (ceems_agent_finish_add(ctx->agent->finish, report, &fj, ctx->now_ns) < 0)
		return 0;	/* written at once, its slot released */
	if (meta != NULL)
		ceems_agent_finish_set_meta(ctx->agent->finish, report->jobid, meta);
	ceems_info("job %u restored from state as finishing: its record waits for the plugin's release",
		   report->jobid);
	return 0;
}

int
ceems_agent_restore(struct ceems_agent *a, uint64_t now_ns)
{
	struct restore_ctx ctx = { a, now_ns, CEEMS_RECOVER_NO_CHECKPOINT, 0 };
	const struct state_node *snap;

	if (a->state == NULL)
		return 0;
	a->last_tick_ns = now_ns;
	snap = ceems_agent_state_file_node(a->state);
	ctx.snap_tick_ns = snap->tick_ns;
	/* Jobs that started before it were the agent's before, or
	 * registered with it. */
	if (snap->tick_ns != 0 && snap->tick_ns < now_ns)
		ceems_agent_adopt_away_since(a, snap->tick_ns);
	ctx.node = ceems_agent_recover_node(a, snap, ceems_agent_state_file_boot_id(a->state),
				      now_ns);
	if (ctx.node != CEEMS_RECOVER_OK && snap->tick_ns != 0)
		ceems_info("the interval since the last checkpoint cannot be recovered (%s): it is a gap for the restored jobs",
			   ceems_agent_recover_verdict_name(ctx.node));
	ceems_agent_state_file_restore_finishing(a->state, restore_finishing, &ctx);
	return ceems_agent_state_file_restore(a->state, restore_job, &ctx);
}
