/* test_child_call.c - a call run in a forked child (plugins/child_call.c)
 * is waited for no longer than its deadline, whatever the child does:
 * answers, answers and goes on, hangs (as in an RPC to a stopped
 * slurmctld), or dies without answering; and no child is left behind. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "child_call.h"
#include "../tap.h"

#define WAIT_MS 300

struct answer {
	char text[3000];	/* larger than a pipe's atomic write */
	int n;
};

enum behaviour { ANSWER, ANSWER_THEN_HANG, HANG, DIE };

static void
child_main(void *arg, void *out, size_t size, int fd)
{
	enum behaviour b = *(enum behaviour *)arg;
	struct answer *a = out;

	if (b == HANG)
		sleep(60);
	if (b == DIE)
		return;
	memset(a->text, 'x', sizeof(a->text) - 1);
	a->n = 42;
	ceems_child_call_answer(fd, a, size);
	if (b == ANSWER_THEN_HANG)
		sleep(60);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Run B; *ELAPSED_MS the wait, *GONE whether the child is gone after. */
static int
run(enum behaviour b, struct answer *a, double *elapsed_ms, int *gone)
{
	struct ceems_child_call c;
	pid_t pid;
	double t0;
	int r;

	memset(a, 0, sizeof(*a));
	if (ceems_child_call_start(&c, child_main, &b, sizeof(*a)) != 0) {
		printf("Bail out! cannot fork\n");
		return -1000;
	}
	pid = c.pid;
	t0 = now_s();
	r = ceems_child_call_finish(&c, a, sizeof(*a), WAIT_MS);
	*elapsed_ms = (now_s() - t0) * 1e3;
	*gone = kill(pid, 0) < 0 && errno == ESRCH;
	return r;
}

int
main(void)
{
	struct answer a;
	double ms;
	int gone, r;

	r = run(ANSWER, &a, &ms, &gone);
	ok(r == 0 && a.n == 42 && a.text[sizeof(a.text) - 2] == 'x',
	   "a child that answers: its answer (%d)", r);
	ok(ms < WAIT_MS, "at once (%.0f ms)", ms);
	ok(gone, "and it is reaped");

	r = run(ANSWER_THEN_HANG, &a, &ms, &gone);
	ok(r == 0 && a.n == 42, "a child that answers, then blocks: its answer (%d)", r);
	ok(ms < WAIT_MS + 200, "within the deadline (%.0f ms)", ms);
	ok(gone, "and it is killed");

	r = run(HANG, &a, &ms, &gone);
	is_int(r, -ETIMEDOUT, "a child that never answers: no answer");
	ok(ms >= WAIT_MS - 5 && ms < WAIT_MS + 200,
	   "after the deadline, not after the call (%.0f ms for %d)", ms, WAIT_MS);
	ok(gone, "and it is killed");

	r = run(DIE, &a, &ms, &gone);
	is_int(r, -EIO, "a child that ends without answering: no answer");
	ok(ms < WAIT_MS, "known at once (%.0f ms)", ms);
	ok(gone, "and it is reaped");

	{
		struct ceems_child_call none = { -1, -1 };

		is_int(ceems_child_call_finish(&none, &a, sizeof(a), WAIT_MS),
		       -ECHILD, "no child started: nothing to wait for");
	}
	done_testing();
}
