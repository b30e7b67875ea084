/* record.c - the job record's JSON form: encoding, strict decoding and
 * validation (format in record.h and doc/record-format.md). */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "model/agent_series.h"
#include "model/carbon_advice.h"
#include "model/job.h"
#include "base/json_util.h"
#include "model/measure.h"
#include "record/record.h"

void
ceems_record_build(struct ceems_job_record *r,
		   const struct ceems_job_meta *meta,
		   const struct ceems_agent_job_report *report,
		   const char *finalized_by, int64_t now)
{
	int n;

	memset(r, 0, sizeof(*r));
	r->written_at = now;
	snprintf(r->finalized_by, sizeof(r->finalized_by), "%s", finalized_by);
	r->meta = *meta;
	r->report = *report;
	n = ceems_summary_notes(meta, report, r->notes,
				CEEMS_SUMMARY_MAX_NOTES);
	r->nnotes = n > 0 ? (size_t)n : 0;
}

struct ceems_summary_note *
ceems_record_add_note(struct ceems_job_record *r, const char *id)
{
	struct ceems_summary_note *note =
		&r->notes[r->nnotes < CEEMS_SUMMARY_MAX_NOTES ?
			  r->nnotes++ : CEEMS_SUMMARY_MAX_NOTES - 1];

	memset(note, 0, sizeof(*note));
	snprintf(note->id, sizeof(note->id), "%s", id);
	return note;
}

void
ceems_record_set_advice(struct ceems_job_record *r,
			const struct ceems_advice *a)
{
	struct ceems_summary_note note;

	r->have_advice = ceems_advice_known(a);
	if (!r->have_advice)
		return;
	r->advice = *a;
	/* The record's notes are the summary's: one node's advice is no
	 * note of a job of several (ceems_summary_format_advice). */
	if (r->meta.nnodes <= 1 && ceems_summary_carbon_note(a, &note))
		*ceems_record_add_note(r, note.id) = note;
}

static struct json_object *
notes_to_json(const struct ceems_job_record *r, bool *ok)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr != NULL && i < r->nnotes; i++) {
		const struct ceems_summary_note *n = &r->notes[i];
		struct json_object *o = json_object_new_object();
		bool note_ok = o != NULL;

		if (o != NULL) {
			ceems_json_util_add(o, "id", ceems_json_util_new_text(n->id, sizeof(n->id)),
				       &note_ok);
			ceems_json_util_add(o, "text",
				       ceems_json_util_new_text(n->text, sizeof(n->text)),
				       &note_ok);
			if (n->have_saving_j)
				ceems_json_util_add_double(o, "saving_j", n->saving_j, &note_ok);
			if (n->have_saving_g)
				ceems_json_util_add_double(o, "saving_g", n->saving_g, &note_ok);
		}
		if (!note_ok || json_object_array_add(arr, o) != 0) {
			json_object_put(o);
			*ok = false;
		}
	}
	if (arr == NULL)
		*ok = false;
	return arr;
}

int
ceems_record_encode(const struct ceems_job_record *r, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	const char *text;
	size_t len;
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	ceems_json_util_add(obj, "format", json_object_new_string(CEEMS_RECORD_FORMAT), &ok);
	ceems_json_util_add(obj, "written_at", json_object_new_int64(r->written_at), &ok);
	ceems_json_util_add(obj, "finalized_by",
		       ceems_json_util_new_text(r->finalized_by, sizeof(r->finalized_by)), &ok);
	ceems_json_util_add(obj, "job", ceems_job_json_meta_to_json(&r->meta), &ok);
	ceems_json_util_add(obj, "measurements",
		       ceems_measure_json_report_to_json(&r->report), &ok);
	ceems_json_util_add(obj, "notes", notes_to_json(r, &ok), &ok);
	/* Only when the job marked: unknown is not zero. */
	if (r->marks.n > 0)
		ceems_json_util_add(obj, "marks", ceems_marks_to_json(&r->marks), &ok);
	if (r->have_advice)
		ceems_json_util_add(obj, "advice",
				    ceems_advice_to_json(&r->advice), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	if (r->report.series != NULL) {
		/* A long series is coarsened until the record fits its
		 * limit: the record is never refused for its series. */
		int n = ceems_agent_series_serialize_with(obj, "series", r->report.series,
						    buf, size < CEEMS_RECORD_MAX + 1 ?
						    size : CEEMS_RECORD_MAX + 1);

		json_object_put(obj);
		return n;
	}
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	len = text != NULL ? strlen(text) : 0;
	if (text == NULL || len + 1 > size) {
		json_object_put(obj);
		return text == NULL ? -ENOMEM : -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	json_object_put(obj);
	return (int)len;
}

static int
notes_from_json(const struct json_object *arr, struct ceems_job_record *r,
		char *err, size_t err_size)
{
	size_t n;
	int ret;

	if (!json_object_is_type(arr, json_type_array))
		return ceems_json_util_error(err, err_size, "notes must be an array");
	n = json_object_array_length(arr);
	if (n > CEEMS_SUMMARY_MAX_NOTES)
		return ceems_json_util_error(err, err_size, "more than %d notes",
					CEEMS_SUMMARY_MAX_NOTES);
	for (size_t i = 0; i < n; i++) {
		const struct json_object *o = json_object_array_get_idx(arr, i);
		struct ceems_summary_note *note = &r->notes[i];
		struct json_object *val;

		if (!json_object_is_type(o, json_type_object))
			return ceems_json_util_error(err, err_size, "notes[] must be objects");
		if ((val = ceems_json_util_get(o, "id")) == NULL ||
		    (ret = ceems_json_util_read_string(val, "notes[].id", note->id,
						  sizeof(note->id), err, err_size)) < 0)
			return val == NULL ? ceems_json_util_error(err, err_size,
							      "notes[].id is missing") : ret;
		if ((val = ceems_json_util_get(o, "text")) == NULL ||
		    (ret = ceems_json_util_read_string(val, "notes[].text", note->text,
						  sizeof(note->text), err, err_size)) < 0)
			return val == NULL ? ceems_json_util_error(err, err_size,
							      "notes[].text is missing") : ret;
		if ((val = ceems_json_util_get(o, "saving_j")) != NULL) {
			if ((ret = ceems_json_util_read_real(val, "notes[].saving_j", 0, 1e15,
							&note->saving_j, err, err_size)) < 0)
				return ret;
			note->have_saving_j = true;
		}
		if ((val = ceems_json_util_get(o, "saving_g")) != NULL) {
			if ((ret = ceems_json_util_read_real(val, "notes[].saving_g", 0, 1e15,
							&note->saving_g, err, err_size)) < 0)
				return ret;
			note->have_saving_g = true;
		}
	}
	r->nnotes = n;
	return 0;
}

int
ceems_record_decode(const char *buf, size_t len, struct ceems_job_record *out,
		    char *err, size_t err_size)
{
	return ceems_record_decode_series(buf, len, out, NULL, err, err_size);
}

int
ceems_record_decode_series(const char *buf, size_t len,
			   struct ceems_job_record *out,
			   struct ceems_series **series_out, char *err,
			   size_t err_size)
{
	static const char *const known[] = { "format", "written_at",
		"finalized_by", "job", "measurements", "notes", "series", "marks",
		"advice", NULL };
	struct ceems_job_record *r;
	struct json_object *obj, *val;
	uint64_t u;
	char format[32];
	struct ceems_series *series = NULL;
	int ret = -EINVAL;

	if (series_out != NULL)
		*series_out = NULL;
	if (len > CEEMS_RECORD_MAX)
		return ceems_json_util_error(err, err_size, "record larger than %d bytes",
					CEEMS_RECORD_MAX);
	obj = ceems_json_util_parse(buf, len, true, err, err_size);
	if (obj == NULL)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		json_object_put(obj);
		return ceems_json_util_error(err, err_size, "out of memory");
	}
	if (!json_object_is_type(obj, json_type_object)) {
		ceems_json_util_error(err, err_size, "a record is a JSON object");
		goto out;
	}
	if (ceems_json_util_check_keys(obj, "record", known, err, err_size) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "format")) == NULL ||
	    ceems_json_util_read_string(val, "format", format, sizeof(format), err,
				   err_size) < 0 ||
	    strcmp(format, CEEMS_RECORD_FORMAT) != 0) {
		ceems_json_util_error(err, err_size, "not a %s document", CEEMS_RECORD_FORMAT);
		goto out;
	}
	if ((val = ceems_json_util_get(obj, "written_at")) == NULL ||
	    ceems_json_util_read_uint(val, "written_at", 1, 7258118400ULL, &u, err,
				 err_size) < 0) {
		if (val == NULL)
			ceems_json_util_error(err, err_size, "written_at is missing");
		goto out;
	}
	r->written_at = (int64_t)u;
	if ((val = ceems_json_util_get(obj, "finalized_by")) == NULL ||
	    ceems_json_util_read_string(val, "finalized_by", r->finalized_by,
				   sizeof(r->finalized_by), err, err_size) < 0) {
		if (val == NULL)
			ceems_json_util_error(err, err_size, "finalized_by is missing");
		goto out;
	}
	if ((val = ceems_json_util_get(obj, "job")) == NULL) {
		ceems_json_util_error(err, err_size, "job is missing");
		goto out;
	}
	if (ceems_job_json_meta_from_json(val, &r->meta, err, err_size) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "measurements")) == NULL) {
		ceems_json_util_error(err, err_size, "measurements is missing");
		goto out;
	}
	if (ceems_measure_json_report_from_json(val, &r->report, err, err_size) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "notes")) != NULL &&
	    notes_from_json(val, r, err, err_size) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "marks")) != NULL &&
	    ceems_marks_from_json(val, &r->marks, err, err_size) < 0)
		goto out;
	if ((val = ceems_json_util_get(obj, "advice")) != NULL) {
		if (ceems_advice_from_json(val, &r->advice, err,
						  err_size) < 0)
			goto out;
		r->have_advice = true;
	}
	/* Checked, and kept only for a caller that asks (see record.h). */
	if ((val = ceems_json_util_get(obj, "series")) != NULL &&
	    ceems_agent_series_from_json(val, &series, err, err_size) < 0)
		goto out;
	if (ceems_record_validate(r, err, err_size) < 0)
		goto out;
	*out = *r;
	if (series_out != NULL) {
		*series_out = series;
		series = NULL;
	}
	ret = 0;
out:
	ceems_agent_series_free(series);
	free(r);
	json_object_put(obj);
	return ret;
}

static bool
known_state(const char *s)
{
	static const char *const states[] = { "COMPLETED", "FAILED",
		"CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "NODE_FAIL",
		"PREEMPTED", "BOOT_FAIL", "DEADLINE", "REQUEUED", "RUNNING",
		NULL };

	for (int i = 0; states[i] != NULL; i++)
		if (strcmp(s, states[i]) == 0)
			return true;
	return false;
}

int
ceems_record_validate(const struct ceems_job_record *r, char *err,
		      size_t err_size)
{
	const struct ceems_job_meta *m = &r->meta;
	/* A day of clock skew between nodes is tolerated, no more. */
	const int64_t future = r->written_at + 86400;

	if (m->jobid == 0 || m->jobid == CEEMS_UNKNOWN_U32)
		return ceems_json_util_error(err, err_size, "the record has no job id");
	if (r->report.jobid != m->jobid)
		return ceems_json_util_error(err, err_size,
					"measurements are for job %u, the record for job %u",
					r->report.jobid, m->jobid);
	if (m->uid == CEEMS_UNKNOWN_U32 || r->report.uid != m->uid)
		return ceems_json_util_error(err, err_size,
					"job %u: owner unknown or not the measured one",
					m->jobid);
	if ((m->array_job_id == CEEMS_UNKNOWN_U32) !=
	    (m->array_task_id == CEEMS_UNKNOWN_U32))
		return ceems_json_util_error(err, err_size,
					"job %u: array_job_id and array_task_id come together or not at all",
					m->jobid);
	if (strcmp(r->finalized_by, "extern") != 0 &&
	    strcmp(r->finalized_by, "epilog") != 0 &&
	    strcmp(r->finalized_by, "agent") != 0)
		return ceems_json_util_error(err, err_size, "job %u: finalized_by '%s' is not extern, epilog or agent",
					m->jobid, r->finalized_by);
	if (m->state[0] != '\0' && !known_state(m->state))
		return ceems_json_util_error(err, err_size, "job %u: state '%s' is not a Slurm job state",
					m->jobid, m->state);
	if ((m->submit_time != 0 && m->start_time != 0 &&
	     m->start_time < m->submit_time) ||
	    (m->start_time != 0 && m->end_time != 0 && m->end_time < m->start_time))
		return ceems_json_util_error(err, err_size, "job %u: submit, start and end times are out of order",
					m->jobid);
	if (m->submit_time > future || m->start_time > future || m->end_time > future)
		return ceems_json_util_error(err, err_size, "job %u: a time lies after the record was written",
					m->jobid);
	if (r->report.elapsed_s > 366.0 * 86400 * 10)
		return ceems_json_util_error(err, err_size, "job %u: elapsed time of %.0f s is absurd",
					m->jobid, r->report.elapsed_s);
	return 0;
}

