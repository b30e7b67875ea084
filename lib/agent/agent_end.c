/* agent_end.c - the agent as the only writer of records: a job ended by
 * the plugin in one call (deregister with "by"), and the notes of jobs
 * whose end the agent was not told (lib/record/job_note.h). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "agent/agent_finish.h"
#include "agent/agent_internal.h"
#include "model/carbon_advice.h"
#include "record/job_note.h"
#include "base/log.h"

int
ceems_agent_end(struct ceems_agent *a, uint32_t jobid,
		const struct ceems_job_meta *meta, const char *by,
		uint64_t now_ns)
{
	return ceems_agent_finish_end(a->finish, jobid, meta, by, now_ns);
}

bool
ceems_agent_end_of_earlier_run(struct ceems_agent *a, uint32_t jobid,
			       int64_t start_time)
{
	struct agent_job *j;

	if (start_time <= 0 || ceems_agent_finish_find(a->finish, jobid) != NULL)
		return false;
	j = ceems_agent_find_job(a, jobid, NULL);
	if (j == NULL)
		return false;
	return j->spec.start_time > start_time ||
	       (j->spec.start_time == 0 &&
		ceems_agent_finish_ended(a->finish, jobid, start_time));
}

int64_t
ceems_agent_end_run_start(const struct ceems_agent *a, uint32_t jobid)
{
	const struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);

	return j != NULL ? j->spec.start_time :
	       ceems_agent_finish_start_time(a->finish, jobid);
}

int
ceems_agent_end_advice(const struct ceems_agent *a, uint32_t jobid,
		       const struct ceems_agent_job_report *report,
		       uint64_t now_ns, struct ceems_advice *out)
{
	struct ceems_advice_opts o;
	int64_t start = ceems_agent_end_run_start(a, jobid);

	/* Slurm's start, else the wall-clock time of the registration. */
	if (start <= 0)
		start = ((int64_t)now_ns + a->intensity.wall_offset_ns) /
			1000000000 - (int64_t)report->elapsed_s;
	ceems_agent_advice_opts(&a->config, &o);
	/* The dependency is the job side's to say (its metadata). */
	return ceems_carbon_advice_of_report(&a->intensity.series, report,
					     start, false, &o, out);
}

int
ceems_agent_end_step_late(struct ceems_agent *a, uint32_t jobid,
			  const char *step_id)
{
	return ceems_agent_finish_step_ended(a->finish, jobid, step_id);
}

int
ceems_agent_end_final_report(const struct ceems_agent *a, uint32_t jobid,
			 struct ceems_agent_job_report *out)
{
	const struct ceems_agent_job_report *final =
		ceems_agent_finish_find(a->finish, jobid);

	/* A job never measured has no figures for a step's summary. */
	if (final == NULL || ceems_agent_finish_is_unmeasured(a->finish, jobid))
		return -ENOENT;
	*out = *final;
	out->series = NULL;	/* the deregistration's reply had it */
	return 0;
}

int
ceems_agent_end_step_status(struct ceems_agent *a, uint32_t jobid, int status)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);

	if (j == NULL)
		return ceems_agent_finish_step_status(a->finish, jobid, status);
	/* A failed step's status stands: the job failed. */
	if (!j->have_status || status != 0) {
		j->status = status;
		j->have_status = true;
	}
	return 0;
}

/* The domains this node measures: those with a source. */
static void
node_measured(const struct ceems_agent *a, bool measured[CEEMS_DOMAIN_COUNT])
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		measured[d] = a->domain_source[d] >= 0;
}

/* Why a job the agent never knew gets a record of its metadata alone. */
#define NEVER_REGISTERED "the job was never registered with the node agent " \
	"on this node (the agent was not running when the job started)"

int
ceems_agent_end_unknown(struct ceems_agent *a, uint32_t jobid,
			const struct ceems_job_meta *meta, const char *by,
			uint64_t now_ns, struct ceems_agent_job_report *out)
{
	bool measured[CEEMS_DOMAIN_COUNT];
	struct ceems_job_meta m = *meta;
	int r;

	m.jobid = jobid;
	node_measured(a, measured);
	ceems_agent_finish_unmeasured_report(&m, measured, out);
	if (ceems_agent_find_job(a, jobid, NULL) != NULL ||
	    ceems_agent_finish_find(a->finish, jobid) != NULL)
		return -EEXIST;
	if (ceems_agent_finish_ended(a->finish, jobid, m.start_time)) {
		ceems_debug("job %u: its end told by the %s, its record written "
			    "already", jobid, by);
		return 1;
	}
	if (strcmp(by, "extern") == 0)
		r = ceems_agent_finish_add_unmeasured(a->finish, &m, measured,
						NEVER_REGISTERED, now_ns);
	else
		r = ceems_agent_finish_unmeasured(a->finish, &m, measured,
					    NEVER_REGISTERED);
	return r;
}

/* One note: the job's record, with its figures when the agent holds the
 * job, else from the note alone.  0 once the record is kept. */
static int
take_note(struct ceems_agent *a, const struct ceems_job_note *note,
	  uint64_t now_ns)
{
	static struct ceems_agent_job_report report;
	bool measured[CEEMS_DOMAIN_COUNT];
	uint32_t jobid = note->meta.jobid;

	/* A note is the plugin's last word: the record is written now. */
	if (ceems_agent_find_job(a, jobid, NULL) != NULL &&
	    ceems_agent_deregister(a, jobid, now_ns, &report) == 0)
		return ceems_agent_finish_end_now(a->finish, jobid, &note->meta,
					    note->by);
	if (ceems_agent_finish_find(a->finish, jobid) != NULL)
		return ceems_agent_finish_end_now(a->finish, jobid, &note->meta,
					    note->by);
	if (ceems_agent_finish_ended(a->finish, jobid, note->meta.start_time)) {
		ceems_debug("job %u: a note of a job whose record is written",
			    jobid);
		return 0;
	}
	node_measured(a, measured);
	return ceems_agent_finish_unmeasured(a->finish, &note->meta, measured,
				       note->why);
}

int
ceems_agent_end_take_notes(struct ceems_agent *a, uint64_t now_ns)
{
	static struct ceems_job_note note;
	static char names[CEEMS_NOTES_PER_PASS][CEEMS_NOTE_NAME_MAX];
	char dir[CEEMS_CONFIG_PATH_MAX + 8], err[512];
	int n = 0, found, r;

	if (ceems_job_note_dir(&a->config, dir, sizeof(dir)) < 0)
		return -ENAMETOOLONG;
	/* One reading of the folder, a bounded batch: each note costs a
	 * record's fsync in the event loop; the rest are taken next time,
	 * after the last of this batch. */
	a->notes_left = true;
	found = ceems_job_note_list(dir, a->note_after, names, CEEMS_NOTES_PER_PASS);
	if (found < 0)
		return found;
	if (found == CEEMS_NOTES_PER_PASS)
		memcpy(a->note_after, names[found - 1], sizeof(a->note_after));
	else
		a->note_after[0] = '\0';
	for (int i = 0; i < found; i++) {
		const char *name = names[i];

		r = ceems_job_note_read(dir, name, &note, err, sizeof(err));
		if (r == -EINVAL) {
			ceems_error("%s/%s is no job note (%s): set aside as %s.bad",
				    dir, name, err, name);
			(void)ceems_job_note_set_aside(dir, name);
			continue;
		}
		if (r < 0) {
			ceems_warning("job note %s/%s: %s: tried again later",
				      dir, name, err);
			continue;
		}
		/* The note goes only once its record is kept. */
		if (take_note(a, &note, now_ns) == 0) {
			(void)ceems_job_note_remove(dir, name);
			n++;
		}
	}
	a->notes_left = found == CEEMS_NOTES_PER_PASS || n < found;
	return n;
}

bool
ceems_agent_end_notes_left(const struct ceems_agent *a)
{
	return a->notes_left;
}
