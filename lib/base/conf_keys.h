/* conf_keys.h - the one table of ceems's settings: every key of
 * ceems.conf, every plugstack.conf argument of the plugin and every
 * setting among the node agent's options, each listed once with its
 * type, default, bounds, the places that accept it and its help line.
 * The file parser (conf.c), the plugin's arguments (plugins/args.c) and
 * the agent's command line (tools/agent/ceems-agent.c) all check values here,
 * so that a bound or a default is written in one place and every error
 * names the key, the bad value and the allowed range.
 *
 * Where a key comes from two places, the more specific wins: the agent's
 * option over the plugstack.conf argument (which the plugin passes as
 * that option) over ceems.conf over the default here. */
#ifndef CEEMS_CONF_KEYS_H
#define CEEMS_CONF_KEYS_H

#include <stdbool.h>
#include <stddef.h>

enum ceems_key_type {
	CEEMS_KEY_DURATION,	/* uint64_t ns, within [min, max] */
	CEEMS_KEY_UINT32,	/* uint32_t within [min, max] */
	CEEMS_KEY_PATH,		/* absolute path */
	CEEMS_KEY_WORD,		/* one of the words in `words` */
	CEEMS_KEY_BOOL,
	CEEMS_KEY_WATTS,	/* double in [min, max], or "learn" (-1) */
	CEEMS_KEY_REAL,		/* double within [min, max] */
	CEEMS_KEY_NAME,		/* [A-Za-z0-9._-]+ */
	CEEMS_KEY_STRING,	/* printable text, spaces and '=' included */
	CEEMS_KEY_BYTES,	/* uint64_t bytes, K/M/G/T, within [min, max] */
	CEEMS_KEY_LIBRARY,	/* absolute path, or a name without '/' */
};

/* Where a key is accepted (the `surfaces` bits). */
#define CEEMS_KEY_IN_CONF	0x1u	/* ceems.conf */
#define CEEMS_KEY_IN_PLUGSTACK	0x2u	/* plugstack.conf: KEY=VALUE */
#define CEEMS_KEY_IN_AGENT	0x4u	/* ceems-agent --OPTION VALUE */

struct ceems_key {
	const char *name;	/* in ceems.conf and plugstack.conf */
	const char *option;	/* the agent's long option, NULL: NAME */
	enum ceems_key_type type;
	unsigned surfaces;
	/* As written in ceems.conf; "" not set; NULL: the installation's,
	 * fixed at build time (the agent's program and log). */
	const char *default_value;
	double min, max;	/* bounded types */
	const char *words;	/* CEEMS_KEY_WORD: space-separated */
	/* The field of struct ceems_config (keys in ceems.conf); SIZE is
	 * also the longest text value plus one for the other keys. */
	size_t offset, size;
	const char *help;	/* one line, for usage texts */
};

/* The table: *COUNT entries. */
const struct ceems_key *ceems_conf_keys(size_t *count);

/* The key named NAME (LEN bytes) accepted in SURFACE (a CEEMS_KEY_IN_
 * bit); for CEEMS_KEY_IN_AGENT the name is the option's.  NULL if none. */
const struct ceems_key *ceems_conf_keys_find(const char *name, size_t len,
				       unsigned surface);

/* The agent's option name of K. */
const char *ceems_conf_keys_option(const struct ceems_key *k);

/* The allowed range of K in words ("10ms to 1h"), "" when unbounded. */
void ceems_conf_keys_range(const struct ceems_key *k, char *buf, size_t size);

/* Check VALUE for K and store it into OUT, OUT_SIZE bytes: the size of
 * the C type of K (uint64_t, uint32_t, double, bool), or of the buffer
 * of a text type.  Returns 0, or -1 after writing what is wrong into
 * PROBLEM ("is out of range: 10ms to 1h"), OUT untouched; the caller
 * puts the key and the value in front. */
int ceems_conf_keys_parse(const struct ceems_key *k, const char *value, void *out,
		    size_t out_size, char *problem, size_t problem_size);

#endif
