/* gres.h - which GPUs Slurm gave a job, in Slurm's own terms: the GRES
 * indices of the job's allocation on a node (slurmctld's
 * gres_detail_str, "gpu:a100:2(IDX:0-1)"), and the device file of each
 * index (gres.conf).  The job-side plugin turns them into identifiers
 * the node agent matches to its devices ("dev:195:0").
 *
 * Slurm numbers a node's GPUs by the numeric suffix of their File
 * (/dev/nvidia0 is index 0), whatever order gres.conf lists them in;
 * MultipleFiles= and AutoDetect lines give no single file per index,
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

/* Does gres.conf's NodeName= value NODES name this node?  The caller's
 * (the plugin has Slurm's hostlist functions); ARG is passed through. */
typedef bool (*ceems_gres_node_match_fn)(const char *nodes, void *arg);

/* The GPU device files gres.conf TEXT (LEN bytes, not necessarily
 * NUL-terminated) gives this node, in Slurm's index order, into FILES
 * (CEEMS_GRES_MAX_FILES entries), their number in *N.  Lines naming
 * other nodes (MATCH false) and other GRES are skipped; File=
 * ranges ("/dev/nvidia[0-3]", "[0,2-3]") are expanded.  0, -EINVAL
 * (a malformed GPU line: *LINE_NO says which), -E2BIG (too many). */
int ceems_gres_conf_gpu_files(const char *text, size_t len,
			      ceems_gres_node_match_fn match, void *arg,
			      char files[][CEEMS_GRES_PATH_MAX], size_t *n,
			      unsigned int *line_no);

#endif
