/* agent_learn.c - what a later registration of a job teaches the agent
 * (agent.c's register of a job it already holds): what the first
 * registration could not say, kept for a restarted agent as the first
 * is.  What is known stays: the first word about a run is its own. */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "agent/agent_state.h"
#include "base/log.h"

/* A later registration of job J says what the first could not: Slurm's
 * start time and the cluster, which the plugin learns from slurmctld
 * after the job has started (plugins/job_start.c).  What is known
 * stays: the first word about a run of the job is its own. */
static void
learn_identity(struct ceems_agent *a, struct agent_job *j,
	       const struct ceems_agent_job_spec *spec)
{
	bool learned = false;

	if (j->spec.start_time == 0 && spec->start_time > 0) {
		j->spec.start_time = spec->start_time;
		learned = true;
	}
	if (j->spec.cluster[0] == '\0' && spec->cluster[0] != '\0') {
		memcpy(j->spec.cluster, spec->cluster, sizeof(j->spec.cluster));
		learned = true;
	}
	if (j->spec.ngpu_ids == 0 && spec->ngpu_ids > 0) {
		j->spec.ngpu_ids = spec->ngpu_ids;
		memcpy(j->spec.gpu_ids, spec->gpu_ids, sizeof(j->spec.gpu_ids));
		if (ceems_agent_gpu_resolve(a, &j->spec, &j->gpu) > 0)
			ceems_info("job %u: holds %u GPU%s", j->spec.jobid,
				   j->gpu.n, j->gpu.n == 1 ? "" : "s");
		learned = true;
	}
	if (!learned)
		return;
	if (a->state != NULL)
		ceems_agent_state_slot_identity(a->state, j->slot, &j->spec);
	ceems_info("job %u: Slurm's start time %lld and cluster '%s' learned",
		   j->spec.jobid, (long long)j->spec.start_time,
		   j->spec.cluster);
}

/* A later registration of job J may name hierarchies of its v1 cgroup
 * that the first could not: from Slurm 25.05 the extern step has no
 * task, and its slurmstepd, whose cgroups registered the job, is in no
 * cpuacct cgroup of the job, which Slurm makes with the job's first
 * task.  The job's CPU time is then read from there on, and its later
 * steps are read there too. */
static void
learn_cgroup(struct ceems_agent *a, struct agent_job *j,
	     const struct ceems_agent_job_spec *spec)
{
	struct ceems_cgroup_job more = j->spec.cgroup;
	struct ceems_cgroup_reader *reader;
	bool learned = false;
	int err = 0;

	if (j->have_cpu || j->gone || more.version != CEEMS_CGROUP_V1 ||
	    spec->cgroup.version != CEEMS_CGROUP_V1)
		return;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (more.v1[c][0] == '\0' && spec->cgroup.v1[c][0] != '\0') {
			memcpy(more.v1[c], spec->cgroup.v1[c], sizeof(more.v1[c]));
			learned = true;
		}
	if (!learned)
		return;
	reader = ceems_cgroup_stats_reader_open(&more, &a->mounts,
						a->cgroup_prefix, &err);
	if (reader == NULL)
		return;
	ceems_cgroup_stats_reader_close(j->reader);
	j->reader = reader;
	j->spec.cgroup = more;
	/* what a restarted agent checks its checkpoint's job against */
	if (ceems_cgroup_stats_reader_cpu_ino(reader, &j->cgroup_ino) < 0)
		j->cgroup_ino = 0;
	/* The CPU time from now on, as at a registration. */
	if (ceems_cgroup_stats_reader_read(reader, &j->usage) == 0 &&
	    (j->usage.present & CEEMS_CGF_CPU_USAGE)) {
		j->cpu_last_ns = j->cpu_base_ns = j->usage.cpu_usage_ns;
		j->have_cpu = true;
	}
	if (a->state != NULL)
		ceems_agent_state_slot_cgroup(a->state, j->slot, &j->spec);
	ceems_info("job %u: a later step named more of its cgroup", j->spec.jobid);
}

void
ceems_agent_learn(struct ceems_agent *a, struct agent_job *j,
		  const struct ceems_agent_job_spec *spec)
{
	learn_identity(a, j, spec);
	learn_cgroup(a, j, spec);
}
