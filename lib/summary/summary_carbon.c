/* summary_carbon.c - the summary's carbon-aware note: when the job
 * would have emitted markedly less had it started at the greenest hour
 * of the site's window, by the intensities recorded for those hours
 * (lib/model/carbon_advice.h).  Whether it fires is the advice's
 * verdict, decided where the series is (the node agent); this file only
 * words it.  The rules are in doc/summary.md ("carbon-shift"). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "summary/summary.h"
#include "summary/summary_internal.h"
#include "summary/units.h"

bool
ceems_summary_carbon_note(const struct ceems_advice *a,
			  struct ceems_summary_note *n)
{
	char when[40], actual[32], best[32], saving[32];
	time_t t;
	struct tm tm;

	if (a == NULL || a->verdict != CEEMS_ADVICE_WORTH)
		return false;
	t = (time_t)a->best_start;
	/* The node's local time, as the job's own output shows times. */
	if (localtime_r(&t, &tm) == NULL ||
	    strftime(when, sizeof(when), "%Y-%m-%d %H:%M %Z", &tm) == 0)
		return false;
	memset(n, 0, sizeof(*n));
	snprintf(n->id, sizeof(n->id), "%s", CEEMS_SUMMARY_CARBON_NOTE);
	ceems_units_fmt_grams(actual, sizeof(actual), a->actual_g, NULL);
	ceems_units_fmt_grams(best, sizeof(best), a->best_g, " CO2e");
	ceems_units_fmt_grams(saving, sizeof(saving), a->saving_g, NULL);
	n->have_saving_g = true;
	n->saving_g = a->saving_g;
	ceems_summary_units_appendf(n->text, sizeof(n->text),
		"Started at %s, the greenest start the grid's recorded "
		"intensity offered within the site's window, the job would "
		"have emitted %s instead of %s: %s (%.0f%%) less. A job that "
		"can wait may be given a start with --begin.", when, best,
		actual, saving, a->saving_frac * 100);
	return true;
}
