/* idle_fit.h - learn a domain's static (idle) power from a node that is
 * never quiet: a least-squares line of the domain's power against the
 * node's busy CPUs over a sliding window of ticks, whose intercept (the
 * power at no busy CPU) is the static power.  The method and when it is
 * trusted are in doc/attribution.md ("Learning the static power").
 *
 * Pure and allocation-free: the agent keeps one per domain and feeds it
 * one point per tick of normal length. */
#ifndef CEEMS_IDLE_FIT_H
#define CEEMS_IDLE_FIT_H

#include <stdbool.h>

/* The window: at the default 1 s tick, about four minutes of ticks. */
#define CEEMS_IDLE_FIT_POINTS 256
/* A fit is trusted only with at least this many points... */
#define CEEMS_IDLE_FIT_MIN_POINTS 10
/* ...whose busy CPUs spread by at least this standard deviation (a line
 * through points of one load has no intercept to tell)... */
#define CEEMS_IDLE_FIT_MIN_SPREAD 0.25
/* ...and whose intercept's standard error is at most this fraction of
 * the intercept (about 2% at two standard errors). */
#define CEEMS_IDLE_FIT_MAX_REL_SE 0.01
/* ...and whose lowest busy CPUs are at most this fraction of the node's
 * cores: the intercept is a line carried from the points down to no busy
 * CPU, and a power that bends (rises steeply on the first cores, as
 * frequencies and C-states change) is overestimated the more, the
 * farther the line is carried.  A node never below a quarter busy has an
 * intercept that its points do not tell, whatever their noise. */
#define CEEMS_IDLE_FIT_MAX_LOW_FRACTION 0.25
/* Points above this are no domain's power (a counter read wrong): one
 * would overflow the sums (its square is past a double) and the fit
 * would read as perfect.  A node of a thousand 1 kW sockets is below. */
#define CEEMS_IDLE_FIT_MAX_WATTS 1e7

struct ceems_idle_fit {
	double busy[CEEMS_IDLE_FIT_POINTS];	/* busy CPUs of each tick */
	double watts[CEEMS_IDLE_FIT_POINTS];	/* the domain's power */
	unsigned n;				/* points held */
	unsigned next;				/* ring position */
	double cores;			/* the node's cores, at the last point */

	/* The window's last fit (whether trusted or not). */
	double intercept_w, slope_w, intercept_se_w, spread;
	double low_fraction;	/* the window's lowest busy CPUs / cores */
	bool converged;		/* the window's fit is trusted now */
	/* The last trusted intercept, kept while a later window (a long
	 * constant load) cannot tell one. */
	bool learned;
	double value_w;
	double value_se_w;	/* its fit's intercept_se_w */
};

void ceems_idle_fit_init(struct ceems_idle_fit *f);

/* Add one tick: BUSY_CPUS (the node's busy CPU-seconds per second) of
 * its CORES, and the domain's mean power WATTS over it; refits the
 * window.  Non-finite or negative values, powers above
 * CEEMS_IDLE_FIT_MAX_WATTS and ticks of no known cores are ignored. */
void ceems_idle_fit_add(struct ceems_idle_fit *f, double busy_cpus,
			double cores, double watts);

/* The learned static power, W: true once some window's fit was trusted
 * (the last trusted one); false (WATTS untouched) before. */
bool ceems_idle_fit_value(const struct ceems_idle_fit *f, double *watts);

/* How far the learned static power may be off, W, at about 95%: two
 * standard errors of the trusted fit's intercept (energy_err.h).  False
 * (WATTS untouched) before any fit was trusted. */
bool ceems_idle_fit_uncertainty(const struct ceems_idle_fit *f,
				double *watts);

#endif
