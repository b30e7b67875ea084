/* gather_proto.c - the texts of the gather's credentials and where a
 * node's agent listens (gather_proto.h).  Everything here reads bytes
 * that came over the network or from a file an admin wrote: every
 * length is checked, nothing is trusted to be NUL-terminated. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/gather_proto.h"
#include "base/number.h"

static bool
nonce_ok(const char *s, size_t len)
{
	if (len != CEEMS_GATHER_NONCE_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int
ceems_gather_proto_request_format(const struct ceems_gather_request *req,
			    char *buf, size_t size)
{
	int n;

	if (req->jobid == 0 || !ceems_conf_node_name_ok(req->node) ||
	    !nonce_ok(req->nonce, strnlen(req->nonce, sizeof(req->nonce))))
		return -EINVAL;
	n = snprintf(buf, size, "%s %u %s %s\n", CEEMS_GATHER_MAGIC,
		     req->jobid, req->node, req->nonce);
	if (n < 0 || (size_t)n >= size)
		return -ENOSPC;
	return n;
}

/* Printable ASCII and spaces only. */
static bool
printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return true;
}

/* The next space-separated word of [*P, END): its start and length. */
static const char *
next_word(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *e;

	if (s >= end || *s != ' ')
		return NULL;
	s++;
	for (e = s; e < end && *e != ' '; e++)
		;
	*len = (size_t)(e - s);
	*p = e;
	return *len > 0 ? s : NULL;
}

int
ceems_gather_proto_request_parse(const char *buf, size_t len,
			   struct ceems_gather_request *req, char *err,
			   size_t err_size)
{
	const size_t mlen = sizeof(CEEMS_GATHER_MAGIC) - 1;
	const char *p = buf, *end = buf + len, *w;
	char num[16];
	size_t wlen;
	uint64_t v;

	memset(req, 0, sizeof(*req));
	if (len > 0 && buf[len - 1] == '\n')
		end--;
	if (len < mlen || memcmp(buf, CEEMS_GATHER_MAGIC, mlen) != 0 ||
	    !printable(buf, (size_t)(end - buf))) {
		snprintf(err, err_size, "not a ceems gather request");
		return -EINVAL;
	}
	p += mlen;
	if ((w = next_word(&p, end, &wlen)) == NULL || wlen >= sizeof(num)) {
		snprintf(err, err_size, "the request names no job");
		return -EINVAL;
	}
	memcpy(num, w, wlen);
	num[wlen] = '\0';
	/* Digits as the format writes them: no sign, space or leading
	 * zero, so that a request has one spelling. */
	if (num[0] < '1' || num[0] > '9' || strspn(num, "0123456789") != wlen ||
	    ceems_number_parse_u64(num, &v) < 0 || v > UINT32_MAX) {
		snprintf(err, err_size, "the request's job id is not one");
		return -EINVAL;
	}
	req->jobid = (uint32_t)v;
	if ((w = next_word(&p, end, &wlen)) == NULL ||
	    wlen >= sizeof(req->node)) {
		snprintf(err, err_size, "the request names no node");
		return -EINVAL;
	}
	memcpy(req->node, w, wlen);
	if (!ceems_conf_node_name_ok(req->node)) {
		snprintf(err, err_size, "the request's node name is not one");
		return -EINVAL;
	}
	if ((w = next_word(&p, end, &wlen)) == NULL || !nonce_ok(w, wlen) ||
	    p != end) {
		snprintf(err, err_size, "the request's nonce is not 16 hex digits");
		return -EINVAL;
	}
	memcpy(req->nonce, w, wlen);
	return 0;
}

int
ceems_gather_proto_answer_split(const char *buf, size_t len,
			  const struct ceems_gather_request *req,
			  const char **reply, size_t *reply_len)
{
	char line[CEEMS_GATHER_LINE_MAX];
	int n = ceems_gather_proto_request_format(req, line, sizeof(line));

	/* The line, newline included, then the reply. */
	if (n < 0 || len < (size_t)n || memcmp(buf, line, (size_t)n) != 0)
		return -EINVAL;
	*reply = buf + n;
	*reply_len = len - (size_t)n;
	return 0;
}

/* HOST from the template gather_host with %n as NODE. */
static int
expand_host(const char *tmpl, const char *node, char *host, size_t size)
{
	size_t o = 0, nlen = strlen(node);

	for (const char *p = tmpl; *p != '\0'; p++) {
		const char *add = p;
		size_t alen = 1;

		if (p[0] == '%' && p[1] == 'n') {
			add = node;
			alen = nlen;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		} else if (p[0] == '%') {
			return -EINVAL;
		}
		if (o + alen >= size)
			return -ENOSPC;
		memcpy(host + o, add, alen);
		o += alen;
	}
	host[o] = '\0';
	return o > 0 ? 0 : -EINVAL;
}

/* A host name or address: letters, digits, '.', '-', '_', ':' (IPv6)
 * only, and no leading '-' (it would read as an option anywhere). */
static bool
host_ok(const char *h)
{
	if (h[0] == '\0' || h[0] == '-')
		return false;
	for (const char *p = h; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '-' ||
		      *p == '_' || *p == ':'))
			return false;
	return true;
}

/* "HOST" or "HOST:PORT" (an IPv6 address: "[ADDR]:PORT" or bare). */
static int
split_host_port(char *word, uint16_t *port)
{
	char *colon = strrchr(word, ':');
	uint64_t v;

	if (word[0] == '[') {
		char *close = strchr(word, ']');

		if (close == NULL)
			return -EINVAL;
		memmove(word, word + 1, (size_t)(close - word - 1));
		close[-1] = '\0';
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] != '\0' && colon == NULL)
			return -EINVAL;
	} else if (colon != NULL && strchr(word, ':') != colon) {
		return 0;	/* a bare IPv6 address */
	}
	if (colon == NULL)
		return 0;
	*colon = '\0';
	if (ceems_number_parse_u64(colon + 1, &v) < 0 || v == 0 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

/* NODE's line of the gather_nodes file TEXT into HOST and PORT: 1 when
 * found, 0 when not, -EINVAL for a line of NODE that is wrong. */
static int
map_lookup(const char *text, const char *node, char *host, size_t size,
	   uint16_t *port, char *err, size_t err_size)
{
	unsigned lineno = 0;

	for (const char *line = text; *line != '\0';) {
		const char *eol = strchr(line, '\n');
		size_t len = eol != NULL ? (size_t)(eol - line) : strlen(line);
		char buf[CEEMS_NODE_NAME_MAX + CEEMS_CONFIG_PATH_MAX + 8];
		char *name, *where, *rest, *save = NULL;

		lineno++;
		if (len < sizeof(buf)) {
			memcpy(buf, line, len);
			buf[len] = '\0';
			if (strchr(buf, '#') != NULL)
				*strchr(buf, '#') = '\0';
			name = strtok_r(buf, " \t\r", &save);
			if (name != NULL && strcmp(name, node) == 0) {
				where = strtok_r(NULL, " \t\r", &save);
				rest = strtok_r(NULL, " \t\r", &save);
				if (where == NULL || rest != NULL ||
				    split_host_port(where, port) < 0 ||
				    !host_ok(where) || strlen(where) >= size) {
					snprintf(err, err_size,
						 "gather_nodes line %u: not \"NODE HOST[:PORT]\"",
						 lineno);
					return -EINVAL;
				}
				strcpy(host, where);
				return 1;
			}
		}
		line += len + (eol != NULL);
	}
	return 0;
}

int
ceems_gather_proto_endpoint(const struct ceems_config *config, const char *text,
		      const char *node, char *host, size_t size,
		      uint16_t *port, char *err, size_t err_size)
{
	int r;

	if (config->gather_port == 0)
		return -ENOENT;
	if (!ceems_conf_node_name_ok(node)) {
		snprintf(err, err_size, "'%.64s' is not a node name", node);
		return -EINVAL;
	}
	*port = (uint16_t)config->gather_port;
	if (text != NULL &&
	    (r = map_lookup(text, node, host, size, port, err, err_size)) != 0)
		return r < 0 ? r : 0;
	if (expand_host(config->gather_host, node, host, size) < 0 ||
	    !host_ok(host)) {
		snprintf(err, err_size, "gather_host '%s' does not make a host "
			 "name for node %s", config->gather_host, node);
		return -EINVAL;
	}
	return 0;
}
