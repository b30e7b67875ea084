/* agent_client.h - the client side of the node agent's socket
 * (agent_client.c): what the job-side plugin, the slurmd-side plugin and
 * ceems-agent's control commands call to talk to a running agent.  Each
 * call is one request and one reply (agent_proto.h), bounded in time.
 * Named ceems_agent_client_* apart from the engine's calls (agent.h:
 * ceems_agent_register, ceems_agent_deregister, ...), which these reach
 * through the agent's socket, never directly. */
#ifndef CEEMS_AGENT_CLIENT_H
#define CEEMS_AGENT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "client/agent_proto.h"
#include "model/job.h"
#include "model/job_spec.h"
#include "model/measure.h"

/* Connect to the agent at SOCKET_PATH, send the request (LEN bytes), and
 * wait at most TIMEOUT_MS in all for the reply, stored NUL-terminated in
 * REPLY (which must not overlap REQUEST: a busy agent gets the request
 * again).  Returns the reply's length, or -errno: -ENOENT or
 * -ECONNREFUSED at once when no agent listens; a full backlog or an
 * EBUSY answer (no client slot) is tried again until the deadline, then
 * -EBUSY (or the EBUSY reply); -ETIMEDOUT, -EMSGSIZE for a reply that
 * does not fit, -ECONNRESET when the agent closed without a reply.
 * Never raises SIGPIPE. */
int ceems_agent_client_call_buf(const char *socket_path, const void *request,
			 size_t len, int timeout_ms, char *reply,
			 size_t reply_size);
/* Same for a NUL-terminated request. */
int ceems_agent_client_call(const char *socket_path, const char *request,
		     int timeout_ms, char *reply, size_t reply_size);

/* Typed calls.  Return 0, a -errno from the transport or the agent's
 * refusal (ERR holds a sentence saying which), or -EPROTO. */
int ceems_agent_client_register_job(const char *socket_path,
			     const struct ceems_agent_job_spec *spec,
			     int timeout_ms, char *err, size_t err_size);
/* Register SPEC's job (or find it registered) and start its step STEP,
 * with TASKS tasks on this node (0: not known, not sent), in one
 * request: 1 when the job was registered by it, 0 when it was
 * registered already, or a -errno as above (-EINVAL from an agent that
 * takes no step, or no task count, with a registration). */
int ceems_agent_client_register_start(const char *socket_path,
				      const struct ceems_agent_job_spec *spec,
				      const char *step, uint32_t tasks,
				      int timeout_ms, char *err,
				      size_t err_size);
int ceems_agent_client_deregister_job(const char *socket_path, uint32_t jobid,
			       int timeout_ms,
			       struct ceems_agent_job_report *out, char *err,
			       size_t err_size);
/* Say that the record of a job deregistered without its metadata is
 * stored elsewhere (the two-phase end of an older plugin, which stored
 * its own record): the agent forgets the job. */
int ceems_agent_client_release_job(const char *socket_path, uint32_t jobid,
			    int timeout_ms, char *err, size_t err_size);
/* End a job in one call: deregister with its metadata META and BY
 * ("extern" or "epilog"); the agent writes the record itself, no release
 * follows. */
int ceems_agent_client_end_job(const char *socket_path,
			const struct ceems_job_meta *meta, const char *by,
			int timeout_ms, struct ceems_agent_job_report *out,
			char *err, size_t err_size);
/* A step ends with its tasks' wait status STATUS (the agent settles the
 * job's exit code and state from it when slurmctld's are not known):
 * as ceems_agent_client_step_end otherwise. */
int ceems_agent_client_step_end_status(const char *socket_path, uint32_t jobid,
				     const char *step, int status,
				     int timeout_ms,
				     struct ceems_agent_job_report *out,
				     char *err, size_t err_size);
/* The work a job reported, and how it compares with its user's earlier
 * runs of the job's name, for the summary (doc/marks.md). */
struct ceems_agent_client_work {
	char job_name[256];		/* in: "" not compared */
	struct ceems_marks marks;	/* out: n 0 none */
	struct ceems_marks_history history;	/* out: n 0 none */
	/* out: the carbon-aware advice (no series: none) */
	struct ceems_advice advice;
};

/* A step ends (with its wait status STATUS when HAVE_STATUS); WORK, when
 * not NULL, names the job and gets its work and comparison. */
int ceems_agent_client_step_end_marks(const char *socket_path, uint32_t jobid,
				      const char *step, bool have_status,
				      int status, int timeout_ms,
				      struct ceems_agent_job_report *out,
				      struct ceems_agent_client_work *work,
				      char *err, size_t err_size);
/* A step of a registered job starts (with TASKS tasks on this node; 0:
 * not known, not sent) or ends (step_end fills OUT with the job's
 * report, which holds the step's figures). */
int ceems_agent_client_step_start(const char *socket_path, uint32_t jobid,
				const char *step, uint32_t tasks,
				int timeout_ms, char *err, size_t err_size);
int ceems_agent_client_step_end(const char *socket_path, uint32_t jobid,
			      const char *step, int timeout_ms,
			      struct ceems_agent_job_report *out, char *err,
			      size_t err_size);
int ceems_agent_client_report_job(const char *socket_path, uint32_t jobid,
			   int timeout_ms, struct ceems_agent_job_report *out,
			   char *err, size_t err_size);
/* The same as of now ("now": true): the job's figures with its share
 * since the agent's last tick added; its steps' stay as of that tick. */
int ceems_agent_client_report_job_now(const char *socket_path, uint32_t jobid,
				      int timeout_ms,
				      struct ceems_agent_job_report *out,
				      char *err, size_t err_size);

#endif
