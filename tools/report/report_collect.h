/* report_collect.h - the sums of each user's jobs, built while the jobs
 * of a period stream by in any order (report_fetch_jobs). */
#ifndef REPORT_COLLECT_H
#define REPORT_COLLECT_H

#include <stddef.h>

#include "report_rules.h"

struct report_collect {
	struct report_sums *users;
	size_t n, cap;
	/* open addressing over users: index + 1, 0 empty; a power of two */
	size_t *slots, nslots;
	int failed;		/* out of memory */
};

/* A report_fetch_fn: ARG is a struct report_collect. */
int report_collect_job(const struct report_job *job, void *arg);

/* Finish every user's suggestions and sort the users by what asking for
 * what their jobs used would have saved, most first (then by name). */
void report_collect_finish(struct report_collect *c);
void report_collect_free(struct report_collect *c);

#endif /* REPORT_COLLECT_H */
