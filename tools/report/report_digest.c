/* report_digest.c - what the reports say: a user's digest (figures,
 * traffic lights, the suggestions several jobs back), an account's
 * overview for its coordinators and the admins' triage list.  Phrased as
 * an offer of help: what a smaller request frees for the user's own
 * work, never blame (doc/reports.md, "Wording"). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report_digest.h"
#include "summary/units.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

static void
fmt_energy(char *buf, size_t size, double j, bool known)
{
	if (!known || isnan(j))
		snprintf(buf, size, "not measured");
	else
		ceems_units_fmt_energy(buf, size, j);
}

static void
fmt_grams(char *buf, size_t size, double g, bool known)
{
	if (!known || isnan(g))
		snprintf(buf, size, "not computed");
	else
		ceems_units_fmt_grams(buf, size, g, " CO2e");
}

/* The idle power of the jobs a rule judged: "-" when none was judged
 * over-asked, "not measured" when they were but no energy was. */
static void
fmt_saving(char *buf, size_t size, const struct report_sums *s)
{
	int fired = 0;

	for (int a = 0; a < REPORT_AREAS; a++)
		fired += s->fired[a];
	if (fired == 0)
		snprintf(buf, size, "-");
	else
		fmt_energy(buf, size, s->idle_j, s->idle_j > 0);
}

static void
fmt_duration(char *buf, size_t size, double s)
{
	long m = (long)(s / 60 + 0.5);

	if (m >= 60)
		snprintf(buf, size, "%ld h %02ld min", m / 60, m % 60);
	else
		snprintf(buf, size, "%ld min", m);
}

/* The energy clause of a suggestion, or nothing where it is unknown. */
static void
saving_clause(char *buf, size_t size, const struct report_suggestion *g)
{
	char e[32], c[32];

	if (!g->energy_known || g->saved_j <= 0) {
		buf[0] = '\0';
		return;
	}
	fmt_energy(e, sizeof(e), g->saved_j, true);
	fmt_grams(c, sizeof(c), g->saved_g, true);
	snprintf(buf, size, " and saved %s (%s) of power drawn for them", e, c);
}

void
report_digest_suggestion(char *buf, size_t size, const struct report_suggestion *g)
{
	char save[128], wait[32], lim[32];

	saving_clause(save, sizeof(save), g);
	fmt_duration(wait, sizeof(wait), g->wait_s);
	switch (g->area) {
	case REPORT_CPU:
		snprintf(buf, size,
			 "CPU: %d jobs asked for %.0f cores and kept fewer than %.0f busy on average. "
			 "Asking for %.0f (sbatch --cpus-per-task=%.0f, or --ntasks=%.0f for MPI) "
			 "would have left %.1f core-hours free for your other work%s. "
			 "Smaller requests also start sooner (these jobs waited %s on average).",
			 g->jobs, g->asked, g->suggested, g->suggested, g->suggested,
			 g->suggested, g->held_hours, save, wait);
		break;
	case REPORT_MEM:
		snprintf(buf, size,
			 "Memory: %d jobs asked for %.0f GiB and peaked well below %.0f GiB. "
			 "Asking for --mem=%.0fG (a 25%% margin over the peak) would have left "
			 "%.1f GiB-hours free%s. Smaller requests also start sooner "
			 "(these jobs waited %s on average).",
			 g->jobs, g->asked / GIB, g->suggested / GIB, g->suggested / GIB,
			 g->held_hours, save, wait);
		break;
	case REPORT_GPU:
		if (g->suggested == 0)
			snprintf(buf, size,
				 "GPU: %d jobs held a GPU that was busy less than 5%% of the time. "
				 "If the program does not use it, running without one (no --gpus or "
				 "--gres=gpu) would have left %.1f GPU-hours free%s.",
				 g->jobs, g->held_hours, save);
		else
			snprintf(buf, size,
				 "GPU: %d jobs asked for %.0f GPUs and kept them busy less than a quarter "
				 "of the time. Asking for %.0f (--gpus=%.0f) would have left %.1f "
				 "GPU-hours free%s. Smaller requests also start sooner "
				 "(these jobs waited %s on average).",
				 g->jobs, g->asked, g->suggested, g->suggested, g->held_hours,
				 save, wait);
		break;
	case REPORT_TIME:
		fmt_duration(lim, sizeof(lim), g->asked * 60);
		snprintf(buf, size,
			 "Time limit: %d jobs asked for %s and each finished in under a quarter "
			 "of it. A limit of --time=%02.0f:%02.0f:00 still leaves a 50%% margin over "
			 "the longest of them, and the scheduler can start jobs with shorter "
			 "limits sooner, in the gaps other jobs leave (these jobs waited %s on "
			 "average).",
			 g->jobs, lim, floor(g->suggested / 60), fmod(g->suggested, 60), wait);
		break;
	default:
		buf[0] = '\0';
	}
}

static void
user_figures(struct report_doc *d, const struct report_sums *s)
{
	static const char *const headers[] = { "Figure", "Value" };
	struct report_table t;
	char v[64], e[32];
	const char *cells[2];

	report_doc_table_init(&t, "Your finished jobs in the period", 2, headers);
#define ROW(name) (cells[0] = (name), cells[1] = v, report_doc_row(&t, NULL, cells))
	snprintf(v, sizeof(v), "%d", s->jobs);
	ROW("Jobs");
	snprintf(v, sizeof(v), "%d (too short: %d, incomplete data: %d, first weeks: %d)",
		 s->judged, s->skipped[REPORT_SKIP_SHORT], s->skipped[REPORT_SKIP_QUALITY],
		 s->skipped[REPORT_SKIP_NEW_USER]);
	ROW("Jobs judged");
	snprintf(v, sizeof(v), "%.1f", s->cpu_hours_alloc);
	ROW("Core-hours held");
	snprintf(v, sizeof(v), "%.1f", s->cpu_hours_used);
	ROW("Core-hours used");
	snprintf(v, sizeof(v), "%.1f", s->gpu_hours);
	ROW("GPU-hours held");
	fmt_energy(e, sizeof(e), s->energy_j, s->energy_known);
	snprintf(v, sizeof(v), "%s", e);
	ROW("Energy");
	fmt_grams(e, sizeof(e), s->emissions_g, s->emissions_known);
	snprintf(v, sizeof(v), "%s", e);
	ROW("Emissions");
#undef ROW
	report_doc_table(d, &t);
}

static void
user_lights(struct report_doc *d, const struct report_sums *s)
{
	static const char *const headers[] = {
		"Area", "Light", "Used of held", "Jobs judged", "Thresholds"
	};
	static const char *const thresholds[REPORT_AREAS] = {
		"green 75% or more, amber 50% or more",
		"green 50% or more, amber 25% or more",
		"green 50% or more, amber 25% or more",
		"green 50% or more, amber 25% or more",
	};
	struct report_table t;

	report_doc_table_init(&t, "How much of what your jobs held they used", 5, headers);
	for (int a = 0; a < REPORT_AREAS; a++) {
		double ratio;
		enum report_light l = report_rules_light(s, (enum report_area)a, &ratio);
		char pct[16], jobs[16];
		const char *cells[5];

		if (l == REPORT_LIGHT_NONE)
			snprintf(pct, sizeof(pct), "-");
		else
			snprintf(pct, sizeof(pct), "%.0f%%", floor(ratio * 100));
		snprintf(jobs, sizeof(jobs), "%d", s->area_jobs[a]);
		cells[0] = report_rules_area_name((enum report_area)a);
		cells[1] = l == REPORT_LIGHT_NONE ? "none (too few jobs)" : report_rules_light_name(l);
		cells[2] = pct;
		cells[3] = jobs;
		cells[4] = thresholds[a];
		report_doc_row(&t, l == REPORT_LIGHT_NONE ? NULL : report_rules_light_name(l), cells);
	}
	report_doc_table(d, &t);
}

void
report_digest_user(struct report_doc *d, const struct report_sums *s,
		   const char *from, const char *to)
{
	char title[160], line[1024];

	snprintf(title, sizeof(title), "ceems: your jobs from %.10s to %.10s (%s)",
		 from, to, s->user);
	report_doc_begin(d, title);
	report_doc_para(d, "This digest shows what your jobs finished in the period held and "
			"used, their energy and emissions, and where asking for what they used "
			"would let you get more done with your allocation and wait less in the "
			"queue. It is sent to you alone.");
	user_figures(d, s);
	user_lights(d, s);
	report_doc_heading(d, "Where you could get more done");
	if (s->n_suggestions == 0)
		report_doc_para(d, "Nothing to suggest this time: your requests matched what your "
				"jobs used, or too few jobs showed the same pattern to be sure.");
	for (size_t i = 0; i < s->n_suggestions && i < 3; i++) {
		report_digest_suggestion(line, sizeof(line), &s->suggestions[i]);
		report_doc_para(d, "%zu. %s", i + 1, line);
	}
	report_doc_para(d, "Each suggestion rests on %d or more of your jobs; jobs shorter "
			"than a minute, with incomplete measurements, or from your first two "
			"weeks are not judged. How each figure and light is computed: "
			"ceems-admin(8) and doc/reports.md. Questions, or help with a request: your support team. "
			"To receive no more digests, ask them, or run in psql: "
			"INSERT INTO ceems.report_optout (user_name) VALUES (current_user);",
			REPORT_MIN_BACKING);
	report_doc_end(d);
}

void
report_digest_alert(struct report_doc *d, const struct report_sums *s,
		    const char *from, const char *to)
{
	char title[160], ids[160], e[32], g[32];
	size_t off = 0;

	ids[0] = '\0';
	for (int i = 0; i < s->alerts && i < REPORT_ALERT_IDS_MAX && off < sizeof(ids); i++)
		off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%s%lld",
					i > 0 ? ", " : "", s->alert_jobids[i]);
	if (s->alerts > REPORT_ALERT_IDS_MAX && off < sizeof(ids))
		snprintf(ids + off, sizeof(ids) - off, " and %d more", s->alerts - REPORT_ALERT_IDS_MAX);
	snprintf(title, sizeof(title), "ceems: GPUs that sat idle in your jobs (%s)", s->user);
	report_doc_begin(d, title);
	report_doc_para(d, "%d of your jobs that ended between %.16s and %.16s UTC held GPUs for "
			"an hour or more and kept them busy less than %.0f%% of the time: job%s %s.",
			s->alerts, from, to, REPORT_ALERT_GPU_PCT, s->alerts == 1 ? "" : "s", ids);
	if (s->alert_energy_known) {
		fmt_energy(e, sizeof(e), s->alert_j, true);
		fmt_grams(g, sizeof(g), s->alert_g, true);
		report_doc_para(d, "Together they held %.1f GPU-hours, which other work could have "
				"used, and their GPUs drew %s (%s).", s->alert_gpu_hours, e, g);
	} else {
		report_doc_para(d, "Together they held %.1f GPU-hours, which other work could have "
				"used.", s->alert_gpu_hours);
	}
	report_doc_para(d, "If your program does not use the GPUs, running it without them (no "
			"--gpus or --gres=gpu) starts sooner and leaves them to others; if it "
			"should use them, check that it finds them (nvidia-smi in the job, the "
			"framework's device setting). Your support team can help. To receive no "
			"more of these mails, ask them, or run in psql: INSERT INTO "
			"ceems.report_optout (user_name) VALUES (current_user);");
	report_doc_end(d);
}

static void
lights_word(char *buf, size_t size, const struct report_sums *s)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int a = 0; a < REPORT_AREAS && off < size; a++) {
		double ratio;
		enum report_light l = report_rules_light(s, (enum report_area)a, &ratio);

		if (l == REPORT_LIGHT_NONE)
			continue;
		off += (size_t)snprintf(buf + off, size - off, "%s%s %s", off > 0 ? ", " : "",
					a == REPORT_TIME ? "Time" : report_rules_area_name((enum report_area)a),
					report_rules_light_name(l));
	}
	if (buf[0] == '\0')
		snprintf(buf, size, "too few jobs judged");
}

void
report_digest_account(struct report_doc *d, const char *account,
		      const struct report_sums *users, size_t n, const char *from,
		      const char *to)
{
	static const char *const headers[] = {
		"User", "Jobs", "Core-hours held", "Core-hours used", "Energy",
		"Could free (core-hours)", "Could save", "Lights"
	};
	struct report_table t;
	char title[160];

	snprintf(title, sizeof(title), "ceems: account %s from %.10s to %.10s", account, from, to);
	report_doc_begin(d, title);
	report_doc_para(d, "For the coordinators of %s: what each user's jobs held and used, and "
			"what asking for what the jobs used would have freed for the account's "
			"work. Users come first where help would free the most. A large figure "
			"usually means a request copied from an older job, not carelessness; "
			"each user receives their own digest with concrete suggestions.", account);
	report_doc_table_init(&t, "Users of the account, most to gain first", 8, headers);
	for (size_t i = 0; i < n; i++) {
		const struct report_sums *s = &users[i];
		char jobs[16], held[24], used[24], e[32], idle[24], save[32], lights[64];
		const char *cells[8] = { s->user, jobs, held, used, e, idle, save, lights };

		snprintf(jobs, sizeof(jobs), "%d", s->jobs);
		snprintf(held, sizeof(held), "%.1f", s->cpu_hours_alloc);
		snprintf(used, sizeof(used), "%.1f", s->cpu_hours_used);
		fmt_energy(e, sizeof(e), s->energy_j, s->energy_known);
		snprintf(idle, sizeof(idle), "%.1f", s->idle_core_hours);
		fmt_saving(save, sizeof(save), s);
		lights_word(lights, sizeof(lights), s);
		report_doc_row(&t, NULL, cells);
	}
	report_doc_table(d, &t);
	report_doc_para(d, "Could free: the core-hours held but idle in the jobs a rule judged "
			"over-asked; could save: the idle power charged to them. Rules and "
			"thresholds: ceems-admin(8) and doc/reports.md.");
	report_doc_end(d);
}

void
report_digest_triage(struct report_doc *d, const struct report_sums *users,
		     size_t n, size_t limit, const char *from, const char *to)
{
	static const char *const headers[] = {
		"User", "Jobs judged", "Over-asked cores", "Memory", "GPUs",
		"Time limit", "Idle core-hours", "Idle-allocation energy"
	};
	struct report_table t;
	char title[160];
	size_t shown = 0;

	snprintf(title, sizeof(title), "ceems: users to offer help, %.10s to %.10s", from, to);
	report_doc_begin(d, title);
	report_doc_para(d, "Users whose jobs repeatedly asked for much more than they used "
			"(%d or more judged jobs in one area), ranked by the idle power charged "
			"to those jobs, then by their idle core-hours.", REPORT_MIN_BACKING);
	report_doc_table_init(&t, "Users whose jobs over-ask", 8, headers);
	for (size_t i = 0; i < n && shown < limit; i++) {
		const struct report_sums *s = &users[i];
		char c[REPORT_AREAS][16], judged[16], idle[24], e[32];
		const char *cells[8] = { s->user, judged, c[0], c[1], c[2], c[3], idle, e };
		bool listed = false;

		for (int a = 0; a < REPORT_AREAS; a++) {
			snprintf(c[a], sizeof(c[a]), "%d", s->fired[a]);
			listed |= s->fired[a] >= REPORT_MIN_BACKING;
		}
		if (!listed)
			continue;
		snprintf(judged, sizeof(judged), "%d", s->judged);
		snprintf(idle, sizeof(idle), "%.1f", s->idle_core_hours);
		fmt_saving(e, sizeof(e), s);
		report_doc_row(&t, NULL, cells);
		shown++;
	}
	report_doc_table(d, &t);
	if (shown == 0)
		report_doc_para(d, "No user's jobs repeatedly over-asked in the period.");
	report_doc_end(d);
}
