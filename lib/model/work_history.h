/* work_history.h - the energy per unit of work of a user's earlier runs
 * of a job name on this node, for the summary's comparison ("12% more
 * energy per timestep than the median of your last 5 runs of
 * lammps-md").  The node agent keeps it (lib/agent/agent_marks.c): a
 * job that marked its work adds, at its end, each counter's energy per
 * unit and its CPU efficiency; a job ending asks for the median of the
 * last CEEMS_WORK_HISTORY_RUNS of the same user, job name, counter and
 * unit.  No database at the job's end (invariant 1): the node's own
 * runs only; ceems.job_work_history in PostgreSQL has every node's.
 *
 * Job names are the user's free text: a key holds their 64-bit hash,
 * never the text.  Bounded: CEEMS_WORK_HISTORY_KEYS keys, the least
 * recently used one given up for a new one.
 *
 * Text form (STATE_DIR/work-history, one key a line, read like any
 * outside input: a line that does not parse is skipped):
 *   UID HASH COUNTER UNIT EPW:CPU_EFF ...   (oldest first; "nan" unknown) */
#ifndef CEEMS_WORK_HISTORY_H
#define CEEMS_WORK_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/marks.h"

#define CEEMS_WORK_HISTORY_RUNS 5
#define CEEMS_WORK_HISTORY_KEYS 512
/* Bytes of the text form, at most. */
#define CEEMS_WORK_HISTORY_TEXT_MAX \
	(CEEMS_WORK_HISTORY_KEYS * (96 + CEEMS_WORK_HISTORY_RUNS * 56))

struct ceems_work_history_key {
	uint32_t uid;
	uint64_t name_hash;
	char counter[CEEMS_MARKS_NAME_MAX];
	char unit[CEEMS_MARKS_NAME_MAX];
	uint32_t n;			/* runs held, oldest first */
	double epw[CEEMS_WORK_HISTORY_RUNS];	/* J a unit */
	double cpu_eff[CEEMS_WORK_HISTORY_RUNS];	/* NaN unknown */
	uint64_t used;			/* 0: a free key */
};

/* Jobs whose runs were added lately: a job's end is heard more than
 * once (the extern step, then slurmctld's word), its run added once. */
#define CEEMS_WORK_HISTORY_RECENT 64

struct ceems_work_history {
	uint64_t clock;
	struct ceems_work_history_key keys[CEEMS_WORK_HISTORY_KEYS];
	uint32_t recent[CEEMS_WORK_HISTORY_RECENT];
	unsigned recent_next;
};

/* The medians of the earlier runs of a counter: RUNS of them (0: none). */
struct ceems_work_history_median {
	uint32_t runs;
	double epw;
	double cpu_eff;			/* NaN: no run knew it */
};

/* The hash a key holds for job name NAME. */
uint64_t ceems_work_history_name_hash(const char *name);

/* A run of UID's job NAME did EPW J a unit of COUNTER in UNIT, at CPU
 * efficiency CPU_EFF (NaN unknown).  EPW must be finite and > 0. */
void ceems_work_history_add(struct ceems_work_history *h, uint32_t uid,
			    const char *name, const char *counter,
			    const char *unit, double epw, double cpu_eff);

/* Whether job JOBID's run was added lately; if not, it is noted as
 * added now. */
bool ceems_work_history_seen(struct ceems_work_history *h, uint32_t jobid);

/* The medians of the runs held for the key: OUT->runs 0 when none. */
void ceems_work_history_median(const struct ceems_work_history *h,
			       uint32_t uid, const char *name,
			       const char *counter, const char *unit,
			       struct ceems_work_history_median *out);

/* H as text into BUF (NUL-terminated).  The length, or -ENOSPC. */
int ceems_work_history_format(const struct ceems_work_history *h, char *buf,
			      size_t size);

/* TEXT into H (emptied first).  Returns the lines skipped. */
int ceems_work_history_parse(struct ceems_work_history *h, const char *text);

#endif
