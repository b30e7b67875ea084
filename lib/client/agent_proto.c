/* agent_proto.c - the node agent's messages as JSON: requests encoded
 * and strictly decoded, replies built and decoded, and the errno names
 * used on the wire (the format is described in agent_proto.h and
 * ceems-agent(8)).  Requests come from other processes, so the decoder
 * treats every byte as hostile: bounded size and nesting, exact types,
 * ranges checked.  Replies are decoded type-checked but tolerant of
 * unknown keys, so that an agent can grow fields without breaking older
 * clients.  The job spec they carry is in agent_proto_spec.c, the job
 * report in the measurement model's codec (measure.h, measure_json.c),
 * the job's metadata in job_json.c. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "model/job.h"
#include "base/json_util.h"
#include "cgroup/step_ids.h"
#include "model/measure.h"

/* ------------------------------------------------------------------ */
/* Errno names on the wire                                             */
/* ------------------------------------------------------------------ */

static const struct {
	int code;
	const char *name;
} codes[] = {
	{ -EEXIST, "EEXIST" }, { -ENOENT, "ENOENT" }, { -ENOSPC, "ENOSPC" },
	{ -EPERM, "EPERM" }, { -EINVAL, "EINVAL" }, { -EMSGSIZE, "EMSGSIZE" },
	{ -EBUSY, "EBUSY" }, { -EIO, "EIO" }, { -ENOMEM, "ENOMEM" },
	{ -EACCES, "EACCES" },
};

const char *
ceems_agent_proto_code_name(int code)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == code)
			return codes[i].name;
	return "EIO";
}

int
ceems_agent_proto_code_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strcmp(codes[i].name, name) == 0)
			return codes[i].code;
	return -EREMOTEIO;
}

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

/* Serialize OBJ into BUF and drop it.  Length, -ENOSPC or -ENOMEM. */
static int
finish(struct json_object *obj, char *buf, size_t size)
{
	const char *text;
	size_t len;

	if (obj == NULL)
		return -ENOMEM;
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (text == NULL) {
		json_object_put(obj);
		return -ENOMEM;
	}
	len = strlen(text);
	if (len >= size || len > INT32_MAX) {
		json_object_put(obj);
		return -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	json_object_put(obj);
	return (int)len;
}

static const char *const op_names[] = {
	[CEEMS_AGENT_OP_REGISTER] = "register",
	[CEEMS_AGENT_OP_DEREGISTER] = "deregister",
	[CEEMS_AGENT_OP_REPORT] = "report",
	[CEEMS_AGENT_OP_STATUS] = "status",
	[CEEMS_AGENT_OP_STEP_START] = "step_start",
	[CEEMS_AGENT_OP_STEP_END] = "step_end",
	[CEEMS_AGENT_OP_RELEASE] = "release",
	[CEEMS_AGENT_OP_MARK] = "mark",
};

int
ceems_agent_proto_request_encode(const struct ceems_agent_request *req, char *buf,
			   size_t size)
{
	struct json_object *obj;
	bool ok = true;

	if (req->op < CEEMS_AGENT_OP_REGISTER || req->op > CEEMS_AGENT_OP_MARK)
		return -EINVAL;
	obj = json_object_new_object();
	if (obj == NULL)
		return -ENOMEM;
	ceems_json_util_add(obj, "op", json_object_new_string(op_names[req->op]), &ok);
	switch (req->op) {
	case CEEMS_AGENT_OP_REGISTER:
		ceems_json_util_add(obj, "job", ceems_agent_proto_spec_to_json(&req->spec), &ok);
		if (req->step[0] != '\0')
			ceems_json_util_add(obj, "step",
				       ceems_json_util_new_text(req->step, sizeof(req->step)), &ok);
		if (req->step[0] != '\0' && req->tasks > 0)
			ceems_json_util_add(obj, "tasks", json_object_new_int64(req->tasks), &ok);
		break;
	case CEEMS_AGENT_OP_DEREGISTER:
	case CEEMS_AGENT_OP_REPORT:
	case CEEMS_AGENT_OP_RELEASE:
		ceems_json_util_add(obj, "jobid", json_object_new_int64(req->jobid), &ok);
		if (req->op == CEEMS_AGENT_OP_DEREGISTER && req->have_meta)
			ceems_json_util_add(obj, "meta",
				       ceems_job_json_meta_to_json(&req->meta), &ok);
		if (req->op == CEEMS_AGENT_OP_REPORT && req->now)
			ceems_json_util_add(obj, "now", json_object_new_boolean(1), &ok);
		if (req->op == CEEMS_AGENT_OP_DEREGISTER && req->by[0] != '\0')
			ceems_json_util_add(obj, "by", json_object_new_string(req->by),
				       &ok);
		break;
	case CEEMS_AGENT_OP_STATUS:
		break;
	case CEEMS_AGENT_OP_STEP_START:
	case CEEMS_AGENT_OP_STEP_END:
		ceems_json_util_add(obj, "jobid", json_object_new_int64(req->jobid), &ok);
		ceems_json_util_add(obj, "step",
			       ceems_json_util_new_text(req->step, sizeof(req->step)), &ok);
		if (req->op == CEEMS_AGENT_OP_STEP_START && req->tasks > 0)
			ceems_json_util_add(obj, "tasks", json_object_new_int64(req->tasks), &ok);
		if (req->op == CEEMS_AGENT_OP_STEP_END && req->have_status)
			ceems_json_util_add(obj, "status",
				       json_object_new_int64(req->status), &ok);
		if (req->op == CEEMS_AGENT_OP_STEP_END && req->name[0] != '\0')
			ceems_json_util_add(obj, "name", ceems_json_util_new_text(req->name,
					    sizeof(req->name)), &ok);
		break;
	case CEEMS_AGENT_OP_MARK:
		ceems_agent_proto_mark_encode(obj, req, &ok);
		break;
	}
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

/* The optional number KEY of OBJ, MIN..MAX, into *OUT: 1 when there, 0
 * when not; a refusal with the sentence REFUSED when it is there and
 * must not be (REFUSED NULL: it may). */
static int
agent_proto_optional_uint(const struct json_object *obj, const char *key,
			  const char *refused, uint64_t min, uint64_t max,
			  uint64_t *out, char *err, size_t err_size)
{
	const struct json_object *val = ceems_json_util_get(obj, key);
	int r;

	if (val == NULL)
		return 0;
	if (refused != NULL)
		return ceems_json_util_error(err, err_size, "%s", refused);
	if ((r = ceems_json_util_read_uint(val, key, min, max, out, err,
					   err_size)) < 0)
		return r;
	return 1;
}

/* A step_end's optional "status": a wait status, 0..65535; step_start
 * has none. */
static int
agent_proto_read_status(const struct json_object *obj,
			struct ceems_agent_request *req, char *err,
			size_t err_size)
{
	uint64_t status;
	int r = agent_proto_optional_uint(obj, "status",
			req->op != CEEMS_AGENT_OP_STEP_END ?
			"step_start request: unknown key \"status\"" : NULL,
			0, 65535, &status, err, err_size);

	if (r > 0) {
		req->status = (int)status;
		req->have_status = true;
	}
	return r < 0 ? r : 0;
}

/* The optional "tasks" of a step_start, or of a register that carries a
 * step: the step's tasks on this node, 1..65535; step_end has none. */
static int
agent_proto_read_tasks(const struct json_object *obj,
		       struct ceems_agent_request *req, char *err,
		       size_t err_size)
{
	uint64_t tasks;
	int r = agent_proto_optional_uint(obj, "tasks",
			req->op == CEEMS_AGENT_OP_STEP_END ?
			"step_end request: unknown key \"tasks\"" :
			req->step[0] == '\0' ?
			"register request: \"tasks\" needs \"step\"" : NULL,
			1, UINT16_MAX, &tasks, err, err_size);

	if (r > 0)
		req->tasks = (uint32_t)tasks;
	return r < 0 ? r : 0;
}

/* A deregister's "by": "extern" or "epilog", nothing else. */
static int
agent_proto_read_by(const struct json_object *val, char *by, size_t size,
		    char *err, size_t err_size)
{
	int r = ceems_json_util_read_string(val, "by", by, size, err, err_size);

	if (r < 0)
		return r;
	if (strcmp(by, "extern") != 0 && strcmp(by, "epilog") != 0)
		return ceems_json_util_error(err, err_size, "deregister request: "
					"\"by\" must be \"extern\" or \"epilog\"");
	return 0;
}

/* The "jobid" of the OP request OBJ into *JOBID: 0 or -EINVAL with ERR. */
static int
read_jobid(const struct json_object *obj, const char *op, uint32_t *jobid,
	   char *err, size_t err_size)
{
	struct json_object *val;
	uint64_t u;
	int r;

	if ((val = ceems_json_util_get(obj, "jobid")) == NULL)
		return ceems_json_util_error(err, err_size, "%s request needs \"jobid\"", op);
	if ((r = ceems_json_util_read_uint(val, "jobid", 1, UINT32_MAX, &u, err,
				      err_size)) < 0)
		return r;
	*jobid = (uint32_t)u;
	return 0;
}

/* deregister, report and release: a job id and what each adds. */
static int
decode_jobid_op(const struct json_object *obj, const char *op,
		struct ceems_agent_request *req, char *err, size_t err_size)
{
	static const char *const known_jobid[] = { "op", "jobid", NULL };
	static const char *const known_report[] = { "op", "jobid", "now", NULL };
	static const char *const known_deregister[] = { "op", "jobid", "meta",
							"by", NULL };
	struct json_object *val;
	int r;

	req->op = op[0] == 'd' ? CEEMS_AGENT_OP_DEREGISTER :
		  op[0] == 'r' && op[2] == 'p' ? CEEMS_AGENT_OP_REPORT :
		  CEEMS_AGENT_OP_RELEASE;
	if ((r = ceems_json_util_check_keys(obj,
			op[0] == 'd' ? "deregister request" :
			req->op == CEEMS_AGENT_OP_REPORT ? "report request" :
			"release request",
			op[0] == 'd' ? known_deregister :
			req->op == CEEMS_AGENT_OP_REPORT ? known_report :
			known_jobid, err, err_size)) < 0)
		return r;
	if (req->op == CEEMS_AGENT_OP_REPORT &&
	    (val = ceems_json_util_get(obj, "now")) != NULL &&
	    (r = ceems_json_util_read_bool(val, "now", &req->now, err,
			   err_size)) < 0)
		return r;
	if (req->op == CEEMS_AGENT_OP_DEREGISTER &&
	    (val = ceems_json_util_get(obj, "meta")) != NULL) {
		if ((r = ceems_job_json_meta_from_json(val, &req->meta, err,
							       err_size)) < 0)
			return r;
		req->have_meta = true;
	}
	if (req->op == CEEMS_AGENT_OP_DEREGISTER &&
	    (val = ceems_json_util_get(obj, "by")) != NULL &&
	    (r = agent_proto_read_by(val, req->by, sizeof(req->by), err,
			     err_size)) < 0)
		return r;
	if ((r = read_jobid(obj, op, &req->jobid, err, err_size)) < 0)
		return r;
	if (req->have_meta && req->meta.jobid != req->jobid) {
		r = ceems_json_util_error(err, err_size, "deregister request: "
			     "meta.jobid is not jobid");
		return r;
	}
	return 0;
}

/* "step" of OBJ into REQ->step: a Slurm step name. */
static int
read_step(const struct json_object *obj, const char *op,
	  struct ceems_agent_request *req, char *err, size_t err_size)
{
	const struct json_object *val = ceems_json_util_get(obj, "step");
	int r;

	if (val == NULL)
		return ceems_json_util_error(err, err_size, "%s request needs \"step\"", op);
	if ((r = ceems_json_util_read_string(val, "step", req->step, sizeof(req->step),
					     err, err_size)) < 0)
		return r;
	if (!ceems_step_ids_name_ok(req->step))
		return ceems_json_util_error(err, err_size, "step must be a Slurm step name "
					     "(batch, extern, interactive, 0, 1, ...)");
	return 0;
}

int
ceems_agent_proto_request_decode(const char *buf, size_t len,
			   struct ceems_agent_request *req, char *err,
			   size_t err_size)
{
	static const char *const known_register[] = { "op", "job", "step",
						      "tasks", NULL };
	static const char *const known_status[] = { "op", NULL };
	static const char *const known_step[] = { "op", "jobid", "step",
						  "status", "tasks", "name", NULL };
	struct json_object *obj, *val;
	const char *op;
	int r = -EINVAL;

	if (len > CEEMS_AGENT_MSG_MAX) {
		ceems_json_util_error(err, err_size, "request is larger than %d bytes",
		       CEEMS_AGENT_MSG_MAX);
		return -EMSGSIZE;
	}
	obj = ceems_json_util_parse(buf, len, true, err, err_size);
	if (obj == NULL)
		return -EINVAL;
	memset(req, 0, sizeof(*req));
	if (!json_object_is_type(obj, json_type_object)) {
		ceems_json_util_error(err, err_size, "request must be a JSON object");
		goto out;
	}
	val = ceems_json_util_get(obj, "op");
	if (val == NULL || !json_object_is_type(val, json_type_string)) {
		ceems_json_util_error(err, err_size, "request needs \"op\": one of register, "
		       "deregister, release, report, status, step_start, step_end, mark");
		goto out;
	}
	op = json_object_get_string(val);
	if (strcmp(op, "register") == 0) {
		req->op = CEEMS_AGENT_OP_REGISTER;
		if ((r = ceems_json_util_check_keys(obj, "register request", known_register, err,
				    err_size)) < 0)
			goto out;
		if ((val = ceems_json_util_get(obj, "job")) == NULL) {
			r = ceems_json_util_error(err, err_size, "register request needs \"job\"");
			goto out;
		}
		if ((r = ceems_agent_proto_spec_from_json(val, &req->spec, err,
							err_size)) < 0)
			goto out;
		req->jobid = req->spec.jobid;
		/* With a step: the job registered (or known) and the step
		 * started in one request. */
		if (ceems_json_util_get(obj, "step") != NULL &&
		    (r = read_step(obj, "register", req, err, err_size)) < 0)
			goto out;
		if ((r = agent_proto_read_tasks(obj, req, err, err_size)) < 0)
			goto out;
	} else if (strcmp(op, "deregister") == 0 || strcmp(op, "report") == 0 ||
		   strcmp(op, "release") == 0) {
		if ((r = decode_jobid_op(obj, op, req, err, err_size)) < 0)
			goto out;
	} else if (strcmp(op, "step_start") == 0 || strcmp(op, "step_end") == 0) {
		req->op = op[5] == 's' ? CEEMS_AGENT_OP_STEP_START
				       : CEEMS_AGENT_OP_STEP_END;
		if ((r = ceems_json_util_check_keys(obj, "step request", known_step, err,
				    err_size)) < 0)
			goto out;
		if ((r = read_jobid(obj, op, &req->jobid, err, err_size)) < 0)
			goto out;
		if ((r = read_step(obj, op, req, err, err_size)) < 0)
			goto out;
		if ((r = agent_proto_read_status(obj, req, err, err_size)) < 0)
			goto out;
		if ((r = agent_proto_read_tasks(obj, req, err, err_size)) < 0)
			goto out;
		if ((val = ceems_json_util_get(obj, "name")) != NULL &&
		    (req->op != CEEMS_AGENT_OP_STEP_END ||
		     (r = ceems_json_util_read_string(val, "name", req->name,
					sizeof(req->name), err, err_size)) < 0)) {
			if (req->op != CEEMS_AGENT_OP_STEP_END)
				r = ceems_json_util_error(err, err_size,
					"step_start request: unknown key \"name\"");
			goto out;
		}
	} else if (strcmp(op, "mark") == 0) {
		if ((r = ceems_agent_proto_mark_decode(obj, req, err, err_size)) < 0)
			goto out;
	} else if (strcmp(op, "status") == 0) {
		req->op = CEEMS_AGENT_OP_STATUS;
		if ((r = ceems_json_util_check_keys(obj, "status request", known_status, err,
				    err_size)) < 0)
			goto out;
	} else {
		r = ceems_json_util_error(err, err_size, "unknown op '%.40s': expected register, "
			   "deregister, release, report, status, step_start, step_end "
			   "or mark", op);
		goto out;
	}
	r = 0;
out:
	json_object_put(obj);
	return r;
}

int
ceems_agent_proto_reply_ok(const struct ceems_agent_job_report *report, char *buf,
		     size_t size)
{
	return ceems_agent_proto_reply_ok_marks(report, NULL, buf, size);
}

int
ceems_agent_proto_reply_ok_marks(const struct ceems_agent_job_report *report,
				 const struct ceems_marks *marks, char *buf,
				 size_t size)
{
	return ceems_agent_proto_reply_ok_work(report, marks, NULL, NULL, buf,
					       size);
}

int
ceems_agent_proto_reply_ok_work(const struct ceems_agent_job_report *report,
				const struct ceems_marks *marks,
				const struct ceems_marks_history *history,
				const struct ceems_advice *advice,
				char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	ceems_json_util_add(obj, "ok", json_object_new_boolean(1), &ok);
	if (report != NULL)
		ceems_json_util_add(obj, "report", ceems_measure_json_report_to_json(report), &ok);
	/* Written only when the job marked (a client older than marks
	 * ignores the key), in the brief shape every client that knows
	 * marks decodes. */
	if (marks != NULL && marks->n > 0)
		ceems_json_util_add(obj, "marks", ceems_marks_to_json_brief(marks), &ok);
	if (history != NULL && history->n > 0)
		ceems_json_util_add(obj, "history",
				    ceems_marks_history_to_json(history), &ok);
	if (advice != NULL && ceems_advice_known(advice))
		ceems_json_util_add(obj, "advice",
				    ceems_advice_to_json(advice), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	if (report != NULL && report->series != NULL) {
		/* Beside the report, not in it (the record keeps the report
		 * as its measurements); coarsened if it does not fit. */
		int n = ceems_agent_series_serialize_with(obj, "series",
						    report->series, buf, size);

		json_object_put(obj);
		return n;
	}
	return finish(obj, buf, size);
}

int
ceems_agent_proto_reply_started(bool registered, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	ceems_json_util_add(obj, "ok", json_object_new_boolean(1), &ok);
	if (registered)
		ceems_json_util_add(obj, "registered", json_object_new_boolean(1), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

int
ceems_agent_proto_reply_error(int code, const char *message, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	bool ok = obj != NULL;

	if (!ok)
		return -ENOMEM;
	ceems_json_util_add(obj, "ok", json_object_new_boolean(0), &ok);
	/* The message may quote what a client sent. */
	ceems_json_util_add(obj, "error",
		       ceems_json_util_new_text(message, CEEMS_AGENT_ERROR_MAX), &ok);
	ceems_json_util_add(obj, "code", json_object_new_string(ceems_agent_proto_code_name(code)), &ok);
	if (!ok) {
		json_object_put(obj);
		return -ENOMEM;
	}
	return finish(obj, buf, size);
}

int
ceems_agent_proto_reply_decode(const char *buf, size_t len,
			 struct ceems_agent_job_report *report, char *err,
			 size_t err_size)
{
	return ceems_agent_proto_reply_decode_marks(buf, len, report, NULL, err,
						    err_size);
}

int
ceems_agent_proto_reply_decode_marks(const char *buf, size_t len,
				     struct ceems_agent_job_report *report,
				     struct ceems_marks *marks, char *err,
				     size_t err_size)
{
	return ceems_agent_proto_reply_decode_work(buf, len, report, marks, NULL,
						   NULL, err, err_size);
}

int
ceems_agent_proto_reply_decode_work(const char *buf, size_t len,
				    struct ceems_agent_job_report *report,
				    struct ceems_marks *marks,
				    struct ceems_marks_history *history,
				    struct ceems_advice *advice,
				    char *err, size_t err_size)
{
	struct json_object *obj, *val;
	char why[256];
	int r = -EPROTO;

	obj = ceems_json_util_parse(buf, len, false, why, sizeof(why));
	if (obj == NULL) {
		ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
		return -EPROTO;
	}
	if (!json_object_is_type(obj, json_type_object) ||
	    (val = ceems_json_util_get(obj, "ok")) == NULL ||
	    !json_object_is_type(val, json_type_boolean)) {
		ceems_json_util_error(err, err_size, "malformed reply from the agent: no \"ok\"");
		goto out;
	}
	if (!json_object_get_boolean(val)) {
		struct json_object *msg = ceems_json_util_get(obj, "error");
		struct json_object *code = ceems_json_util_get(obj, "code");

		ceems_json_util_error(err, err_size, "%s",
		       msg != NULL && json_object_is_type(msg, json_type_string) &&
			       json_object_get_string(msg)[0] != '\0'
			       ? json_object_get_string(msg)
			       : "the agent refused the request without saying why");
		r = code != NULL && json_object_is_type(code, json_type_string)
			    ? ceems_agent_proto_code_from_name(json_object_get_string(code))
			    : -EREMOTEIO;
		goto out;
	}
	/* Before the report, whose series is the only thing allocated. */
	if (marks != NULL) {
		memset(marks, 0, sizeof(*marks));
		if ((val = ceems_json_util_get(obj, "marks")) != NULL &&
		    ceems_marks_from_json(val, marks, why, sizeof(why)) < 0) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
	}
	if (history != NULL) {
		memset(history, 0, sizeof(*history));
		if ((val = ceems_json_util_get(obj, "history")) != NULL &&
		    ceems_marks_history_from_json(val, history, why, sizeof(why)) < 0) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
	}
	if (advice != NULL) {
		ceems_advice_none(advice);
		if ((val = ceems_json_util_get(obj, "advice")) != NULL &&
		    ceems_advice_from_json(val, advice, why, sizeof(why)) < 0) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
	}
	if (report != NULL) {
		if ((val = ceems_json_util_get(obj, "report")) == NULL) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: no report");
			goto out;
		}
		if (ceems_measure_json_report_from_json(val, report, why,
						     sizeof(why)) < 0) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
		if ((val = ceems_json_util_get(obj, "series")) != NULL &&
		    ceems_agent_series_from_json(val, &report->series, why,
					   sizeof(why)) < 0) {
			ceems_json_util_error(err, err_size, "malformed reply from the agent: %s", why);
			goto out;
		}
	}
	val = ceems_json_util_get(obj, "registered");
	r = val != NULL && json_object_is_type(val, json_type_boolean) &&
	    json_object_get_boolean(val) ? 1 : 0;
out:
	json_object_put(obj);
	return r;
}
