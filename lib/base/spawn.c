/* spawn.c - fork without atfork handlers, close-from, and the exec of a
 * supervised program (spawn.h). */
#include "config.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
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

void
ceems_spawn_exec_supervised(pid_t parent, char *const argv[],
			    char *const envp[], const char *what)
{
	sigset_t none;

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/* If the supervisor dies, the program ends (the agent checkpoints
	 * first) rather than run on unsupervised. */
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(126);
	execve(argv[0], argv, envp);
	ceems_error("cannot execute %s %s: %s", what, argv[0], strerror(errno));
	_exit(127);
}
