/* report_nodes.h - nodes that misbehave: a node whose static power, or
 * energy per busy core-second, or share of node power outside RAPL and
 * the GPUs, stands out among the nodes of its hardware, and a node
 * whose counters keep leaving gaps (doc/reports.md, "Nodes"). */
#ifndef REPORT_NODES_H
#define REPORT_NODES_H

#include <stdbool.h>
#include <stddef.h>

#include <libpq-fe.h>

#include "report_doc.h"

/* A node is judged on this many jobs of a judgeable length or more. */
#define REPORT_NODE_MIN_JOBS 10
/* A hardware group is compared when it has this many judged nodes. */
#define REPORT_NODE_MIN_GROUP 3
/* A node stands out at this factor over its group's median ... */
#define REPORT_NODE_RATIO 1.15
/* ... and this many robust deviations above it. */
#define REPORT_NODE_DEVIATIONS 4.0
/* Gaps: more than this share of the jobs' time unaccounted. */
#define REPORT_NODE_GAP_SHARE 0.05

enum report_node_metric {
	REPORT_NODE_STATIC,	/* static power per core held, W */
	REPORT_NODE_DYNAMIC,	/* package energy per busy core-second, J */
	REPORT_NODE_RESIDUAL,	/* BMC node power outside RAPL + GPUs, share */
	REPORT_NODE_METRICS
};

struct report_node {
	char name[64];
	char group[64];		/* the name without its trailing digits */
	long jobs;
	double value[REPORT_NODE_METRICS];	/* NaN: not measured */
	double gap_share;
	/* results */
	bool stands_out[REPORT_NODE_METRICS];
	double median[REPORT_NODE_METRICS];
	bool gaps;
};

/* The hardware group of a node name: its name without trailing digits
 * (n01 and n17 are alike, gpu3 is not). */
void report_nodes_group(char *dst, size_t size, const char *name);

/* Judge every node against its group; NODES sorted by group. */
void report_nodes_judge(struct report_node *nodes, size_t n);

/* The period's per-node figures from job_nodes (as the current role
 * sees them), sorted by group; *OUT to free().  -1 with ERR set. */
long report_nodes_fetch(PGconn *conn, const char *from, const char *to,
			struct report_node **out, char *err, size_t err_size);

/* The nodes that stand out, in words and a table; returns how many. */
size_t report_nodes_doc(struct report_doc *d, const struct report_node *nodes,
			size_t n, const char *from, const char *to);

#endif /* REPORT_NODES_H */
