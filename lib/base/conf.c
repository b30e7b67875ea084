/* conf.c - strict parser of the ceems configuration file; the keys, their
 * defaults and bounds are the table of conf_keys.c. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "base/conf_keys.h"
#include "base/fileio.h"
#include "base/number.h"

/* Every key's default is its table entry's, parsed as a file's value
 * would be: one place for each default, and each within its bounds
 * (tests/unit/test_conf_keys checks that every one parses). */
void
ceems_conf_defaults(struct ceems_config *c)
{
	const struct ceems_key *keys;
	size_t n;
	char problem[160];

	memset(c, 0, sizeof(*c));
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];

		if ((k->surfaces & CEEMS_KEY_IN_CONF) == 0 ||
		    k->default_value == NULL || k->default_value[0] == '\0')
			continue;
		(void)ceems_conf_keys_parse(k, k->default_value, (char *)c + k->offset,
				      k->size, problem, sizeof(problem));
	}
}

static void
trim(const char **start, const char **end)
{
	while (*start < *end && isspace((unsigned char)**start))
		(*start)++;
	while (*end > *start && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

__attribute__((format(printf, 5, 6))) static int
fail(char *err, size_t err_size, const char *name, unsigned line,
     const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, err_size, "%s:%u: ", name, line);
	if (n > 0 && (size_t)n < err_size) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
ceems_conf_parse(struct ceems_config *config, const char *text,
		   const char *name, char *err, size_t err_size)
{
	struct ceems_config work = *config;
	const char *line = text;
	unsigned lineno = 0;

	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *hash = memchr(line, '#', (size_t)(end - line));
		const char *eq, *kstart = line, *kend, *vstart, *vend;
		const struct ceems_key *k;
		char problem[160];
		char value[CEEMS_CONFIG_STRING_MAX];

		lineno++;
		if (hash != NULL)
			end = hash;
		eq = memchr(line, '=', (size_t)(end - line));
		kend = eq ? eq : end;
		trim(&kstart, &kend);
		if (eq == NULL) {
			if (kstart != kend)
				return fail(err, err_size, name, lineno,
					    "expected 'key = value'");
			goto next;
		}
		if (kstart == kend)
			return fail(err, err_size, name, lineno, "missing key before '='");
		k = ceems_conf_keys_find(kstart, (size_t)(kend - kstart),
				   CEEMS_KEY_IN_CONF);
		if (k == NULL)
			return fail(err, err_size, name, lineno, "unknown key '%.*s'",
				    (int)(kend - kstart), kstart);
		vstart = eq + 1;
		vend = end;
		trim(&vstart, &vend);
		if ((size_t)(vend - vstart) >= sizeof(value))
			return fail(err, err_size, name, lineno, "value of %s is too long",
				    k->name);
		memcpy(value, vstart, (size_t)(vend - vstart));
		value[vend - vstart] = '\0';
		if (ceems_conf_keys_parse(k, value, (char *)&work + k->offset, k->size,
				    problem, sizeof(problem)) < 0)
			return fail(err, err_size, name, lineno, "%s = '%s' %s",
				    k->name, value, problem);
next:
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	*config = work;
	return 0;
}

int
ceems_conf_load_text(struct ceems_config *config, const char *path,
		       char *text, size_t text_size, char *err, size_t err_size)
{
	ssize_t n = ceems_fileio_read_text_file(path, text, text_size);

	if (n < 0) {
		snprintf(err, err_size, "%s: %s", path,
			 n == -EFBIG ? "file larger than 64 KiB" : strerror((int)-n));
		return -1;
	}
	if ((size_t)n != strlen(text)) {
		snprintf(err, err_size, "%s: NUL byte in the file", path);
		return -1;
	}
	return ceems_conf_parse(config, text, path, err, err_size);
}

int
ceems_conf_load(struct ceems_config *config, const char *path, char *err,
		  size_t err_size)
{
	char *text = malloc(CEEMS_CONFIG_TEXT_MAX);
	int ret;

	if (text == NULL) {
		snprintf(err, err_size, "%s: out of memory", path);
		return -1;
	}
	ret = ceems_conf_load_text(config, path, text, CEEMS_CONFIG_TEXT_MAX,
				     err, err_size);
	free(text);
	return ret;
}

static bool
ascii_alnum(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

bool
ceems_conf_node_name_ok(const char *name)
{
	size_t n = strnlen(name, CEEMS_NODE_NAME_MAX);

	/* ASCII by value, not isalnum (a locale's letters are bytes above
	 * 0x7f); a letter or digit first, so that "." and "-x" are no name. */
	if (n == 0 || n >= CEEMS_NODE_NAME_MAX || strstr(name, "..") != NULL ||
	    !ascii_alnum((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (!ascii_alnum(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

/* Append LEN bytes of TEXT at *AT of OUT (SIZE bytes).  0, or -1 when
 * they do not fit with the terminating NUL. */
static int
append(char *out, size_t size, size_t *at, const char *text, size_t len)
{
	if (len >= size - *at)
		return -1;
	memcpy(out + *at, text, len);
	*at += len;
	out[*at] = '\0';
	return 0;
}

int
ceems_conf_expand_path(const char *in, const char *node, char *out,
		       size_t size, char *err, size_t err_size)
{
	size_t at = 0;

	if (size == 0)
		return -1;
	out[0] = '\0';
	for (const char *p = in; *p != '\0'; p++) {
		int r;

		if (p[0] == '%' && p[1] == 'n') {
			if (node == NULL) {
				snprintf(err, err_size, "%s holds %%n, but the "
					 "node's name is not known here", in);
				return -1;
			}
			/* Checked where it goes into a path only: a host
			 * name of other bytes harms no path without %n. */
			if (!ceems_conf_node_name_ok(node)) {
				snprintf(err, err_size, "node name '%.*s' cannot go "
					 "into a path (1 to %d bytes of ASCII letters, "
					 "digits, '.', '_', '-', a letter or digit "
					 "first, no \"..\")", CEEMS_NODE_NAME_MAX,
					 node, CEEMS_NODE_NAME_MAX - 1);
				return -1;
			}
			r = append(out, size, &at, node, strlen(node));
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			r = append(out, size, &at, "%", 1);
			p++;
		} else {
			r = append(out, size, &at, p, 1);
		}
		if (r < 0) {
			snprintf(err, err_size, "%s with node %s is longer than "
				 "%zu bytes", in, node != NULL ? node : "?",
				 size - 1);
			return -1;
		}
	}
	return 0;
}

int
ceems_conf_expand_node(struct ceems_config *config, const char *node,
		       char *err, size_t err_size)
{
	struct ceems_config work = *config;
	const struct ceems_key *keys;
	char problem[CEEMS_CONFIG_PATH_MAX + 160];
	size_t n;

	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];
		char *field = (char *)&work + k->offset;

		if (k->type != CEEMS_KEY_PATH || (k->surfaces & CEEMS_KEY_IN_CONF) == 0)
			continue;
		/* The original is kept: the field is also the output. */
		if (ceems_conf_expand_path((const char *)config + k->offset, node,
					   field, k->size, problem,
					   sizeof(problem)) < 0) {
			snprintf(err, err_size, "%s: %s", k->name, problem);
			return -1;
		}
	}
	snprintf(work.node, sizeof(work.node), "%s", node != NULL ? node : "");
	*config = work;
	return 0;
}
