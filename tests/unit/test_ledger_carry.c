/* test_ledger_carry.c - jobs that leave between two ticks, split alone
 * (lib/model/ledger_carry.c).  Property test over random workloads at constant
 * rates: leavers split at random moments, then the tick splits the rest;
 * every domain must balance (leavers + jobs + system + idle = the node's
 * delta), no share be negative, and every job get what one whole split
 * would have given it, the leavers counted for the part of the tick they
 * were there. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/ledger.h"
#include "model/ledger_carry.h"
#include "../tap.h"

#define NJOBS 12
#define NGPUS 2
#define ROUNDS 400

static uint64_t seed = 0x9e3779b97f4a7c15ULL;

static double
rnd(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (double)(seed >> 11) / 9007199254740992.0;
}

static struct ceems_ledger_reading
reading(double joules)
{
	struct ceems_ledger_reading r = { true, CEEMS_GAP_NONE, joules };

	return r;
}

/* The node over the first TAU of a 1 s tick, at constant rates. */
static void
node_at(struct ceems_ledger_node_tick *n, double tau, const double rate[5],
	double busy_rate, double gpu_rate[NGPUS])
{
	memset(n, 0, sizeof(*n));
	n->dt_s = tau;
	n->package = reading(rate[0] * tau);
	n->dram = reading(rate[1] * tau);
	n->node = reading((rate[0] + rate[1] + gpu_rate[0] + gpu_rate[1] +
			   rate[2]) * tau);
	n->ngpus = NGPUS;
	for (int g = 0; g < NGPUS; g++)
		n->gpu[g] = reading(gpu_rate[g] * tau);
	n->node_cores = 64;
	n->node_busy_cpu_s = busy_rate * tau;
	n->node_mem_total_bytes = 256ULL << 30;
	n->node_mem_used_bytes = 200ULL << 30;
	n->idle_power_w[CEEMS_DOMAIN_PACKAGE] = rate[3];
	n->idle_power_w[CEEMS_DOMAIN_DRAM] = rate[4];
}

static bool
near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (1 + fabs(a) + fabs(b));
}

static void
test_property(void)
{
	int bad_balance = 0, bad_fair = 0, negative = 0, leavers = 0;

	for (int round = 0; round < ROUNDS; round++) {
		struct ceems_ledger_job_tick jobs[NJOBS], whole[NJOBS];
		struct ceems_ledger_job_share got[NJOBS], want[NJOBS];
		struct ceems_ledger_job_tick rest[NJOBS];
		struct ceems_ledger_job_share rest_sh[NJOBS];
		struct ceems_ledger_tick tick, whole_tick;
		struct ceems_ledger_node_tick n;
		struct ceems_ledger_carry carry;
		double leave[NJOBS], cpu_rate[NJOBS], rate[5], gpu_rate[NGPUS];
		double busy = 0, gpu_owned[NGPUS] = { 0, 0 };
		int order[NJOBS], nleave = 0, nrest = 0, rest_of[NJOBS];

		rate[0] = 100 + 400 * rnd();	/* package W */
		rate[1] = 10 + 40 * rnd();	/* dram W */
		rate[2] = 50 * rnd();		/* the rest of the node */
		rate[3] = rate[0] * rnd();	/* idle power, package */
		rate[4] = rate[1] * rnd();	/* idle power, dram */
		for (int g = 0; g < NGPUS; g++)
			gpu_rate[g] = 300 * rnd();
		memset(jobs, 0, sizeof(jobs));
		for (int i = 0; i < NJOBS; i++) {
			jobs[i].alloc_cores = 1 + (unsigned)(4 * rnd());
			jobs[i].alloc_mem_bytes = (uint64_t)(rnd() * (16ULL << 30));
			jobs[i].rss_bytes = (uint64_t)(rnd() * (12ULL << 30));
			cpu_rate[i] = jobs[i].alloc_cores * rnd();
			busy += cpu_rate[i];
			for (int g = 0; g < NGPUS; g++) {
				double f = rnd() < 0.2 ? 0.25 : 0;

				if (gpu_owned[g] + f <= 1) {
					jobs[i].gpu_share[g] = f;
					gpu_owned[g] += f;
				}
			}
			leave[i] = rnd() < 0.5 ? 0.05 + 0.9 * rnd() : 1;
		}
		busy += 5 * rnd();	/* the system's own work */
		/* Leavers in the order they leave. */
		for (int i = 0; i < NJOBS; i++)
			if (leave[i] < 1)
				order[nleave++] = i;
		for (int a = 1; a < nleave; a++)
			for (int b = a; b > 0 && leave[order[b - 1]] > leave[order[b]]; b--) {
				int t = order[b];

				order[b] = order[b - 1];
				order[b - 1] = t;
			}

		ceems_ledger_carry_clear(&carry);
		memset(got, 0, sizeof(got));
		for (int k = 0; k < nleave; k++) {
			int i = order[k];
			struct ceems_ledger_job_tick t = jobs[i];

			t.cpu_s = cpu_rate[i] * leave[i];
			node_at(&n, leave[i], rate, busy, gpu_rate);
			ceems_ledger_carry_apply(&carry, &n);
			ceems_ledger_split(&n, &t, 1, &got[i], &tick);
			ceems_ledger_carry_add(&carry, &t, leave[i], &got[i]);
			leavers++;
		}
		for (int i = 0; i < NJOBS; i++)
			if (leave[i] >= 1) {
				rest[nrest] = jobs[i];
				rest[nrest].cpu_s = cpu_rate[i];
				rest_of[nrest++] = i;
			}
		node_at(&n, 1, rate, busy, gpu_rate);
		ceems_ledger_carry_apply(&carry, &n);
		ceems_ledger_split(&n, rest, (size_t)nrest, rest_sh, &tick);
		ceems_ledger_carry_restore(&carry, &tick);
		for (int r = 0; r < nrest; r++)
			got[rest_of[r]] = rest_sh[r];

		/* One whole split, the leavers there for their part. */
		for (int i = 0; i < NJOBS; i++) {
			whole[i] = jobs[i];
			whole[i].cpu_s = cpu_rate[i] * leave[i];
			whole[i].absent_s = 1 - leave[i];
		}
		node_at(&n, 1, rate, busy, gpu_rate);
		ceems_ledger_split(&n, whole, NJOBS, want, &whole_tick);

		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			double sum = tick.system_j[d] + tick.idle_j[d];

			for (int i = 0; i < NJOBS; i++) {
				sum += got[i].joules[d];
				if (got[i].joules[d] < 0 || got[i].static_j[d] < 0)
					negative++;
				if (!near(got[i].joules[d], want[i].joules[d]) ||
				    !near(got[i].static_j[d], want[i].static_j[d]))
					bad_fair++;
			}
			if (tick.system_j[d] < -1e-9 || tick.idle_j[d] < -1e-9)
				negative++;
			if (!near(sum, tick.delta_j[d]) ||
			    !near(tick.delta_j[d], whole_tick.delta_j[d]))
				bad_balance++;
		}
	}
	ok(leavers > ROUNDS, "%d jobs left between ticks", leavers);
	is_int(bad_balance, 0, "every domain balances: leavers + jobs + system + idle = delta");
	is_int(negative, 0, "no share is negative");
	is_int(bad_fair, 0, "every job gets what one whole split gives it");
}

/* A job there for a part of the tick holds its cores for that part only. */
static void
test_absent(void)
{
	struct ceems_ledger_node_tick n;
	struct ceems_ledger_job_tick j;
	struct ceems_ledger_job_share s;
	struct ceems_ledger_tick t;
	double rate[5] = { 200, 20, 0, 64, 0 }, gpu[NGPUS] = { 0, 0 };

	node_at(&n, 1, rate, 0, gpu);
	memset(&j, 0, sizeof(j));
	j.alloc_cores = 8;
	j.absent_s = 0.75;
	ceems_ledger_split(&n, &j, 1, &s, &t);
	/* 64 W over 64 cores: 8 cores for a quarter second. */
	ok(near(s.static_j[CEEMS_DOMAIN_PACKAGE], 64.0 * 8 / 64 * 0.25),
	   "static share for the part of the tick it was there (%g J)",
	   s.static_j[CEEMS_DOMAIN_PACKAGE]);
	j.absent_s = 2;
	ceems_ledger_split(&n, &j, 1, &s, &t);
	ok(s.static_j[CEEMS_DOMAIN_PACKAGE] == 0, "absent all the tick: no static share");
}

int
main(void)
{
	test_absent();
	test_property();
	return done_testing();
}
