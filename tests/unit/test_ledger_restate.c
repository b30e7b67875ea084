/* test_ledger_restate.c - lib/model/ledger_restate.c: jobs split with no
 * idle power for a while and restated once it is known end with the
 * accounts (energy, static part, emissions at each tick's own factor)
 * of jobs split with it from the start, over random workloads and ticks
 * a job left in (split alone when it left); the node
 * still balances with the restated amounts given to idle and the
 * system; a partial account keeps its flag; a delta under the idle
 * power leaves no account negative. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/ledger.h"
#include "model/ledger_carry.h"
#include "model/ledger_restate.h"
#include "../tap.h"

#define NJOBS 8
#define NTICKS 400

static uint64_t rng_state = 20261129;

static double
uniform(double lo, double hi)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return lo + (hi - lo) * ((double)(z >> 11) / 9007199254740992.0);
}

static bool
near(double got, double want)
{
	return fabs(got - want) <= 1e-9 * fmax(1, fabs(want));
}

/* A node of 32 cores and 256 GiB whose package power is always above
 * IDLE_W (the split's cap never binds), with NJOBS random jobs, some
 * present for part of the tick. */
static void
random_tick(struct ceems_ledger_node_tick *n, struct ceems_ledger_job_tick *jobs,
	    const double idle_w[CEEMS_DOMAIN_COUNT])
{
	memset(n, 0, sizeof(*n));
	memset(jobs, 0, NJOBS * sizeof(*jobs));
	n->dt_s = uniform(0.2, 2);
	n->node_cores = 32;
	n->node_busy_cpu_s = uniform(0, 32 * n->dt_s);
	n->node_mem_total_bytes = 256ULL << 30;
	n->node_mem_used_bytes = (uint64_t)uniform(1e9, 2e11);
	n->package.measured = true;
	n->package.joules = (idle_w[CEEMS_DOMAIN_PACKAGE] + uniform(0, 300)) * n->dt_s;
	n->dram.measured = true;
	n->dram.joules = (idle_w[CEEMS_DOMAIN_DRAM] + uniform(0, 30)) * n->dt_s;
	for (int i = 0; i < NJOBS; i++) {
		jobs[i].alloc_cores = 1 + (unsigned)uniform(0, 4);
		jobs[i].cpu_s = uniform(0, jobs[i].alloc_cores * n->dt_s);
		jobs[i].alloc_mem_bytes = (uint64_t)uniform(1e9, 2e10);
		jobs[i].rss_bytes = (uint64_t)uniform(0, 1e10);
		if (uniform(0, 1) < 0.2)
			jobs[i].absent_s = uniform(0, n->dt_s);
	}
}

static void
test_random_workload(void)
{
	static struct ceems_job_ledger known[NJOBS], restated[NJOBS];
	static struct ceems_ledger_unlearned unlearned[NJOBS];
	const double idle_w[CEEMS_DOMAIN_COUNT] = {
		[CEEMS_DOMAIN_PACKAGE] = 120, [CEEMS_DOMAIN_DRAM] = 12,
	};
	const int learned_at = NTICKS / 3;
	struct ceems_emission_factor f = { "test", "FR", 2024, 50, 1.3 };
	double delta[CEEMS_DOMAIN_COUNT] = { 0 }, rest[CEEMS_DOMAIN_COUNT] = { 0 };
	double idle_s[CEEMS_DOMAIN_COUNT] = { 0 };
	unsigned bad_energy = 0, bad_static = 0, bad_grams = 0, flagged = 0;

	for (int i = 0; i < NJOBS; i++) {
		ceems_job_figures_ledger_init(&known[i]);
		ceems_job_figures_ledger_init(&restated[i]);
	}
	for (int k = 0; k < NTICKS; k++) {
		struct ceems_ledger_node_tick n;
		struct ceems_ledger_job_tick jobs[NJOBS];
		struct ceems_ledger_job_share shares[NJOBS];
		struct ceems_ledger_tick t;

		random_tick(&n, jobs, idle_w);
		/* The intensity changes every tick: the restatement's
		 * grams must be each tick's own. */
		f.g_per_kwh = uniform(20, 400);
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			n.idle_power_w[d] = idle_w[d];
		ceems_ledger_split(&n, jobs, NJOBS, shares, &t);
		for (int i = 0; i < NJOBS; i++)
			ceems_ledger_add_tick(&known[i], &shares[i], n.dt_s, &f);
		if (k >= learned_at) {
			for (int i = 0; i < NJOBS; i++)
				ceems_ledger_add_tick(&restated[i], &shares[i], n.dt_s, &f);
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
				rest[d] += t.system_j[d] + t.idle_j[d];
		} else {
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
				n.idle_power_w[d] = 0;
				n.idle_power_unlearned[d] = true;
			}
			ceems_ledger_split(&n, jobs, NJOBS, shares, &t);
			for (int i = 0; i < NJOBS; i++) {
				ceems_ledger_add_tick(&restated[i], &shares[i], n.dt_s, &f);
				ceems_ledger_restate_add(&unlearned[i], &shares[i], &f);
			}
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
				rest[d] += t.system_j[d] + t.idle_j[d];
				idle_s[d] += t.unlearned_idle_s[d];
			}
		}
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			delta[d] += t.delta_j[d];
		if (k == learned_at - 1) {
			/* Learned now: the jobs, and idle, restated; the
			 * system gives what they gain. */
			for (int d = 0; d < 2; d++) {
				double gained = 0;

				for (int i = 0; i < NJOBS; i++)
					gained += ceems_ledger_restate_account(
					    &restated[i], &unlearned[i], d, idle_w[d]);
				rest[d] -= gained;
			}
		}
	}
	for (int i = 0; i < NJOBS; i++) {
		for (int d = 0; d < 2; d++) {
			bad_energy += !near(restated[i].joules[d], known[i].joules[d]);
			bad_static += !near(restated[i].static_j[d], known[i].static_j[d]);
			flagged += restated[i].idle_unlearned[d];
		}
		bad_grams += !near(restated[i].emissions_g, known[i].emissions_g);
	}
	ok(bad_energy == 0, "restated: every job's package and DRAM energy as if the idle power had been known (%u off)",
	   bad_energy);
	ok(bad_static == 0, "restated: and their static parts (%u off)", bad_static);
	ok(bad_grams == 0, "restated: and their emissions, at each tick's intensity (%u off)",
	   bad_grams);
	is_int((int)flagged, 0, "restated: no account flagged idle_unlearned any more");
	for (int d = 0; d < 2; d++) {
		double jobs_j = 0;

		for (int i = 0; i < NJOBS; i++)
			jobs_j += restated[i].joules[d];
		ok(near(jobs_j + rest[d], delta[d]),
		   "restated: domain %d still balances (jobs %.3f + idle and system %.3f = %.3f J)",
		   d, jobs_j, rest[d], delta[d]);
		ok(idle_s[d] > 0, "restated: idle had a part of the unlearned ticks (%.3f s)",
		   idle_s[d]);
	}
}

/* One leaver and two jobs staying over ticks of 1 s, the leaver split
 * alone when it leaves (ledger_carry.h): with IDLE_W known (LEARNED),
 * or not, the stayers' accounts into OUT, their restatement sums into U. */
static void
leaver_tick(bool learned, double idle_w, const double r[8],
	    struct ceems_job_ledger out[2], struct ceems_ledger_unlearned u[2])
{
	struct ceems_ledger_carry carry;
	struct ceems_ledger_node_tick n;
	struct ceems_ledger_job_tick leaver, stay[2];
	struct ceems_ledger_job_share share, shares[2];
	struct ceems_ledger_tick t;
	const double left_at = r[0];

	ceems_ledger_carry_clear(&carry);
	memset(&n, 0, sizeof(n));
	memset(&leaver, 0, sizeof(leaver));
	memset(stay, 0, sizeof(stay));
	n.node_cores = 16;
	n.node_mem_total_bytes = 64ULL << 30;
	n.node_mem_used_bytes = 20ULL << 30;
	n.package.measured = true;
	n.idle_power_w[CEEMS_DOMAIN_PACKAGE] = learned ? idle_w : 0;
	n.idle_power_unlearned[CEEMS_DOMAIN_PACKAGE] = !learned;
	/* The partial tick the leaver is split on, alone. */
	n.dt_s = left_at;
	n.package.joules = (idle_w + r[1]) * left_at;
	n.node_busy_cpu_s = r[2] * left_at;
	leaver.alloc_cores = 4;
	leaver.cpu_s = r[3] * left_at;
	ceems_ledger_split(&n, &leaver, 1, &share, &t);
	ceems_ledger_carry_add(&carry, &leaver, left_at, &share);
	/* The whole tick, net of it, for the others. */
	n.dt_s = 1;
	n.package.joules += (idle_w + r[4]) * (1 - left_at);
	n.node_busy_cpu_s += r[5] * (1 - left_at);
	n.idle_power_w[CEEMS_DOMAIN_PACKAGE] = learned ? idle_w : 0;
	ceems_ledger_carry_apply(&carry, &n);
	stay[0].alloc_cores = 2;
	stay[0].cpu_s = r[6];
	stay[1].alloc_cores = 6;
	stay[1].cpu_s = r[7];
	ceems_ledger_split(&n, stay, 2, shares, &t);
	for (int i = 0; i < 2; i++) {
		ceems_ledger_add_tick(&out[i], &shares[i], 1, NULL);
		ceems_ledger_restate_add(&u[i], &shares[i], NULL);
	}
}

static void
test_leavers(void)
{
	struct ceems_job_ledger known[2], restated[2];
	struct ceems_ledger_unlearned u[2], unused[2];
	unsigned bad = 0;

	for (int k = 0; k < 200; k++) {
		/* Leaving at, power above idle before and after, busy
		 * CPUs of the node and of each job before and after. */
		double r[8] = { uniform(0.05, 0.95), uniform(0, 200),
				uniform(4, 12), uniform(0, 4), uniform(0, 200),
				uniform(8, 12), uniform(0, 2), uniform(0, 6) };

		memset(u, 0, sizeof(u));
		memset(unused, 0, sizeof(unused));
		for (int i = 0; i < 2; i++) {
			ceems_job_figures_ledger_init(&known[i]);
			ceems_job_figures_ledger_init(&restated[i]);
		}
		leaver_tick(true, 80, r, known, unused);
		leaver_tick(false, 80, r, restated, u);
		for (int i = 0; i < 2; i++) {
			ceems_ledger_restate_account(&restated[i], &u[i],
						     CEEMS_DOMAIN_PACKAGE, 80);
			bad += !near(restated[i].joules[0], known[i].joules[0]) ||
			       !near(restated[i].static_j[0], known[i].static_j[0]);
		}
	}
	ok(bad == 0, "leavers: the jobs staying through a tick a job left in are restated as if the idle power had been known (%u off)",
	   bad);
}

/* A job restored after an agent restart: what the earlier agent split
 * unlearned is not in its sums, so the flag stays; a delta under the
 * idle power leaves nothing negative; no idle power, nothing moves. */
static void
test_partial_and_cap(void)
{
	struct ceems_job_ledger l;
	struct ceems_ledger_unlearned u;
	struct ceems_ledger_job_share s;
	const int pkg = CEEMS_DOMAIN_PACKAGE;

	ceems_job_figures_ledger_init(&l);
	memset(&u, 0, sizeof(u));
	memset(&s, 0, sizeof(s));
	s.covered[pkg] = s.measured[pkg] = s.idle_unlearned[pkg] = true;
	s.joules[pkg] = 10;
	s.unlearned_held_s[pkg] = 0.5;
	s.unlearned_used_s[pkg] = 1;
	ceems_ledger_add_tick(&l, &s, 1, NULL);
	ceems_ledger_restate_add(&u, &s, NULL);
	u.partial[pkg] = true;
	is_near(ceems_ledger_restate_account(&l, &u, pkg, 0), 0, 0,
		"no idle power: nothing restated");
	is_near(ceems_ledger_restate_account(&l, &u, pkg, 4), -2, 1e-12,
		"restated: +4 W x 0.5 s static, -4 W x 1 s active");
	is_near(l.static_j[pkg], 2, 1e-12, "the static part is the held one");
	ok(l.idle_unlearned[pkg], "partial: the flag stays");
	ceems_ledger_restate_add(&u, &s, NULL);
	is_near(ceems_ledger_restate_account(&l, &u, pkg, 100), -8, 1e-12,
		"a tick whose delta was under the idle power: the account stops at 0");
	ok(l.joules[pkg] == 0 && l.static_j[pkg] == 0,
	   "and its static part with it (%.3f, %.3f)", l.joules[pkg], l.static_j[pkg]);
	is_near(ceems_ledger_restate_per_w(&s, pkg, 0.25), -0.125, 1e-12,
		"a step's part: its share of the job's use, per watt");
	s.idle_unlearned[pkg] = false;
	is_near(ceems_ledger_restate_per_w(&s, pkg, 0.25), 0, 0,
		"a learned tick gives a step nothing to restate");
}

int
main(void)
{
	test_random_workload();
	test_leavers();
	test_partial_and_cap();
	return done_testing();
}
