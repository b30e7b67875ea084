/* agent_admit.h - who may hold one of the node agent's client slots.
 * Root's requests (the job-side plugin registering and deregistering
 * jobs) must get through whatever other local users do with the socket:
 * a share of the slots is kept for root alone, every other uid may hold
 * only a few at once, and the refusals are tallied per uid and logged
 * once per window (an admin can act on a named uid; a flood of
 * connections does not become a flood of log lines). */
#ifndef CEEMS_AGENT_ADMIT_H
#define CEEMS_AGENT_ADMIT_H

#include <sys/types.h>

#include <stdint.h>

/* Most clients connected at once; more are answered EBUSY and closed. */
#define AGENT_MAX_CLIENTS 256
/* Slots no other uid than root may take: however many uids a local user
 * controls, root's requests find these free. */
#define AGENT_ROOT_RESERVE 64
/* Most clients one uid other than root may hold at once. */
#define AGENT_UID_MAX_CLIENTS 8
/* Connections waiting to be accepted.  Large: a connect that finds the
 * queue full fails (EAGAIN) and its client must try again, while one in
 * the queue is accepted in order, each refusal costing microseconds. */
#define AGENT_LISTEN_BACKLOG 1024
/* A client that sends nothing for this long is dropped. */
#define AGENT_CLIENT_TIMEOUT_MS 1000
/* Refusals are logged per uid at most once per this window. */
#define AGENT_ADMIT_LOG_WINDOW_NS (10 * UINT64_C(1000000000))
/* Uids whose refusals are named in the log; the others are summed. */
#define AGENT_ADMIT_NAMED_UIDS 16

struct agent_admit_uid {
	uid_t uid;
	unsigned count;
};

struct agent_admit {
	unsigned held_root;		/* slots held by root */
	unsigned held_other;		/* by every other uid */
	/* Slots held per uid other than root (count 0: a free entry). */
	struct agent_admit_uid held[AGENT_MAX_CLIENTS - AGENT_ROOT_RESERVE];
	/* Refusals in the current window. */
	struct agent_admit_uid refused[AGENT_ADMIT_NAMED_UIDS];
	unsigned refused_unnamed;	/* of uids the table had no room for */
	uint64_t refused_total;		/* since the start, for status */
	uint64_t window_ns;		/* start of the current window */
};

/* An empty table whose first log window starts at NOW_NS. */
void agent_admit_init(struct agent_admit *a, uint64_t now_ns);

/* Take a slot for a client of UID: 0, or -EBUSY (tallied) when root's
 * reserve, UID's own share or the whole table is full. */
int agent_admit_take(struct agent_admit *a, uid_t uid);

/* Give back a slot taken for UID. */
void agent_admit_put(struct agent_admit *a, uid_t uid);

/* Log the refusals of the window ending at NOW_NS (one line per uid, or
 * nothing), and start the next; before the window's end, nothing. */
void agent_admit_log(struct agent_admit *a, uint64_t now_ns);

#endif
