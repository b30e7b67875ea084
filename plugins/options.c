/* options.c - the user options of the plugin: --ceems-summary, --ceems-perf
 * and --ceems-series on sbatch, salloc and srun (or their SLURM_SPANK_
 * environment variables).  Slurm parses them on the client, where a bad
 * value is refused with a message, and again inside slurmstepd. */
#include "config.h"

#include <string.h>

#include <slurm/spank.h>

#include "plugin.h"

static struct ceems_user_options user_options;

static int
summary_option(int val, const char *optarg, int remote)
{
	(void)val;
	if (optarg == NULL ||
	    ceems_summary_style_parse(optarg, &user_options.summary) < 0) {
		/* Refused on the client, where the user sees it; inside
		 * slurmstepd a refusal would fail the step: keep the default. */
		if (remote) {
			slurm_info("ceems: --ceems-summary=%s ignored", optarg != NULL ? optarg : "");
			return 0;
		}
		slurm_error("--ceems-summary=%s: expected none, short or full",
			    optarg != NULL ? optarg : "");
		return -1;
	}
	user_options.summary_given = true;
	return 0;
}

static int
flag_option(int val, const char *optarg, int remote)
{
	(void)optarg;
	(void)remote;
	if (val == 1)
		user_options.perf = true;
	else
		user_options.series = true;
	return 0;
}

/* struct spank_option takes char *, so the strings are arrays here. */
static char summary_name[] = "ceems-summary";
static char summary_arg[] = "none|short|full";
static char summary_usage[] =
	"Efficiency summary at the end of the job: none, one line (short) "
	"or full (the default is the site's)";
static char perf_name[] = "ceems-perf";
static char perf_usage[] =
	"Also measure hardware performance counters for this job";
static char series_name[] = "ceems-series";
static char series_usage[] =
	"Keep this job's time series (see ceems-sacct --series)";

static struct spank_option options[] = {
	{ summary_name, summary_arg, summary_usage, 1, 0, summary_option },
	{ perf_name, NULL, perf_usage, 0, 1, flag_option },
	{ series_name, NULL, series_usage, 0, 2, flag_option },
};

void
ceems_options_register(spank_t sp)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++)
		if (spank_option_register(sp, &options[i]) != ESPANK_SUCCESS)
			slurm_info("ceems: cannot register option --%s",
				   options[i].name);
}

const struct ceems_user_options *
ceems_options_user(void)
{
	return &user_options;
}
