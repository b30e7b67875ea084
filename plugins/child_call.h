/* child_call.h - a call that may block for long, run in a forked
 * child whose answer is read back by a deadline (child_call.c says why
 * a child and not a thread).  No Slurm header: tests/unit links it. */
#ifndef CEEMS_CHILD_CALL_H
#define CEEMS_CHILD_CALL_H

#include <stddef.h>
#include <sys/types.h>

/* FN runs in the child: it fills ANSWER (SIZE bytes, zeroed) and hands
 * it over with ceems_child_call_answer on FD, then may go on; the child
 * exits when FN returns. */
struct ceems_child_call {
	pid_t pid;	/* -1: none */
	int fd;
};
typedef void (*ceems_child_fn)(void *arg, void *answer, size_t size,
			       int fd);
int ceems_child_call_start(struct ceems_child_call *c, ceems_child_fn fn,
			   void *arg, size_t answer_size);
/* 0 with ANSWER filled; -ETIMEDOUT (no answer within WAIT_MS), -EIO
 * (the child ended without one), -ENOMEM, -ECHILD (none started).  The
 * child is gone after it, killed if it still ran. */
int ceems_child_call_finish(struct ceems_child_call *c, void *answer,
			    size_t size, int wait_ms);
void ceems_child_call_answer(int fd, const void *answer, size_t size);

#endif
