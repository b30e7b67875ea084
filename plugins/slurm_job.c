/* slurm_job.c - fill a job's metadata (lib/model/job.h) from Slurm: the job's
 * record in slurmctld (slurm_ctld.c, in the epilog), the SPANK items, and
 * the step's environment where slurmctld cannot be reached (for the name
 * and nodes only: never for what jobs are accounted by). */
#include "config.h"

#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "model/job.h"
#include "base/log.h"
#include "plugin.h"
#include "base/text.h"
#include "slurm_compat.h"
#include "slurm_ctld.h"

/* The step's environment, for what slurmctld could not tell and what no
 * one is accounted by (the job's name, its nodes, this node's name). */
static void
from_environment(spank_t sp, struct ceems_job_meta *meta)
{
	static const struct {
		const char *name;
		size_t offset, size;
	} vars[] = {
#define VAR(n, f) { n, offsetof(struct ceems_job_meta, f), sizeof(((struct ceems_job_meta *)0)->f) }
		/* Not the cluster, account, partition or QOS: the job's
		 * user sets its environment, and accounting goes by them. */
		VAR("SLURM_JOB_NAME", name),
		VAR("SLURM_JOB_NODELIST", nodes),
		VAR("SLURMD_NODENAME", node),
#undef VAR
	};
	char value[512];

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char *field = (char *)meta + vars[i].offset;

		if (field[0] != '\0')
			continue;
		if (spank_getenv(sp, vars[i].name, value, sizeof(value)) ==
		    ESPANK_SUCCESS)
			ceems_slurm_ctld_copy(field, vars[i].size, value);
		else if (spank_context() == S_CTX_JOB_SCRIPT)
			/* The epilog's environment is its own: slurmd's. */
			ceems_slurm_ctld_copy(field, vars[i].size, getenv(vars[i].name));
	}
	/* Slurm 22.05 gives the epilog the job's nodes as SLURM_NODELIST
	 * only (later ones SLURM_JOB_NODELIST too). */
	if (meta->nodes[0] == '\0' && spank_context() == S_CTX_JOB_SCRIPT)
		ceems_slurm_ctld_copy(meta->nodes, sizeof(meta->nodes), getenv("SLURM_NODELIST"));
}

/* This node's Slurm name: the job's node list at this node's index.
 * The extern step's environment does not carry SLURMD_NODENAME, and
 * the host name may not be the node name (NodeName=... NodeHostname=). */
static void
node_from_nodelist(spank_t sp, struct ceems_job_meta *meta)
{
	ceems_hostlist_t hl;
	uint32_t nodeid;
	char *host;

	if (meta->node[0] != '\0' || meta->nodes[0] == '\0' ||
	    spank_get_item(sp, S_JOB_NODEID, &nodeid) != ESPANK_SUCCESS)
		return;
	hl = slurm_hostlist_create(meta->nodes);
	if (hl == NULL)
		return;
	for (uint32_t i = 0; (host = slurm_hostlist_shift(hl)) != NULL; i++) {
		if (i == nodeid)
			ceems_slurm_ctld_copy(meta->node, sizeof(meta->node), host);
		free(host);
		if (i >= nodeid)
			break;
	}
	slurm_hostlist_destroy(hl);
}

void
ceems_slurm_job_node(spank_t sp, struct ceems_job_meta *meta)
{
	char host[256];

	node_from_nodelist(sp, meta);
	if (meta->node[0] == '\0' && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		ceems_slurm_ctld_copy(meta->node, sizeof(meta->node), host);
	}
}

void
ceems_slurm_job_meta(spank_t sp, uint32_t jobid, bool ask_controller,
		      const char *configured_cluster,
		      struct ceems_job_meta *meta)
{
	uint32_t uid = CEEMS_UNKNOWN_U32;
	struct passwd pw, *found = NULL;
	char pwbuf[1024];

	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	if (spank_get_item(sp, S_JOB_UID, &uid) == ESPANK_SUCCESS)
		meta->uid = uid;
	if (ask_controller) {
		(void)ceems_slurm_ctld_fill(jobid, configured_cluster, meta,
					    0, NULL, NULL);
	} else if (configured_cluster != NULL) {
		/* No RPC at all: the lookup child asks (job_start.c). */
		ceems_slurm_ctld_copy(meta->cluster, sizeof(meta->cluster),
			    configured_cluster);
	}
	from_environment(sp, meta);
	ceems_slurm_job_node(sp, meta);
	if (uid != CEEMS_UNKNOWN_U32 &&
	    getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &found) == 0 &&
	    found != NULL)
		ceems_slurm_ctld_copy(meta->user, sizeof(meta->user), pw.pw_name);
	if (meta->end_time == 0)
		meta->end_time = (int64_t)time(NULL);
}

void
ceems_slurm_job_outcome(struct ceems_job_meta *meta, int status,
			 bool have_status, uint64_t oom_kills)
{
	if (have_status)
		ceems_slurm_ctld_outcome(meta, status);
	/* slurmctld's decision stands; else what the tasks did says it. */
	if (meta->state[0] != '\0' && strcmp(meta->state, "COMPLETED") != 0 &&
	    strcmp(meta->state, "FAILED") != 0)
		return;
	if (oom_kills > 0)
		snprintf(meta->state, sizeof(meta->state), "OUT_OF_MEMORY");
	else if (have_status)
		snprintf(meta->state, sizeof(meta->state), "%s",
			 WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
			 "COMPLETED" : "FAILED");
}
