/* ledger_carry.c - what jobs that left between two ticks took, so that
 * the next split is of the rest.  See ledger_carry.h. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "model/ledger_carry.h"
#include "base/tick_path.h"

static double
nonneg(double x)
{
	return isfinite(x) && x > 0 ? x : 0;
}

static double
less(double x, double y)
{
	return x > y ? x - y : 0;
}

CEEMS_TICK_PATH void
ceems_ledger_carry_clear(struct ceems_ledger_carry *c)
{
	memset(c, 0, sizeof(*c));
}

/* A reading less what the leavers took of it: a gap stays a gap (and
 * then the leavers' part was all that could be split). */
static void
reading_less(struct ceems_ledger_reading *r, double taken)
{
	if (r->measured && r->gap == CEEMS_GAP_NONE)
		r->joules = less(r->joules, taken);
}

CEEMS_TICK_PATH void
ceems_ledger_carry_apply(const struct ceems_ledger_carry *c,
			 struct ceems_ledger_node_tick *node)
{
	double dt = node->dt_s, all_j = 0;

	if (!isfinite(dt) || dt <= 0)
		return;
	node->left_cores += c->core_s / dt;
	node->left_mem_bytes += c->mem_byte_s / dt;
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++) {
		node->left_gpu[g] += c->gpu_s[g] / dt;
		reading_less(&node->gpu[g], c->gpu_device_j[g]);
	}
	node->node_busy_cpu_s = less(node->node_busy_cpu_s, c->cpu_s);
	node->node_mem_used_bytes = (uint64_t)less((double)node->node_mem_used_bytes,
						   c->rss_byte_s / dt);
	/* The static power left for the others: the leavers' static part
	 * came out of it. */
	node->idle_power_w[CEEMS_DOMAIN_PACKAGE] =
		less(node->idle_power_w[CEEMS_DOMAIN_PACKAGE],
		     c->static_j[CEEMS_DOMAIN_PACKAGE] / dt);
	node->idle_power_w[CEEMS_DOMAIN_DRAM] =
		less(node->idle_power_w[CEEMS_DOMAIN_DRAM],
		     c->static_j[CEEMS_DOMAIN_DRAM] / dt);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		node->left_unlearned_held_s[d] += c->unlearned_held_s[d];
		node->left_unlearned_used_s[d] += c->unlearned_used_s[d];
	}
	reading_less(&node->package, c->joules[CEEMS_DOMAIN_PACKAGE]);
	reading_less(&node->dram, c->joules[CEEMS_DOMAIN_DRAM]);
	/* The node source holds every domain: the residual the others
	 * split is then the old residual less the leavers' part of it. */
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		all_j += c->joules[d];
	reading_less(&node->node, all_j);
}

void
ceems_ledger_carry_add(struct ceems_ledger_carry *c,
		       const struct ceems_ledger_job_tick *job, double dt_s,
		       const struct ceems_ledger_job_share *share)
{
	double there;

	if (!isfinite(dt_s) || dt_s <= 0)
		return;
	there = less(dt_s, nonneg(job->absent_s));
	c->core_s += (double)job->alloc_cores * there;
	c->mem_byte_s += (double)job->alloc_mem_bytes * there;
	c->rss_byte_s += (double)job->rss_bytes * there;
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++) {
		double f = nonneg(job->gpu_share[g]);

		c->gpu_s[g] += (f > 1 ? 1 : f) * there;
		c->gpu_device_j[g] += share->gpu_device_j[g];
	}
	c->cpu_s += nonneg(job->cpu_s);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		c->joules[d] += share->joules[d];
		c->static_j[d] += share->static_j[d];
		c->unlearned_held_s[d] += nonneg(share->unlearned_held_s[d]);
		c->unlearned_used_s[d] += nonneg(share->unlearned_used_s[d]);
	}
}

CEEMS_TICK_PATH void
ceems_ledger_carry_restore(const struct ceems_ledger_carry *c,
			   struct ceems_ledger_tick *tick)
{
	double all_j = 0;

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		tick->delta_j[d] += c->joules[d];
		all_j += c->joules[d];
	}
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++)
		tick->gpu_device_j[g] += c->gpu_device_j[g];
	if (tick->node_source_j > 0)
		tick->node_source_j += all_j;
}
