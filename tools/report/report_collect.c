/* report_collect.c - per-user sums of a stream of jobs in any order:
 * one report_sums per user, found through a hash table of the names (a
 * site has thousands of users, a month millions of jobs), finished and
 * ranked at the end. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_collect.h"

static size_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

/* Twice the slots, every user placed again. */
static int
grow_slots(struct report_collect *c)
{
	size_t n = c->nslots != 0 ? c->nslots * 2 : 256;
	size_t *slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -1;
	for (size_t i = 0; i < c->n; i++) {
		size_t k = hash(c->users[i].user) & (n - 1);

		while (slots[k] != 0)
			k = (k + 1) & (n - 1);
		slots[k] = i + 1;
	}
	free(c->slots);
	c->slots = slots;
	c->nslots = n;
	return 0;
}

static struct report_sums *
user_of(struct report_collect *c, const char *user)
{
	size_t k;

	if ((c->n + 1) * 2 > c->nslots && grow_slots(c) < 0)
		return NULL;
	for (k = hash(user) & (c->nslots - 1); c->slots[k] != 0; k = (k + 1) & (c->nslots - 1))
		if (strcmp(c->users[c->slots[k] - 1].user, user) == 0)
			return &c->users[c->slots[k] - 1];
	if (c->n == c->cap) {
		size_t cap = c->cap != 0 ? c->cap * 2 : 64;
		struct report_sums *p = realloc(c->users, cap * sizeof(*p));

		if (p == NULL)
			return NULL;
		c->users = p;
		c->cap = cap;
	}
	report_rules_sums_init(&c->users[c->n], user);
	c->slots[k] = ++c->n;
	return &c->users[c->n - 1];
}

int
report_collect_job(const struct report_job *job, void *arg)
{
	struct report_collect *c = arg;
	struct report_sums *s = user_of(c, job->user);

	if (s == NULL) {
		c->failed = 1;
		return -1;
	}
	report_rules_add(s, job);
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
	/* the order changed: the table no longer points at the users */
	free(c->slots);
	c->slots = NULL;
	c->nslots = 0;
}

void
report_collect_free(struct report_collect *c)
{
	free(c->users);
	free(c->slots);
	memset(c, 0, sizeof(*c));
}
