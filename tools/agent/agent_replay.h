/* agent_replay.h - the replay of the spool into PostgreSQL, off the
 * agent's event loop.  A replay pass can wait on the database for up to
 * database_timeout; done in the loop, it held back every register and
 * step request of the node meanwhile (design invariant 1: a job's
 * start must never wait on a database).  It runs in a process of its
 * own instead, which does nothing but replay (lib/record/replay.h: bounded
 * passes, its own connection, its own backoff).  The loop watches a pipe
 * that closes when that process ends, and starts a new one later, with
 * its own backoff when they keep dying.
 *
 * The process is the agent's program executed anew ("ceems-agent
 * --replay", an internal mode), never a bare fork of the agent: the
 * agent has threads by then (the BMC's, those a GPU library starts), and
 * a forked child of a threaded process may find a lock (malloc's,
 * libpq's, the C library's name service or time zone) held by a thread
 * that does not exist in the child, and hang on it forever, the records
 * waiting in the spool with nothing in the log.  Between the fork and
 * the exec only async-signal-safe calls are made. */
#ifndef CEEMS_AGENT_REPLAY_H
#define CEEMS_AGENT_REPLAY_H

#include <stdint.h>
#include <sys/types.h>

#include "base/conf.h"

/* The descriptors the replay process is given: the agent's
 * configuration text (a sealed memfd), and the write end of the pipe
 * whose end of file tells the agent it has ended. */
#define AGENT_REPLAY_CONFIG_FD 3
#define AGENT_REPLAY_ALIVE_FD 4

struct agent_replay;

/* CONFIG must outlive it; CONFIG_TEXT is the text it was parsed from
 * ("" for the defaults), copied.  Opens the agent's own program (to
 * execute it anew, even once the file is replaced or confinement
 * forbids opening it by name).  NULL after logging why. */
struct agent_replay *agent_replay_new(const struct ceems_config *config,
				      const char *config_text);

/* Start the replay process, whose first pass comes after FIRST_DELAY_NS.
 * Returns the fd to watch for reading (it reads as end-of-file once the
 * process has ended), or -errno. */
int agent_replay_spawn(struct agent_replay *rp, uint64_t first_delay_ns);

/* The watched fd was readable: if the process ended, collect it and
 * return the nanoseconds to wait before the next spawn (> 0); 0 while
 * it still runs. */
uint64_t agent_replay_on_event(struct agent_replay *rp);

/* A record was spooled: the process's next pass comes now, unless it is
 * backing off after a failure. */
void agent_replay_wake(struct agent_replay *rp);

/* The running process's pid, 0 when none. */
pid_t agent_replay_pid(const struct agent_replay *rp);

/* Stop the process (SIGTERM, then SIGKILL after at most 2 s) and free. */
void agent_replay_free(struct agent_replay *rp);

/* In the replay process ("ceems-agent --replay DELAY_MS [NODE]": NODE
 * the agent's --node, ARGV from
 * "--replay" on, ARGC its length): check the descriptors it was given,
 * read the configuration into CONFIG and the first delay.  0, or -1
 * after logging why (run by hand, it says it is the agent's own). */
int agent_replay_load(int argc, char **argv, struct ceems_config *config,
		      uint64_t *first_delay_ns);

/* Then replay, until a signal ends the process. */
__attribute__((noreturn)) void
agent_replay_main(const struct ceems_config *config, uint64_t first_delay_ns);

#endif
