/* agent_recover.c - the node agent's side of recovering the interval a
 * restart left unaccounted (agent_recover.h): the node snapshot each
 * tick leaves for the checkpoint, and, at restore, the judgement of the
 * node's counters and each job's, and the setting of the baselines so
 * that the first tick after the restart spans the whole interval and
 * the ledger splits it as any other tick. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "agent/agent_internal.h"
#include "agent/agent_recover.h"
#include "base/tick_path.h"

const char *
ceems_agent_recover_verdict_name(enum ceems_recover_verdict v)
{
	switch (v) {
	case CEEMS_RECOVER_OK:
		return "recovered";
	case CEEMS_RECOVER_NO_CHECKPOINT:
		return "no checkpoint of the counters";
	case CEEMS_RECOVER_OTHER_BOOT:
		return "another boot";
	case CEEMS_RECOVER_RESET:
		return "a counter was reset";
	case CEEMS_RECOVER_TOO_LONG:
		return "longer than a counter's wrap period";
	case CEEMS_RECOVER_NOT_CUMULATIVE:
		return "a source without cumulative counters";
	case CEEMS_RECOVER_CGROUP_REPLACED:
		return "the job's cgroup was replaced or is gone";
	case CEEMS_RECOVER_OTHER_RUN:
		return "an energy device was made again or its controller restarted";
	case CEEMS_RECOVER_UNIDENTIFIED:
		return "which run of an energy counter was read is unknown";
	case CEEMS_RECOVER_JOB_LEFT:
		return "a job left after the checkpoint, its share already in its record";
	}
	return "unknown";
}

enum ceems_recover_verdict
ceems_agent_recover_boot(const char *saved, const char *now)
{
	if (saved[0] == '\0' || strcmp(now, "unknown") == 0 ||
	    strcmp(saved, now) != 0)
		return CEEMS_RECOVER_OTHER_BOOT;
	return CEEMS_RECOVER_OK;
}

enum ceems_recover_verdict
ceems_agent_recover_counter(const struct state_counter *saved,
		      const struct ceems_energy_counter_limits *lim,
		      uint64_t raw_now, uint64_t now_ns, double *joules)
{
	if (!saved->have)
		return CEEMS_RECOVER_NO_CHECKPOINT;
	if (saved->range != lim->range || now_ns < saved->read_ns)
		return CEEMS_RECOVER_RESET;
	/* The same judgement as between two samples: one wrap at most in
	 * a wrap period, and no more energy than the maximum power. */
	switch (ceems_energy_counter_delta(lim, saved->raw, raw_now,
					   now_ns - saved->read_ns, joules)) {
	case CEEMS_GAP_NONE:
		return CEEMS_RECOVER_OK;
	case CEEMS_GAP_STALL:
		return CEEMS_RECOVER_TOO_LONG;
	default:
		return CEEMS_RECOVER_RESET;
	}
}

enum ceems_recover_verdict
ceems_agent_recover_identity(const struct state_counter *saved,
		       const struct ceems_energy_reader *r)
{
	if (!r->needs_identity)
		return CEEMS_RECOVER_OK;
	if (saved->identity == 0 || r->identity == 0)
		return CEEMS_RECOVER_UNIDENTIFIED;
	if (saved->identity != r->identity)
		return CEEMS_RECOVER_OTHER_RUN;
	return CEEMS_RECOVER_OK;
}

enum ceems_recover_verdict
ceems_agent_recover_job_verdict(const struct ceems_recover_job *job)
{
	if (job->figures_tick_ns != job->node_tick_ns || !job->have_cpu_then)
		return CEEMS_RECOVER_NO_CHECKPOINT;
	if (job->gone || job->cgroup_ino_then == 0 ||
	    job->cgroup_ino_now != job->cgroup_ino_then)
		return CEEMS_RECOVER_CGROUP_REPLACED;
	if (!job->have_cpu_now)
		return CEEMS_RECOVER_NO_CHECKPOINT;
	if (job->cpu_now_ns < job->cpu_then_ns)
		return CEEMS_RECOVER_RESET;
	return CEEMS_RECOVER_OK;
}

CEEMS_TICK_PATH void
ceems_agent_recover_snapshot_node(struct ceems_agent *a, uint64_t now_ns)
{
	struct state_node *n = &a->snap;

	n->tick_ns = now_ns;
	n->have_busy = a->have_node_cpu;
	n->busy_ns = a->node_cpu.busy_ns;
	n->ncounters = 0;
	for (size_t s = 0; s < a->nsources; s++) {
		struct ceems_energy_source *src = a->sources[s];

		for (size_t i = 0; i < src->ncounters; i++) {
			struct ceems_energy_reader *r =
				ceems_energy_source_reader(src, i);
			const char *name = src->counters[i].name;
			struct state_counter *c;

			/* A name too long to keep is not found at restore:
			 * the interval is then a gap. */
			if (r == NULL || n->ncounters >= STATE_MAX_COUNTERS ||
			    strlen(name) >= sizeof(c->name))
				continue;
			c = &n->counters[n->ncounters++];
			memset(c->name, 0, sizeof(c->name));
			memcpy(c->name, name, strlen(name));
			c->domain = (uint32_t)src->counters[i].domain;
			c->have = r->have_prev;
			c->raw = r->prev;
			c->range = r->lim.range;
			c->read_ns = r->last_ns;
			c->identity = r->identity;
		}
	}
}

/* A job left between two ticks and was charged for its part of the
 * interval since the snapshot (leave_now): that part is kept in the
 * ledger carry only, so a restart would split the whole interval again
 * over the jobs left, the system and idle, counting it twice.  The
 * snapshot is marked, at once and before the job's record is kept, so
 * that the interval stays a gap; the next tick makes a new one. */
void
ceems_agent_recover_snapshot_job_left(struct ceems_agent *a)
{
	if (a->snap.tick_ns == 0 || a->snap.have_busy == STATE_NODE_JOB_LEFT)
		return;
	a->snap.have_busy = STATE_NODE_JOB_LEFT;
	ceems_agent_recover_save_node(a);
	a->checkpoint_wanted = true;
}

void
ceems_agent_recover_save_node(struct ceems_agent *a)
{
	if (a->state != NULL && a->snap.tick_ns != 0)
		ceems_agent_state_file_set_node(a->state, &a->snap);
}

/* Whether source S counts for a domain (a source measuring a domain
 * another source already counts is not used). */
static bool
source_used(const struct ceems_agent *a, size_t s)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (a->domain_source[d] == (int)s)
			return true;
	return false;
}

static const struct state_counter *
find_saved(const struct state_node *snap, const struct ceems_energy_counter *c)
{
	for (uint32_t i = 0; i < snap->ncounters; i++)
		if (snap->counters[i].domain == (uint32_t)c->domain &&
		    strcmp(snap->counters[i].name, c->name) == 0)
			return &snap->counters[i];
	return NULL;
}

/* Judge every counter the ledger uses; JOULES[s][i] the energy since
 * the snapshot of counter I of source S. */
static enum ceems_recover_verdict
judge_counters(struct ceems_agent *a, const struct state_node *snap,
	       double joules[MAX_SOURCES][STATE_MAX_COUNTERS])
{
	for (size_t s = 0; s < a->nsources; s++) {
		struct ceems_energy_source *src = a->sources[s];

		if (!source_used(a, s))
			continue;
		if (src->ncounters > STATE_MAX_COUNTERS)
			return CEEMS_RECOVER_NO_CHECKPOINT;
		for (size_t i = 0; i < src->ncounters; i++) {
			struct ceems_energy_reader *r =
				ceems_energy_source_reader(src, i);
			const struct state_counter *saved;
			enum ceems_recover_verdict v;

			if (r == NULL)
				return CEEMS_RECOVER_NOT_CUMULATIVE;
			saved = find_saved(snap, &src->counters[i]);
			if (saved == NULL || !r->have_prev)
				return CEEMS_RECOVER_NO_CHECKPOINT;
			v = ceems_agent_recover_identity(saved, r);
			if (v != CEEMS_RECOVER_OK)
				return v;
			v = ceems_agent_recover_counter(saved, &r->lim, r->prev,
						  r->last_ns, &joules[s][i]);
			if (v != CEEMS_RECOVER_OK)
				return v;
		}
	}
	return CEEMS_RECOVER_OK;
}

enum ceems_recover_verdict
ceems_agent_recover_node(struct ceems_agent *a, const struct state_node *snap,
		   const char *saved_boot, uint64_t now_ns)
{
	double joules[MAX_SOURCES][STATE_MAX_COUNTERS];
	enum ceems_recover_verdict v;

	if (snap->tick_ns != 0 && snap->have_busy == STATE_NODE_JOB_LEFT)
		return CEEMS_RECOVER_JOB_LEFT;
	if (snap->tick_ns == 0 || snap->tick_ns > now_ns || !snap->have_busy ||
	    !a->have_node_cpu)
		return CEEMS_RECOVER_NO_CHECKPOINT;
	v = ceems_agent_recover_boot(saved_boot, a->boot_id);
	if (v != CEEMS_RECOVER_OK)
		return v;
	if (a->node_cpu.busy_ns < snap->busy_ns)
		return CEEMS_RECOVER_RESET;
	memset(joules, 0, sizeof(joules));
	v = judge_counters(a, snap, joules);
	if (v != CEEMS_RECOVER_OK)
		return v;
	/* The first tick now spans the interval: the energy since the
	 * snapshot waits in each counter as a sample's would, the node's
	 * busy time counts from the snapshot's. */
	for (size_t s = 0; s < a->nsources; s++)
		if (source_used(a, s))
			for (size_t i = 0; i < a->sources[s]->ncounters; i++)
				ceems_energy_counter_add(&a->sources[s]->counters[i],
							 joules[s][i]);
	a->node_cpu.busy_ns = snap->busy_ns;
	a->last_tick_ns = snap->tick_ns;
	return CEEMS_RECOVER_OK;
}
