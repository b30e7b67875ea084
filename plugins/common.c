/* common.c - helpers every context of the plugin uses: plugstack.conf
 * arguments, logging into Slurm's logs, step names. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "base/log.h"
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
ceems_plugin_log_to_slurm(void)
{
	ceems_log_set_handler(log_to_slurm, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
}

/* An absolute path that fits: copied into BUF, else logged, BUF kept. */
static int
parse_path(const char *key, const char *value, char *buf, size_t size)
{
	if (value[0] != '/' || strlen(value) >= size) {
		ceems_error("plugstack.conf: %s=%s must be an absolute path shorter than %zu bytes",
			    key, value, size);
		return -1;
	}
	snprintf(buf, size, "%s", value);
	return 0;
}

int
ceems_plugin_parse_args(int ac, char **av, struct ceems_plugin_args *args)
{
	int ret = 0;

	snprintf(args->config_path, sizeof(args->config_path), "%s",
		 CEEMS_DEFAULT_CONFIG);
	args->summary = CEEMS_SUMMARY_FULL;
	snprintf(args->agent_path, sizeof(args->agent_path), "%s",
		 CEEMS_AGENT_PATH);
	snprintf(args->agent_log, sizeof(args->agent_log), "%s",
		 CEEMS_AGENT_LOG);
	args->interval[0] = '\0';

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
		} else if (klen == 5 && strncmp(av[i], "agent", 5) == 0 && eq) {
			if (parse_path("agent", value, args->agent_path,
				       sizeof(args->agent_path)) < 0)
				ret = -1;
		} else if (klen == 9 && strncmp(av[i], "agent_log", 9) == 0 && eq) {
			if (parse_path("agent_log", value, args->agent_log,
				       sizeof(args->agent_log)) < 0)
				ret = -1;
		} else if (klen == 8 && strncmp(av[i], "interval", 8) == 0 && eq) {
			uint64_t ns;

			/* The agent checks it too; checked here, the error
			 * reaches the slurmd log and the agent still starts. */
			if (ceems_parse_duration(value, &ns) < 0 ||
			    ns < 10000000ULL || ns > 3600000000000ULL ||
			    strlen(value) >= sizeof(args->interval)) {
				ceems_error("plugstack.conf: interval=%s is not a duration from 10ms to 1h (e.g. 500ms, 2s)",
					    value);
				ret = -1;
				continue;
			}
			snprintf(args->interval, sizeof(args->interval), "%s",
				 value);
		} else if (klen == 7 && strncmp(av[i], "summary", 7) == 0 && eq) {
			if (ceems_summary_style_parse(value, &args->summary) < 0) {
				ceems_error("plugstack.conf: summary=%s is not one of none, short, full",
					    value);
				ret = -1;
			}
		} else {
			ceems_error("plugstack.conf: unknown argument '%s' (known: config=PATH, summary=none|short|full, interval=DURATION, agent=PATH, agent_log=PATH)",
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

void
ceems_plugin_load_config(const char *path, struct ceems_config *config)
{
	char err[512];

	ceems_config_defaults(config);
	if (ceems_config_load(config, path, err, sizeof(err)) == 0) {
		ceems_summary_set_gpu_min_time(config->summary_gpu_min_ns);
		return;
	}
	/* No file at the default path: the defaults are the design. */
	if (access(path, F_OK) == 0 || strcmp(path, CEEMS_DEFAULT_CONFIG) != 0)
		ceems_error("%s; using the defaults", err);
	ceems_config_defaults(config);
}
