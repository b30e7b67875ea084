/* test_rapl.c - RAPL through powercap on fixture trees (Intel two
 * sockets with dram, AMD naming, bad inputs), and the counter rules of
 * energy.c that every source shares: wrap, stall, reset, read errors and
 * the per-tick take.  Expected joules are worked out by hand from the
 * fixture values and the time stamps passed as now_ns. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "model/energy.h"
#include "base/log.h"
#include "base/number.h"
#include "sources/rapl.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define S 1000000000ULL		/* one second in ns */
#define T0 (1000 * S)		/* an arbitrary monotonic start */

/* Counts of log lines, to check that a bad counter logs once. */
static int nwarnings, ninfos;

static void
count_log(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		nwarnings++;
	else if (level == CEEMS_LOG_INFO)
		ninfos++;
	printf("# log: %s\n", message);
}

static struct ceems_energy_take takes[16];

static void
take(struct ceems_energy_source *src)
{
	ceems_energy_source_take(src, takes);
}

static void
test_parse_u64(void)
{
	uint64_t v = 7;

	is_int(ceems_number_parse_u64("0", &v), 0, "parse: 0");
	is_int(v, 0, "parse: 0 value");
	is_int(ceems_number_parse_u64("262143328850\n", &v), 0, "parse: with newline");
	is_int(v, 262143328850ULL, "parse: value");
	is_int(ceems_number_parse_u64("18446744073709551615\n", &v), 0, "parse: UINT64_MAX");
	ok(v == UINT64_MAX, "parse: UINT64_MAX value");
	is_int(ceems_number_parse_u64("18446744073709551616", &v), -ERANGE, "parse: 2^64 is out of range");
	is_int(ceems_number_parse_u64("1180591620717411303424\n", &v), -ERANGE, "parse: 2^70 is out of range");
	is_int(ceems_number_parse_u64("", &v), -EINVAL, "parse: empty (truncated file)");
	is_int(ceems_number_parse_u64("\n", &v), -EINVAL, "parse: only a newline");
	is_int(ceems_number_parse_u64("-1\n", &v), -EINVAL, "parse: negative");
	is_int(ceems_number_parse_u64(" 1", &v), -EINVAL, "parse: leading blank");
	is_int(ceems_number_parse_u64("12abc\n", &v), -EINVAL, "parse: trailing garbage");
	is_int(ceems_number_parse_u64("1\n\n", &v), -EINVAL, "parse: two newlines");
	is_int(ceems_number_parse_u64("0x10", &v), -EINVAL, "parse: hex");
}

static void
test_counter_delta(void)
{
	/* A 1 J counter (uJ) on a 10 W zone wraps at most once in 0.1 s. */
	struct ceems_energy_counter_limits lim = { 1e-6, 1000000, 10.0, 0 };
	struct ceems_energy_counter_limits norange = { 1e-6, 0, 10.0, 0 };
	double j = -1;

	is_int(ceems_energy_wrap_period_ns(&lim), 100000000, "wrap period = range / max power");
	is_int(ceems_energy_wrap_period_ns(&norange), 0, "no range: no wrap period");
	is_int(ceems_energy_counter_delta(&lim, 100000, 400000, 50000000, &j), CEEMS_GAP_NONE, "delta: forward");
	is_near(j, 0.3, 1e-12, "delta: 0.3 J");
	is_int(ceems_energy_counter_delta(&lim, 900000, 100000, 50000000, &j), CEEMS_GAP_NONE, "delta: one wrap");
	is_near(j, 0.2, 1e-12, "delta: range - prev + cur = 0.2 J");
	is_int(ceems_energy_counter_delta(&lim, 100000, 200000, 100000001, &j), CEEMS_GAP_STALL,
	       "delta: past the wrap period is a stall, even going forward");
	is_near(j, 0.0, 0.0, "delta: stall counts nothing");
	is_int(ceems_energy_counter_delta(&lim, 900000, 100000, 10000000, &j), CEEMS_GAP_RESET,
	       "delta: a wrap needing 20 W on a 10 W zone is a reset");
	is_int(ceems_energy_counter_delta(&lim, 100000, 800000, 10000000, &j), CEEMS_GAP_RESET,
	       "delta: a forward jump needing 70 W is a reset");
	is_int(ceems_energy_counter_delta(&norange, 500, 400, 1000, &j), CEEMS_GAP_RESET,
	       "delta: backwards without a range is a reset");
	is_int(ceems_energy_counter_delta(&lim, 100, 1000001, 1000, &j), CEEMS_GAP_READ_ERROR,
	       "delta: a value above the range is garbage");
	is_int(ceems_energy_counter_delta(&lim, 5, 5, 0, &j), CEEMS_GAP_NONE, "delta: no time, no change");
	is_near(j, 0.0, 0.0, "delta: 0 J");
}

static void
test_names_and_take(void)
{
	struct ceems_energy_counter c[2];
	struct ceems_energy_source src = { NULL, c, 2, NULL };
	struct ceems_energy_take out[2];

	is_str(ceems_job_figures_energy_domain_name(CEEMS_DOMAIN_DRAM), "dram", "domain name");
	is_str(ceems_job_figures_energy_domain_name(CEEMS_DOMAIN_COUNT), "unknown", "domain name out of range");
	is_str(ceems_energy_gap_name(CEEMS_GAP_STALL), "stall", "gap name");
	is_str(ceems_energy_gap_name((enum ceems_energy_gap)42), "unknown", "gap name out of range");

	memset(c, 0, sizeof(c));
	ceems_energy_counter_add(&c[0], 1.5);
	ceems_energy_counter_add(&c[0], 2.0);
	ceems_energy_counter_add(&c[1], 4.0);
	ceems_energy_counter_gap(&c[1], CEEMS_GAP_RESET);
	ceems_energy_counter_gap(&c[1], CEEMS_GAP_STALL);
	ceems_energy_source_take(&src, out);
	is_near(out[0].joules, 3.5, 1e-12, "take: samples of a tick add up");
	is_int(out[0].gap, CEEMS_GAP_NONE, "take: no gap");
	is_near(out[1].joules, 0.0, 0.0, "take: a gap drops the whole tick's energy");
	is_int(out[1].gap, CEEMS_GAP_RESET, "take: the first gap of the tick is reported");
	ceems_energy_source_take(&src, out);
	ok(out[0].joules == 0.0 && out[1].gap == CEEMS_GAP_NONE, "take: pending state cleared");
}

static void
test_classify(void)
{
	enum ceems_energy_domain d = CEEMS_DOMAIN_COUNT;
	int dev = 99;

	is_int(ceems_rapl_classify_zone("package-0", &d, &dev), 0, "zone package-0");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == 0, "package-0 is package 0");
	is_int(ceems_rapl_classify_zone("package-3-die-1", &d, &dev), 0, "zone package-3-die-1");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == 3, "a die counts in package 3");
	is_int(ceems_rapl_classify_zone("dram", &d, &dev), 0, "zone dram");
	is_int(d, CEEMS_DOMAIN_DRAM, "dram domain");
	is_int(ceems_rapl_classify_zone("psys", &d, &dev), 0, "zone psys");
	ok(d == CEEMS_DOMAIN_NODE && dev == -1, "psys is the node (platform) domain");
	is_int(ceems_rapl_classify_zone("psys-1", &d, &dev), 0, "zone psys-1");
	is_int(dev, 1, "psys-1 device");
	is_int(ceems_rapl_classify_zone("core", &d, &dev), -ENOENT, "core is part of the package");
	is_int(ceems_rapl_classify_zone("uncore", &d, &dev), -ENOENT, "uncore is part of the package");
	is_int(ceems_rapl_classify_zone("package-", &d, &dev), -EINVAL, "package- without number");
	is_int(ceems_rapl_classify_zone("package-0-die-", &d, &dev), -EINVAL, "die without number");
	is_int(ceems_rapl_classify_zone("package-0x", &d, &dev), -EINVAL, "package-0x");
	is_int(ceems_rapl_classify_zone("Package-0", &d, &dev), -EINVAL, "names are case-sensitive");
	is_int(ceems_rapl_classify_zone("", &d, &dev), -EINVAL, "empty name");
}

static void
test_intel_layout(void)
{
	struct ceems_energy_source *src;
	size_t i;

	src = ceems_rapl_open(fixture_path("sys/rapl-intel"), T0);
	if (!ok(src != NULL, "intel: opened"))
		return;
	is_str(src->ops->kind, "rapl", "intel: kind");
	is_int(src->ncounters, 4, "intel: 2 packages + 2 dram; core and mmio left out");
	is_str(src->counters[0].name, "intel-rapl:0", "intel: zone 0");
	ok(src->counters[0].domain == CEEMS_DOMAIN_PACKAGE && src->counters[0].device == 0, "intel: package 0");
	is_str(src->counters[1].name, "intel-rapl:0:1", "intel: zone 0:1");
	ok(src->counters[1].domain == CEEMS_DOMAIN_DRAM && src->counters[1].device == 0, "intel: dram of package 0");
	is_str(src->counters[2].name, "intel-rapl:1", "intel: zone 1");
	ok(src->counters[2].domain == CEEMS_DOMAIN_PACKAGE && src->counters[2].device == 1, "intel: package 1");
	ok(src->counters[3].domain == CEEMS_DOMAIN_DRAM && src->counters[3].device == 1, "intel: dram of package 1");
	/* dram of package 1 has no constraint: 1500 W; 65712.999613 J /
	 * 1500 W = 43.808666409 s, sampled twice as often. */
	is_near((double)ceems_energy_source_max_sample_interval_ns(src), 21904333204.0, 2.0,
		"intel: max sample interval = half the shortest wrap period");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	for (i = 0; i < 4; i++)
		ok(takes[i].gap == CEEMS_GAP_NONE && takes[i].joules == 0.0, "intel: unchanged counter %zu is 0 J", i);
	ceems_energy_source_close(src);
}

static void
test_amd_layout(void)
{
	struct ceems_energy_source *src;

	src = ceems_rapl_open(fixture_path("sys/rapl-amd"), T0);
	if (!ok(src != NULL, "amd: opened"))
		return;
	is_int(src->ncounters, 2, "amd: two packages, core subzones left out");
	ok(src->counters[0].domain == CEEMS_DOMAIN_PACKAGE && src->counters[0].device == 0, "amd: package 0");
	ok(src->counters[1].domain == CEEMS_DOMAIN_PACKAGE && src->counters[1].device == 1, "amd: package 1");
	/* No power-limit files at all on AMD: 1500 W assumed. */
	is_near((double)ceems_energy_source_max_sample_interval_ns(src), 21904333204.0, 2.0,
		"amd: max sample interval from the 1500 W default");
	ceems_energy_source_close(src);
}

#define PKG0 "class/powercap/intel-rapl:0/energy_uj"
#define DRAM0 "class/powercap/intel-rapl:0:1/energy_uj"
#define PKG1 "class/powercap/intel-rapl:1/energy_uj"
#define DRAM1 "class/powercap/intel-rapl:1:1/energy_uj"

static void
test_measure_and_wrap(void)
{
	const char *root = tmptree_new(fixture_path("sys/rapl-intel"));
	struct ceems_energy_source *src = ceems_rapl_open(root, T0);

	if (!ok(src != NULL, "measure: opened a copy"))
		goto out;
	/* From the fixture's 100, 20, 200 and 30 J. */
	tmptree_write(root, PKG0, "130000000\n");
	tmptree_write(root, DRAM0, "22500000\n");
	tmptree_write(root, PKG1, "245500000\n");
	tmptree_write(root, DRAM1, "31250000\n");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	is_near(takes[0].joules, 30.0, 1e-9, "measure: package 0 30 J");
	is_near(takes[1].joules, 2.5, 1e-9, "measure: dram 0 2.5 J");
	is_near(takes[2].joules, 45.5, 1e-9, "measure: package 1 45.5 J");
	is_near(takes[3].joules, 1.25, 1e-9, "measure: dram 1 1.25 J");
	is_int(takes[0].gap + takes[1].gap + takes[2].gap + takes[3].gap, CEEMS_GAP_NONE, "measure: no gaps");

	/* Two samples in one tick add up. */
	tmptree_write(root, PKG0, "140000000\n");
	ceems_energy_source_sample(src, T0 + S + S / 2);
	tmptree_write(root, PKG0, "145000000\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	take(src);
	is_near(takes[0].joules, 15.0, 1e-9, "measure: 10 J + 5 J in one tick");

	/* A wrap: 328850 uJ before the 262143328850 uJ range, then 1 J. */
	tmptree_write(root, PKG0, "262143000000\n");
	ceems_energy_source_sample(src, T0 + 3 * S);	/* a reset (too much), rebase */
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_RESET, "wrap setup: 262 kJ in 1 s is a reset");
	tmptree_write(root, PKG0, "1000000\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_NONE, "wrap: counted, not a reset");
	is_near(takes[0].joules, 1.32885, 1e-9, "wrap: range - prev + cur = 1.32885 J");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_stall(void)
{
	const char *root = tmptree_new(fixture_path("sys/rapl-intel"));
	struct ceems_energy_source *src = ceems_rapl_open(root, T0);
	size_t i;

	if (!ok(src != NULL, "stall: opened a copy"))
		goto out;
	/* dram 1 (1500 W assumed) wraps at most once in 43.8 s: 43 s is
	 * still a measurement, 44 s more is not.  Package 0 (2 x 180 W)
	 * can go 728 s. */
	tmptree_write(root, DRAM1, "130000000\n");
	ceems_energy_source_sample(src, T0 + 43 * S);
	take(src);
	is_int(takes[3].gap, CEEMS_GAP_NONE, "stall: 43 s < 43.8 s wrap period");
	is_near(takes[3].joules, 100.0, 1e-9, "stall: 100 J over 43 s");
	tmptree_write(root, DRAM1, "140000000\n");
	tmptree_write(root, PKG0, "150000000\n");
	ceems_energy_source_sample(src, T0 + 87 * S);
	take(src);
	is_int(takes[3].gap, CEEMS_GAP_STALL, "stall: 44 s > 43.8 s is a stall");
	is_near(takes[3].joules, 0.0, 0.0, "stall: no energy invented");
	is_int(takes[0].gap, CEEMS_GAP_NONE, "stall: package 0 still within its 728 s");
	is_near(takes[0].joules, 50.0, 1e-9, "stall: package 0 50 J");

	/* 1100 s: more than every zone's wrap period (dram 0, 2 x 30 W:
	 * 1095.2 s; package 1, 2 x 150 W: 873.8 s). */
	ceems_energy_source_sample(src, T0 + 1187 * S);
	take(src);
	for (i = 0; i < 4; i++)
		is_int(takes[i].gap, CEEMS_GAP_STALL, "stall: 1100 s is a stall for every zone");
	tmptree_write(root, PKG0, "153000000\n");
	ceems_energy_source_sample(src, T0 + 1188 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_NONE, "stall: the stalled reading is the new baseline");
	is_near(takes[0].joules, 3.0, 1e-9, "stall: then 3 J measured");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_reset(void)
{
	const char *root = tmptree_new(fixture_path("sys/rapl-intel"));
	struct ceems_energy_source *src = ceems_rapl_open(root, T0);

	if (!ok(src != NULL, "reset: opened a copy"))
		goto out;
	/* 100 J -> 60 J in 1 s: as a wrap it would be 262 kJ. */
	tmptree_write(root, PKG0, "60000000\n");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_RESET, "reset: backwards, no wrap fits");
	is_near(takes[0].joules, 0.0, 0.0, "reset: not counted");
	tmptree_write(root, PKG0, "62000000\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	take(src);
	is_near(takes[0].joules, 2.0, 1e-9, "reset: the new value is the baseline");

	/* Forward by 1000 J in 1 s: 360 W x 1.05 s = 378 J at most. */
	tmptree_write(root, PKG0, "1062000000\n");
	ceems_energy_source_sample(src, T0 + 3 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_RESET, "reset: an impossible jump forward");
	/* 377 J in 1 s is possible at 360 W with the 50 ms slack. */
	tmptree_write(root, PKG0, "1439000000\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_NONE, "reset: 377 J in 1.05 s x 360 W is believed");
	is_near(takes[0].joules, 377.0, 1e-9, "reset: 377 J");

	/* The range is the driver's constant: it changes only with a
	 * reload, which recreates the files (see test_bad_fixture).  It is
	 * read at open, not at every sample, so a rewrite in place is not
	 * seen. */
	tmptree_write(root, "class/powercap/intel-rapl:1/max_energy_range_uj", "65712999613\n");
	tmptree_write(root, PKG1, "201000000\n");
	ceems_energy_source_sample(src, T0 + 5 * S);
	take(src);
	is_int(takes[2].gap, CEEMS_GAP_NONE, "reset: max_energy_range_uj is not re-read while energy_uj reads");
	is_near(takes[2].joules, 1.0, 1e-9, "reset: 1 J under the range read at open");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_read_errors(void)
{
	const char *root = tmptree_new(fixture_path("sys/rapl-intel"));
	struct ceems_energy_source *src;
	int w, in;

	ceems_log_set_handler(count_log, NULL);
	src = ceems_rapl_open(root, T0);
	if (!ok(src != NULL, "errors: opened a copy"))
		goto out;
	w = nwarnings;
	in = ninfos;
	tmptree_write(root, PKG0, "12x45\n");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: garbage is a read error");
	is_int(takes[1].gap, CEEMS_GAP_NONE, "errors: other zones unaffected");
	is_int(nwarnings - w, 1, "errors: one warning when the counter goes bad");
	tmptree_write(root, PKG0, "");
	ceems_energy_source_sample(src, T0 + 2 * S);
	tmptree_write(root, PKG0, "1180591620717411303424\n");
	ceems_energy_source_sample(src, T0 + 3 * S);
	tmptree_write(root, PKG0, "262143328851\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: truncated, 2^70 and above-range values are read errors");
	is_int(nwarnings - w, 1, "errors: no more warnings while it stays bad");
	tmptree_write(root, PKG0, "110000000\n");
	ceems_energy_source_sample(src, T0 + 5 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: the first good value is a baseline, its interval a gap");
	is_int(ninfos - in, 1, "errors: one line when it measures again");
	tmptree_write(root, PKG0, "111000000\n");
	ceems_energy_source_sample(src, T0 + 6 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_NONE, "errors: measuring again");
	is_near(takes[0].joules, 1.0, 1e-9, "errors: 1 J");

	/* The range file is read at open only (garbage there on reopening:
	 * see test_bad_fixture). */
	tmptree_write(root, "class/powercap/intel-rapl:0:1/max_energy_range_uj", "lots\n");
	tmptree_write(root, DRAM0, "21000000\n");
	ceems_energy_source_sample(src, T0 + 7 * S);
	take(src);
	is_int(takes[1].gap, CEEMS_GAP_NONE, "errors: the range file is not read at every sample");
	is_near(takes[1].joules, 1.0, 1e-9, "errors: dram 0 1 J");
	ceems_energy_source_close(src);
out:
	ceems_log_set_handler(NULL, NULL);
	tmptree_remove(root);
}

static void
test_bad_fixture(void)
{
	const char *root = tmptree_new(fixture_path("sys/rapl-bad"));
	struct ceems_energy_source *src = ceems_rapl_open(root, T0);
	char path[PATH_MAX];
	size_t i;

	if (!ok(src != NULL, "bad: opened (one zone is good)"))
		goto out;
	/* Left out: 0 (no energy_uj), 1 (garbage range), 2 (unknown name),
	 * 3 (no name), 10 (range 0). */
	is_int(src->ncounters, 6, "bad: zones 4 to 9 kept");
	is_str(src->counters[0].name, "intel-rapl:4", "bad: first kept zone");
	is_str(src->counters[5].name, "intel-rapl:9", "bad: last kept zone");
	/* Zone 7's constraint is garbage: 1500 W, 262143.32885 J / 1500 W
	 * / 2 = 87.381 s. */
	is_near((double)ceems_energy_source_max_sample_interval_ns(src), 87381109616.0, 2.0,
		"bad: garbage constraint ignored, default power used");
	take(src);
	for (i = 0; i < 6; i++)
		ok(takes[i].gap == (i == 3 ? CEEMS_GAP_NONE : CEEMS_GAP_READ_ERROR),
		   "bad: baseline of zone %zu (garbage, 2^70, above range, good, directory, empty)", i + 4);
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	for (i = 0; i < 6; i++)
		ok(takes[i].gap == (i == 3 ? CEEMS_GAP_NONE : CEEMS_GAP_READ_ERROR),
		   "bad: first sample of zone %zu", i + 4);

	/* Repair zone 4 in place.  Zone 8's energy_uj failed (a directory:
	 * EISDIR) and was closed, as after a driver reload (ENODEV); its
	 * files come back as a new counter, first with a garbage range. */
	tmptree_write(root, "class/powercap/intel-rapl:4/energy_uj", "5000000\n");
	snprintf(path, sizeof(path), "%s/class/powercap/intel-rapl:8/energy_uj", root);
	tmptree_remove(path);
	tmptree_write(root, "class/powercap/intel-rapl:8/energy_uj", "7000000\n");
	tmptree_write(root, "class/powercap/intel-rapl:8/max_energy_range_uj", "lots\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "bad: repaired zone 4 rebases");
	is_int(takes[4].gap, CEEMS_GAP_READ_ERROR, "bad: zone 8 reopened with a garbage range: not a counter yet");
	/* Then a good range, another than the one read at open (262 kJ). */
	tmptree_write(root, "class/powercap/intel-rapl:8/max_energy_range_uj", "10000000000\n");
	tmptree_write(root, "class/powercap/intel-rapl:4/energy_uj", "6000000\n");
	tmptree_write(root, "class/powercap/intel-rapl:8/energy_uj", "9999000000\n");
	ceems_energy_source_sample(src, T0 + 3 * S);
	take(src);
	is_near(takes[0].joules, 1.0, 1e-9, "bad: zone 4 measures 1 J");
	is_int(takes[4].gap, CEEMS_GAP_RESET, "bad: zone 8's counter file came back: a new counter");
	/* A wrap at the new 10 kJ range: 1 J + 1 J.  Under the old range it
	 * would be 252 kJ in 1 s, a reset. */
	tmptree_write(root, "class/powercap/intel-rapl:8/energy_uj", "1000000\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	take(src);
	is_int(takes[4].gap, CEEMS_GAP_NONE, "bad: zone 8 wraps at the range re-read on reopening");
	is_near(takes[4].joules, 2.0, 1e-9, "bad: zone 8 measures 2 J across the wrap");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_absent(void)
{
	ok(ceems_rapl_open(fixture_path("sys/does-not-exist"), T0) == NULL, "absent: no sysfs tree");
	ok(ceems_rapl_open(fixture_path("sys/hwmon"), T0) == NULL, "absent: no powercap class");
	ceems_energy_source_close(NULL);
	ok(1, "absent: closing NULL is harmless");
}

int
main(void)
{
	test_parse_u64();
	test_counter_delta();
	test_names_and_take();
	test_classify();
	test_intel_layout();
	test_amd_layout();
	test_measure_and_wrap();
	test_stall();
	test_reset();
	test_read_errors();
	test_bad_fixture();
	test_absent();
	return done_testing();
}
