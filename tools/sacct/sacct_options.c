/* sacct_options.c - ceems-sacct's command line.  One table lists every
 * option: its long and short name, its argument, its help line and the
 * handler that stores it.  getopt_long's arguments are built from the
 * table, --help prints it, and test_sacct_options checks that each of
 * its options is in --help and in ceems-sacct(1), so that the three
 * cannot drift apart.  Checks between options (--series with --json, -M
 * with -L, -a with -u) come after the table's handlers. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_options.h"
#include "sacct_jobs.h"
#include "base/text.h"

#define PROG "ceems-sacct"

/* Room for a message naming a path of PATH_MAX bytes, escaped. */
#define FAIL_MAX (4 * PATH_MAX + 1024)

int
sacct_options_fail(const char *fmt, ...)
{
	static char text[FAIL_MAX], line[FAIL_MAX];
	const char *out = text;
	va_list ap;
	bool cut = false;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		snprintf(text, sizeof(text), "(an error message that could not be formatted)");
	/* Clean text is printed as it is: names the message quotes may be
	 * escaped already, and are not escaped twice. */
	if (!ceems_text_is_clean(text)) {
		ceems_text_escape(line, sizeof(line), text, strlen(text), &cut);
		out = line;
	}
	fprintf(stderr, PROG ": %s%s\n", out, (n >= 0 && (size_t)n >= sizeof(text)) || cut ? " ... (message cut)" : "");
	return 1;
}

/* Split a comma-separated option into the names of *LIST (*N of them,
 * room for *CAP), as many as given; 0 or -1.  Each entry is compared
 * with names as stored (lib/base/text.h): given as shown, it is kept;
 * bytes that are not text are escaped as they were. */
static int
split_list(const char *opt, const char *text, char (**list)[SACCT_NAME_LEN],
	   size_t *n, size_t *cap)
{
	const char *p = text, *end;
	char entry[SACCT_NAME_LEN], safe[SACCT_NAME_LEN];
	size_t len;

	for (;;) {
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			if (len >= SACCT_NAME_LEN) {
				sacct_options_fail("%s: '%.*s...' is longer than %d bytes",
					opt, 40, p, SACCT_NAME_LEN - 1);
				return -1;
			}
			memcpy(entry, p, len);
			entry[len] = '\0';
			ceems_text_safe(safe, sizeof(safe), entry);
			if (sacct_merge_name_add(list, n, cap, safe) < 0) {
				sacct_options_fail("%s: out of memory", opt);
				return -1;
			}
		}
		if (end == NULL)
			return 0;
		p = end + 1;
	}
}

static int
parse_jobid(const char *opt, const char *text, uint32_t *out)
{
	struct sacct_jobsel sel;

	if (sacct_merge_jobsel_parse(text, &sel) < 0 || sel.step[0] != '\0') {
		sacct_options_fail("%s: '%s' is not a job id", opt, text);
		return -1;
	}
	*out = sel.jobid;
	return 0;
}

/* -j: any number of entries, in one list or several -j, ranges in
 * brackets, as sacct takes them (a script passes the ids of all its
 * output files). */
static int
opt_jobs(struct sacct_options *o, const char *arg)
{
	char err[256];

	if (sacct_jobs_add_list(&o->q, arg, err, sizeof(err)) < 0) {
		sacct_options_fail("--jobs: %s", err);
		return 2;
	}
	return 0;
}

static int
opt_user(struct sacct_options *o, const char *arg)
{
	if (split_list("--user", arg, &o->q.users, &o->q.nusers,
		       &o->q.users_cap) < 0)
		return 2;
	o->have_users = true;
	return 0;
}

static int
opt_allusers(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->allusers = true;
	return 0;
}

static int
opt_accounts(struct sacct_options *o, const char *arg)
{
	if (split_list("--accounts", arg, &o->q.accounts, &o->q.naccounts,
		       &o->q.accounts_cap) < 0)
		return 2;
	return 0;
}

static int
opt_partition(struct sacct_options *o, const char *arg)
{
	if (split_list("--partition", arg, &o->q.partitions,
		       &o->q.npartitions, &o->q.partitions_cap) < 0)
		return 2;
	return 0;
}

static int
opt_state(struct sacct_options *o, const char *arg)
{
	char (*list)[SACCT_NAME_LEN] = NULL, state[32];
	size_t n = 0, cap = 0, i, j;
	int r = 0;

	if (split_list("--state", arg, &list, &n, &cap) < 0)
		return 2;
	for (i = 0; i < n && r == 0; i++) {
		if (sacct_merge_state_parse(list[i], state, sizeof(state)) < 0) {
			sacct_options_fail("--state: unknown state '%s'", list[i]);
			r = 2;
			break;
		}
		/* each state once: the list is bounded by Slurm's states */
		for (j = 0; j < o->q.nstates; j++)
			if (strcmp(o->q.states[j], state) == 0)
				break;
		if (j == o->q.nstates && o->q.nstates < SACCT_STATE_MAX)
			memcpy(o->q.states[o->q.nstates++], state, sizeof(state));
	}
	free(list);
	return r;
}

static int
opt_starttime(struct sacct_options *o, const char *arg)
{
	o->start = arg;
	return 0;
}

static int
opt_endtime(struct sacct_options *o, const char *arg)
{
	o->end = arg;
	return 0;
}

static int
opt_allocations(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->q.allocations = true;
	return 0;
}

static int
opt_per_node(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->per_node = true;
	return 0;
}

static int
opt_format(struct sacct_options *o, const char *arg)
{
	char err[256];

	if (sacct_fields_format_parse(arg, o->cols, SACCT_MAX_COLUMNS, &o->ncols,
			       err, sizeof(err)) < 0) {
		sacct_options_fail("--format: %s", err);
		return 2;
	}
	return 0;
}

static int
opt_parsable(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->out.mode = SACCT_PARSABLE;
	return 0;
}

static int
opt_parsable2(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->out.mode = SACCT_PARSABLE2;
	return 0;
}

static int
opt_delimiter(struct sacct_options *o, const char *arg)
{
	if (arg[0] == '\0' || strlen(arg) > 16) {
		sacct_options_fail("--delimiter: 1 to 16 characters");
		return 2;
	}
	o->out.delimiter = arg;
	return 0;
}

static int
opt_noheader(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->out.noheader = true;
	return 0;
}

/* sacct's --json=VERSION asks for a version of slurmrestd's format:
 * ceems-sacct's records are in none of them. */
static int
opt_json(struct sacct_options *o, const char *arg)
{
	if (arg != NULL) {
		sacct_options_fail("--json=%s: ceems-sacct's --json is its own records (ceems-sacct(1)), not slurmrestd's format in any version",
				   arg);
		return 2;
	}
	o->json = true;
	return 0;
}

static int
opt_helpformat(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	sacct_fields_help(stdout);
	exit(fflush(stdout) == 0 ? 0 : 1);
}

static int
opt_clusters(struct sacct_options *o, const char *arg)
{
	if (split_list("--clusters", arg, &o->q.clusters, &o->q.nclusters,
		       &o->q.clusters_cap) < 0)
		return 2;
	o->have_clusters = true;
	return 0;
}

static int
opt_allclusters(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->allclusters = true;
	return 0;
}

static int
opt_csv(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->out.mode = SACCT_CSV;
	return 0;
}

static int
opt_summary(struct sacct_options *o, const char *arg)
{
	o->summary = true;
	if (arg == NULL || strcmp(arg, "user") == 0)
		o->summary_account = false;
	else if (strcmp(arg, "account") == 0)
		o->summary_account = true;
	else {
		sacct_options_fail("--summary: 'user' or 'account', not '%s'", arg);
		return 2;
	}
	return 0;
}

static int
opt_series(struct sacct_options *o, const char *arg)
{
	return parse_jobid("--series", arg, &o->series_job) < 0 ? 2 : 0;
}

static int
opt_explain(struct sacct_options *o, const char *arg)
{
	return parse_jobid("--explain", arg, &o->explain_job) < 0 ? 2 : 0;
}

static int
opt_table(struct sacct_options *o, const char *arg)
{
	if (strcmp(arg, "ascii") == 0)
		o->out.style = SACCT_STYLE_ASCII;
	else if (strcmp(arg, "box") == 0)
		o->out.style = SACCT_STYLE_BOX;
	else if (strcmp(arg, "auto") == 0)
		o->out.style = SACCT_STYLE_AUTO;
	else {
		sacct_options_fail("--table: ascii, box or auto, not '%s'", arg);
		return 2;
	}
	return 0;
}

static int
opt_config(struct sacct_options *o, const char *arg)
{
	if (strlen(arg) >= PATH_MAX) {
		sacct_options_fail("--config: the path is longer than %d bytes", PATH_MAX - 1);
		return 2;
	}
	o->config_path = arg;
	return 0;
}

static int
opt_help(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	sacct_options_help(stdout);
	exit(0);
}

static int
opt_version(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	printf("ceems-sacct %s\n", PACKAGE_VERSION);
	exit(0);
}

/* -b and -l add sacct's own lists (sacct.h BRIEF_FIELDS, LONG_FIELDS). */
static int
opt_brief(struct sacct_options *o, const char *arg)
{
	(void)arg;
	return opt_format(o, "jobid,state,exitcode");
}

static int
opt_long(struct sacct_options *o, const char *arg)
{
	(void)arg;
	return opt_format(o, "jobid,jobidraw,jobname,partition,maxvmsize,"
		"maxvmsizenode,maxvmsizetask,avevmsize,maxrss,maxrssnode,"
		"maxrsstask,averss,maxpages,maxpagesnode,maxpagestask,avepages,"
		"mincpu,mincpunode,mincputask,avecpu,ntasks,alloccpus,elapsed,"
		"state,exitcode,avecpufreq,reqcpufreqmin,reqcpufreqmax,"
		"reqcpufreqgov,reqmem,consumedenergy,maxdiskread,maxdiskreadnode,"
		"maxdiskreadtask,avediskread,maxdiskwrite,maxdiskwritenode,"
		"maxdiskwritetask,avediskwrite,reqtres,alloctres,tresusageinave,"
		"tresusageinmax,tresusageinmaxn,tresusageinmaxt,tresusageinmin,"
		"tresusageinminn,tresusageinmint,tresusageintot,tresusageoutmax,"
		"tresusageoutmaxn,tresusageoutmaxt,tresusageoutave,"
		"tresusageouttot");
}

static int
opt_units(struct sacct_options *o, const char *arg)
{
	if (sacct_units_parse(arg, &o->units.spec) < 0) {
		sacct_options_fail("--units: K, M, G, T or P, not '%s'", arg);
		return 2;
	}
	return 0;
}

static int
opt_noconvert(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->units.noconvert = 1;
	return 0;
}

static int
opt_duplicates(struct sacct_options *o, const char *arg)
{
	(void)arg;
	o->duplicates = true;
	return 0;
}

/* Options of sacct that change nothing here (their help says why). */
static int
opt_nothing(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	return 0;
}

static int
opt_usage(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	sacct_options_usage(stdout);
	exit(0);
}

static int
opt_explain_fields(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	sacct_fields_explain(stdout);
	exit(fflush(stdout) == 0 ? 0 : 1);
}

/* The options of sacct (22.05 to 26.05) that ceems-sacct refuses: each
 * says what it is in sacct and why not here (exit 2). */
static int
opt_refused(struct sacct_options *o, const char *arg)
{
	(void)o;
	(void)arg;
	return 2;	/* said by the parser, which knows the entry */
}

#define REFUSED(long_name, short_name, arg, arg_name, help, why) \
	{ long_name, short_name, arg, arg_name, help, opt_refused, why }

/* In the order of ceems-sacct(1).  --uid is sacct's other name for
 * --user: its own entry, with the same handler (and getopt value). */
const struct sacct_option sacct_option_table[] = {
	{ "starttime", 'S', SACCT_ARG_REQUIRED, "TIME",
	  "list jobs that ran after TIME", opt_starttime },
	{ "endtime", 'E', SACCT_ARG_REQUIRED, "TIME",
	  "list jobs that ran before TIME (inclusive)", opt_endtime },
	{ "jobs", 'j', SACCT_ARG_REQUIRED, "LIST",
	  "jobs by id; JOB.STEP lists that step alone", opt_jobs },
	{ "user", 'u', SACCT_ARG_REQUIRED, "LIST",
	  "users by name or uid (default: the caller)", opt_user },
	{ "uid", '\0', SACCT_ARG_REQUIRED, "LIST",
	  "the same as --user", opt_user },
	{ "allusers", 'a', SACCT_ARG_NONE, NULL,
	  "every user the caller may see", opt_allusers },
	{ "accounts", 'A', SACCT_ARG_REQUIRED, "LIST",
	  "jobs of these accounts", opt_accounts },
	{ "partition", 'r', SACCT_ARG_REQUIRED, "LIST",
	  "jobs in these partitions", opt_partition },
	{ "state", 's', SACCT_ARG_REQUIRED, "LIST",
	  "job states, long or short (COMPLETED or CD, ...)", opt_state },
	{ "allocations", 'X', SACCT_ARG_NONE, NULL,
	  "jobs only, no step lines", opt_allocations },
	{ "allocations", 't', SACCT_ARG_NONE, NULL,
	  "the same as -X (sacct's former letter)", opt_allocations },
	{ "per-node", '\0', SACCT_ARG_NONE, NULL,
	  "each job's part on each of its nodes, as JOBID@NODE lines", opt_per_node },
	{ "clusters", 'M', SACCT_ARG_REQUIRED, "LIST",
	  "clusters to list (default: the cluster of ceems.conf)", opt_clusters },
	{ "cluster", '\0', SACCT_ARG_REQUIRED, "LIST",
	  "the same as --clusters", opt_clusters },
	{ "allclusters", 'L', SACCT_ARG_NONE, NULL,
	  "every cluster", opt_allclusters },
	{ "format", 'o', SACCT_ARG_REQUIRED, "LIST",
	  "the columns, FIELD[%N] with a width (-e lists them)", opt_format },
	{ "fields", '\0', SACCT_ARG_REQUIRED, "LIST",
	  "the same as --format", opt_format },
	{ "brief", 'b', SACCT_ARG_NONE, NULL,
	  "the columns JobID, State, ExitCode", opt_brief },
	{ "long", 'l', SACCT_ARG_NONE, NULL,
	  "sacct's long list of columns", opt_long },
	{ "units", '\0', SACCT_ARG_REQUIRED, "K|M|G|T|P",
	  "memory and energy figures in this unit", opt_units },
	{ "noconvert", '\0', SACCT_ARG_NONE, NULL,
	  "memory and energy figures in the unit counted in", opt_noconvert },
	{ "duplicates", 'D', SACCT_ARG_NONE, NULL,
	  "every job of a job id used again (default: its latest)", opt_duplicates },
	{ "array", '\0', SACCT_ARG_NONE, NULL,
	  "each array task on its line (always so: tasks are kept as they run)", opt_nothing },
	{ "noheader", 'n', SACCT_ARG_NONE, NULL,
	  "no header line", opt_noheader },
	{ "parsable", 'p', SACCT_ARG_NONE, NULL,
	  "fields separated by '|', one after the last field too", opt_parsable },
	{ "parsable2", 'P', SACCT_ARG_NONE, NULL,
	  "the same without the last separator", opt_parsable2 },
	{ "delimiter", '\0', SACCT_ARG_REQUIRED, "TEXT",
	  "the separator of -p and -P", opt_delimiter },
	{ "csv", '\0', SACCT_ARG_NONE, NULL,
	  "comma-separated values with a header (RFC 4180)", opt_csv },
	{ "json", '\0', SACCT_ARG_OPTIONAL, NULL,
	  "the selected jobs' records, as a JSON array", opt_json },
	{ "summary", '\0', SACCT_ARG_OPTIONAL, "user|account",
	  "totals per user (or account) after the table", opt_summary },
	{ "series", '\0', SACCT_ARG_REQUIRED, "JOBID",
	  "the job's time series, as CSV", opt_series },
	{ "explain", '\0', SACCT_ARG_REQUIRED, "JOBID",
	  "the end-of-job summary again, with its notes", opt_explain },
	{ "table", '\0', SACCT_ARG_REQUIRED, "ascii|box|auto",
	  "box drawing or ASCII lines (default: auto)", opt_table },
	{ "helpformat", 'e', SACCT_ARG_NONE, NULL,
	  "list the fields' names, as sacct does", opt_helpformat },
	{ "help-fields", '\0', SACCT_ARG_NONE, NULL,
	  "the same as --helpformat", opt_helpformat },
	{ "explain-fields", '\0', SACCT_ARG_NONE, NULL,
	  "each field: sacct's and filled, sacct's and empty, or ceems's; what it holds", opt_explain_fields },
	{ "config", 'c', SACCT_ARG_REQUIRED, "CONF",
	  "the configuration (default: " CEEMS_SACCT_CONFIG_PATH ")", opt_config },
	{ "help", 'h', SACCT_ARG_NONE, NULL,
	  "this help", opt_help },
	{ "version", 'V', SACCT_ARG_NONE, NULL,
	  "the version", opt_version },
	{ "usage", 'U', SACCT_ARG_NONE, NULL,
	  "the synopsis", opt_usage },
	{ "verbose", 'v', SACCT_ARG_NONE, NULL,
	  "accepted; ceems-sacct says nothing more", opt_nothing },
	{ "federation", '\0', SACCT_ARG_NONE, NULL,
	  "accepted; -M and -L choose the clusters", opt_nothing },
	{ "local", '\0', SACCT_ARG_NONE, NULL,
	  "accepted; -M and -L choose the clusters", opt_nothing },
	{ "use-local-uid", '\0', SACCT_ARG_NONE, NULL,
	  "accepted; users are kept by name", opt_nothing },
	{ "expand-patterns", '\0', SACCT_ARG_NONE, NULL,
	  "accepted; StdIn, StdOut, StdErr are not kept", opt_nothing },
	REFUSED("batch-script", 'B', SACCT_ARG_NONE, NULL,
		"sacct: the job's batch script", "ceems keeps no batch script"),
	REFUSED("env-vars", '\0', SACCT_ARG_NONE, NULL,
		"sacct: the job's environment", "ceems keeps no environment"),
	REFUSED("completion", '\0', SACCT_ARG_NONE, NULL,
		"sacct: the job completion plugin's data", "ceems reads its own records; -c is ceems-sacct's --config"),
	REFUSED("file", 'f', SACCT_ARG_REQUIRED, "FILE",
		"sacct: a jobcomp/filetxt file", "ceems reads its own records"),
	REFUSED("constraints", 'C', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs with these constraints", "ceems keeps no constraints"),
	REFUSED("flags", 'F', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs with these scheduling flags", "ceems keeps no scheduling flags"),
	REFUSED("gid", 'g', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs of these groups", "not a filter of ceems-sacct"),
	REFUSED("group", '\0', SACCT_ARG_REQUIRED, "LIST",
		"sacct: the same as --gid", "not a filter of ceems-sacct"),
	REFUSED("name", '\0', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs of these names", "not a filter of ceems-sacct"),
	REFUSED("nnodes", 'i', SACCT_ARG_REQUIRED, "MIN[-MAX]",
		"sacct: jobs on this many nodes", "not a filter of ceems-sacct"),
	REFUSED("ncpus", 'I', SACCT_ARG_REQUIRED, "MIN[-MAX]",
		"sacct: jobs with this many CPUs", "not a filter of ceems-sacct"),
	REFUSED("timelimit-min", 'k', SACCT_ARG_REQUIRED, "TIME",
		"sacct: jobs with a longer time limit", "not a filter of ceems-sacct"),
	REFUSED("timelimit-max", 'K', SACCT_ARG_REQUIRED, "TIME",
		"sacct: jobs with a shorter time limit", "not a filter of ceems-sacct"),
	REFUSED("nodelist", 'N', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs that ran on these nodes", "not a filter of ceems-sacct"),
	REFUSED("qos", 'q', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs of these QOS", "not a filter of ceems-sacct"),
	REFUSED("reason", 'R', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs pending for these reasons", "ceems keeps no reasons"),
	REFUSED("wckeys", 'W', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs of these wckeys", "ceems keeps no wckeys"),
	REFUSED("associations", 'x', SACCT_ARG_REQUIRED, "LIST",
		"sacct: jobs of these association ids", "ceems keeps no associations"),
	REFUSED("truncate", 'T', SACCT_ARG_NONE, NULL,
		"sacct: times cut to the window", "its figures would no longer be the job's"),
	REFUSED("whole-hetjob", '\0', SACCT_ARG_OPTIONAL, "yes|no",
		"sacct: every component of a hetjob", "not a filter of ceems-sacct"),
	REFUSED("yaml", '\0', SACCT_ARG_OPTIONAL, "VERSION",
		"sacct: slurmrestd's YAML", "ceems-sacct's records are --json"),
	REFUSED("helpstate", '\0', SACCT_ARG_NONE, NULL,
		"sacct: the job states", "ceems-sacct(1) lists the states -s takes"),
	REFUSED("helpreason", '\0', SACCT_ARG_NONE, NULL,
		"sacct: the pending reasons", "ceems keeps no reasons"),
	REFUSED("autocomplete", '\0', SACCT_ARG_REQUIRED, "TEXT",
		"sacct: shell completion", "not provided"),
};
const size_t sacct_option_count =
    sizeof(sacct_option_table) / sizeof(sacct_option_table[0]);

#define SACCT_OPTION_MAX 96
#define SACCT_LONG_ONLY 256	/* getopt's value of a long-only option: + index */

void
sacct_options_usage(FILE *out)
{
	fprintf(out,
		"usage: ceems-sacct [-S TIME] [-E TIME] [-j JOB[.STEP],...] [-u USER,...] [-a]\n"
		"                   [-A ACCOUNT,...] [-r PARTITION,...] [-s STATE,...] [-X] [--per-node]\n"
		"                   [-M CLUSTER,... | -L] [-o FIELD[%%N],...] [-n]\n"
		"                   [-p | -P | --csv | --json] [--delimiter=TEXT] [--summary[=user|account]]\n"
		"       ceems-sacct --series JOBID | --explain JOBID\n"
		"       ceems-sacct -e\n"
		"Common: -c CONF. Manual: ceems-sacct(1).\n");
}

void
sacct_options_help(FILE *out)
{
	const struct sacct_option *opt;
	char name[64];
	size_t i;
	bool required, shown_arg;

	sacct_options_usage(out);
	fputs("Options:\n", out);
	for (i = 0; i < sacct_option_count; i++) {
		opt = &sacct_option_table[i];
		/* an optional value without a name is one sacct takes and
		 * this tool refuses (--json=VERSION): not shown */
		required = opt->arg == SACCT_ARG_REQUIRED;
		shown_arg = opt->arg == SACCT_ARG_OPTIONAL && opt->arg_name != NULL;
		if (opt->refused != NULL &&
		    (i == 0 || sacct_option_table[i - 1].refused == NULL))
			fputs("sacct's options not supported (exit 2):\n", out);
		snprintf(name, sizeof(name), "%c%c%c --%s%s%s%s%s",
			 opt->short_name != '\0' ? '-' : ' ',
			 opt->short_name != '\0' ? opt->short_name : ' ',
			 opt->short_name != '\0' ? ',' : ' ', opt->long_name,
			 shown_arg ? "[" : "", shown_arg || required ? "=" : "",
			 shown_arg || required ? opt->arg_name : "",
			 shown_arg ? "]" : "");
		if (opt->refused != NULL)
			fprintf(out, "  %-30s %s; %s\n", name, opt->help, opt->refused);
		else
			fprintf(out, "  %-30s %s\n", name, opt->help);
	}
}

/* getopt_long's value of entry I: a short option's letter; a long-only
 * option's SACCT_LONG_ONLY + its index, or the letter of the entry with
 * its handler that has one (--uid is -u, even in error messages). */
static int
value_of(size_t i)
{
	size_t k;

	if (sacct_option_table[i].short_name != '\0')
		return (unsigned char)sacct_option_table[i].short_name;
	for (k = 0; k < sacct_option_count && sacct_option_table[i].refused == NULL; k++)
		if (sacct_option_table[k].handle == sacct_option_table[i].handle &&
		    sacct_option_table[k].short_name != '\0')
			return (unsigned char)sacct_option_table[k].short_name;
	return SACCT_LONG_ONLY + (int)i;
}

/* getopt_long's arguments from the table: each option with its value
 * (value_of), the short ones' letters in SHORTOPTS. */
static void
build_getopt(struct option *longopts, char *shortopts)
{
	const struct sacct_option *opt;
	size_t i, k = 0;

	for (i = 0; i < sacct_option_count; i++) {
		opt = &sacct_option_table[i];
		longopts[i].name = opt->long_name;
		longopts[i].has_arg = opt->arg == SACCT_ARG_REQUIRED ?
		    required_argument : opt->arg == SACCT_ARG_OPTIONAL ?
		    optional_argument : no_argument;
		longopts[i].flag = NULL;
		longopts[i].val = value_of(i);
		/* A long name given twice (-X and -t are both
		 * --allocations): one value, or getopt_long takes a prefix
		 * of it (--alloc) for ambiguous. */
		for (size_t j = 0; j < i; j++)
			if (strcmp(sacct_option_table[j].long_name, opt->long_name) == 0) {
				longopts[i].val = value_of(j);
				break;
			}
		if (opt->short_name == '\0')
			continue;
		shortopts[k++] = opt->short_name;
		if (opt->arg == SACCT_ARG_REQUIRED)
			shortopts[k++] = ':';
	}
	memset(&longopts[i], 0, sizeof(longopts[i]));
	shortopts[k] = '\0';
}

static const struct sacct_option *
find_option(int val)
{
	size_t i;

	if (val >= SACCT_LONG_ONLY)
		return (size_t)(val - SACCT_LONG_ONLY) < sacct_option_count ?
		    &sacct_option_table[val - SACCT_LONG_ONLY] : NULL;
	for (i = 0; i < sacct_option_count; i++)
		if (sacct_option_table[i].short_name != '\0' &&
		    (unsigned char)sacct_option_table[i].short_name == val)
			return &sacct_option_table[i];
	return NULL;
}

/* The options that go alone. */
static int
check_together(const struct sacct_options *o)
{
	if ((o->series_job != 0) + (o->explain_job != 0) + o->json > 1) {
		sacct_options_fail("--series, --explain and --json go alone");
		return 2;
	}
	if (o->allclusters && o->have_clusters) {
		sacct_options_fail("-M and -L go alone");
		return 2;
	}
	if (o->allusers && o->have_users) {
		sacct_options_fail("-a and -u go alone");
		return 2;
	}
	return 0;
}

int
sacct_options_parse(int argc, char **argv, struct sacct_options *o)
{
	static struct option longopts[SACCT_OPTION_MAX + 1];
	static char shortopts[2 * SACCT_OPTION_MAX + 1];
	const struct sacct_option *opt;
	int c, r;

	if (sacct_option_count > SACCT_OPTION_MAX)
		abort();	/* the table outgrew its arrays */
	build_getopt(longopts, shortopts);
	opterr = 0;	/* our own message, without the program's path */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if ((opt = find_option(c)) == NULL) {
			if (optopt != 0 && optopt < SACCT_LONG_ONLY)
				sacct_options_fail("bad or incomplete option -%c", optopt);
			else
				sacct_options_fail("bad or incomplete option '%s'", argv[optind - 1]);
			sacct_options_usage(stderr);
			return 2;
		}
		if (opt->refused != NULL) {
			sacct_options_fail("--%s (%s) is not supported: %s",
				opt->long_name, opt->help, opt->refused);
			return 2;
		}
		if ((r = opt->handle(o, optarg)) != 0)
			return r;
	}
	if (optind < argc) {
		sacct_options_fail("unexpected argument '%s'", argv[optind]);
		sacct_options_usage(stderr);
		return 2;
	}
	sacct_merge_jobsel_sort(&o->q);
	return check_together(o);
}
