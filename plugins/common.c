/* common.c - helpers every context of the plugin uses: plugstack.conf
 * arguments (args.c), logging into Slurm's logs, step names. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "base/log.h"
#include "base/node_name.h"
#include "plugin.h"
#include "summary/summary.h"

static void
log_to_slurm(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	/* slurm_error would reach the user's stderr from a step; the user
	 * sees only the summary, admins find the rest in the slurmd log. */
	switch (level) {
	case CEEMS_LOG_ERROR:
	case CEEMS_LOG_WARNING:
	case CEEMS_LOG_INFO:
		slurm_info("ceems: %s", message);
		break;
	case CEEMS_LOG_DEBUG:
		slurm_debug("ceems: %s", message);
		break;
	}
}

void
ceems_common_log_to_slurm(void)
{
	ceems_log_set_handler(log_to_slurm, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
}

int
ceems_common_parse_args(int ac, char **av, struct ceems_plugin_args *args)
{
	return ceems_args_parse(ac, av, CEEMS_AGENT_PATH, CEEMS_AGENT_LOG,
				       args);
}

const char *
ceems_common_step_name(uint32_t stepid, char *buf, size_t size)
{
	switch (stepid) {
	case SLURM_BATCH_SCRIPT:
		return "batch";
	case SLURM_EXTERN_CONT:
		return "extern";
	case SLURM_INTERACTIVE_STEP:
		return "interactive";
	default:
		snprintf(buf, size, "%u", stepid);
		return buf;
	}
}

int
ceems_common_expand_config(struct ceems_config *config, const char *node)
{
	char err[512];

	if (ceems_conf_expand_node(config, node, err, sizeof(err)) == 0)
		return 0;
	ceems_error("%s; jobs on this node are not measured", err);
	return -1;
}

const char *
ceems_common_host_node(char *buf, size_t size)
{
	return ceems_node_name_of_host(buf, size) == 0 ? buf : NULL;
}

void
ceems_common_load_config(const char *path, struct ceems_config *config)
{
	char err[512];

	ceems_conf_defaults(config);
	if (ceems_conf_load(config, path, err, sizeof(err)) == 0) {
		ceems_summary_notes_set_gpu_min_time(config->summary_gpu_min_ns);
		return;
	}
	/* No file at the default path: the defaults are the design. */
	if (access(path, F_OK) == 0 || strcmp(path, CEEMS_DEFAULT_CONFIG_PATH) != 0)
		ceems_error("%s; using the defaults", err);
	ceems_conf_defaults(config);
}
