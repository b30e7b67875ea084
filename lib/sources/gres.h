/* gres.h - which GPUs Slurm gave a job, in Slurm's own terms: the GRES
 * indices of the job's allocation on a node (slurmctld's
 * gres_detail_str, "gpu:a100:2(IDX:0-1)"), and the device file of each
 * index (gres.conf).  The job-side plugin turns them into identifiers
 * the node agent matches to its devices ("dev:195:0").
 *
 * Slurm numbers a node's GPUs by the numeric suffix of their File
 * (/dev/nvidia0 is index 0), whatever order gres.conf lists them in.  A
 * MultipleFiles= line (a MIG slice: its GPU and its nvidia-caps files)
 * is one index, its files kept together.  AutoDetect lines give no file,
 * so their indices stay "gres:N" and the agent falls back to the order
 * of its own devices (doc/attribution.md).  Both parsers take text from
 * outside (slurmctld, a configuration file): they reject what they do
 * not understand with -EINVAL and never read past the text. */
#ifndef CEEMS_GRES_H
#define CEEMS_GRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most GPU files of one node, and the longest path. */
#define CEEMS_GRES_MAX_FILES 64
#define CEEMS_GRES_PATH_MAX 256

/* The GPU GRES indices in DETAIL (one node's gres_detail_str), in
 * ascending order and without duplicates, into IDX (MAX entries),
 * their number in *N.  0 (also for no GPU at all), -EINVAL for text
 * that is not Slurm's format, -E2BIG for more than MAX indices. */
int ceems_gres_detail_gpu_indices(const char *detail, uint32_t *idx,
				  size_t max, size_t *n);

/* A job's part of a shared GPU: Slurm's shards or MPS share of it. */
struct ceems_gres_shared {
	char name[8];		/* "shard" or "mps" */
	uint32_t index;		/* the GPU's GRES index */
	uint64_t count;		/* shards or MPS units of it, times NDEV */
	uint32_t ndev;		/* the devices the count was spread over */
	uint64_t total;		/* the GPU's units, 0: not given (gres.conf) */
};

/* The shared GPU GRES (shard, mps) in DETAIL: for each GPU the job has
 * a part of, its count.  Slurm 23.02 and later write each GPU's part
 * and total ("shard:3(2/4,1/4)": 2 of GPU 0's 4, 1 of GPU 1's 4); older
 * ones one count for the GPUs listed ("mps:50(IDX:0-1)": spread evenly
 * here, count/ndev each, the totals from gres.conf).  0, -EINVAL,
 * -E2BIG (more than MAX). */
int ceems_gres_detail_shared(const char *detail, struct ceems_gres_shared *out,
			     size_t max, size_t *n);

/* Does gres.conf's NodeName= value NODES name this node?  The caller's
 * (the plugin has Slurm's hostlist functions); ARG is passed through. */
typedef bool (*ceems_gres_node_match_fn)(const char *nodes, void *arg);

/* The GPU device files gres.conf TEXT (LEN bytes, not necessarily
 * NUL-terminated) gives this node, in Slurm's index order (one entry per
 * index: a MultipleFiles= entry holds its files comma-separated), into FILES
 * (CEEMS_GRES_MAX_FILES entries), their number in *N.  Lines naming
 * other nodes (MATCH false) and other GRES are skipped; File=
 * ranges ("/dev/nvidia[0-3]", "[0,2-3]") are expanded.  0, -EINVAL
 * (a malformed GPU line: *LINE_NO says which), -E2BIG (too many). */
int ceems_gres_conf_gpu_files(const char *text, size_t len,
			      ceems_gres_node_match_fn match, void *arg,
			      char files[][CEEMS_GRES_PATH_MAX], size_t *n,
			      unsigned int *line_no);

/* How many NAME units ("shard", "mps") gres.conf gives each of the node's
 * GPU FILES (NFILES, in index order): COUNTS[i], 0 when none.  A Count=
 * with File= is spread evenly over its files; without File=, over all
 * the GPUs.  0, -EINVAL (*LINE_NO says where), -E2BIG. */
int ceems_gres_conf_shared_counts(const char *text, size_t len,
				  ceems_gres_node_match_fn match, void *arg,
				  const char *name,
				  char files[][CEEMS_GRES_PATH_MAX], size_t nfiles,
				  double *counts, unsigned int *line_no);

/* One line of the NVIDIA driver's /proc/driver/nvidia-caps/mig-minors:
 * "gpu0/gi1/access 21" (a GPU instance's capability file, minor 21 of
 * the nvidia-caps major) or "gpu0/gi1/ci0/access 22" (a compute
 * instance's, CI >= 0).  0, or -EINVAL for any other line (config and
 * monitor lines, garbage). */
struct ceems_mig_minor {
	uint32_t gpu;		/* the GPU's minor (/dev/nvidiaN) */
	uint32_t gi;		/* the GPU instance id */
	int32_t ci;		/* the compute instance id, -1: the GI's own */
	uint32_t minor;		/* of its nvidia-caps access file */
};
int ceems_gres_mig_minor_parse(const char *line, struct ceems_mig_minor *out);

/* The major number of DRIVER ("nvidia-caps") in /proc/devices TEXT, or
 * -ENOENT. */
int ceems_gres_proc_devices_major(const char *text, const char *driver);

#endif
