/* sacct_row.h - one line of ceems-sacct's output: a job (its figures
 * summed over its nodes) or one of its steps.  Both backends fill it:
 * the spool by merging a job's node records as ceems.refresh_job does
 * (sql/migrations/002_upsert.sql), PostgreSQL from the ceems.jobs rows
 * and their steps (jobs.steps); the field formatters read only this.
 * Unknown is NaN for every figure, 0/"" for the metadata as in struct
 * ceems_job_meta (design invariant 5: an empty cell, never a 0
 * pretending). */
#ifndef CEEMS_SACCT_ROW_H
#define CEEMS_SACCT_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SACCT_STEP_MAX 16
/* The longest job name and node list kept, terminator included. */
#define SACCT_NAME_MAX 256
#define SACCT_NODES_MAX 512

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
	const char *name;		/* in the rows' text (sacct_row_text) */
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
	const char *nodes;		/* likewise */
	/* A job's part on one node (--per-node, sacct_node_rows.h): that
	 * node, in the rows' text; NULL on job and step rows. */
	const char *part_node;

	/* figures; NaN unknown */
	double elapsed_s;
	double cpu_s;
	double cpu_eff;			/* 0..1+ */
	double mem_peak_bytes;		/* the largest node's */
	double mem_eff;			/* sum of node peaks / requested */
	double gpu_util_pct;		/* weighted by each GPU's share */
	double gpu_sm_pct;		/* mean SM activity, weighted */
	double gpu_mem_peak_bytes;	/* sum of the GPUs' peaks */
	double gpu_mem_total_bytes;	/* sum of their memory */
	double package_j, dram_j, gpu_j, node_j, total_j;
	double quality;			/* lowest coverage of a measured domain */
	double emissions_g;
	double g_per_kwh;
	double pue;
	/* IO on files and network over the nodes that measured them
	 * (eBPF); bytes.  Jobs only: steps leave them unknown. */
	double io_read_bytes, io_write_bytes;
	double net_in_bytes, net_out_bytes;
	/* How many nodes measured them (NaN: none said): fewer than the
	 * job's nodes, the sums are partial and shown so. */
	double io_nodes, net_nodes;
	/* perf counters (lib/sources/perf_job.h), summed over the nodes; NaN
	 * unless every node measured them */
	double perf_ctxsw, perf_page_faults, perf_migrations;
	double perf_cycles, perf_instructions;
	/* Data quality: the share of the energy whose emissions were
	 * priced at the yearly figure, the series not covering the tick
	 * (NaN: no node had a series); the domains some of whose ticks were
	 * split before the node's idle power was learned, as
	 * SACCT_IDLE_UNLEARNED_* bits (NaN: no node measured package or
	 * dram).  Jobs only. */
	double ci_fallback;
	double idle_unlearned;
	/* A step's tasks over its nodes (sacct's NTasks); NaN unless every
	 * node's record of the step counted them.  Steps only. */
	double ntasks;
	/* The work the job reported of itself (doc/marks.md): its counter
	 * with the most marks, summed over its nodes, its unit, and the
	 * job's energy over it, J a unit (NaN, "": it marked none).  Jobs
	 * only. */
	double work, energy_per_work;
	char work_unit[32];
	/* The error bound of total_j, J (migration 030); NaN: unknown. */
	double energy_err_j;
	/* The carbon-aware advice's saving, g CO2e, its nodes' added
	 * (migration 033); NaN: no series covered some node with energy. */
	double saving_g;
};

#define SACCT_IDLE_UNLEARNED_PACKAGE	1
#define SACCT_IDLE_UNLEARNED_DRAM	2

/* The parts of a job row that a reader may not need: one bit each, one
 * column of the database's listing each (exit code and signal are one).
 * The job's identity (cluster, job and array ids, user, start) is
 * always there.  A field says what it reads (struct sacct_field), and
 * the database backend leaves the parts nobody reads unknown, which
 * spares sending them: a heavy user's month is 18,000 rows
 * (doc/performance.md, "Why the listing is written as it is"). */
#define SACCT_NEED_UID		(UINT64_C(1) << 0)
#define SACCT_NEED_ACCOUNT	(UINT64_C(1) << 1)
#define SACCT_NEED_PARTITION	(UINT64_C(1) << 2)
#define SACCT_NEED_QOS		(UINT64_C(1) << 3)
#define SACCT_NEED_NAME		(UINT64_C(1) << 4)
#define SACCT_NEED_STATE	(UINT64_C(1) << 5)
#define SACCT_NEED_EXIT		(UINT64_C(1) << 6)	/* exit_code, exit_signal */
#define SACCT_NEED_SUBMIT	(UINT64_C(1) << 7)
#define SACCT_NEED_END		(UINT64_C(1) << 8)
#define SACCT_NEED_TIMELIMIT	(UINT64_C(1) << 9)
#define SACCT_NEED_ALLOC_CPUS	(UINT64_C(1) << 10)
#define SACCT_NEED_REQ_MEM	(UINT64_C(1) << 11)
#define SACCT_NEED_ALLOC_GPUS	(UINT64_C(1) << 12)
#define SACCT_NEED_NNODES	(UINT64_C(1) << 13)
#define SACCT_NEED_NODES_REPORTED (UINT64_C(1) << 14)
#define SACCT_NEED_NODELIST	(UINT64_C(1) << 15)
#define SACCT_NEED_ELAPSED	(UINT64_C(1) << 16)
#define SACCT_NEED_CPU_S	(UINT64_C(1) << 17)
#define SACCT_NEED_CPU_EFF	(UINT64_C(1) << 18)
#define SACCT_NEED_MEM_PEAK	(UINT64_C(1) << 19)
#define SACCT_NEED_MEM_EFF	(UINT64_C(1) << 20)
#define SACCT_NEED_GPU_UTIL	(UINT64_C(1) << 21)
#define SACCT_NEED_PACKAGE	(UINT64_C(1) << 22)
#define SACCT_NEED_DRAM		(UINT64_C(1) << 23)
#define SACCT_NEED_GPU		(UINT64_C(1) << 24)
#define SACCT_NEED_NODE		(UINT64_C(1) << 25)
#define SACCT_NEED_TOTAL	(UINT64_C(1) << 26)
#define SACCT_NEED_QUALITY	(UINT64_C(1) << 27)
#define SACCT_NEED_EMISSIONS	(UINT64_C(1) << 28)
#define SACCT_NEED_G_PER_KWH	(UINT64_C(1) << 29)
#define SACCT_NEED_PUE		(UINT64_C(1) << 30)
#define SACCT_NEED_GPU_SM	(UINT64_C(1) << 31)
#define SACCT_NEED_GPU_MEM	(UINT64_C(1) << 32)
#define SACCT_NEED_GPU_MEM_TOTAL (UINT64_C(1) << 33)
#define SACCT_NEED_IO		(UINT64_C(1) << 34)	/* io_read, io_write */
#define SACCT_NEED_NET		(UINT64_C(1) << 35)	/* net_in, net_out */
#define SACCT_NEED_PERF		(UINT64_C(1) << 36)	/* every perf_ figure */
#define SACCT_NEED_CI_FALLBACK	(UINT64_C(1) << 37)
#define SACCT_NEED_IDLE_UNLEARNED (UINT64_C(1) << 38)
#define SACCT_NEED_NTASKS	(UINT64_C(1) << 39)
#define SACCT_NEED_WORK		(UINT64_C(1) << 40)	/* work, its unit, per work */
#define SACCT_NEED_ENERGY_ERR	(UINT64_C(1) << 41)
#define SACCT_NEED_CARBON_SAVING (UINT64_C(1) << 42)
#define SACCT_NEED_ALL		((UINT64_C(1) << 43) - 1)

/* *SUM + X where unknown (NaN) adds nothing: NaN + x = x, the sum of
 * what was measured. */
void sacct_row_add_known(double *sum, double x);

/* Set every field of ROW to "unknown" (its strings "", not held by any
 * rows). */
void sacct_row_init(struct sacct_row *row);

/* A growable array of rows, and the text of their names and node lists:
 * those may be long and mostly are short, and kept in the row they made
 * it 1,344 bytes (592 now), a heavy user's month with its steps 74 MB
 * to fill. */
struct sacct_text_block;
struct sacct_rows {
	struct sacct_row *v;
	size_t n, cap;
	struct sacct_text_block *text;
};

/* A copy of S, at most MAX - 1 bytes of it, that lives as long as ROWS
 * ("" for an empty S, shared); NULL when out of memory. */
const char *sacct_row_text(struct sacct_rows *rows, const char *s, size_t max);

/* A new zeroed-to-unknown row at the end, or NULL (out of memory). */
struct sacct_row *sacct_row_add(struct sacct_rows *rows);
/* Room for MORE rows without moving the array: a listing whose size is
 * known grows it once (a heavy user's month with its steps is 33 MB of
 * rows).  0 or -1 (out of memory). */
int sacct_row_reserve(struct sacct_rows *rows, size_t more);
void sacct_row_free(struct sacct_rows *rows);

/* Make ST, a row of ROWS, step ID of JOB: the job's identity and
 * metadata, the step's id as its name, figures unknown.  0, or -1 when
 * out of memory. */
int sacct_row_step_of(struct sacct_rows *rows, struct sacct_row *st,
		       const struct sacct_row *job, const char *id);

/* A job's own row: not one of its steps, nor its part on one node. */
bool sacct_row_is_job(const struct sacct_row *row);

/* Sort jobs by start time, then cluster, job id, then their parts on
 * each node by node name, then their steps in Slurm's order (batch,
 * extern, interactive, then numbers). */
void sacct_row_sort(struct sacct_rows *rows);

#endif
