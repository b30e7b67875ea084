/* conf.h - the ceems configuration file (/etc/ceems/ceems.conf): one
 * "key = value" per line, '#' comments.  Parsing is strict: an unknown key
 * or a malformed value is an error naming the file and line, because a
 * silently ignored typo in an energy accounting setup produces wrong
 * numbers for months.  The keys, their defaults and bounds are the table of
 * base/conf_keys.h; ceems.conf(5) documents them. */
#ifndef CEEMS_CONF_H
#define CEEMS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CEEMS_CONFIG_PATH_MAX 256
/* The longest node name that goes into a path, plus its NUL. */
#define CEEMS_NODE_NAME_MAX 64
/* The longest value of a string key (database, sacct_database): 512 bytes. */
#define CEEMS_CONFIG_STRING_MAX 513
#define CEEMS_DEFAULT_CONFIG_PATH "/etc/ceems/ceems.conf"
#define CEEMS_DEFAULT_GRES_CONF "/etc/slurm/gres.conf"
#define CEEMS_SUMMARY_GPU_MIN_S 300ULL

struct ceems_config {
	/* node agent */
	uint64_t interval_ns;		/* main sampling tick */
	uint64_t checkpoint_interval_ns;	/* state flushed to disk this often */
	uint64_t usage_interval_ns;	/* full cgroup readings (memory, IO) */
	/* The tick while no job is held and the idle power is known: an
	 * idle node's agent wakes this often (no slower than interval). */
	uint64_t idle_interval_ns;
	uint32_t max_jobs;		/* bounded memory: registrations refused beyond */
	/* ceems-jobinfo, beside the agent, asks slurmctld for a job's
	 * start time and metadata at its start and for its final state
	 * at its end (tools/jobinfo): the plugin asks it nothing. */
	bool jobinfo;
	bool series_all;		/* a time series for every job, not only
					 * --ceems-series ones */
	/* Jobs shorter than this get no GPU notes in their summary (the
	 * GPUs' start-up: driver, model load). */
	uint64_t summary_gpu_min_ns;
	uint64_t series_interval_ns;	/* its resolution (whole seconds, at
					 * least the interval) */
	/* A deregistered job whose record the plugin has not acknowledged
	 * within finish_grace, and a job whose cgroup has been gone for
	 * reap_grace without a deregistration, are finalized by the agent
	 * (lib/agent/agent_finish.c). */
	uint64_t finish_grace_ns;
	uint64_t reap_grace_ns;
	char socket_path[CEEMS_CONFIG_PATH_MAX];
	char state_dir[CEEMS_CONFIG_PATH_MAX];
	char spool_dir[CEEMS_CONFIG_PATH_MAX];
	/* Notes of jobs whose end the agent was not told
	 * (lib/record/job_note.h);
	 * "": SPOOL_DIR/notes. */
	char note_dir[CEEMS_CONFIG_PATH_MAX];
	char log_level[16];

	/* storage (lib/record/storage.h): a libpq connection string, a URI or
	 * "service=NAME" (pg_service.conf); "" stores into the spool only */
	char database[CEEMS_CONFIG_STRING_MAX];
	/* ceems-sacct's connection, when set: `database` is the nodes'
	 * writer role, which cannot read jobs; users read as themselves */
	char sacct_database[CEEMS_CONFIG_STRING_MAX];
	/* Slurm's sacct, run by ceems-sacct for the sacct fields ceems
	 * does not keep (tools/sacct/sacct_slurm.h); "": those are empty */
	char slurm_sacct[CEEMS_CONFIG_PATH_MAX];
	uint64_t database_timeout_ns;	/* the whole store, connect included */
	uint64_t spool_max_bytes;	/* soft cap of the spool's records */

	/* where the kernel's trees are (tests point these at fixtures) */
	char sysfs_root[CEEMS_CONFIG_PATH_MAX];
	char procfs_root[CEEMS_CONFIG_PATH_MAX];
	char cgroupfs_prefix[CEEMS_CONFIG_PATH_MAX];

	/* energy sources */
	bool source_rapl;
	bool source_hwmon;
	bool source_pm_counters;
	/* The GPU management libraries the agent loads (dlopen): "" the
	 * vendor's usual names, a name the dynamic linker finds (no '/'),
	 * or an absolute path; "none": that vendor's GPUs are not
	 * measured. */
	char gpu_nvml_library[CEEMS_CONFIG_PATH_MAX];
	char gpu_rocm_smi_library[CEEMS_CONFIG_PATH_MAX];
	/* Slurm's gres.conf, where the job-side plugin finds the device
	 * files of a job's GPUs (lib/sources/gres.h). */
	char gres_conf[CEEMS_CONFIG_PATH_MAX];
	double idle_power_package_w;	/* < 0: learn from the node's readings */
	double idle_power_dram_w;	/* < 0: learn */

	/* emissions */
	char cluster[64];
	char zone[16];			/* ISO 3166-1 country code, or WORLD */
	double pue;
	char emissions_table[CEEMS_CONFIG_PATH_MAX];
	/* the node's time-varying carbon-intensity series
	 * (lib/model/intensity.h),
	 * "" for none: the yearly figure of zone only */
	char intensity_file[CEEMS_CONFIG_PATH_MAX];
	/* carbon-aware advice (lib/model/carbon_advice.h): starts up to
	 * this long after the job's own are considered; a note needs a
	 * saving of both amounts, from a job at least this long */
	uint64_t advice_window_ns;
	double advice_min_saving_g;
	double advice_min_saving_pct;
	uint64_t advice_min_duration_ns;

	/* per-job IO and network (lib/sources/bpf_io.h): "auto" (BTF
	 * tracepoints
	 * where the kernel offers them, else tracepoints), "tracepoint"
	 * (tracefs tracepoints only), "off" */
	char ebpf[16];
	/* node power from the BMC (lib/sources/bmc.h); its credentials live in
	 * bmc_credentials_file, never here */
	char bmc[8];			/* none, inband or lan */
	char bmc_host[CEEMS_CONFIG_PATH_MAX];	/* lan: name or name:port */
	char bmc_credentials_file[CEEMS_CONFIG_PATH_MAX];
	uint64_t bmc_interval_ns;	/* between two readings */
	uint64_t bmc_timeout_ns;	/* one IPMI exchange */
	char bmc_sensor[64];		/* auto, dcmi or an SDR id string */
	char bmc_workarounds[128];	/* freeipmi's names, or none */
	char bmc_privilege[16];		/* user, operator or admin */
	/* perf counters per job (lib/sources/perf_job.h,
	 * lib/sources/perf_cgroup.h) */
	bool perf;			/* software events */
	bool perf_hardware;		/* hardware events for every job, not
					 * only --ceems-perf ones */
	uint32_t perf_max_fds;		/* descriptor budget of all jobs */
	bool perf_adopt;		/* make a v1 job's perf_event cgroup */

	/* The gather of a multi-node job's figures (client/gather_proto.h):
	 * the agents' TCP port (0: no listener, no gather), a node's host
	 * (%n: its name) unless the gather_nodes file names it, the batch
	 * node's wait, and the munge socket both sides use ("": munge's). */
	uint32_t gather_port;
	char gather_host[CEEMS_CONFIG_PATH_MAX];
	char gather_nodes[CEEMS_CONFIG_PATH_MAX];
	uint64_t gather_timeout_ns;
	char munge_socket[CEEMS_CONFIG_PATH_MAX];

	/* The Slurm node whose name the paths' %n took
	 * (ceems_conf_expand_node), "" none: the agent's --node, which its
	 * replay process is given too. */
	char node[CEEMS_NODE_NAME_MAX];
};

/* Fill CONFIG with the documented defaults. */
void ceems_conf_defaults(struct ceems_config *config);

/* Parse TEXT (the file's contents; NAME is used in messages) over CONFIG,
 * which holds defaults or earlier settings.  Returns 0, or -1 after
 * writing "NAME:LINE: problem" into ERR (ERR_SIZE bytes); CONFIG is then
 * unchanged (parsing happens into a copy). */
int ceems_conf_parse(struct ceems_config *config, const char *text,
		       const char *name, char *err, size_t err_size);

/* Read and parse the file at PATH.  Same return convention; a missing
 * file is an error too (the caller decides whether defaults will do). */
int ceems_conf_load(struct ceems_config *config, const char *path,
		      char *err, size_t err_size);

/* The same, with the file's text left in TEXT (TEXT_SIZE bytes, at most
 * CEEMS_CONFIG_TEXT_MAX): the agent hands it to its replay process,
 * which parses the very text the agent did. */
#define CEEMS_CONFIG_TEXT_MAX 65536
int ceems_conf_load_text(struct ceems_config *config, const char *path,
			   char *text, size_t text_size, char *err,
			   size_t err_size);

/* Slurm's node name in the paths of ceems.conf: several slurmd on one
 * host (Slurm's multiple-slurmd mode, a test cluster) each need their own
 * agent, so a path key may hold "%n", replaced by the node's name, as
 * slurm.conf's SlurmdSpoolDir=/var/spool/slurmd/%n does.  A name goes
 * into a path only if it is a plain word: 1 to CEEMS_NODE_NAME_MAX - 1
 * bytes of [A-Za-z0-9._-], without "..", so that no name climbs out of
 * the directory the admin chose. */
bool ceems_conf_node_name_ok(const char *name);

/* IN with every "%n" replaced by NODE, into OUT (SIZE bytes); "%%" is a
 * '%', any other '%' stays as it is.  NODE NULL: a "%n" is an error.
 * Returns 0, or -1 after writing what is wrong into ERR (ERR_SIZE bytes):
 * a bad node name, no node, a result longer than SIZE - 1. */
int ceems_conf_expand_path(const char *in, const char *node, char *out,
			   size_t size, char *err, size_t err_size);

/* Expand every path key of CONFIG (ceems.conf's CEEMS_KEY_PATH keys) as
 * ceems_conf_expand_path does, and keep NODE in CONFIG->node.  Returns
 * 0, or -1 after writing "KEY: what is wrong" into ERR; CONFIG is then
 * unchanged. */
int ceems_conf_expand_node(struct ceems_config *config, const char *node,
			   char *err, size_t err_size);

#endif
