/* idle_fit.c - the static power of an energy domain learned by a
 * least-squares line of its power against the node's busy CPUs (see
 * idle_fit.h and doc/attribution.md).
 *
 * The intercept is identifiable only when the load varies: with points of
 * one load the line may turn about them freely.  The fit is trusted when
 * the window holds enough points, their busy CPUs spread enough, the
 * slope is not clearly negative (more work does not draw less power: a
 * slope more than two standard errors below 0 says the line is not the
 * node's; a flat one is fine) and the intercept's standard error is
 * small next to it, and (as noise says nothing of a line's shape)
 * the window's lowest load is near the bottom of the node's range, so
 * that the intercept is not carried far below the points.  Every figure must be
 * finite.  Until a window is trusted there is no value; after, the last
 * trusted one is kept.  The agent fits the package only (DRAM power
 * follows memory traffic). */
#include "config.h"

#include <math.h>
#include <string.h>

#include "model/idle_fit.h"
#include "base/tick_path.h"

void
ceems_idle_fit_init(struct ceems_idle_fit *f)
{
	memset(f, 0, sizeof(*f));
}

/* Fit the window: means first, then centred sums, so that a large
 * offset (hundreds of watts) costs no precision. */
static void
refit(struct ceems_idle_fit *f)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, rss, s2, slope_se;
	double low;
	unsigned i, n = f->n;

	f->converged = false;
	if (n < 3)
		return;
	for (i = 0; i < n; i++) {
		mx += f->busy[i];
		my += f->watts[i];
	}
	mx /= n;
	my /= n;
	low = f->busy[0];
	for (i = 0; i < n; i++) {
		double dx = f->busy[i] - mx, dy = f->watts[i] - my;

		if (f->busy[i] < low)
			low = f->busy[i];
		sxx += dx * dx;
		sxy += dx * dy;
		syy += dy * dy;
	}
	f->spread = sqrt(sxx / n);
	if (!(sxx > 0))
		return;
	f->slope_w = sxy / sxx;
	f->intercept_w = my - f->slope_w * mx;
	rss = syy - f->slope_w * sxy;
	s2 = rss > 0 ? rss / (n - 2) : 0;
	f->intercept_se_w = sqrt(s2 * (1.0 / n + mx * mx / sxx));
	slope_se = sqrt(s2 / sxx);
	f->low_fraction = low / f->cores;
	if (!isfinite(rss) || !isfinite(f->intercept_w) ||
	    !isfinite(f->intercept_se_w) || !isfinite(slope_se))
		return;
	if (n < CEEMS_IDLE_FIT_MIN_POINTS ||
	    f->spread < CEEMS_IDLE_FIT_MIN_SPREAD ||
	    !(f->low_fraction <= CEEMS_IDLE_FIT_MAX_LOW_FRACTION) ||
	    f->slope_w + 2 * slope_se < 0 || !(f->intercept_w > 0) ||
	    f->intercept_se_w > CEEMS_IDLE_FIT_MAX_REL_SE * f->intercept_w)
		return;
	f->converged = true;
	f->learned = true;
	f->value_w = f->intercept_w;
	f->value_se_w = f->intercept_se_w;
}

CEEMS_TICK_PATH void
ceems_idle_fit_add(struct ceems_idle_fit *f, double busy_cpus, double cores,
		   double watts)
{
	if (!isfinite(busy_cpus) || !isfinite(watts) || !isfinite(cores) ||
	    busy_cpus < 0 || watts < 0 || watts > CEEMS_IDLE_FIT_MAX_WATTS ||
	    !(cores > 0))
		return;
	f->cores = cores;
	f->busy[f->next] = busy_cpus;
	f->watts[f->next] = watts;
	f->next = (f->next + 1) % CEEMS_IDLE_FIT_POINTS;
	if (f->n < CEEMS_IDLE_FIT_POINTS)
		f->n++;
	refit(f);
}

CEEMS_TICK_PATH bool
ceems_idle_fit_value(const struct ceems_idle_fit *f, double *watts)
{
	if (!f->learned)
		return false;
	*watts = f->value_w;
	return true;
}

bool
ceems_idle_fit_uncertainty(const struct ceems_idle_fit *f, double *watts)
{
	if (!f->learned)
		return false;
	*watts = 2 * f->value_se_w;
	return true;
}
