/* spawn.h - the two steps every fork+exec of ceems shares: a fork that
 * runs no library's pthread_atfork handler, and closing what the new
 * program must not inherit.  Both are async-signal-safe, for the child of
 * a fork in a process that may have other threads. */
#ifndef CEEMS_SPAWN_H
#define CEEMS_SPAWN_H

#include <sys/types.h>

/* _Fork where the C library has it, else fork(). */
pid_t ceems_spawn_fork(void);

/* Close every descriptor from FIRST up: close_range(2), or one close per
 * possible descriptor on kernels before 5.9 (up to the soft limit, at
 * most 2^20). */
void ceems_spawn_close_from(unsigned first);

#endif /* CEEMS_SPAWN_H */
