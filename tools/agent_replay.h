/* agent_replay.h - the replay of the spool into PostgreSQL, off the
 * agent's event loop.  A replay pass can wait on the database for up to
 * database_timeout; done in the loop, it held back every register and
 * step request of the node meanwhile (ARCHITECTURE invariant 1: a job's
 * start must never wait on a database).  It runs in a child process of
 * the agent instead, forked at start from the single-threaded agent,
 * which does nothing but replay (lib/replay.h: bounded passes, its own
 * connection, its own backoff).  The loop watches a pipe that closes
 * when the child ends, and starts a new one later, with its own backoff
 * when children keep dying. */
#ifndef CEEMS_AGENT_REPLAY_H
#define CEEMS_AGENT_REPLAY_H

#include <stdint.h>
#include <sys/types.h>

#include "conf.h"

struct agent_replay;

/* CONFIG must outlive it.  NULL on allocation failure. */
struct agent_replay *agent_replay_new(const struct ceems_config *config);

/* Fork the replay child, whose first pass comes after FIRST_DELAY_NS.
 * Returns the fd to watch for reading (it reads as end-of-file once the
 * child has ended), or -errno. */
int agent_replay_spawn(struct agent_replay *rp, uint64_t first_delay_ns);

/* The watched fd was readable: if the child ended, collect it and
 * return the nanoseconds to wait before the next spawn (> 0); 0 while
 * it still runs. */
uint64_t agent_replay_on_event(struct agent_replay *rp);

/* A record was spooled: the child's next pass comes now, unless it is
 * backing off after a failure. */
void agent_replay_wake(struct agent_replay *rp);

/* The running child's pid, 0 when none. */
pid_t agent_replay_pid(const struct agent_replay *rp);

/* Stop the child (SIGTERM, then SIGKILL after at most 2 s) and free. */
void agent_replay_free(struct agent_replay *rp);

#endif
