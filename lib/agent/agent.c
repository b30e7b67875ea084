/* agent.c - the node agent's engine: the jobs and their steps as the
 * requests see them (register, report, deregister, step start and end),
 * and the two-phase end (lib/agent/agent_finish.c).  Starting the engine is in
 * agent_open.c, a tick in agent_tick.c, a restart's restore in
 * agent_restore.c; what they share is in agent_internal.h. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
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
#include "base/tick_path.h"

void
ceems_agent_free_job(struct agent_job *j)
{
	ceems_agent_bpf_job_end(j);
	for (uint32_t i = 0; i < j->nsteps; i++)
		ceems_cgroup_stats_reader_close(j->steps[i].reader);
	ceems_cgroup_stats_reader_close(j->reader);
	ceems_agent_series_free(j->series);
	ceems_agent_perf_close(j);
	ceems_agent_extern_close(j);
	free(j->marks);
	ceems_hotmem_free(j);
}



struct agent_job *
ceems_agent_find_job(const struct ceems_agent *a, uint32_t jobid, size_t *index)
{
	for (size_t i = 0; i < a->njobs; i++)
		if (a->jobs[i]->spec.jobid == jobid) {
			if (index != NULL)
				*index = i;
			return a->jobs[i];
		}
	return NULL;
}

/* Open a job's cgroup and take its baseline.  0 or -errno. */
int
ceems_agent_attach_job(struct ceems_agent *a, struct agent_job *j)
{
	int err = 0;

	j->reader = ceems_cgroup_stats_reader_open(&j->spec.cgroup, &a->mounts,
					     a->cgroup_prefix, &err);
	if (j->reader == NULL)
		return err != 0 ? err : -ENOENT;
	if (ceems_cgroup_stats_reader_cpu_ino(j->reader, &j->cgroup_ino) < 0)
		j->cgroup_ino = 0;
	if (ceems_cgroup_stats_reader_read(j->reader, &j->usage) == 0 &&
	    (j->usage.present & CEEMS_CGF_CPU_USAGE)) {
		j->cpu_last_ns = j->usage.cpu_usage_ns;
		j->have_cpu = true;
	}
	j->alloc_cores = j->spec.alloc_cores;
	if (j->alloc_cores == 0 && (j->usage.present & CEEMS_CGF_CPUSET))
		j->alloc_cores = j->usage.ncpus_allocated;
	j->alloc_mem_bytes = j->spec.alloc_mem_bytes;
	if (j->alloc_mem_bytes == 0 && (j->usage.present & CEEMS_CGF_MEM_LIMIT) &&
	    j->usage.mem_limit_bytes != CEEMS_CGROUP_UNLIMITED)
		j->alloc_mem_bytes = j->usage.mem_limit_bytes;
	return 0;
}

bool
ceems_agent_spec_valid(const struct ceems_agent_job_spec *s)
{
	if (s->jobid == 0 || s->cgroup.version == CEEMS_CGROUP_NONE ||
	    s->start_time < 0 || s->start_time > CEEMS_AGENT_START_TIME_MAX)
		return false;
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++)
		if (!isfinite(s->gpu_share[g]) || s->gpu_share[g] < 0 ||
		    s->gpu_share[g] > 1)
			return false;
	if (s->ngpu_ids > CEEMS_AGENT_MAX_GPU_IDS)
		return false;
	for (uint32_t i = 0; i < s->ngpu_ids; i++)
		if (memchr(s->gpu_ids[i], '\0', sizeof(s->gpu_ids[i])) == NULL)
			return false;
	return true;
}

/* Job J was running from FROM_NS, before the agent could measure it
 * (until NOW_NS): a gap of its record, as an agent's downtime is. */
static void
missed_gap(const struct ceems_agent *a, struct agent_job *j, uint64_t from_ns,
	   uint64_t now_ns)
{
	double missed_s = (double)(now_ns - from_ns) / 1e9;
	struct timespec ts;
	double now_unix;

	clock_gettime(CLOCK_REALTIME, &ts);
	now_unix = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	ceems_ledger_add_gap(&j->ledger, missed_s);
	ceems_agent_err_gap(a, j, missed_s);
	j->gap_s += missed_s;
	j->gaps[0].start = now_unix - missed_s;
	j->gaps[0].end = now_unix;
	j->ngaps = 1;
}

/* The first registration of job J, adopted without a plugin: what the
 * plugin knows (the owner, the memory the job holds) replaces what the
 * agent found.  0, as for a new job: the plugin then tells Slurm's start
 * time and the job's GPUs (plugins/job_start.c). */
static int
take_plugin_spec(struct ceems_agent *a, struct agent_job *j,
		 const struct ceems_agent_job_spec *spec)
{
	j->adopted = false;
	j->spec.uid = spec->uid;
	if (spec->alloc_mem_bytes > 0) {
		j->spec.alloc_mem_bytes = spec->alloc_mem_bytes;
		j->alloc_mem_bytes = spec->alloc_mem_bytes;
	}
	if (a->state != NULL)
		ceems_agent_state_slot_identity(a->state, j->slot, &j->spec);
	ceems_info("job %u (adopted): its plugin registered it (uid %u)",
		   j->spec.jobid, j->spec.uid);
	return 0;
}

static int register_new(struct ceems_agent *a,
			const struct ceems_agent_job_spec *spec,
			uint64_t registered_ns, uint64_t now_ns);

int
ceems_agent_register(struct ceems_agent *a,
		     const struct ceems_agent_job_spec *spec, uint64_t now_ns)
{
	struct agent_job *j;

	if (!ceems_agent_spec_valid(spec))
		return -EINVAL;
	if ((j = ceems_agent_find_job(a, spec->jobid, NULL)) != NULL) {
		/* The step that registered the job first (the extern step)
		 * may not have seen the user's --ceems-series.  The series
		 * starts from the job's registration, as if it had been on
		 * from there: its first row holds what was charged since,
		 * so the rows still add up to the job's totals. */
		bool options = false;

		if (spec->series && j->series == NULL) {
			struct ceems_job_ledger none;

			ceems_job_figures_ledger_init(&none);
			j->series = ceems_agent_series_for_job(&a->config, true,
							 now_ns, &none, 0);
			ceems_agent_series_backdate(j->series, j->registered_ns);
		}
		if (spec->series && !j->spec.series) {
			j->spec.series = true;
			options = true;
		}
		ceems_agent_learn(a, j, spec);
		if (spec->perf && !j->spec.perf) {
			j->spec.perf = true;
			options = true;
			ceems_agent_perf_hardware(a, j);
		}
		/* Kept for a restarted agent, as the registration is. */
		if (options && a->state != NULL)
			ceems_agent_state_slot_options(a->state, j->slot, &j->spec);
		if (j->adopted)
			return take_plugin_spec(a, j, spec);
		return -EEXIST;
	}
	/* A late word about a run that has ended: nothing to register. */
	if (spec->start_time > 0 &&
	    ceems_agent_finish_same_run(a->finish, spec->jobid, spec->start_time))
		return -EEXIST;
	return register_new(a, spec, now_ns, now_ns);
}

/* Job SPEC, new to the agent, registered at REGISTERED_NS (NOW_NS, or
 * earlier for a job adopted after it started). */
static int
register_new(struct ceems_agent *a, const struct ceems_agent_job_spec *spec,
	     uint64_t registered_ns, uint64_t now_ns)
{
	struct agent_job *j;
	int ret;

	/* The same id again (a requeued job) while the last run waits for
	 * its release or slurmctld's word: that run's record is written
	 * now, as that run (slurmctld, asked later, would speak of this
	 * one). */
	ceems_agent_finish_new_run(a->finish, spec->jobid);
	if (a->njobs >= a->config.max_jobs)
		return -ENOSPC;
	/* No tick: the job's CPU baseline is read now, and the next tick
	 * charges what it holds for the part of the tick it was there. */
	j = ceems_hotmem_calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	ceems_agent_job_set_spec(j, spec);
	j->slot = -1;
	j->extern_pidfd = -1;
	j->registered_ns = registered_ns;
	j->tick_from_ns = now_ns;
	ceems_job_figures_ledger_init(&j->ledger);
	ceems_energy_err_account_init(&j->err);
	if (registered_ns < now_ns)
		missed_gap(a, j, registered_ns, now_ns);
	ret = ceems_agent_attach_job(a, j);
	if (ret < 0) {
		ceems_agent_free_job(j);
		return ret;
	}
	j->cpu_base_ns = j->cpu_last_ns;
	ceems_agent_gpu_resolve(a, spec, &j->gpu);
	ceems_agent_bpf_job_start(a, j);
	ceems_agent_perf_open_job(a, j);
	j->counts_ns = now_ns;
	j->series = ceems_agent_series_for_job(&a->config, spec->series, now_ns,
					 &j->ledger, j->cpu_s);
	if (a->state != NULL) {
		j->slot = ceems_agent_state_slot_claim(a->state, spec, registered_ns);
		ceems_agent_tick_save_job(a, j, now_ns);
		/* Its figures and the node's counters of one tick on disk
		 * soon: until then a restart recovers nothing of it. */
		a->checkpoint_wanted = true;
	}
	a->jobs[a->njobs++] = j;
	ceems_agent_adopt_learn(a, &spec->cgroup);
	ceems_info("job %u registered (uid %u, %u cores, %llu MiB)",
		   spec->jobid, spec->uid, j->alloc_cores,
		   (unsigned long long)(j->alloc_mem_bytes >> 20));
	return 0;
}

int
ceems_agent_register_adopted(struct ceems_agent *a,
			     const struct ceems_agent_job_spec *spec,
			     uint64_t missed_ns, uint64_t now_ns)
{
	if (!ceems_agent_spec_valid(spec))
		return -EINVAL;
	if (ceems_agent_find_job(a, spec->jobid, NULL) != NULL)
		return -EEXIST;
	int r = register_new(a, spec, missed_ns < now_ns ? now_ns - missed_ns : 0,
			     now_ns);

	if (r == 0)
		ceems_agent_find_job(a, spec->jobid, NULL)->adopted = true;
	return r;
}

/* What every tick touches of a job (struct agent_job's head, up to its
 * GPUs' count) stays within its first page's worth of bytes. */
_Static_assert(offsetof(struct agent_job, gpu) + sizeof(uint32_t) <= 4096,
	       "the tick's fields of struct agent_job spread past 4 KiB");

void
ceems_agent_job_set_spec(struct agent_job *j, const struct ceems_agent_job_spec *spec)
{
	j->spec = *spec;
	j->spec_gpu_share = false;
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++)
		if (spec->gpu_share[g] != 0)
			j->spec_gpu_share = true;
}

static void fill_report(const struct ceems_agent *, const struct agent_job *,
			uint64_t, struct ceems_agent_job_report *);

/* Between ticks (ledger_carry.h): the node's figures since the last
 * tick, for one job's split at NOW_NS.  The energy is read now and kept
 * for the next tick; the busy time is only looked at (the next tick
 * reads it again); cores, memory and idle power are the last tick's.
 * Net of the jobs that already left.  False when no time has passed. */
static bool
partial_node(struct ceems_agent *a, uint64_t now_ns,
	     struct ceems_ledger_node_tick *node)
{
	struct ceems_node_cpu cpu;

	if (now_ns <= a->last_tick_ns)
		return false;
	ceems_agent_tick_collect_energy(a, now_ns, &a->pending);
	*node = a->pending;
	node->dt_s = (double)(now_ns - a->last_tick_ns) / 1e9;
	node->node_cores = a->last_node.node_cores;
	node->node_mem_used_bytes = a->last_node.node_mem_used_bytes;
	node->node_mem_total_bytes = a->last_node.node_mem_total_bytes;
	memcpy(node->idle_power_w, a->last_node.idle_power_w,
	       sizeof(node->idle_power_w));
	memcpy(node->idle_power_unlearned, a->last_node.idle_power_unlearned,
	       sizeof(node->idle_power_unlearned));
	if (ceems_proc_stats_read_cpu(a->proc, &cpu) == 0 && a->have_node_cpu &&
	    cpu.busy_ns >= a->node_cpu.busy_ns) {
		node->node_busy_cpu_s =
			(double)(cpu.busy_ns - a->node_cpu.busy_ns) / 1e9;
		node->node_cores = cpu.ncpus;
	}
	ceems_ledger_carry_apply(&a->carry, node);
	return true;
}

/* Job J leaves at NOW_NS: its part of the tick so far, split for it
 * alone and added to its ledger (and its steps', and its series),
 * remembered so that the next tick splits the rest.  Its reading here
 * may find its cgroup just removed (J is then gone): it is still charged
 * for this last part, as a tick would, so its series is too. */
static void
leave_now(struct ceems_agent *a, struct agent_job *j, uint64_t now_ns)
{
	struct ceems_ledger_node_tick node;
	struct ceems_ledger_job_tick t;
	struct ceems_ledger_job_share share;
	struct ceems_ledger_tick tick;
	double present_s;

	if (j->gone || !partial_node(a, now_ns, &node))
		return;
	a->tick_ns = now_ns;
	ceems_agent_tick_collect_job(a, j, false, &t);
	t.absent_s = ceems_agent_tick_job_absent_s(a, j);
	present_s = node.dt_s - t.absent_s;
	if (present_s <= 0)
		return;
	if (ceems_ledger_split(&node, &t, 1, &share, &tick) < 0) {
		ceems_ledger_add_gap(&j->ledger, present_s);
		ceems_agent_err_gap(a, j, present_s);
		j->gap_s += present_s;
		j->cpu_s += t.cpu_s;	/* read all the same */
		ceems_agent_tick_series_observe(a, j, now_ns);
		return;
	}
	ceems_agent_intensity_charge_tick(a, &j->ledger, &share, present_s, now_ns);
	ceems_agent_err_charge(a, j, &a->err_pending, &share, node.ngpus,
			       node.dt_s);
	ceems_agent_gpu_charge(a, &j->gpu, &node, &share, present_s);
	j->cpu_s += t.cpu_s;
	ceems_agent_tick_split_to_steps(j, &share, &t);
	ceems_ledger_carry_add(&a->carry, &t, node.dt_s, &share);
	/* The carry is not checkpointed: no recovery over this interval. */
	ceems_agent_recover_snapshot_job_left(a);
	ceems_agent_tick_series_observe(a, j, now_ns);
}

int
ceems_agent_report_now(struct ceems_agent *a, uint32_t jobid,
		       uint64_t now_ns, struct ceems_agent_job_report *out)
{
	const struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	struct ceems_ledger_node_tick node;
	struct ceems_ledger_job_tick t;
	struct ceems_ledger_job_share share;
	struct ceems_ledger_tick tick;
	double present_s;

	if (j == NULL)
		return -ENOENT;
	fill_report(a, j, now_ns > a->last_tick_ns ? now_ns : a->last_tick_ns,
		    out);
	if (j->gone || j->reader == NULL || !partial_node(a, now_ns, &node))
		return 0;
	/* The job's CPU time since the last tick, looked at only. */
	memset(&t, 0, sizeof(t));
	t.alloc_cores = j->alloc_cores;
	t.alloc_mem_bytes = j->alloc_mem_bytes;
	ceems_agent_tick_job_gpu_shares(a, j, t.gpu_share);
	if (j->usage.present & CEEMS_CGF_MEM_RSS)
		t.rss_bytes = j->usage.mem_rss_bytes;
	if (ceems_cgroup_stats_reader_read_some(j->reader, CEEMS_CGF_CPU_USAGE,
					  &a->scratch) == 0 &&
	    (a->scratch.present & CEEMS_CGF_CPU_USAGE) && j->have_cpu &&
	    a->scratch.cpu_usage_ns >= j->cpu_last_ns)
		t.cpu_s = (double)(a->scratch.cpu_usage_ns - j->cpu_last_ns) / 1e9;
	t.absent_s = ceems_agent_tick_job_absent_s(a, j);
	present_s = node.dt_s - t.absent_s;
	if (present_s <= 0 || ceems_ledger_split(&node, &t, 1, &share, &tick) < 0)
		return 0;
	ceems_agent_intensity_charge_tick(a, &out->ledger, &share, present_s, now_ns);
	ceems_agent_err_report_partial(a, j, &share, node.ngpus, node.dt_s,
				       &out->err);
	out->cpu_s += t.cpu_s;
	out->have_tail = false;
	ceems_agent_end_figures_tail(j, now_ns, out);
	return 0;
}

static void
fill_report(const struct ceems_agent *a, const struct agent_job *j,
	    uint64_t asof_ns, struct ceems_agent_job_report *out)
{
	memset(out, 0, sizeof(*out));
	out->jobid = j->spec.jobid;
	out->uid = j->spec.uid;
	out->alloc_cores = j->alloc_cores;
	out->alloc_mem_bytes = j->alloc_mem_bytes;
	ceems_agent_perf_report(a, j, &out->perf);
	out->elapsed_s = (double)((j->gone ? j->gone_ns : asof_ns) -
				  j->registered_ns) / 1e9;
	out->cpu_s = j->cpu_s;
	out->gap_s = j->gap_s;
	out->cgroup_gone = j->gone;
	ceems_agent_end_figures_tail(j, j->gone ? j->gone_ns : asof_ns, out);
	out->usage = j->usage;
	ceems_agent_end_figures_usage(j, &out->usage);
	out->ledger = j->ledger;
	ceems_energy_err_report_fill(&j->err, &out->err);
	out->ngaps = j->ngaps;
	memcpy(out->gaps, j->gaps, sizeof(out->gaps));
	out->recovered_s = j->recovered_s;
	out->nrecovered = j->nrecovered;
	memcpy(out->recovered, j->recovered, sizeof(out->recovered));
	ceems_agent_gpu_fill_report(a, &j->gpu, out);
	ceems_agent_bpf_fill(a, j, &out->io);
	out->nsteps = j->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		out->steps[i] = j->steps[i].r;
		if (!j->steps[i].r.ended)
			out->steps[i].elapsed_s =
				(double)(asof_ns - j->steps[i].start_ns) / 1e9;
	}
}

/* Unix seconds of monotonic time T, as of NOW_NS. */
static int64_t
unix_at(uint64_t t, uint64_t now_ns)
{
	int64_t now = (int64_t)time(NULL);
	int64_t ago = t < now_ns ? (int64_t)((now_ns - t) / 1000000000u) : 0;

	return ago < now ? now - ago : now;
}

/* The identity and times of a record of job J that the agent may
 * write: Slurm's start time when the plugin sent it, else the job's
 * registration (lib/agent/agent_finish.c says which in the record); its end,
 * never before its start (slurmctld's clock may be ahead of this
 * node's). */
static void
finish_times(const struct agent_job *j, uint64_t end_ns, uint64_t now_ns,
	     struct agent_finish_job *fj)
{
	fj->start_from_slurm = j->spec.start_time > 0;
	fj->start_time = fj->start_from_slurm ? j->spec.start_time :
			 unix_at(j->registered_ns, now_ns);
	fj->end_time = unix_at(end_ns, now_ns);
	if (fj->end_time < fj->start_time)
		fj->end_time = fj->start_time;
	memcpy(fj->cluster, j->spec.cluster, sizeof(fj->cluster));
	fj->have_status = j->have_status;
	fj->status = j->status;
	if (j->marks != NULL)
		fj->marks = *j->marks;
}

/* The job leaves the ticks; its report and times go to the finishing
 * table (lib/agent/agent_finish.c) until the plugin releases it. */
static void
hand_to_finish(struct ceems_agent *a, const struct agent_job *j,
	       const struct ceems_agent_job_report *report, uint64_t now_ns)
{
	/* The state slot is kept, marked finishing with the final report,
	 * until the release: an agent restarted meanwhile still writes the
	 * record if none comes, and never takes the job for a live one
	 * (its cgroup gone, it would reap it into a second record under
	 * another start time). */
	struct agent_finish_job fj = {
		.slot = a->state != NULL ? j->slot : -1,
	};

	finish_times(j, j->gone ? j->gone_ns : now_ns, now_ns, &fj);
	/* Its marks since the last checkpoint, for a restart before its
	 * record is written. */
	if (j->marks_dirty)
		ceems_agent_marks_save(a->config.state_dir, j->spec.jobid, j->marks);
	if (a->state != NULL)
		ceems_agent_state_slot_finishing(a->state, fj.slot, report, fj.start_time,
				     fj.end_time);
	ceems_agent_finish_add(a->finish, report, &fj, now_ns);
}

int
ceems_agent_deregister(struct ceems_agent *a, uint32_t jobid,
		       uint64_t now_ns, struct ceems_agent_job_report *out)
{
	const struct ceems_agent_job_report *final;
	struct agent_job *j;
	size_t i;

	/* Asked again (a plugin retrying, the epilog): the same report. */
	if ((final = ceems_agent_finish_find(a->finish, jobid)) != NULL) {
		*out = *final;
		out->series = NULL;	/* sent with the first reply only */
		return 0;
	}
	if (ceems_agent_find_job(a, jobid, NULL) == NULL)
		return -ENOENT;
	j = ceems_agent_find_job(a, jobid, &i);
	if (j == NULL)
		return -ENOENT;
	/* Its part of the tick so far, split for it alone (and into its
	 * series). */
	leave_now(a, j, now_ns);
	/* A last full reading: peak memory and IO as of the job's end. */
	ceems_agent_tick_full_reading(a, j);
	ceems_agent_end_figures_job(a, j);
	ceems_agent_bpf_job_read(a, j, false);
	if (j->series != NULL) {
		struct ceems_series_counts counts;

		/* Read after its last row: the row takes what they add. */
		ceems_agent_tick_series_counts(a, j, &counts);
		ceems_agent_series_last_counts(j->series, &counts);
	}
	fill_report(a, j, now_ns > a->last_tick_ns ? now_ns : a->last_tick_ns,
		    out);
	out->series = NULL;
	hand_to_finish(a, j, out, now_ns);
	/* The series goes with the final report and into the record the
	 * agent writes: the finishing table owns it until then.  Should
	 * the table not hold the job, it stays the agent's until the next
	 * deregistration, so that the caller need not free it. */
	ceems_agent_series_free(a->handed_out);
	a->handed_out = NULL;
	if (ceems_agent_finish_set_series(a->finish, jobid, j->series) < 0)
		a->handed_out = j->series;
	out->series = j->series;
	j->series = NULL;
	a->jobs[i] = a->jobs[--a->njobs];
	ceems_agent_free_job(j);
	ceems_info("job %u deregistered: %.1f J in %.1f s",
		   jobid, ceems_job_figures_ledger_total_j(&out->ledger), out->elapsed_s);
	return 0;
}

static bool
step_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n >= CEEMS_STEP_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		      (id[i] >= 'a' && id[i] <= 'z') || id[i] == '+'))
			return false;
	return true;
}

static struct agent_step *
find_step(struct agent_job *j, const char *id)
{
	for (uint32_t i = 0; i < j->nsteps; i++)
		if (strcmp(j->steps[i].r.id, id) == 0)
			return &j->steps[i];
	return NULL;
}

/* Open the cgroup of step ID of job J.  NULL when it cannot be found. */
struct ceems_cgroup_reader *
ceems_agent_open_step_reader(struct ceems_agent *a, struct agent_job *j, const char *id)
{
	struct ceems_cgroup_dirs dirs;
	char subdir[CEEMS_STEP_ID_MAX + 8];
	int err = 0;

	snprintf(subdir, sizeof(subdir), "step_%s", id);
	if (ceems_cgroup_stats_dirs_for_job(&j->spec.cgroup, &a->mounts,
				      a->cgroup_prefix, subdir, &dirs) < 0)
		return NULL;
	return ceems_cgroup_stats_reader_open_dirs(&dirs, &err);
}

int
ceems_agent_step_start(struct ceems_agent *a, uint32_t jobid,
		       const char *step_id, uint64_t now_ns)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	struct agent_step *st;

	if (j == NULL)
		return -ENOENT;
	if (!step_id_valid(step_id))
		return -EINVAL;
	if (find_step(j, step_id) != NULL)
		return -EEXIST;
	if (j->nsteps >= CEEMS_AGENT_MAX_STEPS)
		return -ENOSPC;
	/* No tick: the step's CPU baseline is read now. */
	st = &j->steps[j->nsteps];
	memset(st, 0, sizeof(*st));
	snprintf(st->r.id, sizeof(st->r.id), "%s", step_id);
	st->start_ns = now_ns;
	st->reader = ceems_agent_open_step_reader(a, j, step_id);
	/* cgroup v2: the step's slurmstepd, in the job's cgroup, is not the
	 * job's CPU time: its cgroup is followed from now on. */
	if (j->reader != NULL && !j->gone)
		ceems_cgroup_stats_reader_rescan(j->reader);
	ceems_agent_perf_step(a, j);
	if (st->reader == NULL)
		ceems_warning("job %u step %s: cgroup not found; the step gets no figures of its own",
			      jobid, step_id);
	else
		ceems_agent_tick_collect_step(a, st, true);
	/* The step's first task and its slurmstepd (which the fork hook
	 * then follows into the step's other tasks). */
	ceems_agent_bpf_job_read(a, j, true);
	j->nsteps++;
	/* The step in the state file at the next tick's end. */
	a->checkpoint_wanted = true;
	return 0;
}

int
ceems_agent_step_tasks(struct ceems_agent *a, uint32_t jobid,
		       const char *step_id, uint32_t tasks)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	struct agent_step *st;

	if (j == NULL || (st = find_step(j, step_id)) == NULL)
		return -ENOENT;
	if (tasks == 0 || tasks > UINT16_MAX)
		return -EINVAL;
	st->r.tasks = (uint16_t)tasks;
	st->r.have_tasks = true;
	a->checkpoint_wanted = true;
	return 0;
}

int
ceems_agent_step_end(struct ceems_agent *a, uint32_t jobid,
		     const char *step_id, uint64_t now_ns,
		     struct ceems_agent_step_report *out)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	struct agent_step *st;

	if (j == NULL)
		return -ENOENT;
	if ((st = find_step(j, step_id)) == NULL) {
		/* A step that started before its job was adopted: its job's
		 * peak and OOM kills as of its end all the same. */
		ceems_agent_end_figures_job(a, j);
		return -ENOENT;
	}
	if (!st->r.ended) {
		ceems_agent_tick_note_job_cpu(a, j);
		/* No tick: its CPU time up to now is read, and the next tick
		 * gives it its part of the job's energy by it. */
		if (st->reader != NULL) {
			ceems_agent_tick_collect_step(a, st, false);
			st->r.cpu_s += st->tick_cpu_s;
			st->end_pending = true;
		}
		/* A last reading of the step, and of its job while its
		 * cgroup is there: memory peaks and OOM kills. */
		ceems_agent_end_figures_step(a, st);
		ceems_agent_end_figures_job(a, j);
		/* The job's counts as of now, for the summary printed at
		 * the step's end (light ticks do not read them). */
		ceems_agent_bpf_job_read(a, j, false);
		ceems_agent_perf_read(j);
		j->counts_ns = now_ns;
		ceems_cgroup_stats_reader_close(st->reader);
		st->reader = NULL;
		st->r.ended = true;
		st->r.elapsed_s = (double)(now_ns - st->start_ns) / 1e9;
		if (strcmp(step_id, "batch") == 0)
			j->batch_end_ns = now_ns;
		ceems_agent_tick_save_job(a, j, a->last_tick_ns);
		/* Those figures are of the last tick, the node's counters on
		 * disk of the last checkpoint: a restart recovers the job only
		 * once the two are of one tick again. */
		a->checkpoint_wanted = true;
	}
	*out = st->r;
	return 0;
}

int
ceems_agent_report(const struct ceems_agent *a, uint32_t jobid,
		   struct ceems_agent_job_report *out)
{
	const struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);

	if (j == NULL)
		return -ENOENT;
	fill_report(a, j, a->last_tick_ns, out);
	return 0;
}

size_t
ceems_agent_njobs(const struct ceems_agent *a)
{
	return a->njobs;
}

CEEMS_TICK_PATH uint64_t
ceems_agent_tick_period_ns(const struct ceems_agent *a)
{
	const double configured[2] = { a->config.idle_power_package_w,
				       a->config.idle_power_dram_w };
	const int domains[2] = { CEEMS_DOMAIN_PACKAGE, CEEMS_DOMAIN_DRAM };

	if (a->config.idle_interval_ns <= a->config.interval_ns ||
	    a->njobs > 0 || ceems_agent_finish_count(a->finish) > 0 ||
	    a->ticks_ended < 2)
		return a->config.interval_ns;
	/* Quiet ticks teach the idle power: they come at the interval
	 * until it is learned, as a node's first minutes need. */
	for (int i = 0; i < 2; i++)
		if (configured[i] < 0 && a->last_tick.measured[domains[i]] &&
		    a->idle[domains[i]].n < IDLE_MIN_SAMPLES)
			return a->config.interval_ns;
	return a->config.idle_interval_ns;
}

CEEMS_TICK_PATH const struct ceems_ledger_tick *
ceems_agent_last_tick(const struct ceems_agent *a)
{
	return &a->last_tick;
}

CEEMS_TICK_PATH bool
ceems_agent_checkpoint_due(const struct ceems_agent *a, uint64_t now_ns)
{
	uint64_t every = a->config.checkpoint_interval_ns;
	uint64_t slack = a->config.interval_ns / 2;

	if (every == 0 || a->checkpoint_wanted || a->checkpoint_ns == 0 ||
	    now_ns < a->checkpoint_ns)
		return true;
	return now_ns - a->checkpoint_ns + slack >= every;
}

int
ceems_agent_checkpoint(struct ceems_agent *a, uint64_t now_ns)
{
	ceems_agent_adopt_save(a);
	if (a->state == NULL)
		return -ENOENT;
	/* As of the last tick: the figures and the node's counters of one
	 * moment, which is what a restarted agent recovers from.  Before
	 * this agent's first tick the file holds the last agent's, which
	 * are that still. */
	if (a->snap.tick_ns == 0)
		return 0;
	a->checkpoint_ns = now_ns;
	a->checkpoint_wanted = false;
	for (size_t i = 0; i < a->njobs; i++) {
		struct agent_job *j = a->jobs[i];

		/* A job registered since the last tick: as of then. */
		ceems_agent_tick_save_job(a, j, j->tick_from_ns > a->last_tick_ns ?
			       j->tick_from_ns : a->last_tick_ns);
		if (j->marks_dirty) {
			ceems_agent_marks_save(a->config.state_dir, j->spec.jobid,
					       j->marks);
			j->marks_dirty = false;
		}
	}
	ceems_agent_recover_save_node(a);
	/* A write that failed was logged once by the state file, and is
	 * retried at every checkpoint: not an error to log each time. */
	return 0;
}


/* ---- the two-phase end (lib/agent/agent_finish.c) ---- */

int
ceems_agent_release(struct ceems_agent *a, uint32_t jobid)
{
	return ceems_agent_finish_release(a->finish, jobid);
}

int
ceems_agent_finishing_meta(struct ceems_agent *a, uint32_t jobid,
			   const struct ceems_job_meta *meta)
{
	return ceems_agent_finish_set_meta(a->finish, jobid, meta);
}

int
ceems_agent_reply_lost(struct ceems_agent *a, uint32_t jobid)
{
	return ceems_agent_finish_expire(a->finish, 0, jobid) > 0 ? 0 : -ENOENT;
}

void
ceems_agent_set_gone_hook(struct ceems_agent *a,
			  void (*hook)(void *arg, uint32_t jobid), void *arg)
{
	a->gone_hook = hook;
	a->gone_arg = arg;
}

size_t
ceems_agent_nfinishing(const struct ceems_agent *a)
{
	return ceems_agent_finish_count(a->finish);
}

/* A job whose cgroup has been gone for reap_grace was never
 * deregistered: its plugin and the epilog are not coming. */
static void
reap(struct ceems_agent *a, size_t i, uint64_t now_ns)
{
	struct ceems_agent_job_report *report = malloc(sizeof(*report));
	struct agent_job *j = a->jobs[i];
	struct agent_finish_job fj = {
		.slot = a->state != NULL ? j->slot : -1,
	};
	char why[160];

	if (report == NULL)
		return;		/* tried again at the next sweep */
	finish_times(j, j->gone_ns, now_ns, &fj);
	fill_report(a, j, a->last_tick_ns, report);
	report->series = j->series;	/* written now, freed with the job */
	snprintf(why, sizeof(why), "its cgroup had been gone for %.0f s and "
		 "no deregistration came (its steps and the epilog ended "
		 "without one)", (double)(now_ns - j->gone_ns) / 1e9);
	ceems_info("job %u: reaped, %s", j->spec.jobid, why);
	ceems_agent_finish_now(a->finish, report, &fj, why);
	free(report);
	a->jobs[i] = a->jobs[--a->njobs];
	ceems_agent_free_job(j);
}

CEEMS_TICK_PATH int
ceems_agent_sweep(struct ceems_agent *a, uint64_t now_ns)
{
	int n = ceems_agent_finish_expire(a->finish, now_ns, 0);

	for (size_t i = 0; i < a->njobs;) {
		struct agent_job *j = a->jobs[i];

		/* Its extern step killed (its cgroup, which that step
		 * removes, lingers, or went before it: agent_extern.c),
		 * seen by its slurmstepd's exit, or by its batch script's
		 * end long ago: slurmctld's word ends it. */
		if (!j->end_asked && a->gone_hook != NULL &&
		    (ceems_agent_extern_lost(j) ||
		     (!j->gone && j->batch_end_ns > 0 &&
		      now_ns - j->batch_end_ns >= a->config.reap_grace_ns))) {
			ceems_info("job %u: its extern step ended without "
				   "ending the job; slurmctld's word on its "
				   "end is asked for", j->spec.jobid);
			ceems_agent_extern_ask_end(a, j, now_ns);
		}
		/* Gone for reap_grace, and for as long since slurmctld's
		 * word was asked for: no one else will end it.  Not while
		 * its extern step runs: that step deregisters it. */
		if (j->gone && now_ns >= j->gone_ns &&
		    now_ns - j->gone_ns >= a->config.reap_grace_ns &&
		    (!j->end_asked ||
		     now_ns - j->end_asked_ns >= a->config.reap_grace_ns) &&
		    !ceems_agent_extern_alive(j)) {
			reap(a, i, now_ns);
			n++;
			continue;	/* I now holds the last job */
		}
		i++;
	}
	return n;
}
