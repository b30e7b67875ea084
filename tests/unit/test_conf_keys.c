/* test_conf_keys.c - the key table (lib/base/conf_keys.h) and the places that
 * take settings from it: every default is a value its key accepts; every
 * bounded key accepts its bounds and refuses a value just outside them,
 * in ceems.conf and as a plugstack.conf argument, with a message naming
 * the key, the value and the range; and ceems.conf(5), spank-ceems(8)
 * and ceems-agent(8) document the table's keys and ranges, no more, no
 * fewer.  The agent's options: tests/unit/agent-options.sh. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "base/conf.h"
#include "base/conf_keys.h"
#include "base/fileio.h"
#include "base/log.h"
#include "../tap.h"
#include "../conf_key_size.h"

static bool
bounded(const struct ceems_key *k)
{
	return k->type == CEEMS_KEY_DURATION || k->type == CEEMS_KEY_UINT32 ||
	    k->type == CEEMS_KEY_BYTES || k->type == CEEMS_KEY_REAL ||
	    k->type == CEEMS_KEY_WATTS;
}

/* The bounds as the range text writes them ("10ms", "1h"), and a value
 * just below MIN (none when MIN is 0) and just above MAX, in K's syntax. */
static void
edges(const struct ceems_key *k, char *lo, char *hi, char *below, char *above,
      size_t size)
{
	char range[80], *to;

	ceems_conf_keys_range(k, range, sizeof(range));
	to = strstr(range, " to ");
	snprintf(lo, size, "%.*s", (int)(to - range), range);
	snprintf(hi, size, "%.*s", (int)strcspn(to + 4, " "), to + 4);
	switch (k->type) {
	case CEEMS_KEY_DURATION:
		snprintf(below, size, k->min > 0 ? "%.0fns" : "", k->min - 1);
		snprintf(above, size, "%.0fns", k->max + 1);
		break;
	case CEEMS_KEY_UINT32:
	case CEEMS_KEY_BYTES:
		snprintf(below, size, k->min > 0 ? "%.0f" : "", k->min - 1);
		snprintf(above, size, "%.0f", k->max + 1);
		break;
	default:
		snprintf(below, size, "%.15g", k->min - 0.01);
		snprintf(above, size, "%.15g", k->max + 0.01);
		break;
	}
}

/* The number key K holds in C. */
static double
stored(const struct ceems_key *k, const struct ceems_config *c)
{
	const char *field = (const char *)c + k->offset;
	uint64_t u64;
	uint32_t u32;
	double d;

	switch (k->type) {
	case CEEMS_KEY_DURATION:
	case CEEMS_KEY_BYTES:
		memcpy(&u64, field, sizeof(u64));
		return (double)u64;
	case CEEMS_KEY_UINT32:
		memcpy(&u32, field, sizeof(u32));
		return u32;
	default:
		memcpy(&d, field, sizeof(d));
		return d;
	}
}

/* Every default parses under its own key. */
static void
test_defaults(void)
{
	const struct ceems_key *keys;
	size_t n;

	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		char out[CEEMS_CONFIG_STRING_MAX], problem[160] = "";

		if (keys[i].default_value == NULL || keys[i].default_value[0] == '\0')
			continue;
		ok(ceems_conf_keys_parse(&keys[i], keys[i].default_value, out,
				   conf_key_value_size(&keys[i]), problem,
				   sizeof(problem)) == 0,
		   "default %s = %s is a value of its key %s", keys[i].name,
		   keys[i].default_value, problem);
	}
	/* The summary's own default, before any file is read, agrees. */
	{
		struct ceems_config c;

		ceems_conf_defaults(&c);
		is_int(c.summary_gpu_min_ns, CEEMS_SUMMARY_GPU_MIN_S * 1000000000ULL,
		       "summary_gpu_min_time's default is the summary's");
	}
}

/* ceems.conf: the bounds are accepted, and they are the table's numbers;
 * a value just outside is refused with the key, the value and the range. */
static void
test_conf_bounds(void)
{
	const struct ceems_key *keys;
	size_t n;

	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];
		char lo[40], hi[40], below[40], above[40], range[80];
		const char *bad[2] = { below, above };
		struct ceems_config c;
		char text[128], err[300];

		if ((k->surfaces & CEEMS_KEY_IN_CONF) == 0 || !bounded(k))
			continue;
		edges(k, lo, hi, below, above, sizeof(lo));
		ceems_conf_keys_range(k, range, sizeof(range));
		for (int e = 0; e < 2; e++) {
			const char *v = e == 0 ? lo : hi;

			ceems_conf_defaults(&c);
			snprintf(text, sizeof(text), "%s = %s\n", k->name, v);
			err[0] = '\0';
			ok(ceems_conf_parse(&c, text, "t.conf", err, sizeof(err)) == 0,
			   "ceems.conf: %s = %s accepted %s", k->name, v, err);
			ok(stored(k, &c) == (e == 0 ? k->min : k->max),
			   "ceems.conf: %s = %s is the table's %s", k->name, v,
			   e == 0 ? "minimum" : "maximum");
		}
		for (int e = 0; e < 2; e++) {
			char want[200];

			if (bad[e][0] == '\0')
				continue;
			ceems_conf_defaults(&c);
			snprintf(text, sizeof(text), "%s = %s\n", k->name, bad[e]);
			snprintf(want, sizeof(want), "%s = '%s' is out of range; allowed: %s",
				 k->name, bad[e], range);
			err[0] = '\0';
			ok(ceems_conf_parse(&c, text, "t.conf", err, sizeof(err)) < 0 &&
			   strstr(err, want) != NULL,
			   "ceems.conf: %s = %s refused: %s", k->name, bad[e], err);
		}
	}
}

static char logged[1024];

static void
capture(enum ceems_log_level level, const char *message, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(logged, sizeof(logged), "%s", message);
}

static int
plugstack(struct ceems_plugin_args *args, const char *arg)
{
	char copy[512];
	char *av[1] = { copy };

	snprintf(copy, sizeof(copy), "%s", arg);
	logged[0] = '\0';
	return ceems_args_parse(1, av, "/sbin/agent", "/var/log/a.log",
				       args);
}

/* plugstack.conf: the same bounds, the same kind of message; a bad value
 * leaves the argument's default. */
static void
test_plugstack_bounds(void)
{
	const struct ceems_key *keys;
	struct ceems_plugin_args args;
	char arg[128], want[300];
	size_t n;

	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];
		char lo[40], hi[40], below[40], above[40], range[80];

		if ((k->surfaces & CEEMS_KEY_IN_PLUGSTACK) == 0 || !bounded(k))
			continue;
		edges(k, lo, hi, below, above, sizeof(lo));
		ceems_conf_keys_range(k, range, sizeof(range));
		snprintf(arg, sizeof(arg), "%s=%s", k->name, lo);
		ok(plugstack(&args, arg) == 0 && logged[0] == '\0',
		   "plugstack.conf: %s accepted %s", arg, logged);
		snprintf(arg, sizeof(arg), "%s=%s", k->name, hi);
		ok(plugstack(&args, arg) == 0 && logged[0] == '\0',
		   "plugstack.conf: %s accepted %s", arg, logged);
		snprintf(arg, sizeof(arg), "%s=%s", k->name, above);
		snprintf(want, sizeof(want), "plugstack.conf: %s is out of range; allowed: %s",
			 arg, range);
		ok(plugstack(&args, arg) < 0 && strstr(logged, want) != NULL,
		   "plugstack.conf: %s refused: %s", arg, logged);
	}
	/* interval: passed on as written, to override the file's. */
	ok(plugstack(&args, "interval=10ms") == 0 &&
	   strcmp(args.interval, "10ms") == 0, "interval=10ms is passed on");
	ok(plugstack(&args, "interval=9999999ns") < 0 && args.interval[0] == '\0',
	   "a refused interval leaves the file's");
	ok(plugstack(&args, "summary=short") == 0 &&
	   args.summary == CEEMS_SUMMARY_SHORT, "summary=short");
	ok(plugstack(&args, "summary=NONE") == 0 &&
	   args.summary == CEEMS_SUMMARY_NONE,
	   "summary=NONE: any case, as --ceems-summary");
	{
		const struct ceems_key *k = ceems_conf_keys_find("summary", 7,
							   CEEMS_KEY_IN_PLUGSTACK);
		char words[64], *w, *save = NULL;
		enum ceems_summary_style style;

		snprintf(words, sizeof(words), "%s", k->words);
		for (w = strtok_r(words, " ", &save); w != NULL;
		     w = strtok_r(NULL, " ", &save))
			ok(ceems_summary_style_parse(w, &style) == 0,
			   "the table's summary word %s is a summary style", w);
	}
	ok(plugstack(&args, "summary=long") < 0 &&
	   args.summary == CEEMS_SUMMARY_FULL &&
	   strstr(logged, "summary=long is not an allowed word; allowed: none, short, full") != NULL,
	   "summary=long refused, the default kept: %s", logged);
	ok(plugstack(&args, "config=etc/ceems.conf") < 0 &&
	   strcmp(args.config_path, CEEMS_DEFAULT_CONFIG_PATH) == 0 &&
	   strstr(logged, "config=etc/ceems.conf must be an absolute path") != NULL,
	   "config= relative refused: %s", logged);
	ok(plugstack(&args, "agent_log=/l/a.log") == 0 &&
	   strcmp(args.agent_log, "/l/a.log") == 0 &&
	   strcmp(args.agent_path, "/sbin/agent") == 0,
	   "agent_log= set, agent= the installation's");
	ok(plugstack(&args, "intervall=1s") < 0 &&
	   strstr(logged, "unknown argument 'intervall=1s'") != NULL,
	   "unknown argument: %s", logged);
	for (size_t i = 0; i < n; i++) {
		char known[64];

		if ((keys[i].surfaces & CEEMS_KEY_IN_PLUGSTACK) == 0)
			continue;
		snprintf(known, sizeof(known), "%s=", keys[i].name);
		ok(strstr(logged, known) != NULL,
		   "the unknown argument's message lists %s", known);
	}
}

/* The paragraph of a man page that starts at the line starting with
 * HEAD, up to the next .TP, .SH or .SS. */
static const char *
paragraph(const char *page, const char *head, char *buf, size_t size)
{
	const char *p = page, *end;

	while ((p = strstr(p, head)) != NULL && p != page && p[-1] != '\n')
		p++;
	if (p == NULL)
		return NULL;
	end = p + strlen(head);
	while ((end = strchr(end, '\n')) != NULL &&
	       strncmp(end + 1, ".TP", 3) != 0 && strncmp(end + 1, ".SH", 3) != 0 &&
	       strncmp(end + 1, ".SS", 3) != 0)
		end++;
	if (end == NULL)
		end = p + strlen(p);
	snprintf(buf, size, "%.*s", (int)(end - p), p);
	return buf;
}

static char *
read_page(const char *name)
{
	const char *top = getenv("CEEMS_TOP_SRCDIR");
	char path[512];
	char *text = malloc(262144);
	ssize_t r;

	snprintf(path, sizeof(path), "%s/doc/%s", top != NULL ? top : "../..",
		 name);
	if (text == NULL)
		return NULL;
	r = ceems_fileio_read_text_file(path, text, 262144);
	ok(r > 0, "%s read", path);
	if (r <= 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ceems.conf(5): each key of the file is documented as ".BI key \"type\"",
 * with the table's range in its paragraph; each so documented is a key. */
static void
test_conf_page(void)
{
	const struct ceems_key *keys;
	char *page = read_page("ceems.conf.5"), head[80], para[8192], range[80];
	size_t n;

	if (page == NULL)
		return;
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];

		if ((k->surfaces & CEEMS_KEY_IN_CONF) == 0)
			continue;
		snprintf(head, sizeof(head), ".BI %s \"", k->name);
		ok(paragraph(page, head, para, sizeof(para)) != NULL,
		   "ceems.conf(5) documents %s", k->name);
		if (!bounded(k) || k->type == CEEMS_KEY_WATTS)
			continue;
		ceems_conf_keys_range(k, range, sizeof(range));
		ok(paragraph(page, head, para, sizeof(para)) != NULL &&
		   strstr(para, range) != NULL,
		   "ceems.conf(5) gives %s the range %s", k->name, range);
	}
	for (const char *p = page; (p = strstr(p, "\n.BI ")) != NULL; p++) {
		size_t len = strspn(p + 5, "abcdefghijklmnopqrstuvwxyz_0123456789");

		if (p[5 + len] != ' ')
			continue;	/* ".BI service= NAME": not a key */
		ok(ceems_conf_keys_find(p + 5, len, CEEMS_KEY_IN_CONF) != NULL,
		   "ceems.conf(5)'s %.*s is a key of the file", (int)len, p + 5);
	}
	free(page);
}

/* spank-ceems(8) and ceems-agent(8): every argument and option of the
 * table, with its range. */
static void
test_other_pages(void)
{
	const struct ceems_key *keys;
	char *plugin = read_page("spank-ceems.8");
	char *agent = read_page("ceems-agent.8");
	char head[80], para[4096], range[80];
	size_t n;

	if (plugin == NULL || agent == NULL) {
		free(plugin);
		free(agent);
		return;
	}
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];

		ceems_conf_keys_range(k, range, sizeof(range));
		if ((k->surfaces & CEEMS_KEY_IN_PLUGSTACK) != 0) {
			snprintf(head, sizeof(head), ".B%c %s=",
				 k->type == CEEMS_KEY_WORD ? 'R' : 'I', k->name);
			ok(paragraph(plugin, head, para, sizeof(para)) != NULL &&
			   (!bounded(k) || strstr(para, range) != NULL),
			   "spank-ceems(8) documents %s= %s", k->name, range);
		}
		if ((k->surfaces & CEEMS_KEY_IN_AGENT) != 0) {
			snprintf(head, sizeof(head), ".BI \\-\\-%s \"",
				 ceems_conf_keys_option(k));
			ok(paragraph(agent, head, para, sizeof(para)) != NULL &&
			   (!bounded(k) || strstr(para, range) != NULL),
			   "ceems-agent(8) documents --%s %s", ceems_conf_keys_option(k),
			   range);
		}
	}
	free(plugin);
	free(agent);
}

int
main(void)
{
	ceems_log_set_handler(capture, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	test_defaults();
	test_conf_bounds();
	test_plugstack_bounds();
	test_conf_page();
	test_other_pages();
	return done_testing();
}
