/* agent_marks.c - the engine's side of a job's marks (model/marks.h):
 * who may mark a job, the job's rate, and where its counters live (with
 * the job while it runs, with its final figures while it finishes).
 * The socket side (tools/agent/agent_mark.c) reads the caller's cgroup
 * and answers.  And the users' earlier runs' energy per unit, which a
 * job's summary is compared with (model/work_history.h), kept in
 * STATE_DIR/work-history. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "agent/agent_finish.h"
#include "agent/agent_internal.h"
#include "base/clock.h"
#include "base/fileio.h"
#include "base/json_util.h"
#include "base/log.h"
#include "cgroup/cgroup_path.h"
#include "model/ledger.h"

/* Whether the job cgroup CALLER (cut at its job_JOBID component) is the
 * one SPEC registered: the same path in the unified tree, or in every
 * v1 controller both name (at least one). */
static bool
same_cgroup(const struct ceems_cgroup_job *spec,
	    const struct ceems_cgroup_job *caller)
{
	bool any = false;

	if (spec->version == CEEMS_CGROUP_V2)
		return caller->unified[0] != '\0' &&
		       strcmp(spec->unified, caller->unified) == 0;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		if (spec->v1[c][0] == '\0' || caller->v1[c][0] == '\0')
			continue;
		if (strcmp(spec->v1[c], caller->v1[c]) != 0)
			return false;
		any = true;
	}
	return any;
}

int
ceems_agent_marks_admit(const struct ceems_agent *a, uint32_t jobid, uid_t uid,
			const char *proc_cgroup, char *err, size_t err_size)
{
	const struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	static struct ceems_cgroup_job caller;

	if (j == NULL) {
		snprintf(err, err_size, "job %u is not running on this node", jobid);
		return -ENOENT;
	}
	if (uid != 0 && uid != j->spec.uid) {
		snprintf(err, err_size, "job %u is not yours: only its own "
			 "processes may mark it", jobid);
		return -EPERM;
	}
	memset(&caller, 0, sizeof(caller));
	if (proc_cgroup == NULL ||
	    ceems_cgroup_path_job_from_proc(proc_cgroup, jobid, &caller) < 0 ||
	    !same_cgroup(&j->spec.cgroup, &caller)) {
		snprintf(err, err_size, "the caller is not a process of job %u "
			 "(not inside its cgroup): only the job's own processes "
			 "may mark it", jobid);
		return -EPERM;
	}
	return 0;
}

/* The work of M's counter NAME (0 when it has none yet), and its index
 * into *I when I is not NULL. */
static double
counter_work(const struct ceems_marks *m, const char *name, uint32_t *i)
{
	for (uint32_t k = 0; k < m->n && k < CEEMS_MARKS_MAX; k++)
		if (strcmp(m->c[k].name, name) == 0) {
			if (i != NULL)
				*i = k;
			return m->c[k].work;
		}
	return 0;
}

/* The Unix time, s, of the agent's monotonic NOW_NS: the series of work
 * is in Unix time, as the job's series is. */
static int64_t
unix_s_at(uint64_t now_ns)
{
	struct timespec ts;
	double mono = (double)ceems_clock_monotonic_ns() / 1e9;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)floor((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 -
			      mono + (double)now_ns / 1e9);
}

/* The intervals of the series of work: the agent's series resolution
 * (series_interval), whole seconds, at least one. */
static uint32_t
series_base_s(const struct ceems_agent *a)
{
	uint64_t s = a->config.series_interval_ns / 1000000000u;

	return s == 0 ? 1 : s > 86400 ? 86400 : (uint32_t)s;
}

int
ceems_agent_marks_apply(struct ceems_agent *a, uint32_t jobid,
			const char *name, const char *unit, const char *tag,
			enum ceems_marks_mode mode, double value,
			uint64_t now_ns, char *err, size_t err_size)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	double before, after;
	uint32_t i = 0;
	int r;

	if (j == NULL) {
		snprintf(err, err_size, "job %u is not running on this node", jobid);
		return -ENOENT;
	}
	if (!ceems_marks_rate_take(&j->mark_rate, now_ns)) {
		snprintf(err, err_size, "job %u marks faster than %d a second: "
			 "this mark is dropped (add up increments and mark "
			 "less often)", jobid, CEEMS_MARKS_RATE);
		return -EBUSY;
	}
	if (j->marks == NULL && (j->marks = calloc(1, sizeof(*j->marks))) == NULL) {
		snprintf(err, err_size, "the agent is out of memory");
		return -ENOMEM;
	}
	before = counter_work(j->marks, name, NULL);
	r = ceems_marks_apply(j->marks, name, unit, tag, mode, value, err,
			      err_size);
	if (r < 0)
		return r;
	/* The work it gained, in its interval for the series of work. */
	after = counter_work(j->marks, name, &i);
	ceems_marks_series_add(j->marks, i, after - before, unix_s_at(now_ns),
			       series_base_s(a));
	/* Kept at the next checkpoint (ceems_agent_marks_save). */
	j->marks_dirty = true;
	return 0;
}

const struct ceems_marks *
ceems_agent_marks_get(const struct ceems_agent *a, uint32_t jobid)
{
	const struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	const struct ceems_marks *m;

	if (j != NULL)
		return j->marks;
	m = ceems_agent_finish_marks(a->finish, jobid);
	return m != NULL && m->n > 0 ? m : NULL;
}

/* ---- The users' earlier runs (model/work_history.h) ---- */

#define HISTORY_FILE "work-history"

void
ceems_agent_marks_history_load(struct ceems_agent *a)
{
	static char text[CEEMS_WORK_HISTORY_TEXT_MAX];
	char path[CEEMS_CONFIG_PATH_MAX + 32];
	ssize_t n;
	int skipped;

	a->work_history = calloc(1, sizeof(*a->work_history));
	if (a->work_history == NULL || a->config.state_dir[0] == '\0')
		return;
	snprintf(path, sizeof(path), "%s/" HISTORY_FILE, a->config.state_dir);
	n = ceems_fileio_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		if (n != -ENOENT)
			ceems_warning("%s: %s; users' earlier runs start afresh",
				      path, strerror((int)-n));
		return;
	}
	skipped = ceems_work_history_parse(a->work_history, text);
	if (skipped > 0)
		ceems_warning("%s: %d lines that do not parse were skipped",
			      path, skipped);
}

/* The job's CPU efficiency in REPORT, NaN when not measured. */
static double
cpu_efficiency(const struct ceems_agent_job_report *r)
{
	double held = r->elapsed_s * (double)r->alloc_cores;

	return (r->usage.present & CEEMS_CGF_CPU_USAGE) && held > 0 ?
	       r->cpu_s / held : NAN;
}

void
ceems_agent_marks_job_ended(struct ceems_agent *a, uint32_t jobid,
			    const struct ceems_marks *m, const char *name,
			    const struct ceems_agent_job_report *report)
{
	static char text[CEEMS_WORK_HISTORY_TEXT_MAX];
	double total_j;
	int n, r;

	if (m == NULL || m->n == 0 || a->work_history == NULL || name == NULL ||
	    name[0] == '\0' ||
	    !ceems_job_figures_ledger_energy_known(&report->ledger) ||
	    ceems_work_history_seen(a->work_history, jobid))
		return;
	total_j = ceems_job_figures_ledger_total_j(&report->ledger);
	for (uint32_t i = 0; i < m->n && i < CEEMS_MARKS_MAX; i++)
		if (m->c[i].work > 0)
			ceems_work_history_add(a->work_history, report->uid, name,
					       m->c[i].name, m->c[i].unit,
					       total_j / m->c[i].work,
					       cpu_efficiency(report));
	if (a->config.state_dir[0] == '\0')
		return;
	n = ceems_work_history_format(a->work_history, text, sizeof(text));
	if (n < 0 || (r = ceems_fileio_replace(a->config.state_dir, HISTORY_FILE,
					       text)) < 0)
		ceems_warning("job %u: the users' earlier runs could not be "
			      "written to %s/" HISTORY_FILE, jobid,
			      a->config.state_dir);
}

void
ceems_agent_marks_history(const struct ceems_agent *a, uint32_t jobid,
			  uint32_t uid, const char *name,
			  struct ceems_marks_history *out)
{
	const struct ceems_marks *m = ceems_agent_marks_get(a, jobid);

	memset(out, 0, sizeof(*out));
	if (m == NULL || a->work_history == NULL || name == NULL || name[0] == '\0')
		return;
	for (uint32_t i = 0; i < m->n && i < CEEMS_MARKS_MAX; i++) {
		struct ceems_work_history_median med;
		struct ceems_marks_history_counter *c = &out->c[out->n];

		ceems_work_history_median(a->work_history, uid, name,
					  m->c[i].name, m->c[i].unit, &med);
		if (med.runs == 0)
			continue;
		memcpy(c->name, m->c[i].name, sizeof(c->name));
		memcpy(c->unit, m->c[i].unit, sizeof(c->unit));
		c->runs = med.runs;
		c->median_j = med.epw;
		c->median_cpu_eff = med.cpu_eff;
		out->n++;
	}
}

/* ---- A job's marks across an agent restart ---- */

/* STATE_DIR/marks-JOBID.json: its counters (marks.h's JSON), written at
 * the checkpoints after they changed, read back with the job's state,
 * removed with the job's record.  The rate's bucket starts full again. */
static void
marks_file_name(uint32_t jobid, char *name, size_t size)
{
	snprintf(name, size, "marks-%u.json", jobid);
}

void
ceems_agent_marks_save(const char *state_dir, uint32_t jobid,
		       const struct ceems_marks *m)
{
	struct json_object *arr;
	char name[32];
	const char *text;

	if (state_dir[0] == '\0' || m == NULL)
		return;
	marks_file_name(jobid, name, sizeof(name));
	arr = ceems_marks_to_json(m);
	text = arr != NULL ? json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PLAIN) : NULL;
	if (text == NULL || ceems_fileio_replace(state_dir, name, text) < 0)
		ceems_warning("job %u: its marks could not be kept in %s/%s: an "
			      "agent restart would lose them", jobid, state_dir, name);
	json_object_put(arr);
}

int
ceems_agent_marks_load(const char *state_dir, uint32_t jobid,
		       struct ceems_marks *m)
{
	/* The largest file ceems_agent_marks_save writes: each counter's
	 * three names, figures and CEEMS_MARKS_ROWS intervals (about 2 KiB
	 * at their longest), twice over.  Static: the agent's one thread,
	 * and too large for its stack. */
	static char text[CEEMS_MARKS_MAX * 4096];
	char name[32], path[CEEMS_CONFIG_PATH_MAX + 32], err[160];
	struct json_object *obj;
	ssize_t n;
	int r;

	_Static_assert(CEEMS_MARKS_ROWS <= 32 && CEEMS_MARKS_NAME_MAX <= 32,
		       "a marks file may outgrow the buffer it is read into");
	memset(m, 0, sizeof(*m));
	if (state_dir[0] == '\0')
		return -ENOENT;
	marks_file_name(jobid, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	if ((n = ceems_fileio_read_text_file(path, text, sizeof(text))) < 0) {
		if (n != -ENOENT)
			ceems_warning("%s: cannot read it (%s); the job's marks before the restart are lost",
				      path, strerror((int)-n));
		return (int)n;
	}
	obj = ceems_json_util_parse(text, (size_t)n, true, err, sizeof(err));
	r = obj != NULL ? ceems_marks_from_json(obj, m, err, sizeof(err)) : -EINVAL;
	json_object_put(obj);
	if (r < 0)
		ceems_warning("%s: %s; the job's marks before the restart are lost",
			      path, err);
	return r;
}

void
ceems_agent_marks_forget(const char *state_dir, uint32_t jobid)
{
	char name[32], path[CEEMS_CONFIG_PATH_MAX + 32];

	if (state_dir[0] == '\0')
		return;
	marks_file_name(jobid, name, sizeof(name));
	snprintf(path, sizeof(path), "%s/%s", state_dir, name);
	if (unlink(path) < 0 && errno != ENOENT)
		ceems_warning("%s: %s", path, strerror(errno));
}
