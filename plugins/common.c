/* common.c - helpers every context of the plugin uses: plugstack.conf
 * arguments, logging into Slurm's logs, step names. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "log.h"
#include "plugin.h"

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
ceems_plugin_log_to_slurm(void)
{
	ceems_log_set_handler(log_to_slurm, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
}

static int
parse_summary(const char *value, enum ceems_summary_mode *mode)
{
	if (strcmp(value, "none") == 0)
		*mode = CEEMS_SUMMARY_NONE;
	else if (strcmp(value, "short") == 0)
		*mode = CEEMS_SUMMARY_SHORT;
	else if (strcmp(value, "full") == 0)
		*mode = CEEMS_SUMMARY_FULL;
	else
		return -1;
	return 0;
}

int
ceems_plugin_parse_args(int ac, char **av, struct ceems_plugin_args *args)
{
	int ret = 0;

	snprintf(args->config_path, sizeof(args->config_path), "%s",
		 CEEMS_DEFAULT_CONFIG);
	args->summary = CEEMS_SUMMARY_FULL;

	for (int i = 0; i < ac; i++) {
		const char *eq = strchr(av[i], '=');
		const char *value = eq ? eq + 1 : "";
		size_t klen = eq ? (size_t)(eq - av[i]) : strlen(av[i]);

		if (klen == 6 && strncmp(av[i], "config", 6) == 0 && eq) {
			if (value[0] != '/' ||
			    strlen(value) >= sizeof(args->config_path)) {
				ceems_error("plugstack.conf: config=%s must be an absolute path shorter than %zu bytes",
					    value, sizeof(args->config_path));
				ret = -1;
				continue;
			}
			snprintf(args->config_path, sizeof(args->config_path),
				 "%s", value);
		} else if (klen == 7 && strncmp(av[i], "summary", 7) == 0 && eq) {
			if (parse_summary(value, &args->summary) < 0) {
				ceems_error("plugstack.conf: summary=%s is not one of none, short, full",
					    value);
				ret = -1;
			}
		} else {
			ceems_error("plugstack.conf: unknown argument '%s' (known: config=PATH, summary=none|short|full)",
				    av[i]);
			ret = -1;
		}
	}
	return ret;
}

const char *
ceems_plugin_step_name(uint32_t stepid, char *buf, size_t size)
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
