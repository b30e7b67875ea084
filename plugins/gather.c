/* gather.c - the summary of a job that ran on several nodes, over the
 * whole job: the batch step, at its end, asks the other nodes' agents for
 * their part (lib/client/gather_client.h, bounded by gather_timeout),
 * merges them with this node's (ceems_measure_merge_report) and writes
 * the whole job's summary (ceems_summary_format_nodes).  Only Slurm's
 * side is here: the job's node list and this node's place in it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "base/log.h"
#include "client/gather_client.h"
#include "plugin.h"
#include "summary/summary.h"

/* The job's node list as Slurm wrote it in the step's environment; a
 * hostlist expression of a large job outgrows the metadata's copy. */
#define NODELIST_MAX (64 * 1024)

/* The job's nodes, expanded, into NODES (N of them): 0, or -1. */
static int
job_nodes(spank_t sp, const struct ceems_job_meta *meta,
	  struct ceems_gather_node **nodes, size_t *n)
{
	char *list = malloc(NODELIST_MAX);
	hostlist_t hl;
	char *host;
	size_t count = 0;

	*nodes = NULL;
	*n = 0;
	if (list == NULL)
		return -1;
	if (spank_getenv(sp, "SLURM_JOB_NODELIST", list, NODELIST_MAX) !=
	    ESPANK_SUCCESS)
		snprintf(list, NODELIST_MAX, "%s", meta->nodes);
	hl = slurm_hostlist_create(list);
	free(list);
	if (hl == NULL)
		return -1;
	count = (size_t)slurm_hostlist_count(hl);
	if (count == 0 || (*nodes = calloc(count, sizeof(**nodes))) == NULL) {
		slurm_hostlist_destroy(hl);
		return -1;
	}
	while (*n < count && (host = slurm_hostlist_shift(hl)) != NULL) {
		snprintf((*nodes)[*n].node, sizeof((*nodes)[*n].node), "%s", host);
		free(host);
		(*n)++;
	}
	slurm_hostlist_destroy(hl);
	return *n > 0 ? 0 : -1;
}

/* The whole job's summary into TEXT, with OWN this node's report: its
 * length, or -1 when there is none to make (one node, the gather off,
 * no node list): the caller then prints this node's.  A node list of
 * one node ("n1") is told apart without expanding it. */
int
ceems_gather_summary(spank_t sp, const struct ceems_config *config,
		     const struct ceems_job_meta *meta,
		     const struct ceems_agent_job_report *own,
		     enum ceems_summary_style style, char *text, size_t size)
{
	struct ceems_gather_node *nodes = NULL;
	struct ceems_summary_node *parts = NULL;
	struct ceems_agent_job_report *whole = NULL;
	size_t n = 0, merged = 0;
	uint32_t self;
	int answered, r = -1;

	/* The node list, not nnodes: the step's own metadata (slurmctld
	 * is not asked) has no node count. */
	if (config->gather_port == 0 || strpbrk(meta->nodes, ",[") == NULL ||
	    spank_get_item(sp, S_JOB_NODEID, &self) != ESPANK_SUCCESS ||
	    job_nodes(sp, meta, &nodes, &n) < 0 || n < 2 || self >= n)
		goto out;
	/* This node answers for itself; the others are asked, all at
	 * once.  Its own slot is asked for nothing: it times out at once
	 * below and is replaced by OWN. */
	nodes[self].report = *own;
	nodes[self].status = 0;
	{
		struct ceems_gather_node *others = calloc(n - 1, sizeof(*others));

		if (others == NULL)
			goto out;
		for (size_t i = 0, k = 0; i < n; i++)
			if (i != self)
				memcpy(others[k++].node, nodes[i].node,
				       sizeof(nodes[i].node));
		answered = ceems_gather_client_ask(config, meta->jobid, others, n - 1,
					(int)(config->gather_timeout_ns / 1000000u));
		for (size_t i = 0, k = 0; i < n; i++)
			if (i != self)
				nodes[i] = others[k++];
		free(others);
	}
	if (answered < 0)
		goto out;
	parts = calloc(n, sizeof(*parts));
	whole = calloc(1, sizeof(*whole));
	if (parts == NULL || whole == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		parts[i].name = nodes[i].node;
		if (nodes[i].status != 0) {
			parts[i].why = nodes[i].why;
			ceems_info("job %u: no figures from node %s for the "
				   "summary: %s", meta->jobid, nodes[i].node,
				   nodes[i].why);
			continue;
		}
		parts[i].report = &nodes[i].report;
		ceems_measure_merge_report(whole, &nodes[i].report, merged++ == 0);
	}
	r = ceems_summary_format_nodes(meta, whole, parts, n, style, text,
				       size);
out:
	free(whole);
	free(parts);
	free(nodes);
	return r < 0 ? -1 : r;
}
