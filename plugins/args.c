/* args.c - the plugstack.conf arguments of the plugin, KEY=VALUE, each
 * checked against the key table (lib/base/conf_keys.h): the same bounds and
 * messages as ceems.conf and the agent's options. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "base/conf.h"
#include "base/conf_keys.h"
#include "base/log.h"

/* The known arguments, for the message about an unknown one:
 * "config=PATH, summary=none|short|full, ...". */
static void
known_arguments(char *buf, size_t size)
{
	const struct ceems_key *keys;
	size_t n, used = 0;

	buf[0] = '\0';
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n && used < size; i++) {
		const struct ceems_key *k = &keys[i];
		const char *what = k->type == CEEMS_KEY_PATH ? "PATH" :
		    k->type == CEEMS_KEY_DURATION ? "DURATION" : "WORD";
		char words[64];
		int w;

		if ((k->surfaces & CEEMS_KEY_IN_PLUGSTACK) == 0)
			continue;
		if (k->type == CEEMS_KEY_WORD) {
			snprintf(words, sizeof(words), "%s", k->words);
			for (char *p = words; *p != '\0'; p++)
				if (*p == ' ')
					*p = '|';
			what = words;
		}
		w = snprintf(buf + used, size - used, "%s%s=%s",
			     used > 0 ? ", " : "", k->name, what);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* One argument, KEY=VALUE, into ARGS.  Returns 0 or -1 (logged). */
static int
parse_one(const char *arg, struct ceems_plugin_args *args)
{
	const char *eq = strchr(arg, '=');
	const struct ceems_key *k = NULL;
	char problem[160], word[64], known[256];
	uint64_t ns;
	int r;

	if (eq != NULL)
		k = ceems_conf_keys_find(arg, (size_t)(eq - arg), CEEMS_KEY_IN_PLUGSTACK);
	if (k == NULL) {
		known_arguments(known, sizeof(known));
		ceems_error("plugstack.conf: unknown argument '%s' (known: %s)",
			    arg, known);
		return -1;
	}
	if (strcmp(k->name, "config") == 0)
		r = ceems_conf_keys_parse(k, eq + 1, args->config_path,
				    sizeof(args->config_path), problem,
				    sizeof(problem));
	else if (strcmp(k->name, "agent") == 0)
		r = ceems_conf_keys_parse(k, eq + 1, args->agent_path,
				    sizeof(args->agent_path), problem,
				    sizeof(problem));
	else if (strcmp(k->name, "agent_log") == 0)
		r = ceems_conf_keys_parse(k, eq + 1, args->agent_log,
				    sizeof(args->agent_log), problem,
				    sizeof(problem));
	else if (strcmp(k->name, "summary") == 0) {
		/* The table's words, in any case, as --ceems-summary takes
		 * them (lib/summary.h). */
		r = ceems_summary_style_parse(eq + 1, &args->summary) < 0 ? -1 : 0;
		if (r < 0) {
			ceems_conf_keys_range(k, word, sizeof(word));
			snprintf(problem, sizeof(problem),
				 "is not an allowed word; allowed: %s", word);
		}
	} else {
		/* interval: checked here, so that the error reaches the
		 * slurmd log and the agent still starts; passed on as
		 * written. */
		r = ceems_conf_keys_parse(k, eq + 1, &ns, sizeof(ns), problem,
				    sizeof(problem));
		if (r == 0 && strlen(eq + 1) >= sizeof(args->interval)) {
			snprintf(problem, sizeof(problem),
				 "is too long; at most %zu bytes",
				 sizeof(args->interval) - 1);
			r = -1;
		}
		if (r == 0)
			snprintf(args->interval, sizeof(args->interval), "%s",
				 eq + 1);
	}
	if (r < 0)
		ceems_error("plugstack.conf: %s=%s %s",
			    k->name, eq + 1, problem);
	return r;
}

int
ceems_args_parse(int ac, char **av, const char *agent_path,
			const char *agent_log, struct ceems_plugin_args *args)
{
	const struct ceems_key *summary;
	int ret = 0;

	snprintf(args->config_path, sizeof(args->config_path), "%s",
		 ceems_conf_keys_find("config", 6, CEEMS_KEY_IN_PLUGSTACK)->default_value);
	summary = ceems_conf_keys_find("summary", 7, CEEMS_KEY_IN_PLUGSTACK);
	args->summary = CEEMS_SUMMARY_FULL;
	(void)ceems_summary_style_parse(summary->default_value, &args->summary);
	snprintf(args->agent_path, sizeof(args->agent_path), "%s", agent_path);
	snprintf(args->agent_log, sizeof(args->agent_log), "%s", agent_log);
	args->interval[0] = '\0';

	for (int i = 0; i < ac; i++)
		if (parse_one(av[i], args) < 0)
			ret = -1;
	return ret;
}
