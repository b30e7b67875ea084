/* summary.c - the end-of-job summary: figures derived from the job's
 * metadata and the agent's report, the notes whose rules doc/summary.md
 * gives with their reasons, and the 80-column plain-text layout.
 *
 * Everything is computed once into struct figures, where each figure
 * carries whether it is known: a figure that was not measured is shown as
 * "not measured", never as 0 (ARCHITECTURE invariant 5), and no note is
 * built on it.  Strings from outside (user, account, node names, the
 * emission zone) are cleaned to printable ASCII and cut to a length, so
 * that nothing can break the layout or reach the terminal as a control
 * sequence. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "emissions.h"
#include "summary.h"

#define WIDTH 80		/* columns of every line */
#define LABEL_WIDTH 9		/* "Memory   " */
#define RIGHT_COL 54		/* where "efficiency NN%" starts */
#define HEADER_INDENT 8		/* continuation lines of the header */

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

/* Thresholds of the notes; doc/summary.md gives the reasons. */
#define MIN_JUDGE_S 60.0	/* shorter runs get no efficiency notes */
#define GPU_MIN_JUDGE_S 300.0	/* GPU start-up (driver, model load) */
#define CPU_UNDERUSE_MAX 0.50	/* efficiency at or below: note */
#define CPU_OVERUSE_MIN 1.10	/* efficiency above: note */
#define CPU_MARGIN 1.10		/* suggested cores = used x this */
#define MEM_UNDERUSE_MAX 0.25	/* peak below this share of the request */
#define MEM_MIN_REQUEST (2ULL << 30)	/* smaller requests: no note */
#define MEM_MIN_GIVEN_BACK GIB	/* and the change must free this much */
#define MEM_MARGIN 1.25		/* suggested --mem = peak x this */
#define MEM_MARGIN_SAMPLED 1.50	/* ... when the peak was only sampled */
#define MEM_OOM_RAISE 1.50	/* example --mem after an OOM kill */
#define TIME_LIMIT_RATIO 3.0	/* limit at least this x elapsed */
#define TIME_LIMIT_SLACK_S 3600.0	/* and at least this much unused */
#define GPU_IDLE_PCT 1.0	/* a device busier than this was used */
#define GPU_UNDERUSE_PCT 25.0
#define COVERAGE_FULL 0.995	/* below: the figure says its coverage */

/* No real job reaches these; a larger value is garbage in a report and
 * is treated as not measured rather than printed. */
#define MAX_PLAUSIBLE 1e15
#define MAX_BYTES (1ULL << 52)	/* 4 PiB */
#define MAX_CORES 1e6

struct figures {
	/* Identity, cleaned. */
	char jobid[32];
	char user[40];
	char account[40];
	char state[40];		/* "" unknown */
	char exit[40];		/* "exit 3", "signal 9"; "" for none */
	char nodes[72];		/* hostlist, cut */
	char node[40];		/* this node */
	uint32_t nnodes;
	bool have_report;
	/* COMPLETED, TIMEOUT, RUNNING or unknown: the run shows how the
	 * job behaves; other ends (FAILED, CANCELLED...) may not. */
	bool full_run;

	bool have_elapsed;	/* Slurm's elapsed time, else the agent's */
	double elapsed_s;
	bool have_observed;	/* time the agent accounted: elapsed - gaps */
	double observed_s;
	bool have_limit;
	double limit_s;

	bool have_held;
	unsigned int held;	/* cores held on this node */
	bool have_cpu;
	double used_cores;	/* CPU time / observed time */

	bool have_req;
	uint64_t req;		/* memory allocation on this node */
	bool have_peak;
	uint64_t peak;
	bool peak_sampled;
	bool oom;
	bool have_oom_kills;
	uint64_t oom_kills;
	bool hit_limit;

	bool measured[CEEMS_DOMAIN_COUNT];
	double joules[CEEMS_DOMAIN_COUNT];
	double static_j[CEEMS_DOMAIN_COUNT];
	bool any_energy;
	double total_j;
	bool partial;		/* some measured domain below full coverage */
	double cov_min, cov_max;

	bool have_carbon;
	double grams;
	struct ceems_emission_factor factor;
	char zone[12];
	bool factor_changed;
	bool carbon_partial;	/* fewer ticks had a factor than energy */
	double carbon_cov;

	unsigned int gpus_held;
	const struct ceems_summary_gpu *gpu;	/* NULL: no GPU figures */
};

/* ---- Small formatting helpers ---- */

static bool
usable(double x)
{
	return isfinite(x) && x >= 0 && x < MAX_PLAUSIBLE;
}

/* Append to a NUL-terminated BUF of SIZE bytes; silently cut. */
__attribute__((format(printf, 3, 4))) static void
appendf(char *buf, size_t size, const char *fmt, ...)
{
	size_t len = strnlen(buf, size);
	va_list ap;

	if (len + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, size - len, fmt, ap);
	va_end(ap);
}

/* Copy at most SRCMAX bytes of SRC (which need not be NUL-terminated)
 * into DST as printable ASCII: any other byte becomes '?'.  Longer than
 * KEEP characters, it is cut and ends in "...". */
static void
clean(char *dst, size_t size, const char *src, size_t srcmax, size_t keep)
{
	size_t n = strnlen(src, srcmax), i, o = 0;

	if (keep + 4 > size)
		keep = size - 4;
	for (i = 0; i < n && o < keep; i++) {
		unsigned char c = (unsigned char)src[i];

		dst[o++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	if (i < n) {
		memcpy(dst + o, "...", 3);
		o += 3;
	}
	dst[o] = '\0';
}

/* Slurm's [D-]HH:MM:SS. */
static void
fmt_duration(char *buf, size_t size, double s)
{
	unsigned long long t = (unsigned long long)llround(s < 0 ? 0 : s);
	unsigned long long d = t / 86400;

	t %= 86400;
	if (d > 0)
		snprintf(buf, size, "%llu-%02llu:%02llu:%02llu", d, t / 3600,
			 t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%02llu:%02llu:%02llu", t / 3600,
			 t / 60 % 60, t % 60);
}

enum energy_unit { UNIT_KWH, UNIT_WH, UNIT_J };

/* kWh from 0.01 kWh up, Wh from 1 Wh, J below. */
static enum energy_unit
energy_unit(double j)
{
	if (j >= 36000)
		return UNIT_KWH;
	if (j >= 3600)
		return UNIT_WH;
	return UNIT_J;
}

/* A measured amount too small for the unit reads "<0.01", not "0.00",
 * which would look like nothing; only a true 0 reads 0. */
static void
fmt_energy_in(char *buf, size_t size, double j, enum energy_unit u,
	      bool with_unit)
{
	static const double smallest[] = {
		[UNIT_KWH] = 0.005 * 3.6e6, [UNIT_WH] = 0.05 * 3600,
		[UNIT_J] = 0.5,
	};
	static const char *const below[] = {
		[UNIT_KWH] = "<0.01", [UNIT_WH] = "<0.1", [UNIT_J] = "<1",
	};
	static const char *const unit[] = {
		[UNIT_KWH] = " kWh", [UNIT_WH] = " Wh", [UNIT_J] = " J",
	};

	if (j > 0 && j < smallest[u]) {
		snprintf(buf, size, "%s%s", below[u], with_unit ? unit[u] : "");
		return;
	}
	switch (u) {
	case UNIT_KWH:
		snprintf(buf, size, "%.2f%s", j / 3.6e6, with_unit ? " kWh" : "");
		break;
	case UNIT_WH:
		snprintf(buf, size, "%.1f%s", j / 3600, with_unit ? " Wh" : "");
		break;
	case UNIT_J:
		snprintf(buf, size, "%.0f%s", j, with_unit ? " J" : "");
		break;
	}
}

static void
fmt_energy(char *buf, size_t size, double j)
{
	fmt_energy_in(buf, size, j, energy_unit(j), true);
}

static void
fmt_grams(char *buf, size_t size, double g)
{
	if (g >= 1000)
		snprintf(buf, size, "%.2f kg CO2e", g / 1000);
	else if (g >= 100)
		snprintf(buf, size, "%.0f g CO2e", g);
	else if (g >= 1)
		snprintf(buf, size, "%.1f g CO2e", g);
	else if (g >= 0.005 || g == 0)
		snprintf(buf, size, "%.2f g CO2e", g);
	else
		snprintf(buf, size, "<0.01 g CO2e");
}

static void
fmt_bytes(char *buf, size_t size, uint64_t b)
{
	if (b >= GIB)
		snprintf(buf, size, "%.1f GiB", (double)b / (double)GIB);
	else if (b >= MIB)
		snprintf(buf, size, "%.0f MiB", (double)b / (double)MIB);
	else
		snprintf(buf, size, "%.0f KiB", (double)b / 1024.0);
}

/* Round a memory size up to what one would type: multiples of 256 MiB
 * up to 1 GiB, whole GiB above.  Returns the bytes, TEXT gets "768M" or
 * "5G" for --mem. */
static uint64_t
round_mem(double bytes, char *text, size_t size)
{
	uint64_t r;

	if (bytes <= (double)GIB) {
		r = (uint64_t)ceil(bytes / (256.0 * MIB));
		if (r == 0)
			r = 1;
		snprintf(text, size, "%lluM", (unsigned long long)(r * 256));
		return r * 256 * MIB;
	}
	r = (uint64_t)ceil(bytes / (double)GIB);
	snprintf(text, size, "%lluG", (unsigned long long)r);
	return r * GIB;
}

/* Percent as an integer, rounded; floor for coverage so that a figure
 * that is not complete never reads 100%. */
static double
clamp_fraction(double fraction)
{
	/* Far beyond any real figure; keeps the conversion to int defined. */
	if (!(fraction > 0))
		return 0;
	return fraction < 1e6 ? fraction : 1e6;
}

static int
pct(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100 + 0.5);
}

/* A measured share that rounds to 0 reads "<1%", not "0%". */
static void
fmt_pct(char *buf, size_t size, double fraction)
{
	if (fraction > 0 && fraction < 0.005)
		snprintf(buf, size, "<1%%");
	else
		snprintf(buf, size, "%d%%", pct(fraction));
}

/* Cores used on average, one decimal; "<0.1" for a little but not 0. */
static void
fmt_cores(char *buf, size_t size, double cores)
{
	if (cores > 0 && cores < 0.05)
		snprintf(buf, size, "<0.1");
	else
		snprintf(buf, size, "%.1f", cores);
}

static int
pct_floor(double fraction)
{
	return (int)floor(clamp_fraction(fraction) * 100);
}

static bool
state_is(const struct figures *f, const char *state)
{
	return strcmp(f->state, state) == 0;
}

/* ---- Figures ---- */

static void
figures_identity(const struct ceems_job_meta *m, struct figures *f)
{
	if (m->array_job_id != CEEMS_UNKNOWN_U32 &&
	    m->array_task_id != CEEMS_UNKNOWN_U32)
		snprintf(f->jobid, sizeof(f->jobid), "%u_%u", m->array_job_id,
			 m->array_task_id);
	else
		snprintf(f->jobid, sizeof(f->jobid), "%u", m->jobid);
	if (strnlen(m->user, sizeof(m->user)) > 0)
		clean(f->user, sizeof(f->user), m->user, sizeof(m->user), 32);
	else
		snprintf(f->user, sizeof(f->user), "uid %u", m->uid);
	clean(f->account, sizeof(f->account), m->account, sizeof(m->account),
	      32);
	clean(f->state, sizeof(f->state), m->state, sizeof(m->state), 24);
	clean(f->nodes, sizeof(f->nodes), m->nodes, sizeof(m->nodes), 60);
	clean(f->node, sizeof(f->node), m->node, sizeof(m->node), 32);
	if (f->nodes[0] == '\0')
		memcpy(f->nodes, f->node, sizeof(f->node));
	f->nnodes = m->nnodes;

	f->exit[0] = '\0';
	if (m->exit_code > 0 && m->exit_signal > 0)
		snprintf(f->exit, sizeof(f->exit), "exit %d, signal %d",
			 m->exit_code, m->exit_signal);
	else if (m->exit_code > 0)
		snprintf(f->exit, sizeof(f->exit), "exit %d", m->exit_code);
	else if (m->exit_signal > 0)
		snprintf(f->exit, sizeof(f->exit), "signal %d", m->exit_signal);

	f->full_run = f->state[0] == '\0' || state_is(f, "COMPLETED") ||
		      state_is(f, "TIMEOUT") || state_is(f, "RUNNING");
}

static void
figures_time(const struct ceems_job_meta *m,
	     const struct ceems_agent_job_report *r, struct figures *f)
{
	if (m->start_time > 0 && m->end_time >= m->start_time) {
		f->have_elapsed = true;
		f->elapsed_s = (double)(m->end_time - m->start_time);
	} else if (r != NULL && usable(r->elapsed_s)) {
		f->have_elapsed = true;
		f->elapsed_s = r->elapsed_s;
	}
	/* Slurm's NO_VAL and INFINITE are the two values below it. */
	if (m->time_limit_min > 0 && m->time_limit_min < CEEMS_UNKNOWN_U32 - 1) {
		f->have_limit = true;
		f->limit_s = 60.0 * m->time_limit_min;
	}
	/* The agent adds CPU time only over the ticks it saw: the time it
	 * was down (gap_s) is left out of both sides of the ratio. */
	if (r != NULL && usable(r->elapsed_s) && usable(r->gap_s) &&
	    r->elapsed_s > r->gap_s) {
		f->have_observed = true;
		f->observed_s = r->elapsed_s - r->gap_s;
	}
}

static void
figures_usage(const struct ceems_job_meta *m,
	      const struct ceems_agent_job_report *r, struct figures *f)
{
	const struct ceems_cgroup_stats *u = r != NULL ? &r->usage : NULL;

	if (r != NULL && r->alloc_cores > 0) {
		f->have_held = true;
		f->held = r->alloc_cores;
	} else if (m->alloc_cpus > 0 && m->nnodes <= 1) {
		f->have_held = true;
		f->held = m->alloc_cpus;
	}
	/* No node has a million cores: more is garbage, not a figure.  A job
	 * shorter than a tick has its CPU time all the same: its cgroup was
	 * read when its step ended. */
	if (u != NULL && (u->present & CEEMS_CGF_CPU_USAGE) &&
	    usable(r->cpu_s) && f->have_observed && f->observed_s > 0 &&
	    r->cpu_s / f->observed_s < MAX_CORES) {
		f->have_cpu = true;
		f->used_cores = r->cpu_s / f->observed_s;
	}

	if (r != NULL && r->alloc_mem_bytes > 0 &&
	    r->alloc_mem_bytes < MAX_BYTES) {
		f->have_req = true;
		f->req = r->alloc_mem_bytes;
	} else if (m->req_mem_bytes > 0 && m->req_mem_bytes < MAX_BYTES &&
		   m->nnodes <= 1) {
		f->have_req = true;
		f->req = m->req_mem_bytes;
	}
	if (u != NULL && (u->present & CEEMS_CGF_MEM_PEAK) &&
	    u->mem_peak_bytes < MAX_BYTES) {
		f->have_peak = true;
		f->peak = u->mem_peak_bytes;
		f->peak_sampled = (u->flags & CEEMS_CGS_PEAK_SAMPLED) != 0;
	}
	if (u != NULL && (u->present & CEEMS_CGF_OOM_KILLS)) {
		f->have_oom_kills = true;
		f->oom_kills = u->oom_kills;
	}
	f->oom = (f->have_oom_kills && f->oom_kills > 0) ||
		 state_is(f, "OUT_OF_MEMORY");
	f->hit_limit = u != NULL && (u->present & CEEMS_CGF_MEM_FAILS) &&
		       u->mem_fail_count > 0;
}

static void
figures_energy(const struct ceems_agent_job_report *r, struct figures *f)
{
	const struct ceems_job_ledger *l;
	double lifetime;
	int d;

	if (r == NULL)
		return;
	l = &r->ledger;
	f->cov_min = 1;
	f->cov_max = 0;
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double c;

		/* A domain that covered none of the job's life measured
		 * nothing for it: not 0 J. */
		if (!l->measured[d] || !usable(l->joules[d]) ||
		    !usable(l->static_j[d]) || !(l->covered_s[d] > 0))
			continue;
		f->measured[d] = true;
		f->joules[d] = l->joules[d];
		f->static_j[d] = l->static_j[d];
		f->any_energy = true;
		f->total_j += l->joules[d];
		if (ceems_job_ledger_coverage(l, (enum ceems_energy_domain)d,
					      &c) && isfinite(c)) {
			if (c < f->cov_min)
				f->cov_min = c;
			if (c > f->cov_max)
				f->cov_max = c;
		}
	}
	if (!f->any_energy)
		return;
	f->partial = f->cov_min < COVERAGE_FULL;

	/* Emissions mean something only over measured energy. */
	if (l->have_emissions && usable(l->emissions_g) &&
	    ceems_emission_factor_valid(&l->factor)) {
		f->have_carbon = true;
		f->grams = l->emissions_g;
		f->factor = l->factor;
		clean(f->zone, sizeof(f->zone), l->factor.zone,
		      sizeof(l->factor.zone), 5);
		f->factor_changed = l->factor_changed;
		lifetime = l->lifetime_s;
		if (usable(lifetime) && lifetime > 0 &&
		    usable(l->emissions_covered_s)) {
			f->carbon_cov = l->emissions_covered_s / lifetime;
			if (f->carbon_cov > 1)
				f->carbon_cov = 1;
			f->carbon_partial = f->carbon_cov < COVERAGE_FULL &&
					    f->carbon_cov < f->cov_min - 0.005;
		}
	}
}

static void
figures_compute(const struct ceems_job_meta *m,
		const struct ceems_agent_job_report *r,
		const struct ceems_summary_gpu *gpu, struct figures *f)
{
	memset(f, 0, sizeof(*f));
	f->have_report = r != NULL;
	figures_identity(m, f);
	figures_time(m, r, f);
	figures_usage(m, r, f);
	figures_energy(r, f);
	if (gpu != NULL && gpu->ndevices > 0 &&
	    gpu->ndevices <= CEEMS_LEDGER_MAX_GPUS) {
		f->gpu = gpu;
		f->gpus_held = gpu->ndevices;
	} else {
		f->gpus_held = m->alloc_gpus;
	}
}

/* Efficiency notes need a run long enough to mean something, and the
 * agent's view of most of it. */
static bool
judged(const struct figures *f, double min_s)
{
	return f->have_elapsed && f->elapsed_s >= min_s && f->have_observed &&
	       f->observed_s >= min_s;
}

/* ---- Notes ---- */

static void
note_init(struct ceems_summary_note *n, const char *id)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->id, sizeof(n->id), "%s", id);
}

/* Record a saving of JOULES (when KNOWN) and append its wording:
 * "about 0.02 kWh (1.1 g CO2e)". */
static void
note_saving(struct ceems_summary_note *n, const struct figures *f,
	    double joules)
{
	char e[32], g[32];

	n->have_saving_j = true;
	n->saving_j = joules;
	fmt_energy(e, sizeof(e), joules);
	if (f->have_carbon) {
		n->have_saving_g = true;
		n->saving_g = ceems_emissions_grams(joules, &f->factor);
		fmt_grams(g, sizeof(g), n->saving_g);
		appendf(n->text, sizeof(n->text), "about %s (%s)", e, g);
	} else {
		appendf(n->text, sizeof(n->text), "about %s", e);
	}
}

/* A run that ended early may not show how the job behaves. */
static void
note_qualify(struct ceems_summary_note *n, const struct figures *f)
{
	if (!f->full_run)
		appendf(n->text, sizeof(n->text),
			" This run ended in state %s: check a complete run "
			"before changing the request.", f->state);
}

static bool
note_oom(const struct figures *f, struct ceems_summary_note *n)
{
	char lim[32], more[16];

	if (!f->oom)
		return false;
	note_init(n, "oom");
	if (f->have_oom_kills && f->oom_kills > 0) {
		if (f->oom_kills == 1)
			appendf(n->text, sizeof(n->text),
				"The job ran out of memory: the kernel killed "
				"one of its processes");
		else
			appendf(n->text, sizeof(n->text),
				"The job ran out of memory: the kernel killed "
				"%llu of its processes",
				(unsigned long long)f->oom_kills);
		if (f->have_req) {
			fmt_bytes(lim, sizeof(lim), f->req);
			appendf(n->text, sizeof(n->text), " at its %s limit",
				lim);
		}
		appendf(n->text, sizeof(n->text), ".");
	} else {
		appendf(n->text, sizeof(n->text), "The job ran out of memory.");
	}
	if (f->have_req) {
		round_mem((double)f->req * MEM_OOM_RAISE, more, sizeof(more));
		appendf(n->text, sizeof(n->text),
			" Ask for more with --mem (for example --mem=%s), or "
			"make it hold less in memory at once.", more);
	} else {
		appendf(n->text, sizeof(n->text),
			" Ask for more with --mem, or make it hold less in "
			"memory at once.");
	}
	return true;
}

static bool
note_timeout(const struct figures *f, struct ceems_summary_note *n)
{
	char lim[32];

	if (!state_is(f, "TIMEOUT"))
		return false;
	note_init(n, "timeout");
	appendf(n->text, sizeof(n->text), "The job reached its time limit");
	if (f->have_limit) {
		fmt_duration(lim, sizeof(lim), f->limit_s);
		appendf(n->text, sizeof(n->text), " of %s", lim);
	}
	appendf(n->text, sizeof(n->text),
		" and was stopped before it finished. If it needs longer, "
		"raise --time; if it can, have it save checkpoints so that a "
		"follow-up job can go on from there.");
	return true;
}

static bool
note_too_short(const struct figures *f, struct ceems_summary_note *n)
{
	char el[32];

	if (!f->have_elapsed || f->elapsed_s >= MIN_JUDGE_S)
		return false;
	note_init(n, "too-short");
	fmt_duration(el, sizeof(el), f->elapsed_s);
	appendf(n->text, sizeof(n->text),
		"The job ran for only %s, too short to judge how well it used "
		"what it held (ceems judges jobs of one minute or more).", el);
	/* Packing advice only fits jobs that did their work: a job that
	 * failed at once needs fixing, not packing. */
	if (state_is(f, "COMPLETED"))
		appendf(n->text, sizeof(n->text),
			" If you run many jobs this short, bundling several "
			"tasks into each job saves their start-up and "
			"scheduling time.");
	return true;
}

static bool
note_cpu_overuse(const struct figures *f, struct ceems_summary_note *n)
{
	unsigned int need;

	if (!judged(f, MIN_JUDGE_S) || !f->have_cpu || !f->have_held ||
	    f->used_cores <= f->held * CPU_OVERUSE_MIN)
		return false;
	need = (unsigned int)ceil(f->used_cores);
	note_init(n, "cpu-overuse");
	appendf(n->text, sizeof(n->text),
		"The job kept %.1f cores busy on average but held %u: it ran "
		"more threads or processes than the cores it asked for, which "
		"slows it and the jobs beside it. Ask for %u cores, or limit "
		"it to %u (for example OMP_NUM_THREADS=%u).",
		f->used_cores, f->held, need, f->held, f->held);
	return true;
}

static bool
note_cpu_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char used[16];
	double eff;
	unsigned int want;
	bool multi;

	if (!judged(f, MIN_JUDGE_S) || !f->have_cpu || !f->have_held ||
	    f->held < 2)
		return false;
	eff = f->used_cores / f->held;
	if (eff > CPU_UNDERUSE_MAX)
		return false;
	/* A margin over the average for bursts; a job that used at most
	 * one core on average is served by one. */
	if (f->used_cores <= 1.0)
		want = 1;
	else
		want = (unsigned int)ceil(f->used_cores * CPU_MARGIN);
	if (want >= f->held)
		return false;
	multi = f->nnodes > 1;
	note_init(n, "cpu-underuse");
	if (multi)
		appendf(n->text, sizeof(n->text), "On %s the job",
			f->node[0] ? f->node : "this node");
	else
		appendf(n->text, sizeof(n->text), "The job");
	fmt_cores(used, sizeof(used), f->used_cores);
	appendf(n->text, sizeof(n->text),
		" used %s of its %u cores on average. Asking for %u%s "
		"(--%s=%u for processes, or --cpus-per-task=%u for threads) "
		"would have ",
		used, f->held, want, multi ? " per node" : "",
		multi ? "ntasks-per-node" : "ntasks", want, want);
	if (f->measured[CEEMS_DOMAIN_PACKAGE]) {
		appendf(n->text, sizeof(n->text), "saved ");
		note_saving(n, f, f->static_j[CEEMS_DOMAIN_PACKAGE] *
				  (double)(f->held - want) / f->held);
		appendf(n->text, sizeof(n->text), "%s.",
			multi ? " on this node" : "");
	} else {
		appendf(n->text, sizeof(n->text),
			"left %u cores free for other jobs.", f->held - want);
	}
	note_qualify(n, f);
	return true;
}

static bool
note_mem_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char peak[32], req[32], sugg[16];
	double margin;
	uint64_t want;
	bool multi;

	if (!judged(f, MIN_JUDGE_S) || !f->have_req || !f->have_peak ||
	    f->req < MEM_MIN_REQUEST || f->oom || f->hit_limit ||
	    (double)f->peak >= (double)f->req * MEM_UNDERUSE_MAX)
		return false;
	margin = f->peak_sampled ? MEM_MARGIN_SAMPLED : MEM_MARGIN;
	want = round_mem((double)f->peak * margin, sugg, sizeof(sugg));
	if (want >= f->req || f->req - want < MEM_MIN_GIVEN_BACK)
		return false;
	multi = f->nnodes > 1;
	fmt_bytes(peak, sizeof(peak), f->peak);
	fmt_bytes(req, sizeof(req), f->req);
	note_init(n, "mem-underuse");
	if (multi)
		appendf(n->text, sizeof(n->text), "On %s the job's",
			f->node[0] ? f->node : "this node");
	else
		appendf(n->text, sizeof(n->text), "The job's");
	appendf(n->text, sizeof(n->text),
		" memory peaked at %s of the %s it held. --mem=%s%s would "
		"leave a %d%% margin%s and would have ",
		peak, req, sugg, multi ? " (per node)" : "",
		pct(margin - 1),
		f->peak_sampled ? " (the peak was sampled, hence the wider "
				  "margin)" : "");
	if (f->measured[CEEMS_DOMAIN_DRAM]) {
		appendf(n->text, sizeof(n->text), "saved ");
		note_saving(n, f, f->static_j[CEEMS_DOMAIN_DRAM] *
				  (double)(f->req - want) / (double)f->req);
		appendf(n->text, sizeof(n->text), "%s.",
			multi ? " on this node" : "");
	} else {
		fmt_bytes(req, sizeof(req), f->req - want);
		appendf(n->text, sizeof(n->text),
			"left %s free for other jobs.", req);
	}
	note_qualify(n, f);
	return true;
}

/* The GPU list of devices idle over the job: "GPU 1, GPU 3". */
static unsigned int
gpu_idle_list(const struct ceems_summary_gpu *g, char *buf, size_t size,
	      double *idle_j, bool *have_idle_j)
{
	unsigned int nidle = 0;

	buf[0] = '\0';
	*idle_j = 0;
	*have_idle_j = true;
	for (unsigned int i = 0; i < g->ndevices; i++) {
		const struct ceems_summary_gpu_device *d = &g->dev[i];

		if (!d->have_busy || !isfinite(d->busy_pct) ||
		    d->busy_pct < 0 || d->busy_pct >= GPU_IDLE_PCT)
			continue;
		/* Name a few devices; a node has at most 16. */
		if (nidle < 4 && d->index >= 0 && d->index < 1000)
			appendf(buf, size, "%sGPU %d", nidle ? ", " : "",
				d->index);
		else if (nidle < 4)
			appendf(buf, size, "%sGPU ?", nidle ? ", " : "");
		else if (nidle == 4)
			appendf(buf, size, ", ...");
		nidle++;
		if (d->have_energy && usable(d->energy_j))
			*idle_j += d->energy_j;
		else
			*have_idle_j = false;
	}
	return nidle;
}

static bool
note_gpu_idle(const struct figures *f, struct ceems_summary_note *n)
{
	char list[128];
	unsigned int nidle, held;
	double idle_j;
	bool have_j;

	if (f->gpu == NULL || !judged(f, GPU_MIN_JUDGE_S))
		return false;
	nidle = gpu_idle_list(f->gpu, list, sizeof(list), &idle_j, &have_j);
	if (nidle == 0)
		return false;
	held = f->gpu->ndevices;
	note_init(n, "gpu-idle");
	if (nidle == held) {
		appendf(n->text, sizeof(n->text),
			"The job did not use the %s it held. If it does not "
			"need one, leave out --gpus (or --gres=gpu); if it "
			"should have, check that it finds the GPU (the CUDA or "
			"ROCm module or container it loads).",
			held == 1 ? "GPU" : "GPUs");
	} else {
		appendf(n->text, sizeof(n->text),
			"The job did not use %u of its %u GPUs (%s). Asking "
			"for %u (--gpus=%u) would do.", nidle, held, list,
			held - nidle, held - nidle);
	}
	if (have_j) {
		appendf(n->text, sizeof(n->text),
			" Not holding %s would have saved ",
			nidle == 1 ? "it" : "them");
		note_saving(n, f, idle_j);
		appendf(n->text, sizeof(n->text), ".");
	}
	note_qualify(n, f);
	return true;
}

static bool
note_gpu_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char busy[16];
	double sum = 0;
	unsigned int nbusy = 0;

	if (f->gpu == NULL || !judged(f, GPU_MIN_JUDGE_S))
		return false;
	for (unsigned int i = 0; i < f->gpu->ndevices; i++) {
		const struct ceems_summary_gpu_device *d = &f->gpu->dev[i];

		if (!d->have_busy || !isfinite(d->busy_pct) ||
		    d->busy_pct < 0 || d->busy_pct > 100)
			continue;
		if (d->busy_pct < GPU_IDLE_PCT)
			return false;	/* gpu-idle says it better */
		sum += d->busy_pct;
		nbusy++;
	}
	if (nbusy == 0 || sum / nbusy >= GPU_UNDERUSE_PCT)
		return false;
	fmt_pct(busy, sizeof(busy), sum / nbusy / 100);
	note_init(n, "gpu-underuse");
	appendf(n->text, sizeof(n->text),
		"The job's %s busy %s of the time on average. GPUs often "
		"wait for data prepared on the CPU: more CPU workers for "
		"loading, larger batches, or a smaller GPU slice (MIG) where "
		"the cluster offers one would make better use of %s.",
		nbusy == 1 ? "GPU was" : "GPUs were", busy,
		nbusy == 1 ? "it" : "them");
	note_qualify(n, f);
	return true;
}

static bool
note_time_limit(const struct figures *f, struct ceems_summary_note *n)
{
	char el[32], lim[32], sugg[32];
	double want, step;

	/* Only a run that finished says how long the job needs. */
	if (!state_is(f, "COMPLETED") || !f->have_limit || !f->have_elapsed ||
	    f->elapsed_s < MIN_JUDGE_S ||
	    f->limit_s < f->elapsed_s * TIME_LIMIT_RATIO ||
	    f->limit_s - f->elapsed_s < TIME_LIMIT_SLACK_S)
		return false;
	want = f->elapsed_s * 1.5;
	if (want < f->elapsed_s + 600)
		want = f->elapsed_s + 600;
	step = want < 3600 ? 300 : want < 86400 ? 900 : 3600;
	want = ceil(want / step) * step;
	if (want >= f->limit_s)
		return false;
	fmt_duration(el, sizeof(el), f->elapsed_s);
	fmt_duration(lim, sizeof(lim), f->limit_s);
	fmt_duration(sugg, sizeof(sugg), want);
	note_init(n, "time-limit");
	appendf(n->text, sizeof(n->text),
		"The job ran %s of its %s time limit. If its runs take about "
		"as long, --time=%s would still leave a margin, and a shorter "
		"limit lets the scheduler start it sooner in gaps between "
		"other jobs (backfill).", el, lim, sugg);
	return true;
}

typedef bool (*note_rule)(const struct figures *, struct ceems_summary_note *);

/* Most important first. */
static const note_rule rules[] = {
	note_oom, note_timeout, note_too_short, note_cpu_overuse,
	note_cpu_underuse, note_mem_underuse, note_gpu_idle,
	note_gpu_underuse, note_time_limit,
};

static size_t
notes_build(const struct figures *f, struct ceems_summary_note *notes,
	    size_t max)
{
	size_t count = 0;
	bool explained = false;

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ceems_summary_note n;

		if (count >= max)
			break;
		/* An OOM kill or a timeout explains a short run better
		 * than "too short to judge" does. */
		if (rules[i] == note_too_short && explained)
			continue;
		if (!rules[i](f, &n))
			continue;
		if (rules[i] == note_oom || rules[i] == note_timeout)
			explained = true;
		notes[count++] = n;
	}
	return count;
}

int
ceems_summary_notes(const struct ceems_job_meta *meta,
		    const struct ceems_agent_job_report *report,
		    const struct ceems_summary_gpu *gpu,
		    struct ceems_summary_note *notes, size_t max)
{
	struct figures f;

	if (meta == NULL || (notes == NULL && max > 0))
		return -EINVAL;
	figures_compute(meta, report, gpu, &f);
	return (int)notes_build(&f, notes, max);
}

int
ceems_summary_style_parse(const char *text, enum ceems_summary_style *out)
{
	if (text == NULL || out == NULL)
		return -EINVAL;
	if (strcasecmp(text, "none") == 0)
		*out = CEEMS_SUMMARY_NONE;
	else if (strcasecmp(text, "short") == 0)
		*out = CEEMS_SUMMARY_SHORT;
	else if (strcasecmp(text, "full") == 0)
		*out = CEEMS_SUMMARY_FULL;
	else
		return -EINVAL;
	return 0;
}

/* ---- Layout ---- */

struct out {
	char *buf;
	size_t size;
	size_t len;
	bool overflow;
};

static void
put(struct out *o, const char *s, size_t n)
{
	if (o->overflow)
		return;
	if (o->len + n >= o->size) {
		o->overflow = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void
put_spaces(struct out *o, size_t n)
{
	static const char spaces[] = "                                        ";

	while (n > 0) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		put(o, spaces, k);
		n -= k;
	}
}

/* FIRST, then TEXT wrapped at WIDTH columns at spaces, later lines
 * indented by INDENT; a word longer than a line is cut. */
static void
put_wrapped(struct out *o, const char *first, size_t indent,
	    const char *text)
{
	const char *p = text;
	size_t col = strlen(first);

	put(o, first, col);
	for (;;) {
		size_t avail = WIDTH > col ? WIDTH - col : 1;
		size_t len = strlen(p), cut, seg;

		if (len <= avail) {
			cut = len;
		} else {
			cut = 0;
			for (size_t i = avail; i > 0; i--)
				if (p[i] == ' ') {
					cut = i;
					break;
				}
			if (cut == 0)
				cut = avail;
		}
		for (seg = cut; seg > 0 && p[seg - 1] == ' '; seg--)
			;
		put(o, p, seg);
		put(o, "\n", 1);
		p += cut;
		while (*p == ' ')
			p++;
		if (*p == '\0')
			break;
		put_spaces(o, indent);
		col = indent;
	}
}

/* "Label    text", wrapped under the text. */
static void
put_field(struct out *o, const char *label, const char *text)
{
	char first[LABEL_WIDTH + 1];

	snprintf(first, sizeof(first), "%-*s", LABEL_WIDTH, label);
	put_wrapped(o, first, LABEL_WIDTH, text);
}

/* "Label    left           efficiency  51%": RLABEL and FRACTION as a
 * percentage, aligned at RIGHT_COL when the line has room, else run on
 * after a comma. */
static void
put_field_right(struct out *o, const char *label, const char *left,
		const char *rlabel, double fraction)
{
	char text[256], value[16];
	size_t used = LABEL_WIDTH + strlen(left);

	fmt_pct(value, sizeof(value), fraction);
	if (used + 2 <= RIGHT_COL && RIGHT_COL + 16 <= WIDTH)
		snprintf(text, sizeof(text), "%s%*s%-11s%4s", left,
			 (int)(RIGHT_COL - used), "", rlabel, value);
	else
		snprintf(text, sizeof(text), "%s, %s %s", left, rlabel, value);
	put_field(o, label, text);
}

static void
put_header(struct out *o, const struct figures *f)
{
	char text[320], el[32];

	snprintf(text, sizeof(text), "job %s (%s%s%s)", f->jobid, f->user,
		 f->account[0] ? ", " : "", f->account);
	if (f->state[0])
		appendf(text, sizeof(text), " %s", f->state);
	if (f->exit[0])
		appendf(text, sizeof(text), " (%s)", f->exit);
	if (f->have_elapsed) {
		fmt_duration(el, sizeof(el), f->elapsed_s);
		appendf(text, sizeof(text), " %s %s",
			f->state[0] ? "in" : "ran for", el);
	}
	if (f->nodes[0])
		appendf(text, sizeof(text), " on %s", f->nodes);
	put_wrapped(o, "ceems - ", HEADER_INDENT, text);
}

static void
put_cpu(struct out *o, const struct figures *f)
{
	char left[128], used[16];

	fmt_cores(used, sizeof(used), f->used_cores);
	if (f->have_held && f->have_cpu) {
		snprintf(left, sizeof(left), "%u core%s held, %s used on average",
			 f->held, f->held == 1 ? "" : "s", used);
		put_field_right(o, "CPU", left, "efficiency",
				f->used_cores / f->held);
		return;
	}
	if (f->have_held)
		snprintf(left, sizeof(left), "%u core%s held, use not measured",
			 f->held, f->held == 1 ? "" : "s");
	else if (f->have_cpu)
		snprintf(left, sizeof(left),
			 "%s cores used on average, cores held not known",
			 used);
	else
		snprintf(left, sizeof(left), "not measured");
	put_field(o, "CPU", left);
}

static void
put_memory(struct out *o, const struct figures *f)
{
	char left[128], req[32], peak[32];

	fmt_bytes(req, sizeof(req), f->req);
	fmt_bytes(peak, sizeof(peak), f->peak);
	if (f->have_req && f->have_peak) {
		snprintf(left, sizeof(left), "%s requested, %s peak%s", req,
			 peak, f->peak_sampled ? " (sampled)" : "");
		put_field_right(o, "Memory", left, "used",
				(double)f->peak / (double)f->req);
		return;
	}
	if (f->have_req)
		snprintf(left, sizeof(left), "%s requested, peak not measured",
			 req);
	else if (f->have_peak)
		snprintf(left, sizeof(left), "%s peak%s, request not known",
			 peak, f->peak_sampled ? " (sampled)" : "");
	else
		snprintf(left, sizeof(left), "not measured");
	put_field(o, "Memory", left);
}

static bool
gpu_part_shown(const struct figures *f)
{
	return f->gpus_held > 0 ||
	       (f->measured[CEEMS_DOMAIN_GPU] &&
		f->joules[CEEMS_DOMAIN_GPU] > 0);
}

static void
put_gpu(struct out *o, const struct figures *f)
{
	char left[128], list[128];
	double sum = 0, idle_j;
	unsigned int nbusy = 0, nidle;
	bool have_j;

	if (f->gpus_held == 0)
		return;
	if (f->gpu == NULL) {
		snprintf(left, sizeof(left), "%u held, use not measured",
			 f->gpus_held);
		put_field(o, "GPU", left);
		return;
	}
	for (unsigned int i = 0; i < f->gpu->ndevices; i++) {
		const struct ceems_summary_gpu_device *d = &f->gpu->dev[i];

		if (d->have_busy && isfinite(d->busy_pct) &&
		    d->busy_pct >= 0 && d->busy_pct <= 100) {
			sum += d->busy_pct;
			nbusy++;
		}
	}
	nidle = gpu_idle_list(f->gpu, list, sizeof(list), &idle_j, &have_j);
	if (nbusy == 0) {
		snprintf(left, sizeof(left), "%u held, use not measured",
			 f->gpus_held);
		put_field(o, "GPU", left);
		return;
	}
	snprintf(left, sizeof(left), "%u held", f->gpus_held);
	if (nidle > 0)
		appendf(left, sizeof(left), ", %u idle (%s)", nidle, list);
	if (nbusy < f->gpu->ndevices)
		appendf(left, sizeof(left), ", %u not measured",
			f->gpu->ndevices - nbusy);
	put_field_right(o, "GPU", left, "busy", sum / nbusy / 100);
}

static void
put_energy(struct out *o, const struct figures *f)
{
	static const char *const names[CEEMS_DOMAIN_COUNT] = {
		[CEEMS_DOMAIN_PACKAGE] = "CPU",
		[CEEMS_DOMAIN_DRAM] = "DRAM",
		[CEEMS_DOMAIN_GPU] = "GPU",
		[CEEMS_DOMAIN_NODE] = "other",
	};
	char text[320], v[32], missing[64] = "";
	enum energy_unit u;
	bool first = true;
	int d;

	if (!f->have_report) {
		put_field(o, "Energy",
			  "not measured (no report from the node agent)");
		return;
	}
	if (!f->any_energy) {
		put_field(o, "Energy",
			  "not measured (this node has no energy source)");
		return;
	}
	u = energy_unit(f->total_j);
	fmt_energy_in(text, sizeof(text), f->total_j, u, true);
	appendf(text, sizeof(text), "  (");
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (d == CEEMS_DOMAIN_GPU && !gpu_part_shown(f))
			continue;
		if (!f->measured[d]) {
			appendf(missing, sizeof(missing), "%s%s",
				missing[0] ? ", " : "", names[d]);
			continue;
		}
		fmt_energy_in(v, sizeof(v), f->joules[d], u, false);
		appendf(text, sizeof(text), "%s%s %s", first ? "" : ", ",
			names[d], v);
		first = false;
	}
	if (missing[0])
		appendf(text, sizeof(text), "; %s not measured", missing);
	appendf(text, sizeof(text), ")");
	if (f->partial) {
		if (pct_floor(f->cov_min) == pct_floor(f->cov_max))
			appendf(text, sizeof(text),
				"; energy covers %d%% of the job",
				pct_floor(f->cov_min));
		else
			appendf(text, sizeof(text),
				"; energy covers %d%% to %d%% of the job",
				pct_floor(f->cov_min), pct_floor(f->cov_max));
	}
	put_field(o, "Energy", text);
}

static void
put_carbon(struct out *o, const struct figures *f)
{
	char text[256];

	if (!f->any_energy) {
		put_field(o, "Carbon", "not computed (no energy measured)");
		return;
	}
	if (!f->have_carbon) {
		put_field(o, "Carbon", "not computed (no emission zone "
				       "configured for this node)");
		return;
	}
	fmt_grams(text, sizeof(text), f->grams);
	appendf(text, sizeof(text), "  (%s %d, %.0f g/kWh, PUE %.2f%s)",
		f->zone, f->factor.year, f->factor.g_per_kwh, f->factor.pue,
		f->factor_changed ? ", first of several factors" : "");
	if (f->carbon_partial)
		appendf(text, sizeof(text), "; covers %d%% of the job",
			pct_floor(f->carbon_cov));
	put_field(o, "Carbon", text);
}

static void
format_full(struct out *o, const struct figures *f,
	    const struct ceems_summary_note *notes, size_t nnotes)
{
	char text[160];

	put_header(o, f);
	if (f->nnodes > 1) {
		snprintf(text, sizeof(text),
			 "figures from %s only; the job ran on %u nodes",
			 f->node[0] ? f->node : "this node", f->nnodes);
		put_field(o, "Scope", text);
	}
	put_cpu(o, f);
	put_memory(o, f);
	put_gpu(o, f);
	put_energy(o, f);
	put_carbon(o, f);
	for (size_t i = 0; i < nnotes; i++)
		put_field(o, "Note", notes[i].text);
}

/* One line: the identity always, then as many figures as fit in
 * WIDTH, in order of importance, printed in their natural order. */
static void
format_short(struct out *o, const struct figures *f,
	     const struct ceems_summary_note *notes, size_t nnotes)
{
	enum { CPU, MEM, ENERGY, CARBON, NOTES, NITEMS };
	static const int priority[NITEMS] = { CPU, ENERGY, CARBON, NOTES, MEM };
	char item[NITEMS][96], line[WIDTH + 64], el[32], pc[16];
	bool take[NITEMS] = { false }, first = true;
	size_t len;

	snprintf(line, sizeof(line), "ceems: job %s", f->jobid);
	if (f->state[0])
		appendf(line, sizeof(line), " %s", f->state);
	if (f->exit[0])
		appendf(line, sizeof(line), " (%s)", f->exit);
	if (f->have_elapsed) {
		fmt_duration(el, sizeof(el), f->elapsed_s);
		appendf(line, sizeof(line), " %s", el);
	}

	for (int i = 0; i < NITEMS; i++)
		item[i][0] = '\0';
	if (f->have_cpu && f->have_held) {
		fmt_pct(pc, sizeof(pc), f->used_cores / f->held);
		snprintf(item[CPU], sizeof(item[CPU]), "CPU %s of %u", pc,
			 f->held);
	} else {
		snprintf(item[CPU], sizeof(item[CPU]), "CPU not measured");
	}
	if (f->have_peak && f->have_req) {
		fmt_pct(pc, sizeof(pc), (double)f->peak / (double)f->req);
		snprintf(item[MEM], sizeof(item[MEM]), "mem %s", pc);
	}
	if (f->any_energy) {
		fmt_energy(item[ENERGY], sizeof(item[ENERGY]), f->total_j);
		if (f->partial)
			appendf(item[ENERGY], sizeof(item[ENERGY]),
				" (covers %d%%)", pct_floor(f->cov_min));
	} else {
		snprintf(item[ENERGY], sizeof(item[ENERGY]),
			 "energy not measured");
	}
	if (f->have_carbon)
		fmt_grams(item[CARBON], sizeof(item[CARBON]), f->grams);
	if (nnotes > 0) {
		snprintf(item[NOTES], sizeof(item[NOTES]), "note%s:",
			 nnotes == 1 ? "" : "s");
		for (size_t i = 0; i < nnotes; i++)
			appendf(item[NOTES], sizeof(item[NOTES]), "%s%s",
				i ? "," : " ", notes[i].id);
	}

	/* Choose by priority what fits: ", " before each item. */
	len = strlen(line);
	for (int k = 0; k < NITEMS; k++) {
		int i = priority[k];
		size_t n = strlen(item[i]);

		/* The note ids, or else their number. */
		if (i == NOTES && n > 0 && len + 2 + n > WIDTH) {
			snprintf(item[NOTES], sizeof(item[NOTES]), "%zu note%s",
				 nnotes, nnotes == 1 ? "" : "s");
			n = strlen(item[NOTES]);
		}
		if (n > 0 && len + 2 + n <= WIDTH) {
			take[i] = true;
			len += 2 + n;
		}
	}
	for (int i = 0; i < NITEMS; i++) {
		if (!take[i])
			continue;
		appendf(line, sizeof(line), "%s %s", first ? ":" : ",",
			item[i]);
		first = false;
	}
	/* Only absurd identities (garbage in a record) get here. */
	if (strlen(line) > WIDTH)
		memcpy(line + WIDTH - 3, "...", 4);
	put(o, line, strlen(line));
	put(o, "\n", 1);
}

int
ceems_summary_format(const struct ceems_job_meta *meta,
		     const struct ceems_agent_job_report *report,
		     const struct ceems_summary_gpu *gpu,
		     enum ceems_summary_style style, char *buf, size_t size)
{
	struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES];
	struct figures f;
	struct out o = { buf, size, 0, false };
	size_t nnotes;

	if (meta == NULL || buf == NULL || size == 0)
		return -EINVAL;
	buf[0] = '\0';
	switch (style) {
	case CEEMS_SUMMARY_NONE:
		return 0;
	case CEEMS_SUMMARY_SHORT:
	case CEEMS_SUMMARY_FULL:
		break;
	default:
		return -EINVAL;
	}
	figures_compute(meta, report, gpu, &f);
	nnotes = notes_build(&f, notes, CEEMS_SUMMARY_MAX_NOTES);
	if (style == CEEMS_SUMMARY_FULL)
		format_full(&o, &f, notes, nnotes);
	else
		format_short(&o, &f, notes, nnotes);
	if (o.overflow) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}
