/* sacct_dups.h - a job id used by more than one job (a requeued job's
 * runs, a cluster whose job ids were reset): sacct lists the latest
 * alone unless -D (--duplicates) asks for every one. */
#ifndef CEEMS_SACCT_DUPS_H
#define CEEMS_SACCT_DUPS_H

#include "sacct_row.h"

/* Keep, of the rows of each cluster's job id, those of its latest job
 * (the latest start), in their order; steps and node parts go with
 * their job.  0, or -1 out of memory (ROWS unchanged). */
int sacct_dups_keep_latest(struct sacct_rows *rows);

#endif
