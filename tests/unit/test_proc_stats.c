/* test_proc_stats.c - node CPU time and memory from /proc/stat and
 * /proc/meminfo fixtures, through the parsers and the kept-open reader,
 * and the parsers' answers to malformed text. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "sources/proc_stats.h"
#include "../tap.h"
#include "fixture.h"

static char buf[16384];

/* ns of T ticks at 100 Hz */
#define TK(t) ((uint64_t)(t) * UINT64_C(10000000))

static void
test_stat(void)
{
	struct ceems_node_cpu cpu;

	is_int(ceems_proc_stats_parse_proc_stat(fixture_text("proc/stat", buf, sizeof(buf)), 100, &cpu), 0,
	       "stat: parsed");
	is_int(cpu.ncpus, 8, "stat: 8 cpuN lines");
	is_int(cpu.user_ns, TK(4705520), "stat: user in ns");
	is_int(cpu.nice_ns, TK(1200), "stat: nice");
	is_int(cpu.system_ns, TK(812345), "stat: system");
	is_int(cpu.idle_ns, TK(92750311), "stat: idle");
	is_int(cpu.iowait_ns, TK(15234), "stat: iowait");
	is_int(cpu.softirq_ns, TK(20567), "stat: softirq");
	is_int(cpu.steal_ns, TK(3100), "stat: steal apart");
	is_int(cpu.busy_ns, TK(4705520 + 1200 + 812345 + 0 + 20567),
	       "stat: busy = user+nice+system+irq+softirq");
	is_int(cpu.total_ns, TK(4705520 + 1200 + 812345 + 20567 + 92750311 + 15234),
	       "stat: total = busy + idle + iowait, steal excluded");

	is_int(ceems_proc_stats_parse_proc_stat(buf, 1000, &cpu), 0, "stat: other CLK_TCK");
	is_int(cpu.user_ns, UINT64_C(4705520) * 1000000, "stat: 1000 Hz ticks are ms");
	is_int(ceems_proc_stats_parse_proc_stat(buf, 0, &cpu), -EINVAL, "stat: CLK_TCK 0 refused");

	is_int(ceems_proc_stats_parse_proc_stat(fixture_text("proc/stat-guest", buf, sizeof(buf)), 100, &cpu), 0,
	       "stat with guest time: parsed");
	is_int(cpu.busy_ns, TK(100000 + 2000 + 30000 + 0 + 1500),
	       "stat: guest not added twice (it is inside user/nice)");
	is_int(cpu.ncpus, 2, "stat-guest: 2 cpus");
	is_int(ceems_proc_stats_parse_proc_stat(fixture_text("proc/stat-no-steal", buf, sizeof(buf)), 100, &cpu), -EINVAL,
	       "stat without steal column (pre-2.6.11) refused");
}

static void
test_stat_malformed(void)
{
	struct ceems_node_cpu cpu, before;

	memset(&cpu, 0x5a, sizeof(cpu));
	before = cpu;
	is_int(ceems_proc_stats_parse_proc_stat("", 100, &cpu), -EINVAL, "stat: empty");
	is_int(ceems_proc_stats_parse_proc_stat("garbage\n", 100, &cpu), -EINVAL, "stat: garbage");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8 0 0", 100, &cpu), -EINVAL,
	       "stat: cut in the cpu line (no newline)");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3", 100, &cpu), -EINVAL,
	       "stat: cut in a cpuN line");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 -3 4 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: negative number");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 x 4 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: letter in numbers");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  99999999999999999999999 2 3 4 5 6 7 8\nintr 0\n", 100, &cpu), -ERANGE,
	       "stat: 99999999999999999999999 overflows");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  18446744073709551615 2 3 4 5 6 7 8\nintr 0\n", 100, &cpu), -ERANGE,
	       "stat: fits u64 in ticks, not in ns");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1844674407370 1844674407370 3 4 5 6 7 8\nintr 0\n",
				     100, &cpu), -ERANGE, "stat: busy sum overflow");
	is_int(ceems_proc_stats_parse_proc_stat("cpu0 1 2 3 4 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: cpuN before the total line");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu  1 2 3 4 5 6 7 8\n", 100, &cpu), -EINVAL,
	       "stat: two total lines");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpux 1 2 3 4 5 6 7 8\n", 100, &cpu), -EINVAL,
	       "stat: cpu line without a number");
	/* cpuN lines are counted, not converted, but must still look like
	 * the kernel's. */
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 x 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: letter in a cpuN line");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 -4 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: negative number in a cpuN line");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0\t1 2 3 4 5 6 7 8\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: tab after the CPU number");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: cpuN line without a space after its number");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\r\nintr 0\n", 100, &cpu), -EINVAL,
	       "stat: carriage return in a cpuN line");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8", 100, &cpu), -EINVAL,
	       "stat: cut in the last cpuN line, past its fields");
	ok(memcmp(&cpu, &before, sizeof(cpu)) == 0, "stat: output untouched by every failure");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\n"
				     "cpu0 1 2 3 4 5 6 7 8  \n"
				     "cpu1 99999999999999999999999 2 3 4 5 6 7 8 9 10\n"
				     "cpu17 0 0 0 0 0 0 0 0\n"
				     "cpu18 1 2 3\nintr 0\n", 100, &cpu), 0,
	       "stat: cpuN lines with trailing spaces, a huge number, guest fields, few fields");
	is_int(cpu.ncpus, 4, "stat: four cpuN lines counted, their fields not used");
	is_int(cpu.user_ns, TK(1), "stat: the total line still converted");
	is_int(ceems_proc_stats_parse_proc_stat("cpu  1 2 3 4 5 6 7 8\n", 100, &cpu), 0,
	       "stat: only the total line, complete");
	is_int(cpu.ncpus, 0, "stat: no cpuN lines counted as 0");
}

static void
test_meminfo(void)
{
	struct ceems_node_mem mem, before;

	is_int(ceems_proc_stats_parse_proc_meminfo(fixture_text("proc/meminfo", buf, sizeof(buf)), &mem), 0,
	       "meminfo: parsed");
	is_int(mem.total, UINT64_C(263842104) * 1024, "meminfo: MemTotal in bytes");
	is_int(mem.free, UINT64_C(201234568) * 1024, "meminfo: MemFree");
	is_int(mem.available, UINT64_C(248765432) * 1024, "meminfo: MemAvailable");
	is_int(mem.buffers, UINT64_C(123456) * 1024, "meminfo: Buffers");
	is_int(mem.cached, UINT64_C(45678912) * 1024, "meminfo: Cached (not SwapCached)");
	is_int(mem.anon_pages, UINT64_C(6712345) * 1024, "meminfo: AnonPages");
	is_int(mem.shmem, UINT64_C(345678) * 1024, "meminfo: Shmem (not ShmemHugePages)");
	is_int(mem.swap_free, UINT64_C(8388604) * 1024, "meminfo: SwapFree");
	is_int(mem.present, 0x1ff, "meminfo: all nine fields present");

	is_int(ceems_proc_stats_parse_proc_meminfo(fixture_text("proc/meminfo-3.10", buf, sizeof(buf)), &mem), 0,
	       "meminfo of a 3.10 kernel: parsed");
	ok(!(mem.present & CEEMS_NMF_AVAILABLE), "meminfo 3.10: MemAvailable absent, not 0");
	is_int(mem.total, UINT64_C(65859364) * 1024, "meminfo 3.10: MemTotal");

	memset(&mem, 0x5a, sizeof(mem));
	before = mem;
	is_int(ceems_proc_stats_parse_proc_meminfo("", &mem), -ENODATA, "meminfo: empty");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemFree: 1 kB\n", &mem), -ENODATA, "meminfo: no MemTotal");
	is_int(ceems_proc_stats_parse_proc_meminfo("garbage\n", &mem), -EINVAL, "meminfo: line without colon");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: -5 kB\n", &mem), -EINVAL, "meminfo: negative");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 5 MB\n", &mem), -EINVAL, "meminfo: unknown unit");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 5\n", &mem), -EINVAL, "meminfo: missing unit");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 99999999999999999999999 kB\n", &mem), -ERANGE,
	       "meminfo: 99999999999999999999999 overflows");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 18014398509481984 kB\n", &mem), -ERANGE,
	       "meminfo: fits in kB, not in bytes");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 1 kB\nMemTotal: 2 kB\n", &mem), -EINVAL,
	       "meminfo: duplicate key");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 1 kB\nMemFree: 1", &mem), -EINVAL,
	       "meminfo: cut in a wanted line");
	ok(memcmp(&mem, &before, sizeof(mem)) == 0, "meminfo: output untouched by every failure");
	is_int(ceems_proc_stats_parse_proc_meminfo("MemTotal: 4 kB\nHugePages_Total: x\n", &mem), 0,
	       "meminfo: odd values of unused lines are skipped");
	is_int(mem.total, 4096, "meminfo: MemTotal 4 kB");
}

static void
test_reader(void)
{
	struct ceems_proc_reader *r;
	struct ceems_node_cpu cpu;
	struct ceems_node_mem mem;
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	r = ceems_proc_stats_reader_open(fixture_path("proc"), &err);
	ok(r != NULL && err == 0, "reader: opened on the fixture procfs root");
	if (r == NULL)
		return;
	is_int(ceems_proc_stats_read_cpu(r, &cpu), 0, "reader: cpu read");
	is_int(cpu.user_ns, UINT64_C(4705520) * (1000000000 / (uint64_t)hz),
	       "reader: user ns at this host's CLK_TCK");
	is_int(cpu.ncpus, 8, "reader: ncpus");
	is_int(ceems_proc_stats_read_cpu(r, &cpu), 0, "reader: second read (pread from 0)");
	is_int(cpu.ncpus, 8, "reader: same result");
	is_int(ceems_proc_stats_read_mem(r, &mem), 0, "reader: meminfo read");
	is_int(mem.total, UINT64_C(263842104) * 1024, "reader: MemTotal");
	ceems_proc_stats_reader_close(r);

	r = ceems_proc_stats_reader_open("/nonexistent-ceems", &err);
	ok(r == NULL && err == -ENOENT, "reader: missing procfs root is -ENOENT");

	/* The real /proc: the head-only read of /proc/stat. */
	r = ceems_proc_stats_reader_open("/proc", &err);
	ok(r != NULL, "reader: real /proc opened");
	if (r == NULL)
		return;
	is_int(ceems_proc_stats_read_cpu(r, &cpu), 0, "real /proc/stat read");
	is_int(cpu.ncpus, sysconf(_SC_NPROCESSORS_ONLN), "real /proc/stat: one line per online CPU");
	ok(cpu.total_ns > 0 && cpu.busy_ns <= cpu.total_ns, "real /proc/stat: 0 < busy <= total");
	is_int(ceems_proc_stats_read_mem(r, &mem), 0, "real /proc/meminfo read");
	ok((mem.present & CEEMS_NMF_TOTAL) && mem.total > 0, "real MemTotal > 0");
	ceems_proc_stats_reader_close(r);
}

int
main(void)
{
	test_stat();
	test_stat_malformed();
	test_meminfo();
	test_reader();
	return done_testing();
}
