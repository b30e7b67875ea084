/* agent_mark.c - the node agent's answer to a "mark" request: a job's
 * process reporting the work it did (model/marks.h, doc/marks.md).  Any
 * local user can connect, so the caller is checked before anything
 * else: the kernel's peer credentials (SO_PEERCRED) give its pid and
 * uid, and its /proc/PID/cgroup must put it inside the job's cgroup
 * (lib/agent/agent_marks.c decides).  Then the job's rate, then the
 * mark itself; each refusal is one sentence back to the caller, and a
 * refused mark changes nothing.  The same marks come as JSON or as one
 * plain-text line (client/agent_proto.h), answered in their own form. */
#include "config.h"

#include <errno.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent_server_internal.h"
#include "base/clock.h"
#include "base/fileio.h"

/* /proc/PID/cgroup of a process: a line per hierarchy, a dozen on a v1
 * host. */
#define PROC_CGROUP_MAX 8192

/* Check and apply REQ from C: 0, or a negative errno with ERR. */
static int
mark_take(struct server *s, struct client *c,
	  const struct ceems_agent_request *req, char *err, size_t err_size)
{
	static char text[PROC_CGROUP_MAX];
	char path[CEEMS_CONFIG_PATH_MAX + 32];
	ssize_t n;
	int r;

	/* The pid is the caller's as it connected; the uid check in
	 * ceems_agent_marks_admit holds even if it has since exited and
	 * its number gone to another process. */
	snprintf(path, sizeof(path), "%s/%d/cgroup",
		 s->config->procfs_root[0] != '\0' ? s->config->procfs_root : "/proc",
		 (int)c->pid);
	n = c->pid > 0 ? ceems_fileio_read_text_file(path, text, sizeof(text)) : -ESRCH;
	r = ceems_agent_marks_admit(s->agent, req->jobid, c->uid,
				    n >= 0 ? text : NULL, err, err_size);
	if (r == 0)
		r = ceems_agent_marks_apply(s->agent, req->jobid, req->mark_name,
					    req->mark_unit, req->mark_tag,
					    req->mark_mode,
					    req->mark_value,
					    ceems_clock_monotonic_ns(), err,
					    err_size);
	return r;
}

void
agent_mark_handle(struct server *s, struct client *c,
		  const struct ceems_agent_request *req)
{
	char err[256];
	int r = mark_take(s, c, req, err, sizeof(err));

	if (r < 0) {
		agent_server_clients_refuse(s, c, r, "mark of job %u: %s",
					    req->jobid, err);
		return;
	}
	agent_server_clients_send_reply(s, c, ceems_agent_proto_reply_ok(NULL,
					s->outbuf, sizeof(s->outbuf)));
}

void
agent_mark_handle_line(struct server *s, struct client *c, size_t len)
{
	static struct ceems_agent_request req;
	char err[256];
	int r;

	r = ceems_agent_proto_line_decode(s->inbuf, len, &req, err, sizeof(err));
	if (r == 0 && (r = mark_take(s, c, &req, err, sizeof(err))) < 0) {
		agent_server_clients_refuse_line(s, c, r, "mark of job %u: %s",
						 req.jobid, err);
		return;
	}
	if (r < 0) {
		agent_server_clients_refuse_line(s, c, r, "%s", err);
		return;
	}
	agent_server_clients_send_reply(s, c, ceems_agent_proto_line_reply(0, NULL,
					s->outbuf, sizeof(s->outbuf)));
}
