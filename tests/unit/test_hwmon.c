/* test_hwmon.c - hwmon energy counters and integrated power channels on
 * fixture trees: domain mapping from chip names and labels, the
 * trapezoid rule, the power-integration stall, resets and bad inputs.
 * Expected joules are worked out from the fixture values and the time
 * stamps passed as now_ns. */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "model/energy.h"
#include "sources/hwmon.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define S 1000000000ULL
#define T0 (5000 * S)

static struct ceems_energy_take takes[CEEMS_HWMON_MAX_CHANNELS];

static void
take(struct ceems_energy_source *src)
{
	ceems_energy_source_take(src, takes);
}

static void
test_classify(void)
{
	enum ceems_energy_domain d = CEEMS_DOMAIN_COUNT;
	int dev = 99;

	is_int(ceems_hwmon_classify("amd_energy", "Esocket1", &d, &dev), 0, "Esocket1 kept");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == 1, "Esocket1 is package 1");
	is_int(ceems_hwmon_classify("amd_energy", "Ecore012", &d, &dev), -ENOENT, "Ecore012 is inside a package");
	is_int(ceems_hwmon_classify("xgene_hwmon", "CPU power", &d, &dev), 0, "CPU power kept");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == -1, "CPU power is the package domain, no device");
	is_int(ceems_hwmon_classify("x", "Package id 0", &d, &dev), 0, "Package id 0 kept");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == 0, "Package id 0 is package 0");
	is_int(ceems_hwmon_classify("xgene_hwmon", "IO power", &d, &dev), 0, "IO power kept");
	is_int(d, CEEMS_DOMAIN_NODE, "anything else is the node");
	is_int(ceems_hwmon_classify("x", "DRAM", &d, &dev), 0, "DRAM kept");
	is_int(d, CEEMS_DOMAIN_DRAM, "DRAM is the dram domain");
	is_int(ceems_hwmon_classify("x", "Memory 1", &d, &dev), 0, "Memory 1 kept");
	ok(d == CEEMS_DOMAIN_DRAM && dev == 1, "Memory 1 is dram device 1");
	is_int(ceems_hwmon_classify("amdgpu", "PPT", &d, &dev), -ENOENT, "amdgpu chips belong to the GPU sources");
	is_int(ceems_hwmon_classify("x", "GPU0 power", &d, &dev), -ENOENT, "GPU labels belong to the GPU sources");
	is_int(ceems_hwmon_classify("fam15h_power", "", &d, &dev), 0, "fam15h_power kept");
	is_int(d, CEEMS_DOMAIN_PACKAGE, "a CPU chip without label is the package");
	is_int(ceems_hwmon_classify("power_meter", "", &d, &dev), 0, "power_meter kept");
	ok(d == CEEMS_DOMAIN_NODE && dev == -1, "an unlabelled meter is the node");
}

static void
test_layout(void)
{
	struct ceems_energy_source *src;

	src = ceems_hwmon_open(fixture_path("sys/hwmon"), 0, T0);
	if (!ok(src != NULL, "layout: opened"))
		return;
	is_str(src->ops->kind, "hwmon", "layout: kind");
	is_int(src->ncounters, 5, "layout: 5 channels");
	is_str(src->counters[0].name, "hwmon0/power1", "layout: power1_average of a meter without energy");
	is_int(src->counters[0].domain, CEEMS_DOMAIN_NODE, "layout: meter is the node");
	is_str(src->counters[1].name, "hwmon1/energy3", "layout: Esocket0 (the Ecore channels are left out)");
	ok(src->counters[1].domain == CEEMS_DOMAIN_PACKAGE && src->counters[1].device == 0, "layout: package 0");
	is_str(src->counters[2].name, "hwmon1/energy4", "layout: Esocket1");
	ok(src->counters[2].domain == CEEMS_DOMAIN_PACKAGE && src->counters[2].device == 1, "layout: package 1");
	is_str(src->counters[3].name, "hwmon3/energy1", "layout: PSU energy; its power1 (same label) left out");
	is_int(src->counters[3].domain, CEEMS_DOMAIN_NODE, "layout: PSU is the node");
	is_str(src->counters[4].name, "hwmon3/power2", "layout: DIMM power integrated");
	is_int(src->counters[4].domain, CEEMS_DOMAIN_DRAM, "layout: DIMM is dram");
	is_int(ceems_energy_source_max_sample_interval_ns(src), 5 * S,
	       "layout: power channels ask for half the 10 s integration limit");
	ceems_energy_source_close(src);

	src = ceems_hwmon_open(fixture_path("sys/hwmon"), 30 * S, T0);
	if (ok(src != NULL, "layout: opened with a 30 s limit"))
		is_int(ceems_energy_source_max_sample_interval_ns(src), 15 * S, "layout: configured limit halved");
	ceems_energy_source_close(src);
}

#define METER "class/hwmon/hwmon0/power1_average"
#define SOCK0 "class/hwmon/hwmon1/energy3_input"
#define SOCK1 "class/hwmon/hwmon1/energy4_input"
#define PSU "class/hwmon/hwmon3/energy1_input"
#define DIMM "class/hwmon/hwmon3/power2_input"

static void
test_measure(void)
{
	const char *root = tmptree_new(fixture_path("sys/hwmon"));
	struct ceems_energy_source *src = ceems_hwmon_open(root, 0, T0);

	if (!ok(src != NULL, "measure: opened a copy"))
		goto out;
	tmptree_write(root, METER, "370000000\n");
	tmptree_write(root, SOCK0, "1150500000\n");
	tmptree_write(root, PSU, "5600000000\n");
	tmptree_write(root, DIMM, "17000000\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	take(src);
	is_near(takes[0].joules, 720.0, 1e-9, "measure: (350 W + 370 W) / 2 x 2 s = 720 J");
	is_near(takes[1].joules, 150.5, 1e-9, "measure: socket 0 150.5 J");
	is_near(takes[2].joules, 0.0, 0.0, "measure: socket 1 unchanged");
	is_int(takes[2].gap, CEEMS_GAP_NONE, "measure: unchanged is a measurement of 0 J");
	is_near(takes[3].joules, 600.0, 1e-9, "measure: PSU 600 J");
	is_near(takes[4].joules, 32.0, 1e-9, "measure: (15 W + 17 W) / 2 x 2 s = 32 J");

	/* 11 s without a sample: more than the 10 s integration limit. */
	ceems_energy_source_sample(src, T0 + 13 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_STALL, "stall: power over 11 s is not integrated");
	is_near(takes[0].joules, 0.0, 0.0, "stall: no energy invented");
	is_int(takes[4].gap, CEEMS_GAP_STALL, "stall: dimm power too");
	is_int(takes[1].gap, CEEMS_GAP_NONE, "stall: energy counters do not stall");
	tmptree_write(root, METER, "360000000\n");
	ceems_energy_source_sample(src, T0 + 14 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_NONE, "stall: integrating again");
	is_near(takes[0].joules, 365.0, 1e-9, "stall: from the stalled reading: (370 + 360) / 2 x 1 s");

	/* Energy going backwards, then jumping by 2^62 uJ. */
	tmptree_write(root, SOCK0, "1100000000\n");
	tmptree_write(root, SOCK1, "6611686018427387904\n");
	ceems_energy_source_sample(src, T0 + 15 * S);
	take(src);
	is_int(takes[1].gap, CEEMS_GAP_RESET, "reset: energy went backwards");
	is_int(takes[2].gap, CEEMS_GAP_RESET, "reset: 4.6e12 J in 1 s is no sensor");
	tmptree_write(root, SOCK0, "1101000000\n");
	ceems_energy_source_sample(src, T0 + 16 * S);
	take(src);
	is_near(takes[1].joules, 1.0, 1e-9, "reset: the new value is the baseline");

	/* Garbage power, absurd power, then recovery. */
	tmptree_write(root, METER, "lots\n");
	tmptree_write(root, DIMM, "200000000000\n");
	ceems_energy_source_sample(src, T0 + 17 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: garbage power");
	is_int(takes[4].gap, CEEMS_GAP_READ_ERROR, "errors: 200 kW is not a reading");
	tmptree_write(root, METER, "300000000\n");
	tmptree_write(root, DIMM, "10000000\n");
	ceems_energy_source_sample(src, T0 + 18 * S);
	take(src);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: first good power reading is a baseline");
	tmptree_write(root, METER, "310000000\n");
	ceems_energy_source_sample(src, T0 + 18 * S + S / 2);
	take(src);
	is_near(takes[0].joules, 152.5, 1e-9, "errors: (300 + 310) / 2 x 0.5 s = 152.5 J");
	is_near(takes[4].joules, 5.0, 1e-9, "errors: dimm 10 W x 0.5 s");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_bad(void)
{
	const char *root = tmptree_new(fixture_path("sys/hwmon-bad"));
	struct ceems_energy_source *src = ceems_hwmon_open(root, 0, T0);
	size_t i;

	if (!ok(src != NULL, "bad: opened"))
		goto out;
	is_int(src->ncounters, 6, "bad: six channels (energy first, then power)");
	is_str(src->counters[0].name, "hwmon0/energy3", "bad: energy3");
	is_str(src->counters[5].name, "hwmon0/power6", "bad: power6");
	take(src);
	/* energy3 2^70, energy4 good, energy5 empty, power1 garbage,
	 * power2 200 kW, power6 a directory. */
	for (i = 0; i < 6; i++)
		ok(takes[i].gap == (i == 1 ? CEEMS_GAP_NONE : CEEMS_GAP_READ_ERROR),
		   "bad: channel %zu at open", i);
	tmptree_write(root, "class/hwmon/hwmon0/energy4_input", "3000000\n");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	is_near(takes[1].joules, 2.0, 1e-9, "bad: the good channel measures beside bad ones");
	for (i = 0; i < 6; i++)
		if (i != 1)
			is_int(takes[i].gap, CEEMS_GAP_READ_ERROR, "bad: still a read error");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_absent(void)
{
	ok(ceems_hwmon_open(fixture_path("sys/does-not-exist"), 0, T0) == NULL, "absent: no tree");
	ok(ceems_hwmon_open(fixture_path("sys/rapl-intel"), 0, T0) == NULL, "absent: no hwmon class");
}

int
main(void)
{
	test_classify();
	test_layout();
	test_measure();
	test_bad();
	test_absent();
	return done_testing();
}
