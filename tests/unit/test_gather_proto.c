/* test_gather_proto.c - the gather's texts (lib/client/gather_proto.c):
 * a request line formats and parses back; what is not one is refused
 * with a sentence; an answer splits only behind its own request's line
 * (another job, node or nonce is an old answer played back); where a
 * node's agent listens: its gather_nodes line first, else gather_host
 * with %n, on gather_port; 0 turns the gather off. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/gather_proto.h"
#include "../tap.h"

static struct ceems_gather_request
request(uint32_t jobid, const char *node, const char *nonce)
{
	struct ceems_gather_request r;

	memset(&r, 0, sizeof(r));
	r.jobid = jobid;
	snprintf(r.node, sizeof(r.node), "%s", node);
	snprintf(r.nonce, sizeof(r.nonce), "%s", nonce);
	return r;
}

static void
test_request(void)
{
	struct ceems_gather_request r = request(1248, "node01", "00112233aabbccdd"), back;
	char line[CEEMS_GATHER_LINE_MAX], err[256];
	static const char *const bad[] = {
		"", "ceems-gather 1", "ceems-gather 2 7 n1 0123456789abcdef",
		"ceems-gather 1 0 n1 0123456789abcdef",
		"ceems-gather 1 4294967296 n1 0123456789abcdef",
		"ceems-gather 1 -7 n1 0123456789abcdef",
		"ceems-gather 1 7 ../etc 0123456789abcdef",
		"ceems-gather 1 7 n1 0123456789ABCDEF",
		"ceems-gather 1 7 n1 0123456789abcde",
		"ceems-gather 1 7 n1 0123456789abcdef extra",
		"ceems-gather 1  7 n1 0123456789abcdef",
		"ceems-gather 1 7 n1 0123456789abcdef\n\n",
	};
	int n;

	n = ceems_gather_proto_request_format(&r, line, sizeof(line));
	is_str(line, "ceems-gather 1 1248 node01 00112233aabbccdd\n",
	       "request: its line");
	ok(ceems_gather_proto_request_parse(line, (size_t)n, &back, err,
					    sizeof(err)) == 0 &&
	   back.jobid == 1248 && strcmp(back.node, "node01") == 0 &&
	   strcmp(back.nonce, r.nonce) == 0, "request: parsed back");
	ok(ceems_gather_proto_request_parse(line, (size_t)n - 1, &back, err,
					    sizeof(err)) == 0,
	   "request: without its newline too");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ok(ceems_gather_proto_request_parse(bad[i], strlen(bad[i]), &back,
						    err, sizeof(err)) == -EINVAL &&
		   err[0] != '\0', "request refused with a sentence: '%s' (%s)",
		   bad[i], err);
	}
	ok(ceems_gather_proto_request_parse("ceems-gather 1 7 n\0x 0123456789abcdef",
					    37, &back, err, sizeof(err)) == -EINVAL,
	   "request: a NUL inside is refused");
	r = request(7, "n1", "0123456789abcdeg");
	ok(ceems_gather_proto_request_format(&r, line, sizeof(line)) == -EINVAL,
	   "format: a nonce that is not hex refused");
	r = request(0, "n1", "0123456789abcdef");
	ok(ceems_gather_proto_request_format(&r, line, sizeof(line)) == -EINVAL,
	   "format: job 0 refused");
	r = request(7, "n1", "0123456789abcdef");
	ok(ceems_gather_proto_request_format(&r, line, 10) == -ENOSPC,
	   "format: a buffer too small");
}

static void
test_answer(void)
{
	struct ceems_gather_request r = request(7, "n2", "0123456789abcdef");
	const char *payload = "ceems-gather 1 7 n2 0123456789abcdef\n{\"ok\":true}";
	const char *reply;
	size_t len;
	struct ceems_gather_request other;

	ok(ceems_gather_proto_answer_split(payload, strlen(payload), &r, &reply,
					   &len) == 0 &&
	   len == strlen("{\"ok\":true}") && memcmp(reply, "{\"ok\":true}", len) == 0,
	   "answer: the reply behind the request's line");
	other = request(7, "n2", "0123456789abcdee");
	ok(ceems_gather_proto_answer_split(payload, strlen(payload), &other,
					   &reply, &len) == -EINVAL,
	   "answer: another nonce refused (an old answer)");
	other = request(8, "n2", "0123456789abcdef");
	ok(ceems_gather_proto_answer_split(payload, strlen(payload), &other,
					   &reply, &len) == -EINVAL,
	   "answer: another job refused");
	other = request(7, "n3", "0123456789abcdef");
	ok(ceems_gather_proto_answer_split(payload, strlen(payload), &other,
					   &reply, &len) == -EINVAL,
	   "answer: another node refused");
	ok(ceems_gather_proto_answer_split(payload, 10, &r, &reply, &len) == -EINVAL,
	   "answer: a cut line refused");
}

static void
test_endpoint(void)
{
	struct ceems_config c;
	char host[CEEMS_CONFIG_PATH_MAX], err[256];
	uint16_t port = 0;
	const char *map = "# nodes whose names do not resolve\n"
			  "n1 127.0.0.1:16926\n"
			  "n2\t[::1]:16927   # IPv6\n"
			  "n3 ::1\n"
			  "n4 bad host\n"
			  "n5 -x\n"
			  "n6 h:0\n";

	ceems_conf_defaults(&c);
	ok(ceems_gather_proto_endpoint(&c, NULL, "node01", host, sizeof(host),
				       &port, err, sizeof(err)) == 0 &&
	   strcmp(host, "node01") == 0 && port == 6826,
	   "endpoint: the node's name on the default port");
	snprintf(c.gather_host, sizeof(c.gather_host), "%%n-ib.example.org");
	ok(ceems_gather_proto_endpoint(&c, NULL, "node01", host, sizeof(host),
				       &port, err, sizeof(err)) == 0 &&
	   strcmp(host, "node01-ib.example.org") == 0,
	   "endpoint: gather_host's %%n");
	ok(ceems_gather_proto_endpoint(&c, map, "n1", host, sizeof(host), &port,
				       err, sizeof(err)) == 0 &&
	   strcmp(host, "127.0.0.1") == 0 && port == 16926,
	   "endpoint: the gather_nodes line first");
	ok(ceems_gather_proto_endpoint(&c, map, "n2", host, sizeof(host), &port,
				       err, sizeof(err)) == 0 &&
	   strcmp(host, "::1") == 0 && port == 16927,
	   "endpoint: [IPv6]:port, tabs and comments");
	ok(ceems_gather_proto_endpoint(&c, map, "n3", host, sizeof(host), &port,
				       err, sizeof(err)) == 0 &&
	   strcmp(host, "::1") == 0 && port == 6826,
	   "endpoint: a bare IPv6 address on gather_port");
	ok(ceems_gather_proto_endpoint(&c, map, "n7", host, sizeof(host), &port,
				       err, sizeof(err)) == 0 &&
	   strcmp(host, "n7-ib.example.org") == 0,
	   "endpoint: a node the file does not name: gather_host");
	ok(ceems_gather_proto_endpoint(&c, map, "n4", host, sizeof(host), &port,
				       err, sizeof(err)) == -EINVAL &&
	   strstr(err, "line 5") != NULL,
	   "endpoint: a wrong line refused, naming it (%s)", err);
	ok(ceems_gather_proto_endpoint(&c, map, "n5", host, sizeof(host), &port,
				       err, sizeof(err)) == -EINVAL,
	   "endpoint: a host like an option refused");
	ok(ceems_gather_proto_endpoint(&c, map, "n6", host, sizeof(host), &port,
				       err, sizeof(err)) == -EINVAL,
	   "endpoint: port 0 refused");
	ok(ceems_gather_proto_endpoint(&c, NULL, "../x", host, sizeof(host), &port,
				       err, sizeof(err)) == -EINVAL,
	   "endpoint: a name that is not a node's refused");
	snprintf(c.gather_host, sizeof(c.gather_host), "%%x.example.org");
	ok(ceems_gather_proto_endpoint(&c, NULL, "n1", host, sizeof(host), &port,
				       err, sizeof(err)) == -EINVAL,
	   "endpoint: an unknown %% escape refused");
	c.gather_port = 0;
	ok(ceems_gather_proto_endpoint(&c, map, "n1", host, sizeof(host), &port,
				       err, sizeof(err)) == -ENOENT,
	   "endpoint: gather_port 0 turns the gather off");
}

int
main(void)
{
	test_request();
	test_answer();
	test_endpoint();
	return done_testing();
}
