/* summary.h - the end-of-job summary a user sees at the end of the job's
 * own output: what the job held, what it used, its energy and carbon, and
 * notes that say what to change and what that would save.  Pure
 * functions over the job's metadata and what the agent measured
 * (measure.h): no Slurm, no I/O, no allocation, so the plugin can call
 * them in any context and the tests can hold the text to golden files.
 * The rules and thresholds of every note, and why, are in
 * doc/summary.md. */
#ifndef CEEMS_SUMMARY_H
#define CEEMS_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>

#include "model/carbon_advice.h"
#include "model/job.h"
#include "model/ledger.h"
#include "model/marks.h"
#include "model/measure.h"

enum ceems_summary_style {
	CEEMS_SUMMARY_NONE = 0,	/* print nothing */
	CEEMS_SUMMARY_SHORT,	/* one line */
	CEEMS_SUMMARY_FULL,	/* the block: header, figures, notes */
};

/* "none", "short" or "full" (any case) into *OUT: 0, or -EINVAL. */
int ceems_summary_style_parse(const char *text,
			      enum ceems_summary_style *out);

/* Jobs shorter than NS get no GPU notes (configuration
 * summary_gpu_min_time; default CEEMS_SUMMARY_GPU_MIN_S).  Process-wide:
 * each program that writes or shows summaries sets it from its
 * configuration once, so that the plugin, the agent's records and
 * ceems-sacct judge alike. */
void ceems_summary_notes_set_gpu_min_time(uint64_t ns);

/* No job gets more notes than this (one per rule in doc/summary.md). */
#define CEEMS_SUMMARY_MAX_NOTES 8
#define CEEMS_SUMMARY_NOTE_ID_MAX 24
#define CEEMS_SUMMARY_NOTE_TEXT_MAX 512
/* A buffer for ceems_summary_format that any job's summary fits. */
#define CEEMS_SUMMARY_SIZE 8192

struct ceems_summary_note {
	/* Stable identifier for the job record: "oom", "timeout",
	 * "too-short", "cpu-overuse", "cpu-underuse", "mem-underuse",
	 * "gpu-idle", "gpu-underuse", "time-limit". */
	char id[CEEMS_SUMMARY_NOTE_ID_MAX];
	char text[CEEMS_SUMMARY_NOTE_TEXT_MAX];	/* one paragraph, ASCII */
	/* What following the note would have saved, where it can be
	 * estimated (doc/summary.md); unknown is not zero. */
	bool have_saving_j;
	double saving_j;
	bool have_saving_g;
	double saving_g;	/* g CO2e, at the job's own factor */
};

/* The notes that fit the job, most important first, into NOTES (up to
 * MAX entries; CEEMS_SUMMARY_MAX_NOTES entries always suffice).  REPORT
 * is the agent's report of the job on this node, or NULL when there is
 * none (the agent never answered); its GPUs (report->gpus) are the
 * GPU figures.  Returns the number of notes filled, or -EINVAL. */
int ceems_summary_notes(const struct ceems_job_meta *meta,
			const struct ceems_agent_job_report *report,
			struct ceems_summary_note *notes, size_t max);

/* Write the summary in STYLE into BUF (SIZE bytes, always NUL-terminated
 * when SIZE > 0): plain ASCII, every line at most 80 columns and ending
 * in a newline (none at all for CEEMS_SUMMARY_NONE).  Returns its length,
 * -ENOSPC when it does not fit (BUF is then ""), or -EINVAL.
 * CEEMS_SUMMARY_SIZE bytes are always enough. */
int ceems_summary_format(const struct ceems_job_meta *meta,
			 const struct ceems_agent_job_report *report,
			 enum ceems_summary_style style, char *buf,
			 size_t size);

/* The same, with the carbon-aware advice ADVICE (may be NULL) the node
 * agent gave for the job: its note, last, when the advice is worth one,
 * the job ran on one node and slurmctld listed no dependency of it
 * (META's). */
int ceems_summary_format_advice(const struct ceems_job_meta *meta,
				const struct ceems_agent_job_report *report,
				const struct ceems_advice *advice,
				enum ceems_summary_style style, char *buf,
				size_t size);

/* One node of a multi-node job, for the whole job's summary. */
struct ceems_summary_node {
	const char *name;	/* the node's Slurm name */
	/* Its agent's report of the job, or NULL: no figures from it, WHY
	 * saying why ("no answer in time"). */
	const struct ceems_agent_job_report *report;
	const char *why;
};

/* The summary of a job that ran on several nodes, over the whole job:
 * WHOLE is the merge of the reports of NODES (ceems_measure_merge_report
 * over those that have one; NULL when none has), NODES every node of
 * the job, N of them, in the job's order.  The figures are WHOLE's; a
 * line says how many nodes it covers and names those without figures;
 * each node has a line of its own (CPU, memory peak, energy) up to a
 * few, the extremes beyond; notes speak per node.  Returns as
 * ceems_summary_format. */
int ceems_summary_format_nodes(const struct ceems_job_meta *meta,
			       const struct ceems_agent_job_report *whole,
			       const struct ceems_summary_node *nodes,
			       size_t n, enum ceems_summary_style style,
			       char *buf, size_t size);

/* The lines on the work the job reported (summary_work.c), one per
 * counter of MARKS: "Work     12000 timesteps (steps), 1.923 J per
 * timestep" (the unit after "per" without a plural's 's'), the energy
 * REPORT's ledger total over the counter's work,
 * or "energy not measured".  Written after the block, as its lines are.
 * Returns the length ("" and 0 when MARKS is NULL or empty), or -ENOSPC
 * (BUF is then ""). */
int ceems_summary_work_format(const struct ceems_agent_job_report *report,
			      const struct ceems_marks *marks, char *buf,
			      size_t size);

/* A difference in energy per unit smaller than this, either way, is the
 * noise of runs of one code on one machine: no comparison line. */
#define CEEMS_SUMMARY_WORK_NOTABLE 0.10
/* The fewest earlier runs a comparison is made with. */
#define CEEMS_SUMMARY_WORK_MIN_RUNS 2

/* The same, each counter followed by its comparison with HISTORY (may be
 * NULL), the medians of the user's earlier runs of job NAME, where
 * there were CEEMS_SUMMARY_WORK_MIN_RUNS and the difference is at least
 * CEEMS_SUMMARY_WORK_NOTABLE: "12% more energy per timestep than the
 * median of your last 5 runs of lammps-md", and, when this run's CPU
 * efficiency is under 4/5 of theirs, the likely reason ("fewer cores
 * busy: CPU efficiency 41% against 83%"). */
int ceems_summary_work_format_history(const struct ceems_agent_job_report *report,
				      const struct ceems_marks *marks,
				      const struct ceems_marks_history *history,
				      const char *name, char *buf, size_t size);

/* The carbon-aware note (summary_carbon.c): its id, and the note of
 * advice A into N when A's verdict is that it is worth one (A may be
 * NULL: no advice).  True when N was written. */
#define CEEMS_SUMMARY_CARBON_NOTE "carbon-shift"
bool ceems_summary_carbon_note(const struct ceems_advice *a,
			       struct ceems_summary_note *n);

#endif
