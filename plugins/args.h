/* args.h - the plugin's plugstack.conf arguments (KEY=VALUE), checked
 * against the key table (lib/base/conf_keys.h).  No Slurm header here: the
 * unit tests parse arguments without a Slurm. */
#ifndef CEEMS_PLUGIN_ARGS_H
#define CEEMS_PLUGIN_ARGS_H

#include "summary/summary.h"

struct ceems_plugin_args {
	char config_path[256];
	enum ceems_summary_style summary;
	char agent_path[256];	/* slurmd context: the node agent */
	char agent_log[256];	/* slurmd context: the agent's stderr */
	char interval[32];	/* slurmd context: the agent's sampling
				 * interval, passed as its --interval; ""
				 * keeps the config file's */
};

/* Parse plugstack.conf arguments into ARGS (defaults first: the table's,
 * and AGENT_PATH, AGENT_LOG for the keys whose default is the
 * installation's).  Returns 0, or -1 after logging every bad argument
 * with its key, its value and what is allowed (the plugin keeps that
 * key's default). */
int ceems_args_parse(int ac, char **av, const char *agent_path,
			    const char *agent_log,
			    struct ceems_plugin_args *args);

#endif
