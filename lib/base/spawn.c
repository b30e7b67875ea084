/* spawn.c - fork without atfork handlers, and close-from (spawn.h). */
#include "config.h"

#include <sys/resource.h>
#include <sys/syscall.h>

#include <unistd.h>

#include "base/spawn.h"

pid_t
ceems_spawn_fork(void)
{
#ifdef HAVE__FORK
	return _Fork();
#else
	return fork();
#endif
}

void
ceems_spawn_close_from(unsigned first)
{
	struct rlimit rl;

#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, ~0u, 0u) == 0)
		return;
#endif
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1u << 20))
		rl.rlim_cur = 1u << 20;
	for (unsigned fd = first; fd < rl.rlim_cur; fd++)
		(void)close((int)fd);
}
