/* agent_server_dispatch.c - the node agent's answer to one request:
 * decoded (lib/client/agent_proto.c), checked against the peer credentials the
 * kernel gave for the socket (SO_PEERCRED: register, deregister, the
 * steps and the release from root only, a report for root or the job's
 * owner, status for anyone), then done by the engine (lib/agent/agent.h) and
 * answered.  Status is answered from the last tick's totals
 * (agent_status.c), never by ticking, so no request of another user
 * makes the agent read a job. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "agent/agent.h"
#include "client/agent_proto.h"
#include "agent_replay.h"
#include "agent_server_internal.h"
#include "agent_jobinfo.h"
#include "agent_status.h"
#include "base/clock.h"
#include "base/log.h"

static int
status_reply(struct server *s)
{
	struct agent_status_in in = {
		.config = s->config, .agent = s->agent, .totals = &s->totals,
		.uptime_ns = ceems_clock_monotonic_ns() - s->started_ns, .clients = s->nclients,
		.requests = s->requests, .refusals = s->refusals,
		.clients_refused = s->admit.refused_total,
		.tick_period_ns = s->tick_period_ns,
	};

	return agent_status_reply(&in, s->outbuf, sizeof(s->outbuf));
}

/* A reply with job JOBID's REPORT, and the work it marked when it did. */
static int
report_reply(struct server *s, uint32_t jobid,
	     const struct ceems_agent_job_report *report)
{
	return ceems_agent_proto_reply_ok_marks(report,
			ceems_agent_marks_get(s->agent, jobid), s->outbuf,
			sizeof(s->outbuf));
}

/* The reply to a step's end: as report_reply, and when the request
 * named the job, its work against the user's earlier runs of that
 * name (the summary's comparison). */
static int
step_reply(struct server *s, const struct ceems_agent_request *req,
	   const struct ceems_agent_job_report *report)
{
	static struct ceems_marks_history history;
	struct ceems_advice advice;

	ceems_agent_marks_history(s->agent, req->jobid, report->uid, req->name,
				  &history);
	/* The summary's carbon note: only the agent has the series.  Only
	 * the step that prints the summary names the job: not every srun
	 * step pays for the search. */
	if (req->name[0] == '\0' ||
	    ceems_agent_end_advice(s->agent, req->jobid, report,
			       ceems_clock_monotonic_ns(), &advice) < 0)
		ceems_advice_none(&advice);
	return ceems_agent_proto_reply_ok_work(report,
			ceems_agent_marks_get(s->agent, req->jobid), &history,
			&advice, s->outbuf, sizeof(s->outbuf));
}

static const char *
register_error(int r)
{
	switch (r) {
	case -ENOSPC: return "cannot be registered: the agent holds max_jobs jobs";
	case -ENOENT: return "cannot be registered: its cgroup was not found";
	case -EINVAL: return "cannot be registered: invalid job description";
	default: return "cannot be registered";
	}
}

/* REQ's step starts (a step_start, or a register that carries it): 0,
 * or -1 when C was refused. */
static int
start_step(struct server *s, struct client *c,
	   const struct ceems_agent_request *req, uint64_t now)
{
	int r = ceems_agent_step_start(s->agent, req->jobid, req->step, now);

	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "job %u step %s: %s", req->jobid, req->step,
		       r == -ENOENT ? "the job is not registered" :
		       r == -EEXIST ? "the step has started already" :
		       r == -ENOSPC ? "the job has too many steps to account apart" :
		       "cannot start the step");
		return -1;
	}
	/* Decoding bounds the count, and the step was just found. */
	if (req->tasks > 0)
		(void)ceems_agent_step_tasks(s->agent, req->jobid, req->step, req->tasks);
	/* Its peer is the slurmstepd of the extern step, which ends the
	 * job as it exits: if it dies instead, the sweep sees it. */
	if (strcmp(req->step, "extern") == 0)
		ceems_agent_extern_watch(s->agent, req->jobid, c->pid);
	return 0;
}

/* A step starts or ends: no tick (one reads every job); the reply to an
 * end is the job's report as of NOW. */
static void
handle_step(struct server *s, struct client *c,
	    const struct ceems_agent_request *req, uint64_t now)
{
	static struct ceems_agent_job_report report;
	struct ceems_agent_step_report step;
	int r;

	if (req->op == CEEMS_AGENT_OP_STEP_START) {
		if (start_step(s, c, req, now) == 0)
			agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_ok(NULL, s->outbuf, sizeof(s->outbuf)));
		return;
	}
	if (req->have_status)
		(void)ceems_agent_end_step_status(s->agent, req->jobid, req->status);
	r = ceems_agent_step_end(s->agent, req->jobid, req->step, now, &step);
	/* The extern step may end the job before the batch step's tasks
	 * end (a time limit, a cancel: all steps are killed together):
	 * the batch step gets the job's final figures for its summary. */
	if (r < 0 && ceems_agent_end_final_report(s->agent, req->jobid, &report) == 0) {
		agent_server_clients_send_reply(s, c, step_reply(s, req, &report));
		/* slurmctld's word may have waited for this step's end. */
		if (ceems_agent_end_step_late(s->agent, req->jobid, req->step) > 0)
			agent_replay_wake(s->replay);
		return;
	}
	/* A step the agent did not see start (its job adopted after it
	 * started: lib/agent/agent_adopt.c) still gets the job's report. */
	if (ceems_agent_report_now(s->agent, req->jobid, now, &report) < 0) {
		agent_server_clients_refuse(s, c, -ENOENT, "job %u has no step %s", req->jobid, req->step);
		return;
	}
	agent_server_clients_send_reply(s, c, step_reply(s, req, &report));
}


/* Who may ask what: status anyone (as of the last tick: a tick reads
 * every job, and any user may ask as often as they like); a report
 * root and the job's owner; a mark the job's own processes
 * (agent_mark.c checks); register, deregister, the steps and the
 * release root only (the job-side plugin runs as root). */
static bool
allowed(struct server *s, struct client *c,
	const struct ceems_agent_request *req)
{
	if (c->uid == 0 || req->op == CEEMS_AGENT_OP_STATUS ||
	    req->op == CEEMS_AGENT_OP_REPORT || req->op == CEEMS_AGENT_OP_MARK)
		return true;
	agent_server_clients_refuse(s, c, -EPERM, "only root may %s jobs (job %u)",
		      req->op == CEEMS_AGENT_OP_REGISTER ? "register" :
		      req->op == CEEMS_AGENT_OP_DEREGISTER ? "deregister" :
		      req->op == CEEMS_AGENT_OP_RELEASE ? "release" :
		      "start or end the steps of", req->jobid);
	return false;
}

static void
handle_report(struct server *s, struct client *c,
	      const struct ceems_agent_request *req)
{
	static struct ceems_agent_job_report report;

	if (ceems_agent_report(s->agent, req->jobid, &report) < 0) {
		agent_server_clients_refuse(s, c, -ENOENT, "job %u is not registered", req->jobid);
		return;
	}
	if (c->uid != 0 && c->uid != report.uid) {
		agent_server_clients_refuse(s, c, -EPERM, "job %u is not yours: only root and the "
			      "job's owner may read its report", req->jobid);
		return;
	}
	/* As of now: the job's share since the last tick added (the
	 * owner is known first: this reads the job's cgroup). */
	if (req->now)
		(void)ceems_agent_report_now(s->agent, req->jobid,
					     ceems_clock_monotonic_ns(), &report);
	agent_server_clients_send_reply(s, c, report_reply(s, req->jobid, &report));
}

/* A new job (or a new run of one: the last run's end request must not
 * end it) without Slurm's start time: ceems-jobinfo asks slurmctld, so
 * that no step of the job does. */
static void
registered(struct server *s, const struct ceems_agent_request *req)
{
	agent_jobinfo_drop_end(s->jobinfo_dir, req->jobid);
	if (req->spec.start_time == 0)
		(void)agent_jobinfo_ask_start(s->jobinfo_dir, &req->spec);
}

static void
handle_register(struct server *s, struct client *c,
		const struct ceems_agent_request *req, uint64_t now)
{
	int r = ceems_agent_register(s->agent, &req->spec, now);

	/* With its step: the job known or registered now, the step
	 * starts, one reply for both. */
	if (req->step[0] != '\0' && (r == 0 || r == -EEXIST)) {
		if (r == -EEXIST)
			ceems_debug("job %u: registered already (uid %u pid %d)",
				    req->jobid, (unsigned)c->uid, (int)c->pid);
		if (start_step(s, c, req, now) == 0)
			agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_started(r == 0, s->outbuf, sizeof(s->outbuf)));
		if (r == 0)
			registered(s, req);
		return;
	}
	if (r == -EEXIST) {
		/* Every step of a job registers it (whichever starts
		 * first must), and the plugin registers again with
		 * Slurm's start time: the normal answer, not a line
		 * for the admin. */
		ceems_debug("job %u: registered already (uid %u pid %d)",
			    req->jobid, (unsigned)c->uid, (int)c->pid);
		agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_error(r, "job is already registered",
								s->outbuf, sizeof(s->outbuf)));
		return;
	}
	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "job %u %s", req->jobid, register_error(r));
		return;
	}
	agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_ok(NULL, s->outbuf, sizeof(s->outbuf)));
	registered(s, req);
}

static void
handle_release(struct server *s, struct client *c,
	       const struct ceems_agent_request *req)
{
	if (ceems_agent_release(s->agent, req->jobid) < 0) {
		agent_server_clients_refuse(s, c, -ENOENT, "job %u is not waiting for a release",
			      req->jobid);
		return;
	}
	agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_ok(NULL, s->outbuf, sizeof(s->outbuf)));
}

/* The job's end, and the agent never knew it: a record of its metadata
 * alone (written, or waiting for the epilog's word), never a second
 * one. */
static void
end_unknown(struct server *s, struct client *c,
	    const struct ceems_agent_request *req, uint64_t now)
{
	static struct ceems_agent_job_report report;
	int r;

	r = ceems_agent_end_unknown(s->agent, req->jobid, &req->meta,
				    req->by, now, &report);
	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "job %u: no record could be kept of its end",
			      req->jobid);
		return;
	}
	(void)agent_server_clients_send_reply(s, c, report_reply(s, req->jobid, &report));
	if (r == 0 && strcmp(req->by, "extern") != 0)
		agent_replay_wake(s->replay);
	if (r == 0 && strcmp(req->by, "extern") == 0)
		(void)agent_jobinfo_ask_end(s->jobinfo_dir, req->jobid,
					     ceems_agent_end_run_start(s->agent, req->jobid));
}

/* One call ends the job.  The extern step's: the record waits for the
 * epilog's word; the epilog's: the record is written to the spool (a
 * file write; the replay child takes it into PostgreSQL, so no request
 * waits for the database).  REPORT: the job's figures, deregistered. */
static void
end_job(struct server *s, struct client *c,
	const struct ceems_agent_request *req,
	const struct ceems_agent_job_report *report, uint64_t now)
{
	/* The reply is built first: writing the record frees the job's
	 * series, which the reply carries.  It is sent after the record
	 * is kept: sent before, the client's next request would wait for
	 * the spool's fsync. */
	int reply_len = report_reply(s, req->jobid, report);
	int r;

	r = ceems_agent_end(s->agent, req->jobid,
			    req->have_meta ? &req->meta : NULL, req->by, now);
	/* Not kept (the spool's disk full or failing): the agent tries
	 * again at each sweep, and the error makes the plugin leave a note
	 * of the job, the other way to it. */
	if (r < 0 && r != -ENOENT) {
		agent_server_clients_refuse(s, c, r, "job %u: its record could not be "
			      "written to the spool (the agent tries again)",
			      req->jobid);
		return;
	}
	(void)agent_server_clients_send_reply(s, c, reply_len);
	if (strcmp(req->by, "extern") != 0 && r == 0)
		agent_replay_wake(s->replay);
	/* The record waits for slurmctld's word on the job's end (its
	 * state and exit code), which ceems-jobinfo asks for. */
	if (strcmp(req->by, "extern") == 0 && r == 0)
		(void)agent_jobinfo_ask_end(s->jobinfo_dir, req->jobid,
					     ceems_agent_end_run_start(s->agent, req->jobid));
}

static void
handle_deregister(struct server *s, struct client *c,
		  const struct ceems_agent_request *req, uint64_t now)
{
	static struct ceems_agent_job_report report;
	static struct ceems_marks marks;
	const struct ceems_marks *m;
	int r;

	/* slurmctld's word on a requeued run that came after the job's
	 * new run registered (ceems-jobinfo's answer raced the new run's
	 * registration): that run's record is written already; the new
	 * run is not ended by it. */
	if (req->by[0] != '\0' && req->have_meta &&
	    ceems_agent_end_of_earlier_run(s->agent, req->jobid,
					   req->meta.start_time)) {
		agent_server_clients_refuse(s, c, -ENOENT, "job %u: the end word is of "
			      "an earlier run (started %lld) than the one "
			      "registered", req->jobid,
			      (long long)req->meta.start_time);
		return;
	}
	r = ceems_agent_deregister(s->agent, req->jobid, now, &report);
	/* Its work, kept before the record is written (which lets go of
	 * it), for its user's history after the reply. */
	m = ceems_agent_marks_get(s->agent, req->jobid);
	marks.n = 0;
	if (m != NULL)
		marks = *m;
	/* Its start time, if not asked for yet, goes with its end. */
	agent_jobinfo_drop_start(s->jobinfo_dir, req->jobid);
	if (r == -ENOENT && req->by[0] != '\0' && req->have_meta) {
		end_unknown(s, c, req, now);
		return;
	}
	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "job %u is not registered", req->jobid);
		return;
	}
	if (req->by[0] != '\0') {
		end_job(s, c, req, &report, now);
	} else {
		if (req->have_meta)
			ceems_agent_finishing_meta(s->agent, req->jobid, &req->meta);
		/* The figures did not reach the plugin: the agent keeps them. */
		if (agent_server_clients_send_reply(s, c, report_reply(s, req->jobid,
								  &report)) < 0)
			ceems_agent_reply_lost(s->agent, req->jobid);
	}
	/* After the reply: the history's file is written. */
	if (req->have_meta)
		ceems_agent_marks_job_ended(s->agent, req->jobid, &marks,
					    req->meta.name, &report);
}

void
agent_server_dispatch_handle_request(struct server *s, struct client *c, size_t len)
{
	static struct ceems_agent_request req;
	char err[256];
	int r;

	s->requests++;
	/* A mark as a plain line (doc/marks.md): anyone may send one; the
	 * mark's own checks decide, as for its JSON form. */
	if (ceems_agent_proto_line_is(s->inbuf, len)) {
		agent_mark_handle_line(s, c, len);
		return;
	}
	r = ceems_agent_proto_request_decode(s->inbuf, len, &req, err, sizeof(err));
	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "%s", err);
		return;
	}
	if (!allowed(s, c, &req))
		return;
	switch (req.op) {
	case CEEMS_AGENT_OP_STATUS:
		agent_server_clients_send_reply(s, c, status_reply(s));
		return;
	case CEEMS_AGENT_OP_REPORT:
		handle_report(s, c, &req);
		return;
	case CEEMS_AGENT_OP_REGISTER:
		agent_server_timers_end_idle_tick(s);
		handle_register(s, c, &req, ceems_clock_monotonic_ns());
		return;
	case CEEMS_AGENT_OP_STEP_START:
	case CEEMS_AGENT_OP_STEP_END:
		handle_step(s, c, &req, ceems_clock_monotonic_ns());
		return;
	case CEEMS_AGENT_OP_RELEASE:
		handle_release(s, c, &req);
		return;
	case CEEMS_AGENT_OP_DEREGISTER:
		handle_deregister(s, c, &req, ceems_clock_monotonic_ns());
		return;
	case CEEMS_AGENT_OP_MARK:
		agent_mark_handle(s, c, &req);
		return;
	}
	agent_server_clients_refuse(s, c, -EINVAL, "unknown request %d", (int)req.op);
}
