/* agent_restore.c - the node agent's jobs read back from its state file
 * after a restart: each job is attached again with its figures, and the
 * time the agent was down is recorded as a gap in the job's accounting.
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

#include "agent.h"
#include "agent_internal.h"
#include "agent_series.h"
#include "agent_finish.h"
#include "agent_state.h"
#include "emissions.h"
#include "energy.h"
#include "fileio.h"
#include "hwmon.h"
#include "ledger_carry.h"
#include "log.h"
#include "pm_counters.h"
#include "proc_stats.h"
#include "rapl.h"

/* Record that the job was not accounted from START to END (Unix s). */
static void
add_gap_interval(struct agent_job *j, double start, double end)
{
	if (j->ngaps < CEEMS_AGENT_MAX_GAPS) {
		j->gaps[j->ngaps].start = start;
		j->gaps[j->ngaps].end = end;
		j->ngaps++;
	} else {
		j->gaps[CEEMS_AGENT_MAX_GAPS - 1].end = end;
	}
}

struct restore_ctx {
	struct ceems_agent *agent;
	uint64_t now_ns;
};

/* Make every string of a spec read back from disk end inside its buffer. */
static void
terminate_spec_strings(struct ceems_agent_job_spec *s)
{
	s->cgroup.unified[sizeof(s->cgroup.unified) - 1] = '\0';
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		s->cgroup.v1[c][sizeof(s->cgroup.v1[c]) - 1] = '\0';
	s->cluster[sizeof(s->cluster) - 1] = '\0';
}

static int
restore_job(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	    uint64_t registered_ns, const struct state_figures *fig)
{
	struct restore_ctx *ctx = arg;
	struct ceems_agent *a = ctx->agent;
	struct agent_job *j;
	double down_s;

	if (a->njobs >= a->config.max_jobs || !agent_spec_valid(spec) ||
	    agent_find_job(a, spec->jobid, NULL) != NULL ||
	    fig->tick_ns > ctx->now_ns || registered_ns > fig->tick_ns)
		return 1;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return 1;
	j->spec = *spec;
	terminate_spec_strings(&j->spec);
	j->slot = slot;
	j->registered_ns = registered_ns;
	j->ledger = fig->ledger;
	j->cpu_s = fig->cpu_s;
	j->gap_s = fig->gap_s;
	j->ngaps = fig->ngaps;
	memcpy(j->gaps, fig->gaps, sizeof(j->gaps));
	down_s = (double)(ctx->now_ns - fig->tick_ns) / 1e9;
	if (down_s > 0) {
		struct timespec ts;
		double now_unix;

		ceems_job_ledger_add_gap(&j->ledger, down_s);
		j->gap_s += down_s;
		clock_gettime(CLOCK_REALTIME, &ts);
		now_unix = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		add_gap_interval(j, now_unix - down_s, now_unix);
	}
	if (agent_attach_job(a, j) < 0) {
		/* The job ended while the agent was down: keep its figures
		 * for the deregistration that will ask for them. */
		j->gone = true;
		j->gone_ns = fig->tick_ns;
	}
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
			st->reader = agent_open_step_reader(a, j, st->r.id);
	}
	/* The rows before the restart are not kept (the record's gaps say
	 * when the agent was down): the series restarts here. */
	j->series = ceems_series_for_job(&a->config, j->spec.series,
					 ctx->now_ns, &j->ledger, j->cpu_s);
	a->jobs[a->njobs++] = j;
	ceems_info("job %u restored from state (%.1f s not accounted while the agent was down)",
		   spec->jobid, down_s);
	agent_save_job(a, j, ctx->now_ns);
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

	if (agent_finish_add(ctx->agent->finish, report, &fj, ctx->now_ns) < 0)
		return 0;	/* written at once, its slot released */
	if (meta != NULL)
		agent_finish_set_meta(ctx->agent->finish, report->jobid, meta);
	ceems_info("job %u restored from state as finishing: its record waits for the plugin's release",
		   report->jobid);
	return 0;
}

int
ceems_agent_restore(struct ceems_agent *a, uint64_t now_ns)
{
	struct restore_ctx ctx = { a, now_ns };

	if (a->state == NULL)
		return 0;
	a->last_tick_ns = now_ns;
	state_file_restore_finishing(a->state, restore_finishing, &ctx);
	return state_file_restore(a->state, restore_job, &ctx);
}
