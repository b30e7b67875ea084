/* summary.c - the end-of-job summary's 80-column plain-text layout,
 * full and short, and the entry point that renders a job.
 *
 * The figures it prints come from summary_figures.c, the notes from
 * summary_notes.c and the spelling of each quantity from
 * summary_units.c; this file only places them on lines. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "summary/summary_internal.h"

#define WIDTH 80		/* columns of every line */
#define LABEL_WIDTH 9		/* "Memory   " */
#define RIGHT_COL 54		/* where "efficiency NN%" starts */
#define HEADER_INDENT 8		/* continuation lines of the header */

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

	ceems_summary_units_fmt_pct(value, sizeof(value), fraction);
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
		ceems_summary_units_appendf(text, sizeof(text), " %s", f->state);
	if (f->exit[0])
		ceems_summary_units_appendf(text, sizeof(text), " (%s)", f->exit);
	if (f->have_elapsed) {
		ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
		ceems_summary_units_appendf(text, sizeof(text), " %s %s",
			f->state[0] ? "in" : "ran for", el);
	}
	if (f->nodes[0])
		ceems_summary_units_appendf(text, sizeof(text), " on %s", f->nodes);
	put_wrapped(o, "ceems - ", HEADER_INDENT, text);
}

static void
put_cpu(struct out *o, const struct figures *f)
{
	char left[128], used[16];

	ceems_summary_units_fmt_cores(used, sizeof(used), f->used_cores);
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

	ceems_summary_units_fmt_bytes(req, sizeof(req), f->req);
	ceems_summary_units_fmt_bytes(peak, sizeof(peak), f->peak);
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

/* "GPU      2 held (1 MIG), 1 idle (GPU 3b:00.0)   busy  36%", then
 * what is known of SM activity, memory and energy on the next line. */
static void
put_gpu(struct out *o, const struct figures *f)
{
	char left[160], more[200], a[32], b[32], pct[16];

	if (f->gpus_held == 0)
		return;
	snprintf(left, sizeof(left), "%u held", f->gpus_held);
	if (f->gpu_nmig > 0)
		ceems_summary_units_appendf(left, sizeof(left), " (%u MIG)", f->gpu_nmig);
	if (f->gpu_nbusy == 0) {
		ceems_summary_units_appendf(left, sizeof(left), ", use not measured");
		put_field(o, "GPU", left);
	} else {
		if (f->gpu_nidle > 0)
			ceems_summary_units_appendf(left, sizeof(left), ", %u idle (%s)",
				f->gpu_nidle, f->gpu_idle_list);
		if (f->gpu_nbusy < f->ngpus)
			ceems_summary_units_appendf(left, sizeof(left), ", %u not measured",
				f->ngpus - f->gpu_nbusy);
		put_field_right(o, "GPU", left, "busy", f->gpu_busy_pct / 100);
	}
	more[0] = '\0';
	if (f->have_gpu_sm) {
		ceems_summary_units_fmt_pct(pct, sizeof(pct), f->gpu_sm_pct / 100);
		ceems_summary_units_appendf(more, sizeof(more), "SM active %s", pct);
		if (f->gpu_nsm < f->ngpus)
			ceems_summary_units_appendf(more, sizeof(more), " (%u of %u)",
				f->gpu_nsm, f->ngpus);
	}
	if (f->have_gpu_mem && f->ngpus > 0) {
		ceems_summary_units_fmt_bytes(a, sizeof(a), f->gpu_mem_peak);
		ceems_summary_units_appendf(more, sizeof(more), "%smemory %s peak", more[0] ?
			", " : "", a);
		if (f->gpu_mem_total > 0) {
			ceems_summary_units_fmt_bytes(b, sizeof(b), f->gpu_mem_total);
			ceems_summary_units_appendf(more, sizeof(more), " of %s", b);
		}
	}
	if (f->have_gpu_j && f->ngpus > 0) {
		ceems_units_fmt_energy(a, sizeof(a), f->gpu_j);
		ceems_summary_units_appendf(more, sizeof(more), "%s%s", more[0] ? ", " : "", a);
		if (f->gpu_power_integrated)
			ceems_summary_units_appendf(more, sizeof(more),
				" (from power samples where a device has no "
				"energy counter)");
	}
	if (more[0] != '\0')
		put_field(o, "", more);
}

/* "+/- 3%": the bound of the energy as a part of it, rounded up, for a
 * bound is a most (lib/model/energy_err.h); none when unknown.  ASCII,
 * as the whole summary: a job's output is read in any locale. */
static void
put_energy_err(char *text, size_t size, const struct figures *f)
{
	double pct;

	if (!f->have_err || !ceems_summary_units_usable(f->err_j) ||
	    !(f->total_j > 0))
		return;
	pct = 100 * f->err_j / f->total_j;
	if (pct < 0.1)
		ceems_summary_units_appendf(text, size, " +/- <0.1%%");
	else if (pct < 10)
		ceems_summary_units_appendf(text, size, " +/- %.1f%%",
					    ceil(pct * 10) / 10);
	else
		ceems_summary_units_appendf(text, size, " +/- %.0f%%",
					    ceil(pct));
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
	enum ceems_energy_unit u;
	bool first = true;
	int d, decimals;

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
	u = ceems_units_energy_pick(f->total_j);
	decimals = ceems_units_energy_decimals(f->total_j, u);
	ceems_units_fmt_energy_in(text, sizeof(text), f->total_j, u, decimals,
				  true);
	put_energy_err(text, sizeof(text), f);
	ceems_summary_units_appendf(text, sizeof(text), "  (");
	for (d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (d == CEEMS_DOMAIN_GPU && !gpu_part_shown(f))
			continue;
		if (!f->measured[d]) {
			ceems_summary_units_appendf(missing, sizeof(missing), "%s%s",
				missing[0] ? ", " : "", names[d]);
			continue;
		}
		ceems_units_fmt_energy_in(v, sizeof(v), f->joules[d], u,
					  decimals, false);
		ceems_summary_units_appendf(text, sizeof(text), "%s%s %s",
			first ? "" : ", ",
			names[d], v);
		first = false;
	}
	if (missing[0])
		ceems_summary_units_appendf(text, sizeof(text), "; %s not measured",
			missing);
	ceems_summary_units_appendf(text, sizeof(text), ")");
	if (f->partial) {
		if (ceems_summary_units_pct_floor(f->cov_min) ==
		    ceems_summary_units_pct_floor(f->cov_max))
			ceems_summary_units_appendf(text, sizeof(text),
				"; energy covers %d%% of the job",
				ceems_summary_units_pct_floor(f->cov_min));
		else
			ceems_summary_units_appendf(text, sizeof(text),
				"; energy covers %d%% to %d%% of the job",
				ceems_summary_units_pct_floor(f->cov_min),
					ceems_summary_units_pct_floor(f->cov_max));
	}
	/* All by use for a while: a job holding cores it left idle paid
	 * less, a busy one more, than its share of the idle power. */
	if (f->idle_unlearned)
		ceems_summary_units_appendf(text, sizeof(text),
			"; part split before the node's idle power was learned");
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
	ceems_units_fmt_grams(text, sizeof(text), f->grams, " CO2e");
	ceems_summary_units_appendf(text, sizeof(text), "  (%s %d, %.0f g/kWh%s, PUE %.2f)",
		f->zone, f->factor.year, f->factor.g_per_kwh,
		f->factor_changed ? " on average" : "", f->factor.pue);
	if (f->factor_fallback_pct > 0)
		ceems_summary_units_appendf(text, sizeof(text), "; %d%% at the yearly figure",
			f->factor_fallback_pct);
	if (f->carbon_partial)
		ceems_summary_units_appendf(text, sizeof(text), "; covers %d%% of the job",
			ceems_summary_units_pct_floor(f->carbon_cov));
	put_field(o, "Carbon", text);
}

/* "3 of 4 nodes measured; no figures from n4 (no answer in time)":
 * what the whole job's figures cover. */
static void
put_nodes(struct out *o, const struct figures *f)
{
	char text[512];
	unsigned int named = 0;

	snprintf(text, sizeof(text), "%u of %u nodes measured", f->nmeasured,
		 f->nparts);
	for (unsigned int i = 0; i < f->nparts; i++) {
		const struct ceems_summary_node *n = &f->parts[i];
		char name[40], why[72];

		if (n->report != NULL)
			continue;
		if (named == 3) {
			ceems_summary_units_appendf(text, sizeof(text), ", ...");
			break;
		}
		ceems_summary_figures_clean(name, sizeof(name), n->name, 32);
		ceems_summary_figures_clean(why, sizeof(why), n->why != NULL ?
					    n->why : "not measured", 60);
		ceems_summary_units_appendf(text, sizeof(text), "%s%s (%s)",
			named ? ", " : "; no figures from ", name, why);
		named++;
	}
	if (f->nmeasured < f->nparts)
		ceems_summary_units_appendf(text, sizeof(text),
			". The whole job, once every node has sent its "
			"record: ceems-sacct --explain %u", f->meta->jobid);
	put_field(o, "Nodes", text);
}

/* One node's line: "n1  CPU 15.2 of 16 (95%), 6.0 GiB peak, 8.12 Wh". */
static void
put_node_line(struct out *o, const struct figures *f,
	      const struct ceems_summary_node *n)
{
	struct figures nf;
	char text[200], name[40], why[72], v[32];

	ceems_summary_figures_clean(name, sizeof(name), n->name, 32);
	if (n->report == NULL) {
		ceems_summary_figures_clean(why, sizeof(why), n->why != NULL ?
					    n->why : "not measured", 60);
		snprintf(text, sizeof(text), "%s  no figures (%s)", name, why);
		put_field(o, "Node", text);
		return;
	}
	ceems_summary_figures_node(f, n, &nf);
	snprintf(text, sizeof(text), "%s  CPU ", name);
	if (nf.have_cpu && nf.have_held) {
		ceems_summary_units_fmt_cores(v, sizeof(v), nf.used_cores);
		ceems_summary_units_appendf(text, sizeof(text), "%s of %u", v,
					    nf.held);
	} else {
		ceems_summary_units_appendf(text, sizeof(text), "not measured");
	}
	if (nf.have_peak) {
		ceems_summary_units_fmt_bytes(v, sizeof(v), nf.peak);
		ceems_summary_units_appendf(text, sizeof(text), ", %s peak", v);
	}
	if (nf.any_energy) {
		ceems_units_fmt_energy(v, sizeof(v), nf.total_j);
		ceems_summary_units_appendf(text, sizeof(text), ", %s", v);
	} else {
		ceems_summary_units_appendf(text, sizeof(text),
					    ", energy not measured");
	}
	put_field(o, "Node", text);
}

/* Each node's line, up to NODE_LINES_MAX; a larger job shows the
 * nodes without figures, then the measured ones up to the limit. */
#define NODE_LINES_MAX 8
static void
put_node_lines(struct out *o, const struct figures *f)
{
	unsigned int shown = 0;
	char text[160];

	for (int pass = 0; pass < 2; pass++)
		for (unsigned int i = 0; i < f->nparts; i++) {
			const struct ceems_summary_node *n = &f->parts[i];

			if ((pass == 0) != (n->report == NULL) &&
			    f->nparts > NODE_LINES_MAX)
				continue;
			if (pass == 1 && f->nparts <= NODE_LINES_MAX)
				return;
			if (shown == NODE_LINES_MAX)
				break;
			put_node_line(o, f, n);
			shown++;
		}
	if (shown < f->nparts) {
		snprintf(text, sizeof(text), "and %u more nodes: ceems-sacct "
			 "-j %u --per-node, once the job's records are in",
			 f->nparts - shown, f->meta->jobid);
		put_field(o, "", text);
	}
}

static void
format_full(struct out *o, const struct figures *f,
	    const struct ceems_summary_note *notes, size_t nnotes)
{
	char text[160];

	put_header(o, f);
	if (f->whole) {
		put_nodes(o, f);
	} else if (f->nnodes > 1) {
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
	if (f->whole)
		put_node_lines(o, f);
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
		ceems_summary_units_appendf(line, sizeof(line), " %s", f->state);
	if (f->exit[0])
		ceems_summary_units_appendf(line, sizeof(line), " (%s)", f->exit);
	if (f->have_elapsed) {
		ceems_summary_units_fmt_duration(el, sizeof(el), f->elapsed_s);
		ceems_summary_units_appendf(line, sizeof(line), " %s", el);
	}

	for (int i = 0; i < NITEMS; i++)
		item[i][0] = '\0';
	if (f->have_cpu && f->have_held) {
		ceems_summary_units_fmt_pct(pc, sizeof(pc), f->used_cores / f->held);
		snprintf(item[CPU], sizeof(item[CPU]), "CPU %s of %u", pc,
			 f->held);
	} else {
		snprintf(item[CPU], sizeof(item[CPU]), "CPU not measured");
	}
	if (f->have_peak && f->have_req) {
		ceems_summary_units_fmt_pct(pc, sizeof(pc),
			(double)f->peak / (double)f->req);
		snprintf(item[MEM], sizeof(item[MEM]), "mem %s", pc);
	}
	if (f->any_energy) {
		ceems_units_fmt_energy(item[ENERGY], sizeof(item[ENERGY]),
			f->total_j);
		if (f->partial)
			ceems_summary_units_appendf(item[ENERGY], sizeof(item[ENERGY]),
				" (covers %d%%)",
					ceems_summary_units_pct_floor(f->cov_min));
	} else {
		snprintf(item[ENERGY], sizeof(item[ENERGY]),
			 "energy not measured");
	}
	if (f->have_carbon)
		ceems_units_fmt_grams(item[CARBON], sizeof(item[CARBON]), f->grams,
				" CO2e");
	if (nnotes > 0) {
		snprintf(item[NOTES], sizeof(item[NOTES]), "note%s:",
			 nnotes == 1 ? "" : "s");
		for (size_t i = 0; i < nnotes; i++)
			ceems_summary_units_appendf(item[NOTES], sizeof(item[NOTES]),
				"%s%s",
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
		ceems_summary_units_appendf(line, sizeof(line), "%s %s", first ? ":" : ",",
			item[i]);
		first = false;
	}
	/* Only absurd identities (garbage in a record) get here. */
	if (strlen(line) > WIDTH)
		memcpy(line + WIDTH - 3, "...", 4);
	put(o, line, strlen(line));
	put(o, "\n", 1);
}

static int
render(const struct figures *f, const struct ceems_advice *advice,
       enum ceems_summary_style style, char *buf, size_t size)
{
	struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES];
	struct out o = { buf, size, 0, false };
	size_t nnotes;

	nnotes = ceems_summary_notes_build(f, notes, CEEMS_SUMMARY_MAX_NOTES);
	/* Last: what to change in the job comes before when to run it. */
	if (nnotes < CEEMS_SUMMARY_MAX_NOTES &&
	    ceems_summary_carbon_note(advice, &notes[nnotes]))
		nnotes++;
	if (style == CEEMS_SUMMARY_FULL)
		format_full(&o, f, notes, nnotes);
	else
		format_short(&o, f, notes, nnotes);
	if (o.overflow) {
		buf[0] = '\0';
		return -ENOSPC;
	}
	return (int)o.len;
}

int
ceems_summary_format_nodes(const struct ceems_job_meta *meta,
			   const struct ceems_agent_job_report *whole,
			   const struct ceems_summary_node *nodes, size_t n,
			   enum ceems_summary_style style, char *buf,
			   size_t size)
{
	struct figures f;

	if (meta == NULL || buf == NULL || size == 0 || nodes == NULL ||
	    n == 0 || n > UINT32_MAX)
		return -EINVAL;
	buf[0] = '\0';
	if (style == CEEMS_SUMMARY_NONE)
		return 0;
	if (style != CEEMS_SUMMARY_SHORT && style != CEEMS_SUMMARY_FULL)
		return -EINVAL;
	ceems_summary_figures_compute(meta, whole, &f);
	f.whole = true;
	f.meta = meta;
	f.parts = nodes;
	f.nparts = (unsigned int)n;
	f.nnodes = (unsigned int)n;
	for (size_t i = 0; i < n; i++)
		if (nodes[i].report != NULL)
			f.nmeasured++;
	/* The figures are the job's, not one node's. */
	f.node[0] = '\0';
	return render(&f, NULL, style, buf, size);
}

int
ceems_summary_format(const struct ceems_job_meta *meta,
		     const struct ceems_agent_job_report *report,
		     enum ceems_summary_style style, char *buf, size_t size)
{
	return ceems_summary_format_advice(meta, report, NULL, style, buf,
					   size);
}

int
ceems_summary_format_advice(const struct ceems_job_meta *meta,
			    const struct ceems_agent_job_report *report,
			    const struct ceems_advice *advice,
			    enum ceems_summary_style style, char *buf,
			    size_t size)
{
	struct ceems_advice a;
	struct figures f;

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
	ceems_summary_figures_compute(meta, report, &f);
	/* One node's advice is not a job of several nodes' (doc/summary.md);
	 * a job whose start waited on another's end is not its own to move. */
	if (advice != NULL && meta->nnodes <= 1) {
		a = *advice;
		if (meta->dependency == CEEMS_JOB_DEPENDENCY_LISTED)
			ceems_advice_in_chain(&a);
		advice = &a;
	} else {
		advice = NULL;
	}
	return render(&f, advice, style, buf, size);
}
