/* gather_proto.h - what the batch node and the other nodes' agents say
 * to each other when a multi-node job's summary gathers its figures
 * (doc/gather.md): the texts inside the munge credentials, and where a
 * node's agent listens.  Pure functions, no I/O: the transport is
 * gather_client.c (the batch node's side) and tools/agent/agent_gather.c
 * (the agent's side); the credentials are gather_cred.c's.
 *
 * A request is one credential whose payload is the line
 *     ceems-gather 1 JOBID NODE NONCE
 * (NODE: the node asked, so that a credential meant for one node is
 * refused by every other; NONCE: 16 hex digits the answer repeats).  The
 * answer is one credential whose payload is that line, a newline, and
 * the agent's own reply to {"op":"report","jobid":JOBID,"now":true}
 * (agent_proto.h).  On the wire each credential is preceded by its
 * length as 4 bytes, big-endian. */
#ifndef CEEMS_GATHER_PROTO_H
#define CEEMS_GATHER_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"

#define CEEMS_GATHER_MAGIC "ceems-gather 1"
/* The longest request line, with its NUL. */
#define CEEMS_GATHER_LINE_MAX 128
/* The longest credential either side takes: the agent's reply (at most
 * CEEMS_AGENT_MSG_MAX) encrypted and in base64, with room. */
#define CEEMS_GATHER_CRED_MAX (128 * 1024)
#define CEEMS_GATHER_NONCE_LEN 16

struct ceems_gather_request {
	uint32_t jobid;
	char node[CEEMS_NODE_NAME_MAX];
	char nonce[CEEMS_GATHER_NONCE_LEN + 1];
};

/* The request's line into BUF (SIZE bytes): its length, or -ENOSPC, or
 * -EINVAL for a node name that is not one (ceems_conf_node_name_ok) or a
 * nonce that is not 16 lower-case hex digits. */
int ceems_gather_proto_request_format(const struct ceems_gather_request *req,
				char *buf, size_t size);

/* Parse a request's line (LEN bytes, not NUL-terminated, with or without
 * its newline): 0, or -EINVAL with a sentence in ERR. */
int ceems_gather_proto_request_parse(const char *buf, size_t len,
			       struct ceems_gather_request *req, char *err,
			       size_t err_size);

/* An answer's payload (LEN bytes) for REQ: 0 with *REPLY and *REPLY_LEN
 * the agent's reply in it, -EINVAL when its line is not REQ's (another
 * job, node or nonce: an old answer played back). */
int ceems_gather_proto_answer_split(const char *buf, size_t len,
			      const struct ceems_gather_request *req,
			      const char **reply, size_t *reply_len);

/* Where NODE's agent listens, by CONFIG: the line of the gather_nodes
 * file TEXT (its contents, NUL-terminated; NULL: no file) that names
 * NODE ("NODE HOST[:PORT]", '#' comments), else gather_host with each
 * %n replaced by NODE ("%%": a percent), on gather_port.  HOST (SIZE
 * bytes) gets the name or address; *PORT the port.  0, -ENOENT when
 * gather_port is 0 (the gather is off), -EINVAL for a line or host that
 * cannot be used (a sentence in ERR). */
int ceems_gather_proto_endpoint(const struct ceems_config *config,
			  const char *text, const char *node, char *host,
			  size_t size, uint16_t *port, char *err,
			  size_t err_size);

#endif
