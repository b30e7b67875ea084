/* report_main.c - the command line of `ceems-admin report`:
 *
 *   report user|account|triage|nodes|alert [--from T] [--to T] [--only NAME]
 *          [--send --domain D --sender ADDR [--sendmail PATH] |
 *           --out DIR] [--admin-to ADDR] [--limit N] [--html]
 *   report optout|optin USER
 *
 * Without --send or --out a report is only printed (a preview): nothing
 * is mailed or recorded. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fetch.h"
#include "report_main.h"
#include "report_send.h"

#define DEFAULT_SENDMAIL "/usr/sbin/sendmail"

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: ceems-admin [-c CONF] [-d CONNINFO] report user|account|triage|nodes|alert\n"
		"           [--from TIME] [--to TIME] [--only NAME] [--html]\n"
		"           [--send --domain DOMAIN --sender ADDRESS [--sendmail PATH] | --out DIR]\n"
		"           [--admin-to ADDRESS] [--limit N]\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] report optout|optin USER\n");
}

static int
opt_out(PGconn *conn, const char *what, const char *user)
{
	static const char *out_sql =
		"INSERT INTO ceems.report_optout (user_name) VALUES ($1) ON CONFLICT DO NOTHING";
	static const char *in_sql = "DELETE FROM ceems.report_optout WHERE user_name = $1";
	const char *params[1] = { user };
	char err[512];

	if (report_fetch_exec(conn, strcmp(what, "optout") == 0 ? out_sql : in_sql, 1, params,
			      err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: report %s %s: %s", what, user, err);
		return 1;
	}
	printf("%s %s\n", user, strcmp(what, "optout") == 0 ?
	       "receives no digest from now on" : "receives digests again");
	return 0;
}

static int
kind_of(const char *s)
{
	static const char *const kinds[] = { "user", "account", "triage", "nodes", "alert" };

	for (int i = 0; i < 5; i++)
		if (strcmp(s, kinds[i]) == 0)
			return i;
	return -1;
}

/* The run's options; 2 on a usage error, else 0. */
static int
parse(int argc, char **argv, struct report_run *run, const char **from,
      const char **to)
{
	static const struct option longopts[] = {
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' },
		{ "send", no_argument, NULL, 'S' },
		{ "out", required_argument, NULL, 'O' },
		{ "domain", required_argument, NULL, 'D' },
		{ "sender", required_argument, NULL, 'F' },
		{ "sendmail", required_argument, NULL, 'M' },
		{ "admin-to", required_argument, NULL, 'A' },
		{ "limit", required_argument, NULL, 'L' },
		{ "html", no_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			*from = optarg;
			break;
		case 't':
			*to = optarg;
			break;
		case 'o':
			run->only = optarg;
			break;
		case 'S':
			run->mode = REPORT_MAIL;
			break;
		case 'O':
			run->mode = REPORT_FILES;
			run->out_dir = optarg;
			break;
		case 'D':
			run->domain = optarg;
			break;
		case 'F':
			run->sender = optarg;
			break;
		case 'M':
			run->sendmail = optarg;
			break;
		case 'A':
			run->admin_to = optarg;
			break;
		case 'L':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' || v < 1 || v > 100000) {
				fprintf(stderr, "ceems-admin: report --limit wants 1 to 100000\n");
				return 2;
			}
			run->limit = (size_t)v;
			break;
		case 'H':
			run->html = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return 0;
}

/* What a mailed or filed run needs, said before anything is read. */
static int
check_run(const struct report_run *run)
{
	int people = run->kind != REPORT_KIND_TRIAGE && run->kind != REPORT_KIND_NODES;

	if (run->mode == REPORT_PREVIEW)
		return 0;
	if (run->sender == NULL) {
		fprintf(stderr, "ceems-admin: report --send and --out need --sender ADDRESS (the From: of the mail)\n");
		return 2;
	}
	if (people && run->domain == NULL) {
		fprintf(stderr, "ceems-admin: report --send and --out need --domain DOMAIN (mail goes to USER@DOMAIN)\n");
		return 2;
	}
	if (!people && run->admin_to == NULL) {
		fprintf(stderr, "ceems-admin: report triage and nodes need --admin-to ADDRESS to send\n");
		return 2;
	}
	return 0;
}

int
report_main(int argc, char **argv, PGconn *(*connect)(const void *arg), const void *arg)
{
	struct report_run run = { .sendmail = DEFAULT_SENDMAIL, .limit = 50 };
	char from[64], to[64], err[512];
	const char *from_arg = NULL, *to_arg = NULL;
	PGconn *conn;
	int kind, r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "optout") == 0 || strcmp(argv[1], "optin") == 0) {
		if (argc != 3) {
			usage(stderr);
			return 2;
		}
		if ((conn = connect(arg)) == NULL)
			return 1;
		r = opt_out(conn, argv[1], argv[2]);
		PQfinish(conn);
		return r;
	}
	if ((kind = kind_of(argv[1])) < 0) {
		usage(stderr);
		return 2;
	}
	run.kind = (enum report_kind)kind;
	if ((r = parse(argc - 1, argv + 1, &run, &from_arg, &to_arg)) != 0 ||
	    (r = check_run(&run)) != 0)
		return r;
	if ((conn = connect(arg)) == NULL)
		return 1;
	if (report_fetch_period(conn, from_arg, to_arg, run.kind == REPORT_KIND_ALERT,
				from, to, sizeof(from), err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: report: %s\n", err);
		PQfinish(conn);
		return 2;
	}
	run.from = from;
	run.to = to;
	r = report_send_run(conn, &run);
	if (run.mode != REPORT_PREVIEW)
		printf("%d sent, %d sent already, %d failed\n", run.sent, run.skipped, run.failed);
	PQfinish(conn);
	return r < 0 ? 1 : 0;
}
