/* summary_work.c - the summary's lines on the work a job reported
 * (model/marks.h): each counter's total and the job's energy per unit
 * of it, "1.923 J per timestep".  Apart from the block of summary.c
 * because they come from the job itself, not from the measurements, and
 * are printed only when the job marked.  Four significant figures: the
 * figure is the job's energy divided by its work, and a user comparing
 * runs wants more than the three of an energy amount. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "summary/summary.h"
#include "summary/summary_internal.h"

/* J in J, mJ, uJ (ASCII: the summary is), Wh or kWh, four significant
 * figures. */
static void
fmt_per_unit(char *buf, size_t size, double j)
{
	if (j >= 3.6e6)
		snprintf(buf, size, "%.4g kWh", j / 3.6e6);
	else if (j >= 3600)
		snprintf(buf, size, "%.4g Wh", j / 3600);
	else if (j >= 1 || j == 0)
		snprintf(buf, size, "%.4g J", j);
	else if (j >= 1e-3)
		snprintf(buf, size, "%.4g mJ", j * 1e3);
	else
		snprintf(buf, size, "%.4g uJ", j * 1e6);
}

/* UNIT after "per": a plural's final 's' dropped ("per timestep",
 * "per sample"), where it reads as one (more than 3 letters, not "ss");
 * "ns", "ps", "ns_simulated" stay as they are. */
static void
fmt_per_what(char *buf, size_t size, const char *unit)
{
	size_t n = strlen(unit);

	if (n > 3 && unit[n - 1] == 's' && unit[n - 2] != 's')
		n--;
	snprintf(buf, size, "%.*s", (int)n, unit);
}

/* The one likely reason a run dearer a unit than the earlier ones was
 * dearer, when this run's figures show it, into WHY (SIZE bytes; "" when
 * none): a GPU it held and did not use (busy under GPU_IDLE_PCT: the
 * gpu-idle note's test), else fewer cores busy (CPU efficiency under
 * 4/5 of the earlier runs' median).  A GPU first: an idle one draws
 * its idle power for the whole run and does none of the work.  Nothing
 * when a figure is unknown: unknown is not a reason. */
static void
likely_reason(const struct ceems_agent_job_report *report,
	      const struct ceems_marks_history_counter *m, char *why,
	      size_t size)
{
	unsigned int nidle = 0;
	double held, eff, pct;

	why[0] = '\0';
	for (unsigned int i = 0; i < report->ngpus; i++) {
		if (!ceems_summary_figures_gpu_util(&report->gpus[i], &pct))
			continue;
		nidle += pct < GPU_IDLE_PCT;
	}
	if (nidle > 0) {
		snprintf(why, size, "a GPU idle, %u of the %u GPUs it held busy "
			 "under %.0f%%", nidle, report->ngpus, GPU_IDLE_PCT);
		return;
	}
	held = report->elapsed_s * (double)report->alloc_cores;
	eff = held > 0 ? report->cpu_s / held : NAN;
	if (isfinite(eff) && m->median_cpu_eff > 0 &&
	    eff < 0.8 * m->median_cpu_eff)
		snprintf(why, size, "fewer cores busy, CPU efficiency %.0f%% "
			 "against %.0f%%", eff * 100, m->median_cpu_eff * 100);
}

/* The comparison of counter C, whose energy per unit is PER_J, with
 * the earlier runs in H (NULL: none), appended to BUF at *LEN.  0, or
 * -ENOSPC. */
static int
append_comparison(const struct ceems_agent_job_report *report,
		  const struct ceems_marks_counter *c, double per_j,
		  const struct ceems_marks_history *h, const char *name,
		  char *buf, size_t size, size_t *len)
{
	const struct ceems_marks_history_counter *m = NULL;
	double diff;
	char what[CEEMS_MARKS_NAME_MAX], clean[48], why[96];
	int n;

	for (uint32_t i = 0; h != NULL && i < h->n && i < CEEMS_MARKS_MAX; i++)
		if (strcmp(h->c[i].name, c->name) == 0 &&
		    strcmp(h->c[i].unit, c->unit) == 0)
			m = &h->c[i];
	if (m == NULL || m->runs < CEEMS_SUMMARY_WORK_MIN_RUNS ||
	    !(m->median_j > 0) || !isfinite(per_j))
		return 0;
	diff = per_j / m->median_j - 1;
	if (fabs(diff) < CEEMS_SUMMARY_WORK_NOTABLE)
		return 0;
	fmt_per_what(what, sizeof(what), c->unit);
	/* The job's name is the user's text: printable ASCII only, cut. */
	snprintf(clean, sizeof(clean), "%s", name != NULL ? name : "");
	for (char *p = clean; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	n = snprintf(buf + *len, size - *len, "%-9s%.0f%% %s energy per %s than the "
		     "median of your last %u runs of %s\n", "",
		     fabs(diff) * 100, diff > 0 ? "more" : "less", what,
		     m->runs, clean);
	if (n < 0 || (size_t)n >= size - *len)
		return -ENOSPC;
	*len += (size_t)n;
	/* A reason for a dearer run only: a cheaper one needs none. */
	if (diff > 0)
		likely_reason(report, m, why, sizeof(why));
	if (diff > 0 && why[0] != '\0') {
		n = snprintf(buf + *len, size - *len, "%-9slikely why: %s\n", "",
			     why);
		if (n < 0 || (size_t)n >= size - *len)
			return -ENOSPC;
		*len += (size_t)n;
	}
	return 0;
}

int
ceems_summary_work_format(const struct ceems_agent_job_report *report,
			  const struct ceems_marks *marks, char *buf,
			  size_t size)
{
	return ceems_summary_work_format_history(report, marks, NULL, NULL, buf,
						 size);
}

int
ceems_summary_work_format_history(const struct ceems_agent_job_report *report,
				  const struct ceems_marks *marks,
				  const struct ceems_marks_history *history,
				  const char *name, char *buf, size_t size)
{
	bool energy = report != NULL &&
		      ceems_job_figures_ledger_energy_known(&report->ledger);
	double total_j = energy ? ceems_job_figures_ledger_total_j(&report->ledger) : 0;
	size_t len = 0;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (uint32_t i = 0; marks != NULL && i < marks->n && i < CEEMS_MARKS_MAX; i++) {
		const struct ceems_marks_counter *c = &marks->c[i];
		char per[32], what[CEEMS_MARKS_NAME_MAX];
		int n;

		if (energy && c->work > 0)
			fmt_per_unit(per, sizeof(per), total_j / c->work);
		fmt_per_what(what, sizeof(what), c->unit);
		n = snprintf(buf + len, size - len, "%-9s%.15g %s (%s)%s%s%s%s\n",
			     i == 0 ? "Work" : "", c->work, c->unit, c->name,
			     !energy ? ", energy not measured" :
			     c->work > 0 ? ", " : "",
			     energy && c->work > 0 ? per : "",
			     energy && c->work > 0 ? " per " : "",
			     energy && c->work > 0 ? what : "");
		if (n < 0 || (size_t)n >= size - len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		len += (size_t)n;
		if (energy && c->work > 0 &&
		    append_comparison(report, c, total_j / c->work, history, name,
				      buf, size, &len) < 0) {
			buf[0] = '\0';
			return -ENOSPC;
		}
	}
	return (int)len;
}
