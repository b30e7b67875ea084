/* ceems-agent.c - the ceems node agent: command line, configuration,
 * logging and privileges, then the event loop of agent_server.c.  It
 * always runs in the foreground, under its supervisor: the same program
 * run with --supervise (agent_supervise.c), which the slurmd-side plugin
 * starts once and adopts after that, and which captures its stderr.  The
 * same program is also a small client of a running agent (--status,
 * --call), the admin's control of the supervisor (--start, --stop,
 * --restart), and the agent's own replay of the spool (--replay, an
 * internal mode the agent executes, agent_replay.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_caps.h"
#include "agent_confine.h"
#include "sources/bpf_io.h"
#include "client/agent_launch.h"
#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "agent_replay.h"
#include "agent_server.h"
#include "agent_supervise.h"
#include "summary/summary.h"
#include "base/conf.h"
#include "base/conf_keys.h"
#include "base/log.h"

/* How long --stop and --restart wait for the supervisor. */
#define CONTROL_TIMEOUT_MS 30000

/* The name in log lines: the supervisor says it is the supervisor. */
static const char *log_name = "ceems-agent";

static const char *const level_names[] = {
	[CEEMS_LOG_ERROR] = "error",
	[CEEMS_LOG_WARNING] = "warning",
	[CEEMS_LOG_INFO] = "info",
	[CEEMS_LOG_DEBUG] = "debug",
};

/* One line per event on stderr, with the wall-clock time (what an admin
 * correlates with other logs) and the level, in a single write so that
 * lines never interleave in the supervisor's capture. */
static void
log_to_stderr(enum ceems_log_level level, const char *message, void *arg)
{
	char line[1200], stamp[40];
	struct timespec ts;
	struct tm tm;
	int n;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = (int)strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + n, sizeof(stamp) - (size_t)n, ".%03ld",
		 ts.tv_nsec / 1000000);
	n = (int)strlen(stamp);
	strftime(stamp + n, sizeof(stamp) - (size_t)n, "%z", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%d]: %s: %s\n", stamp,
		     log_name, (int)getpid(), level_names[level], message);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to say it. */
	}
}

static enum ceems_log_level
level_from_name(const char *name)
{
	for (int l = CEEMS_LOG_ERROR; l <= CEEMS_LOG_DEBUG; l++)
		if (strcmp(name, level_names[l]) == 0)
			return (enum ceems_log_level)l;
	return CEEMS_LOG_INFO;
}

/* The options of the key table (lib/base/conf_keys.h), with their ranges
 * and defaults; an option given overrides the configuration file's key
 * of the same name. */
static void
usage_settings(FILE *out)
{
	const struct ceems_key *keys;
	size_t n;

	fprintf(out, "\nSettings (an option overrides the file's key of the same name):\n");
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		const struct ceems_key *k = &keys[i];
		char range[80], arg[64];

		if ((k->surfaces & CEEMS_KEY_IN_AGENT) == 0)
			continue;
		snprintf(arg, sizeof(arg), "--%s %s", ceems_conf_keys_option(k),
			 k->type == CEEMS_KEY_DURATION ? "DURATION" :
			 k->type == CEEMS_KEY_PATH ? "PATH" : "NUMBER");
		ceems_conf_keys_range(k, range, sizeof(range));
		fprintf(out, "      %-24s %s%s%s%s\n", arg, k->help,
			range[0] != '\0' ? ", " : "", range,
			k->default_value == NULL ? "" :
			(k->surfaces & CEEMS_KEY_IN_CONF) != 0 ?
			" (default: the file's)" : "");
		if (k->default_value == NULL)
			fprintf(out, "      %-24s (default %s)\n", "",
				strcmp(k->name, "agent") == 0 ? CEEMS_AGENT_PATH :
				CEEMS_AGENT_LOG);
		else if ((k->surfaces & CEEMS_KEY_IN_CONF) == 0)
			fprintf(out, "      %-24s (default %s)\n", "",
				k->default_value);
	}
}

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: ceems-agent [-c FILE] [--interval DURATION]\n"
		"                   [--check-config | --check-privileges]\n"
		"       ceems-agent [-c FILE] [--socket PATH] [--timeout MS] --status\n"
		"       ceems-agent [-c FILE] [--socket PATH] [--timeout MS] --call JSON|-\n"
		"       ceems-agent [-c FILE] [--agent PATH] [--log FILE] [--interval DURATION]\n"
		"                   --start | --supervise\n"
		"       ceems-agent [-c FILE] --stop | --restart\n"
		"\n"
		"The ceems node agent: samples the node's energy counters and every\n"
		"registered job's cgroup, and splits the energy among jobs.  It runs in\n"
		"the foreground and logs to stderr.\n"
		"\n"
		"  -c, --config FILE   configuration file (default %s)\n"
		"  -f, --foreground    accepted for compatibility: always in the foreground\n"
		"      --check-config  parse the configuration, print it in full, exit\n"
		"      --check-privileges  drop privileges as the agent does, then show\n"
		"                      that /etc/shadow and /etc are out of reach\n"
		"      --status        ask the running agent for its status\n"
		"      --call JSON     send one request (\"-\": read it from stdin) and\n"
		"                      print the reply; exit 0 ok, 1 refused, 2 no agent\n"
		"      --start         start the supervisor (and so the agent) in the\n"
		"                      background, unless one runs for this configuration\n"
		"      --stop          stop the running supervisor and its agent\n"
		"      --restart       restart the agent and its supervisor (a new version)\n"
		"      --supervise     be the supervisor, in the foreground\n"
		"      --replay DELAY_MS  internal: the agent's own replay process\n"
		"  -h, --help          this text\n"
		"  -V, --version       the version\n",
		CEEMS_DEFAULT_CONFIG_PATH);
	usage_settings(out);
	fprintf(out, "\nSee ceems-agent(8) and ceems.conf(5).\n");
}

static void
print_duration(const char *key, uint64_t ns)
{
	if (ns % 1000000000u == 0)
		printf("%s = %llus\n", key, (unsigned long long)(ns / 1000000000u));
	else if (ns % 1000000u == 0)
		printf("%s = %llums\n", key, (unsigned long long)(ns / 1000000u));
	else if (ns % 1000u == 0)
		printf("%s = %lluus\n", key, (unsigned long long)(ns / 1000u));
	else
		printf("%s = %lluns\n", key, (unsigned long long)ns);
}

static void
print_watts(const char *key, double w)
{
	if (w < 0)
		printf("%s = learn\n", key);
	else
		printf("%s = %g W\n", key, w);
}

/* The value of the ceems.conf key K in C, in the file's own syntax. */
static void
print_conf_key(const struct ceems_key *k, const struct ceems_config *c)
{
	const char *field = (const char *)c + k->offset;
	uint64_t u64;
	uint32_t u32;
	double d;
	bool b;

	switch (k->type) {
	case CEEMS_KEY_DURATION:
		memcpy(&u64, field, sizeof(u64));
		print_duration(k->name, u64);
		return;
	case CEEMS_KEY_BYTES:
		memcpy(&u64, field, sizeof(u64));
		printf("%s = %llu\n", k->name, (unsigned long long)u64);
		return;
	case CEEMS_KEY_UINT32:
		memcpy(&u32, field, sizeof(u32));
		printf("%s = %u\n", k->name, u32);
		return;
	case CEEMS_KEY_BOOL:
		memcpy(&b, field, sizeof(b));
		printf("%s = %s\n", k->name, b ? "yes" : "no");
		return;
	case CEEMS_KEY_WATTS:
		memcpy(&d, field, sizeof(d));
		print_watts(k->name, d);
		return;
	case CEEMS_KEY_REAL:
		memcpy(&d, field, sizeof(d));
		printf("%s = %g\n", k->name, d);
		return;
	default:	/* the text types */
		if (field[0] == '\0')
			printf("# %s is not set (%s)\n", k->name, k->help);
		else
			printf("%s = %.*s\n", k->name, (int)k->size, field);
		return;
	}
}

/* The agent's values of the keys outside ceems.conf (the plugin's and
 * the agent's own), for --check-config. */
struct cli_values {
	const char *config_path, *agent, *log;
	int timeout_ms;
};

/* A key outside ceems.conf, as a comment: the output stays a valid
 * configuration file. */
static void
print_other_key(const struct ceems_key *k, const struct cli_values *v)
{
	const char *value = k->default_value;
	const char *where = k->surfaces & CEEMS_KEY_IN_AGENT ?
	    "a ceems-agent option" : "a plugstack.conf argument";

	if (strcmp(k->name, "config") == 0)
		value = v->config_path;
	else if (strcmp(k->name, "agent") == 0)
		value = v->agent;
	else if (strcmp(k->name, "agent_log") == 0)
		value = v->log;
	if (strcmp(k->name, "timeout") == 0)
		printf("# %s = %d (%s)\n", k->name, v->timeout_ms, where);
	else if (value == NULL)
		printf("# %s = the installation's (%s)\n", k->name, where);
	else
		printf("# %s = %s (%s)\n", k->name, value, where);
}

/* The effective configuration, every key of the table (conf_keys.h),
 * in the file's own syntax: the output is itself a valid configuration
 * file, the keys that are not ceems.conf's as comments. */
static void
print_config(const struct ceems_config *c, const char *source,
	     const struct cli_values *v)
{
	const struct ceems_key *keys;
	size_t n;

	printf("# effective configuration (%s)\n", source);
	keys = ceems_conf_keys(&n);
	for (size_t i = 0; i < n; i++) {
		if (keys[i].surfaces & CEEMS_KEY_IN_CONF)
			print_conf_key(&keys[i], c);
		else
			print_other_key(&keys[i], v);
	}
}

/* The text the configuration was parsed from ("" for the defaults): the
 * agent hands it to its replay process (agent_replay.h). */
static char config_text[CEEMS_CONFIG_TEXT_MAX];

/* Load the configuration: PATH given explicitly must exist; the default
 * file may be missing (then the defaults apply).  Returns 0 or -1 after
 * printing why; *SOURCE says what was used. */
static int
load_config(struct ceems_config *config, const char *path, bool explicit_path,
	    const char *node, const char **source)
{
	char err[512];
	struct stat st;

	ceems_conf_defaults(config);
	config_text[0] = '\0';
	*source = path;
	if (!explicit_path && stat(path, &st) < 0 && errno == ENOENT) {
		*source = "defaults: no configuration file";
		return 0;
	}
	if (ceems_conf_load_text(config, path, config_text, sizeof(config_text),
				   err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-agent: %s\n", err);
		return -1;
	}
	/* Each of several slurmd on one host has its own agent (--node). */
	if (ceems_conf_expand_node(config, node, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-agent: %s: %s%s\n", path, err,
			node == NULL ? " (give --node NAME)" : "");
		return -1;
	}
	ceems_summary_notes_set_gpu_min_time(config->summary_gpu_min_ns);
	return 0;
}

/* Client mode: send REQUEST (or stdin for "-") and print the reply. */
static int
call(const char *socket_path, const char *request, int timeout_ms)
{
	static char in[CEEMS_AGENT_MSG_MAX + 2], reply[CEEMS_AGENT_MSG_MAX + 1];
	char err[256];
	size_t len;
	int n, r;

	if (strcmp(request, "-") == 0) {
		len = fread(in, 1, sizeof(in), stdin);
		if (ferror(stdin)) {
			fprintf(stderr, "ceems-agent: cannot read the request from stdin\n");
			return 2;
		}
	} else {
		len = strlen(request);
		if (len >= sizeof(in)) {
			fprintf(stderr, "ceems-agent: request larger than %d bytes\n",
				CEEMS_AGENT_MSG_MAX);
			return 2;
		}
		memcpy(in, request, len);
	}
	n = ceems_agent_client_call_buf(socket_path, in, len, timeout_ms, reply,
					sizeof(reply));
	if (n < 0) {
		fprintf(stderr, "ceems-agent: no reply from the agent at %s: %s\n",
			socket_path, strerror(-n));
		return 2;
	}
	printf("%s\n", reply);
	r = ceems_agent_proto_reply_decode(reply, (size_t)n, NULL, err, sizeof(err));
	if (r == -EPROTO) {
		fprintf(stderr, "ceems-agent: %s\n", err);
		return 2;
	}
	/* 1 is ok too: a register with a step that registered the job. */
	return r >= 0 ? 0 : 1;
}

/* The long options without a short form. */
enum {
	OPT_CHECK = 256, OPT_CALL, OPT_STATUS, OPT_SOCKET, OPT_TIMEOUT,
	OPT_INTERVAL, OPT_SUPERVISE, OPT_START, OPT_STOP, OPT_RESTART,
	OPT_AGENT, OPT_LOG, OPT_LOCK_FD, OPT_CHECK_PRIVILEGES, OPT_NODE
};

/* The command line. */
struct cli {
	const char *config_path, *request, *socket_path, *interval;
	const char *node;		/* --node: the paths' %n, NULL none */
	bool explicit_config, check;
	int timeout_ms, mode;		/* mode: an OPT_* of supervisor_mode */
	uint64_t interval_ns;
	struct agent_supervise_spec sv;
	/* The values of the table's options, once checked. */
	char socket_buf[CEEMS_CONFIG_PATH_MAX];
	char agent_buf[CEEMS_CONFIG_PATH_MAX], log_buf[CEEMS_CONFIG_PATH_MAX];
	char node_buf[CEEMS_NODE_NAME_MAX];
};

/* Check VALUE of the table's option NAME into OUT (SIZE bytes).  Returns
 * 0, or -1 after saying what is wrong: the option, the value, the range. */
static int
setting(const char *name, const char *value, void *out, size_t size)
{
	const struct ceems_key *k;
	char problem[160];

	k = ceems_conf_keys_find(name, strlen(name), CEEMS_KEY_IN_AGENT);
	if (k == NULL) {
		fprintf(stderr, "ceems-agent: --%s is not in the key table\n", name);
		return -1;
	}
	if (ceems_conf_keys_parse(k, value, out, size, problem, sizeof(problem)) < 0) {
		fprintf(stderr, "ceems-agent: --%s %s %s\n", name, value, problem);
		return -1;
	}
	return 0;
}

/* The table's option OPT (an OPT_*) with OPTARG into CLI.  0 or -1. */
static int
parse_setting(int opt, const char *optarg, struct cli *cli)
{
	uint32_t ms;

	switch (opt) {
	case OPT_SOCKET:
		if (setting("socket", optarg, cli->socket_buf,
			    sizeof(cli->socket_buf)) < 0)
			return -1;
		cli->socket_path = cli->socket_buf;
		return 0;
	case OPT_TIMEOUT:
		if (setting("timeout", optarg, &ms, sizeof(ms)) < 0)
			return -1;
		cli->timeout_ms = (int)ms;
		return 0;
	case OPT_INTERVAL:
		if (setting("interval", optarg, &cli->interval_ns,
			    sizeof(cli->interval_ns)) < 0)
			return -1;
		cli->interval = optarg;
		return 0;
	case OPT_AGENT:
		if (setting("agent", optarg, cli->agent_buf,
			    sizeof(cli->agent_buf)) < 0)
			return -1;
		cli->sv.agent = cli->agent_buf;
		return 0;
	case OPT_LOG:
		if (setting("log", optarg, cli->log_buf, sizeof(cli->log_buf)) < 0)
			return -1;
		cli->sv.log = cli->log_buf;
		return 0;
	case OPT_NODE:
		/* The table's NAME check, then the path-safe one (length). */
		if (setting("node", optarg, cli->node_buf, sizeof(cli->node_buf)) < 0)
			return -1;
		if (!ceems_conf_node_name_ok(cli->node_buf)) {
			fprintf(stderr, "ceems-agent: --node %s cannot go into a path\n",
				optarg);
			return -1;
		}
		cli->node = cli->node_buf;
		cli->sv.node = cli->node_buf;
		return 0;
	}
	return -1;
}

/* --supervise, --start, --stop, --restart (MODE: OPT_*). */
static int
supervisor_mode(int mode, const struct ceems_config *config,
		const char *config_path, struct agent_supervise_spec *sv)
{
	static char pid_path[PATH_MAX], config_abs[PATH_MAX];

	if (ceems_agent_launch_pid_path(config->state_dir, pid_path, sizeof(pid_path)) < 0) {
		fprintf(stderr, "ceems-agent: state_dir %s is too long\n",
			config->state_dir);
		return 1;
	}
	sv->pid_path = pid_path;
	if (mode == OPT_STOP)
		return agent_control_stop(pid_path, CONTROL_TIMEOUT_MS);
	if (mode == OPT_RESTART)
		return agent_control_restart(pid_path, CONTROL_TIMEOUT_MS);
	/* The supervisor runs from /, and execs the agent anew later.  An
	 * absolute path stays as given (the default file may be missing). */
	if (config_path[0] == '/')
		snprintf(config_abs, sizeof(config_abs), "%s", config_path);
	else if (realpath(config_path, config_abs) == NULL) {
		fprintf(stderr, "ceems-agent: %s: %s\n", config_path, strerror(errno));
		return 1;
	}
	sv->config = config_abs;
	if (sv->agent[0] != '/' || sv->log[0] != '/') {
		fprintf(stderr, "ceems-agent: --agent and --log take absolute paths\n");
		return 1;
	}
	if (mode == OPT_START)
		return agent_control_start(sv);
	log_name = CEEMS_SUPERVISOR_NAME;
	ceems_log_set_handler(log_to_stderr, NULL);
	ceems_log_set_level(level_from_name(config->log_level));
	return agent_supervise(sv);
}

/* Parse the command line into CLI.  Returns 0, 1 after printing the
 * help or the version (exit 0), -1 after saying what is wrong. */
static int
parse_args(int argc, char **argv, struct cli *cli)
{
	static const struct option options[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "call", required_argument, NULL, OPT_CALL },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "supervise", no_argument, NULL, OPT_SUPERVISE },
		{ "start", no_argument, NULL, OPT_START },
		{ "stop", no_argument, NULL, OPT_STOP },
		{ "restart", no_argument, NULL, OPT_RESTART },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "log", required_argument, NULL, OPT_LOG },
		{ "node", required_argument, NULL, OPT_NODE },
		{ "lock-fd", required_argument, NULL, OPT_LOCK_FD },
		{ "check-privileges", no_argument, NULL, OPT_CHECK_PRIVILEGES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "c:fhV", options, NULL)) != -1) {
		switch (opt) {
		case 'c':
			cli->config_path = optarg;
			cli->explicit_config = true;
			break;
		case 'f':
			break;
		case OPT_CHECK:
			cli->check = true;
			break;
		case OPT_CALL:
			cli->request = optarg;
			break;
		case OPT_STATUS:
			cli->request = "{\"op\":\"status\"}";
			break;
		case OPT_SOCKET:
		case OPT_TIMEOUT:
		case OPT_INTERVAL:
		case OPT_AGENT:
		case OPT_LOG:
		case OPT_NODE:
			if (parse_setting(opt, optarg, cli) < 0)
				return -1;
			break;
		case OPT_CHECK_PRIVILEGES:
		case OPT_SUPERVISE:
		case OPT_START:
		case OPT_STOP:
		case OPT_RESTART:
			cli->mode = opt;
			break;
		case OPT_LOCK_FD:
			cli->sv.lock_fd = atoi(optarg);
			if (cli->sv.lock_fd < 3) {
				fprintf(stderr, "ceems-agent: --lock-fd takes a descriptor above 2\n");
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("ceems-agent %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ceems-agent: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct ceems_config config;
	struct cli cli = {
		.config_path = CEEMS_DEFAULT_CONFIG_PATH,
		.sv = { .agent = CEEMS_AGENT_PATH, .log = CEEMS_AGENT_LOG,
			.lock_fd = -1 },
	};
	const char *source;
	uint64_t delay_ns;
	int r;

	/* The agent's replay process: internal, its own arguments. */
	if (argc >= 2 && strcmp(argv[1], "--replay") == 0) {
		ceems_log_set_handler(log_to_stderr, NULL);
		if (agent_replay_load(argc - 1, argv + 1, &config, &delay_ns) < 0)
			return 2;
		ceems_log_set_level(level_from_name(config.log_level));
		agent_replay_main(&config, delay_ns);
	}
	if ((r = parse_args(argc, argv, &cli)) != 0)
		return r > 0 ? 0 : 1;
	/* --timeout's default is the table's. */
	if (cli.timeout_ms == 0) {
		const struct ceems_key *k = ceems_conf_keys_find("timeout", 7,
							   CEEMS_KEY_IN_AGENT);
		uint32_t ms;

		if (setting("timeout", k->default_value, &ms, sizeof(ms)) < 0)
			return 2;
		cli.timeout_ms = (int)ms;
	}
	if (cli.request != NULL) {
		if (cli.socket_path == NULL) {
			if (load_config(&config, cli.config_path, cli.explicit_config,
					cli.node, &source) < 0)
				return 2;
			cli.socket_path = config.socket_path;
		}
		return call(cli.socket_path, cli.request, cli.timeout_ms);
	}

	if (load_config(&config, cli.config_path, cli.explicit_config, cli.node,
			&source) < 0)
		return 1;
	if (cli.mode == OPT_CHECK_PRIVILEGES) {
		ceems_log_set_handler(log_to_stderr, NULL);
		return agent_privcheck_run(&config);
	}
	if (cli.mode != 0) {
		cli.sv.interval = cli.interval;
		return supervisor_mode(cli.mode, &config, cli.config_path, &cli.sv);
	}
	/* The plugstack.conf interval= of the slurmd-side plugin. */
	if (cli.interval_ns != 0)
		config.interval_ns = cli.interval_ns;
	if (cli.check) {
		struct cli_values v = { cli.config_path, cli.sv.agent,
					cli.sv.log, cli.timeout_ms };

		print_config(&config, source, &v);
		return 0;
	}

	ceems_log_set_handler(log_to_stderr, NULL);
	ceems_log_set_level(level_from_name(config.log_level));
	umask(022);
	ceems_info("ceems-agent %s starting (configuration: %s)", PACKAGE_VERSION,
		   source);
	agent_caps_raise_nofile();
	/* The eBPF programs need CAP_BPF and CAP_PERFMON to load: loaded
	 * now, before the capabilities go (lib/sources/bpf_io.h). */
	ceems_agent_bpf_io_preload(&config);
	if (agent_caps_restrict(&config) < 0)
		return 1;
	return agent_server_run(&config, config_text);
}
