/* agent_finish.c - finishing jobs and the records the agent writes
 * (agent_finish.h): it is the only writer of records.  Everything here runs in the agent's event
 * loop: the record goes to the spool only (a file write, milliseconds),
 * never to PostgreSQL, whose timeout would stall the loop; the replay
 * takes it from there. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "agent/agent_finish.h"
#include "model/agent_series.h"
#include "agent/agent_state.h"
#include "base/log.h"
#include "record/record.h"
#include "record/storage.h"
#include "base/tick_path.h"

struct finishing {
	uint32_t jobid;
	struct agent_finish_job job;
	uint64_t deadline_ns;
	bool have_meta;
	struct ceems_job_meta meta;
	/* "extern" once the extern step ended the job: the record waits
	 * for the epilog's word (slurmctld's state and exit code, decided
	 * by then) until finish_grace; "" otherwise. */
	char ended_by[16];
	struct ceems_agent_job_report report;
	/* The record could not be kept (the spool's disk full or failing):
	 * it is written again at each sweep, as BY decided it for WHY,
	 * and the job's entry and state slot are kept until it is. */
	bool unwritten;
	unsigned tries;
	char final_by[16];
	char final_why[200];
	/* A job the agent never measured (never registered here), ended
	 * by the extern step: its record is one of metadata alone, saying
	 * WHY, coverage 0 in each domain the node measures. */
	bool unmeasured;
	bool node_measured[CEEMS_DOMAIN_COUNT];
	char why[160];
	/* slurmctld's word (by WORD_BY) came while a step of the job still
	 * ran here (a time limit or a cancel kills every step at once, and
	 * the extern step's exit can come first): the record is written
	 * with it at that step's end, or WORD_WAIT_NS after the word. */
	bool word_waits;
	char word_by[16];
	struct ceems_job_meta word;
};

#define WORD_WAIT_NS 2000000000ull

/* Jobs whose record was written lately, so that a note of one of them
 * (its plugin could not tell it had been heard) makes no second record.
 * A note matches by job id and start time, 0 (unknown) matching only 0:
 * a requeued run is another job.  The spool is not searched for a record
 * of the note's job: its file names begin with the time each was
 * written, so no name can be looked up, and the replay empties it.  So
 * a note of a job whose record left this list (ENDED_MAX records later,
 * or an agent restart) makes a second, unmeasured record; the database
 * keeps the measured one over it (sql/migrations/017's precedence). */
#define ENDED_MAX 1024

struct agent_finish {
	struct ceems_config spool_config;	/* database off: spool only */
	struct state_file *state;
	struct finishing **jobs;
	size_t njobs, allocated;
	size_t max;			/* jobs waiting for their release */
	struct {
		uint32_t jobid;
		int64_t start_time;
	} ended[ENDED_MAX];
	size_t nended;			/* next entry of ENDED to use */
	/* The last record of a job note failed: its note is kept and taken
	 * again, so the next failures are not logged again. */
	bool notes_unwritten;
	/* The node's intensity series (the agent's, which outlives this),
	 * for each record's carbon-aware advice; NULL: none. */
	const struct ceems_intensity_series *intensity;
};

struct agent_finish *
ceems_agent_finish_new(const struct ceems_config *config, struct state_file *state,
		 size_t max)
{
	struct agent_finish *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->spool_config = *config;
	f->spool_config.database[0] = '\0';
	f->state = state;
	f->max = max > 0 ? max : 1;
	f->allocated = f->max;
	f->jobs = calloc(f->allocated, sizeof(*f->jobs));
	if (f->jobs == NULL) {
		free(f);
		return NULL;
	}
	return f;
}

void
ceems_agent_finish_free(struct agent_finish *f)
{
	if (f == NULL)
		return;
	/* An agent stopping with jobs unreleased: their plugins have had
	 * the figures; a record is written only when it had to be. */
	for (size_t i = 0; i < f->njobs; i++) {
		ceems_agent_series_free(f->jobs[i]->report.series);
		free(f->jobs[i]);
	}
	free(f->jobs);
	free(f);
}

size_t
ceems_agent_finish_count(const struct agent_finish *f)
{
	return f->njobs;
}

/* Room for one more entry: beyond the jobs waiting for their release,
 * those whose record waits for the spool, up to UNWRITTEN_ROOM times as
 * many (a spool failing for long on a busy node). */
#define UNWRITTEN_ROOM 8

static bool
room(struct agent_finish *f)
{
	struct finishing **more;
	size_t n;

	if (f->njobs < f->allocated)
		return true;
	if (f->allocated >= f->max * UNWRITTEN_ROOM)
		return false;
	n = f->allocated * 2 < f->max * UNWRITTEN_ROOM ?
	    f->allocated * 2 : f->max * UNWRITTEN_ROOM;
	more = realloc(f->jobs, n * sizeof(*more));
	if (more == NULL)
		return false;
	f->jobs = more;
	f->allocated = n;
	return true;
}

/* A job waiting for its release first; one whose record waits for the
 * spool only when there is none (a requeued run of the same id). */
static size_t
find_index(const struct agent_finish *f, uint32_t jobid)
{
	size_t unwritten = SIZE_MAX;

	for (size_t i = 0; i < f->njobs; i++)
		if (f->jobs[i]->jobid == jobid && !f->jobs[i]->unwritten)
			return i;
		else if (f->jobs[i]->jobid == jobid && unwritten == SIZE_MAX)
			unwritten = i;
	return unwritten;
}

const struct ceems_agent_job_report *
ceems_agent_finish_find(const struct agent_finish *f, uint32_t jobid)
{
	size_t i = find_index(f, jobid);

	return i == SIZE_MAX ? NULL : &f->jobs[i]->report;
}

const struct ceems_marks *
ceems_agent_finish_marks(const struct agent_finish *f, uint32_t jobid)
{
	size_t i = find_index(f, jobid);

	return i == SIZE_MAX ? NULL : &f->jobs[i]->job.marks;
}

static void
release_slot(struct agent_finish *f, int slot)
{
	if (f->state != NULL && slot >= 0)
		ceems_agent_state_slot_release(f->state, slot);
}

static void
remember_ended(struct agent_finish *f, uint32_t jobid, int64_t start_time)
{
	f->ended[f->nended % ENDED_MAX].jobid = jobid;
	f->ended[f->nended % ENDED_MAX].start_time = start_time;
	f->nended++;
}

bool
ceems_agent_finish_ended(const struct agent_finish *f, uint32_t jobid,
		   int64_t start_time)
{
	for (size_t i = 0; i < ENDED_MAX && i < f->nended; i++)
		if (f->ended[i].jobid == jobid &&
		    f->ended[i].start_time == start_time)
			return true;
	return false;
}

bool
ceems_agent_finish_ended_any(const struct agent_finish *f, uint32_t jobid)
{
	for (size_t i = 0; i < ENDED_MAX && i < f->nended; i++)
		if (f->ended[i].jobid == jobid)
			return true;
	return false;
}

/* Slurm's start time of entry E's run as the agent learnt it during the
 * run (the plugin's metadata, else the registration's), 0 unknown. */
static int64_t
run_start(const struct finishing *e)
{
	if (e->have_meta && e->meta.start_time > 0)
		return e->meta.start_time;
	return e->job.start_from_slurm ? e->job.start_time : 0;
}

int64_t
ceems_agent_finish_start_time(const struct agent_finish *f, uint32_t jobid)
{
	size_t i = find_index(f, jobid);

	return i == SIZE_MAX ? 0 : run_start(f->jobs[i]);
}

/* Remove entry I (its slot released, the array kept dense); REMEMBER
 * when its record is kept, so that a note of the job makes no second. */
static void
remove_entry(struct agent_finish *f, size_t i, bool remember)
{
	if (remember)
		remember_ended(f, f->jobs[i]->jobid, run_start(f->jobs[i]));
	release_slot(f, f->jobs[i]->job.slot);
	ceems_agent_marks_forget(f->spool_config.state_dir, f->jobs[i]->jobid);
	ceems_agent_series_free(f->jobs[i]->report.series);
	free(f->jobs[i]);
	f->jobs[i] = f->jobs[--f->njobs];
}

static void
drop(struct agent_finish *f, size_t i)
{
	remove_entry(f, i, true);
}

/* What the agent knows of the job when the plugin told it nothing (or
 * left fields unknown): the job's identity, this node, and its start and
 * end.  The database keys a job by cluster, id and start time, so those
 * must be there, and be the ones a record of the plugin has (else the
 * job gets two rows): the cluster and Slurm's start time the plugin sent
 * at registration come first; the configured cluster and the
 * registration time only when it sent none. */
static void
complete_meta(const struct agent_finish *f, struct ceems_job_meta *m,
	      const struct ceems_agent_job_report *report,
	      const struct agent_finish_job *job)
{
	m->jobid = report->jobid;
	m->uid = report->uid;
	if (m->cluster[0] == '\0')
		snprintf(m->cluster, sizeof(m->cluster), "%s",
			 job->cluster[0] != '\0' ? job->cluster :
			 f->spool_config.cluster[0] != '\0' ?
			 f->spool_config.cluster : "unknown");
	/* The agent's node (--node: one of several slurmd on this host)
	 * over the plugin's: an extern step without the job's node list
	 * (no lookup of its own with ceems-jobinfo) knows only the host's
	 * name.  Else the plugin's, else the host's name. */
	if (f->spool_config.node[0] != '\0')
		snprintf(m->node, sizeof(m->node), "%s", f->spool_config.node);
	if (m->node[0] == '\0' && gethostname(m->node, sizeof(m->node)) < 0)
		m->node[0] = '\0';
	m->node[sizeof(m->node) - 1] = '\0';
	if (m->node[0] == '\0')
		snprintf(m->node, sizeof(m->node), "unknown");
	if (m->start_time == 0)
		m->start_time = job->start_time;
	if (m->end_time == 0 || m->end_time < m->start_time)
		m->end_time = job->end_time >= m->start_time ?
			      job->end_time : m->start_time;
}

/* The steps' wait status and the tasks' OOM kills say how the job ended
 * when slurmctld had not decided it when its metadata were taken. */
static void
settle_state(struct ceems_job_meta *m,
	     const struct ceems_agent_job_report *report,
	     const struct agent_finish_job *job)
{
	if (job->have_status && m->state[0] == '\0') {
		if (WIFEXITED(job->status)) {
			m->exit_code = WEXITSTATUS(job->status);
			m->exit_signal = 0;
		} else if (WIFSIGNALED(job->status)) {
			m->exit_code = 0;
			m->exit_signal = WTERMSIG(job->status);
		}
		snprintf(m->state, sizeof(m->state), "%s",
			 WIFEXITED(job->status) && WEXITSTATUS(job->status) == 0 ?
			 "COMPLETED" : "FAILED");
	}
	if ((report->usage.present & CEEMS_CGF_OOM_KILLS) &&
	    report->usage.oom_kills > 0 &&
	    (m->state[0] == '\0' || strcmp(m->state, "COMPLETED") == 0 ||
	     strcmp(m->state, "FAILED") == 0))
		snprintf(m->state, sizeof(m->state), "OUT_OF_MEMORY");
}

void
ceems_agent_finish_set_intensity(struct agent_finish *f,
				 const struct ceems_intensity_series *s)
{
	f->intensity = s;
}

/* AGAIN: an earlier try failed and was logged; a failure now is only
 * a debug line.  A record the spool set aside as invalid (-EINVAL) is
 * kept: 0. */
static int
store(struct agent_finish *f, const struct ceems_job_record *rec,
      const char *why, bool again)
{
	char err[600];
	int r = again ?
		ceems_storage_store_again(&f->spool_config, rec, err, sizeof(err)) :
		ceems_storage_store(&f->spool_config, rec, err, sizeof(err));

	if (r == -EINVAL) {
		ceems_error("job %u: %s", rec->meta.jobid, err);
		return 0;
	}
	if (r < 0 && again)
		ceems_debug("job %u: the spool still does not take its record: %s",
			    rec->meta.jobid, err);
	else if (r < 0)
		ceems_error("job %u: the agent could not keep its record: %s",
			    rec->meta.jobid, err);
	else if (strcmp(rec->finalized_by, "agent") == 0)
		ceems_info("job %u: record written to the spool by the agent (%s)",
			   rec->meta.jobid, why);
	else
		ceems_info("job %u: record written to the spool, finalized by %s (%s)",
			   rec->meta.jobid, rec->finalized_by, why);
	return r < 0 ? r : 0;
}

/* BY: "extern" or "epilog" when the plugin ended the job with GIVEN, its
 * metadata; "agent" when the agent ends it on its own (WHY says why). */
static int
write_record(struct agent_finish *f,
	     const struct ceems_agent_job_report *report,
	     const struct agent_finish_job *job,
	     const struct ceems_job_meta *given, const char *by,
	     const char *why, bool again)
{
	struct ceems_job_record *rec = malloc(sizeof(*rec));
	struct ceems_job_meta meta;
	struct ceems_summary_note *note;
	int r;

	if (given != NULL)
		meta = *given;
	else
		ceems_job_meta_init(&meta);
	complete_meta(f, &meta, report, job);
	if (rec == NULL) {
		ceems_error("job %u: out of memory for the record the agent writes",
			    report->jobid);
		return -ENOMEM;
	}
	settle_state(&meta, report, job);
	ceems_record_build(rec, &meta, report, by, (int64_t)time(NULL));
	rec->marks = job->marks;
	if (f->intensity != NULL)
		ceems_agent_advice_record(f->intensity, &f->spool_config, rec);
	if (strcmp(by, "agent") != 0) {
		r = store(f, rec, why, again);
		free(rec);
		return r;
	}
	/* Said in the record itself, for whoever reads it later. */
	note = ceems_record_add_note(rec, "agent-finalized");
	snprintf(note->text, sizeof(note->text),
		 "The node agent wrote this record itself: %s.%s%s", why,
		 given == NULL ? " Job details other than its id, owner, node"
		 " and times are unknown." : "",
		 given != NULL && given->start_time != 0 ? "" :
		 job->start_from_slurm ? " Its start time is Slurm's, as the"
		 " plugin sent it when the job started." :
		 " Its start time is when the agent registered it: Slurm's"
		 " was not known, and a record of the job by the plugin has"
		 " Slurm's.");
	r = store(f, rec, why, again);
	free(rec);
	return r;
}

/* The record of entry E was not kept (R): the entry stays, written
 * again at each sweep (said once here, not at every try). */
static void
keep_unwritten(struct finishing *e, const char *by, const char *why, int r)
{
	if (!e->unwritten) {
		snprintf(e->final_by, sizeof(e->final_by), "%s", by);
		snprintf(e->final_why, sizeof(e->final_why), "%s", why);
		ceems_error("job %u: its record could not be written to the "
			    "spool (%s): the agent keeps it and tries again at "
			    "each sweep; free space in the spool's file system "
			    "or fix its errors", e->jobid, strerror(-r));
	}
	e->unwritten = true;
	e->tries++;
}

int
ceems_agent_finish_now(struct agent_finish *f,
		 const struct ceems_agent_job_report *report,
		 const struct agent_finish_job *job, const char *why)
{
	int r = write_record(f, report, job, NULL, "agent", why, false);
	struct finishing *e;

	if (r == 0 || !room(f) || (e = calloc(1, sizeof(*e))) == NULL) {
		if (r == 0)
			remember_ended(f, report->jobid,
				       job->start_from_slurm ? job->start_time : 0);
		release_slot(f, job->slot);
		return r;
	}
	/* Kept for another try; its time series, the caller's, is not. */
	e->jobid = report->jobid;
	e->job = *job;
	e->report = *report;
	e->report.series = NULL;
	keep_unwritten(e, "agent", why, r);
	f->jobs[f->njobs++] = e;
	return r;
}

static int write_unmeasured(struct agent_finish *f,
			    const struct ceems_job_meta *meta,
			    const bool node_measured[CEEMS_DOMAIN_COUNT],
			    const char *why, bool again);

/* Write the record of entry I, finalized BY for WHY (those of the first
 * try when this is another), and drop it; when the spool does not take
 * it, keep it for the next sweep.  0 or -errno. */
static int
finalize_as(struct agent_finish *f, size_t i, const char *by, const char *why)
{
	struct finishing *e = f->jobs[i];
	int r;

	if (e->unwritten) {
		by = e->final_by;
		why = e->final_why;
	}
	if (e->unmeasured)
		r = write_unmeasured(f, &e->meta, e->node_measured, e->why,
				     e->unwritten);
	else
		r = write_record(f, &e->report, &e->job,
				 e->have_meta ? &e->meta : NULL, by, why,
				 e->unwritten);
	if (r < 0) {
		keep_unwritten(e, by, why, r);
		return r;
	}
	if (e->tries > 0)
		ceems_info("job %u: its record is written after %u failed "
			   "tr%s", e->jobid, e->tries, e->tries == 1 ? "y" : "ies");
	drop(f, i);
	return 0;
}

/* Whether a step of the job other than its extern step had not ended
 * when its report was taken. */
static bool
step_runs(const struct ceems_agent_job_report *r)
{
	for (uint32_t k = 0; k < r->nsteps && k < CEEMS_AGENT_MAX_STEPS; k++)
		if (!r->steps[k].ended && strcmp(r->steps[k].id, "extern") != 0)
			return true;
	return false;
}

/* Entry I's record, with the word that waited for its steps' end. */
static int
end_with_word(struct agent_finish *f, size_t i)
{
	struct ceems_job_meta word = f->jobs[i]->word;
	char by[sizeof(f->jobs[i]->word_by)];

	snprintf(by, sizeof(by), "%s", f->jobs[i]->word_by);
	f->jobs[i]->word_waits = false;
	return ceems_agent_finish_end_now(f, f->jobs[i]->jobid, &word, by);
}

static int
finalize(struct agent_finish *f, size_t i, const char *why)
{
	struct finishing *e = f->jobs[i];

	if (e->word_waits)
		return end_with_word(f, i);
	if (e->ended_by[0] != '\0')
		return finalize_as(f, i, e->ended_by, "no word from the epilog "
				   "within finish_grace");
	return finalize_as(f, i, "agent", why);
}

/* A place for one more finishing job: the oldest waiting for its
 * release is finalized when too many wait; with no room left, the oldest
 * record waiting for the spool goes. */
static void
make_room(struct agent_finish *f)
{
	size_t oldest = SIZE_MAX, waiting = 0;

	for (size_t i = 0; i < f->njobs; i++) {
		if (f->jobs[i]->unwritten)
			continue;
		waiting++;
		if (oldest == SIZE_MAX ||
		    f->jobs[i]->deadline_ns < f->jobs[oldest]->deadline_ns)
			oldest = i;
	}
	if (waiting >= f->max)
		(void)finalize(f, oldest, "too many jobs were waiting for their "
			       "plugin to confirm their record");
	if (!room(f)) {
		/* No room to keep more: the oldest record waiting for the
		 * spool goes, logged whole at its first failure (the last
		 * resort).  One waits: the finalize above made it so. */
		oldest = 0;
		for (size_t i = 1; i < f->njobs; i++)
			if (f->jobs[i]->unwritten &&
			    (!f->jobs[oldest]->unwritten ||
			     f->jobs[i]->deadline_ns < f->jobs[oldest]->deadline_ns))
				oldest = i;
		ceems_error("job %u: too many jobs wait for the spool: the "
			    "agent gives up its record (logged whole as a "
			    "ceems-record line when it first failed)",
			    f->jobs[oldest]->jobid);
		remove_entry(f, oldest, false);
	}
}

int
ceems_agent_finish_add(struct agent_finish *f,
		 const struct ceems_agent_job_report *report,
		 const struct agent_finish_job *job, uint64_t now_ns)
{
	struct finishing *e;

	make_room(f);
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		ceems_agent_finish_now(f, report, job, "the agent had no memory to "
				 "wait for the plugin's confirmation");
		return -ENOMEM;
	}
	e->jobid = report->jobid;
	e->job = *job;
	e->deadline_ns = now_ns + f->spool_config.finish_grace_ns;
	e->report = *report;
	e->report.series = NULL;	/* ceems_agent_finish_set_series */
	f->jobs[f->njobs++] = e;
	return 0;
}

int
ceems_agent_finish_set_meta(struct agent_finish *f, uint32_t jobid,
		      const struct ceems_job_meta *meta)
{
	size_t i = find_index(f, jobid);

	if (i == SIZE_MAX)
		return -ENOENT;
	f->jobs[i]->meta = *meta;
	f->jobs[i]->have_meta = true;
	if (f->state != NULL)
		ceems_agent_state_slot_finishing_meta(f->state, f->jobs[i]->job.slot, meta);
	return 0;
}

bool
ceems_agent_finish_same_run(const struct agent_finish *f, uint32_t jobid,
		      int64_t start_time)
{
	size_t i = find_index(f, jobid);

	return i != SIZE_MAX && f->jobs[i]->job.start_from_slurm &&
	       f->jobs[i]->job.start_time == start_time;
}

int
ceems_agent_finish_release(struct agent_finish *f, uint32_t jobid)
{
	size_t i = find_index(f, jobid);

	if (i == SIZE_MAX)
		return -ENOENT;
	drop(f, i);
	return 0;
}

int
ceems_agent_finish_new_run(struct agent_finish *f, uint32_t jobid)
{
	int n = 0;

	for (size_t i = 0; i < f->njobs;) {
		struct finishing *e = f->jobs[i];

		if (e->jobid != jobid) {
			i++;
			continue;
		}
		/* Only slurmctld's requeue runs the job here again. */
		if (!e->unwritten && e->have_meta && e->meta.state[0] == '\0')
			snprintf(e->meta.state, sizeof(e->meta.state),
				 "REQUEUED");
		if (finalize_as(f, i, e->ended_by[0] != '\0' ? e->ended_by :
				"agent", "a new run of the job registered on "
				"this node: this run was requeued") < 0) {
			i++;	/* kept for the next sweep */
			continue;
		}
		n++;
	}
	return n;
}

CEEMS_TICK_PATH int
ceems_agent_finish_expire(struct agent_finish *f, uint64_t now_ns, uint32_t jobid)
{
	int n = 0;

	for (size_t i = 0; i < f->njobs;) {
		if (jobid != 0 ? f->jobs[i]->jobid == jobid :
		    f->jobs[i]->deadline_ns <= now_ns || f->jobs[i]->unwritten) {
			if (finalize(f, i, jobid != 0 ?
				     "its final report could not be sent to the plugin" :
				     "the plugin did not confirm storing it within "
				     "finish_grace") < 0) {
				i++;	/* kept for the next sweep */
				continue;
			}
			n++;
			continue;	/* I now holds the last entry */
		}
		i++;
	}
	return n;
}

/* What slurmctld decided at the end (the epilog's metadata) over what it
 * said at the start (the extern step's). */
static void
amend_meta(struct ceems_job_meta *m, const struct ceems_job_meta *late)
{
	if (late->state[0] != '\0') {
		snprintf(m->state, sizeof(m->state), "%s", late->state);
		m->exit_code = late->exit_code;
		m->exit_signal = late->exit_signal;
	}
	if (late->end_time > 0)
		m->end_time = late->end_time;
	ceems_job_meta_fill_from(m, late);
}

int
ceems_agent_finish_end(struct agent_finish *f, uint32_t jobid,
		 const struct ceems_job_meta *meta, const char *by,
		 uint64_t now_ns)
{
	size_t i = find_index(f, jobid);
	struct finishing *e;

	if (i == SIZE_MAX)
		return -ENOENT;
	e = f->jobs[i];
	if (strcmp(by, "extern") == 0 && meta != NULL) {
		e->meta = *meta;
		e->have_meta = true;
		snprintf(e->ended_by, sizeof(e->ended_by), "extern");
		e->deadline_ns = now_ns + f->spool_config.finish_grace_ns;
		if (f->state != NULL)
			ceems_agent_state_slot_finishing_meta(f->state, e->job.slot, meta);
		return 0;
	}
	if (meta != NULL && e->ended_by[0] != '\0' && step_runs(&e->report)) {
		e->word = *meta;
		snprintf(e->word_by, sizeof(e->word_by), "%s", by);
		e->word_waits = true;
		e->deadline_ns = now_ns + WORD_WAIT_NS;
		ceems_debug("job %u: the %s's word waits for its last step's end",
			    jobid, by);
		return 0;
	}
	return ceems_agent_finish_end_now(f, jobid, meta, by);
}

int
ceems_agent_finish_step_ended(struct agent_finish *f, uint32_t jobid,
			      const char *step_id)
{
	size_t i = find_index(f, jobid);
	struct ceems_agent_job_report *r;

	if (i == SIZE_MAX)
		return 0;
	r = &f->jobs[i]->report;
	for (uint32_t k = 0; k < r->nsteps && k < CEEMS_AGENT_MAX_STEPS; k++)
		if (strcmp(r->steps[k].id, step_id) == 0)
			r->steps[k].ended = true;
	if (!f->jobs[i]->word_waits || step_runs(r))
		return 0;
	return end_with_word(f, i) == 0 ? 1 : 0;
}

int
ceems_agent_finish_end_now(struct agent_finish *f, uint32_t jobid,
		     const struct ceems_job_meta *meta, const char *by)
{
	size_t i = find_index(f, jobid);
	struct ceems_job_meta word;
	struct finishing *e;

	if (i == SIZE_MAX)
		return -ENOENT;
	e = f->jobs[i];
	/* Asked after the job was requeued and started again, slurmctld
	 * speaks of the new run: this one keeps its own start, and was
	 * requeued. */
	if (meta != NULL) {
		word = *meta;
		if (ceems_agent_finish_word_later_run(&word, run_start(e),
						 e->job.end_time))
			ceems_info("job %u: slurmctld's end word is of a later "
				   "run (started %lld): this run was requeued",
				   jobid, (long long)meta->start_time);
		meta = &word;
	}
	if (meta != NULL && e->have_meta)
		amend_meta(&e->meta, meta);
	else if (meta != NULL) {
		e->meta = *meta;
		e->have_meta = true;
	}
	return finalize_as(f, i, e->ended_by[0] != '\0' ? e->ended_by : by,
			   "ended by the plugin");
}

/* The record of a job the agent never measured, from META alone; AGAIN
 * as for store. */
static int
write_unmeasured(struct agent_finish *f, const struct ceems_job_meta *meta,
		 const bool node_measured[CEEMS_DOMAIN_COUNT], const char *why,
		 bool again)
{
	struct ceems_job_record *rec = malloc(sizeof(*rec));
	struct ceems_agent_job_report *report = malloc(sizeof(*report));
	struct agent_finish_job job = {
		.slot = -1,
		.start_time = meta->start_time > 0 ? meta->start_time : time(NULL),
		.end_time = meta->end_time > 0 ? meta->end_time : time(NULL),
		.start_from_slurm = meta->start_time > 0,
	};
	struct ceems_summary_note *note;
	struct ceems_job_meta m = *meta;
	int r;

	if (rec == NULL || report == NULL) {
		free(rec);
		free(report);
		ceems_error("job %u: out of memory for its record", meta->jobid);
		return -ENOMEM;
	}
	ceems_agent_finish_unmeasured_report(meta, node_measured, report);
	complete_meta(f, &m, report, &job);
	/* The lifetime to the end complete_meta settled on. */
	ceems_agent_finish_unmeasured_report(&m, node_measured, report);
	ceems_record_build(rec, &m, report, "agent", (int64_t)time(NULL));
	note = ceems_record_add_note(rec, "not-measured");
	snprintf(note->text, sizeof(note->text),
		 "The node agent did not measure this job: %s. Its figures "
		 "are absent, not zero; the job's details are Slurm's.", why);
	r = store(f, rec, why, again);
	free(report);
	free(rec);
	return r;
}

int
ceems_agent_finish_unmeasured(struct agent_finish *f,
			const struct ceems_job_meta *meta,
			const bool node_measured[CEEMS_DOMAIN_COUNT],
			const char *why)
{
	int r = write_unmeasured(f, meta, node_measured, why,
				 f->notes_unwritten);

	f->notes_unwritten = r < 0;
	if (r == 0)
		remember_ended(f, meta->jobid, meta->start_time);
	return r;
}

int
ceems_agent_finish_add_unmeasured(struct agent_finish *f,
			    const struct ceems_job_meta *meta,
			    const bool node_measured[CEEMS_DOMAIN_COUNT],
			    const char *why, uint64_t now_ns)
{
	struct finishing *e;

	make_room(f);
	e = calloc(1, sizeof(*e));
	if (e == NULL)		/* written at once */
		return ceems_agent_finish_unmeasured(f, meta, node_measured, why);
	e->jobid = meta->jobid;
	e->job.slot = -1;
	e->job.start_time = meta->start_time;
	e->job.end_time = meta->end_time;
	e->job.start_from_slurm = meta->start_time > 0;
	e->deadline_ns = now_ns + f->spool_config.finish_grace_ns;
	ceems_agent_finish_unmeasured_report(meta, node_measured, &e->report);
	e->unmeasured = true;
	memcpy(e->node_measured, node_measured, sizeof(e->node_measured));
	snprintf(e->why, sizeof(e->why), "%s", why);
	e->meta = *meta;
	e->have_meta = true;
	snprintf(e->ended_by, sizeof(e->ended_by), "extern");
	f->jobs[f->njobs++] = e;
	return 0;
}

bool
ceems_agent_finish_is_unmeasured(const struct agent_finish *f, uint32_t jobid)
{
	size_t i = find_index(f, jobid);

	return i != SIZE_MAX && f->jobs[i]->unmeasured;
}

int
ceems_agent_finish_set_series(struct agent_finish *f, uint32_t jobid,
			struct ceems_series *series)
{
	size_t i = find_index(f, jobid);

	if (i == SIZE_MAX)
		return -ENOENT;
	ceems_agent_series_free(f->jobs[i]->report.series);
	f->jobs[i]->report.series = series;
	return 0;
}

int
ceems_agent_finish_step_status(struct agent_finish *f, uint32_t jobid, int status)
{
	size_t i = find_index(f, jobid);
	struct agent_finish_job *job;

	if (i == SIZE_MAX)
		return -ENOENT;
	job = &f->jobs[i]->job;
	if (!job->have_status || status != 0) {
		job->status = status;
		job->have_status = true;
	}
	return 0;
}
