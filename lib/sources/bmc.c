/* bmc.c - the BMC energy source: one NODE counter, fed by a thread that
 * reads the BMC every bmc_interval, off the agent's tick.
 *
 * The thread owns the IPMI link; the tick owns nothing but a lock held
 * for microseconds: sample() takes the curve's energy (bmc_curve.c) and
 * never waits for the BMC.  A BMC that does not answer (down, wrong
 * password, no sensor, garbage) is retried with a backoff that doubles
 * up to BACKOFF_MAX_READS intervals (at most 5 minutes); its ticks are
 * gaps.  The thread does not log itself (the agent's log handler is not
 * for threads): it queues its lines, and sample() writes them, one when
 * the BMC goes bad and one when it measures again, not one per try. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources/bmc.h"
#include "sources/bmc_freeipmi.h"
#include "sources/bmc_ipmi.h"
#include "model/energy.h"
#include "base/log.h"
#include "base/clock.h"

#define BACKOFF_MAX_READS 30
#define BACKOFF_MAX_NS 300000000000ULL
#define LOG_QUEUE 8
#define LOG_LINE 512

struct log_line {
	enum ceems_log_level level;
	char text[LOG_LINE];
};

struct bmc_priv {
	struct ceems_bmc_options o;
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	/* Below: under mu. */
	bool stop;
	bool start_failed;		/* the thread could not be made */
	struct ceems_bmc_curve curve;
	uint32_t period_ms;	/* the last DCMI reading's averaging period */
	struct log_line logq[LOG_QUEUE];
	unsigned nlog;
	/* The thread's own (no lock). */
	bool bad;			/* failing since the last good read */
	unsigned failures;
	uint64_t stale_since_ns;	/* 0: the last reading was fresh */
	bool stale_warned;
	char chosen[160];
};

static const char *
where(const struct bmc_priv *p)
{
	return p->o.mode == CEEMS_BMC_LAN ? p->o.host : "in band";
}

/* Queue a line for the tick to log (called with mu unlocked). */
static void
queue_log(struct bmc_priv *p, enum ceems_log_level level, const char *fmt,
	  ...) __attribute__((format(printf, 3, 4)));

static void
queue_log(struct bmc_priv *p, enum ceems_log_level level, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&p->mu);
	if (p->nlog < LOG_QUEUE) {
		p->logq[p->nlog].level = level;
		va_start(ap, fmt);
		vsnprintf(p->logq[p->nlog].text, LOG_LINE, fmt, ap);
		va_end(ap);
		p->nlog++;
	}
	pthread_mutex_unlock(&p->mu);
}

/* A failed try: the curve loses its baseline; logged once per outage. */
static void
failed(struct bmc_priv *p, const char *why, enum ceems_energy_gap gap)
{
	pthread_mutex_lock(&p->mu);
	ceems_bmc_curve_lost(&p->curve, gap);
	pthread_mutex_unlock(&p->mu);
	p->failures++;
	if (p->bad)
		queue_log(p, CEEMS_LOG_DEBUG, "BMC (%s): try %u failed: %s",
			  where(p), p->failures, why);
	else
		queue_log(p, CEEMS_LOG_WARNING,
			  "BMC (%s): %s; node energy is a gap until it answers (retrying with backoff; check %s)",
			  where(p), why, p->o.mode == CEEMS_BMC_LAN ?
			  "bmc_host, bmc_credentials_file, bmc_sensor, bmc_privilege" :
			  "that the ipmi_si and ipmi_devintf modules are loaded (/dev/ipmi0), and bmc_sensor");
	p->bad = true;
}

static void
answered(struct bmc_priv *p, const struct ceems_bmc_reading *r,
	 uint64_t now_ns)
{
	enum ceems_bmc_verdict v;
	char why[96];

	pthread_mutex_lock(&p->mu);
	v = ceems_bmc_curve_reading(&p->curve, r, now_ns);
	if (v == CEEMS_BMC_FRESH)
		p->period_ms = r->period_ms;
	pthread_mutex_unlock(&p->mu);
	if (v == CEEMS_BMC_GARBAGE) {
		snprintf(why, sizeof(why), "reading of %g W is not a node's power",
			 r->watts);
		failed(p, why, CEEMS_GAP_READ_ERROR);
		return;
	}
	if (v == CEEMS_BMC_STALE) {
		/* The BMC's reading lags: the curve holds the last one for
		 * a while, then makes gaps.  Said once per stale run, when
		 * it has become a gap. */
		if (p->stale_since_ns == 0)
			p->stale_since_ns = now_ns;
		if (!p->stale_warned &&
		    now_ns - p->stale_since_ns > p->curve.max_hold_ns) {
			queue_log(p, CEEMS_LOG_WARNING,
				  "BMC (%s): answers the same DCMI reading (stamp %u) again and again; node energy is a gap until it moves (a BMC whose DCMI stamp never moves: set bmc_sensor to one of its SDR power sensors)",
				  where(p), r->stamp);
			p->stale_warned = true;
			p->bad = true;
		}
		return;
	}
	p->stale_since_ns = 0;
	p->stale_warned = false;
	if (p->bad)
		queue_log(p, CEEMS_LOG_INFO,
			  "BMC (%s): measures again (%.0f W) after %u failed tries",
			  where(p), r->watts, p->failures);
	p->bad = false;
	p->failures = 0;
}

/* Connect if needed and read once.  The link stays open while it
 * works; a failed exchange closes it (a LAN session may be dead). */
static void
read_once(struct bmc_priv *p, struct bmc_link **link)
{
	struct ceems_bmc_credentials cr;
	struct ceems_bmc_reading r;
	char why[256], chosen[160];
	int ret;

	if (*link == NULL) {
		memset(&cr, 0, sizeof(cr));
		if (p->o.mode == CEEMS_BMC_LAN &&
		    ceems_bmc_creds_load(p->o.credentials_file, &cr, why,
					       sizeof(why)) < 0) {
			char msg[sizeof(why) + CEEMS_BMC_PATH_MAX + 32];

			snprintf(msg, sizeof(msg), "credentials file %s: %s",
				 p->o.credentials_file, why);
			failed(p, msg, CEEMS_GAP_READ_ERROR);
			return;
		}
		*link = ceems_bmc_ipmi_link_open(&p->o, &cr, why, sizeof(why));
		explicit_bzero(&cr, sizeof(cr));
		if (*link == NULL) {
			failed(p, why, CEEMS_GAP_READ_ERROR);
			return;
		}
	}
	ret = ceems_bmc_ipmi_link_read(*link, &p->o, &r, chosen, sizeof(chosen), why,
			    sizeof(why));
	if (ret < 0) {
		ceems_bmc_ipmi_link_close(*link);
		*link = NULL;
		failed(p, why, CEEMS_GAP_READ_ERROR);
		return;
	}
	if (chosen[0] != '\0' && strcmp(chosen, p->chosen) != 0) {
		snprintf(p->chosen, sizeof(p->chosen), "%s", chosen);
		queue_log(p, CEEMS_LOG_INFO, "BMC (%s): node power from %s",
			  where(p), chosen);
	}
	answered(p, &r, ceems_clock_monotonic_ns());
}

/* The wait before the next try: the interval, doubled per failure. */
static uint64_t
next_wait_ns(const struct bmc_priv *p)
{
	uint64_t wait = p->o.interval_ns, cap;

	cap = p->o.interval_ns * BACKOFF_MAX_READS;
	if (cap > BACKOFF_MAX_NS)
		cap = BACKOFF_MAX_NS;
	if (cap < p->o.interval_ns)
		cap = p->o.interval_ns;
	for (unsigned i = 1; i < p->failures && wait < cap; i++)
		wait *= 2;
	return wait < cap ? wait : cap;
}

static void *
bmc_thread(void *arg)
{
	struct bmc_priv *p = arg;
	struct bmc_link *link = NULL;
	struct timespec until;
	uint64_t deadline;

	for (;;) {
		read_once(p, &link);
		deadline = ceems_clock_monotonic_ns() + next_wait_ns(p);
		until.tv_sec = (time_t)(deadline / 1000000000ULL);
		until.tv_nsec = (long)(deadline % 1000000000ULL);
		pthread_mutex_lock(&p->mu);
		while (!p->stop && ceems_clock_monotonic_ns() < deadline)
			pthread_cond_timedwait(&p->wake, &p->mu, &until);
		if (p->stop) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		pthread_mutex_unlock(&p->mu);
	}
	ceems_bmc_ipmi_link_close(link);
	return NULL;
}

static int start_thread(struct bmc_priv *p);

static void
bmc_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	struct bmc_priv *p = src->priv;
	struct log_line q[LOG_QUEUE];
	enum ceems_energy_gap gap;
	unsigned n;
	double j;
	int ret;

	/* The thread starts at the first sample, not at the open: by then
	 * the agent has confined itself (Landlock binds only the threads
	 * made after it), and the thread inherits the confinement. */
	if (!p->started && !p->start_failed) {
		ret = start_thread(p);
		if (ret < 0) {
			p->start_failed = true;
			ceems_error("BMC: cannot start its thread (%s): node energy from the BMC is off",
				    strerror(-ret));
		}
	}
	pthread_mutex_lock(&p->mu);
	gap = ceems_bmc_curve_take(&p->curve, now_ns, &j);
	/* A reading is up to an interval old, and DCMI's averages the
	 * power over its period, whose middle lies half of it back. */
	src->counters[0].power_lag_s = (double)p->o.interval_ns / 1e9 +
	    (double)p->period_ms / 2000.0;
	n = p->nlog;
	memcpy(q, p->logq, n * sizeof(q[0]));
	p->nlog = 0;
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < n; i++)
		ceems_log(q[i].level, "%s", q[i].text);
	if (gap != CEEMS_GAP_NONE)
		ceems_energy_counter_gap(&src->counters[0], gap);
	else
		ceems_energy_counter_add(&src->counters[0], j);
}

static uint64_t
bmc_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	(void)src;
	return 0;
}

static void
bmc_close(struct ceems_energy_source *src)
{
	struct bmc_priv *p;

	if (src == NULL)
		return;
	p = src->priv;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->mu);
	free(p);
	free(src->counters);
	free(src);
}

static const struct ceems_energy_source_ops bmc_ops = {
	.kind = "bmc",
	.sample = bmc_sample,
	.max_sample_interval_ns = bmc_max_sample_interval_ns,
	.close = bmc_close,
	.reader = NULL,
};

static bool
options_usable(const struct ceems_bmc_options *o)
{
	if (o->mode == CEEMS_BMC_LAN && o->host[0] == '\0') {
		ceems_error("bmc = lan needs bmc_host (the BMC's name or address, \"name:port\" for another port than 623): node energy from the BMC is off");
		return false;
	}
	if (o->mode == CEEMS_BMC_LAN && o->credentials_file[0] == '\0') {
		ceems_error("bmc = lan needs bmc_credentials_file (a root-only file of \"username\" and \"password\" lines): node energy from the BMC is off");
		return false;
	}
	if (o->interval_ns == 0 || o->timeout_ns == 0)
		return false;
	return true;
}

static int
start_thread(struct bmc_priv *p)
{
	sigset_t all, old;
	int ret;

	/* Signals stay with the agent's main thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&p->thread, NULL, bmc_thread, p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret == 0)
		p->started = true;
	return -ret;
}

struct ceems_energy_source *
ceems_bmc_open(const struct ceems_bmc_options *o, uint64_t now_ns)
{
	const struct ceems_bmc_freeipmi *fi;
	struct ceems_energy_source *src;
	struct bmc_priv *p;
	pthread_condattr_t ca;
	char why[512];

	if (o->mode == CEEMS_BMC_NONE || !options_usable(o))
		return NULL;
	/* Loaded here, at start, before the agent confines itself: an
	 * agent without a BMC source never maps it. */
	if (ceems_bmc_freeipmi_load(&fi, why, sizeof(why)) < 0) {
		ceems_error("BMC: %s: node energy from the BMC is off", why);
		return NULL;
	}
	src = calloc(1, sizeof(*src));
	p = calloc(1, sizeof(*p));
	if (src == NULL || p == NULL ||
	    (src->counters = calloc(1, sizeof(*src->counters))) == NULL) {
		free(p);
		free(src);
		return NULL;
	}
	src->ops = &bmc_ops;
	src->ncounters = 1;
	src->priv = p;
	src->counters[0].domain = CEEMS_DOMAIN_NODE;
	src->counters[0].device = -1;
	snprintf(src->counters[0].name, sizeof(src->counters[0].name), "bmc");
	src->counters[0].power_res_w = 1;	/* DCMI's and SDR's whole watts */
	p->o = *o;
	/* A reading is an estimate for two intervals and one timeout after
	 * it: one late or lost answer is no gap, a BMC gone quiet is. */
	ceems_bmc_curve_init(&p->curve, 2 * o->interval_ns + o->timeout_ns,
			     now_ns);
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	return src;
}
