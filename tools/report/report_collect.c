/* report_collect.c - per-user sums of a stream of jobs in user order:
 * one report_sums per user, finished and ranked at the end. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "report_collect.h"

int
report_collect_job(const struct report_job *job, void *arg)
{
	struct report_collect *c = arg;

	if (c->n == 0 || strcmp(c->users[c->n - 1].user, job->user) != 0) {
		if (c->n == c->cap) {
			size_t cap = c->cap != 0 ? c->cap * 2 : 64;
			struct report_sums *p = realloc(c->users, cap * sizeof(*p));

			if (p == NULL) {
				c->failed = 1;
				return -1;
			}
			c->users = p;
			c->cap = cap;
		}
		report_rules_sums_init(&c->users[c->n++], job->user);
	}
	report_rules_add(&c->users[c->n - 1], job);
	return 0;
}

static int
by_weight(const void *a, const void *b)
{
	double wa = report_rules_weight(a), wb = report_rules_weight(b);

	if (wa != wb)
		return wa < wb ? 1 : -1;
	return strcmp(((const struct report_sums *)a)->user,
		      ((const struct report_sums *)b)->user);
}

void
report_collect_finish(struct report_collect *c)
{
	for (size_t i = 0; i < c->n; i++)
		report_rules_finish(&c->users[i]);
	if (c->n > 1)
		qsort(c->users, c->n, sizeof(c->users[0]), by_weight);
}

void
report_collect_free(struct report_collect *c)
{
	free(c->users);
	memset(c, 0, sizeof(*c));
}
