/* plugin.h - state and entry points shared by the files of the ceems SPANK
 * plugin: one file per SPANK context, one dispatcher (spank_ceems.c). */
#ifndef CEEMS_PLUGIN_H
#define CEEMS_PLUGIN_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/spank.h>

#include "cgroup_path.h"

enum ceems_summary_mode {
	CEEMS_SUMMARY_NONE,
	CEEMS_SUMMARY_SHORT,
	CEEMS_SUMMARY_FULL,
};

/* plugstack.conf arguments, key=value. */
struct ceems_plugin_args {
	char config_path[256];
	enum ceems_summary_mode summary;
};

#define CEEMS_DEFAULT_CONFIG "/etc/ceems/ceems.conf"

/* Parse plugstack.conf arguments into ARGS (defaults first).  Returns 0,
 * or -1 after logging every bad argument (the plugin keeps the default). */
int ceems_plugin_parse_args(int ac, char **av, struct ceems_plugin_args *args);

/* Route libceems log lines to Slurm's logs. */
void ceems_plugin_log_to_slurm(void);

/* Readable name of a step id: "batch", "extern", "interactive", "12". */
const char *ceems_plugin_step_name(uint32_t stepid, char *buf, size_t size);

/* slurmstepd (remote) context: remote.c */
int ceems_remote_init(spank_t sp, const struct ceems_plugin_args *args);
int ceems_remote_task_post_fork(spank_t sp);
int ceems_remote_task_exit(spank_t sp);
int ceems_remote_exit(spank_t sp);

#endif
