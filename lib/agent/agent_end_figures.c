/* agent_end_figures.c - what a job's report needs read before its end
 * takes it away: at each step's end, the step's and the job's memory
 * peaks and OOM kills (Slurm removes a step's cgroups as it ends, and
 * the job's before the extern step deregisters it; on cgroup v1 the
 * kills are counted only in the killed process's own cgroup), and how
 * busy the job was over its last minute or two, for a job killed at its
 * time limit. */
#include "config.h"

#include <stdint.h>

#include "agent/agent_internal.h"
#include "cgroup/cgroup_stats.h"

/* A step's end: its memory peak and OOM kills, without touching its CPU
 * figures.  The kills are read now or never: Slurm removes the step's
 * cgroups (and on cgroup v1 the task cgroups that hold the counts) as
 * the step ends. */
void
ceems_agent_end_figures_step(struct ceems_agent *a, struct agent_step *st)
{
	struct ceems_cgroup_stats *cs = &a->scratch;
	uint64_t kills;

	if (st->reader == NULL)
		return;
	if (ceems_cgroup_stats_reader_oom_kills(st->reader, &kills) == 0) {
		st->r.have_oom_kills = true;
		st->r.oom_kills = kills > UINT32_MAX ? UINT32_MAX : (uint32_t)kills;
	}
	if (ceems_cgroup_stats_reader_read_some(st->reader, CEEMS_CGF_MEM_PEAK, cs) < 0)
		return;
	if (cs->present & CEEMS_CGF_MEM_PEAK) {
		st->r.have_mem_peak = true;
		st->r.mem_peak_bytes = cs->mem_peak_bytes;
	}
}

/* A step's end: the job's memory peak and the OOM kills of its whole
 * tree as of now.  A job killed at its memory limit between two full
 * readings would otherwise keep the peak of the last one (or of its
 * registration, for a job killed in its first second), and on cgroup v1
 * the kills of its other steps' tasks would not be seen. */
void
ceems_agent_end_figures_job(struct ceems_agent *a, struct agent_job *j)
{
	struct ceems_cgroup_stats *cs = &a->scratch;
	uint64_t kills;

	if (j->gone || j->reader == NULL)
		return;
	if (ceems_cgroup_stats_reader_oom_kills(j->reader, &kills) == 0 &&
	    (!j->have_end_oom_kills || kills > j->end_oom_kills)) {
		j->have_end_oom_kills = true;
		j->end_oom_kills = kills;
	}
	if (ceems_cgroup_stats_reader_read_some(j->reader, CEEMS_CGF_MEM_PEAK, cs) == 0 &&
	    (cs->present & CEEMS_CGF_MEM_PEAK) &&
	    (!j->have_end_peak || cs->mem_peak_bytes > j->end_peak_bytes)) {
		j->have_end_peak = true;
		j->end_peak_bytes = cs->mem_peak_bytes;
	}
}

/* Raise *PEAK (present in *USAGE or not) to VALUE. */
static void
raise_peak(struct ceems_cgroup_stats *usage, uint64_t value)
{
	if (!(usage->present & CEEMS_CGF_MEM_PEAK) ||
	    value > usage->mem_peak_bytes) {
		usage->mem_peak_bytes = value;
		usage->present |= CEEMS_CGF_MEM_PEAK;
	}
}

/* The job's usage as its report gives it: its last full reading, with
 * the memory peak and OOM kills no lower than what its steps' ends
 * read.  A step's memory is charged to its job too, so the job's peak
 * is at least each step's; the job's kills are at least its steps' sum
 * (cgroup v2 counts a kill in every cgroup above it, so the job's own
 * count is already that sum; cgroup v1 only in the killed process's). */
void
ceems_agent_end_figures_usage(const struct agent_job *j,
			   struct ceems_cgroup_stats *usage)
{
	uint64_t steps_kills = 0, kills;
	bool have_kills = j->have_end_oom_kills;

	if (j->have_end_peak)
		raise_peak(usage, j->end_peak_bytes);
	for (uint32_t i = 0; i < j->nsteps; i++) {
		const struct ceems_agent_step_report *st = &j->steps[i].r;

		if (st->have_mem_peak)
			raise_peak(usage, st->mem_peak_bytes);
		if (st->have_oom_kills) {
			steps_kills += st->oom_kills;
			have_kills = true;
		}
	}
	if (!have_kills)
		return;
	kills = j->have_end_oom_kills && j->end_oom_kills > steps_kills ?
		j->end_oom_kills : steps_kills;
	if (!(usage->present & CEEMS_CGF_OOM_KILLS) || kills > usage->oom_kills) {
		usage->oom_kills = kills;
		usage->present |= CEEMS_CGF_OOM_KILLS;
	}
}

/* OUT's tail as of ASOF_NS: the CPU time since the older of the job's
 * two marks (agent_tick.c mark_tail), over CEEMS_AGENT_TAIL_S to
 * CEEMS_AGENT_TAIL_MAX_S.  OUT's cpu_s must be set first. */
void
ceems_agent_end_figures_tail(const struct agent_job *j, uint64_t asof_ns,
		      struct ceems_agent_job_report *out)
{
	double s;

	if (j->tail_mark_ns[0] == 0 || asof_ns <= j->tail_mark_ns[0])
		return;
	s = (double)(asof_ns - j->tail_mark_ns[0]) / 1e9;
	if (s < CEEMS_AGENT_TAIL_S || s > CEEMS_AGENT_TAIL_MAX_S)
		return;
	out->have_tail = true;
	out->tail_s = (uint16_t)(s + 0.5);
	out->tail_cpu_s = (float)(out->cpu_s - j->tail_cpu_s[0] > 0 ?
				  out->cpu_s - j->tail_cpu_s[0] : 0);
}
