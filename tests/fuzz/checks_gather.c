/* checks_gather.c - the gather's texts (lib/client/gather_proto.h) held
 * to their contract: a request line parses only into a job id that is
 * one, a node name that is one and a 16-digit nonce, and formats back to
 * the same line; an answer splits only behind its own request's line;
 * a gather_nodes file gives a host of host characters and a port that
 * is one, or a sentence. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "client/gather_proto.h"

static const char *
check_request(const char *data, size_t len)
{
	struct ceems_gather_request req;
	char err[256], line[CEEMS_GATHER_LINE_MAX];
	const char *reply;
	size_t reply_len;
	int r, n;

	memset(err, 'x', sizeof(err));
	r = ceems_gather_proto_request_parse(data, len, &req, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		return "ceems_gather_proto_request_parse: undocumented return code";
	if (r < 0)
		return memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0' ?
		       NULL : "ceems_gather_proto_request_parse: error without a sentence";
	if (req.jobid == 0 || !ceems_conf_node_name_ok(req.node))
		return "ceems_gather_proto_request_parse: a job or node that is not one";
	n = ceems_gather_proto_request_format(&req, line, sizeof(line));
	if (n <= 0)
		return "ceems_gather_proto_request_format: cannot format a parsed request";
	/* The same line, its newline aside. */
	if (!((size_t)n == len || (size_t)n == len + 1) ||
	    memcmp(line, data, (size_t)n - 1) != 0)
		return "ceems_gather_proto_request_format: another line than the one parsed";
	if (ceems_gather_proto_answer_split(line, (size_t)n, &req, &reply,
					    &reply_len) != 0 || reply_len != 0)
		return "ceems_gather_proto_answer_split: refuses its own line";
	return NULL;
}

static bool
host_chars(const char *h)
{
	for (; *h != '\0'; h++)
		if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			   "0123456789.-_:", *h) == NULL)
			return false;
	return true;
}

static const char *
check_endpoint(const char *data, size_t len)
{
	static const char *const nodes[] = { "n1", "n2", "node01" };
	struct ceems_config config;
	char *text, host[CEEMS_CONFIG_PATH_MAX], err[256];
	const char *problem = NULL;
	uint16_t port;

	if ((text = malloc(len + 1)) == NULL)
		return NULL;
	memcpy(text, data, len);
	text[len] = '\0';
	ceems_conf_defaults(&config);
	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]) && !problem; i++) {
		int r;

		memset(err, 'x', sizeof(err));
		r = ceems_gather_proto_endpoint(&config, text, nodes[i], host,
						sizeof(host), &port, err,
						sizeof(err));
		if (r != 0 && r != -EINVAL)
			problem = "ceems_gather_proto_endpoint: undocumented return code";
		else if (r < 0 && (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0'))
			problem = "ceems_gather_proto_endpoint: error without a sentence";
		else if (r == 0 && (host[0] == '\0' || host[0] == '-' ||
				    !host_chars(host) || port == 0))
			problem = "ceems_gather_proto_endpoint: a host or port that is not one";
	}
	free(text);
	return problem;
}

const char *
fuzz_check_gather(const char *data, size_t len)
{
	const char *problem = check_request(data, len);

	return problem != NULL ? problem : check_endpoint(data, len);
}
