/* sacct_options.h - ceems-sacct's command line: one table of its options
 * (long and short name, argument, help line, handler) from which the
 * parser, --help and the check against the manual all come. */
#ifndef CEEMS_SACCT_OPTIONS_H
#define CEEMS_SACCT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/conf.h"
#include "sacct_fields.h"
#include "sacct_output.h"
#include "sacct_query.h"
#include "sacct_units.h"

/* The configuration read without -c; a test build names its own. */
#ifndef CEEMS_SACCT_CONFIG_PATH
#define CEEMS_SACCT_CONFIG_PATH CEEMS_DEFAULT_CONFIG_PATH
#endif

/* What the command line asked for. */
struct sacct_options {
	const char *config_path;
	const char *start, *end;
	struct sacct_query q;
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	size_t ncols;
	struct sacct_output_opts out;
	bool json, summary, summary_account, allclusters, allusers;
	bool per_node;		/* --per-node: each job's part on each node */
	bool duplicates;	/* -D: every run of a reused job id */
	struct sacct_units units;	/* --units, --noconvert */
	bool have_users, have_clusters;
	uint32_t series_job, explain_job;
};

enum sacct_option_arg {
	SACCT_ARG_NONE,
	SACCT_ARG_REQUIRED,
	SACCT_ARG_OPTIONAL,	/* --name=VALUE only, as getopt_long has it */
};

/* One option.  The handler stores ARG (NULL without one) in the options;
 * it returns 0, or 2 after one line on stderr saying what is wrong. */
struct sacct_option {
	const char *long_name;
	char short_name;	/* '\0': long name only */
	enum sacct_option_arg arg;
	const char *arg_name;	/* as --help and the manual write it */
	const char *help;
	int (*handle)(struct sacct_options *o, const char *arg);
	/* sacct's options ceems-sacct does not do: why (HELP names the
	 * option's meaning in sacct); NULL for the options it does. */
	const char *refused;
};

extern const struct sacct_option sacct_option_table[];
extern const size_t sacct_option_count;

/* Parse ARGV into O (set to its defaults first by the caller): 0, or 2
 * after a line on stderr for a usage error.  -e, -h and -V print and
 * exit. */
int sacct_options_parse(int argc, char **argv, struct sacct_options *o);

/* One error line on standard error, "ceems-sacct: " and the message:
 * its bytes that are not text (control bytes of an argument the caller
 * gave, a terminal's escape sequences) escaped as \xHH, and a message
 * too long to print said to be cut.  Returns 1. */
int sacct_options_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The synopsis, printed after a usage error. */
void sacct_options_usage(FILE *out);

/* --help: the synopsis and one line per option of the table. */
void sacct_options_help(FILE *out);

#endif
