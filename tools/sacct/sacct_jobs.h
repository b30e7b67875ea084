/* sacct_jobs.h - the -j list as sacct reads it: entries separated by
 * commas, any number of them, a bracketed range expanded as Slurm's
 * hostlists are ("123_[1-3,7]" is 123_1, 123_2, 123_3, 123_7;
 * "[100-102]" is 100, 101, 102). */
#ifndef CEEMS_SACCT_JOBS_H
#define CEEMS_SACCT_JOBS_H

#include <stddef.h>

#include "sacct_query.h"

/* The most entries one bracketed range may give (sacct's hostlist
 * refuses larger ranges too): "1_[0-4000000000]" is an error, not a
 * gigabyte of ids. */
#define SACCT_JOBS_RANGE_MAX (1u << 20)

/* Add LIST's entries to Q's -j entries: 0, or -1 with ERR naming the
 * bad entry (or out of memory); Q keeps the entries added before it. */
int sacct_jobs_add_list(struct sacct_query *q, const char *list, char *err,
			size_t err_size);

#endif
