/* agent_intensity.c - the factor of each tick (agent_intensity.h).  The
 * series is a file an admin's timer rewrites (ceems-admin factors
 * export): the agent looks at its mtime at most once a minute, re-reads
 * it when it changed, and keeps the series it had when the new file is
 * bad or gone (one log line each time the file changes).  A tick the
 * series does not cover (no file yet, a stale file, a gap) gets the
 * yearly figure, marked as the fallback so that the job's data quality
 * says how much of its energy it priced. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/agent_internal.h"
#include "agent/agent_intensity.h"
#include "base/log.h"
#include "base/tick_path.h"

static int64_t
clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void
ceems_agent_intensity_set_wall_offset(struct ceems_agent *a, int64_t offset_ns)
{
	a->intensity.wall_offset_ns = offset_ns;
	a->intensity.wall_fixed = true;
}

/* The zone of the file must be the node's: another zone's intensities
 * would be a wrong fact, not a better one. */
static bool
zone_matches(const struct ceems_agent *a, const char *zone)
{
	char conf[sizeof(a->config.zone)];
	size_t i;

	for (i = 0; a->config.zone[i] != '\0' && i + 1 < sizeof(conf); i++)
		conf[i] = (a->config.zone[i] >= 'a' && a->config.zone[i] <= 'z') ?
		    (char)(a->config.zone[i] - 'a' + 'A') : a->config.zone[i];
	conf[i] = '\0';
	return strcmp(zone, a->factor.zone) == 0 || strcmp(zone, conf) == 0;
}

static void
load(struct ceems_agent *a, const struct stat *st)
{
	struct agent_intensity *in = &a->intensity;
	const char *path = a->config.intensity_file;
	struct ceems_intensity_series s;
	char err[256] = "";
	int ret;

	ret = ceems_intensity_load(path, &s, err, sizeof(err));
	if (ret < 0) {
		ceems_error("intensity_file %s: %s: the %s applies (fix the file or rerun ceems-admin factors export)",
			    path, err[0] != '\0' ? err : strerror(-ret),
			    in->series.nrows > 0 ? "series read before" : "yearly figure");
		return;
	}
	if (!zone_matches(a, s.zone)) {
		ceems_error("intensity_file %s is for zone %s, this node's zone is %s: the %s applies (export the series of zone %s)",
			    path, s.zone, a->factor.zone,
			    in->series.nrows > 0 ? "series read before" : "yearly figure",
			    a->factor.zone);
		ceems_intensity_free(&s);
		return;
	}
	ceems_intensity_free(&in->series);
	in->series = s;
	if (s.nrows > 0)
		ceems_info("intensity_file %s: %zu intervals of %s from %lld to %lld",
			   path, s.nrows, s.source, (long long)s.rows[0].valid_from,
			   (long long)s.rows[s.nrows - 1].valid_to);
	else
		ceems_warning("intensity_file %s has no intervals: the yearly figure applies",
			      path);
	(void)st;
}

static void
check_file(struct ceems_agent *a, uint64_t now_ns)
{
	struct agent_intensity *in = &a->intensity;
	struct stat st;

	in->checked = true;
	in->checked_ns = now_ns;
	if (!in->wall_fixed)
		in->wall_offset_ns = clock_ns(CLOCK_REALTIME) - (int64_t)now_ns;
	if (fstatat(AT_FDCWD, a->config.intensity_file, &st,
		    AT_SYMLINK_NOFOLLOW) < 0) {
		if (!in->missing_logged)
			ceems_warning("intensity_file %s: %s: the %s applies until it appears",
				      a->config.intensity_file, strerror(errno),
				      in->series.nrows > 0 ? "series read before" : "yearly figure");
		in->missing_logged = true;
		in->seen = false;
		return;
	}
	in->missing_logged = false;
	if (in->seen && st.st_mtim.tv_sec == in->mtime.tv_sec &&
	    st.st_mtim.tv_nsec == in->mtime.tv_nsec &&
	    st.st_size == in->size && st.st_ino == in->ino)
		return;
	in->seen = true;
	in->mtime = st.st_mtim;
	in->size = st.st_size;
	in->ino = st.st_ino;
	load(a, &st);
}

void
ceems_agent_intensity_open(struct ceems_agent *a, uint64_t now_ns)
{
	if (a->config.intensity_file[0] == '\0' || !a->have_factor)
		return;
	check_file(a, now_ns);
}

void
ceems_agent_intensity_close(struct ceems_agent *a)
{
	ceems_intensity_free(&a->intensity.series);
}

CEEMS_TICK_PATH const struct ceems_emission_factor *
ceems_agent_intensity_tick_factor(struct ceems_agent *a, uint64_t now_ns)
{
	struct agent_intensity *in = &a->intensity;
	const struct ceems_intensity_row *row;
	int64_t wall_s;
	time_t t;
	struct tm tm;

	if (!a->have_factor)
		return NULL;
	if (a->config.intensity_file[0] == '\0')
		return &a->factor;
	if (!in->checked || now_ns - in->checked_ns >= AGENT_INTENSITY_CHECK_NS ||
	    now_ns < in->checked_ns)
		check_file(a, now_ns);
	in->tick = a->factor;
	wall_s = ((int64_t)now_ns + in->wall_offset_ns) / 1000000000;
	row = ceems_intensity_at(&in->series, wall_s);
	if (row == NULL)
		return &in->tick;
	snprintf(in->tick.source, sizeof(in->tick.source), "%s%s",
		 CEEMS_INTENSITY_SOURCE_PREFIX, in->series.source);
	snprintf(in->tick.zone, sizeof(in->tick.zone), "%s", in->series.zone);
	t = (time_t)wall_s;
	if (gmtime_r(&t, &tm) != NULL)
		in->tick.year = tm.tm_year + 1900;
	in->tick.g_per_kwh = row->g_per_kwh;
	return &in->tick;
}

CEEMS_TICK_PATH int
ceems_agent_intensity_charge_tick(struct ceems_agent *a, struct ceems_job_ledger *l,
		  const struct ceems_ledger_job_share *share, double dt_s,
		  uint64_t now_ns)
{
	return ceems_ledger_add_tick_timed(l, share, dt_s,
					       ceems_agent_intensity_tick_factor(a, now_ns),
					       a->config.intensity_file[0] != '\0');
}
