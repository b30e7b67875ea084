/* record_reduce.c - the fallback when a job's record cannot be encoded
 * whole (record.h).
 *
 * A record over CEEMS_RECORD_MAX, or one that json-c cannot build for
 * want of memory, would otherwise be dropped: a lost job (invariant 3).
 * The reduced record keeps what the job's accounting needs (its identity,
 * metadata and every total of the ledger and usage) and drops the
 * detail that makes a record large (per-step figures, the list of agent
 * gaps, the time series, the summary notes but the agent's own).  It
 * says so with a note "record-reduced", so that a reader knows the steps
 * are missing, not that there were none. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "record/record.h"

/* The note that says the agent finalized the job, which a reader of the
 * record needs more than any other: -1 if none. */
static int
agent_note(const struct ceems_job_record *r)
{
	for (size_t i = 0; i < r->nnotes; i++)
		if (strcmp(r->notes[i].id, "agent-finalized") == 0)
			return (int)i;
	return -1;
}

void
ceems_record_reduce(const struct ceems_job_record *r,
		    struct ceems_job_record *out)
{
	struct ceems_summary_note *note, kept;
	int agent = agent_note(r);

	if (agent >= 0)
		kept = r->notes[agent];
	if (out != r)
		*out = *r;
	out->report.nsteps = 0;
	out->report.ngaps = 0;	/* gap_s, their total, stays */
	out->report.series = NULL;
	out->nnotes = 1;
	note = &out->notes[0];
	memset(note, 0, sizeof(*note));
	snprintf(note->id, sizeof(note->id), "record-reduced");
	snprintf(note->text, sizeof(note->text),
		 "This record could not be stored whole: the figures per step, "
		 "the agent's gaps, the time series and the summary notes were "
		 "left out. The job's totals are complete.");
	if (agent >= 0)
		out->notes[out->nnotes++] = kept;
}

int
ceems_record_reduce_encode_fallback(const struct ceems_job_record *r, char *buf,
			     size_t size, struct ceems_job_record *scratch)
{
	int n = ceems_record_encode(r, buf, size);

	if (n != -ENOSPC && n != -ENOMEM)
		return n;
	/* Dropping the record would lose the job: keep its totals. */
	ceems_error("job %u: the record cannot be encoded whole (%s): it is "
		    "stored without its steps, gaps and notes",
		    (unsigned)r->meta.jobid, strerror(-n));
	ceems_record_reduce(r, scratch);
	return ceems_record_encode(scratch, buf, size);
}
