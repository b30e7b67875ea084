/* agent_server_timers.c - the node agent's clocks: timerfds in the
 * event loop's epoll set for the main tick, for fast source sampling
 * (armed only when a counter could wrap within a tick) and for
 * (re)starting the replay child.  A tick reads every job's cgroup, so it
 * is taken in parts, the loop serving requests between them; at its end
 * come the sweep of finished jobs, the job notes, and the checkpoint when
 * one is due (no timer of its own: a wake-up is most of what an idle
 * node's agent costs, and a checkpoint right after a tick holds that
 * tick's figures). */
#include "config.h"

#include <sys/epoll.h>
#include <sys/timerfd.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent_replay.h"
#include "agent_server_internal.h"
#include "agent_status.h"
#include "base/clock.h"
#include "record/job_note.h"
#include "base/log.h"

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

int
agent_server_timers_open_timer(struct server *s, struct watch *w, enum watch_kind kind,
	   uint64_t period_ns)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int r;

	if (fd < 0)
		return -errno;
	if ((r = arm_timer(fd, period_ns)) < 0 ||
	    (r = agent_server_watch_add(s, w, kind, fd)) < 0) {
		close(fd);
		return r;
	}
	return 0;
}

/* Consume a timerfd's expirations (a late loop may have missed some:
 * the engine measures real elapsed time, so one tick covers them). */
void
agent_server_timers_drain_timer(int fd)
{
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		ceems_warning("timer read failed: %s", strerror(errno));
}

/* Sample sources on their own timer only when a counter needs it. */
void
agent_server_timers_update_sample_timer(struct server *s)
{
	uint64_t want = ceems_agent_open_source_interval_within_ns(s->agent,
								  s->tick_period_ns);

	if (want == 0 || want >= s->tick_period_ns)
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
			   (double)want / 1e9, (double)s->tick_period_ns / 1e9);
	s->sample_period_ns = want;
}

/* The tick at the period the agent needs now (ceems_agent_tick_period_ns):
 * longer while it holds no job, since a wake-up is most of what an idle
 * node's agent costs; the interval again as soon as a job comes (its
 * registration ended the long tick: agent_server_timers_end_idle_tick),
 * the next tick an interval after it. */
void
agent_server_timers_update_tick_timer(struct server *s)
{
	uint64_t want = ceems_agent_tick_period_ns(s->agent);

	if (want == s->tick_period_ns)
		return;
	if (arm_timer(s->tick.fd, want) < 0) {
		ceems_error("cannot set the tick to %.3f s: %s", (double)want / 1e9,
			    strerror(errno));
		return;
	}
	ceems_debug("tick every %.3f s (%s)", (double)want / 1e9,
		    want > s->config->interval_ns ? "no job held" : "jobs held");
	s->tick_period_ns = want;
	agent_server_timers_update_sample_timer(s);
}

void
agent_server_timers_checkpoint(struct server *s, uint64_t now)
{
	int r = ceems_agent_checkpoint(s->agent, now);

	/* -ENOENT: no state file (its opening was already logged). */
	if (r < 0 && r != -ENOENT)
		ceems_warning("checkpoint failed: %s: a restart now would lose "
			      "the jobs' figures since the last one", strerror(-r));
}

/* The tick's end: the node's counters, the split, the jobs charged. */
static void
end_tick(struct server *s)
{
	uint64_t now = ceems_clock_monotonic_ns();
	bool due;

	ceems_agent_tick_end(s->agent, now);
	agent_status_totals_add(&s->totals, ceems_agent_last_tick(s->agent), now);
	/* Records written (grace ended, notes taken): the replay now. */
	if (ceems_agent_sweep(s->agent, now) > 0)
		agent_replay_wake(s->replay);
	due = ceems_agent_checkpoint_due(s->agent, now);
	/* With each checkpoint the note folder is read whatever its watch
	 * says: a folder replaced by another of its name (the spool moved
	 * away and made again) sends its old watch nothing. */
	if (due)
		s->notes_pending = true;
	agent_server_notes_take(s, now);
	if (due)
		agent_server_timers_checkpoint(s, now);
	agent_server_timers_update_sample_timer(s);
	agent_server_timers_update_tick_timer(s);
}

/* A tick reads every job's cgroup: with a thousand jobs, one block of it
 * would hold every request that comes meanwhile (the plugin's among
 * them).  It is taken in parts of TICK_PART_NS at most, the loop serving
 * what came between them (agent_server_timers_tick_part). */
#define TICK_PART_NS (UINT64_C(1000000))

void
agent_server_timers_tick_part(struct server *s)
{
	uint64_t until = ceems_clock_monotonic_ns() + TICK_PART_NS;

	while (!ceems_agent_tick_read(s->agent, CEEMS_AGENT_TICK_PART_JOBS))
		if (ceems_clock_monotonic_ns() >= until)
			return;
	end_tick(s);
}

/* A job comes to an agent on its long idle tick: that tick is ended
 * now, so that the job's first tick is one interval of its own and not
 * ten seconds of the idle node with the job there for the last of them
 * (its GPUs' energy and the node's residual are split by presence).  With
 * no job held the tick is a single part. */
void
agent_server_timers_end_idle_tick(struct server *s)
{
	if (s->tick_period_ns <= s->config->interval_ns ||
	    ceems_agent_tick_open(s->agent))
		return;
	ceems_agent_tick_begin(s->agent, ceems_clock_monotonic_ns());
	agent_server_timers_tick_part(s);
}

void
agent_server_timers_on_tick(struct server *s)
{
	agent_server_timers_drain_timer(s->tick.fd);
	/* A tick still in parts when the next is due (a loop starved for a
	 * whole interval): that one takes the time since. */
	if (ceems_agent_tick_open(s->agent))
		return;
	ceems_agent_tick_begin(s->agent, ceems_clock_monotonic_ns());
	agent_server_timers_tick_part(s);
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
void
agent_server_timers_start_replay(struct server *s, uint64_t first_delay_ns)
{
	int fd = agent_replay_spawn(s->replay, first_delay_ns);
	int r = fd;

	if (fd >= 0 && (r = agent_server_watch_add(s, &s->replay_child, W_REPLAY_CHILD, fd)) == 0)
		return;
	ceems_error("cannot start the replay of the spool: %s: trying again in 60 s",
		    strerror(-r));
	if (arm_once(s->replay_timer.fd, 60 * UINT64_C(1000000000)) < 0)
		ceems_error("cannot arm the replay timer: spooled records wait "
			    "for an agent restart");
}

void
agent_server_timers_on_replay(struct server *s)
{
	agent_server_timers_drain_timer(s->replay_timer.fd);
	agent_server_timers_start_replay(s, 0);
}

void
agent_server_timers_on_replay_child(struct server *s)
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
