/* agent_server.c - the node agent's single-threaded event loop.  One
 * epoll set holds the listening socket and the clients
 * (agent_server_clients.c), the timerfds of the tick, of fast source
 * sampling and of the replay (agent_server_timers.c),
 * and a signalfd; requests are answered by agent_server_dispatch.c.
 * This file sets them up, runs the loop and tears it down.  Nothing in
 * it may stall the ticks: a misbehaving client is answered or dropped
 * (design invariant 1). */
#include "config.h"

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent_admit.h"
#include "agent_confine.h"
#include "agent_listen.h"
#include "agent_replay.h"
#include "agent_gather.h"
#include "base/node_name.h"
#include "agent_server.h"
#include "agent_jobinfo.h"
#include "agent_server_internal.h"
#include "base/clock.h"
#include "base/hotmem.h"
#include "base/log.h"
#include "record/storage.h"

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

/* What every tick touches goes to one region of huge pages
 * (base/hotmem.h), reserved for max_jobs jobs: their state and readers,
 * steps' included, come to well under HOT_BYTES_PER_JOB. */
#define HOT_BYTES_PER_JOB (128u * 1024u)
static void
setup_memory(const struct ceems_config *config)
{
	int r = ceems_hotmem_enable(((size_t)config->max_jobs + 8) *
				HOT_BYTES_PER_JOB);
	/* -ENOTSUP: a memory checker runs the agent, it wants the heap. */
	if (r < 0 && r != -ENOTSUP && r != -EALREADY)
		ceems_info("no memory region of its own for the tick (%s): "
			   "the heap serves", strerror(-r));
}

/* This node's name for the gather: the agent's --node, else the host's
 * short name (Slurm's node name when nothing says otherwise). */
static const char *
gather_node(const struct ceems_config *config)
{
	static char host[CEEMS_NODE_NAME_MAX];

	if (config->node[0] != '\0')
		return config->node;
	return ceems_node_name_of_host(host, sizeof(host)) == 0 ? host : NULL;
}

/* A job's cgroup went while it was registered (its extern step was
 * killed): slurmctld's word on how it ended, asked by ceems-jobinfo,
 * ends it before reap_grace. */
static void
job_gone(void *arg, uint32_t jobid)
{
	struct server *s = arg;

	(void)agent_jobinfo_ask_end(s->jobinfo_dir, jobid,
				    ceems_agent_end_run_start(s->agent, jobid));
}

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
	    agent_server_watch_add(s, &s->sig, W_SIGNAL, fd) < 0) {
		ceems_error("cannot set up signal handling: %s", strerror(errno));
		return -1;
	}
	signal(SIGPIPE, SIG_IGN);

	/* Before anything is written there (a restored job's record) or
	 * watched (the notes). */
	agent_confine_make_dirs(s->config);
	s->jobinfo_dir = agent_jobinfo_open(s->config);
	/* While the agent has one thread: a child process finds what the
	 * confinement must let the replay process read for the database. */
	agent_confine_prepare(s->config);
	setup_memory(s->config);
	s->agent = ceems_agent_open(s->config, now, err, sizeof(err));
	if (s->agent != NULL && s->jobinfo_dir >= 0)
		ceems_agent_set_gone_hook(s->agent, job_gone, s);
	if (s->agent == NULL) {
		ceems_error("cannot start: %s", err);
		return -1;
	}
	/* Opening took a while since NOW: the first tick starts here. */
	ceems_agent_open_start(s->agent, ceems_clock_monotonic_ns());
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
	r = agent_server_notes_open(s);
	if (r < 0) {
		ceems_error("cannot watch the job note folder: %s", strerror(-r));
		return -1;
	}
	r = agent_server_notes_take(s, ceems_clock_monotonic_ns());
	if (r > 0)
		ceems_info("%d job note%s taken", r, r == 1 ? "" : "s");
	s->tick_period_ns = s->config->interval_ns;
	if (agent_server_timers_open_timer(s, &s->tick, W_TICK, s->tick_period_ns) < 0 ||
	    agent_server_timers_open_timer(s, &s->sample, W_SAMPLE, 0) < 0) {
		ceems_error("cannot create the agent's timers: %s", strerror(errno));
		return -1;
	}
	agent_server_timers_update_sample_timer(s);
	if (ceems_storage_have_database(s->config)) {
		s->replay = agent_replay_new(s->config, config_text);
		if (s->replay == NULL ||
		    agent_server_timers_open_timer(s, &s->replay_timer, W_REPLAY, 0) < 0) {
			ceems_error("cannot set up the replay of the spool");
			return -1;
		}
	}
	if (agent_server_clients_open_listener(s) < 0)
		return -1;
	/* Bound before the confinement; a node whose port is taken still
	 * measures its jobs (their summaries on other nodes lack it). */
	(void)agent_gather_open(&s->gather, s->config, gather_node(s->config));
	/* Everything the agent opens at start is open and its directories
	 * exist: from here on it reaches only its own files. */
	if (agent_confine_fs(s->config) < 0)
		return -1;
	/* Started once everything is open (the new process holds none of
	 * it); its first pass a second after the start. */
	if (s->replay != NULL)
		agent_server_timers_start_replay(s, 1000000000u);
	/* Its thread after the confinement, which binds only the threads
	 * that exist when it is made. */
	(void)agent_gather_start(&s->gather);
	/* What opening left free on the heap (the eBPF loader's copy of the
	 * kernel's BTF, the GPU libraries' start-up) goes back: megabytes
	 * of resident memory otherwise. */
	malloc_trim(0);
	ceems_info("listening on %s: tick %.3f s, %zu job%s, up to %u",
		   s->config->socket_path, (double)s->config->interval_ns / 1e9,
		   ceems_agent_njobs(s->agent),
		   ceems_agent_njobs(s->agent) == 1 ? "" : "s", s->config->max_jobs);
	return 0;
}

static void
teardown(struct server *s, bool clean)
{
	agent_gather_close(&s->gather);
	for (unsigned i = 0; i < AGENT_MAX_CLIENTS; i++)
		if (s->clients[i].used)
			agent_server_clients_drop_client(s, &s->clients[i]);
	if (s->agent != NULL && clean)
		agent_server_timers_checkpoint(s, ceems_clock_monotonic_ns());
	if (s->listen.fd >= 0) {
		agent_listen_remove(s->config->socket_path, &s->sock);
		close(s->listen.fd);
	}
	if (s->tick.fd >= 0)
		close(s->tick.fd);
	if (s->sample.fd >= 0)
		close(s->sample.fd);
	if (s->sig.fd >= 0)
		close(s->sig.fd);
	if (s->notes.fd >= 0)
		close(s->notes.fd);
	if (s->replay_timer.fd >= 0)
		close(s->replay_timer.fd);
	agent_replay_free(s->replay);	/* closes replay_child's fd */
	if (s->epfd >= 0)
		close(s->epfd);
	ceems_agent_open_close(s->agent);
}

int
agent_server_run(const struct ceems_config *config, const char *config_text)
{
	static struct server s;
	struct epoll_event events[16];

	memset(&s, 0, sizeof(s));
	s.config = config;
	s.epfd = -1;
	s.listen.fd = s.tick.fd = s.sample.fd = s.sig.fd = s.notes.fd = -1;
	s.jobinfo_dir = -1;
	s.replay_timer.fd = s.replay_child.fd = -1;
	s.gather.listen_fd = s.gather.stop_fd = -1;
	s.log_window_ns = ceems_clock_monotonic_ns();
	agent_admit_init(&s.admit, s.log_window_ns);
	if (setup(&s, config_text) < 0) {
		teardown(&s, false);
		return 1;
	}
	while (!s.stop) {
		int timeout = agent_server_clients_expire_clients(&s);

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
				agent_server_clients_on_accept(&s);
				break;
			case W_CLIENT:
				/* A client dropped earlier in this batch is
				 * skipped: its slot is no longer used. */
				if (((struct client *)w)->used)
					agent_server_clients_on_client(&s, (struct client *)w, events[i].events);
				break;
			case W_TICK:
				agent_server_timers_on_tick(&s);
				break;
			case W_SAMPLE:
				agent_server_timers_drain_timer(s.sample.fd);
				ceems_agent_open_sample_sources(s.agent, ceems_clock_monotonic_ns());
				break;
			case W_SIGNAL:
				on_signal(&s);
				break;
			case W_NOTES:
				agent_server_notes_on_event(&s);
				break;
			case W_REPLAY:
				agent_server_timers_on_replay(&s);
				break;
			case W_REPLAY_CHILD:
				agent_server_timers_on_replay_child(&s);
				break;
			}
		}
		if (ceems_agent_tick_open(s.agent))
			agent_server_timers_tick_part(&s);
	}
	teardown(&s, true);
	ceems_info("stopped");
	return s.stop ? 0 : 1;
}
