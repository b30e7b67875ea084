/* ceems_mark.h - tell ceems how much work a Slurm job did, so that its
 * summary and records say the energy per unit of it ("1.923 J per
 * timestep").  One header, libceems_mark (-lceems_mark), nothing else:
 * callable from C and C++, from Python through ctypes, from Fortran
 * through bind(C).  doc/marks.md has examples in each.
 *
 * A counter has a NAME ("steps") and a UNIT ("timesteps"): 1 to 31
 * letters, digits, '_', '.' or '-' each.  A job may keep 8 counters.
 * Say how a value counts: ceems_mark_add for an increment (the work
 * done since the last mark), ceems_mark_set for the cumulative value
 * (the work done since the job started; it may not go down).
 *
 * The calls never block the caller for long and never end it: marks are
 * summed in the process and sent to the node's agent at most once a
 * second per counter, and what is left is sent by ceems_mark_flush, which
 * the library also calls at the process's normal exit.  A call returns 0
 * when the mark is taken (sent, or held to be sent), else a negative
 * errno, ceems_mark_error() saying why in one sentence:
 *   -EINVAL  a bad name, unit or value (nothing is kept of it)
 *   -ENOENT  not in a Slurm job (no SLURM_JOB_ID), or the agent does not
 *            know the job
 *   -EPERM   the agent refused: the caller is not a process of the job
 *   -EBUSY   the job marked faster than the agent takes (the work is
 *            held and sent later)
 *   -ECONNREFUSED, -EIO ...  no agent to talk to (held, tried again)
 * Outside a Slurm job, or on a node without ceems, the calls cost a
 * check and do nothing else.
 *
 * The agent's socket is CEEMS_AGENT_SOCKET in the environment, else
 * /run/ceems/agent.sock; the job is SLURM_JOB_ID. */
#ifndef CEEMS_MARK_H
#define CEEMS_MARK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Counter NAME, in UNIT, grew by VALUE (>= 0). */
int ceems_mark_add(const char *name, const char *unit, double value);

/* Counter NAME, in UNIT, is now VALUE in all (>= its last value). */
int ceems_mark_set(const char *name, const char *unit, double value);

/* The application the process's counters are of ("lammps", as a name:
 * 1 to 31 letters, digits, '_', '.' or '-'), sent with its marks from
 * now on; NULL or "" for none.  Admins compare the energy per unit of
 * an application across its users by it (else by job name).  A counter
 * keeps the first tag it is marked with.  0, or -EINVAL. */
int ceems_mark_tag(const char *application);

/* Send every mark held now, waiting up to a second for the agent if it
 * is busy.  0, or the first error. */
int ceems_mark_flush(void);

/* The last error's sentence, "" when there was none.  Per process. */
const char *ceems_mark_error(void);

#ifdef __cplusplus
}
#endif

#endif
