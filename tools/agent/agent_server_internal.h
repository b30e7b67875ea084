/* agent_server_internal.h - what the parts of the node agent's event
 * loop share, and nothing else includes: the server's state, the watches
 * epoll reports, and the calls between the loop (agent_server.c), its
 * timers (agent_server_timers.c), its socket and clients
 * (agent_server_clients.c) and the dispatch of requests
 * (agent_server_dispatch.c).  One thread runs them all. */
#ifndef CEEMS_AGENT_SERVER_INTERNAL_H
#define CEEMS_AGENT_SERVER_INTERNAL_H

#include <sys/types.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent_admit.h"
#include "agent_gather.h"
#include "agent_listen.h"
#include "client/agent_proto.h"
#include "agent_replay.h"
#include "agent_status.h"
#include "base/conf.h"

enum watch_kind { W_LISTEN, W_CLIENT, W_TICK, W_SAMPLE, W_SIGNAL, W_NOTES,
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
	struct watch listen, tick, sample, sig;
	struct watch replay_timer;	/* one-shot: (re)start the replay child */
	struct watch replay_child;	/* its pipe: end of file when it ends */
	struct agent_replay *replay;	/* NULL: no database configured */
	uint64_t sample_period_ns;	/* 0: no fast sampling */
	uint64_t tick_period_ns;	/* the tick timer's (idle: longer) */
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
	struct watch notes;	/* inotify, -1 none (agent_server_notes.c) */
	int notes_wd;		/* the note folder's watch, -1 none */
	bool notes_pending;	/* a note may be there: read at the tick's end */
	int jobinfo_dir;	/* ceems-jobinfo's requests, -1 none */
	bool stop;
	/* The gather listener of multi-node jobs: its own thread. */
	struct agent_gather gather;
	/* Requests and replies go through one buffer each: one thread. */
	char inbuf[CEEMS_AGENT_MSG_MAX + 1];
	char outbuf[CEEMS_AGENT_MSG_MAX + 1];
};

/* agent_server_watch.c: FD into the event loop as W, of KIND.  0 or
 * -errno. */
int agent_server_watch_add(struct server *s, struct watch *w, enum watch_kind kind,
			   int fd);

/* agent_server_timers.c: the timerfds, the tick in parts, checkpoints,
 * the job notes and the replay child. */
int agent_server_timers_open_timer(struct server *s, struct watch *w, enum watch_kind kind,
		      uint64_t period_ns);
void agent_server_timers_drain_timer(int fd);
void agent_server_timers_update_sample_timer(struct server *s);
void agent_server_timers_update_tick_timer(struct server *s);
void agent_server_timers_checkpoint(struct server *s, uint64_t now);

/* agent_server_notes.c: when the job note folder is read. */
int agent_server_notes_open(struct server *s);
void agent_server_notes_on_event(struct server *s);
int agent_server_notes_take(struct server *s, uint64_t now);
void agent_server_timers_tick_part(struct server *s);
void agent_server_timers_on_tick(struct server *s);
void agent_server_timers_end_idle_tick(struct server *s);
void agent_server_timers_start_replay(struct server *s, uint64_t first_delay_ns);
void agent_server_timers_on_replay(struct server *s);
void agent_server_timers_on_replay_child(struct server *s);

/* agent_server_clients.c: the listening socket, admission, clients'
 * messages in, replies and refusals out. */
int agent_server_clients_open_listener(struct server *s);
void agent_server_clients_on_accept(struct server *s);
void agent_server_clients_on_client(struct server *s, struct client *c, uint32_t events);
int agent_server_clients_expire_clients(struct server *s);
void agent_server_clients_drop_client(struct server *s, struct client *c);
int agent_server_clients_send_reply(struct server *s, struct client *c, int len);
void agent_server_clients_refuse(struct server *s, struct client *c, int code,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The same, answered in the line protocol's form ("ERR CODE why"). */
void agent_server_clients_refuse_line(struct server *s, struct client *c,
				      int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* agent_mark.c: a mark request from C, checked and answered; and the
 * same as a plain-text line of LEN bytes in s->inbuf. */
void agent_mark_handle(struct server *s, struct client *c,
		       const struct ceems_agent_request *req);
void agent_mark_handle_line(struct server *s, struct client *c, size_t len);

/* agent_server_dispatch.c: one request of LEN bytes in s->inbuf from C,
 * answered. */
void agent_server_dispatch_handle_request(struct server *s, struct client *c, size_t len);

#endif
