/* test_energy_err.c - is a job's energy error bound (lib/model/energy_err.c)
 * right?  Simulated nodes whose truth is known run many randomised jobs;
 * the node's figures are measured through the production code (a RAPL-like
 * counter read by ceems_energy_reader_update, a BMC's averaged, rounded
 * readings through its curve, a GPU's power sampled and integrated by
 * ceems_energy_reader_power, the idle power learned by ceems_idle_fit),
 * split by the ledger, and each job's figure is compared with the same
 * split of the true energies.  The truth must fall inside the stated
 * bound at least as often as the bound claims (95%), and the bound must
 * not be uselessly wide: its median relative width is printed (the
 * figures in doc/attribution.md) and held under a ceiling. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "model/energy_err.h"
#include "model/idle_fit.h"
#include "model/ledger.h"
#include "model/measure.h"
#include "sources/bmc.h"
#include "../tap.h"
#include "sim_rand.h"

#define MAX_JOBS 4
#define TICKS 400
#define TRIALS 120
#define GPU_SAMPLES 10		/* samples a tick: 100 ms apart */
#define RAPL_UNIT_J 61.035e-6	/* 2^-14 J, as RAPL's energy unit */
#define BMC_INTERVAL 5		/* ticks between two BMC readings */
#define BMC_WINDOW 3		/* ticks a BMC reading averages */
#define GPU_ACCURACY_W 5.0	/* a GPU's power reading may be off by */

/* What one scenario measures, and how. */
struct scenario {
	const char *name;
	bool counters;		/* package, dram (and GPU counters) */
	bool bmc;		/* the node's power from a BMC */
	bool gpu;		/* a GPU device, owned by some jobs */
	bool gpu_integrated;	/* its power sampled, no counter */
	bool learned_idle;	/* the package's idle power learned */
	double gap_rate;	/* ticks whose package reading is lost */
	bool agent_down;	/* a run of ticks no agent saw */
	double max_median_width;	/* the bound must be narrower */
};

/* The node's true model. */
struct node_truth {
	unsigned cores;
	double pkg_idle_w, pkg_k_w;	/* package: idle + k x busy CPUs */
	double dram_w;
	double platform_w;		/* BMC: fans, disks, supplies */
	double gpu_bias_w;		/* the GPU's reading is off by this */
};

struct sim_job {
	int start, end;
	unsigned cores;
	double activity;	/* busy fraction of its cores */
	bool gpu;
	double truth_j[CEEMS_DOMAIN_COUNT];
	struct ceems_job_ledger est;
	struct ceems_energy_err_account err;
};

/* The measuring side of the node. */
struct meter {
	struct ceems_energy_counter pkg_c, dram_c, gpu_c;
	struct ceems_energy_reader pkg_r, dram_r, gpu_r;
	double pkg_true_j, dram_true_j, gpu_true_j;	/* cumulative */
	double gpu_prev_w;
	struct ceems_bmc_curve bmc;
	double node_w_hist[BMC_WINDOW];		/* the node's past ticks */
	double node_prev_w, gpu_tick_prev_w;
	bool have_node_prev, have_gpu_prev;
	struct ceems_energy_err_node view;
	double idle_w, idle_err_w;
};

/* Per domain, and the job's total (TOTAL). */
#define TOTAL CEEMS_DOMAIN_COUNT
struct outcome {
	unsigned n[TOTAL + 1], inside[TOTAL + 1];
	double widths[TOTAL + 1][TRIALS * MAX_JOBS];
};

static uint64_t
counts(double joules)
{
	return (uint64_t)floor(joules / RAPL_UNIT_J);
}

static void
reader_init(struct ceems_energy_reader *r)
{
	memset(r, 0, sizeof(*r));
	r->lim.unit_j = RAPL_UNIT_J;
	r->lim.range = 1ULL << 40;
	r->lim.max_power_w = 5000;
	r->lim.slack_ns = 100000000;
	r->rebase_gap = CEEMS_GAP_FIRST_READ;
}

static void
take(struct ceems_energy_counter *c, struct ceems_ledger_reading *out)
{
	out->measured = true;
	out->gap = c->pending_gap;
	out->joules = c->pending_gap == CEEMS_GAP_NONE ? c->pending_j : 0;
	c->pending_j = 0;
	c->pending_gap = CEEMS_GAP_NONE;
}

/* The GPU's true power over one tick: changes at random instants, read
 * every 100 ms (with the device's bias) and integrated as the agent's
 * GPU source does.  Returns the true energy. */
static double
gpu_tick(struct meter *m, const struct node_truth *nt, double *level,
	 uint64_t t0_ns, bool integrated)
{
	double truth = 0;

	for (int s = 1; s <= GPU_SAMPLES; s++) {
		double at = uniform(), next = *level;

		if (uniform() < 0.3)
			next = 60 + 240 * uniform();
		/* The segment: *level until AT of it, then NEXT. */
		truth += (*level * at + next * (1 - at)) * 0.1;
		*level = next;
		if (integrated)
			ceems_energy_reader_power(&m->gpu_r, &m->gpu_c,
						  &m->gpu_prev_w,
						  *level + nt->gpu_bias_w,
						  t0_ns + (uint64_t)s * 100000000ULL,
						  1000000000ULL);
	}
	m->gpu_true_j += truth;
	if (!integrated)
		ceems_energy_reader_update(&m->gpu_r, &m->gpu_c,
					   counts(m->gpu_true_j),
					   t0_ns + 1000000000ULL);
	return truth;
}

/* A BMC reading at tick T: the mean of the node's last BMC_WINDOW ticks,
 * rounded to whole watts, as DCMI's average power is. */
static void
bmc_tick(struct meter *m, int t, double node_w, uint64_t now_ns)
{
	struct ceems_bmc_reading r = { .origin = CEEMS_BMC_DCMI };
	double sum = 0;

	memmove(m->node_w_hist + 1, m->node_w_hist,
		(BMC_WINDOW - 1) * sizeof(double));
	m->node_w_hist[0] = node_w;
	if (t % BMC_INTERVAL != 0 || t < BMC_WINDOW)
		return;
	for (int i = 0; i < BMC_WINDOW; i++)
		sum += m->node_w_hist[i];
	r.watts = round(sum / BMC_WINDOW);
	ceems_bmc_curve_reading(&m->bmc, &r, now_ns);
}

/* Learn the package's idle power as the agent does on a node never
 * quiet: noisy ticks of varying load, fitted. */
static void
learn_idle(struct meter *m, const struct node_truth *nt)
{
	struct ceems_idle_fit f;

	ceems_idle_fit_init(&f);
	for (int i = 0; i < 2000; i++) {
		double busy = nt->cores * (0.1 + 0.8 * uniform());

		ceems_idle_fit_add(&f, busy, nt->cores, nt->pkg_idle_w +
				   nt->pkg_k_w * busy + 2 * gauss());
	}
	if (!ceems_idle_fit_value(&f, &m->idle_w) ||
	    !ceems_idle_fit_uncertainty(&f, &m->idle_err_w)) {
		m->idle_w = 0;
		m->idle_err_w = 0;
	}
}

/* Fill the job ticks of the jobs present at T; returns the busy time. */
static double
usage(struct sim_job *jobs, int njobs, int t,
      struct ceems_ledger_job_tick *jt)
{
	double busy = 0.1 * uniform();

	memset(jt, 0, sizeof(*jt) * (size_t)njobs);
	for (int i = 0; i < njobs; i++) {
		if (t < jobs[i].start || t >= jobs[i].end)
			continue;
		jt[i].alloc_cores = jobs[i].cores;
		jt[i].cpu_s = jobs[i].cores * jobs[i].activity *
		    (0.7 + 0.3 * uniform());
		jt[i].alloc_mem_bytes = (uint64_t)jobs[i].cores << 30;
		jt[i].rss_bytes = (uint64_t)(jt[i].alloc_mem_bytes *
					     jobs[i].activity);
		jt[i].gpu_share[0] = jobs[i].gpu ? 1 : 0;
		busy += jt[i].cpu_s;
	}
	return busy;
}

static void
new_jobs(const struct scenario *sc, const struct node_truth *nt,
	 struct sim_job *jobs, int njobs)
{
	unsigned left = nt->cores;
	int gpu_job = sc->gpu ? (int)(uniform() * njobs) : -1;

	for (int i = 0; i < njobs; i++) {
		struct sim_job *j = &jobs[i];

		memset(j, 0, sizeof(*j));
		j->start = (int)(uniform() * TICKS / 3);
		j->end = j->start + 60 + (int)(uniform() * (TICKS - j->start - 60));
		j->cores = 1 + (unsigned)(uniform() * (left / (njobs - i)));
		left -= j->cores;
		j->activity = uniform() < 0.2 ? 0 : uniform();
		j->gpu = i == gpu_job;
		ceems_job_figures_ledger_init(&j->est);
		ceems_energy_err_account_init(&j->err);
	}
}

/* The node's figures of tick T, true (TRUTH) and measured (SEEN), with
 * the errors the measuring side states for them. */
static void
measure(const struct scenario *sc, const struct node_truth *nt,
	struct meter *m, int t, double busy, double *gpu_level, bool down,
	struct ceems_ledger_node_tick *truth,
	struct ceems_ledger_node_tick *seen,
	struct ceems_energy_err_node_tick *err)
{
	uint64_t t0 = (uint64_t)t * 1000000000ULL, t1 = t0 + 1000000000ULL;
	double pkg = nt->pkg_idle_w + nt->pkg_k_w * busy + 2 * gauss();
	double gpu = sc->gpu ? gpu_tick(m, nt, gpu_level, t0,
					sc->gpu_integrated) : 0;
	double node = pkg + nt->dram_w + gpu + nt->platform_w + 0.5 * busy;

	memset(err, 0, sizeof(*err));
	truth->package.measured = seen->package.measured = sc->counters;
	truth->dram.measured = seen->dram.measured = sc->counters;
	truth->node.measured = seen->node.measured = sc->bmc;
	truth->package.joules = pkg;
	truth->dram.joules = nt->dram_w;
	truth->node.joules = node;
	truth->ngpus = seen->ngpus = sc->gpu ? 1 : 0;
	truth->gpu[0].measured = seen->gpu[0].measured = sc->gpu;
	truth->gpu[0].joules = gpu;
	m->pkg_true_j += pkg;
	m->dram_true_j += nt->dram_w;
	if (sc->counters) {
		ceems_energy_reader_update(&m->pkg_r, &m->pkg_c,
					   counts(m->pkg_true_j), t1);
		ceems_energy_reader_update(&m->dram_r, &m->dram_c,
					   counts(m->dram_true_j), t1);
		take(&m->pkg_c, &seen->package);
		take(&m->dram_c, &seen->dram);
		err->source_j[CEEMS_DOMAIN_PACKAGE] = RAPL_UNIT_J;
		err->source_j[CEEMS_DOMAIN_DRAM] = RAPL_UNIT_J;
		if (uniform() < sc->gap_rate)
			seen->package.gap = CEEMS_GAP_READ_ERROR;
	}
	if (sc->gpu) {
		take(&m->gpu_c, &seen->gpu[0]);
		if (sc->gpu_integrated) {
			double w = seen->gpu[0].joules;

			ceems_energy_err_power(GPU_ACCURACY_W, 0.1, 1, w,
					       m->have_gpu_prev ?
					       m->gpu_tick_prev_w : w,
					       &err->gpu_source_j[0],
					       &err->gpu_lag_j[0]);
			m->gpu_tick_prev_w = w;
			m->have_gpu_prev = seen->gpu[0].gap == CEEMS_GAP_NONE;
		} else {
			err->gpu_source_j[0] = RAPL_UNIT_J;
		}
	}
	if (sc->bmc) {
		double w;

		bmc_tick(m, t, node, t1);
		seen->node.gap = ceems_bmc_curve_take(&m->bmc, t1,
						      &seen->node.joules);
		w = seen->node.joules;
		ceems_energy_err_power(1, BMC_INTERVAL + BMC_WINDOW / 2.0, 1, w,
				       m->have_node_prev ? m->node_prev_w : w,
				       &err->source_j[CEEMS_DOMAIN_NODE],
				       &err->lag_j[CEEMS_DOMAIN_NODE]);
		m->node_prev_w = w;
		m->have_node_prev = seen->node.gap == CEEMS_GAP_NONE;
	}
	truth->idle_power_w[CEEMS_DOMAIN_PACKAGE] = nt->pkg_idle_w;
	truth->idle_power_w[CEEMS_DOMAIN_DRAM] = nt->dram_w / 2;
	seen->idle_power_w[CEEMS_DOMAIN_PACKAGE] =
	    sc->learned_idle ? m->idle_w : nt->pkg_idle_w;
	seen->idle_power_w[CEEMS_DOMAIN_DRAM] = nt->dram_w / 2;
	err->idle_w[CEEMS_DOMAIN_PACKAGE] = sc->learned_idle ? m->idle_err_w : 0;
	/* Not learned: split by use, as the agent does, and flagged. */
	seen->idle_power_unlearned[CEEMS_DOMAIN_PACKAGE] =
	    sc->learned_idle && m->idle_w == 0;
	if (down) {
		/* The agent is down: its next readings are baselines. */
		m->pkg_r.have_prev = m->dram_r.have_prev = false;
		m->gpu_r.have_prev = false;
		ceems_bmc_curve_lost(&m->bmc, CEEMS_GAP_READ_ERROR);
	}
}

static void
meter_init(struct meter *m, const struct scenario *sc,
	   const struct node_truth *nt)
{
	memset(m, 0, sizeof(*m));
	reader_init(&m->pkg_r);
	reader_init(&m->dram_r);
	reader_init(&m->gpu_r);
	m->pkg_c.domain = CEEMS_DOMAIN_PACKAGE;
	m->dram_c.domain = CEEMS_DOMAIN_DRAM;
	m->gpu_c.domain = CEEMS_DOMAIN_GPU;
	ceems_bmc_curve_init(&m->bmc, (BMC_INTERVAL * 2 + 1) * 1000000000ULL, 0);
	ceems_energy_err_node_init(&m->view);
	if (sc->learned_idle)
		learn_idle(m, nt);
}

/* One figure EST with its BOUND against its TRUTH, as domain D. */
static void
judge_one(struct outcome *o, int d, double est, double truth, double bound)
{
	if (truth <= 0)
		return;
	if (fabs(est - truth) <= bound)
		o->inside[d]++;
	o->widths[d][o->n[d]++] = bound / truth;
}

/* Judge each job's figure (each domain, and the total) against its
 * truth.  A figure whose bound is unknown is not judged. */
static void
judge(struct sim_job *jobs, int njobs, struct outcome *o)
{
	for (int i = 0; i < njobs; i++) {
		double bound, est = 0, truth = 0;

		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			if (!ceems_energy_err_domain(&jobs[i].err, d,
						     CEEMS_ERR_PARTS, &bound))
				continue;
			judge_one(o, d, jobs[i].est.joules[d],
				  jobs[i].truth_j[d], bound);
			est += jobs[i].est.joules[d];
			truth += jobs[i].truth_j[d];
		}
		if (ceems_energy_err_total(&jobs[i].err, &bound))
			judge_one(o, TOTAL, est, truth, bound);
	}
}

/* One node's run: NJOBS random jobs over TICKS ticks. */
static void
run_trial(const struct scenario *sc, struct outcome *o)
{
	struct node_truth nt = {
		.cores = 8 + 8 * (unsigned)(uniform() * 4),
		.pkg_idle_w = 30 + 40 * uniform(),
		.pkg_k_w = 5 + 10 * uniform(),
		.dram_w = 4 + 8 * uniform(),
		.platform_w = 50 + 50 * uniform(),
		.gpu_bias_w = (2 * uniform() - 1) * GPU_ACCURACY_W,
	};
	struct sim_job jobs[MAX_JOBS];
	struct ceems_ledger_job_tick jt[MAX_JOBS];
	struct ceems_ledger_job_share tshare[MAX_JOBS], sshare[MAX_JOBS];
	struct ceems_ledger_node_tick truth, seen;
	struct ceems_energy_err_node_tick err;
	struct ceems_ledger_tick ttick, stick;
	static struct meter m;
	int njobs = 1 + (int)(uniform() * MAX_JOBS);
	int down_at = sc->agent_down ? 80 + (int)(uniform() * 200) : -1;
	int down_len = 5 + (int)(uniform() * 25);
	double gpu_level = 100;

	meter_init(&m, sc, &nt);
	new_jobs(sc, &nt, jobs, njobs);
	for (int t = 0; t < TICKS; t++) {
		bool down = down_at >= 0 && t >= down_at &&
		    t < down_at + down_len;
		double busy = usage(jobs, njobs, t, jt);

		memset(&truth, 0, sizeof(truth));
		memset(&seen, 0, sizeof(seen));
		truth.dt_s = seen.dt_s = 1;
		truth.node_cores = seen.node_cores = nt.cores;
		truth.node_busy_cpu_s = seen.node_busy_cpu_s = busy;
		truth.node_mem_total_bytes = seen.node_mem_total_bytes =
		    (uint64_t)nt.cores << 30;
		truth.node_mem_used_bytes = seen.node_mem_used_bytes =
		    (uint64_t)nt.cores << 29;
		measure(sc, &nt, &m, t, busy, &gpu_level, down, &truth, &seen,
			&err);
		ceems_ledger_split(&truth, jt, (size_t)njobs, tshare, &ttick);
		ceems_ledger_split(&seen, jt, (size_t)njobs, sshare, &stick);
		if (!down)
			ceems_energy_err_node_observe(&m.view, &stick, 1);
		for (int i = 0; i < njobs; i++) {
			if (t < jobs[i].start || t >= jobs[i].end)
				continue;
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
				jobs[i].truth_j[d] += tshare[i].joules[d];
			if (down) {
				ceems_ledger_add_gap(&jobs[i].est, 1);
				ceems_energy_err_add_gap(&jobs[i].err, &m.view,
							 seen.ngpus, 1);
				continue;
			}
			ceems_ledger_add_tick(&jobs[i].est, &sshare[i], 1, NULL);
			ceems_energy_err_add_tick(&jobs[i].err, &m.view, &err,
						  &sshare[i], seen.ngpus, 1);
		}
	}
	judge(jobs, njobs, o);
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
check(const struct scenario *sc)
{
	static struct outcome o;

	memset(&o, 0, sizeof(o));
	for (int i = 0; i < TRIALS; i++)
		run_trial(sc, &o);
	ok(o.n[TOTAL] >= TRIALS, "%s: %u jobs judged", sc->name, o.n[TOTAL]);
	for (int d = 0; d <= TOTAL; d++) {
		const char *what = d == TOTAL ? "total" :
		    ceems_job_figures_energy_domain_name(d);
		double median, rate;

		if (o.n[d] == 0)
			continue;
		qsort(o.widths[d], o.n[d], sizeof(double), cmp_double);
		median = o.widths[d][o.n[d] / 2];
		rate = (double)o.inside[d] / o.n[d];
		ok(rate >= 0.95, "%s, %s: the truth is inside the bound for "
		   "%.1f%% of %u jobs, at least 95%%", sc->name, what,
		   100 * rate, o.n[d]);
		ok(median < sc->max_median_width, "%s, %s: median width "
		   "+-%.2g%%, under %.2g%%", sc->name, what, 100 * median,
		   100 * sc->max_median_width);
	}
}

/* Part PART of domain D's bound, NAN when unknown. */
static double
bound_of(const struct ceems_energy_err_account *a, enum ceems_energy_domain d,
	 enum ceems_energy_err_part part)
{
	double j;

	return ceems_energy_err_domain(a, d, part, &j) ? j : NAN;
}

static double
total_of(const struct ceems_energy_err_account *a)
{
	double j;

	return ceems_energy_err_total(a, &j) ? j : NAN;
}

/* A worked example: the figures of doc/attribution.md. */
static void
test_example(void)
{
	struct ceems_energy_err_account a;
	struct ceems_energy_err_node n;
	struct ceems_energy_err_node_tick err = { 0 };
	struct ceems_ledger_job_share share = { 0 };
	struct ceems_ledger_tick tick = { 0 };
	double j;

	ceems_energy_err_account_init(&a);
	ceems_energy_err_node_init(&n);
	tick.measured[CEEMS_DOMAIN_PACKAGE] = true;
	tick.delta_j[CEEMS_DOMAIN_PACKAGE] = 200;
	ceems_energy_err_node_observe(&n, &tick, 1);
	ok(n.max_w[CEEMS_DOMAIN_PACKAGE] == 200, "the node's largest power");
	share.measured[CEEMS_DOMAIN_PACKAGE] = true;
	share.covered[CEEMS_DOMAIN_PACKAGE] = true;
	share.held_part[CEEMS_DOMAIN_PACKAGE] = 0.5;	/* 32 of 64 cores */
	share.used_part[CEEMS_DOMAIN_PACKAGE] = 0.25;	/* 1 of 4 busy */
	err.source_j[CEEMS_DOMAIN_PACKAGE] = 0.001;
	err.idle_w[CEEMS_DOMAIN_PACKAGE] = 2;		/* learned, +-2 W */
	for (int t = 0; t < 10; t++)
		ceems_energy_err_add_tick(&a, &n, &err, &share, 0, 1);
	j = bound_of(&a, CEEMS_DOMAIN_PACKAGE, CEEMS_ERR_IDLE);
	ok(fabs(j - 5) < 1e-12,
	   "idle power: 10 s x (0.5 - 0.25) x 2 W = 5 J (%g)", j);
	j = bound_of(&a, CEEMS_DOMAIN_PACKAGE, CEEMS_ERR_SOURCE);
	ok(fabs(j - 0.005) < 1e-12,
	   "source: 10 x 0.5 x 1 mJ = 5 mJ (%g)", j);
	share.covered[CEEMS_DOMAIN_PACKAGE] = false;
	ceems_energy_err_add_tick(&a, &n, &err, &share, 0, 1);
	j = bound_of(&a, CEEMS_DOMAIN_PACKAGE, CEEMS_ERR_GAPS);
	ok(fabs(j - 100) < 1e-12,
	   "a gap tick: 0.5 x 200 W x 1 s = 100 J (%g)", j);
	j = total_of(&a);
	ok(fabs(j - 105.005) < 1e-9,
	   "the total adds the parts (%g)", j);
	ok(isnan(bound_of(&a, CEEMS_DOMAIN_DRAM, CEEMS_ERR_PARTS)),
	   "a domain the node lacks has no bound");
	a.known = false;
	ok(isnan(total_of(&a)), "a restored job's bound is unknown");

	/* A gap before the node showed any power: unknown, not 0. */
	ceems_energy_err_account_init(&a);
	ceems_energy_err_node_init(&n);
	ceems_energy_err_add_tick(&a, &n, &err, &share, 0, 1);
	ok(isnan(bound_of(&a, CEEMS_DOMAIN_PACKAGE, CEEMS_ERR_PARTS)),
	   "a gap with no power known: unknown");

	/* Garbage never makes a bound negative or not a number. */
	ceems_energy_err_account_init(&a);
	share.covered[CEEMS_DOMAIN_PACKAGE] = true;
	share.used_part[CEEMS_DOMAIN_PACKAGE] = NAN;
	err.source_j[CEEMS_DOMAIN_PACKAGE] = -1;
	err.lag_j[CEEMS_DOMAIN_PACKAGE] = INFINITY;
	err.idle_w[CEEMS_DOMAIN_PACKAGE] = NAN;
	ceems_energy_err_add_tick(&a, &n, &err, &share, 0, 1);
	ceems_energy_err_add_tick(&a, &n, &err, &share, 0, NAN);
	j = total_of(&a);
	ok(j == 0, "garbage in: 0 J (%g)", j);
}

/* The report's JSON (measure_err.c) carries the bound and its parts
 * whole, and refuses what no agent writes. */
static void
test_json(void)
{
	static struct ceems_agent_job_report r, back;
	struct json_object *obj, *dom, *parts;
	char err[256] = "";
	double j;

	memset(&r, 0, sizeof(r));
	r.jobid = 7;
	r.ledger.lifetime_s = 10;
	r.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	r.ledger.measured[CEEMS_DOMAIN_NODE] = true;
	r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 10;
	r.ledger.covered_s[CEEMS_DOMAIN_NODE] = 10;
	r.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 2500;
	r.err.known = true;
	r.err.have[CEEMS_DOMAIN_PACKAGE] = true;
	for (int k = 0; k < CEEMS_ERR_PARTS; k++)
		r.err.part_j[CEEMS_DOMAIN_PACKAGE][k] = 1.5 * (k + 1);
	obj = ceems_measure_json_report_to_json(&r);
	if (!ok(obj != NULL, "a report with a bound encodes"))
		return;
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == 0,
	   "and decodes (%s)", err);
	ok(back.err.known && back.err.have[CEEMS_DOMAIN_PACKAGE] &&
	   !back.err.have[CEEMS_DOMAIN_NODE] &&
	   memcmp(back.err.part_j, r.err.part_j, sizeof(r.err.part_j)) == 0,
	   "the bound comes back whole; the node's, unknown, stays unknown");
	ok(ceems_energy_err_report_total(&back.err, &j) && j == 15,
	   "its total, 15 J");
	dom = json_object_object_get(json_object_object_get(obj, "ledger"),
				     "package");
	parts = json_object_object_get(dom, "err");
	json_object_object_add(parts, "gaps", json_object_new_double(-1));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "a negative part is refused (%s)", err);
	json_object_object_del(parts, "gaps");
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "a missing part is refused (%s)", err);
	json_object_object_add(dom, "err", json_object_new_string("3%"));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "an err that is no object is refused (%s)", err);
	json_object_put(obj);
	r.err.known = false;
	obj = ceems_measure_json_report_to_json(&r);
	ok(obj != NULL && ceems_measure_json_report_from_json(obj, &back, err,
							     sizeof(err)) == 0 &&
	   !back.err.known, "an unknown bound is written as none");
	json_object_put(obj);
}

int
main(void)
{
	/* The seed of the figures in doc/attribution.md. */
	sim_seed = 0x9e3779b97f4a7c15ULL;
	test_example();
	test_json();
	static const struct scenario scenarios[] = {
		{ .name = "counters, configured idle", .counters = true,
		  .gpu = true, .max_median_width = 0.001 },
		{ .name = "counters, learned idle", .counters = true,
		  .learned_idle = true, .max_median_width = 0.05 },
		{ .name = "BMC only", .bmc = true, .max_median_width = 0.10 },
		{ .name = "GPU power integrated", .counters = true,
		  .gpu = true, .gpu_integrated = true,
		  .max_median_width = 0.10 },
		{ .name = "package gaps", .counters = true, .gap_rate = 0.02,
		  .max_median_width = 0.20 },
		{ .name = "agent down, everything", .counters = true,
		  .bmc = true, .gpu = true, .gpu_integrated = true,
		  .learned_idle = true, .agent_down = true,
		  .max_median_width = 0.40 },
	};

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		check(&scenarios[i]);
	return done_testing();
}
