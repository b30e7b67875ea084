/* sacct_query.h - what ceems-sacct asks its backend for (the options,
 * parsed), the node records of one job (--json, --explain, --series),
 * and the merging of node records into rows that the spool backend
 * needs (the database keeps merged rows in ceems.jobs). */
#ifndef CEEMS_SACCT_QUERY_H
#define CEEMS_SACCT_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "record/record.h"
#include "sacct_row.h"

/* The states -s can name, each once: Slurm has fewer. */
#define SACCT_STATE_MAX 32
/* A name of -u, -A, -r or -M, as stored (lib/base/text.h). */
#define SACCT_NAME_LEN 64

/* One entry of -j: JOBID, JOBID_TASK (one task of an array; JOBID
 * alone is the whole array, as in sacct), either with .STEP. */
struct sacct_jobsel {
	uint32_t jobid;
	uint32_t array_task;		/* UINT32_MAX: any (or not an array) */
	char step[SACCT_STEP_MAX];	/* "" the job and its steps */
};

struct sacct_query {
	time_t start, end;		/* a job overlapping [start, end) */
	bool all_users;			/* no user filter (root, admins, -a) */
	size_t nusers, naccounts, npartitions, nstates, nclusters, njobs;
	/* -u, -A, -r, -M: as many names as given, as in sacct (a
	 * coordinator's script may name every user of an institute);
	 * malloc'd, grown by sacct_merge_name_add, NULL for none. */
	char (*users)[SACCT_NAME_LEN];
	char (*accounts)[SACCT_NAME_LEN];
	char (*partitions)[SACCT_NAME_LEN];
	char (*clusters)[SACCT_NAME_LEN];	/* none: every cluster */
	size_t users_cap, accounts_cap, partitions_cap, clusters_cap;
	char states[SACCT_STATE_MAX][32];	/* long upper-case names */
	/* -j's entries: as many as given, as in sacct (a script passes
	 * the ids of thousands of output files); malloc'd, NULL for none. */
	struct sacct_jobsel *jobs;
	size_t jobs_cap;
	bool allocations;		/* -X: no step rows */
	/* Row parts nobody will read (SACCT_NEED_*): the database backend
	 * may leave them unknown.  0: every part. */
	uint64_t skip;
	/* The spool only: the caller's uid when they may see only their
	 * own records (not root), else UINT32_MAX. */
	uint32_t only_uid;
};

/* A job's time series on one node (--series): rows of the columns below,
 * NaN where a value is absent.  Their names are the agent's
 * (ceems_series_columns, model/agent_series.h), in the same order. */
enum sacct_series_col {
	SACCT_S_T = 0, SACCT_S_INTERVAL, SACCT_S_CPU, SACCT_S_MEM,
	SACCT_S_PACKAGE, SACCT_S_DRAM, SACCT_S_GPU, SACCT_S_NODE,
	SACCT_S_GPU_UTIL,
	SACCT_S_READ, SACCT_S_WRITE, SACCT_S_NET_IN, SACCT_S_NET_OUT,
	SACCT_S_PAGE_FAULTS, SACCT_S_CTX_SWITCHES, SACCT_S_IPC,
	SACCT_S_NCOLS
};

struct sacct_series {
	bool present;
	int resolution_s;
	size_t nrows;
	double (*rows)[SACCT_S_NCOLS];
};

/* The node records of the selected jobs, with their series. */
struct sacct_records {
	struct ceems_job_record *v;
	struct sacct_series *series;
	size_t n, cap;
};

struct ceems_job_record *sacct_merge_records_add(struct sacct_records *recs,
					   struct sacct_series **series);
void sacct_merge_records_free(struct sacct_records *recs);
/* Order: job start, cluster, job id, then node. */
void sacct_merge_records_sort(struct sacct_records *recs);

/* Merge RECS (sorted) into job rows, and step rows unless Q says -X,
 * keeping those Q selects.  Returns 0 or -ENOMEM. */
int sacct_merge(const struct sacct_records *recs, const struct sacct_query *q,
		struct sacct_rows *rows);

/* Record I of RECS alone as a job row (its strings in ROWS): one
 * node's part, figured as the merge figures a job.  0 or -ENOMEM. */
int sacct_merge_one(const struct sacct_records *recs, size_t i,
		    struct sacct_rows *rows, struct sacct_row *row);

/* -j 123.batch lists the step without its job; -j 123 both.  JOB is
 * the job's row (its ids). */
bool sacct_merge_query_wants_job(const struct sacct_query *q,
				 const struct sacct_row *job);
bool sacct_merge_query_wants_step(const struct sacct_query *q,
				  const struct sacct_row *job, const char *step);

/* Add NAME (at most SACCT_NAME_LEN - 1 bytes) to the list *LIST of *N
 * names with room for *CAP: 0, or -1 out of memory. */
int sacct_merge_name_add(char (**list)[SACCT_NAME_LEN], size_t *n,
			 size_t *cap, const char *name);

/* Add SEL to Q's -j entries: 0, or -1 out of memory.  Once all are
 * added, sacct_merge_jobsel_sort: the lookups below search them by job
 * id (a -j list of a million entries is looked up, not scanned). */
int sacct_merge_jobsel_add(struct sacct_query *q, const struct sacct_jobsel *sel);
void sacct_merge_jobsel_sort(struct sacct_query *q);

/* Does a -j entry of Q name job JOBID (or task ARRAY_TASK_ID of array
 * ARRAY_JOB_ID, UINT32_MAX for none), and take STEP: NULL whatever
 * the entry's step, "" the job's own line, else that step?  True when
 * Q has no -j entries. */
bool sacct_merge_query_names(const struct sacct_query *q, uint32_t jobid,
			     uint32_t array_job_id, uint32_t array_task_id,
			     const char *step);

/* Does job row ROW pass Q's filters (window, users, accounts...)? */
bool sacct_merge_query_selects(const struct sacct_query *q,
			 const struct sacct_row *row);

/* Parse a state name, short (CD, F, CA, TO, OOM, NF, PR, BF, DL, R) or
 * long, any case, into its long name.  0 or -1. */
int sacct_merge_state_parse(const char *text, char *out, size_t size);

/* Parse "123", "123_4", "123.batch", "123.0", "123_4.0" into SEL.  0 or
 * -1. */
int sacct_merge_jobsel_parse(const char *text, struct sacct_jobsel *sel);

#endif
