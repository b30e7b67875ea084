/* test_conf.c - the configuration file parser: defaults, every value
 * type, and the errors an admin's typo must produce. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "base/conf.h"
#include "base/conf_value.h"
#include "../tap.h"

static void
test_defaults(void)
{
	struct ceems_config c;

	ceems_conf_defaults(&c);
	is_int(c.interval_ns, 1000000000, "default interval 1 s");
	is_str(c.socket_path, "/run/ceems/agent.sock", "default socket");
	ok(c.idle_power_package_w < 0, "idle power learned by default");
	is_near(c.pue, 1.0, 0, "default PUE 1.0");
	is_str(c.zone, "", "no zone by default (emissions need one configured)");
}

static void
test_values(void)
{
	struct ceems_config c;
	char err[256] = "";
	const char *text =
		"# comment line\n"
		"\n"
		"interval = 250ms   # sub-second\n"
		"  checkpoint_interval=5s\n"
		"max_jobs = 64\n"
		"socket = /tmp/x/agent.sock\n"
		"log_level = debug\n"
		"source_hwmon = no\n"
		"idle_power_package = 45.5 W\n"
		"idle_power_dram = learn\n"
		"zone = FR\n"
		"pue = 1.3\n"
		"cluster = jean-zay_2\n";

	ceems_conf_defaults(&c);
	is_int(ceems_conf_parse(&c, text, "t.conf", err, sizeof(err)), 0, "valid file parses");
	is_str(err, "", "no error message");
	is_int(c.interval_ns, 250000000, "250ms");
	is_int(c.checkpoint_interval_ns, 5000000000ULL, "5s");
	is_int(c.max_jobs, 64, "max_jobs");
	is_str(c.socket_path, "/tmp/x/agent.sock", "socket");
	is_str(c.log_level, "debug", "log_level");
	ok(!c.source_hwmon && c.source_rapl, "source switches");
	is_near(c.idle_power_package_w, 45.5, 1e-12, "watts with unit");
	ok(c.idle_power_dram_w < 0, "learn");
	is_str(c.zone, "FR", "zone");
	is_near(c.pue, 1.3, 1e-12, "pue");
	is_str(c.cluster, "jean-zay_2", "cluster");
}

/* Each bad line must fail with its line number and leave the config as
 * it was. */
static void
expect_error(const char *text, const char *want_substring, const char *what)
{
	struct ceems_config c, before;
	char err[256] = "";
	int ret;

	ceems_conf_defaults(&c);
	before = c;
	ret = ceems_conf_parse(&c, text, "bad.conf", err, sizeof(err));
	ok(ret == -1 && strstr(err, want_substring) != NULL &&
	   memcmp(&c, &before, sizeof(c)) == 0, "%s -> %s", what, err);
}

static void
test_errors(void)
{
	expect_error("intervall = 1s\n", "bad.conf:1: unknown key 'intervall'", "typo in key");
	expect_error("interval = 1s\nnonsense\n", "bad.conf:2: expected 'key = value'", "line without '='");
	expect_error("= 3\n", "missing key", "empty key");
	expect_error("interval = fast\n", "not a duration", "bad duration");
	expect_error("interval = 1ms\n",
		     "bad.conf:1: interval = '1ms' is out of range; allowed: 10ms to 1h",
		     "interval too short: the key, the value and the range");
	expect_error("interval = -1s\n", "not a duration", "negative duration");
	expect_error("max_jobs = 0\n", "out of range", "max_jobs zero");
	expect_error("max_jobs = 12abc\n", "whole number", "trailing garbage");
	expect_error("max_jobs = 99999999999999999999999\n", "whole number", "overflow");
	expect_error("socket = relative/path\n", "absolute path", "relative path");
	expect_error("log_level = chatty\n",
		     "log_level = 'chatty' is not an allowed word; allowed: error, warning, info, debug",
		     "unknown level, and the allowed words");
	expect_error("source_rapl = maybe\n", "yes or no", "bad bool");
	expect_error("idle_power_package = -5\n", "watts", "negative power");
	expect_error("idle_power_package = 5 kW\n", "watts", "wrong unit");
	expect_error("pue = 0.5\n", "out of range", "PUE below 1");
	expect_error("pue = nan\n", "not a number", "NaN PUE");
	expect_error("zone = F R\n", "may hold only", "space in zone");
	expect_error("cluster = a;drop table\n", "may hold only", "odd characters in cluster");
	expect_error("ebpf = uprobe\n", "not an allowed word", "unknown eBPF attach type");
}

/* ebpf: auto, off, and each attach type it may force. */
static void
test_ebpf_key(void)
{
	static const char *const words[] = {
		"auto", "fentry", "kprobe", "btf", "tracepoint", "off",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct ceems_config c;
		char text[64], err[256] = "";

		ceems_conf_defaults(&c);
		snprintf(text, sizeof(text), "ebpf = %s\n", words[i]);
		ok(ceems_conf_parse(&c, text, "t.conf", err, sizeof(err)) == 0 &&
		   strcmp(c.ebpf, words[i]) == 0, "ebpf = %s: %s", words[i],
		   err[0] != '\0' ? err : c.ebpf);
	}
}

/* The storage keys: a connection string keeps its spaces and '=', the
 * durations and sizes their units; a password is refused. */
static void
test_storage_keys(void)
{
	struct ceems_config c;
	char err[256] = "";
	char text[1200];
	uint64_t b = 0;

	ceems_conf_defaults(&c);
	is_str(c.database, "", "no database by default: the spool is the store");
	is_int(c.database_timeout_ns, 2000000000ULL, "database timeout 2 s by default");
	is_int(c.spool_max_bytes, 1073741824ULL, "spool cap 1 GiB by default");
	is_int(ceems_conf_parse(&c,
				  "database = host=db.example port=5433 dbname=ceems "
				  "sslmode=verify-full  # comment\n"
				  "database_timeout = 750ms\n"
				  "spool_max_bytes = 64M\n", "t.conf", err, sizeof(err)),
	       0, "storage keys parse");
	is_str(c.database, "host=db.example port=5433 dbname=ceems sslmode=verify-full",
	       "conninfo kept whole, inner spaces and '=' included, comment cut");
	is_int(c.database_timeout_ns, 750000000ULL, "database_timeout 750ms");
	is_int(c.spool_max_bytes, 64ULL << 20, "64M is 64 MiB");
	is_int(ceems_conf_parse(&c, "database = service=ceems\n", "t.conf", err,
				  sizeof(err)), 0, "service name");
	is_str(c.database, "service=ceems", "service=NAME kept");
	is_int(ceems_conf_parse(&c, "database = postgresql://writer@db/ceems?sslmode=require\n",
				  "t.conf", err, sizeof(err)), 0, "URI without password");
	is_str(c.database, "postgresql://writer@db/ceems?sslmode=require", "URI kept");

	/* 512 bytes fit, 513 do not */
	memset(text, 0, sizeof(text));
	strcpy(text, "database = ");
	memset(text + strlen(text), 'a', 512);
	strcat(text, "\n");
	is_int(ceems_conf_parse(&c, text, "t.conf", err, sizeof(err)), 0, "512-byte database string");
	is_int(strlen(c.database), 512, "all 512 bytes kept");
	text[strlen(text) - 1] = 'a';
	strcat(text, "\n");
	expect_error(text, "too long", "513-byte database string");
	expect_error("database = host=db password=secret\n", "holds a password", "password in conninfo");
	expect_error("database = host=db PASSWORD =secret\n", "holds a password", "password, other case and spacing");
	expect_error("database = postgresql://u:secret@db/ceems\n", "holds a password", "password in a URI");
	expect_error("database = postgresql://db/ceems?password=x\n", "holds a password", "password in a URI query");
	expect_error("database = host=db\tdbname=x\n", "control character", "tab inside the value");
	expect_error("database = host=db\x01\n", "control character", "control byte");

	/* sacct_database: the same string rules as database */
	ceems_conf_defaults(&c);
	is_str(c.sacct_database, "", "no sacct_database by default");
	is_int(ceems_conf_parse(&c, "database = service=ceems-write\n"
				  "sacct_database = service=ceems-read\n", "t.conf", err,
				  sizeof(err)), 0, "database and sacct_database parse");
	is_str(c.sacct_database, "service=ceems-read", "sacct_database kept");
	is_str(c.database, "service=ceems-write", "database kept beside it");
	expect_error("sacct_database = host=db password=secret\n", "holds a password",
		     "password in sacct_database");
	expect_error("sacct_database = postgresql://u:secret@db/ceems\n", "holds a password",
		     "password in a sacct_database URI");
	expect_error("sacct_database = host=db\x01\n", "control character",
		     "control byte in sacct_database");
	expect_error("database_timeout = 10ms\n", "out of range", "database timeout too short");
	expect_error("database_timeout = 2 minutes\n", "not a duration", "database timeout with words");
	expect_error("spool_max_bytes = 1K\n", "out of range", "spool cap below 4 KiB");
	expect_error("spool_max_bytes = 10 MB\n", "not a size", "spool cap with a space and MB");
	expect_error("spool_max_bytes = -1\n", "not a size", "negative spool cap");
	expect_error("spool_max_bytes = 99999999999T\n", "not a size", "spool cap overflowing");

	ok(ceems_conf_value_bytes("4096", &b) == 0 && b == 4096, "bare number is bytes");
	ok(ceems_conf_value_bytes("3G", &b) == 0 && b == 3ULL << 30, "3G");
	ok(ceems_conf_value_bytes("2T", &b) == 0 && b == 2ULL << 40, "2T");
	ok(ceems_conf_value_bytes("1k", &b) == -1, "lower-case k refused (K is KiB)");
	ok(ceems_conf_value_bytes("", &b) == -1, "empty refused");
	ok(ceems_conf_value_bytes("18446744073709551616", &b) == -1, "2^64 refused");
}

static void
test_durations(void)
{
	uint64_t ns = 0;

	ok(ceems_conf_value_duration("2", &ns) == 0 && ns == 2000000000ULL, "bare number is seconds");
	ok(ceems_conf_value_duration("1.5s", &ns) == 0 && ns == 1500000000ULL, "fractional seconds");
	ok(ceems_conf_value_duration("2m", &ns) == 0 && ns == 120000000000ULL, "minutes");
	ok(ceems_conf_value_duration("1h", &ns) == 0 && ns == 3600000000000ULL, "hours");
	ok(ceems_conf_value_duration("100us", &ns) == 0 && ns == 100000ULL, "microseconds");
	ok(ceems_conf_value_duration("1 s", &ns) == -1, "space before unit refused");
	ok(ceems_conf_value_duration("1e30s", &ns) == -1, "absurd value refused");
	ok(ceems_conf_value_duration("s", &ns) == -1, "unit alone refused");
}

/* Perf counters: software on, hardware off, a descriptor budget and
 * adoption by default; each key set; a bad budget refused. */
static void
test_perf_keys(void)
{
	struct ceems_config c;
	char err[256] = "";

	ceems_conf_defaults(&c);
	ok(c.perf && !c.perf_hardware && c.perf_adopt && c.perf_max_fds == 65536,
	   "perf defaults: software on, hardware off, adoption, 65536 descriptors");
	is_int(ceems_conf_parse(&c, "perf = off\nperf_hardware = on\n"
				  "perf_max_fds = 100\nperf_adopt = no\n",
				  "t.conf", err, sizeof(err)), 0, "perf keys parse");
	ok(!c.perf && c.perf_hardware && !c.perf_adopt && c.perf_max_fds == 100,
	   "perf keys set");
	expect_error("perf_max_fds = -1\n", "bad.conf:1", "a negative budget");
	expect_error("perf_hardware = maybe\n", "bad.conf:1", "perf_hardware not a boolean");
}

/* %n in the path keys: each of several slurmd on one host finds its own
 * agent; a name that would climb out of the admin's directory is
 * refused. */
static void
test_node_expansion(void)
{
	struct ceems_config c;
	char out[32], err[512] = "";

	is_int(ceems_conf_expand_path("/x/%n/agent.sock", "n1", out, sizeof(out),
				      err, sizeof(err)), 0, "%n expands");
	is_str(out, "/x/n1/agent.sock", "into the node's name");
	is_int(ceems_conf_expand_path("/x/%n-%n/100%%/%d", "a.b_c-1", out,
				      sizeof(out), err, sizeof(err)), 0,
	       "every %n, %% and other % signs");
	is_str(out, "/x/a.b_c-1-a.b_c-1/100%/%d", "%% is one %, %d stays");
	is_int(ceems_conf_expand_path("/x/y", NULL, out, sizeof(out), err,
				      sizeof(err)), 0, "no %n: no node needed");
	is_str(out, "/x/y", "the path unchanged");
	is_int(ceems_conf_expand_path("/x/%n", NULL, out, sizeof(out), err,
				      sizeof(err)), -1, "%n without a node name");
	ok(strstr(err, "not known") != NULL, "says the name is not known: %s", err);
	is_int(ceems_conf_expand_path("/x/%n", "..", out, sizeof(out), err,
				      sizeof(err)), -1, "a node named ..");
	ok(strstr(err, "cannot go into a path") != NULL, "says why: %s", err);
	is_int(ceems_conf_expand_path("/x/%n", "a/b", out, sizeof(out), err,
				      sizeof(err)), -1, "a node name with /");
	is_int(ceems_conf_expand_path("/x/%n", "a..b", out, sizeof(out), err,
				      sizeof(err)), -1, "a node name holding ..");
	is_int(ceems_conf_expand_path("/x/%n", "", out, sizeof(out), err,
				      sizeof(err)), -1, "an empty node name");
	ok(!ceems_conf_node_name_ok("n 1") && !ceems_conf_node_name_ok("n\n1"),
	   "blanks and control bytes refused");
	ok(!ceems_conf_node_name_ok(".") && !ceems_conf_node_name_ok("-n1") &&
	   !ceems_conf_node_name_ok("_n1") && !ceems_conf_node_name_ok("n\xe9" "1"),
	   "'.', a name not beginning with a letter or digit, a byte above ASCII refused");
	is_int(ceems_conf_expand_path("/x/y", "n 1", out, sizeof(out), err,
				      sizeof(err)), 0,
	       "a name no path could hold harms no path that does not name the node");
	ok(!ceems_conf_node_name_ok("0123456789012345678901234567890123456789"
				    "012345678901234567890123") &&
	   ceems_conf_node_name_ok("0123456789012345678901234567890123456789"
				   "01234567890123456789012"),
	   "63 bytes at most");
	is_int(ceems_conf_expand_path("/a/very/long/directory/%n/path", "node-name-1",
				      out, sizeof(out), err, sizeof(err)), -1,
	       "a result longer than the buffer");
	ok(strstr(err, "longer than 31 bytes") != NULL, "says so: %s", err);

	ceems_conf_defaults(&c);
	is_int(ceems_conf_parse(&c, "socket = /run/ceems/%n/agent.sock\n"
				"state_dir = /var/lib/ceems/%n\n"
				"spool_dir = /var/spool/ceems/%n\n"
				"sysfs_root = /srv/sim/%n/sys\n"
				"cluster = c%n\n", "t.conf", err, sizeof(err)),
	       -1, "a NAME key cannot hold %n (only paths expand)");
	is_int(ceems_conf_parse(&c, "socket = /run/ceems/%n/agent.sock\n"
				"state_dir = /var/lib/ceems/%n\n"
				"spool_dir = /var/spool/ceems/%n\n"
				"sysfs_root = /srv/sim/%n/sys\n", "t.conf", err,
				sizeof(err)), 0, "%n parses in paths");
	is_str(c.socket_path, "/run/ceems/%n/agent.sock", "kept until expanded");
	is_int(ceems_conf_expand_node(&c, "n2", err, sizeof(err)), 0,
	       "the config expands for n2");
	is_str(c.socket_path, "/run/ceems/n2/agent.sock", "socket");
	is_str(c.state_dir, "/var/lib/ceems/n2", "state_dir");
	is_str(c.spool_dir, "/var/spool/ceems/n2", "spool_dir");
	is_str(c.sysfs_root, "/srv/sim/n2/sys", "sysfs_root");
	is_str(c.procfs_root, "/proc", "a path without %n unchanged");
	is_int(ceems_conf_parse(&c, "note_dir = /var/spool/ceems/%n/notes\n",
				"t.conf", err, sizeof(err)), 0, "note_dir parses");
	is_int(ceems_conf_expand_node(&c, NULL, err, sizeof(err)), -1,
	       "a %n with no node name is an error");
	ok(strncmp(err, "note_dir: ", 10) == 0, "naming the key: %s", err);
	is_str(c.note_dir, "/var/spool/ceems/%n/notes", "the config unchanged");
}

int
main(void)
{
	test_node_expansion();
	test_defaults();
	test_perf_keys();
	test_values();
	test_errors();
	test_ebpf_key();
	test_storage_keys();
	test_durations();
	return done_testing();
}
