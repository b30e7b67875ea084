/* marks.h - a job's own account of the work it did: named counters with
 * a unit ("steps" in timesteps, "samples" in samples) that the job's
 * processes report to the node agent (the "mark" request of
 * agent_proto.h, the ceems-mark command, the C API of ceems_mark.h).
 * The agent keeps them beside the job's report; the summary divides the
 * job's energy by them ("1.9 J per timestep"), the record keeps them
 * (doc/record-format.md "marks"), PostgreSQL holds them in job_marks.
 *
 * A mark is either an increment ("add": the counter grows by the value)
 * or a cumulative value ("set": the counter is the value, which may not
 * go down): the caller says which, never the agent guesses.  A job has
 * at most CEEMS_MARKS_MAX counters, and its marks are bounded in rate
 * (a token bucket, ceems_marks_rate_take): a job marking in a loop
 * costs the agent a bounded amount of work, and a job that never marks
 * costs nothing (the agent allocates its marks at the first one).
 *
 * A counter may carry a tag: the application its work is of
 * ("lammps"), as the job says it, for the admins' view of energy per
 * unit across users (by tag, else by job name).  Optional; fixed by the
 * counter's first tagged mark.
 *
 * The work per interval: beside its total, each counter keeps the work
 * it gained in each interval of interval_s seconds (aligned on the Unix
 * epoch, as the job's series rows are, agent_series.h) in which it
 * gained some, so that the work done can be set beside the power drawn
 * (ceems.job_work_series).  Bounded: CEEMS_MARKS_ROWS rows a counter;
 * when one is full, every counter's rows are merged into intervals
 * twice as long, so a long job keeps its whole span.
 *
 * JSON form (the reply's and the record's "marks"), one object per
 * counter in the order they were first marked:
 *   [{"name":s, "unit":s, "work":x, "marks":N, "tag":s,
 *     "interval_s":R, "intervals":[[t, work], ...]}]
 * work is the counter's value (>= 0), marks how many marks made it;
 * "tag" only when the counter has one; "interval_s" and "intervals"
 * only when it has rows (t ascending, multiples of R; work > 0). */
#ifndef CEEMS_MARKS_H
#define CEEMS_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Counters one job may keep. */
#define CEEMS_MARKS_MAX 8
/* Intervals a counter keeps of its work (marks_series.c): a full one is
 * coarsened, never cut. */
#define CEEMS_MARKS_ROWS 32
/* Room for a name or a unit, with its NUL: 1 to 31 bytes of
 * [A-Za-z0-9_.-] (ceems_marks_name_ok). */
#define CEEMS_MARKS_NAME_MAX 32
/* Largest value a mark may carry or a counter reach: past 2^53 a
 * double no longer counts units one by one. */
#define CEEMS_MARKS_VALUE_MAX 9007199254740992.0
/* The rate bound of one job: marks a second, sustained, and the burst
 * it may spend at once. */
#define CEEMS_MARKS_RATE 200
#define CEEMS_MARKS_BURST 400

enum ceems_marks_mode {
	CEEMS_MARKS_ADD = 1,	/* an increment */
	CEEMS_MARKS_SET = 2,	/* the cumulative value */
};

struct ceems_marks_counter {
	char name[CEEMS_MARKS_NAME_MAX];
	char unit[CEEMS_MARKS_NAME_MAX];
	double work;
	uint64_t marks;
	char tag[CEEMS_MARKS_NAME_MAX];	/* "" none */
	/* The work it gained in each interval of the job's marks that it
	 * gained some (marks_series.c), oldest first. */
	uint32_t nrows;
	struct ceems_marks_row {
		int64_t t;		/* the interval's start, Unix s */
		double work;		/* > 0 */
	} rows[CEEMS_MARKS_ROWS];
};

struct ceems_marks {
	uint32_t n;
	/* The intervals' length, s, the same for every counter: a multiple
	 * of the agent's series resolution; 0 before the first row. */
	uint32_t interval_s;
	struct ceems_marks_counter c[CEEMS_MARKS_MAX];
};

/* For each counter of a job, the medians of the same user's earlier
 * runs of the job's name on the node (work_history.h), as the agent's
 * reply to the job's step end carries them:
 *   [{"name":s, "unit":s, "runs":N, "median_j":x, "median_cpu_eff":x}]
 * median_j is J a unit; median_cpu_eff is left out when unknown. */
struct ceems_marks_history {
	uint32_t n;
	struct ceems_marks_history_counter {
		char name[CEEMS_MARKS_NAME_MAX];
		char unit[CEEMS_MARKS_NAME_MAX];
		uint32_t runs;
		double median_j;
		double median_cpu_eff;		/* NaN unknown */
	} c[CEEMS_MARKS_MAX];
};

/* A token bucket: CEEMS_MARKS_RATE a second, at most CEEMS_MARKS_BURST
 * saved.  Zeroed: full at its first use. */
struct ceems_marks_rate {
	bool started;
	double tokens;
	uint64_t last_ns;
	uint64_t refused;	/* marks refused since the job registered */
};

/* Whether S (a name or a unit) is 1 to CEEMS_MARKS_NAME_MAX - 1 bytes
 * of letters, digits, '_', '.' and '-'. */
bool ceems_marks_name_ok(const char *s);

/* Apply one mark to M: counter NAME in UNIT, VALUE by MODE, with TAG
 * (NULL or "": none; else as a name).  A new name takes a new counter;
 * a counter without a tag takes the first one given.  0, or -EINVAL (a
 * bad name, unit, tag or value; a unit or tag other than the
 * counter's; a cumulative value below the counter's), -ENOSPC
 * (CEEMS_MARKS_MAX counters already), with ERR holding one sentence for
 * the caller.  M is unchanged on error. */
int ceems_marks_apply(struct ceems_marks *m, const char *name,
		      const char *unit, const char *tag,
		      enum ceems_marks_mode mode, double value, char *err,
		      size_t err_size);

struct json_object;

/* marks_series.c: counter I of M gained DELTA (> 0; else nothing) at
 * UNIX_S; BASE_S, the agent's series resolution (> 0), is the rows'
 * interval until they are coarsened. */
void ceems_marks_series_add(struct ceems_marks *m, uint32_t i, double delta,
			    int64_t unix_s, uint32_t base_s);
/* The rows of counter C into the object O ("interval_s", "intervals"),
 * *OK false on failure; and back from O into C (nothing when O has
 * none), checked: 0, or -EINVAL with ERR.  *INTERVAL_S is the rows'
 * interval, the same for each counter of a job (0: not yet known). */
void ceems_marks_series_to_json(struct json_object *o,
				const struct ceems_marks_counter *c,
				uint32_t interval_s, bool *ok);
int ceems_marks_series_from_json(const struct json_object *o, const char *where,
				 struct ceems_marks_counter *c,
				 uint32_t *interval_s, char *err,
				 size_t err_size);

/* Take one mark from R at NOW_NS: true when the job may mark now, false
 * (counted in R->refused) when it has spent its rate. */
bool ceems_marks_rate_take(struct ceems_marks_rate *r, uint64_t now_ns);

/* The counter of M with the most marks (the one a summary divides the
 * energy by), or NULL when M has none. */
const struct ceems_marks_counter *ceems_marks_main(const struct ceems_marks *m);

struct json_object;

/* M as its JSON array, or NULL on allocation failure. */
struct json_object *ceems_marks_to_json(const struct ceems_marks *m);
/* The same, each counter's name, unit, work and marks only: what a
 * step's summary needs, in the shape every plugin that knows marks
 * decodes (one older than tags and intervals refuses their keys, and is
 * still loaded in the slurmstepd of jobs that started before an
 * upgrade). */
struct json_object *ceems_marks_to_json_brief(const struct ceems_marks *m);
/* The array OBJ into M (untouched on error).  Strict: each entry's keys
 * are the ones above, its name, unit and tag ceems_marks_name_ok, its work
 * finite in [0, CEEMS_MARKS_VALUE_MAX].  0, or -EINVAL with ERR. */
int ceems_marks_from_json(const struct json_object *obj, struct ceems_marks *m,
			  char *err, size_t err_size);

/* What the JSON of the counters and of their history share: a new
 * object in ARR with NAME and UNIT (NULL, *OK false, on failure); and
 * the object O at WHERE, of only the keys KNOWN, checked to be an
 * object whose "name" and "unit" are a counter's, into NAME and UNIT
 * (CEEMS_MARKS_NAME_MAX bytes each): 0, or -EINVAL with ERR. */
struct json_object *ceems_marks_json_entry(struct json_object *arr,
					   const char *name, const char *unit,
					   bool *ok);
int ceems_marks_json_read_entry(const struct json_object *o, const char *where,
				const char *const *known, char *name,
				char *unit, char *err, size_t err_size);

/* H as its JSON array (marks_history.c), or NULL on allocation failure;
 * and back, strictly (names and units as marks, runs 1 to 1000, the
 * medians finite, > 0 and >= 0).  0, or -EINVAL with ERR. */
struct json_object *ceems_marks_history_to_json(const struct ceems_marks_history *h);
int ceems_marks_history_from_json(const struct json_object *obj,
				  struct ceems_marks_history *h, char *err,
				  size_t err_size);

#endif
