/* agent_server.c - the node agent's single-threaded event loop.  One
 * epoll set holds the listening socket, the clients, a timerfd for the
 * main tick, one for fast source sampling (when a counter could wrap
 * within a tick), one for checkpoints, and a signalfd.  Everything is
 * bounded: the number of clients, the size of a message, the time a
 * client may stay silent; a misbehaving client is answered with an error
 * or dropped, never allowed to stall the ticks (design invariant 1).
 *
 * Authorization is by the peer credentials the kernel gives for the
 * socket (SO_PEERCRED): register and deregister from root only (the
 * job-side plugin runs as root in slurmstepd), a report for root or the
 * job's owner, status for anyone.  Another local user is an adversary:
 * root keeps a reserve of client slots, every other uid may hold only a
 * few (agent_admit.c) and has one request per connection, and status is
 * answered from the last tick's totals (agent_status.c), never by
 * ticking, so no request of another user makes the agent read a job. */
#include "config.h"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "client/agent_proto.h"
#include "base/json_util.h"
#include "base/fileio.h"
#include "agent_admit.h"
#include "agent_confine.h"
#include "agent_listen.h"
#include "agent_server.h"
#include "agent_status.h"
#include "base/log.h"
#include "agent_replay.h"
#include "record/job_note.h"
#include "record/storage.h"
#include "base/clock.h"

enum watch_kind { W_LISTEN, W_CLIENT, W_TICK, W_SAMPLE, W_CHECKPOINT, W_SIGNAL,
		  W_REPLAY, W_REPLAY_CHILD };

/* What an epoll event points at. */
struct watch {
	enum watch_kind kind;
	int fd;
};

struct client {
	struct watch w;		/* first: events carry a struct watch * */
	uid_t uid;
	pid_t pid;
	uint64_t deadline_ns;	/* dropped when silent past this */
	bool used;
};

/* Refusals are logged, but a local user looping on the socket must not
 * flood the log: at most LOG_BURST lines per LOG_WINDOW_NS. */
#define LOG_BURST 20
#define LOG_WINDOW_NS (10 * UINT64_C(1000000000))

struct server {
	const struct ceems_config *config;
	struct ceems_agent *agent;
	int epfd;
	struct watch listen, tick, sample, checkpoint, sig;
	struct watch replay_timer;	/* one-shot: (re)start the replay child */
	struct watch replay_child;	/* its pipe: end of file when it ends */
	struct agent_replay *replay;	/* NULL: no database configured */
	uint64_t sample_period_ns;	/* 0: no fast sampling */
	struct client clients[AGENT_MAX_CLIENTS];
	unsigned nclients;
	struct agent_admit admit;
	struct agent_socket sock;	/* the socket file we created */
	uint64_t started_ns;
	struct agent_totals totals;
	uint64_t requests, refusals;
	uint64_t log_window_ns;
	unsigned log_lines, log_suppressed;
	bool notes_failing;	/* said once until they can be read again */
	bool stop;
};

/* Requests and replies go through one buffer each: one thread. */
static char inbuf[CEEMS_AGENT_MSG_MAX + 1];
static char outbuf[CEEMS_AGENT_MSG_MAX + 1];

/* ------------------------------------------------------------------ */
/* Timers and signals                                                  */
/* ------------------------------------------------------------------ */

static int
add_watch(struct server *s, struct watch *w, enum watch_kind kind, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	w->kind = kind;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	w->fd = fd;
	return 0;
}

/* A periodic timer of PERIOD_NS (0 disarms it). */
static int
arm_timer(int fd, uint64_t period_ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
	its.it_value = its.it_interval;
	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

static int
open_timer(struct server *s, struct watch *w, enum watch_kind kind,
	   uint64_t period_ns)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	if ((r = arm_timer(fd, period_ns)) < 0 ||
	    (r = add_watch(s, w, kind, fd)) < 0) {
		close(fd);
		return r;
	}
	return 0;
}

/* Consume a timerfd's expirations (a late loop may have missed some:
 * the engine measures real elapsed time, so one tick covers them). */
static void
drain_timer(int fd)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		ceems_warning("timer read failed: %s", strerror(errno));
}

/* Sample sources on their own timer only when a counter needs it. */
static void
update_sample_timer(struct server *s)
{
	uint64_t want = ceems_agent_source_interval_ns(s->agent);

	if (want == 0 || want >= s->config->interval_ns)
		want = 0;
	if (want == s->sample_period_ns)
		return;
	if (arm_timer(s->sample.fd, want) < 0) {
		ceems_error("cannot arm the source sampling timer: %s: counters may "
			    "wrap unseen and their ticks be recorded as gaps",
			    strerror(errno));
		return;
	}
	if (want > 0)
		ceems_info("energy counters sampled every %.3f s (faster than the "
			   "%.3f s tick, so that none can wrap twice unseen)",
			   (double)want / 1e9, (double)s->config->interval_ns / 1e9);
	s->sample_period_ns = want;
}

static void
checkpoint(struct server *s, uint64_t now)
{
	int r = ceems_agent_checkpoint(s->agent, now);

	/* -ENOENT: no state file (its opening was already logged). */
	if (r < 0 && r != -ENOENT)
		ceems_warning("checkpoint failed: %s: a restart now would lose "
			      "the jobs' figures since the last one", strerror(-r));
}

/* The notes of jobs whose end the agent was not told: a batch at each
 * tick.  A folder that cannot be read is said once, until it can. */
static int
take_notes(struct server *s, uint64_t now)
{
	char dir[CEEMS_CONFIG_PATH_MAX + 8];
	int r = ceems_agent_take_notes(s->agent, now);

	if (r > 0)
		agent_replay_wake(s->replay);
	if (r < 0 && !s->notes_failing) {
		if (ceems_note_dir(s->config, dir, sizeof(dir)) < 0)
			snprintf(dir, sizeof(dir), "(the note folder)");
		ceems_error("cannot read the job notes in %s: %s; the jobs they "
			    "name get no record until it can be read (check its "
			    "owner, root, and mode 0700)", dir, strerror(-r));
	} else if (r >= 0 && s->notes_failing)
		ceems_info("the job notes can be read again");
	s->notes_failing = r < 0;
	return r;
}

/* The tick's end: the node's counters, the split, the jobs charged. */
static void
end_tick(struct server *s)
{
	uint64_t now = ceems_clock_monotonic_ns();

	ceems_agent_tick_end(s->agent, now);
	agent_totals_add(&s->totals, ceems_agent_last_tick(s->agent), now);
	/* Records written (grace ended, notes taken): the replay now. */
	if (ceems_agent_sweep(s->agent, now) > 0)
		agent_replay_wake(s->replay);
	take_notes(s, now);
	if (s->config->checkpoint_interval_ns == 0)
		checkpoint(s, now);
	update_sample_timer(s);
}

/* A tick reads every job's cgroup: with a thousand jobs, one block of it
 * would hold every request that comes meanwhile (the plugin's among
 * them).  It is taken in parts of TICK_PART_NS at most, the loop serving
 * what came between them (tick_part). */
#define TICK_PART_NS (UINT64_C(1000000))

static void
tick_part(struct server *s)
{
	uint64_t until = ceems_clock_monotonic_ns() + TICK_PART_NS;

	while (!ceems_agent_tick_read(s->agent, CEEMS_AGENT_TICK_PART_JOBS))
		if (ceems_clock_monotonic_ns() >= until)
			return;
	end_tick(s);
}

static void
on_tick(struct server *s)
{
	drain_timer(s->tick.fd);
	/* A tick still in parts when the next is due (a loop starved for a
	 * whole interval): that one takes the time since. */
	if (ceems_agent_tick_open(s->agent))
		return;
	ceems_agent_tick_begin(s->agent, ceems_clock_monotonic_ns());
	tick_part(s);
}

/* A one-shot timer in DELAY_NS (at least 1 ns: 0 would disarm it). */
static int
arm_once(int fd, uint64_t delay_ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	if (delay_ns == 0)
		delay_ns = 1;
	its.it_value.tv_sec = (time_t)(delay_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(delay_ns % 1000000000u);
	return timerfd_settime(fd, 0, &its, NULL) < 0 ? -errno : 0;
}

/* Spooled records into the database, in a process of its own
 * (tools/agent/agent_replay.c): a database that does not answer must not hold
 * the loop, where job starts wait.  The timer starts it (again). */
static void
start_replay(struct server *s, uint64_t first_delay_ns)
{
	int fd = agent_replay_spawn(s->replay, first_delay_ns);
	int r = fd;

	if (fd >= 0 && (r = add_watch(s, &s->replay_child, W_REPLAY_CHILD, fd)) == 0)
		return;
	ceems_error("cannot start the replay of the spool: %s: trying again in 60 s",
		    strerror(-r));
	if (arm_once(s->replay_timer.fd, 60 * UINT64_C(1000000000)) < 0)
		ceems_error("cannot arm the replay timer: spooled records wait "
			    "for an agent restart");
}

static void
on_replay(struct server *s)
{
	drain_timer(s->replay_timer.fd);
	start_replay(s, 0);
}

static void
on_replay_child(struct server *s)
{
	int fd = s->replay_child.fd;
	uint64_t again = agent_replay_on_event(s->replay);

	if (again == 0)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);	/* closed already */
	s->replay_child.fd = -1;
	if (arm_once(s->replay_timer.fd, again) < 0)
		ceems_error("cannot arm the replay timer: spooled records wait "
			    "for an agent restart");
}

static void
on_signal(struct server *s)
{
	struct signalfd_siginfo si;

	while (read(s->sig.fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			ceems_info("%s received: checkpointing and stopping",
				   si.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT");
			s->stop = true;
			break;
		case SIGHUP:
			/* Reloading would reopen sources and sockets under
			 * running jobs; a restart does it with the state
			 * kept, losing only the time it takes. */
			ceems_warning("SIGHUP: configuration reload is not supported; "
				      "restart the agent to apply a new configuration "
				      "(running jobs keep their figures)");
			break;
		default:
			break;
		}
	}
}

static int
open_listener(struct server *s)
{
	int fd = agent_listen_open(s->config->socket_path, &s->sock);
	int r;

	if (fd < 0)
		return fd;
	if ((r = add_watch(s, &s->listen, W_LISTEN, fd)) < 0) {
		close(fd);
		return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Clients                                                             */
/* ------------------------------------------------------------------ */

static bool
may_log(struct server *s, uint64_t now)
{
	if (now - s->log_window_ns > LOG_WINDOW_NS) {
		if (s->log_suppressed > 0)
			ceems_warning("%u more refused or malformed requests were "
				      "not logged", s->log_suppressed);
		s->log_window_ns = now;
		s->log_lines = 0;
		s->log_suppressed = 0;
	}
	if (s->log_lines < LOG_BURST) {
		s->log_lines++;
		return true;
	}
	s->log_suppressed++;
	return false;
}

static void
drop_client(struct server *s, struct client *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->w.fd, NULL);
	close(c->w.fd);
	c->used = false;
	s->nclients--;
	agent_admit_put(&s->admit, c->uid);
}

/* Send LEN bytes of outbuf to C.  A client whose socket is full is not
 * reading its replies: it is dropped rather than waited for.  0, or -1
 * when the reply did not go. */
static int
send_reply(struct server *s, struct client *c, int len)
{
	if (len < 0) {
		len = ceems_agent_reply_error(-EIO, "the agent could not build its reply",
					      outbuf, sizeof(outbuf));
		if (len < 0)
			return -1;
	}
	if (send(c->w.fd, outbuf, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
		if (may_log(s, ceems_clock_monotonic_ns()))
			ceems_warning("client uid %u pid %d: cannot send the reply (%s): "
				      "dropped", (unsigned)c->uid, (int)c->pid,
				      strerror(errno));
		drop_client(s, c);
		return -1;
	}
	return 0;
}

/* Answer C with an error, logged as a refusal. */
__attribute__((format(printf, 4, 5))) static void
refuse(struct server *s, struct client *c, int code, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* The sentence may quote the client's bytes (an unknown key): no
	 * control character may reach the log and forge a line there. */
	for (char *p = why; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	s->refusals++;
	if (may_log(s, ceems_clock_monotonic_ns()))
		ceems_warning("refused a request from uid %u pid %d: %s",
			      (unsigned)c->uid, (int)c->pid, why);
	send_reply(s, c, ceems_agent_reply_error(code, why, outbuf, sizeof(outbuf)));
}

static int
status_reply(struct server *s)
{
	struct agent_status_in in = {
		.config = s->config, .agent = s->agent, .totals = &s->totals,
		.uptime_ns = ceems_clock_monotonic_ns() - s->started_ns, .clients = s->nclients,
		.requests = s->requests, .refusals = s->refusals,
		.clients_refused = s->admit.refused_total,
	};

	return agent_status_reply(&in, outbuf, sizeof(outbuf));
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
		r = ceems_agent_step_start(s->agent, req->jobid, req->step, now);
		if (r < 0) {
			refuse(s, c, r, "job %u step %s: %s", req->jobid, req->step,
			       r == -ENOENT ? "the job is not registered" :
			       r == -EEXIST ? "the step has started already" :
			       r == -ENOSPC ? "the job has too many steps to account apart" :
			       "cannot start the step");
			return;
		}
		send_reply(s, c, ceems_agent_reply_ok(NULL, outbuf, sizeof(outbuf)));
		return;
	}
	if (req->have_status)
		(void)ceems_agent_step_status(s->agent, req->jobid, req->status);
	r = ceems_agent_step_end(s->agent, req->jobid, req->step, now, &step);
	/* The extern step may end the job before the batch step's tasks
	 * end (a time limit, a cancel: all steps are killed together):
	 * the batch step gets the job's final figures for its summary. */
	if (r < 0 && ceems_agent_final_report(s->agent, req->jobid, &report) == 0) {
		send_reply(s, c, ceems_agent_reply_ok(&report, outbuf, sizeof(outbuf)));
		return;
	}
	if (r < 0 ||
	    ceems_agent_report_now(s->agent, req->jobid, now, &report) < 0) {
		refuse(s, c, -ENOENT, "job %u has no step %s", req->jobid, req->step);
		return;
	}
	send_reply(s, c, ceems_agent_reply_ok(&report, outbuf, sizeof(outbuf)));
}

static void
handle_request(struct server *s, struct client *c, size_t len)
{
	static struct ceems_agent_request req;
	static struct ceems_agent_job_report report;
	char err[256];
	uint64_t now;
	int r;

	s->requests++;
	r = ceems_agent_request_decode(inbuf, len, &req, err, sizeof(err));
	if (r < 0) {
		refuse(s, c, r, "%s", err);
		return;
	}
	switch (req.op) {
	case CEEMS_AGENT_OP_STATUS:
		/* As of the last tick: a tick reads every job, and any user
		 * may ask for status as often as they like. */
		send_reply(s, c, status_reply(s));
		return;
	case CEEMS_AGENT_OP_REGISTER:
	case CEEMS_AGENT_OP_DEREGISTER:
	case CEEMS_AGENT_OP_STEP_START:
	case CEEMS_AGENT_OP_STEP_END:
	case CEEMS_AGENT_OP_RELEASE:
		if (c->uid != 0) {
			refuse(s, c, -EPERM, "only root may %s jobs (job %u)",
			       req.op == CEEMS_AGENT_OP_REGISTER ? "register" :
			       req.op == CEEMS_AGENT_OP_DEREGISTER ? "deregister" :
			       req.op == CEEMS_AGENT_OP_RELEASE ? "release" :
			       "start or end the steps of", req.jobid);
			return;
		}
		break;
	case CEEMS_AGENT_OP_REPORT:
		if (ceems_agent_report(s->agent, req.jobid, &report) < 0) {
			refuse(s, c, -ENOENT, "job %u is not registered", req.jobid);
			return;
		}
		if (c->uid != 0 && c->uid != report.uid) {
			refuse(s, c, -EPERM, "job %u is not yours: only root and the "
			       "job's owner may read its report", req.jobid);
			return;
		}
		send_reply(s, c, ceems_agent_reply_ok(&report, outbuf, sizeof(outbuf)));
		return;
	}

	now = ceems_clock_monotonic_ns();
	if (req.op == CEEMS_AGENT_OP_REGISTER) {
		r = ceems_agent_register(s->agent, &req.spec, now);
		if (r == -EEXIST) {
			/* Every step of a job registers it (whichever starts
			 * first must), and the plugin registers again with
			 * Slurm's start time: the normal answer, not a line
			 * for the admin. */
			ceems_debug("job %u: registered already (uid %u pid %d)",
				    req.jobid, (unsigned)c->uid, (int)c->pid);
			send_reply(s, c, ceems_agent_reply_error(r, "job is already registered",
								 outbuf, sizeof(outbuf)));
			return;
		}
		if (r < 0) {
			refuse(s, c, r, "job %u %s", req.jobid, register_error(r));
			return;
		}
		send_reply(s, c, ceems_agent_reply_ok(NULL, outbuf, sizeof(outbuf)));
		return;
	}
	if (req.op == CEEMS_AGENT_OP_STEP_START ||
	    req.op == CEEMS_AGENT_OP_STEP_END) {
		handle_step(s, c, &req, now);
		return;
	}
	if (req.op == CEEMS_AGENT_OP_RELEASE) {
		if (ceems_agent_release(s->agent, req.jobid) < 0) {
			refuse(s, c, -ENOENT, "job %u is not waiting for a release",
			       req.jobid);
			return;
		}
		send_reply(s, c, ceems_agent_reply_ok(NULL, outbuf, sizeof(outbuf)));
		return;
	}
	r = ceems_agent_deregister(s->agent, req.jobid, now, &report);
	if (r == -ENOENT && req.by[0] != '\0' && req.have_meta) {
		/* The job's end, and the agent never knew it: a record of
		 * its metadata alone (written, or waiting for the epilog's
		 * word), never a second one. */
		r = ceems_agent_end_unknown(s->agent, req.jobid, &req.meta,
					    req.by, now, &report);
		if (r < 0) {
			refuse(s, c, r, "job %u: no record could be kept of its end",
			       req.jobid);
			return;
		}
		(void)send_reply(s, c, ceems_agent_reply_ok(&report, outbuf,
							    sizeof(outbuf)));
		if (r == 0 && strcmp(req.by, "extern") != 0)
			agent_replay_wake(s->replay);
		return;
	}
	if (r < 0) {
		refuse(s, c, r, "job %u is not registered", req.jobid);
		return;
	}
	if (req.by[0] != '\0') {
		/* One call ends the job.  The extern step's: the record
		 * waits for the epilog's word; the epilog's: the record is
		 * written to the spool (a file write; the replay child takes
		 * it into PostgreSQL, so no request waits for the
		 * database). */
		/* The reply is built first: writing the record frees the
		 * job's series, which the reply carries.  It is sent after
		 * the record is kept: sent before, the client's next
		 * request would wait for the spool's fsync. */
		int reply_len = ceems_agent_reply_ok(&report, outbuf,
						     sizeof(outbuf));

		r = ceems_agent_end(s->agent, req.jobid,
				    req.have_meta ? &req.meta : NULL, req.by,
				    now);
		/* Not kept (the spool's disk full or failing): the agent
		 * tries again at each sweep, and the error makes the
		 * plugin leave a note of the job, the other way to it. */
		if (r < 0 && r != -ENOENT) {
			refuse(s, c, r, "job %u: its record could not be "
			       "written to the spool (the agent tries again)",
			       req.jobid);
			return;
		}
		(void)send_reply(s, c, reply_len);
		if (strcmp(req.by, "extern") != 0 && r == 0)
			agent_replay_wake(s->replay);
		return;
	}
	if (req.have_meta)
		ceems_agent_finishing_meta(s->agent, req.jobid, &req.meta);
	/* The figures did not reach the plugin: the agent keeps them. */
	if (send_reply(s, c, ceems_agent_reply_ok(&report, outbuf,
						  sizeof(outbuf))) < 0)
		ceems_agent_reply_lost(s->agent, req.jobid);
}

static void
on_client(struct server *s, struct client *c, uint32_t events)
{
	ssize_t n;

	if (events & EPOLLIN) {
		/* MSG_TRUNC returns the real size of a message too large. */
		n = recv(c->w.fd, inbuf, sizeof(inbuf) - 1, MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			drop_client(s, c);
			return;
		}
		if (n == 0) {	/* closed (or an empty message: same answer) */
			drop_client(s, c);
			return;
		}
		if (c->uid == 0)
			c->deadline_ns = ceems_clock_monotonic_ns() + AGENT_CLIENT_TIMEOUT_MS * UINT64_C(1000000);
		if ((size_t)n > CEEMS_AGENT_MSG_MAX) {
			s->requests++;
			refuse(s, c, -EMSGSIZE, "request of %zd bytes is larger than "
			       "the %d allowed", n, CEEMS_AGENT_MSG_MAX);
			return;
		}
		handle_request(s, c, (size_t)n);
		/* One request per connection for users other than root: a
		 * connection cannot be kept by sending a byte now and then. */
		if (c->used && c->uid != 0)
			drop_client(s, c);
		return;
	}
	if (events & (EPOLLHUP | EPOLLERR))
		drop_client(s, c);
}

/* Answer a connection that gets no slot with EBUSY and close it; its
 * client tries again (lib/client/agent_client.c).  Not logged one by one: the
 * refusals are tallied per uid (agent_admit_log). */
static void
refuse_connection(int fd)
{
	int n = ceems_agent_reply_error(-EBUSY, "the agent has too many clients "
					"(or this user holds too many); try again",
					outbuf, sizeof(outbuf));

	if (n > 0)
		send(fd, outbuf, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

/* A slot for a connection the admission allowed (there is one). */
static struct client *
free_slot(struct server *s)
{
	for (unsigned i = 0; i < AGENT_MAX_CLIENTS; i++)
		if (!s->clients[i].used)
			return &s->clients[i];
	return NULL;
}

/* Connections accepted per wakeup: a flood of connects must leave the
 * loop to the ticks and to the clients already in. */
#define ACCEPT_BATCH 64

static void
on_accept(struct server *s)
{
	for (int k = 0; k < ACCEPT_BATCH; k++) {
		struct ucred cred;
		socklen_t len = sizeof(cred);
		struct epoll_event ev;
		struct client *c;
		int fd;

		fd = accept4(s->listen.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				ceems_warning("accept on %s: %s", s->config->socket_path,
					      strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			ceems_warning("cannot read a client's credentials: %s; dropped",
				      strerror(errno));
			close(fd);
			continue;
		}
		if (agent_admit_take(&s->admit, cred.uid) < 0 ||
		    (c = free_slot(s)) == NULL) {
			refuse_connection(fd);
			continue;
		}
		memset(c, 0, sizeof(*c));
		c->w.kind = W_CLIENT;
		c->w.fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		c->deadline_ns = ceems_clock_monotonic_ns() + AGENT_CLIENT_TIMEOUT_MS * UINT64_C(1000000);
		ev.events = EPOLLIN;
		ev.data.ptr = &c->w;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			ceems_warning("cannot watch a client: %s; dropped", strerror(errno));
			agent_admit_put(&s->admit, cred.uid);
			close(fd);
			continue;
		}
		c->used = true;
		s->nclients++;
	}
}

/* Drop silent clients; return the ms until the next deadline (-1 none). */
static int
expire_clients(struct server *s)
{
	uint64_t now = ceems_clock_monotonic_ns(), next = UINT64_MAX;

	for (unsigned i = 0; i < AGENT_MAX_CLIENTS && s->nclients > 0; i++) {
		struct client *c = &s->clients[i];

		if (!c->used)
			continue;
		if (c->deadline_ns <= now) {
			ceems_debug("client uid %u pid %d silent for %d ms: dropped",
				    (unsigned)c->uid, (int)c->pid, AGENT_CLIENT_TIMEOUT_MS);
			drop_client(s, c);
			continue;
		}
		if (c->deadline_ns < next)
			next = c->deadline_ns;
	}
	if (next == UINT64_MAX)
		return -1;
	return (int)((next - now) / 1000000u) + 1;
}

/* ------------------------------------------------------------------ */
/* Run                                                                 */
/* ------------------------------------------------------------------ */

static int
setup(struct server *s, const char *config_text)
{
	char err[512];
	sigset_t mask;
	uint64_t now = ceems_clock_monotonic_ns();
	int r, fd;

	s->started_ns = now;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ceems_error("epoll_create1: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    add_watch(s, &s->sig, W_SIGNAL, fd) < 0) {
		ceems_error("cannot set up signal handling: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);

	s->agent = ceems_agent_open(s->config, now, err, sizeof(err));
	if (s->agent == NULL) {
		ceems_error("cannot start: %s", err);
		return -1;
	}
	/* Opening took a while since NOW: the first tick starts here. */
	ceems_agent_start(s->agent, ceems_clock_monotonic_ns());
	/* Restore before listening: a job that ends now must find its
	 * state, not a fresh registration. */
	r = ceems_agent_restore(s->agent, ceems_clock_monotonic_ns());
	if (r < 0)
		ceems_warning("could not restore the jobs of the last checkpoint: %s",
			      strerror(-r));
	else if (r > 0)
		ceems_info("%d job%s restored from the last checkpoint", r,
			   r == 1 ? "" : "s");
	/* Notes left while the agent was away: jobs restored above get
	 * their own record, the others one of their metadata alone. */
	r = take_notes(s, ceems_clock_monotonic_ns());
	if (r > 0)
		ceems_info("%d job note%s taken", r, r == 1 ? "" : "s");
	if (open_timer(s, &s->tick, W_TICK, s->config->interval_ns) < 0 ||
	    open_timer(s, &s->sample, W_SAMPLE, 0) < 0 ||
	    open_timer(s, &s->checkpoint, W_CHECKPOINT,
		       s->config->checkpoint_interval_ns) < 0) {
		ceems_error("cannot create the agent's timers: %s", strerror(errno));
		return -1;
	}
	update_sample_timer(s);
	if (ceems_storage_have_database(s->config)) {
		s->replay = agent_replay_new(s->config, config_text);
		if (s->replay == NULL ||
		    open_timer(s, &s->replay_timer, W_REPLAY, 0) < 0) {
			ceems_error("cannot set up the replay of the spool");
			return -1;
		}
	}
	if (open_listener(s) < 0)
		return -1;
	/* Everything the agent opens at start is open and its directories
	 * exist: from here on it reaches only its own files. */
	if (agent_confine_fs(s->config) < 0)
		return -1;
	/* Started once everything is open (the new process holds none of
	 * it); its first pass a second after the start. */
	if (s->replay != NULL)
		start_replay(s, 1000000000u);
	ceems_info("listening on %s: tick %.3f s, %zu job%s, up to %u",
		   s->config->socket_path, (double)s->config->interval_ns / 1e9,
		   ceems_agent_njobs(s->agent),
		   ceems_agent_njobs(s->agent) == 1 ? "" : "s", s->config->max_jobs);
	return 0;
}

static void
teardown(struct server *s, bool clean)
{
	for (unsigned i = 0; i < AGENT_MAX_CLIENTS; i++)
		if (s->clients[i].used)
			drop_client(s, &s->clients[i]);
	if (s->agent != NULL && clean)
		checkpoint(s, ceems_clock_monotonic_ns());
	if (s->listen.fd >= 0) {
		agent_listen_remove(s->config->socket_path, &s->sock);
		close(s->listen.fd);
	}
	if (s->tick.fd >= 0)
		close(s->tick.fd);
	if (s->sample.fd >= 0)
		close(s->sample.fd);
	if (s->checkpoint.fd >= 0)
		close(s->checkpoint.fd);
	if (s->sig.fd >= 0)
		close(s->sig.fd);
	if (s->replay_timer.fd >= 0)
		close(s->replay_timer.fd);
	agent_replay_free(s->replay);	/* closes replay_child's fd */
	if (s->epfd >= 0)
		close(s->epfd);
	ceems_agent_close(s->agent);
}

int
agent_server_run(const struct ceems_config *config, const char *config_text)
{
	static struct server s;
	struct epoll_event events[16];

	memset(&s, 0, sizeof(s));
	s.config = config;
	s.epfd = -1;
	s.listen.fd = s.tick.fd = s.sample.fd = s.checkpoint.fd = s.sig.fd = -1;
	s.replay_timer.fd = s.replay_child.fd = -1;
	s.log_window_ns = ceems_clock_monotonic_ns();
	agent_admit_init(&s.admit, s.log_window_ns);
	if (setup(&s, config_text) < 0) {
		teardown(&s, false);
		return 1;
	}
	while (!s.stop) {
		int timeout = expire_clients(&s);

		/* A tick in parts: only look for what came meanwhile. */
		if (ceems_agent_tick_open(s.agent))
			timeout = 0;

		agent_admit_log(&s.admit, ceems_clock_monotonic_ns());
		int n = epoll_wait(s.epfd, events, 16, timeout);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			ceems_error("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = events[i].data.ptr;

			switch (w->kind) {
			case W_LISTEN:
				on_accept(&s);
				break;
			case W_CLIENT:
				/* A client dropped earlier in this batch is
				 * skipped: its slot is no longer used. */
				if (((struct client *)w)->used)
					on_client(&s, (struct client *)w, events[i].events);
				break;
			case W_TICK:
				on_tick(&s);
				break;
			case W_SAMPLE:
				drain_timer(s.sample.fd);
				ceems_agent_sample_sources(s.agent, ceems_clock_monotonic_ns());
				break;
			case W_CHECKPOINT:
				drain_timer(s.checkpoint.fd);
				checkpoint(&s, ceems_clock_monotonic_ns());
				break;
			case W_SIGNAL:
				on_signal(&s);
				break;
			case W_REPLAY:
				on_replay(&s);
				break;
			case W_REPLAY_CHILD:
				on_replay_child(&s);
				break;
			}
		}
		if (ceems_agent_tick_open(s.agent))
			tick_part(&s);
	}
	teardown(&s, true);
	ceems_info("stopped");
	return s.stop ? 0 : 1;
}
