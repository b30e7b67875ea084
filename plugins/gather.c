/* gather.c - the summary of a job that ran on several nodes, over the
 * whole job: the batch step, at its end, asks the other nodes' agents for
 * their part (lib/client/gather_client.h), merges them with this node's
 * (ceems_measure_merge_report) and writes the whole job's summary
 * (ceems_summary_format_nodes).  Only Slurm's side is here: the job's
 * node list and this node's place in it.
 *
 * The gather runs in a child of slurmstepd (child_call.h), killed at
 * gather_timeout and a little more: the name service and munged are
 * asked in it, and neither can be bounded from inside (libmunge retries
 * a socket that does not answer for seconds).  The child hands back the
 * summary's text; the step's end never waits longer, whatever hangs. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "base/log.h"
#include "client/gather_client.h"
#include "plugin.h"
#include "slurm_compat.h"
#include "summary/summary.h"

/* The job's node list as Slurm wrote it in the step's environment; a
 * hostlist expression of a large job outgrows the metadata's copy. */
#define NODELIST_MAX (64 * 1024)
/* Beyond gather_timeout: the answers' credentials checked, the text
 * written and handed back. */
#define FINISH_MS 300

struct gather_call {
	spank_t sp;
	const struct ceems_config *config;
	const struct ceems_job_meta *meta;
	const struct ceems_agent_job_report *own;
	const char *self;
	enum ceems_summary_style style;
};

struct gather_answer {
	int len;		/* of TEXT; -1: no whole-job summary */
	char text[CEEMS_SUMMARY_SIZE];
};

/* The job's nodes, expanded, into NODES (N of them): 0, or -1. */
static int
job_nodes(spank_t sp, struct ceems_gather_node **nodes, size_t *n)
{
	char *list = malloc(NODELIST_MAX);
	ceems_hostlist_t hl;
	char *host;
	size_t count;

	*nodes = NULL;
	*n = 0;
	/* Not the metadata's copy: cut at its size, it would name other
	 * nodes than the job's. */
	if (list == NULL || spank_getenv(sp, "SLURM_JOB_NODELIST", list,
					 NODELIST_MAX) != ESPANK_SUCCESS) {
		free(list);
		return -1;
	}
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

/* This node's place in NODES, by its name: N when it is not there. */
static size_t
find_self(const struct ceems_gather_node *nodes, size_t n, const char *self)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(nodes[i].node, self) == 0)
			break;
	return i;
}

/* Ask the nodes other than SELF; then NODES[SELF] is OWN. */
static int
ask_others(const struct gather_call *g, struct ceems_gather_node *nodes,
	   size_t n, size_t self)
{
	struct ceems_gather_node *others = calloc(n - 1, sizeof(*others));
	int answered;

	if (others == NULL)
		return -1;
	for (size_t i = 0, k = 0; i < n; i++)
		if (i != self)
			memcpy(others[k++].node, nodes[i].node,
			       sizeof(nodes[i].node));
	answered = ceems_gather_client_ask(g->config, g->meta->jobid, others,
					   n - 1,
					   (int)(g->config->gather_timeout_ns / 1000000u),
					   FINISH_MS / 2);
	for (size_t i = 0, k = 0; i < n; i++)
		if (i != self)
			nodes[i] = others[k++];
	free(others);
	nodes[self].report = *g->own;
	nodes[self].status = 0;
	return answered;
}

/* The whole job's summary of NODES into A. */
static void
summarize(const struct gather_call *g, struct ceems_gather_node *nodes,
	  size_t n, struct gather_answer *a)
{
	struct ceems_summary_node *parts = calloc(n, sizeof(*parts));
	struct ceems_agent_job_report *whole = calloc(1, sizeof(*whole));
	size_t merged = 0;

	if (parts == NULL || whole == NULL)
		goto out;
	for (size_t i = 0; i < n; i++) {
		parts[i].name = nodes[i].node;
		if (nodes[i].status != 0) {
			parts[i].why = nodes[i].why;
			ceems_info("job %u: no figures from node %s for the "
				   "summary: %s", g->meta->jobid, nodes[i].node,
				   nodes[i].why);
			continue;
		}
		parts[i].report = &nodes[i].report;
		ceems_measure_merge_report(whole, &nodes[i].report, merged++ == 0);
	}
	a->len = ceems_summary_format_nodes(g->meta, whole, parts, n, g->style,
					    a->text, sizeof(a->text));
out:
	free(whole);
	free(parts);
}

/* In the child: the whole job's summary, handed back on FD. */
static void
gather_main(void *arg, void *answer, size_t size, int fd)
{
	const struct gather_call *g = arg;
	struct gather_answer *a = answer;
	struct ceems_gather_node *nodes = NULL;
	size_t n = 0, self;

	a->len = -1;
	if (job_nodes(g->sp, &nodes, &n) == 0 && n >= 2 &&
	    (self = find_self(nodes, n, g->self)) < n &&
	    ask_others(g, nodes, n, self) >= 0)
		summarize(g, nodes, n, a);
	else if (n >= 2)
		ceems_info("job %u: this node (%s) is not in the job's node "
			   "list: the summary is this node's", g->meta->jobid,
			   g->self);
	free(nodes);
	ceems_child_call_answer(fd, a, size);
}

/* The whole job's summary into TEXT, with OWN this node's report and
 * SELF this node's Slurm name: its length, or -1 when there is none to
 * make (one node, the gather off, this node not in the list, the gather
 * not done in time): the caller then prints this node's.  A node list of
 * one node ("n1") is told apart without expanding it. */
int
ceems_gather_summary(spank_t sp, const struct ceems_config *config,
		     const struct ceems_job_meta *meta, const char *self,
		     const struct ceems_agent_job_report *own,
		     enum ceems_summary_style style, char *text, size_t size)
{
	static struct gather_answer answer;
	struct gather_call g = { sp, config, meta, own, self, style };
	struct ceems_child_call child;
	int wait_ms, r;

	/* The node list, not nnodes: the step's own metadata (slurmctld
	 * is not asked) has no node count. */
	if (config->gather_port == 0 || self == NULL || self[0] == '\0' ||
	    strpbrk(meta->nodes, ",[") == NULL)
		return -1;
	wait_ms = (int)(config->gather_timeout_ns / 1000000u) + FINISH_MS;
	r = ceems_child_call_start(&child, gather_main, &g, sizeof(answer));
	if (r == 0)
		r = ceems_child_call_finish(&child, &answer, sizeof(answer),
					    wait_ms);
	if (r < 0) {
		ceems_warning("job %u: the other nodes' figures were not "
			      "gathered within %d ms (%s): the summary is this "
			      "node's; is munged running?", meta->jobid,
			      wait_ms, strerror(-r));
		return -1;
	}
	if (answer.len < 0 || (size_t)answer.len >= size ||
	    memchr(answer.text, '\0', sizeof(answer.text)) == NULL)
		return -1;
	memcpy(text, answer.text, (size_t)answer.len + 1);
	return answer.len;
}
