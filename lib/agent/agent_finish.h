/* agent_finish.h - the agent's side of a job's end, so that no record is
 * lost (design invariant 3): the agent is the only writer of records.  A
 * deregistration hands the final figures to the plugin but keeps the job
 * here, "finishing" (and in its state slot, so that an agent restart
 * does not lose it: see hand_to_finish in agent.c and
 * ceems_agent_restore), until ceems-jobinfo brings slurmctld's final
 * word or finish_grace runs out; then the agent writes the record to the
 * spool, finalized_by "extern" or "epilog".  A job whose cgroup vanished
 * without a deregistration, or one an older plugin never released, is
 * written finalized_by "agent".  Internal to libceems: lib/agent/agent.c
 * drives it. */
#ifndef CEEMS_AGENT_FINISH_H
#define CEEMS_AGENT_FINISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "base/conf.h"
#include "model/job.h"
#include "model/marks.h"

struct state_file;
struct agent_finish;

/* At most MAX finishing jobs are held (the oldest is finalized to make
 * room).  STATE may be NULL.  NULL on allocation failure. */
struct agent_finish *ceems_agent_finish_new(const struct ceems_config *config,
				      struct state_file *state, size_t max);
void ceems_agent_finish_free(struct agent_finish *f);

/* What the agent knows of a job it may have to write the record of. */
struct agent_finish_job {
	int slot;		/* state slot, released at the end; -1 none */
	/* Unix seconds: Slurm's start time when the plugin sent it
	 * (START_FROM_SLURM), else the job's registration with the agent,
	 * which a record of the plugin would not have. */
	int64_t start_time;
	int64_t end_time;	/* Unix seconds its cgroup went, or now */
	bool start_from_slurm;
	char cluster[CEEMS_AGENT_CLUSTER_MAX];	/* the plugin's; "" unknown */
	/* The wait status its steps ended with (ceems_agent_end_step_status),
	 * for the exit code and state slurmctld's metadata lack. */
	bool have_status;
	int status;
	/* The work its processes reported (model/marks.h), for the
	 * record; n 0 when none. */
	struct ceems_marks marks;
};

/* Keep REPORT as the job's final one, waiting for a release until
 * NOW_NS + finish_grace.  0 or -ENOMEM (the record is then written at
 * once). */
int ceems_agent_finish_add(struct agent_finish *f,
		     const struct ceems_agent_job_report *report,
		     const struct agent_finish_job *job, uint64_t now_ns);

/* Write the record of a job now (a reaped job).  0, or -errno when not
 * even the spool took it (it was then logged whole, and is kept to be
 * written again at each sweep, without its time series, while there is
 * room). */
int ceems_agent_finish_now(struct agent_finish *f,
		     const struct ceems_agent_job_report *report,
		     const struct agent_finish_job *job, const char *why);

/* The final report of finishing job JOBID, NULL if none. */
const struct ceems_agent_job_report *
ceems_agent_finish_find(const struct agent_finish *f, uint32_t jobid);

/* The work finishing job JOBID reported, NULL if none is kept. */
const struct ceems_marks *ceems_agent_finish_marks(const struct agent_finish *f,
						   uint32_t jobid);

/* The plugin's metadata of the job, for the record the agent may write.
 * 0 or -ENOENT. */
int ceems_agent_finish_set_meta(struct agent_finish *f, uint32_t jobid,
			  const struct ceems_job_meta *meta);

/* Is JOBID finishing with Slurm's start time START_TIME?  Then a
 * registration with that start time is a late word about that run of
 * the job, not a new run (a requeue has another start time). */
bool ceems_agent_finish_same_run(const struct agent_finish *f, uint32_t jobid,
			   int64_t start_time);

/* The job's time series (NULL: none), owned by the table from now on:
 * it goes into the record the agent writes, and is freed with the job.
 * 0, or -ENOENT (not finishing: the caller keeps it). */
int ceems_agent_finish_set_series(struct agent_finish *f, uint32_t jobid,
			    struct ceems_series *series);

/* A step of finishing job JOBID ended with wait status STATUS (after
 * the extern step ended the job): as ceems_agent_end_step_status.  0 or
 * -ENOENT. */
int ceems_agent_finish_step_status(struct agent_finish *f, uint32_t jobid,
			     int status);

/* An older plugin stored the record itself: forget the job.  0 or -ENOENT. */
int ceems_agent_finish_release(struct agent_finish *f, uint32_t jobid);

/* Write the records of the jobs whose grace ended by NOW_NS, and again
 * those the spool did not take before (or of JOBID at once when not 0:
 * its reply could not be sent).  A record the spool does not take keeps
 * its job here.  Returns how many were written. */
int ceems_agent_finish_expire(struct agent_finish *f, uint64_t now_ns,
			uint32_t jobid);

/* Job JOBID registers anew (a requeued job) while the last run waits:
 * that run's record is written now, REQUEUED when no word said how it
 * ended (only slurmctld's requeue runs the job on the node again).
 * Returns how many were written. */
int ceems_agent_finish_new_run(struct agent_finish *f, uint32_t jobid);

/* WORD, slurmctld's metadata at the end of a run of the job that
 * started at RUN_START (Slurm's start time as the agent learnt it during
 * the run; 0 unknown: then the run's end, RUN_END, bounds it): when
 * WORD's start time is later, slurmctld was asked after the job was
 * requeued and started again, and WORD's start, end, state and exit
 * code are the later run's.  They are replaced: REQUEUED, RUN_START,
 * no end time or exit code (the run's own, from the agent).  True
 * then (agent_finish_word.c). */
bool ceems_agent_finish_word_later_run(struct ceems_job_meta *word,
				       int64_t run_start, int64_t run_end);

/* The plugin's word on the end of finishing job JOBID, with its
 * metadata META (may be NULL).  BY "extern" (the extern step, with what
 * slurmctld said at the job's start): kept, the record waits for the
 * epilog's word until NOW_NS + finish_grace, then is written finalized
 * by "extern".  BY "epilog" (or any other): the record is written now,
 * META's state, exit code and end time over the extern step's, and
 * finalized by "extern" when the extern step ended the job, else BY.
 * 0, -ENOENT, or -errno when not even the spool took it (logged whole
 * the first time; the job is kept, written again at each sweep, and
 * counts as ended, ceems_agent_finish_ended, only once its record is kept). */
int ceems_agent_finish_end(struct agent_finish *f, uint32_t jobid,
		     const struct ceems_job_meta *meta, const char *by,
		     uint64_t now_ns);
/* Step STEP_ID of finishing job JOBID ended (its end came after the
 * extern step's): the word that waited for it writes the record now.
 * 1 when a record was written. */
int ceems_agent_finish_step_ended(struct agent_finish *f, uint32_t jobid,
				  const char *step_id);

/* The same, the record written now whoever BY is (a note of the job:
 * the plugin's last word). */
int ceems_agent_finish_end_now(struct agent_finish *f, uint32_t jobid,
			 const struct ceems_job_meta *meta, const char *by);

/* Was a record of JOBID (START_TIME, 0 when unknown: matching only a
 * record written without one) written lately? */
/* Slurm's start time of job JOBID's finishing run, 0 when not known or
 * not finishing. */
int64_t ceems_agent_finish_start_time(const struct agent_finish *f,
				      uint32_t jobid);
bool ceems_agent_finish_ended(const struct agent_finish *f, uint32_t jobid,
			int64_t start_time);

/* Was a record of any run of JOBID written lately? */
bool ceems_agent_finish_ended_any(const struct agent_finish *f, uint32_t jobid);

/* Write the record of a job the agent never measured, from its
 * metadata META alone: figures absent, coverage 0 in each domain
 * NODE_MEASURED, finalized_by "agent", a note "not-measured" saying WHY.
 * 0 or -errno (logged). */
int ceems_agent_finish_unmeasured(struct agent_finish *f,
			    const struct ceems_job_meta *meta,
			    const bool node_measured[CEEMS_DOMAIN_COUNT],
			    const char *why);

/* The same, ended by the extern step (BY "extern", META what slurmctld
 * said at the job's start): kept finishing, the record waits for the
 * epilog's word (ceems_agent_finish_end, its state and exit code over META's)
 * until NOW_NS + finish_grace.  Not in the state file: an agent restart
 * forgets it, and the epilog's word then writes it.  0, or as
 * ceems_agent_finish_unmeasured when it had to be written at once. */
int ceems_agent_finish_add_unmeasured(struct agent_finish *f,
				const struct ceems_job_meta *meta,
				const bool node_measured[CEEMS_DOMAIN_COUNT],
				const char *why, uint64_t now_ns);

/* Is finishing job JOBID one the agent never measured? */
bool ceems_agent_finish_is_unmeasured(const struct agent_finish *f, uint32_t jobid);

/* The report of a job never measured: its lifetime (META's start to
 * end) all a gap, each domain of NODE_MEASURED there with coverage 0,
 * no figure. */
void ceems_agent_finish_unmeasured_report(const struct ceems_job_meta *meta,
				    const bool node_measured[CEEMS_DOMAIN_COUNT],
				    struct ceems_agent_job_report *report);

size_t ceems_agent_finish_count(const struct agent_finish *f);

/* The node's intensity series S (NULL: none), which outlives F: each
 * record F writes gets its carbon-aware advice by it. */
struct ceems_intensity_series;
void ceems_agent_finish_set_intensity(struct agent_finish *f,
				      const struct ceems_intensity_series *s);

#endif
