/* test_fuzz_parsers.c - every libceems parser of outside input on
 * thousands of damaged copies of real inputs, in every `make check`.
 *
 * For each parser family (tests/fuzz/checks.h), the inputs are the
 * fixture files its parsers read in the other tests plus hand-written
 * edge cases; each input is cut at every length (short ones), then
 * mutated many times from a seeded generator: bit flips, bytes inserted
 * or deleted, truncation, digit runs replaced by huge numbers, NULs and
 * newlines inserted, slices duplicated.  After every call the family's
 * check verifies the parsers' contracts; memory errors are caught by the
 * sanitizer build.  This is the deterministic, bounded sibling of the
 * libFuzzer targets that `make fuzz` runs.
 *
 * The seed is printed; CEEMS_TEST_SEED=N replays a run, and
 * CEEMS_FUZZ_ROUNDS=N changes the number of mutations per input. */
#include "config.h"

#include <fnmatch.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../fuzz/checks.h"
#include "../tap.h"
#include "fixture.h"

#define DEFAULT_ROUNDS 1500
/* Inputs up to this size are also cut at every length. */
#define CUT_EVERY_MAX 4096
/* Larger fixture files are left out: they would only slow the run. */
#define SEED_MAX 16384
/* A mutated input never grows beyond this. */
#define INPUT_MAX (SEED_MAX + 1024)
/* Failures printed per input, so that a broken parser stays readable. */
#define REPORT_MAX 3

struct edge {
	const char *text;
	size_t len;
};
#define EDGE(s) { (s), sizeof(s) - 1 }

struct family {
	const char *name;
	const char *(*check)(const char *data, size_t len);
	/* "DIR:GLOB": the files under fixtures/DIR whose name matches GLOB. */
	const char *const *seeds;
	const struct edge *edges;
	size_t nedges;
};

/* ---- Edge cases, by family ---- */

static const char *const cgroup_path_seeds[] = {
	"proc:cgroup-*.txt", "proc:mountinfo-*.txt", "cgroup:cgroup-*.txt",
	"cgroup:mountinfo.txt", NULL,
};
static const struct edge cgroup_path_edges[] = {
	EDGE("slurmstepd: [42.extern]"),
	EDGE("slurmstepd: [4294967296.0]"),
	EDGE("0::/s/sEKNKTV3WPV500/step_interactive/slurm\n"),
	EDGE(""), EDGE("\n"), EDGE("0::/\n"), EDGE("0::/job_42\n"),
	EDGE("0::/job_42"), EDGE("12:cpuset:/job_42/step_0"),
	EDGE("::\n"), EDGE("a:b\n"), EDGE("1:memory:relative/job_42\n"),
	EDGE("1:memory,memory:/job_42\n1:memory:/x/job_42\n"),
	EDGE("1:,,:/job_42\n0::/a//job_42//\n"),
	EDGE("0::/../../job_4294967295/x\n"),
	EDGE("30 24 0:26 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"),
	EDGE("30 24 0:26 /sub /mnt\\040x rw - cgroup2 cgroup2 rw\n"
	     "31 24 0:26 / /mnt rw - cgroup2 cgroup2 rw\n"),
	EDGE("1 2 3 / /a\\0 - cgroup c memory\n"),
	EDGE("1 2 3 / /a\\777 - cgroup c memory\n"),
	EDGE("1 2 3 / /a\\ - cgroup c memory\\"),
	EDGE("1 2 3 / /x shared:1 - cgroup2"),
	EDGE("1 2 3 / /x - \n"), EDGE(" - "), EDGE("1 2 3 4 5 -"),
};

static const char *const cgroup_stats_seeds[] = { "cgroup:*", NULL };
static const struct edge cgroup_stats_edges[] = {
	EDGE(""), EDGE("\n"), EDGE("max"), EDGE("max\n"), EDGE("maxx"),
	EDGE("0"), EDGE("18446744073709551615"), EDGE("18446744073709551616"),
	EDGE("99999999999999999999999x"), EDGE("0000000000000000000000000001\n"),
	EDGE("9223372036854771712\n"), EDGE("4611686018427387903"),
	EDGE("-1"), EDGE(" 1"), EDGE("1 "), EDGE("1\n\n"),
	EDGE("usage_usec 1\nuser_usec 2\nsystem_usec 3\n"),
	EDGE("usage_usec 18446744073709551615\n"),
	EDGE("usage_usec 18446744073709551\n"),
	EDGE("usage_usec 1\nusage_usec 2\n"), EDGE("anon 1\nfile 2"),
	EDGE("anon 1\n\nfile 2\n"), EDGE("anon  1\n"), EDGE(" anon 1\n"),
	EDGE("total_rss 4096\ntotal_cache 0\nrss 0\n"),
	EDGE("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
	EDGE("low 0\nhigh 0\nmax 7\noom 2\noom_kill 1\n"),
	EDGE("user 100\nsystem 50\n"), EDGE("user 18446744073709551615\n"),
	EDGE("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0\n"
	     "8:16 rbytes=18446744073709551615\n8:32 rbytes=1\n"),
	EDGE("8:0 cost.vrate=1.5 rbytes=1\n"), EDGE("8:0\n"), EDGE("8:0 \n"),
	EDGE("8:0 =1"), EDGE("8:0 rbytes="), EDGE("8: rbytes=1"),
	EDGE("8:0 Read 1\n8:0 Write 2\n8:0 Sync 3\nTotal 3\n"),
	EDGE("Total 1\nTotal 2"), EDGE("8:0 Read 18446744073709551615\n"
				      "8:1 Read 1\nTotal 0\n"),
	EDGE("0-3,8,10-11\n"), EDGE("8191"), EDGE("8192"), EDGE("0-8191\n"),
	EDGE("3-1"), EDGE("1,"), EDGE(",1"), EDGE("0-"), EDGE("1-2-3"),
	EDGE("0-18446744073709551615"),
};

static const char *const proc_stats_seeds[] = {
	"proc:stat*", "proc:meminfo*", "proc:status", "proc:io", NULL,
};
static const struct edge proc_stats_edges[] = {
	EDGE(""), EDGE("\n"), EDGE("cpu\n"), EDGE("cpu "),
	EDGE("cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nintr 1\n"),
	EDGE("cpu  1 2 3 4 5 6 7 8\n"), EDGE("cpu  1 2 3 4 5 6 7\n"),
	EDGE("cpu  1 2 3 4 5 6 7 8"), EDGE("cpu0 1 2 3 4 5 6 7 8\n"),
	EDGE("cpu  1 2 3 4 5 6 7 8\ncpu  1 2 3 4 5 6 7 8\n"),
	EDGE("cpu  18446744073709551615 18446744073709551615 0 0 0 0 0 0\n"),
	EDGE("cpu  184467440737095516 0 0 0 0 0 0 0\n"),
	EDGE("cpu  1 2 3 4 5 6 7 8   \ncpux 1 2 3 4 5 6 7 8\n"),
	EDGE("MemTotal: 1 kB\n"), EDGE("MemTotal:1 kB"),
	EDGE("MemTotal: 18014398509481984 kB\n"),
	EDGE("MemTotal: 18014398509481983 kB\n"),
	EDGE("MemTotal: 1 kB\nMemTotal: 2 kB\n"),
	EDGE("Foo: bar\nMemTotal: 3 kB"), EDGE(": 1 kB"), EDGE("MemTotal: kB"),
	EDGE("MemTotal: 1 MB\n"), EDGE("MemFree: 1 kB\n"),
	EDGE("MemTotal: 1 kB\n\n"),
	EDGE("Uid:\t1000\t0\t0\t1000\n"), EDGE("Uid:"), EDGE("Uid:\t4294967296\n"),
	EDGE("Uid: 4294967295"), EDGE("Name:\tx\nUid:\t-1\n"), EDGE("xUid:\t1\n"),
	EDGE("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n"),
	EDGE("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4"), EDGE("rchar: 1\n"),
	EDGE("rchar: 1\nrchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n"),
	EDGE("rchar:\nwchar: 2\nsyscr: 3\nsyscw: 4\n"), EDGE("rchar: -1\n"),
	EDGE("rchar: 18446744073709551616\nwchar: 2\nsyscr: 3\nsyscw: 4\n"),
	EDGE("rchar: 1\n\nwchar: 2\nsyscr: 3\nsyscw: 4\n"), EDGE(":\n"),
};

static const char *const conf_seeds[] = { "conf:*", NULL };
static const struct edge conf_edges[] = {
	EDGE(""), EDGE("#"), EDGE("\n\n"), EDGE("="), EDGE("= x"), EDGE("key"),
	EDGE("interval = 250ms\n"), EDGE("interval = 1e400\n"),
	EDGE("interval = 0x10s"), EDGE("interval=3601s"),
	EDGE("interval = 1.5e-400s"), EDGE("interval = 10ms # c"),
	EDGE("checkpoint_interval = 0"), EDGE("usage_interval = 1h"),
	EDGE("pue = nan"), EDGE("pue = inf"), EDGE("pue = 1.5"), EDGE("pue = 5.0000001"),
	EDGE("idle_power_package = 45 W"), EDGE("idle_power_package = W"),
	EDGE("idle_power_package = -0"), EDGE("idle_power_dram = learn"),
	EDGE("idle_power_dram = 100000.1w"), EDGE("log_level = debugx"),
	EDGE("log_level = "), EDGE("max_jobs = 99999999999999999999"),
	EDGE("max_jobs = 0"), EDGE("max_jobs = -1"), EDGE("max_jobs = 65536"),
	EDGE("socket = relative"), EDGE("socket = /"), EDGE("zone = FR"),
	EDGE("zone = F R"), EDGE("zone = 0123456789abcdef"),
	/* bare values: every key of the table takes them whole */
	EDGE("1ms"), EDGE("10ms"), EDGE("3600000000001ns"), EDGE("0"),
	EDGE("4294967296"), EDGE("65537"), EDGE("3600001"), EDGE("-1"),
	EDGE("learn"), EDGE("5.0000001"), EDGE("4095"), EDGE("1025T"),
	EDGE("/x"), EDGE("full"), EDGE("yes"),
	EDGE("cluster = a/b"), EDGE("source_rapl = maybe"),
	EDGE("source_hwmon = off\nsource_pm_counters = 1\n"),
	EDGE("database = service=ceems\n"), EDGE("database = "),
	EDGE("database = host=db port=5432 dbname=ceems sslmode=verify-full\n"),
	EDGE("database = host=db password=secret"), EDGE("database = PassWord\t= x"),
	EDGE("database = postgresql://u:secret@db/ceems"),
	EDGE("database = postgresql://u@db/ceems?sslmode=require"),
	EDGE("database = postgresql://db/ceems?password=x"),
	EDGE("database = a\x01b"), EDGE("database_timeout = 99ms"),
	EDGE("database_timeout = 60s\ndatabase = dbname=x\n"),
	EDGE("spool_max_bytes = 4095"), EDGE("spool_max_bytes = 1P"),
	EDGE("unknown = 1"), EDGE("1.5s"), EDGE("250ms"), EDGE("2m"),
	EDGE("1h"), EDGE("18446744073709551615"), EDGE("1e18ns"),
	EDGE("1e10h"), EDGE("1e9"), EDGE("0.0000000001ns"), EDGE("5 s"),
};

static const char *const intensity_seeds[] = { "intensity:*", NULL };
static const struct edge intensity_edges[] = {
	EDGE(""), EDGE("ceems-intensity 1"), EDGE("ceems-intensity 2\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 1 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n5 5 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 10 1\n5 20 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n10 20 1\n0 5 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 1 10000.1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 1000000000000 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n-1 1 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0  1 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0\t1 1\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 1 1 1\n"),
	EDGE("ceems-intensity 1\nzone fr\nsource s\n"),
	EDGE("ceems-intensity 1\nzone FR\nzone DE\nsource s\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource 012345678901234567890123\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource 0123456789012345678901234\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s/x\n"),
	EDGE("ceems-intensity 1\nzone FR\nsource s\n0 1 1\0\n"),
};

static const char *const factors_import_seeds[] = { "factors-import:*",
						     "factors:*", NULL };
static const struct edge factors_import_edges[] = {
	EDGE(""), EDGE("Datetime (UTC)\n"),
	EDGE("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2024-02-29 23:59:59,9999.9\n"),
	EDGE("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2024-01-01T00:00:00.123Z,1\n2024-01-01T00:00:01Z,2\n"),
	EDGE("Datetime (UTC),Carbon Intensity gCO2eq/kWh (Life cycle)\n2023-02-29 00:00:00,1\n"),
	EDGE("MTU (CET/CEST),V\n27.10.2024 02:00 - 27.10.2024 03:00,1\n27.10.2024 02:00 - 27.10.2024 03:00,1\n27.10.2024 02:00 - 27.10.2024 03:00,1\n"),
	EDGE("MTU (CET/CEST),V\n31.03.2024 02:00 - 31.03.2024 03:00,1\n"),
	EDGE("MTU (UTC),V\n31.12.9999 23:00 - 01.01.1970 00:00,1\n"),
	EDGE("Date;Heures;Taux de CO2 (g/kWh)\n31/12/2024;23:59;1\n"),
	EDGE("Date;Heures;Taux de CO2 (g/kWh)\n\"2024-01-01\";\"00:00\";\"1\"\n"),
	EDGE("zone,valid_from,g_per_kwh,source\nFR,2024-01-01T00:00:00Z,1,s\n"),
};

static const char *const emissions_seeds[] = { "emissions:*", NULL };
static const struct edge emissions_edges[] = {
	EDGE(""), EDGE("\n"), EDGE("# only a comment\n"), EDGE("\r\n\t \n"),
	EDGE("FR\tFRA\t2021\t55.5\tsrc\n"), EDGE("WORLD\t-\t2020\t480\tx\n"),
	EDGE("FR FRA 2021 55.5 s\r\n"), EDGE("FR FRA 2021 55.5 s\r\r\n"),
	EDGE("FR\tFRA\t2021\t999999999999999\ts\n"),
	EDGE("FR\tFRA\t2021\t1234567890123456\ts\n"),
	EDGE("FR\tFRA\t9999\t0\ts\nFR\tFRA\t1900\t0.00000000000001\ts\n"),
	EDGE("FR\tFRA\t2021\t1\ts\nFR\tFRA\t2021\t2\ts\nFR\tFRA\t2021\t3\ts\n"),
	EDGE("FR\tFRA\t2021\t1\ts\0FR\tFRA\t2022\t2\ts\n"),
	EDGE("FR\tFR\0\t2021\t1\ts\n"), EDGE("FR\tFRA\t2021\t1.\ts\n"),
	EDGE("FR\tFRA\t2021\t.5\ts\n"), EDGE("FR\tFRA\t2021\t1..5\ts\n"),
	EDGE("FR\tFRA\t2021\t10000\ts\nDE\t-\t1899\t1\ts\n"),
	EDGE("FR\tFRA\t2021\t10000.000000001\ts\n"),
	EDGE("FR\tFRA\t2021\t1\t0123456789012345678901234567890\n"),
	EDGE("FR\tFRA\t2021\t1\t01234567890123456789012345678901\n"),
	EDGE("FR\tFRA\t2021\t1\ts\textra\n"), EDGE("FR FRA 2021 1"),
};

static const char *const energy_seeds[] = { "sys:*", NULL };
static const struct edge energy_edges[] = {
	EDGE(""), EDGE("0"), EDGE("0\n"), EDGE("18446744073709551615\n"),
	EDGE("18446744073709551616"), EDGE("1\n\n"), EDGE("+1"), EDGE("1 "),
	EDGE("package-0"), EDGE("package-0-die-1"), EDGE("package-65535"),
	EDGE("package-65536"), EDGE("package-"), EDGE("package-0-die-"),
	EDGE("package-0-die-1-"), EDGE("dram"), EDGE("psys"), EDGE("psys-3"),
	EDGE("psys-"), EDGE("core"), EDGE("uncore"),
	EDGE("amd_energy\nEsocket1"), EDGE("coretemp\nCore 3"),
	EDGE("amdgpu\nPPT"), EDGE("x\nCPU power 99999999"),
	EDGE("x\nDIMM 65535"), EDGE("zenpower\n"), EDGE("\nGPU"),
	EDGE("123456 J 1687170683291597 us\n"),
	EDGE("1180591620717411303424 J 1 us"), EDGE("12 W 1 us"),
	EDGE("12  J"), EDGE("12 J"), EDGE("12 Jx"), EDGE("12 J\n"),
	EDGE("0000000000000000000000000000001 J"),
	EDGE("00000000000000000000000000000001 J"),
	EDGE("energy"), EDGE("cpu_energy"), EDGE("cpu0_energy"),
	EDGE("cpu4096_energy"), EDGE("accel4095_energy"), EDGE("accel_energy"),
	EDGE("accel01_energy"), EDGE("memory_energy\n"),
	EDGE("00000000:3B:00.0"), EDGE("0000:3b:1f.7"), EDGE("3b:00.0"),
	EDGE("ffffffff:ff:1f.7"), EDGE("100000000:00:00.0"), EDGE("0:100:0.0"),
	EDGE("0000:3b:20.0"), EDGE("0000:3b:00.8"), EDGE("0000:3b:00.0 "),
	EDGE("0000:3b:00."), EDGE(":3b:00.0"), EDGE("0000::00.0"),
	EDGE("username admin\npassword x\n"), EDGE("username \npassword x"),
	EDGE("username a\rb\npassword x"), EDGE("password 123456789012345678901"),
	EDGE("username 12345678901234567\npassword x"), EDGE("# c\n\n"),
	EDGE("opensesspriv"), EDGE("none"), EDGE("intel20,sun20 authcap"),
	EDGE(",,"), EDGE("opensessprivx"), EDGE("integritycheckvalue,"),
};

static const char *const agent_proto_seeds[] = { "agent:*.json", NULL };
static const struct edge agent_proto_edges[] = {
	EDGE(""), EDGE("{}"), EDGE("[]"), EDGE("null"), EDGE("42"),
	EDGE("\"register\""), EDGE("{\"op\":\"status\",\"x\":1}"),
	EDGE("{\"op\":\"status\"} x"), EDGE("{\"op\":\"status\"}  \n\t"),
	EDGE("{\"op\":\"status\""), EDGE("{'op':'status'}"),
	EDGE("{\"op\":\"status\"/* c */}"),
	EDGE("{\"op\":\"status\",\"op\":\"report\",\"jobid\":1}"),
	EDGE("{\"op\":\"deregister\",\"jobid\":0}"),
	EDGE("{\"op\":\"report\",\"jobid\":4294967296}"),
	EDGE("{\"op\":\"report\",\"jobid\":-1}"),
	EDGE("{\"op\":\"report\",\"jobid\":1.0}"),
	EDGE("{\"op\":\"report\",\"jobid\":\"1\"}"),
	EDGE("{\"op\":\"report\",\"jobid\":null}"),
	EDGE("{\"op\":\"report\",\"jobid\":18446744073709551615}"),
	EDGE("{\"op\":\"report\",\"jobid\":99999999999999999999999}"),
	EDGE("{\"op\":\"status\\u0000\"}"), EDGE("{\"op\":\"st\0atus\"}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,\"ledger\":"
	     "{\"package\":{\"idle_unlearned\":1}}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":4294967295,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/a/job_1\"}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/a/../job_1\"}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/a/job_1\"},"
	     "\"start_time\":253402300799,\"cluster\":\"\\u007f\"}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/a/job_1\"},"
	     "\"start_time\":-9223372036854775808,\"cluster\":\"x\\u0000y\"}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":1,\"unified\":\"/a//b\",\"v1\":{}}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":1,\"v1\":{\"memory\":\"/a\\u0001\","
	     "\"cpuset\":null}}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":3,\"unified\":\"/\"}}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/j\"},\"gpu_share\":"
	     "[-0.0,1e308,0.1,1,0,0,0,0,0,0,0,0,0,0,0,0,0.3333333333333333]}}"),
	EDGE("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,"
	     "\"cgroup\":{\"version\":2,\"unified\":\"/j\"},\"gpu_share\":"
	     "[NaN,Infinity]}}"),
	EDGE("{\"ok\":false,\"error\":\"no\",\"code\":\"EWHAT\"}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,\"gpus\":"
	     "[{\"uuid\":\"GPU-1\",\"share\":1e-300,\"instance\":2147483647,"
	     "\"util_pct\":100,\"mem_peak_bytes\":9223372036854775807}]}}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,\"gpus\":"
	     "[{\"bus_id\":\"\\u0000\",\"share\":-0.0,\"energy_j\":1e309}]}}"),
	EDGE("{\"ok\":false}"), EDGE("{\"ok\":true,\"report\":null}"),
	/* Marks: both ways said, neither, out of range, a bad name. */
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"s\",\"unit\":\"u\",\"add\":1,\"set\":1}"),
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"s\",\"unit\":\"u\"}"),
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"s\",\"unit\":\"u\",\"set\":9007199254740993}"),
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"s\",\"unit\":\"u\",\"add\":-0.0}"),
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"\\u0000\",\"unit\":\"u\",\"add\":1}"),
	EDGE("{\"op\":\"mark\",\"jobid\":1,\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\",\"unit\":\"u\",\"add\":1}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0},\"marks\":"
	     "[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1},"
	     "{\"name\":\"s\",\"unit\":\"u\",\"work\":2,\"marks\":1}]}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0},\"marks\":"
	     "[{\"name\":\"s\",\"unit\":\"u\",\"work\":-1,\"marks\":1}]}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,\"usage\":"
	     "{\"cpuset\":\"0-8192\",\"mem_limit_bytes\":\"maxx\"}}}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,\"ledger\":"
	     "{\"package\":{\"joules\":-1e-300}}}}"),
	EDGE("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	     "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"),
	/* Replies with a time series: today's form and the older one. */
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0},\"series\":"
	     "{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],"
	     "\"rows\":[[60,30,1.5,4096,2,null,7,9,99.5],[90,30,1,1,1,1,1,1,null],"
	     "[120,0,0,0,0,0,0,0,100]]}}"),
	EDGE("{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0},\"series\":"
	     "{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],"
	     "\"rows\":[[60,30,1.5,4096,2,null,7,9],[90,30,1,1,1,1,1,1]]}}"),
};

static const char *const sacct_seeds[] = { "sacct/spool:*.json", NULL };
static const struct edge sacct_edges[] = {
	EDGE("2025-03-01T08:15:30"), EDGE("03/01/24-08:15"), EDGE("0301"),
	EDGE("030124-23:59:59"), EDGE("12:30pm"), EDGE("now-7days"),
	EDGE("now+100000000w"), EDGE("now-99999999999999999999"), EDGE("fika"),
	EDGE("2025-02-29"), EDGE("9999-12-31T23:59:59"), EDGE("1969-12-31"),
	EDGE("JobID,JobName%30,State"), EDGE("JobID%"), EDGE("JobID%-1"),
	EDGE("JobID%99999999999999999999"), EDGE(",,,,"), EDGE("%5"),
	EDGE("123.batch"), EDGE("4294967294.0"), EDGE("4294967295"),
	EDGE("123_4"), EDGE("123_4.batch"), EDGE("123_"), EDGE("123_4294967295"),
	EDGE("1_[1-3,7],2"), EDGE("[10-12].batch"), EDGE("1[2"), EDGE("1_[]"),
	EDGE("ALL"), EDGE("a"), EDGE(" JobID, tresusageinmaxn,NTasks%3"),
	EDGE("AdminComment,ALL%5"), EDGE("K"), EDGE("mi"), EDGE("x"),
	EDGE("{\"resolution_s\":10,\"columns\":[\"t\"],\"rows\":[[1],[null]]}"),
	EDGE("{\"resolution_s\":10,\"columns\":[\"t\",\"x\"],\"rows\":[[1,1e999]]}"),
	EDGE("{\"resolution_s\":0,\"columns\":[],\"rows\":[]}"),
	EDGE("{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],"
	     "\"rows\":[[60,30,1.5,4096,2,null,7,9,99.5],[90,30,1,1,1,1,1,1,null]]}"),
	/* Slurm's sacct output: JobIDRaw, Cluster, Start, AdminComment,
	 * Comment, JobIDRaw, by its unit separators */
	EDGE("7\x1f" "c\x1f" "1970-01-02T00:00:00\x1f" "a\x1f" "b\x1f" "7\n"
	     "7.batch\x1f" "c\x1f" "1970-01-02T00:00:00\x1f\x1f" "x\ny\x1f" "7.batch\n"),
	EDGE("7\x1f" "c\x1f" "\x1f" "a\x1f" "b\x1f" "8\n"),
	EDGE("7\x1f" "c\x1f" "s\x1f" "a\x1f" "b\x1f" "7"),
	EDGE("7\x1f" "c\x1f" "s\x1f" "a\x1f" "b\x1f" "7\n" "7\x1f" "c\x1f" "s\x1f" "z\x1f" "b\x1f" "7\n"),
	EDGE("\x1f\x1f\x1f\x1f\x1f\n"), EDGE("\n\n"),
};

/* Strings for every string field, cut at the NULs (checks_text.c). */
static const char *const text_seeds[] = { "sacct/spool:*.json", NULL };
static const struct edge text_edges[] = {
	EDGE(""), EDGE("bad\xffname"), EDGE("\\x41\0\\\0\\\xff\0x\\"),
	EDGE("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3"),
	EDGE("\xe2\x82\0\xf0\x9f\x94\0\xed\xa0\x80\0\xf4\x90\x80\x80"),
	EDGE("\x01\x1b[2J\x7f\0\xc2\x85\xc2\x9b\0\xc0\xaf\0\xe0\x80\xaf"),
	EDGE("\"\\/\b\f\n\r\t\0\\u0000\0\\ud800\0batch\0extern\0" "7"),
	EDGE("\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"),
};

static const char *const job_note_seeds[] = { "notes:*.json", NULL };
static const struct edge job_note_edges[] = {
	EDGE(""), EDGE("{}"), EDGE("[]"), EDGE("null"),
	EDGE("{\"format\":\"ceems-job-note/1\",\"by\":\"agent\",\"why\":\"x\",\"job\":{\"jobid\":1}}"),
	EDGE("{\"format\":\"ceems-job-note/1\",\"by\":\"extern\",\"why\":\"x\",\"job\":{\"jobid\":0}}"),
	EDGE("{\"format\":\"ceems-job-note/2\",\"by\":\"extern\",\"why\":\"x\",\"job\":{\"jobid\":1}}"),
	EDGE("{\"format\":\"ceems-job-note/1\",\"by\":\"extern\",\"why\":\"\\u0007\",\"job\":{\"jobid\":1}}"),
	EDGE("{\"format\":\"ceems-job-note/1\",\"by\":\"extern\",\"job\":{\"jobid\":1}}"),
	EDGE("{\"format\":\"ceems-job-note/1\",\"by\":\"extern\",\"why\":\"x\",\"job\":{\"jobid\":1},\"x\":1}"),
};

static const char *const gres_seeds[] = { "gres:*", NULL };
static const struct edge gres_edges[] = {
	EDGE(""), EDGE("gpu"), EDGE("gpu(IDX:)"), EDGE("gpu(IDX:N/A)"),
	EDGE("gpu:1(IDX:0-)"), EDGE("gpu:1(IDX:3-1)"), EDGE("gpu:1(IDX:0,)"),
	EDGE("gpu:2(IDX:0-65536)"), EDGE("gpu((IDX:0)"), EDGE("gpu:1(IDX:0)),"),
	EDGE("Name=gpu File=/dev/nvidia[0-99999]"),
	EDGE("Name=gpu File=/dev/nvidia[0-3][0-1]"),
	EDGE("Name=gpu File=dev/nvidia0"), EDGE("Name=gpu File=/dev/x]"),
	EDGE("NodeName= Name=gpu File=/dev/nvidia0"),
	EDGE("Name=gpu File=/dev/nvidia[00-63]"),
};

static const char *const gather_seeds[] = { "gather:*", NULL };
static const struct edge gather_edges[] = {
	EDGE(""), EDGE("ceems-gather 1"), EDGE("ceems-gather 1 1 n1 0123456789abcdef"),
	EDGE("ceems-gather 1 0 n1 0123456789abcdef\n"),
	EDGE("ceems-gather 1 4294967296 n1 0123456789abcdef"),
	EDGE("ceems-gather 1 7 ../x 0123456789abcdef"),
	EDGE("ceems-gather 1 7 n1 0123456789ABCDEF"),
	EDGE("ceems-gather 1 7 n1 0123456789abcdef extra"),
	EDGE("ceems-gather 1  7 n1 0123456789abcdef"),
	EDGE("ceems-gather 1 7 n1\0 0123456789abcdef"),
	EDGE("n1 [::1]:6826\nn2 [::1\nnode01 -x:1\n"),
	EDGE("n1 host:0\nn2 host:65536\nnode01 a b\n"),
	EDGE("# c\nn1 h%n\nn2\tho.st:70 # c\nnode01 ::1\n"),
};

static const char *const mark_line_seeds[] = { "agent:*.line", NULL };
static const struct edge mark_line_edges[] = {
	EDGE(""), EDGE("MARK"), EDGE("MARK "), EDGE("MARK 1 s 1 u add"),
	EDGE("MARK 1 s 1 u add\n"), EDGE("MARK 1 s 1 u add\n\n"),
	EDGE("MARK 0 s 1 u add"), EDGE("MARK 4294967296 s 1 u set"),
	EDGE("MARK 4294967295 s 9007199254740992 u set"),
	EDGE("MARK 1 s 9007199254740993 u set"), EDGE("MARK 1 s -1 u add"),
	EDGE("MARK 1 s nan u add"), EDGE("MARK 1 s inf u add"),
	EDGE("MARK 1 s 0x10 u add"), EDGE("MARK 1 s 1e400 u add"),
	EDGE("MARK 1 s 1e u add"), EDGE("MARK 1 s . u add"),
	EDGE("MARK 1 s 1.5.5 u add"), EDGE("MARK 1.5 s 1 u add"),
	EDGE("MARK 1e3 s 1 u add"), EDGE("MARK 1  s 1 u add"),
	EDGE("MARK 1 s 1 u add "), EDGE("MARK 1 s 1 u sum"),
	EDGE("MARK 1 s 1 u add x"), EDGE("MARK 1 s/x 1 u add"),
	EDGE("MARK 1 s\t1 u add"), EDGE("MARK 1 s 1 u\0 add"),
	EDGE("MARK 1 s 1 u add\r\n"),
	EDGE("MARK 1 abcdefghijklmnopqrstuvwxyz01234 1 u add"),
	EDGE("MARK 1 abcdefghijklmnopqrstuvwxyz012345 1 u add"),
	EDGE("MARK 1 s 00000000000000000000000000000000000000000000000000000000000000001 u add"),
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

static const struct family families[] = {
	{ "cgroup_path", fuzz_check_cgroup_path, cgroup_path_seeds,
	  cgroup_path_edges, NELEMS(cgroup_path_edges) },
	{ "cgroup_stats", fuzz_check_cgroup_stats, cgroup_stats_seeds,
	  cgroup_stats_edges, NELEMS(cgroup_stats_edges) },
	{ "proc_stats", fuzz_check_proc_stats, proc_stats_seeds,
	  proc_stats_edges, NELEMS(proc_stats_edges) },
	{ "conf", fuzz_check_conf, conf_seeds, conf_edges, NELEMS(conf_edges) },
	{ "emissions", fuzz_check_emissions, emissions_seeds,
	  emissions_edges, NELEMS(emissions_edges) },
	{ "energy", fuzz_check_energy, energy_seeds, energy_edges,
	  NELEMS(energy_edges) },
	{ "agent_proto", fuzz_check_agent_proto, agent_proto_seeds,
	  agent_proto_edges, NELEMS(agent_proto_edges) },
	{ "sacct", fuzz_check_sacct, sacct_seeds, sacct_edges,
	  NELEMS(sacct_edges) },
	{ "text", fuzz_check_text, text_seeds, text_edges, NELEMS(text_edges) },
	{ "job_note", fuzz_check_job_note, job_note_seeds, job_note_edges,
	  NELEMS(job_note_edges) },
	{ "gres", fuzz_check_gres, gres_seeds, gres_edges, NELEMS(gres_edges) },
	{ "gather", fuzz_check_gather, gather_seeds, gather_edges,
	  NELEMS(gather_edges) },
	{ "mark_line", fuzz_check_mark_line, mark_line_seeds, mark_line_edges,
	  NELEMS(mark_line_edges) },
	{ "intensity", fuzz_check_intensity, intensity_seeds, intensity_edges,
	  NELEMS(intensity_edges) },
	{ "factors_import", fuzz_check_factors_import, factors_import_seeds,
	  factors_import_edges, NELEMS(factors_import_edges) },
};

/* ---- Random numbers: splitmix64, the same sequence everywhere ---- */

static uint64_t rng_state;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t
below(size_t n)
{
	return n == 0 ? 0 : (size_t)(rng() % n);
}

/* ---- Mutations ---- */

struct input {
	char bytes[INPUT_MAX];
	size_t len;
};

/* Characters and words the parsers give meaning to. */
static const char interesting_chars[] = " \t\n\r\0:-,=/#.J0129m";
static const char *const tokens[] = {
	"max", " ", ":", "::", "-", ",", "=", "/", "..", "#", "\t", " kB", " J",
	"cpu", "cpu0 ", "0::/", "job_42", "job_100", "job_4242", " - ",
	"cgroup ", "cgroup2 ", "memory", "\\040", "\\", "1e308", "nan", "-1",
	"Total ", "Read ", "rbytes=", "MemTotal:", "usage_usec ", "WORLD",
	"interval = ", "package-", "-die-", "_energy", "accel",
	"username ", "password ", "opensesspriv", "nochecksumcheck",
};
static const char *const huge_numbers[] = {
	"18446744073709551615", "18446744073709551616", "4294967295",
	"4294967296", "9223372036854775807", "9223372036854775808",
	"99999999999999999999999999999", "0", "00000000000000000000001",
	"65535", "65536", "8191", "8192", "1.7976931348623157e308",
};

static void
insert_bytes(struct input *in, size_t at, const char *s, size_t n)
{
	if (in->len + n > INPUT_MAX)
		return;
	memmove(in->bytes + at + n, in->bytes + at, in->len - at);
	memcpy(in->bytes + at, s, n);
	in->len += n;
}

static void
delete_bytes(struct input *in, size_t at, size_t n)
{
	memmove(in->bytes + at, in->bytes + at + n, in->len - at - n);
	in->len -= n;
}

/* Replace the run of digits around a random position with a number at
 * the edge of some type's range. */
static void
replace_digits(struct input *in)
{
	size_t at = below(in->len), start, end;
	const char *n = huge_numbers[below(sizeof(huge_numbers) /
					   sizeof(huge_numbers[0]))];

	for (start = at; start < in->len && !(in->bytes[start] >= '0' &&
					       in->bytes[start] <= '9'); start++)
		;
	if (start >= in->len) {
		insert_bytes(in, at, n, strlen(n));
		return;
	}
	for (end = start; end < in->len && in->bytes[end] >= '0' &&
	     in->bytes[end] <= '9'; end++)
		;
	delete_bytes(in, start, end - start);
	insert_bytes(in, start, n, strlen(n));
}

static void
mutate_once(struct input *in)
{
	size_t at = below(in->len + 1);

	switch (below(10)) {
	case 0:		/* bit flip */
		if (in->len > 0)
			in->bytes[below(in->len)] ^= (char)(1u << below(8));
		break;
	case 1:		/* a byte the parsers care about, or any byte */
		if (below(2) == 0) {
			char c = interesting_chars[below(sizeof(interesting_chars) - 1)];

			insert_bytes(in, at, &c, 1);
		} else {
			char c = (char)below(256);

			insert_bytes(in, at, &c, 1);
		}
		break;
	case 2:		/* delete a few bytes */
		if (at < in->len)
			delete_bytes(in, at, 1 + below(in->len - at < 8 ?
						       in->len - at : 8));
		break;
	case 3:		/* truncate */
		in->len = below(in->len + 1);
		break;
	case 4:
		replace_digits(in);
		break;
	case 5:
		insert_bytes(in, at, "\0", 1);
		break;
	case 6:
		insert_bytes(in, at, "\n", 1);
		break;
	case 7: {	/* duplicate a slice: repeated keys, lines, fields */
		size_t from = below(in->len), n = 1 + below(64);
		char slice[64];

		if (in->len == 0)
			break;
		if (n > in->len - from)
			n = in->len - from;
		memcpy(slice, in->bytes + from, n);
		insert_bytes(in, at, slice, n);
		break;
	}
	case 8: {
		const char *t = tokens[below(sizeof(tokens) / sizeof(tokens[0]))];

		insert_bytes(in, at, t, strlen(t));
		break;
	}
	default:	/* overwrite a byte with an interesting one */
		if (in->len > 0)
			in->bytes[below(in->len)] =
			    interesting_chars[below(sizeof(interesting_chars) - 1)];
		break;
	}
}

/* ---- Running ---- */

static uint64_t seed;
static unsigned long calls;

/* Print BYTES escaped, at most 300 of them. */
static void
print_input(const char *bytes, size_t len)
{
	printf("#   input (%zu bytes): \"", len);
	for (size_t i = 0; i < len && i < 300; i++) {
		unsigned char c = (unsigned char)bytes[i];

		if (c == '\n')
			printf("\\n");
		else if (c == '\t')
			printf("\\t");
		else if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	printf("%s\"\n", len > 300 ? "..." : "");
}

/* Run the check on the LEN bytes at BYTES, in a block of exactly LEN + 1
 * bytes so that the sanitizers catch any read past the end.  Returns 0,
 * or 1 for a broken rule (reported up to REPORT_MAX times per input). */
static int
run_one(const struct family *f, const char *bytes, size_t len,
	const char *what, unsigned *reported)
{
	char *copy = malloc(len + 1);
	const char *problem;

	if (copy == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	memcpy(copy, bytes, len);
	copy[len] = '\0';
	problem = f->check(copy, len);
	calls++;
	free(copy);
	if (problem == NULL)
		return 0;
	if (*reported < REPORT_MAX) {
		printf("# %s: %s: %s\n", f->name, what, problem);
		print_input(bytes, len);
		printf("#   replay: CEEMS_TEST_SEED=%" PRIu64 "\n", seed);
	}
	(*reported)++;
	return 1;
}

/* Cut INPUT at every length (short inputs), then mutate it ROUNDS times,
 * each time 1 to 4 stacked mutations of the original. */
static void
fuzz_input(const struct family *f, size_t index, const char *label,
	   const char *text, size_t len, unsigned rounds)
{
	static struct input in;
	unsigned long failures = 0;
	unsigned reported = 0;
	char what[96];

	/* Each input's sequence depends only on the seed, the family and
	 * the input's place, so a replay of one run is exact. */
	rng_state = seed ^ ((uint64_t)(f - families) << 40) ^
	    ((uint64_t)index << 20);
	if (len > SEED_MAX)
		len = SEED_MAX;
	if (len <= CUT_EVERY_MAX)
		for (size_t cut = 0; cut < len; cut++) {
			snprintf(what, sizeof(what), "%s cut at %zu", label, cut);
			failures += (unsigned long)run_one(f, text, cut, what,
							   &reported);
		}
	failures += (unsigned long)run_one(f, text, len, label, &reported);
	for (unsigned r = 0; r < rounds; r++) {
		unsigned n = 1 + (unsigned)below(4);

		memcpy(in.bytes, text, len);
		in.len = len;
		for (unsigned m = 0; m < n; m++)
			mutate_once(&in);
		snprintf(what, sizeof(what), "%s mutation %u", label, r);
		failures += (unsigned long)run_one(f, in.bytes, in.len, what,
						   &reported);
	}
	ok(failures == 0, "%s: %s: %u mutations%s, every contract held "
	   "(%lu broken)", f->name, label, rounds,
	   len <= CUT_EVERY_MAX ? " and every cut" : "", failures);
}

/* ---- Seed files ---- */

static struct seed_file {
	char *path;
	char *text;
	size_t len;
} *seed_files;
static size_t nseed_files, seed_cap;
static const char *walk_glob;

static int
collect(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;

	(void)sb;
	if (type != FTW_F || fnmatch(walk_glob, base, 0) != 0)
		return 0;
	if (nseed_files == seed_cap) {
		size_t cap = seed_cap == 0 ? 64 : seed_cap * 2;
		struct seed_file *grown = realloc(seed_files,
						  cap * sizeof(*grown));

		if (grown == NULL)
			return -1;
		seed_files = grown;
		seed_cap = cap;
	}
	seed_files[nseed_files].path = strdup(path);
	seed_files[nseed_files].text = NULL;
	if (seed_files[nseed_files].path == NULL)
		return -1;
	nseed_files++;
	return 0;
}

static int
compare_seed_paths(const void *a, const void *b)
{
	const struct seed_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static void
free_seed_files(void)
{
	for (size_t i = 0; i < nseed_files; i++) {
		free(seed_files[i].path);
		free(seed_files[i].text);
	}
	free(seed_files);
	seed_files = NULL;
	nseed_files = seed_cap = 0;
}

/* Collect the fixture files of SPECS, sorted by path (the walk order of
 * a directory is the filesystem's), read them, and drop files whose
 * contents an earlier one already had. */
static void
load_seed_files(const char *const *specs)
{
	static char text[SEED_MAX + 1];
	size_t kept = 0;

	for (; *specs != NULL; specs++) {
		const char *colon = strchr(*specs, ':');
		char dir[4096];

		snprintf(dir, sizeof(dir), "%s/%.*s", fixture_root(),
			 (int)(colon - *specs), *specs);
		walk_glob = colon + 1;
		if (nftw(dir, collect, 16, FTW_PHYS) != 0) {
			printf("Bail out! cannot walk %s\n", dir);
			exit(1);
		}
	}
	qsort(seed_files, nseed_files, sizeof(*seed_files), compare_seed_paths);
	for (size_t i = 0; i < nseed_files; i++) {
		ssize_t n = ceems_fileio_read_text_file(seed_files[i].path, text,
						 sizeof(text));
		bool dup = false;

		if (n < 0) {
			free(seed_files[i].path);
			continue;
		}
		for (size_t j = 0; j < kept && !dup; j++)
			dup = seed_files[j].len == (size_t)n &&
			    memcmp(seed_files[j].text, text, (size_t)n) == 0;
		if (dup) {
			free(seed_files[i].path);
			continue;
		}
		seed_files[kept].path = seed_files[i].path;
		seed_files[kept].len = (size_t)n;
		seed_files[kept].text = malloc((size_t)n + 1);
		if (seed_files[kept].text == NULL) {
			printf("Bail out! out of memory\n");
			exit(1);
		}
		memcpy(seed_files[kept].text, text, (size_t)n + 1);
		kept++;
	}
	nseed_files = kept;
}

/* ---- Generated edge cases: lengths at and past every buffer ---- */

static char *
repeat(const char *head, char c, size_t n, const char *tail)
{
	size_t hl = strlen(head), tl = strlen(tail);
	char *s = malloc(hl + n + tl + 1);

	if (s == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	memcpy(s, head, hl);
	memset(s + hl, c, n);
	memcpy(s + hl + n, tail, tl + 1);
	return s;
}

static void
fuzz_long_inputs(const struct family *f, size_t *index, unsigned rounds)
{
	static const struct {
		const char *head;
		char c;
		size_t n;
		const char *tail;
	} longs[] = {
		{ "", 'a', 5000, "" },
		{ "", '9', 5000, "\n" },
		{ "0::/", 'a', 500, "/job_42\n" },
		{ "1:memory:/", 'b', 498, "/job_42\n" },
		{ "1 2 3 / /", 'm', 520, " rw - cgroup2 cgroup2 rw\n" },
		{ "1 2 3 /", 'r', 600, " /m rw - cgroup cgroup memory\n" },
		{ "socket = /", 's', 300, "\n" },
		{ "socket = /", 's', 254, "\n" },
		{ "FR\tFRA\t2021\t1\t", 's', 40, "\n" },
		{ "0-", '1', 30, "\n" },
		{ "", '\n', 3000, "" },
	};

	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		char *s = repeat(longs[i].head, longs[i].c, longs[i].n,
				 longs[i].tail);
		char label[64];

		snprintf(label, sizeof(label), "long input %zu", i);
		fuzz_input(f, (*index)++, label, s, strlen(s), rounds / 4);
		free(s);
	}
}

int
main(void)
{
	const char *env = getenv("CEEMS_TEST_SEED");
	const char *env_rounds = getenv("CEEMS_FUZZ_ROUNDS");
	unsigned rounds = DEFAULT_ROUNDS;
	clock_t start = clock();

	/* A fixed default keeps CI reproducible; CEEMS_TEST_SEED=random
	 * explores, and any printed seed replays. */
	if (env == NULL)
		seed = 20261122;
	else if (strcmp(env, "random") == 0)
		seed = (uint64_t)time(NULL);
	else
		seed = strtoull(env, NULL, 0);
	if (env_rounds != NULL)
		rounds = (unsigned)strtoul(env_rounds, NULL, 10);
	printf("# mutation seed %" PRIu64 " (set CEEMS_TEST_SEED to replay), "
	       "%u rounds per input\n", seed, rounds);

	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct family *f = &families[i];
		size_t index = 0;

		load_seed_files(f->seeds);
		ok(nseed_files > 0, "%s: %zu distinct fixture files as seeds",
		   f->name, nseed_files);
		for (size_t s = 0; s < nseed_files; s++) {
			const char *label = seed_files[s].path +
			    strlen(fixture_root()) + 1;

			fuzz_input(f, index++, label, seed_files[s].text,
				   seed_files[s].len, rounds);
		}
		free_seed_files();
		for (size_t e = 0; e < f->nedges; e++) {
			char label[48];

			snprintf(label, sizeof(label), "edge case %zu", e);
			fuzz_input(f, index++, label, f->edges[e].text,
				   f->edges[e].len, rounds);
		}
		fuzz_long_inputs(f, &index, rounds);
	}
	printf("# %lu parser calls in %.2f s of CPU\n", calls,
	       (double)(clock() - start) / CLOCKS_PER_SEC);
	return done_testing();
}
