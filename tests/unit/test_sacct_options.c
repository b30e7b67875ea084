/* test_sacct_options.c - ceems-sacct's option table against what users
 * read: every option of the table (its long name, its short one) is in
 * --help and in the manual, ceems-sacct(1); and the table is what the
 * parser follows (--uid is --user, an optional argument, a handler's
 * refusal, options that go alone). */
#include "config.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../tap.h"
#include "sacct/sacct_options.h"

/* The whole of PATH, NUL-terminated, or NULL. */
static char *
read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t size = 0, n;

	if (f == NULL)
		return NULL;
	for (;;) {
		char *grown = realloc(buf, size + 4097);

		if (grown == NULL) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = grown;
		n = fread(buf + size, 1, 4096, f);
		size += n;
		if (n < 4096)
			break;
	}
	buf[size] = '\0';
	fclose(f);
	return buf;
}

/* NEEDLE in TEXT, not followed by a character that would make it part
 * of a longer name (--parsable in --parsable2, -s in -series). */
static bool
has_name(const char *text, const char *needle)
{
	const char *p = text;
	size_t len = strlen(needle);

	while ((p = strstr(p, needle)) != NULL) {
		p += len;
		if (!isalnum((unsigned char)*p) && *p != '_')
			return true;
	}
	return false;
}

static char *
help_text(void)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (f == NULL)
		return NULL;
	sacct_options_help(f);
	fclose(f);
	return buf;
}

static void
test_documented(void)
{
	const char *top = getenv("CEEMS_TOP_SRCDIR");
	char path[4096], name[80];
	char *help = help_text(), *manual;
	const struct sacct_option *opt;
	size_t i;

	snprintf(path, sizeof(path), "%s/doc/ceems-sacct.1",
		 top != NULL ? top : ".");
	manual = read_text(path);
	ok(help != NULL, "--help's text is made");
	ok(manual != NULL, "the manual is read (%s)", path);
	if (help == NULL || manual == NULL)
		goto out;
	ok(sacct_option_count >= 20, "the table holds %zu options",
	   sacct_option_count);
	for (i = 0; i < sacct_option_count; i++) {
		opt = &sacct_option_table[i];
		snprintf(name, sizeof(name), "--%s", opt->long_name);
		ok(has_name(help, name), "--help shows %s", name);
		snprintf(name, sizeof(name), "\\-\\-%s", opt->long_name);
		ok(has_name(manual, name), "ceems-sacct(1) shows --%s",
		   opt->long_name);
		if (opt->short_name == '\0')
			continue;
		snprintf(name, sizeof(name), "-%c, --%s", opt->short_name,
			 opt->long_name);
		ok(strstr(help, name) != NULL, "--help shows %s", name);
		snprintf(name, sizeof(name), "\\-%c", opt->short_name);
		ok(has_name(manual, name), "ceems-sacct(1) shows -%c",
		   opt->short_name);
		ok(opt->help != NULL && opt->help[0] != '\0' &&
		   (opt->arg == SACCT_ARG_NONE) == (opt->arg_name == NULL),
		   "-%c has a help line, and an argument name when it takes one",
		   opt->short_name);
	}
out:
	free(help);
	free(manual);
}

/* What a parse of O allocated, given back, and O zeroed. */
static void
free_lists(struct sacct_options *o)
{
	free(o->q.users);
	free(o->q.accounts);
	free(o->q.partitions);
	free(o->q.clusters);
	free(o->q.jobs);
	memset(o, 0, sizeof(*o));
}

/* Parse ARGS (NULL-terminated, without the program's name) afresh. */
static int
parse(struct sacct_options *o, const char **args)
{
	static char store[16][64];
	char *argv[16];
	int argc = 0;

	free_lists(o);
	snprintf(store[argc], sizeof(store[argc]), "ceems-sacct");
	argv[argc] = store[argc];
	argc++;
	while (*args != NULL && argc < 15) {
		snprintf(store[argc], sizeof(store[argc]), "%s", *args++);
		argv[argc] = store[argc];
		argc++;
	}
	argv[argc] = NULL;
	optind = 0;	/* glibc: start over */
	return sacct_options_parse(argc, argv, o);
}


/* -u, -A, -r and -M take as many names as given, as sacct does; -s
 * each state once. */
static void
test_name_lists(void)
{
	static struct sacct_options o;
	static char users[5000 * 8], states[400], argbuf[4][64];
	char *argv[12];
	size_t i, len = 0;
	bool all = true;

	for (i = 0; i < 5000; i++)
		len += (size_t)snprintf(users + len, sizeof(users) - len, "%su%zu",
					i > 0 ? "," : "", i);
	for (i = 0, len = 0; i < 100; i++)
		len += (size_t)snprintf(states + len, sizeof(states) - len, "%s",
					i > 0 ? ",cd" : "CD");
	argv[0] = argbuf[0];
	snprintf(argbuf[0], sizeof(argbuf[0]), "ceems-sacct");
	argv[1] = argbuf[1];
	snprintf(argbuf[1], sizeof(argbuf[1]), "-u");
	argv[2] = users;
	argv[3] = argbuf[2];
	snprintf(argbuf[2], sizeof(argbuf[2]), "-s");
	argv[4] = states;
	argv[5] = argbuf[3];
	snprintf(argbuf[3], sizeof(argbuf[3]), "-A");
	argv[6] = users;
	argv[7] = NULL;
	optind = 0;
	ok(sacct_options_parse(7, argv, &o) == 0, "-u and -A with 5000 names each");
	ok(o.q.nusers == 5000 && o.q.naccounts == 5000, "every name kept (%zu, %zu)",
	   o.q.nusers, o.q.naccounts);
	for (i = 0; i < 5000 && all; i++) {
		char want[16];

		snprintf(want, sizeof(want), "u%zu", i);
		all = strcmp(o.q.users[i], want) == 0 && strcmp(o.q.accounts[i], want) == 0;
	}
	ok(all, "in order");
	ok(o.q.nstates == 1 && strcmp(o.q.states[0], "COMPLETED") == 0,
	   "-s with one state 100 times: once");
	free_lists(&o);
	{
		static char name[] = "a234567890123456789012345678901234567890123456789012345678901234";
		const char *two[] = { "-M", "c1,c2", "-M", "c3", NULL };

		argv[2] = name;
		argv[3] = NULL;
		optind = 0;
		ok(sacct_options_parse(3, argv, &o) == 2, "a name of 64 bytes is refused");
		free_lists(&o);
		ok(parse(&o, two) == 0 && o.q.nclusters == 3 &&
		   strcmp(o.q.clusters[2], "c3") == 0, "-M lists add up");
		free_lists(&o);
	}
}

static void
test_parse(void)
{
	static struct sacct_options o;
	const char *uid[] = { "--uid", "bob,carol", NULL };
	const char *user[] = { "-u", "bob", "-S", "2025-03-01", "-XP", NULL };
	const char *summary[] = { "--summary", "--table=box", NULL };
	const char *account[] = { "--summary=account", "--series", "7", NULL };
	const char *bad_table[] = { "--table", "round", NULL };
	const char *alone[] = { "--json", "--explain", "7", NULL };
	const char *clusters[] = { "-M", "c1", "-L", NULL };
	const char *extra[] = { "-X", "stray", NULL };
	const char *unknown[] = { "--bogus", NULL };
	const char *alloc[] = { "--alloc", NULL };

	ok(parse(&o, uid) == 0 && o.have_users && o.q.nusers == 2 &&
	   strcmp(o.q.users[0], "bob") == 0 && strcmp(o.q.users[1], "carol") == 0,
	   "--uid is --user");
	ok(parse(&o, user) == 0 && o.q.nusers == 1 && o.start != NULL &&
	   strcmp(o.start, "2025-03-01") == 0 && o.q.allocations &&
	   o.out.mode == SACCT_PARSABLE2, "short options, alone and bundled");
	ok(parse(&o, summary) == 0 && o.summary && !o.summary_account &&
	   o.out.style == SACCT_STYLE_BOX, "--summary without its argument");
	ok(parse(&o, account) == 0 && o.summary && o.summary_account &&
	   o.series_job == 7, "--summary=account, --series JOBID");
	ok(parse(&o, bad_table) == 2, "a handler's refusal is a usage error");
	ok(parse(&o, alloc) == 0 && o.q.allocations,
	   "--alloc, a prefix of the long name -X and -t share");
	ok(parse(&o, alone) == 2, "--json and --explain go alone");
	ok(parse(&o, clusters) == 2, "-M and -L go alone");
	ok(parse(&o, extra) == 2, "an argument that is no option's");
	ok(parse(&o, unknown) == 2, "an option not in the table");
	{
		const char *json_version[] = { "--json=v0.0.40", NULL };
		const char *het[] = { "-j", "123+1", NULL };

		ok(parse(&o, json_version) == 2, "--json=VERSION (slurmrestd's) is refused");
		ok(parse(&o, het) == 2, "-j JOBID+OFFSET is refused");
	}
}

/* Every option of sacct, 22.05 to 26.05 (src/sacct/options.c,
 * long_options[] and the getopt letters), is in the table: done, or
 * refused with a reason; never "bad option". */
static void
test_sacct_options(void)
{
	static const char *const longs[] = {
		"allusers", "accounts", "allocations", "array", "autocomplete",
		"brief", "batch-script", "completion", "constraints", "delimiter",
		"duplicates", "federation", "helpformat", "help-fields",
		"helpreason", "helpstate", "endtime", "env-vars",
		"expand-patterns", "file", "flags", "gid", "group", "help",
		"local", "name", "nnodes", "ncpus", "jobs", "timelimit-min",
		"timelimit-max", "long", "allclusters", "cluster", "clusters",
		"nodelist", "noconvert", "units", "noheader", "fields", "format",
		"parsable", "parsable2", "qos", "partition", "reason", "state",
		"starttime", "truncate", "uid", "use-local-uid", "usage", "user",
		"verbose", "version", "wckeys", "whole-hetjob", "associations",
		"json", "yaml",
	};
	/* -c is ceems-sacct's --config (sacct's --completion is long only
	 * here) */
	static const char shorts[] = "aAbBCDeEfFghiIjkKlLMnNopPqrRsStTuUvVWxX";
	size_t i, k;
	bool found;

	for (i = 0; i < sizeof(longs) / sizeof(longs[0]); i++) {
		for (k = 0, found = false; k < sacct_option_count && !found; k++)
			found = strcmp(sacct_option_table[k].long_name, longs[i]) == 0;
		ok(found, "sacct's --%s is in the table", longs[i]);
	}
	for (i = 0; shorts[i] != '\0'; i++) {
		for (k = 0, found = false; k < sacct_option_count && !found; k++)
			found = sacct_option_table[k].short_name == shorts[i];
		ok(found, "sacct's -%c is in the table", shorts[i]);
	}
	for (k = 0; k < sacct_option_count; k++)
		if (sacct_option_table[k].refused != NULL)
			ok(sacct_option_table[k].refused[0] != '\0',
			   "--%s is refused with a reason", sacct_option_table[k].long_name);
}

/* -j lists are looked up, not scanned: a million entries against as
 * many job ids in well under a second (a scan is 10^12 comparisons);
 * each entry once. */
static void
test_job_lists(void)
{
	static struct sacct_options o;
	const char *range[] = { "-j", "[1-1000000],7.batch,7,7,3000000_[2-3]", NULL };
	const char *dups[] = { "-j", "5,5,5", "-j", "5", NULL };
	uint32_t id, missed = 0;
	double t0;
	int r;

	ok(parse(&o, dups) == 0 && o.q.njobs == 1, "-j 5,5,5 -j 5: one entry");
	free_lists(&o);
	r = parse(&o, range);
	ok(r == 0 && o.q.njobs == 1000003, "a million ids and the rest, each once (%zu)",
	   o.q.njobs);
	t0 = (double)clock() / CLOCKS_PER_SEC;
	for (id = 1; id <= 1000000; id++)
		missed += !sacct_merge_query_names(&o.q, id, UINT32_MAX, UINT32_MAX, "");
	ok(missed == 0, "every id of the range is named");
	ok((double)clock() / CLOCKS_PER_SEC - t0 < 1.0, "a million lookups in %.3f s",
	   (double)clock() / CLOCKS_PER_SEC - t0);
	ok(!sacct_merge_query_names(&o.q, 1000001, UINT32_MAX, UINT32_MAX, NULL) &&
	   !sacct_merge_query_names(&o.q, 0, UINT32_MAX, UINT32_MAX, NULL),
	   "ids outside it are not");
	ok(sacct_merge_query_names(&o.q, 7, UINT32_MAX, UINT32_MAX, "batch"),
	   "7.batch is named");
	ok(sacct_merge_query_names(&o.q, 2000000, 3000000, 3, "") &&
	   !sacct_merge_query_names(&o.q, 2000001, 3000000, 4, ""),
	   "task 3 of array 3000000 (job 2000000) is named, task 4 is not");
	free(o.q.jobs);
}

int
main(void)
{
	test_documented();
	test_parse();
	test_job_lists();
	test_name_lists();
	test_sacct_options();
	return done_testing();
}
