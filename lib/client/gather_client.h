/* gather_client.h - the batch node's side of the gather: at the end of a
 * multi-node job, ask every other node's agent for its part of the job's
 * figures, all at once, and wait no longer than gather_timeout
 * (gather_proto.h, doc/gather.md).  Runs as root for slurmstepd: it
 * never blocks past its deadline on the network, checks the deadline
 * before each call of munged and of the name service, and never raises
 * SIGPIPE. */
#ifndef CEEMS_GATHER_CLIENT_H
#define CEEMS_GATHER_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "model/measure.h"

struct ceems_gather_node {
	char node[CEEMS_NODE_NAME_MAX];	/* in: the node's Slurm name */
	/* out: 0 with REPORT its part of the job; -ENOENT the agent does
	 * not hold the job; -ETIMEDOUT no answer in time; -ECONNREFUSED
	 * no listener; -EACCES, -EPROTO, -EIO an answer that was refused,
	 * WHY saying why. */
	int status;
	char why[160];
	struct ceems_agent_job_report report;
};

/* The gather_nodes file's text into *TEXT (the caller frees it; NULL
 * when none is set).  0, or -errno with a sentence in ERR. */
int ceems_gather_client_nodes_load(const struct ceems_config *config, char **text,
			    char *err, size_t err_size);

/* Ask the agents of NODES (N of them) for job JOBID's figures, waiting
 * at most TIMEOUT_MS for their answers, then checking them for at most
 * CHECK_MS more (munged decodes each).  Returns how many answered with a
 * report (each node's status says what became of it), or -ENOENT when
 * the gather is off (gather_port 0).  A munged that does not answer, or
 * a name service that hangs, can hold it longer: run it where it can be
 * abandoned (plugins/gather.c runs it in a child). */
int ceems_gather_client_ask(const struct ceems_config *config,
			    uint32_t jobid, struct ceems_gather_node *nodes,
			    size_t n, int timeout_ms, int check_ms);

#endif
