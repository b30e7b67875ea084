/* agent_proto.h - the node agent's wire protocol: JSON messages over a
 * local unix SOCK_SEQPACKET socket, one request and one reply per
 * message (the socket keeps message boundaries, so there is no framing),
 * at most CEEMS_AGENT_MSG_MAX bytes each.  The job-side plugin uses the
 * client calls of agent_client.h; the agent decodes requests with the
 * strict decoder (a malformed request gets a one-sentence error, never a
 * crash).  What the messages carry is the model's: the job spec
 * (job_spec.h), the job's report (measure.h, whose codec is
 * measure_json.c), the job's metadata (job.h).
 *
 * Requests (every key shown is the only one allowed):
 *   {"op":"register","job":SPEC}
 *   {"op":"deregister","jobid":N}      ("meta":JOB, "by":"extern"|"epilog"
 *                                      optional)
 *   {"op":"release","jobid":N}         (the record is stored)
 *   {"op":"report","jobid":N}          ("now":true optional: the
 *                                      figures up to now, not up to the
 *                                      last tick)
 *   {"op":"status"}
 *   {"op":"step_start","jobid":N,"step":"batch"}   ("tasks":N optional:
 *                                   the step's tasks on this node,
 *                                   1..65535; a register that carries
 *                                   a step may carry it too)
 *   {"op":"step_end","jobid":N,"step":"0"}     (reply: the job's report;
 *                                   "status":N optional, the step's wait
 *                                   status, 0..65535; "name":s optional,
 *                                   the job's name: the reply then
 *                                   compares its marks with the user's
 *                                   earlier runs of it, "history")
 *   {"op":"mark","jobid":N,"name":"steps","unit":"timesteps","add":X}
 *   {"op":"mark","jobid":N,"name":"steps","unit":"timesteps","set":X}
 *   ("tag":"lammps" optional, the application the counter's work is of)
 *                                   the job's work (model/marks.h): one
 *                                   counter grows by X ("add") or is X
 *                                   ("set", cumulative); exactly one of
 *                                   the two.  Taken only from a process
 *                                   inside the job's cgroup, of its
 *                                   owner (doc/marks.md).
 * Replies:
 *   {"ok":true}                       register
 *   {"ok":true,"report":REPORT}       deregister (final), report
 *   {"ok":true,"report":REPORT,"series":SERIES}
 *                                     deregister of a job that kept a
 *                                     time series (lib/model/agent_series.h);
 *                                     coarsened until the reply fits
 *                                     CEEMS_AGENT_MSG_MAX
 *   {"ok":true}                       release, mark
 *   {"ok":true,"report":REPORT,"marks":MARKS,...}
 *                                     deregister, report and step_end
 *                                     of a job that marked its work:
 *                                     MARKS as model/marks.h writes it;
 *                                     "history":HISTORY (marks.h) too
 *                                     for a step_end with "name" when
 *                                     the user ran the job before
 *   {"ok":true,...}                   status: fields listed in ceems-agent(8)
 *   {"ok":false,"error":"<one sentence>","code":"EEXIST"}
 *     code is the errno name of the refusal (EEXIST, ENOENT, ENOSPC,
 *     EPERM, EINVAL, EMSGSIZE, EBUSY, EIO); clients map it back.
 *
 * A deregister with "by" ends the job in one call: the agent replies with
 * the final report, then writes the record itself (the spool, replayed
 * into PostgreSQL off its event loop), finalized_by BY, with JOB.
 * Without "by" (older plugins), the end of a job is in two phases: deregister replies with the final
 * report and the agent keeps it; once the record is stored, the plugin
 * sends release.  Without a release within finish_grace the agent
 * writes the record itself (lib/agent/agent_finish.h), with the job object
 * JOB (the record's "job", doc/record-format.md) when deregister
 * carried one.  A deregister repeated before that returns the same
 * report.  A client that never sends release (older plugins) still
 * works: the record is then written twice, the later one by the agent.
 *
 * SPEC (struct ceems_agent_job_spec):
 *   {"jobid":N (1..2^32-1), "uid":N (0..2^32-2),
 *    "cgroup":{"version":1|2, "unified":"/path", "v1":{"cpuacct":"/path",
 *              "memory":..., "cpuset":..., "pids":..., "blkio":...,
 *              "freezer":...}},
 *    "alloc_cores":N, "alloc_mem_bytes":N, "gpu_share":[x0, x1, ...],
 *    "series":true, "start_time":N, "cluster":"name"}
 *   Paths are absolute, relative to each hierarchy's root, with no "."
 *   or ".." component and no control character.  A v2 job needs
 *   "unified", a v1 job at least one "v1" path.  alloc_cores,
 *   alloc_mem_bytes (0 = let the agent read the cgroup) and gpu_share
 *   (at most CEEMS_LEDGER_MAX_GPUS numbers in [0, 1]) are optional.
 *   "series" (keep the job's time series, --ceems-series) is optional
 *   and written only when true, so that an older agent still takes
 *   every other registration.  "start_time" (Slurm's start time of the
 *   job, Unix seconds, 1..CEEMS_AGENT_START_TIME_MAX) and "cluster" (a
 *   non-empty name, at most 63 bytes, no control character) are
 *   optional, written only when known: absent means unknown.  A second
 *   register of a job with them fills them in (ceems_agent_register). 
 *
 * "tasks" is newer than "step": an agent older than it refuses a
 * request with it as invalid, and the job-side client then asks again
 * without it (ceems_jobside_start), so that a step still starts with
 * an older agent and its task count is unknown.
 *
 * REPORT (struct ceems_agent_job_report): the job's report as the
 *   measurement model writes it (measure.h, where its members are listed).
 * Numbers are JSON integers for counters and ids, doubles otherwise
 * (written with the fewest digits, up to 17, that round-trip exactly). */
#ifndef CEEMS_AGENT_PROTO_H
#define CEEMS_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/carbon_advice.h"
#include "model/job.h"
#include "model/job_spec.h"
#include "model/marks.h"
#include "model/measure.h"

/* Room for a deregister's "by". */
#define CEEMS_AGENT_BY_MAX 16

/* Largest request or reply, bytes. */
#define CEEMS_AGENT_MSG_MAX 65536

enum ceems_agent_op {
	CEEMS_AGENT_OP_REGISTER = 1,
	CEEMS_AGENT_OP_DEREGISTER,
	CEEMS_AGENT_OP_REPORT,
	CEEMS_AGENT_OP_STATUS,
	CEEMS_AGENT_OP_STEP_START,
	CEEMS_AGENT_OP_STEP_END,
	CEEMS_AGENT_OP_RELEASE,
	CEEMS_AGENT_OP_MARK,
};

struct ceems_agent_request {
	enum ceems_agent_op op;
	uint32_t jobid;		/* deregister, report; register: spec.jobid */
	struct ceems_agent_job_spec spec;	/* register only */
	/* step_start, step_end; register: "" or the step to start with
	 * the job's registration, in one request */
	char step[CEEMS_STEP_ID_MAX];
	/* step_start, register with a step: the step's tasks on this node
	 * (1..65535), 0 when not known (then not written). */
	uint32_t tasks;
	/* step_end: the wait status of the step's task that failed, else
	 * of its last one, when the plugin has it (HAVE_STATUS). */
	bool have_status;
	int status;
	bool have_meta;				/* deregister */
	struct ceems_job_meta meta;
	/* deregister: who ends the job, "extern" or "epilog"; "" when not
	 * said (the agent then waits for a release, as before). */
	char by[CEEMS_AGENT_BY_MAX];
	/* report: as of now (the job's share since the last tick added,
	 * ceems_agent_report_now), not as of the last tick. */
	bool now;
	/* mark: one mark of counter MARK_NAME in MARK_UNIT, tagged
	 * MARK_TAG ("" none). */
	char mark_name[CEEMS_MARKS_NAME_MAX];
	char mark_unit[CEEMS_MARKS_NAME_MAX];
	char mark_tag[CEEMS_MARKS_NAME_MAX];
	enum ceems_marks_mode mark_mode;
	double mark_value;
	/* step_end: the job's name, "" not sent (its work is then not
	 * compared with the user's earlier runs). */
	char name[256];
};

struct json_object;

/* ---- JSON objects (json-c), for callers that embed them ---- */


/* A new JSON object, or NULL on allocation failure.  A report's JSON is
 * the model's (measure.h). */
struct json_object *
ceems_agent_proto_spec_to_json(const struct ceems_agent_job_spec *spec);

/* Strict: unknown keys, wrong types, out-of-range numbers and bad paths
 * are errors.  0, or -EINVAL with ERR naming the field. */
int ceems_agent_proto_spec_from_json(const struct json_object *obj,
				   struct ceems_agent_job_spec *spec,
				   char *err, size_t err_size);

/* ---- Messages as text ---- */

/* Write REQ as a request message into BUF (NUL-terminated).  Returns its
 * length, -ENOSPC when BUF is too small, -EINVAL, -ENOMEM. */
int ceems_agent_proto_request_encode(const struct ceems_agent_request *req,
			       char *buf, size_t size);

/* Decode the LEN bytes at BUF (no NUL needed).  Returns 0, or -EINVAL
 * (-EMSGSIZE for a message over CEEMS_AGENT_MSG_MAX) with ERR holding
 * one sentence fit to send back to the client. */
int ceems_agent_proto_request_decode(const char *buf, size_t len,
			       struct ceems_agent_request *req, char *err,
			       size_t err_size);

/* {"ok":true}, or {"ok":true,"report":...} when REPORT is not NULL.
 * Returns the length written, or -ENOSPC / -ENOMEM. */
int ceems_agent_proto_reply_ok(const struct ceems_agent_job_report *report,
			 char *buf, size_t size);
/* The same with the job's work beside the report when MARKS is not NULL
 * and holds a counter, and its comparison with the user's earlier runs
 * when HISTORY is not NULL and holds one. */
int ceems_agent_proto_reply_ok_marks(const struct ceems_agent_job_report *report,
				     const struct ceems_marks *marks,
				     char *buf, size_t size);
/* And the job's carbon-aware advice when ADVICE is not NULL and known
 * (model/carbon_advice.h). */
int ceems_agent_proto_reply_ok_work(const struct ceems_agent_job_report *report,
				    const struct ceems_marks *marks,
				    const struct ceems_marks_history *history,
				    const struct ceems_advice *advice,
				    char *buf, size_t size);
/* The reply to a register that carries a step (the step started):
 * {"ok":true,"registered":true} when the request registered the job,
 * {"ok":true} when it was registered already.  Returns the length
 * written, or -ENOSPC / -ENOMEM. */
int ceems_agent_proto_reply_started(bool registered, char *buf, size_t size);
/* Longest MESSAGE of a refusal, bytes: longer is cut (as text.h cuts). */
#define CEEMS_AGENT_ERROR_MAX 1024

/* {"ok":false,"error":MESSAGE,"code":NAME} for the negative errno CODE.
 * Returns the length written, or -ENOSPC / -ENOMEM. */
int ceems_agent_proto_reply_error(int code, const char *message, char *buf,
			    size_t size);

/* Decode a reply.  Returns 0 for ok, 1 for ok with "registered"
 * (ceems_agent_proto_reply_started) (REPORT, when not NULL, is filled
 * from the reply's report, which must then be present; REPORT->series
 * is a new series when the reply has one, else NULL: free it with
 * ceems_agent_series_free); for a refusal
 * the negative errno its code names (-EREMOTEIO for an unknown code),
 * ERR holding the agent's sentence; -EPROTO for a malformed reply. */
int ceems_agent_proto_reply_decode(const char *buf, size_t len,
			     struct ceems_agent_job_report *report,
			     char *err, size_t err_size);
/* The same, and MARKS (when not NULL) filled from the reply's "marks",
 * n 0 when it has none. */
int ceems_agent_proto_reply_decode_marks(const char *buf, size_t len,
					 struct ceems_agent_job_report *report,
					 struct ceems_marks *marks,
					 char *err, size_t err_size);
/* The same, and HISTORY (when not NULL) from the reply's "history", n 0
 * when it has none; ADVICE (when not NULL) from its "advice", no series
 * when it has none. */
int ceems_agent_proto_reply_decode_work(const char *buf, size_t len,
					struct ceems_agent_job_report *report,
					struct ceems_marks *marks,
					struct ceems_marks_history *history,
					struct ceems_advice *advice,
					char *err, size_t err_size);

/* agent_proto_mark.c: a mark request's own keys, both ways.  Encode
 * adds them to OBJ (*OK false on failure); decode checks them strictly
 * into REQ: 0, or -EINVAL with ERR. */
void ceems_agent_proto_mark_encode(struct json_object *obj,
				   const struct ceems_agent_request *req,
				   bool *ok);
int ceems_agent_proto_mark_decode(const struct json_object *obj,
				  struct ceems_agent_request *req, char *err,
				  size_t err_size);

/* agent_proto_line.c: the plain-text form of a mark, for callers
 * without JSON (doc/marks.md):
 *   MARK JOBID NAME VALUE UNIT add|set [TAG]\n -> OK\n | ERR CODE sentence\n
 * line_is says whether the LEN bytes at BUF are one (they start with
 * "MARK "); line_decode reads them strictly into REQ, as a JSON mark
 * request would be: 0, or -EINVAL with ERR one sentence (REQ untouched
 * then); line_reply writes the answer to it, "OK" for CODE 0, else
 * CODE's name and WHY on one line (control bytes replaced): its length,
 * or -ENOSPC. */
bool ceems_agent_proto_line_is(const char *buf, size_t len);
int ceems_agent_proto_line_decode(const char *buf, size_t len,
				  struct ceems_agent_request *req, char *err,
				  size_t err_size);
int ceems_agent_proto_line_reply(int code, const char *why, char *buf,
				 size_t size);

/* Name of a negative errno as the protocol writes it, "EIO" if unknown;
 * and back (-EREMOTEIO if unknown). */
const char *ceems_agent_proto_code_name(int code);
int ceems_agent_proto_code_from_name(const char *name);

#endif
