/* sacct_row.h - one line of ceems-sacct's output: a job (its figures
 * summed over its nodes) or one of its steps.  Both backends fill it:
 * the spool by merging a job's node records as ceems.refresh_job does
 * (sql/migrations/002_upsert.sql), PostgreSQL from the ceems.jobs and
 * ceems.job_steps rows; the field formatters read only this.  Unknown is
 * NaN for every figure, 0/"" for the metadata as in struct ceems_job_meta
 * (ARCHITECTURE invariant 5: an empty cell, never a 0 pretending). */
#ifndef CEEMS_SACCT_ROW_H
#define CEEMS_SACCT_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SACCT_STEP_MAX 16

struct sacct_row {
	char cluster[64];
	uint32_t jobid;
	uint32_t array_job_id;		/* UINT32_MAX: not an array job */
	uint32_t array_task_id;
	char step[SACCT_STEP_MAX];	/* "" for the job's own row */
	uint32_t uid;
	char user[64];
	char account[64];
	char partition[64];
	char qos[64];
	char name[256];
	char state[32];
	int32_t exit_code;		/* -1 unknown */
	int32_t exit_signal;		/* 0 none */
	int64_t submit_time, start_time, end_time;	/* 0 unknown */
	uint32_t time_limit_min;	/* UINT32_MAX none or unknown */
	uint32_t alloc_cpus;		/* 0 unknown */
	uint64_t req_mem_bytes;		/* 0 unknown */
	uint32_t alloc_gpus;		/* 0 none or unknown */
	uint32_t nnodes;		/* 0 unknown */
	uint32_t nodes_reported;	/* node records merged into this row */
	char nodes[512];

	/* figures; NaN unknown */
	double elapsed_s;
	double cpu_s;
	double cpu_eff;			/* 0..1+ */
	double mem_peak_bytes;		/* the largest node's */
	double mem_eff;			/* sum of node peaks / requested */
	double gpu_util_pct;
	double gpu_mem_eff;
	double package_j, dram_j, gpu_j, node_j, total_j;
	double quality;			/* lowest coverage of a measured domain */
	double emissions_g;
	double g_per_kwh;
	double pue;
};

/* Set every field of ROW to "unknown". */
void sacct_row_init(struct sacct_row *row);

/* A growable array of rows. */
struct sacct_rows {
	struct sacct_row *v;
	size_t n, cap;
};

/* A new zeroed-to-unknown row at the end, or NULL (out of memory). */
struct sacct_row *sacct_rows_add(struct sacct_rows *rows);
void sacct_rows_free(struct sacct_rows *rows);

/* Sort jobs by start time, then cluster, job id, then their steps right
 * after them in Slurm's order (batch, extern, interactive, then numbers). */
void sacct_rows_sort(struct sacct_rows *rows);

#endif
