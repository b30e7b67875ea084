/* agent_perf.c - the node agent's perf counters per job: the glue
 * between the engine (agent.c, agent_tick.c) and lib/sources/perf_job.c and
 * lib/sources/perf_cgroup.c.  A job's events open at its registration, are read
 * at each tick and at its end, and close when the agent forgets it.  A
 * job restored after an agent restart has its events opened again, and
 * what the earlier agent counted (its checkpoint) added to their counts;
 * the time between, which no agent counted, is in its report
 * (unmeasured_s), never a silent undercount. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "base/fileio.h"
#include "base/log.h"
#include "sources/perf_cgroup.h"
#include "sources/perf_job.h"

struct agent_perf_job {
	struct ceems_perf_job *pj;
	struct ceems_perf_budget *budget;	/* the agent's */
	int cgroup_fd;			/* kept for hardware events asked later */
	char adopted[CEEMS_CGROUP_PATH_MAX * 3];	/* "": not the agent's */
	/* What an earlier agent counted (restored jobs), and the seconds
	 * between that no agent counted. */
	bool have_before;
	struct ceems_perf_report before;
	double down_s;
};

void
ceems_agent_perf_open_node(struct ceems_agent *a)
{
	char path[CEEMS_CONFIG_PATH_MAX + 32];
	char root[CEEMS_CGROUP_PATH_MAX * 2 + 16];
	char *text;
	int ret;

	a->perf_v1_mount[0] = '\0';
	if (!a->config.perf)
		return;
	ceems_perf_job_budget_init(&a->perf_budget, a->config.perf_max_fds);
	text = malloc(1 << 20);
	if (text == NULL)
		return;
	snprintf(path, sizeof(path), "%s/self/mountinfo", a->config.procfs_root);
	if (ceems_fileio_read_text_file(path, text, 1 << 20) < 0 ||
	    ceems_perf_cgroup_mount_from_mountinfo(text, a->perf_v1_mount,
					    sizeof(a->perf_v1_mount)) < 0)
		a->perf_v1_mount[0] = '\0';
	free(text);
	/* The adoption directory exists before the agent confines itself
	 * (tools/agent/agent_confine.c allows writing beneath it only). */
	if (!a->config.perf_adopt || a->mounts.v1[CEEMS_CG_CPUACCT][0] == '\0' ||
	    ceems_perf_cgroup_root(&a->mounts, a->perf_v1_mount, a->cgroup_prefix,
			    root, sizeof(root) - 16) < 0)
		return;
	strcat(root, "/" CEEMS_PERF_ADOPT_DIR);
	if ((ret = ceems_fileio_mkdir_p(root, 0755)) < 0)
		ceems_warning("perf: cannot create %s (%s): jobs of cgroup v1 get no perf counters",
			      root, strerror(-ret));
	else if ((ret = ceems_perf_cgroup_sweep(root)) > 0)
		ceems_info("perf: %d empty job cgroups of an earlier agent removed from %s",
			   ret, root);
}

static bool
want_hardware(const struct ceems_agent *a, const struct agent_job *j)
{
	return a->config.perf_hardware || j->spec.perf;
}

void
ceems_agent_perf_open_job(struct ceems_agent *a, struct agent_job *j)
{
	struct agent_perf_job *p;
	int fd;

	if (!a->config.perf)
		return;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return;
	p->budget = &a->perf_budget;
	p->cgroup_fd = -1;
	fd = ceems_perf_cgroup_open(&j->spec.cgroup, j->spec.jobid, &a->mounts,
				    a->perf_v1_mount, a->cgroup_prefix,
				    a->config.perf_adopt, p->adopted,
				    sizeof(p->adopted));
	if (fd < 0) {
		unsigned why = fd == -ENOENT ? CEEMS_PERF_NO_CGROUP :
			       fd == -EACCES || fd == -EPERM ?
			       CEEMS_PERF_NO_PERMISSION : CEEMS_PERF_FAILED;

		if (why == CEEMS_PERF_FAILED)
			ceems_warning("job %u: perf: its perf_event cgroup: %s",
				      j->spec.jobid, strerror(-fd));
		p->pj = ceems_perf_job_unmeasured(why, want_hardware(a, j) ?
						  why : CEEMS_PERF_OFF);
	} else {
		p->cgroup_fd = fd;
		p->pj = ceems_perf_job_open(fd, &j->usage.cpuset, true,
					    want_hardware(a, j), p->budget);
	}
	j->perf = p;
	if (p->pj != NULL) {
		struct ceems_perf_report r;

		ceems_perf_job_report(p->pj, &r);
		ceems_debug("job %u: perf software %s, hardware %s, %zu descriptors",
			    j->spec.jobid, ceems_measure_perf_status_name(r.sw_status),
			    ceems_measure_perf_status_name(r.hw_status),
			    ceems_perf_job_nfds(p->pj));
	}
}

/* A later registration asks for hardware events (--ceems-perf seen by
 * a step after the one that registered the job, the extern step): they
 * open now, before that step's tasks run the user's program. */
void
ceems_agent_perf_hardware(struct ceems_agent *a, struct agent_job *j)
{
	struct agent_perf_job *p = j->perf;

	(void)a;
	if (p == NULL || p->pj == NULL || p->cgroup_fd < 0)
		return;
	ceems_perf_job_open_hardware(p->pj, p->cgroup_fd, &j->usage.cpuset,
				     p->budget);
}

void
ceems_agent_perf_step(struct ceems_agent *a, struct agent_job *j)
{
	struct agent_perf_job *p = j->perf;

	int n;

	if (p == NULL || p->adopted[0] == '\0')
		return;
	n = ceems_perf_cgroup_adopt(p->adopted, &j->spec.cgroup, &a->mounts,
				    a->cgroup_prefix);
	if (n < 0)
		ceems_warning("job %u: perf: cannot move its processes into %s (%s): what they do is not counted",
			      j->spec.jobid, p->adopted, strerror(-n));
	else
		ceems_debug("job %u: perf: %d processes moved into %s",
			    j->spec.jobid, n, p->adopted);
}

void
ceems_agent_perf_read(struct agent_job *j)
{
	if (j->perf != NULL)
		ceems_perf_job_read(j->perf->pj);
}

void
ceems_agent_perf_resume(struct ceems_agent *a, struct agent_job *j,
		  const struct ceems_perf_report *saved, double down_s)
{
	struct agent_perf_job *p;

	if (j->gone) {
		/* Ended while the agent was down: nothing to open, what the
		 * earlier agent counted is all there is. */
		if (!a->config.perf || (p = calloc(1, sizeof(*p))) == NULL)
			return;
		p->cgroup_fd = -1;
		p->pj = ceems_perf_job_unmeasured(saved->sw_status,
						  saved->hw_status);
		j->perf = p;
	} else {
		ceems_agent_perf_open_job(a, j);
		if ((p = j->perf) == NULL)
			return;
	}
	p->have_before = true;
	p->before = *saved;
	p->down_s = down_s;
}

void
ceems_agent_perf_report(const struct ceems_agent *a, const struct agent_job *j,
		  struct ceems_perf_report *out)
{
	if (j->perf != NULL) {
		struct ceems_perf_report now;

		ceems_perf_job_report(j->perf->pj, &now);
		if (!j->perf->have_before)
			*out = now;
		else
			ceems_perf_job_report_resume(&j->perf->before, &now,
						 j->perf->down_s, out);
		return;
	}
	ceems_perf_job_report(NULL, out);
	if (a->config.perf) {
		out->sw_status = CEEMS_PERF_RESTARTED;
		out->hw_status = want_hardware(a, j) ? CEEMS_PERF_RESTARTED :
			CEEMS_PERF_OFF;
	}
}

void
ceems_agent_perf_close(struct agent_job *j)
{
	struct agent_perf_job *p = j->perf;

	if (p == NULL)
		return;
	ceems_perf_job_close(p->pj, p->budget);
	if (p->cgroup_fd >= 0)
		(void)close(p->cgroup_fd);
	ceems_perf_cgroup_remove(p->adopted);
	free(p);
	j->perf = NULL;
}
