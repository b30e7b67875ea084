/* summary_notes.c - the notes of the end-of-job summary: which note
 * fires when, under which thresholds, and what it suggests.  The rules
 * and their reasons are in doc/summary.md.
 *
 * Separate from the layout because the notes are also an API of their
 * own (ceems_summary_notes), and because tuning a rule should not mean
 * reading the column arithmetic. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/emissions.h"

#include "base/conf.h"
#include "summary/summary_internal.h"

/* Thresholds of the notes; doc/summary.md gives the reasons. */
#define MIN_JUDGE_S 60.0	/* shorter runs get no efficiency notes */
/* GPU start-up (driver, model load): summary_gpu_min_time. */
static double gpu_min_judge_s = (double)CEEMS_SUMMARY_GPU_MIN_S;
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
#define GPU_UNDERUSE_PCT 25.0
#define COVERAGE_FULL 0.995	/* below: the figure says its coverage */
#define FAULTS_PER_CPU_S 100000.0	/* page faults per CPU-second: note */
#define FAULTS_MIN_CPU_S 10.0	/* less CPU time: no note */
#define OOM_REACHED 0.90	/* peak at least this share of the limit */
#define TAIL_BUSY 0.50		/* last minute busy as this share of the run */
#define TAIL_IDLE_CORES 0.05	/* below: no CPU to speak of at the end */
#define NODE_IDLE_USE 0.01	/* a whole job's node below: it idled */

/* Round a memory size up to what one would type: multiples of 256 MiB
 * up to 1 GiB, whole GiB above.  Returns the bytes, TEXT gets "768M" or
 * "5G" for --mem (22 bytes hold the largest). */
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

/* Efficiency notes need a run long enough to mean something, and the
 * agent's view of most of it. */
static bool
judged(const struct figures *f, double min_s)
{
	return f->have_elapsed && f->elapsed_s >= min_s && f->have_observed &&
	       f->observed_s >= min_s;
}

void
ceems_summary_notes_set_gpu_min_time(uint64_t ns)
{
	gpu_min_judge_s = (double)ns / 1e9;
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
	ceems_units_fmt_energy(e, sizeof(e), joules);
	if (f->have_carbon) {
		n->have_saving_g = true;
		n->saving_g = ceems_job_figures_emissions_grams(joules, &f->factor);
		ceems_units_fmt_grams(g, sizeof(g), n->saving_g, " CO2e");
		ceems_summary_units_appendf(n->text, sizeof(n->text), "about %s (%s)", e,
			g);
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text), "about %s", e);
	}
}

/* A run that ended early may not show how the job behaves. */
static void
note_qualify(struct ceems_summary_note *n, const struct figures *f)
{
	if (!f->full_run)
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" This run ended in state %s: check a complete run "
			"before changing the request.", f->state);
}

/* What the peak says of an OOM kill: the job reached its limit, or it
 * was killed under it (a step's own --mem, or memory the peak misses). */
static void
note_oom_peak(const struct figures *f, struct ceems_summary_note *n)
{
	char peak[32];

	if (!f->have_peak || !f->have_req)
		return;
	ceems_summary_units_fmt_bytes(peak, sizeof(peak), f->peak);
	if ((double)f->peak >= OOM_REACHED * (double)f->req)
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Its memory reached %s%s.", peak,
			f->peak_sampled ? " in the samples taken" : "");
	else if (f->peak_sampled)
		/* Samples miss the spike a fast kill follows: no claim. */
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" The samples taken saw at most %s.", peak);
	else
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Its peak of %s stayed under the job's limit: the "
			"kill came from a smaller limit (a step's own --mem).",
			peak);
}

static bool
note_oom(const struct figures *f, struct ceems_summary_note *n)
{
	char lim[32], more[24];

	if (!f->oom)
		return false;
	note_init(n, "oom");
	if (f->have_oom_kills && f->oom_kills > 0) {
		if (f->oom_kills == 1)
			ceems_summary_units_appendf(n->text, sizeof(n->text),
				"The job ran out of memory: the kernel killed "
				"one of its processes");
		else
			ceems_summary_units_appendf(n->text, sizeof(n->text),
				"The job ran out of memory: the kernel killed "
				"%llu of its processes",
				(unsigned long long)f->oom_kills);
		if (f->have_req) {
			ceems_summary_units_fmt_bytes(lim, sizeof(lim), f->req);
			ceems_summary_units_appendf(n->text, sizeof(n->text),
				" at its %s limit",
				lim);
		}
		ceems_summary_units_appendf(n->text, sizeof(n->text), ".");
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"The job ran out of memory.");
	}
	note_oom_peak(f, n);
	if (f->have_req) {
		round_mem((double)f->req * MEM_OOM_RAISE, more, sizeof(more));
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Ask for more with --mem (for example --mem=%s), or "
			"make it hold less in memory at once.", more);
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Ask for more with --mem, or make it hold less in "
			"memory at once.");
	}
	return true;
}

/* Whether a timed-out job was still working at its end: the cores it
 * used over its last minute or two.  Said only where the CPU tells it:
 * a GPU job's CPU may idle while its GPUs work. */
static void
note_timeout_tail(const struct figures *f, struct ceems_summary_note *n)
{
	char span[32], used[32];

	if (!f->have_tail || f->gpus_held > 0)
		return;
	ceems_summary_units_fmt_duration(span, sizeof(span), f->tail_s);
	ceems_summary_units_fmt_cores(used, sizeof(used), f->tail_cores);
	if (f->tail_cores < TAIL_IDLE_CORES)
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Over its last %s it used almost no CPU (%s cores): it "
			"was waiting or stuck rather than working, so more "
			"time may not help; find out what it waited for.",
			span, used);
	else if (f->have_cpu && f->tail_cores >= TAIL_BUSY * f->used_cores)
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" It was still working when stopped: %s cores busy "
			"over its last %s.", used, span);
}

static bool
note_timeout(const struct figures *f, struct ceems_summary_note *n)
{
	char lim[32], el[32];

	if (!ceems_summary_figures_state_is(f, "TIMEOUT"))
		return false;
	note_init(n, "timeout");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job reached its time limit");
	if (f->have_limit) {
		ceems_summary_units_fmt_duration(lim, sizeof(lim), f->limit_s);
		ceems_summary_units_appendf(n->text, sizeof(n->text), " of %s", lim);
	}
	/* Its run is the limit, unless Slurm's kill came late. */
	if (f->have_elapsed &&
	    (!f->have_limit || fabs(f->elapsed_s - f->limit_s) >= 60)) {
		ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" after running %s", el);
	}
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		" and was stopped before it finished.");
	note_timeout_tail(f, n);
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		" If it needs longer, raise --time; if it can, have it save "
		"checkpoints so that a follow-up job can go on from there.");
	return true;
}

/* Whether the state begins with WORD ("CANCELLED by 1000"). */
static bool
state_begins(const struct figures *f, const char *word)
{
	size_t n = strlen(word);

	return strncmp(f->state, word, n) == 0 &&
	       (f->state[n] == '\0' || f->state[n] == ' ');
}

/* "after 00:02:13" when the run's length is known, else "". */
static void
fmt_after(const struct figures *f, char *buf, size_t size)
{
	char el[32];

	buf[0] = '\0';
	if (!f->have_elapsed)
		return;
	ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
	snprintf(buf, size, " after %s", el);
}

static bool
note_cancelled(const struct figures *f, struct ceems_summary_note *n)
{
	char after[48];

	if (!state_begins(f, "CANCELLED"))
		return false;
	note_init(n, "cancelled");
	fmt_after(f, after, sizeof(after));
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job was cancelled%s, before it finished: its figures "
		"cover the part it ran.", after);
	return true;
}

static bool
note_node_fail(const struct figures *f, struct ceems_summary_note *n)
{
	char after[48];

	if (!state_begins(f, "NODE_FAIL"))
		return false;
	note_init(n, "node-fail");
	fmt_after(f, after, sizeof(after));
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"A node of the job failed%s (Slurm lost it or took it out of "
		"service), so the job was stopped: nothing in the job caused "
		"it. Its figures cover what was measured until then. Jobs "
		"submitted with --requeue are started again.", after);
	return true;
}

static bool
note_requeued(const struct figures *f, struct ceems_summary_note *n)
{
	char after[48];

	if (!state_begins(f, "REQUEUED"))
		return false;
	note_init(n, "requeued");
	fmt_after(f, after, sizeof(after));
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"Slurm requeued the job%s (scontrol requeue, a node failure or "
		"a preemption): this run was stopped and the job will run "
		"again. These figures are this run's; the next run gets a "
		"summary of its own.", after);
	return true;
}

static bool
note_preempted(const struct figures *f, struct ceems_summary_note *n)
{
	char after[48];

	if (!state_begins(f, "PREEMPTED"))
		return false;
	note_init(n, "preempted");
	fmt_after(f, after, sizeof(after));
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job was preempted%s to make room for a job of higher "
		"priority; nothing in the job caused it. Its figures cover "
		"the part it ran. Where the partition requeues preempted jobs "
		"it starts again; saving checkpoints keeps its work.", after);
	return true;
}

static bool
note_too_short(const struct figures *f, struct ceems_summary_note *n)
{
	char el[32];

	if (!f->have_elapsed || f->elapsed_s >= MIN_JUDGE_S)
		return false;
	note_init(n, "too-short");
	ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job ran for only %s, too short to judge how well it used "
		"what it held (ceems judges jobs of one minute or more).", el);
	/* Packing advice only fits jobs that did their work: a job that
	 * failed at once needs fixing, not packing. */
	if (ceems_summary_figures_state_is(f, "COMPLETED"))
		ceems_summary_units_appendf(n->text, sizeof(n->text),
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
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job kept %.1f cores busy on average but held %u: it ran "
		"more threads or processes than the cores it asked for, which "
		"slows it and the jobs beside it. Ask for %u cores, or limit "
		"it to %u (for example OMP_NUM_THREADS=%u).",
		f->used_cores, f->held, need, f->held, f->held);
	return true;
}

/* The nodes a whole job's figures are summed over: 1 otherwise. */
static unsigned int
parts_of(const struct figures *f)
{
	return f->whole && f->nmeasured > 0 ? f->nmeasured : 1;
}

/* "On node01 the job", "Over its 3 nodes the job" or "The job". */
static void
note_subject(struct ceems_summary_note *n, const struct figures *f,
	     const char *what)
{
	if (f->whole && parts_of(f) > 1)
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"Over its %u nodes the %s", parts_of(f), what);
	else if (f->nnodes > 1)
		ceems_summary_units_appendf(n->text, sizeof(n->text), "On %s the %s",
			f->node[0] ? f->node : "this node", what);
	else
		ceems_summary_units_appendf(n->text, sizeof(n->text), "The %s",
					    what);
}

/* Of a whole job's nodes, the most cores one used on average (*USED) and
 * the fewest one held (*HELD): false when some node's CPU use is not
 * known, or some node idled (node-idle says what to change then). */
static bool
busiest_node(const struct figures *f, double *used, unsigned int *held)
{
	struct figures nf;

	*used = 0;
	*held = UINT32_MAX;
	for (unsigned int i = 0; i < f->nparts; i++) {
		if (f->parts[i].report == NULL)
			continue;
		ceems_summary_figures_node(f, &f->parts[i], &nf);
		if (!nf.have_cpu || !nf.have_held ||
		    nf.used_cores < NODE_IDLE_USE * nf.held)
			return false;
		if (nf.used_cores > *used)
			*used = nf.used_cores;
		if (nf.held < *held)
			*held = nf.held;
	}
	return *held != UINT32_MAX;
}

static bool
note_cpu_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char used[16];
	unsigned int want, held, parts = parts_of(f);
	double eff, per_node;
	bool multi;

	if (!judged(f, MIN_JUDGE_S) || !f->have_cpu || !f->have_held ||
	    f->held < 2 * parts)
		return false;
	eff = f->used_cores / f->held;
	if (eff > CPU_UNDERUSE_MAX)
		return false;
	/* Per node: a whole job's figures are summed over its nodes; the
	 * count per node must serve the busiest. */
	held = f->held / parts;
	per_node = f->used_cores / parts;
	if (parts > 1 && !busiest_node(f, &per_node, &held))
		return false;
	/* A margin over the average for bursts; a job that used at most
	 * one core on average is served by one. */
	if (per_node <= 1.0)
		want = 1;
	else
		want = (unsigned int)ceil(per_node * CPU_MARGIN);
	if (want >= held)
		return false;
	multi = f->nnodes > 1;
	note_init(n, "cpu-underuse");
	note_subject(n, f, "job");
	ceems_summary_units_fmt_cores(used, sizeof(used), f->used_cores);
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		" used %s of its %u cores on average. Asking for %u%s "
		"(--%s=%u for processes, or --cpus-per-task=%u for threads) "
		"would have ",
		used, f->held, want, multi ? " per node" : "",
		multi ? "ntasks-per-node" : "ntasks", want, want);
	if (f->measured[CEEMS_DOMAIN_PACKAGE]) {
		ceems_summary_units_appendf(n->text, sizeof(n->text), "saved ");
		note_saving(n, f, f->static_j[CEEMS_DOMAIN_PACKAGE] *
				  (double)(held - want) / held);
		ceems_summary_units_appendf(n->text, sizeof(n->text), "%s.",
			multi && !f->whole ? " on this node" : "");
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"left %u cores free for other jobs.",
			(held - want) * parts);
	}
	note_qualify(n, f);
	return true;
}

/* The nodes of a whole job that held cores and used none of them (under
 * NODE_IDLE_USE): one note for all, or, when all but one did nothing,
 * a note that one node would have done. */
static bool
note_node_idle(const struct figures *f, struct ceems_summary_note *n)
{
	struct figures nf;
	unsigned int judged_nodes = 0, idle = 0, cores = 0;
	char names[128] = "", busy[40] = "", name[40];
	double joules = 0;
	bool have_j = true;

	if (!f->whole || f->nmeasured < 2)
		return false;
	for (unsigned int i = 0; i < f->nparts; i++) {
		if (f->parts[i].report == NULL)
			continue;
		ceems_summary_figures_node(f, &f->parts[i], &nf);
		if (!judged(&nf, MIN_JUDGE_S) || !nf.have_cpu || !nf.have_held)
			continue;
		judged_nodes++;
		ceems_summary_figures_clean(name, sizeof(name),
					    f->parts[i].name, 32);
		if (nf.used_cores >= NODE_IDLE_USE * nf.held) {
			memcpy(busy, name, sizeof(busy));
			continue;
		}
		if (idle < 3)
			ceems_summary_units_appendf(names, sizeof(names), "%s%s",
						    idle ? ", " : "", name);
		else if (idle == 3)
			ceems_summary_units_appendf(names, sizeof(names), ", ...");
		idle++;
		cores += nf.held;
		if (nf.any_energy)
			joules += nf.total_j;
		else
			have_j = false;
	}
	if (idle == 0)
		return false;
	if (idle + 1 == judged_nodes && judged_nodes == f->nparts) {
		note_init(n, "one-node-used");
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"Only %s worked: the job's other %u node%s (%s) held "
			"%u cores and used almost none of them. Run it on one node "
			"(--nodes=1)", busy, idle, idle == 1 ? "" : "s", names,
			cores);
	} else {
		note_init(n, "node-idle");
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"%u of the job's nodes (%s) held %u cores and used "
			"almost none of them. Give every node work (srun's "
			"--ntasks-per-node, the launcher's host list) or ask for "
			"fewer nodes", idle, names, cores);
	}
	if (have_j) {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"; their share of those nodes' power was ");
		note_saving(n, f, joules);
	}
	ceems_summary_units_appendf(n->text, sizeof(n->text), ".");
	note_qualify(n, f);
	return true;
}

/* A whole job whose memory peak on one node is several times that of
 * every other: --mem is per node, so the others held what one needed. */
#define MEM_UNEVEN_RATIO 4.0
static bool
note_mem_uneven(const struct figures *f, struct ceems_summary_note *n)
{
	struct figures nf;
	uint64_t top = 0, second = 0, req = 0, want;
	double static_j = 0;
	bool have_j = true;
	char top_name[40] = "", a[32], b[32], sugg[24];
	unsigned int judged_nodes = 0;

	/* Every node's figures: one without may be the one that needed
	 * the memory. */
	if (!f->whole || f->nmeasured < 2 || f->nmeasured < f->nparts)
		return false;
	for (unsigned int i = 0; i < f->nparts; i++) {
		ceems_summary_figures_node(f, &f->parts[i], &nf);
		if (!judged(&nf, MIN_JUDGE_S) || !nf.have_peak || !nf.have_req ||
		    nf.oom || nf.hit_limit)
			return false;
		judged_nodes++;
		if (nf.req > req)
			req = nf.req;
		if (nf.peak > top) {
			second = top;
			top = nf.peak;
			ceems_summary_figures_clean(top_name, sizeof(top_name),
						    f->parts[i].name, 32);
		} else if (nf.peak > second) {
			second = nf.peak;
		}
	}
	if (judged_nodes < 2 || top < MEM_MIN_GIVEN_BACK ||
	    (double)second * MEM_UNEVEN_RATIO > (double)top)
		return false;
	want = round_mem((double)second * MEM_MARGIN, sugg, sizeof(sugg));
	if (want >= req || req - want < MEM_MIN_GIVEN_BACK)
		return false;
	/* What the other nodes' held memory was charged beyond WANT. */
	for (unsigned int i = 0; i < f->nparts; i++) {
		if (f->parts[i].report == NULL)
			continue;
		ceems_summary_figures_node(f, &f->parts[i], &nf);
		if (nf.peak == top)
			continue;
		if (nf.measured[CEEMS_DOMAIN_DRAM])
			static_j += nf.static_j[CEEMS_DOMAIN_DRAM];
		else
			have_j = false;
	}
	ceems_summary_units_fmt_bytes(a, sizeof(a), top);
	ceems_summary_units_fmt_bytes(b, sizeof(b), second);
	note_init(n, "mem-uneven");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job's memory peaked at %s on %s and at most %s on its "
		"other nodes; --mem holds as much on every node. A "
		"heterogeneous job (its part on %s in one component, the rest "
		"with --mem=%s) would have ", a, top_name, b, top_name, sugg);
	if (have_j) {
		ceems_summary_units_appendf(n->text, sizeof(n->text), "saved ");
		note_saving(n, f, static_j * (double)(req - want) / (double)req);
		ceems_summary_units_appendf(n->text, sizeof(n->text), ".");
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"left memory free for other jobs on those nodes.");
	}
	note_qualify(n, f);
	return true;
}

static bool
note_mem_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char peak[32], req[32], sugg[24];
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
	ceems_summary_units_fmt_bytes(peak, sizeof(peak), f->peak);
	ceems_summary_units_fmt_bytes(req, sizeof(req), f->req);
	note_init(n, "mem-underuse");
	note_subject(n, f, "job's");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		" memory peaked at %s of the %s it held%s. --mem=%s%s would "
		"leave a %d%% margin%s and would have ",
		peak, req, f->whole && parts_of(f) > 1 ? " on a node" : "",
		sugg, multi ? " (per node)" : "",
		ceems_summary_units_pct(margin - 1),
		f->peak_sampled ? " (the peak was sampled, hence the wider "
				  "margin)" : "");
	if (f->measured[CEEMS_DOMAIN_DRAM]) {
		ceems_summary_units_appendf(n->text, sizeof(n->text), "saved ");
		note_saving(n, f, f->static_j[CEEMS_DOMAIN_DRAM] *
				  (double)(f->req - want) / (double)f->req);
		ceems_summary_units_appendf(n->text, sizeof(n->text), "%s.",
			multi && !f->whole ? " on this node" : "");
	} else {
		ceems_summary_units_fmt_bytes(req, sizeof(req), f->req - want);
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"left %s free for other jobs.", req);
	}
	note_qualify(n, f);
	return true;
}

static bool
note_gpu_idle(const struct figures *f, struct ceems_summary_note *n)
{
	unsigned int held = f->ngpus, nidle = f->gpu_nidle;

	if (f->ngpus == 0 || nidle == 0 || !judged(f, gpu_min_judge_s))
		return false;
	note_init(n, "gpu-idle");
	if (nidle == held) {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"The job did not use the %s it held. If it does not "
			"need one, leave out --gpus (or --gres=gpu); if it "
			"should have, check that it finds the GPU (the CUDA or "
			"ROCm module or container it loads).",
			held == 1 ? "GPU" : "GPUs");
	} else {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			"The job did not use %u of its %u GPUs (%s). Asking "
			"for %u (--gpus=%u) would do.", nidle, held,
			f->gpu_idle_list, held - nidle, held - nidle);
	}
	if (f->have_gpu_idle_j) {
		ceems_summary_units_appendf(n->text, sizeof(n->text),
			" Not holding %s would have saved ",
			nidle == 1 ? "it" : "them");
		note_saving(n, f, f->gpu_idle_j);
		ceems_summary_units_appendf(n->text, sizeof(n->text), ".");
	}
	note_qualify(n, f);
	return true;
}

/* What the under-used GPUs drew: "They drew about 0.11 kWh (5.0 g
 * CO2e) over the run." -- a cost stated, not a saving claimed (a busier
 * GPU draws more power while the job gets shorter). */
static void
note_gpu_cost(struct ceems_summary_note *n, const struct figures *f)
{
	char e[32], g[32];

	if (!f->have_gpu_j || f->gpu_nbusy != f->ngpus)
		return;
	ceems_units_fmt_energy(e, sizeof(e), f->gpu_j);
	ceems_summary_units_appendf(n->text, sizeof(n->text), " %s drew about %s",
		f->ngpus == 1 ? "It" : "They", e);
	if (f->have_carbon) {
		ceems_units_fmt_grams(g, sizeof(g),
			ceems_job_figures_emissions_grams(f->gpu_j, &f->factor), " CO2e");
		ceems_summary_units_appendf(n->text, sizeof(n->text), " (%s)", g);
	}
	ceems_summary_units_appendf(n->text, sizeof(n->text), " over the run.");
}

static bool
note_gpu_underuse(const struct figures *f, struct ceems_summary_note *n)
{
	char busy[16];

	/* gpu-idle says it better when a device was idle. */
	if (f->ngpus == 0 || f->gpu_nbusy == 0 || f->gpu_nidle > 0 ||
	    f->gpu_busy_pct >= GPU_UNDERUSE_PCT || !judged(f, gpu_min_judge_s))
		return false;
	ceems_summary_units_fmt_pct(busy, sizeof(busy), f->gpu_busy_pct / 100);
	note_init(n, "gpu-underuse");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job's %s busy %s of the time on average. GPUs often "
		"wait for data prepared on the CPU: more CPU workers for "
		"loading, larger batches, or a smaller GPU slice (MIG) where "
		"the cluster offers one would make better use of %s.",
		f->gpu_nbusy == 1 ? "GPU was" : "GPUs were", busy,
		f->gpu_nbusy == 1 ? "it" : "them");
	note_gpu_cost(n, f);
	note_qualify(n, f);
	return true;
}

static bool
note_time_limit(const struct figures *f, struct ceems_summary_note *n)
{
	char el[32], lim[32], sugg[32];
	double want, step;

	/* Only a run that finished says how long the job needs. */
	if (!ceems_summary_figures_state_is(f, "COMPLETED") || !f->have_limit ||
	    !f->have_elapsed ||
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
	ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
	ceems_summary_units_fmt_duration(lim, sizeof(lim), f->limit_s);
	ceems_summary_units_fmt_duration(sugg, sizeof(sugg), want);
	note_init(n, "time-limit");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job ran %s of its %s time limit. If its runs take about "
		"as long, --time=%s would still leave a margin, and a shorter "
		"limit lets the scheduler start it sooner in gaps between "
		"other jobs (backfill).", el, lim, sugg);
	return true;
}

/* Page faults at a rate where handling them takes a share of the CPU
 * time (a minor fault costs the kernel about a microsecond, more with
 * zeroing a page: 100000 a second is about a tenth of a core). */
static bool
note_page_faults(const struct figures *f, struct ceems_summary_note *n)
{
	double rate;

	if (!judged(f, MIN_JUDGE_S) || !f->have_faults ||
	    f->task_clock_s < FAULTS_MIN_CPU_S)
		return false;
	rate = f->page_faults / f->task_clock_s;
	if (rate < FAULTS_PER_CPU_S)
		return false;
	note_init(n, "page-faults");
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"The job took %.0f page faults, %.0f per second of its CPU "
		"time: the kernel spent a noticeable part of that time "
		"mapping memory the job touched for the first time. Memory "
		"allocated and freed over and over is the usual cause: "
		"allocate once and reuse buffers.", f->page_faults, rate);
	return true;
}

typedef bool (*note_rule)(const struct figures *, struct ceems_summary_note *);

/* Most important first. */
static const note_rule rules[] = {
	note_oom, note_timeout, note_node_fail, note_preempted,
	note_requeued, note_cancelled, note_too_short, note_cpu_overuse,
	note_node_idle, note_cpu_underuse, note_mem_uneven,
	note_mem_underuse, note_gpu_idle, note_gpu_underuse,
	note_time_limit, note_page_faults,
};

/* The notes that say how a run ended early. */
static bool
ends_run(note_rule rule)
{
	return rule == note_oom || rule == note_timeout ||
	       rule == note_node_fail || rule == note_preempted ||
	       rule == note_requeued || rule == note_cancelled;
}

size_t
ceems_summary_notes_build(const struct figures *f,
		    struct ceems_summary_note *notes, size_t max)
{
	size_t count = 0;
	bool explained = false;

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		struct ceems_summary_note n;

		if (count >= max)
			break;
		/* How the job died explains a short run better than "too
		 * short to judge" does; one such note says it. */
		if ((rules[i] == note_too_short || ends_run(rules[i])) &&
		    explained)
			continue;
		if (!rules[i](f, &n))
			continue;
		if (ends_run(rules[i]))
			explained = true;
		notes[count++] = n;
	}
	return count;
}

int
ceems_summary_notes(const struct ceems_job_meta *meta,
		    const struct ceems_agent_job_report *report,
		    struct ceems_summary_note *notes, size_t max)
{
	struct figures f;

	if (meta == NULL || (notes == NULL && max > 0))
		return -EINVAL;
	ceems_summary_figures_compute(meta, report, &f);
	return (int)ceems_summary_notes_build(&f, notes, max);
}
