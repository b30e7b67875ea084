/* test_pm_counters.c - HPE Cray pm_counters on fixture trees: the file
 * format, the domain of each file, deltas, resets and bad inputs.
 * Expected joules are worked out from the fixture values. */
#include "config.h"

#include <errno.h>
#include <stdint.h>

#include "model/energy.h"
#include "sources/pm_counters.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define S 1000000000ULL
#define T0 (77 * S)

static struct ceems_energy_take takes[CEEMS_PM_COUNTERS_MAX];

static void
take(struct ceems_energy_source *src)
{
	ceems_energy_source_take(src, takes);
}

static void
test_parse(void)
{
	uint64_t j = 5;

	is_int(ceems_pm_counters_parse("123456 J 1687170683291597 us\n", &j), 0, "parse: full line");
	is_int(j, 123456, "parse: value");
	is_int(ceems_pm_counters_parse("0 J\n", &j), 0, "parse: without time stamp");
	is_int(j, 0, "parse: 0 J");
	is_int(ceems_pm_counters_parse("7 J", &j), 0, "parse: no newline");
	is_int(ceems_pm_counters_parse("350 W 1687170683291597 us\n", &j), -EINVAL, "parse: watts are not joules");
	is_int(ceems_pm_counters_parse("8000\n", &j), -EINVAL, "parse: line cut before the unit");
	is_int(ceems_pm_counters_parse("8000", &j), -EINVAL, "parse: value only");
	is_int(ceems_pm_counters_parse("", &j), -EINVAL, "parse: empty");
	is_int(ceems_pm_counters_parse("garbage\n", &j), -EINVAL, "parse: garbage");
	is_int(ceems_pm_counters_parse("-5 J\n", &j), -EINVAL, "parse: negative");
	is_int(ceems_pm_counters_parse("12 Joules\n", &j), -EINVAL, "parse: other unit word");
	is_int(ceems_pm_counters_parse("1180591620717411303424 J 1 us\n", &j), -ERANGE, "parse: 2^70");
	is_int(ceems_pm_counters_parse("123456789012345678901234567890123 J\n", &j), -ERANGE, "parse: very long number");
}

static void
test_classify(void)
{
	enum ceems_energy_domain d = CEEMS_DOMAIN_COUNT;
	int dev = 99;

	is_int(ceems_pm_counters_classify("energy", &d, &dev), 0, "energy");
	ok(d == CEEMS_DOMAIN_NODE && dev == -1, "energy is the node");
	is_int(ceems_pm_counters_classify("cpu_energy", &d, &dev), 0, "cpu_energy");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == -1, "cpu_energy is the package domain");
	is_int(ceems_pm_counters_classify("cpu1_energy", &d, &dev), 0, "cpu1_energy");
	ok(d == CEEMS_DOMAIN_PACKAGE && dev == 1, "cpu1_energy is package 1");
	is_int(ceems_pm_counters_classify("memory_energy", &d, &dev), 0, "memory_energy");
	is_int(d, CEEMS_DOMAIN_DRAM, "memory_energy is dram");
	is_int(ceems_pm_counters_classify("accel3_energy", &d, &dev), 0, "accel3_energy");
	ok(d == CEEMS_DOMAIN_GPU && dev == 3, "accel3_energy is GPU 3");
	is_int(ceems_pm_counters_classify("accel_energy", &d, &dev), -ENOENT, "accel_energy without index");
	is_int(ceems_pm_counters_classify("power", &d, &dev), -ENOENT, "power is not energy");
	is_int(ceems_pm_counters_classify("accel0_power_cap", &d, &dev), -ENOENT, "power cap is not energy");
	is_int(ceems_pm_counters_classify("energy~", &d, &dev), -ENOENT, "energy~");
	is_int(ceems_pm_counters_classify("freshness", &d, &dev), -ENOENT, "freshness");
}

#define PMDIR "cray/pm_counters/"

static void
test_measure(void)
{
	const char *root = tmptree_new(fixture_path("sys/cray"));
	struct ceems_energy_source *src = ceems_pm_counters_open(root, T0);

	if (!ok(src != NULL, "measure: opened"))
		goto out;
	is_str(src->ops->kind, "pm_counters", "measure: kind");
	is_int(src->ncounters, 5, "measure: five energy files");
	is_str(src->counters[0].name, "pm_counters/accel0_energy", "measure: sorted by file name");
	ok(src->counters[0].domain == CEEMS_DOMAIN_GPU && src->counters[0].device == 0, "measure: accel0 is GPU 0");
	ok(src->counters[1].domain == CEEMS_DOMAIN_GPU && src->counters[1].device == 1, "measure: accel1 is GPU 1");
	is_int(src->counters[2].domain, CEEMS_DOMAIN_PACKAGE, "measure: cpu_energy");
	is_int(src->counters[3].domain, CEEMS_DOMAIN_NODE, "measure: energy");
	is_int(src->counters[4].domain, CEEMS_DOMAIN_DRAM, "measure: memory_energy");
	is_int(ceems_energy_source_max_sample_interval_ns(src), 0, "measure: no wrap, no sampling bound");

	tmptree_write(root, PMDIR "energy", "123806 J 1687170684291597 us\n");
	tmptree_write(root, PMDIR "cpu_energy", "60180 J 1687170684291597 us\n");
	tmptree_write(root, PMDIR "memory_energy", "8020 J 1687170684291597 us\n");
	tmptree_write(root, PMDIR "accel0_energy", "10060 J 1687170684291597 us\n");
	ceems_energy_source_sample(src, T0 + S);
	take(src);
	is_near(takes[3].joules, 350.0, 1e-9, "measure: node 350 J");
	is_near(takes[2].joules, 180.0, 1e-9, "measure: cpu 180 J");
	is_near(takes[4].joules, 20.0, 1e-9, "measure: memory 20 J");
	is_near(takes[0].joules, 60.0, 1e-9, "measure: accel0 60 J");
	is_near(takes[1].joules, 0.0, 0.0, "measure: accel1 unchanged");
	is_int(takes[1].gap, CEEMS_GAP_NONE, "measure: unchanged is 0 J measured");

	/* The controller restarted: counters start again from small values. */
	tmptree_write(root, PMDIR "energy", "40 J 1687170685291597 us\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	take(src);
	is_int(takes[3].gap, CEEMS_GAP_RESET, "reset: node counter went backwards");
	is_near(takes[3].joules, 0.0, 0.0, "reset: not counted");
	tmptree_write(root, PMDIR "energy", "390 J 1687170686291597 us\n");
	ceems_energy_source_sample(src, T0 + 3 * S);
	take(src);
	is_near(takes[3].joules, 350.0, 1e-9, "reset: measured from the new baseline");

	/* Bad values: wrong unit, cut line, 2^70, garbage. */
	tmptree_write(root, PMDIR "cpu_energy", "60380 W 1687170686291597 us\n");
	tmptree_write(root, PMDIR "memory_energy", "8040");
	tmptree_write(root, PMDIR "accel0_energy", "1180591620717411303424 J 1 us\n");
	tmptree_write(root, PMDIR "accel1_energy", "n/a\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	take(src);
	is_int(takes[2].gap, CEEMS_GAP_READ_ERROR, "errors: W instead of J");
	is_int(takes[4].gap, CEEMS_GAP_READ_ERROR, "errors: truncated line");
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR, "errors: 2^70 J");
	is_int(takes[1].gap, CEEMS_GAP_READ_ERROR, "errors: garbage");
	is_int(takes[3].gap, CEEMS_GAP_NONE, "errors: the node counter is unaffected");
	tmptree_write(root, PMDIR "cpu_energy", "60400 J 1687170687291597 us\n");
	ceems_energy_source_sample(src, T0 + 5 * S);
	tmptree_write(root, PMDIR "cpu_energy", "60500 J 1687170688291597 us\n");
	ceems_energy_source_sample(src, T0 + 6 * S);
	take(src);
	is_int(takes[2].gap, CEEMS_GAP_READ_ERROR, "errors: the recovery interval is still a gap");
	tmptree_write(root, PMDIR "cpu_energy", "60700 J 1687170689291597 us\n");
	ceems_energy_source_sample(src, T0 + 7 * S);
	take(src);
	is_near(takes[2].joules, 200.0, 1e-9, "errors: then measured");

	/* A jump of 10^9 J in 1 s is no node. */
	tmptree_write(root, PMDIR "energy", "1000000390 J 1687170690291597 us\n");
	ceems_energy_source_sample(src, T0 + 8 * S);
	take(src);
	is_int(takes[3].gap, CEEMS_GAP_RESET, "reset: an impossible jump");

	/* The controller restarted: startup changed, and the counters
	 * read as if they had gone on.  Every counter is reset. */
	tmptree_write(root, PMDIR "startup", "1687000000000099\n");
	tmptree_write(root, PMDIR "energy", "1000000740 J 1687170691291597 us\n");
	ceems_energy_source_sample(src, T0 + 9 * S);
	take(src);
	is_int(takes[3].gap, CEEMS_GAP_RESET, "restart: startup changed, the node counter reset");
	is_int(takes[2].gap, CEEMS_GAP_RESET, "restart: and the cpu counter");
	tmptree_write(root, PMDIR "energy", "1000001090 J 1687170692291597 us\n");
	ceems_energy_source_sample(src, T0 + 10 * S);
	take(src);
	is_near(takes[3].joules, 350.0, 1e-9, "restart: measured from the new run");
	is_int(ceems_energy_source_reader(src, 3)->identity, 1687000000000099ULL,
	       "restart: the counters are of the new run");
	ceems_energy_source_close(src);
out:
	tmptree_remove(root);
}

static void
test_bad_tree(void)
{
	struct ceems_energy_source *src;
	size_t i;

	src = ceems_pm_counters_open(fixture_path("sys/cray-bad"), T0);
	if (!ok(src != NULL, "bad: opened"))
		return;
	is_int(src->ncounters, 5, "bad: five energy files kept");
	take(src);
	/* accel0 2^70, accel1 good, cpu W, energy garbage, memory cut. */
	for (i = 0; i < 5; i++)
		ok(takes[i].gap == (i == 1 ? CEEMS_GAP_NONE : CEEMS_GAP_READ_ERROR), "bad: counter %zu at open", i);
	ceems_energy_source_close(src);
	ok(ceems_pm_counters_open(fixture_path("sys/rapl-intel"), T0) == NULL, "absent: not a Cray node");
}

int
main(void)
{
	test_parse();
	test_classify();
	test_measure();
	test_bad_tree();
	return done_testing();
}
