/* record.h - the job record: what ceems keeps of a finished job on one
 * node, as one JSON document (format "ceems-job-record/1", described in
 * doc/record-format.md).  The spool stores it, storage loads it into
 * PostgreSQL, ceems-sacct --json prints it, tests compare it.
 *
 *   { "format": "ceems-job-record/1", "written_at": UNIX, "finalized_by":
 *     "extern" | "epilog" | "agent", "job": {...metadata...}, "measurements":
 *     {...the agent's report...}, "notes": [ {...} ],
 *     "marks": [...] (optional: the work the job reported, marks.h),
 *     "series": {...} (optional: the job's time series, agent_series.h) }
 *
 * A value that was not measured or is not known is left out of the
 * document, never written as 0 (design invariant 5). */
#ifndef CEEMS_RECORD_H
#define CEEMS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "model/job.h"
#include "model/marks.h"
#include "model/measure.h"
#include "summary/summary.h"

#define CEEMS_RECORD_FORMAT "ceems-job-record/1"
#define CEEMS_RECORD_MAX 262144	/* bytes of JSON; larger is refused */

struct ceems_job_record {
	int64_t written_at;		/* Unix seconds */
	char finalized_by[16];		/* "extern", "epilog", "agent" */
	struct ceems_job_meta meta;
	struct ceems_agent_job_report report;
	size_t nnotes;
	struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES];
	/* The work the job's processes reported; n 0 when none.  Set by
	 * the record's writer after ceems_record_build (which zeroes it). */
	struct ceems_marks marks;
	/* The carbon-aware advice (model/carbon_advice.h), when a series
	 * covered the job's time; set by ceems_record_set_advice. */
	bool have_advice;
	struct ceems_advice advice;
};

/* Fill R from a finished job (notes computed here). */
void ceems_record_build(struct ceems_job_record *r,
			const struct ceems_job_meta *meta,
			const struct ceems_agent_job_report *report,
			const char *finalized_by, int64_t now);

/* A new note ID in R, zeroed but for its id, for its writer to fill:
 * the last place when the notes are full (the newest matters more). */
struct ceems_summary_note *ceems_record_add_note(struct ceems_job_record *r,
						 const char *id);

/* Keep advice A in R when it is known, with its note when it is worth
 * one and the job ran on one node, as the summary (a full record's
 * last note gives way: see the agent's notes). */
void ceems_record_set_advice(struct ceems_job_record *r,
			     const struct ceems_advice *a);

/* Encode R as JSON text into BUF.  Returns the length, -ENOSPC, -ENOMEM. */
int ceems_record_encode(const struct ceems_job_record *r, char *buf,
			size_t size);

/* Room enough for any reduced record (no steps, gaps or notes). */
#define CEEMS_RECORD_REDUCED_MAX 16384

/* The reduced form of R into OUT (OUT may be R): identity, metadata and
 * totals kept; steps, gaps and notes dropped; one note "record-reduced"
 * says so (record_reduce.c). */
void ceems_record_reduce(const struct ceems_job_record *r,
			 struct ceems_job_record *out);

/* ceems_record_encode, and when R cannot be encoded whole into BUF
 * (-ENOSPC, -ENOMEM) its reduced form, built in SCRATCH, with an error
 * logged.  Returns the length, or the reduced record's error. */
int ceems_record_reduce_encode_fallback(const struct ceems_job_record *r, char *buf,
				 size_t size, struct ceems_job_record *scratch);

/* Decode and validate JSON text.  Returns 0, or -EINVAL with ERR naming
 * the first problem (R untouched).  A "series" member is checked but not
 * kept (R->report.series is NULL, so that no caller has to free one):
 * ceems_record_decode_series reads it. */
int ceems_record_decode(const char *buf, size_t len,
			struct ceems_job_record *r, char *err,
			size_t err_size);

/* ceems_record_decode that keeps the "series" member too: *SERIES is a
 * new series (free it with ceems_agent_series_free), or NULL when the record
 * has none or on error.  One parse of the text for both. */
int ceems_record_decode_series(const char *buf, size_t len,
			       struct ceems_job_record *r,
			       struct ceems_series **series, char *err,
			       size_t err_size);

/* Refuse records with missing or absurd fields before they are stored:
 * no job id, times out of order or far in the future, a state Slurm does
 * not have.  Returns 0 or -EINVAL with ERR. */
int ceems_record_validate(const struct ceems_job_record *r, char *err,
			  size_t err_size);

#endif
