/* agent.h - the node agent's engine: every energy source and every
 * registered job sampled on one timer, each tick's energy split by the
 * ledger, per-job state checkpointed so that an agent restart loses only
 * the interval it was down.  No sockets, signals or timers here:
 * tools/agent/ceems-agent.c drives it, and tests drive it directly on fixture
 * trees (every filesystem root comes from the configuration). */
#ifndef CEEMS_AGENT_H
#define CEEMS_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/conf.h"
#include "model/job.h"
#include "model/job_spec.h"
#include "model/ledger.h"
#include "model/marks.h"
#include "model/measure.h"

/* The IO and network of a job whose agent restarted: BEFORE counted by
 * the earlier agent (its checkpoint), NOW by this one since, DOWN_S the
 * time between that neither counted.  What both measured is summed, with
 * DOWN_S added to unmeasured_s; what either did not is absent, with
 * absent_why saying why (lib/agent/agent_bpf.c). */
void ceems_agent_bpf_io_resume(const struct ceems_agent_io_report *before,
			   const struct ceems_agent_io_report *now,
			   double down_s, struct ceems_agent_io_report *out);

struct ceems_agent;

/* Open the sources and readers CONFIG enables, at monotonic time NOW_NS.
 * A node without any energy source still accounts usage (the ledger
 * records the domains as not measured).  NULL with ERR filled when the
 * configuration cannot work (unknown emission zone, unreadable /proc). */
struct ceems_agent *ceems_agent_open(const struct ceems_config *config,
				     uint64_t now_ns, char *err,
				     size_t err_size);
void ceems_agent_open_close(struct ceems_agent *agent);

/* Start measuring at NOW_NS, once open has returned and before any job
 * is registered or restored: opening (eBPF programs tried type by type,
 * GPU libraries, the state file) takes a while after the sources' first
 * reading, and a counter that wraps faster than that would make the
 * first tick a stall gap for every job in it.  The sources and the
 * node's CPU time are read again as the first tick's start.  -EBUSY
 * once a job is held or a tick has run, -EINVAL for a time before the
 * open's (nothing is changed then). */
int ceems_agent_open_start(struct ceems_agent *agent, uint64_t now_ns);

/* Fix the wall clock of the ticks to their monotonic time + OFFSET_NS
 * (the intensity series is in wall-clock time).  By default the agent
 * takes the offset from the clocks each time it looks at the series. */
void ceems_agent_intensity_set_wall_offset(struct ceems_agent *agent,
				 int64_t offset_ns);

/* How often the energy sources must be sampled so that no counter can
 * wrap twice unseen between ticks of PERIOD_NS: PERIOD_NS, or shorter
 * when a counter needs it (then call ceems_agent_open_sample_sources on
 * a timer of that period). */
uint64_t ceems_agent_open_source_interval_within_ns(const struct ceems_agent *agent,
						    uint64_t period_ns);
/* The same for ticks of the main interval. */
uint64_t ceems_agent_open_source_interval_ns(const struct ceems_agent *agent);
void ceems_agent_open_sample_sources(struct ceems_agent *agent, uint64_t now_ns);

/* One main tick: sample every source and job, split the energy since the
 * previous tick, add each job's share to its ledger.  Finishes a tick
 * begun in parts. */
void ceems_agent_tick(struct ceems_agent *agent, uint64_t now_ns);

/* The same tick in parts, so that requests (of any kind) are served
 * between them: ceems_agent_tick_begin, ceems_agent_tick_read until it
 * returns true, ceems_agent_tick_end.  The parts read the jobs' cgroup
 * counters, at most MAX_JOBS jobs each; the end reads the node's
 * counters (energy, busy time) at one instant, splits that energy over
 * the jobs by what each used up to its reading, and charges them: the
 * ledger balances for every tick whatever came between.  A job's usage
 * after its reading falls in the next tick. */
#define CEEMS_AGENT_TICK_PART_JOBS 32
void ceems_agent_tick_begin(struct ceems_agent *agent, uint64_t now_ns);
bool ceems_agent_tick_read(struct ceems_agent *agent, size_t max_jobs);
void ceems_agent_tick_end(struct ceems_agent *agent, uint64_t now_ns);
/* True between ceems_agent_tick_begin and ceems_agent_tick_end. */
bool ceems_agent_tick_open(const struct ceems_agent *agent);

/* Register a job: its CPU baseline is read now; the next tick charges
 * what it holds for the part of that tick it was there (no tick is taken:
 * that would read every job, milliseconds on a node with 1000).  Returns 0, -EEXIST, -ENOSPC (max_jobs
 * reached), -ENOENT (its cgroup cannot be found), -EINVAL.  A job
 * registered already keeps its registration (-EEXIST), but learns from
 * SPEC the start time and cluster it did not know: the plugin sends
 * them again once Slurm has told it (plugins/job_start.c). */
int ceems_agent_register(struct ceems_agent *agent,
			 const struct ceems_agent_job_spec *spec,
			 uint64_t now_ns);

/* Fill OUT with the job's final report and forget the job.  Its part of
 * the time since the last tick is split for it alone (ledger_carry.h),
 * without reading the other jobs; the next tick splits the rest.
 * OUT->series, when the job kept one, stays the agent's until its next
 * deregistration or close.  Returns 0 or -ENOENT. */
int ceems_agent_deregister(struct ceems_agent *agent, uint32_t jobid,
			   uint64_t now_ns,
			   struct ceems_agent_job_report *out);

/* ---- The two-phase end (lib/agent/agent_finish.c) ----
 * ceems_agent_deregister keeps the final report (the job leaves the
 * ticks; its state slot keeps the report, marked finishing, and a restart
 * restores it as finishing) until the plugin, having stored the
 * record, releases the job.  A repeated deregistration returns the same
 * report.  Without a release within config finish_grace, the agent
 * writes the record to the spool itself (finalized_by "agent"). */

/* The plugin stored the record.  0, or -ENOENT (not finishing). */
int ceems_agent_release(struct ceems_agent *agent, uint32_t jobid);

/* The plugin's metadata of a finishing job, for the record the agent
 * may have to write.  0 or -ENOENT. */
int ceems_agent_finishing_meta(struct ceems_agent *agent, uint32_t jobid,
			       const struct ceems_job_meta *meta);

/* The final report could not be sent: write the record now.  0 or
 * -ENOENT. */
int ceems_agent_reply_lost(struct ceems_agent *agent, uint32_t jobid);

/* Call about once a tick: writes the records of finishing jobs past
 * finish_grace, and reaps the jobs whose cgroup has been gone for
 * reap_grace without a deregistration (record written by the agent, slot
 * freed).  Returns how many records the agent wrote. */
int ceems_agent_sweep(struct ceems_agent *agent, uint64_t now_ns);

/* Watch the slurmstepd PID that started job JOBID's extern step: its
 * exit without a deregistration is seen by the sweep (agent_extern.c). */
void ceems_agent_extern_watch(struct ceems_agent *agent, uint32_t jobid,
			      pid_t pid);

size_t ceems_agent_nfinishing(const struct ceems_agent *agent);

/* ---- The agent as the only writer of records (lib/agent/agent_end.c) ---- */

/* Is an end word for job JOBID whose Slurm start time is START_TIME (0
 * unknown) of an earlier run than the one the agent holds now?  True
 * when the agent holds JOBID alive (not finishing) with Slurm's start
 * time later than START_TIME, or not known yet while the run that
 * started at START_TIME has its record written: slurmctld's word on a
 * requeued run came after the new run registered, and must not end
 * it. */
bool ceems_agent_end_of_earlier_run(struct ceems_agent *agent,
				    uint32_t jobid, int64_t start_time);

/* Step STEP_ID of job JOBID ended after the extern step ended the job
 * (a time limit or a cancel kills every step at once): slurmctld's word,
 * if it came meanwhile and waited for the step, writes the record now.
 * 1 when a record was written. */
int ceems_agent_end_step_late(struct ceems_agent *agent, uint32_t jobid,
			      const char *step_id);

/* Slurm's start time of job JOBID's run that the agent holds or whose
 * record waits, 0 when not known: it goes with the request for
 * slurmctld's word on the run's end. */
int64_t ceems_agent_end_run_start(const struct ceems_agent *agent,
				  uint32_t jobid);

/* The carbon-aware advice of job JOBID whose report is REPORT, at
 * monotonic NOW_NS, by the node's intensity series and the site's
 * settings (agent_end.c); its dependency is not known here.  OUT
 * says no series where the series does not cover the job's time.  0
 * or -EINVAL. */
struct ceems_advice;
struct ceems_advice_opts;
int ceems_agent_end_advice(const struct ceems_agent *agent, uint32_t jobid,
			   const struct ceems_agent_job_report *report,
			   uint64_t now_ns, struct ceems_advice *out);
/* The advice of the job of record REC by the series S under C's
 * settings, by Slurm's start time and the dependency slurmctld listed:
 * kept in the record, with its note when worth one. */
struct ceems_intensity_series;
struct ceems_job_record;
void ceems_agent_advice_record(const struct ceems_intensity_series *s,
			       const struct ceems_config *c,
			       struct ceems_job_record *rec);
/* The site's settings of the advice in config C into O. */
void ceems_agent_advice_opts(const struct ceems_config *c,
			     struct ceems_advice_opts *o);

/* The plugin's word on the end of job JOBID, with the job's metadata
 * META (a deregistration with BY; call it after ceems_agent_deregister).
 * BY "extern": the extern step ended the job, with what slurmctld said at
 * its start; the record waits for the epilog's word (what slurmctld
 * decided at the end: state, exit code) until finish_grace, then is
 * written finalized_by "extern".  BY "epilog": the record is written now
 * (the spool; the replay takes it into PostgreSQL), the epilog's state
 * and exit code over the extern step's, finalized_by "extern" when the
 * extern step ended the job, else "epilog".  0, -ENOENT, or -errno when
 * not even the spool took it (logged whole). */
int ceems_agent_end(struct ceems_agent *agent, uint32_t jobid,
		    const struct ceems_job_meta *meta, const char *by,
		    uint64_t now_ns);

/* The plugin's word on the end of job JOBID (BY, META as for
 * ceems_agent_end) when the agent does not hold it: the job was never
 * registered here (the agent was not running when it started), so it
 * gets a record of META alone, finalized_by "agent", figures absent,
 * coverage 0, a "not-measured" note saying so; by "extern", that record
 * waits for the epilog's word as a measured one does.  Never a second
 * record of a job whose record was written lately.  OUT gets the
 * report of a job not measured, for the reply.  0 (the record written
 * or waiting), 1 (written already), -EEXIST (the agent holds the job:
 * ceems_agent_end), or -errno when not even the spool took it. */
int ceems_agent_end_unknown(struct ceems_agent *agent, uint32_t jobid,
			    const struct ceems_job_meta *meta, const char *by,
			    uint64_t now_ns,
			    struct ceems_agent_job_report *out);

/* The final report of job JOBID when it is finishing (ended, its record
 * not yet written), its series left out.  0 or -ENOENT. */
int ceems_agent_end_final_report(const struct ceems_agent *agent, uint32_t jobid,
			     struct ceems_agent_job_report *out);

/* A step of job JOBID ended with the wait status STATUS: the job's
 * record takes its exit code and state from it (a failed step's stands)
 * when the metadata the plugin sent have none (slurmctld is asked at the
 * job's start, before it decides them).  0 or -ENOENT. */
int ceems_agent_end_step_status(struct ceems_agent *agent, uint32_t jobid,
			    int status);

/* Turn the notes of the note folder (lib/record/job_note.h) into records: the
 * job's own, with its figures, when the agent still holds it; none when
 * its record was written lately; else a record of the note's metadata
 * alone, not measured.  At most CEEMS_NOTES_PER_PASS a call (each costs
 * a record's fsync), the next call going on after the last of them.
 * Returns how many notes were taken, or -errno when the folder cannot be
 * read. */
#define CEEMS_NOTES_PER_PASS 16
int ceems_agent_end_take_notes(struct ceems_agent *agent, uint64_t now_ns);

/* Whether the last call left notes in the folder: more than a batch, or
 * notes that could not be taken yet (read again at the next call). */
bool ceems_agent_end_notes_left(const struct ceems_agent *agent);

/* A step of a registered job starts: its cgroup is the job's directory
 * plus step_<ID> (Slurm's naming on v1 and v2).  Returns 0, -ENOENT (no
 * such job), -EEXIST (already started), -ENOSPC (too many steps),
 * -EINVAL.  A step whose cgroup
 * cannot be opened is still recorded (figures: elapsed only). */
int ceems_agent_step_start(struct ceems_agent *agent, uint32_t jobid,
			   const char *step_id, uint64_t now_ns);

/* The step's tasks on this node (1..65535), as its slurmstepd counted
 * them: the record's steps[].tasks.  Returns 0, -ENOENT (no such job or
 * step), -EINVAL (out of range). */
int ceems_agent_step_tasks(struct ceems_agent *agent, uint32_t jobid,
			   const char *step_id, uint32_t tasks);

/* A step ends: a last reading of its cgroup (CPU time, memory peak), and
 * OUT filled with its figures (kept in the job's report); its energy
 * since the last tick comes with the next one.  0, -ENOENT. */
int ceems_agent_step_end(struct ceems_agent *agent, uint32_t jobid,
			 const char *step_id, uint64_t now_ns,
			 struct ceems_agent_step_report *out);

/* The job's report as of NOW_NS: the last tick's, with its part of the
 * time since split for it alone and not kept (the next tick splits that
 * time for every job).  0 or -ENOENT. */
int ceems_agent_report_now(struct ceems_agent *agent, uint32_t jobid,
			   uint64_t now_ns,
			   struct ceems_agent_job_report *out);

/* The job's report as of the last tick.  0 or -ENOENT. */
int ceems_agent_report(const struct ceems_agent *agent, uint32_t jobid,
		       struct ceems_agent_job_report *out);

size_t ceems_agent_njobs(const struct ceems_agent *agent);

/* ---- A job's own account of its work (agent_marks.c, model/marks.h) ---- */

/* Whether a process of UID whose /proc/PID/cgroup reads PROC_CGROUP may
 * mark job JOBID: it must be of the job's owner (or root) and inside
 * the job's cgroup, the one the job registered with.  0, -ENOENT (no
 * such job), -EPERM, with ERR saying why. */
int ceems_agent_marks_admit(const struct ceems_agent *agent, uint32_t jobid,
			    uid_t uid, const char *proc_cgroup, char *err,
			    size_t err_size);

/* One mark of job JOBID at NOW_NS (ceems_marks_apply, TAG as there),
 * within the job's rate (CEEMS_MARKS_RATE).  0, -ENOENT, -EBUSY (over
 * its rate: the mark is dropped), -ENOMEM, or ceems_marks_apply's
 * refusal, with ERR. */
int ceems_agent_marks_apply(struct ceems_agent *agent, uint32_t jobid,
			    const char *name, const char *unit, const char *tag,
			    enum ceems_marks_mode mode, double value,
			    uint64_t now_ns, char *err, size_t err_size);

/* The work job JOBID reported, registered or finishing (its final
 * figures kept for its record); NULL when it marked none. */
const struct ceems_marks *ceems_agent_marks_get(const struct ceems_agent *agent,
						uint32_t jobid);

/* A job's marks in STATE_DIR across an agent restart: saved at the
 * checkpoints after they changed and at the job's deregistration (M
 * NULL: nothing), loaded with the job's state (0, or -errno: none kept),
 * forgotten with the job's record. */
void ceems_agent_marks_save(const char *state_dir, uint32_t jobid,
			    const struct ceems_marks *m);
int ceems_agent_marks_load(const char *state_dir, uint32_t jobid,
			   struct ceems_marks *m);
void ceems_agent_marks_forget(const char *state_dir, uint32_t jobid);

/* The users' earlier runs (model/work_history.h), from STATE_DIR/
 * work-history, read at the agent's open (a file that is not there is
 * an empty history). */
void ceems_agent_marks_history_load(struct ceems_agent *agent);

/* Job JOBID, named NAME, has ended with the final figures REPORT and
 * the work MARKS (NULL: none): each counter adds its energy per unit to
 * the user's history, written to STATE_DIR/work-history.  Nothing for a
 * job that marked none or has no energy, or whose end was heard before
 * (a job's end may come from its extern step and then from slurmctld). */
void ceems_agent_marks_job_ended(struct ceems_agent *agent, uint32_t jobid,
				 const struct ceems_marks *marks,
				 const char *name,
				 const struct ceems_agent_job_report *report);

/* For each counter job JOBID of UID, named NAME, marked: the medians of
 * the same user's earlier runs of NAME on this node, into OUT (n 0: no
 * counter has any). */
void ceems_agent_marks_history(const struct ceems_agent *agent, uint32_t jobid,
			       uint32_t uid, const char *name,
			       struct ceems_marks_history *out);

/* HOOK(ARG, JOBID) when a tick finds that a registered job's cgroup is
 * gone, or a sweep that its extern slurmstepd is gone (with no other
 * step running) or that its batch step ended reap_grace ago: no step
 * deregistered it (the extern step was killed), so the caller may ask
 * slurmctld how it ended (ceems-jobinfo's word then ends it). */
void ceems_agent_set_gone_hook(struct ceems_agent *agent,
			       void (*hook)(void *arg, uint32_t jobid),
			       void *arg);

/* The tick the agent needs now, ns: idle_interval while it holds no job
 * (none registered, none finishing) and every measured domain whose
 * idle power it learns has learned it from quiet ticks (those come at
 * the interval until then); else the interval.  Energy counters that
 * could wrap within it are sampled on their own timer
 * (ceems_agent_open_source_interval_ns). */
uint64_t ceems_agent_tick_period_ns(const struct ceems_agent *agent);

/* The last tick's split, for checks and logs. */
const struct ceems_ledger_tick *
ceems_agent_last_tick(const struct ceems_agent *agent);

/* Write every job's figures and the node's counters, as of the last
 * tick, to the state file in the configured state_dir.  0, or -ENOENT
 * when there is no state file; a failed write (a full disk) is logged
 * once by the state file, and retried at the next checkpoint. */
int ceems_agent_checkpoint(struct ceems_agent *agent, uint64_t now_ns);

/* Whether a tick ending at NOW_NS writes a checkpoint: every tick with
 * checkpoint_interval 0, else once the interval has passed (give or
 * take half a tick, so that a 10 s interval is every tenth 1 s tick),
 * and at once after a job or a step came or left (the checkpoint on
 * disk then recovers nothing of the job, or nothing at all, until a new
 * one is written). */
bool ceems_agent_checkpoint_due(const struct ceems_agent *agent, uint64_t now_ns);

/* Re-register the jobs of a checkpoint written by an earlier agent.  The
 * time between that checkpoint and NOW_NS is recovered from the
 * cumulative counters when that is unambiguous (the next tick spans it;
 * lib/agent/agent_recover.c), else recorded in each job's ledger as a gap.  A missing file restores nothing (0); a damaged or
 * foreign one is set aside as state.bad and logged.  Returns the number
 * of jobs restored (finishing jobs, which go back to waiting for their
 * release, not counted), or -errno. */
int ceems_agent_restore(struct ceems_agent *agent, uint64_t now_ns);

#endif
