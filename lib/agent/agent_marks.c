/* agent_marks.c - the engine's side of a job's marks (model/marks.h):
 * who may mark a job, the job's rate, and where its counters live (with
 * the job while it runs, with its final figures while it finishes).
 * The socket side (tools/agent/agent_mark.c) reads the caller's cgroup
 * and answers; nothing here reads a file. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/agent_finish.h"
#include "agent/agent_internal.h"
#include "cgroup/cgroup_path.h"

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

int
ceems_agent_marks_apply(struct ceems_agent *a, uint32_t jobid,
			const char *name, const char *unit,
			enum ceems_marks_mode mode, double value,
			uint64_t now_ns, char *err, size_t err_size)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);

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
	return ceems_marks_apply(j->marks, name, unit, mode, value, err, err_size);
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
