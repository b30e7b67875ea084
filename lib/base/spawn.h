/* spawn.h - the steps every fork+exec of ceems shares: a fork that
 * runs no library's pthread_atfork handler, and closing what the new
 * program must not inherit, both async-signal-safe, for the child of a
 * fork in a process that may have other threads; and the exec of a
 * supervised program (the agent, ceems-jobinfo) tied to its supervisor's
 * life. */
#ifndef CEEMS_SPAWN_H
#define CEEMS_SPAWN_H

#include <sys/types.h>

/* _Fork where the C library has it, else fork(). */
pid_t ceems_spawn_fork(void);

/* Close every descriptor from FIRST up: close_range(2), or one close per
 * possible descriptor on kernels before 5.9 (up to the soft limit, at
 * most 2^20). */
void ceems_spawn_close_from(unsigned first);

/* In the child of a fork by PARENT (a supervisor of the program): ARGV
 * run with ENVP, every signal unblocked, SIGTERM sent to it when PARENT
 * dies, and not run at all when PARENT is gone already.  WHAT names it
 * in the log line of a failed exec.  Never returns. */
_Noreturn void ceems_spawn_exec_supervised(pid_t parent, char *const argv[],
					   char *const envp[],
					   const char *what);

#endif /* CEEMS_SPAWN_H */
