/* ceems-admin.c - the administrator's tool for the ceems database:
 *
 *   ceems-admin [-c CONF] [-d CONNINFO] [--sql-dir DIR] db init|migrate|status
 *   ceems-admin [-c CONF] [-d CONNINFO] factors load FILE.csv
 *   ceems-admin [-c CONF] [-d CONNINFO] factors export --zone Z
 *               [--hours-back N] [--hours-ahead N] FILE
 *   ceems-admin [-c CONF] [-d CONNINFO] factors import FILE --zone Z
 *               [--format auto|electricitymaps|entsoe|rte|ceems]
 *   ceems-admin [-c CONF] [-d CONNINFO] report ...  (tools/report/)
 *
 * The database is -d (a libpq connection string, URI or "service=NAME"),
 * else the `database` key of ceems.conf, so that TLS, passwords and peer
 * authentication stay the admin's choice (libpq's environment, service
 * and password files apply).  Manual: ceems-admin(8). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "admin_export.h"
#include "admin_factors.h"
#include "admin_import.h"
#include "admin_migrate.h"
#include "base/conf.h"
#include "report/report_main.h"

#ifndef CEEMS_PKGDATADIR
#define CEEMS_PKGDATADIR "/usr/share/ceems"
#endif
#define DEFAULT_SQL_DIR CEEMS_PKGDATADIR "/sql/migrations"
#define FACTORS_FILE_MAX (64 * 1024 * 1024)

struct options {
	const char *config_path;
	const char *conninfo;
	const char *sql_dir;
	int target;
	int verbose;
	const char *zone;	/* factors export */
	int hours_back, hours_ahead;
	int format;		/* factors import: enum admin_import_format */
};

static void
usage(FILE *out)
{
	fprintf(out,
		"usage: ceems-admin [-c CONF] [-d CONNINFO] [--sql-dir DIR] [-v] db init|migrate|status\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] [-v] db migrate --to N\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] db cluster\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] factors load FILE.csv\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] factors export --zone Z [--hours-back N] [--hours-ahead N] FILE\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] factors import FILE --zone Z [--format auto|electricitymaps|entsoe|rte|ceems]\n"
		"       ceems-admin [-c CONF] [-d CONNINFO] report user|account|triage|nodes|optout|optin ...\n");
}

static void
quiet_notices(void *arg, const char *message)
{
	const int *verbose = arg;

	if (*verbose)
		fputs(message, stderr);
}

/* The connection string: -d, else the configuration's database key. */
static int
conninfo(const struct options *o, char *buf, size_t size)
{
	struct ceems_config config;
	char err[512];
	const char *path = o->config_path;

	if (o->conninfo != NULL) {
		snprintf(buf, size, "%s", o->conninfo);
		return 0;
	}
	ceems_conf_defaults(&config);
	if (path == NULL) {
		path = CEEMS_DEFAULT_CONFIG_PATH;
		if (access(path, F_OK) < 0) {
			fprintf(stderr, "ceems-admin: no -d CONNINFO and no %s\n", path);
			return -1;
		}
	}
	if (ceems_conf_load(&config, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: %s\n", err);
		return -1;
	}
	if (config.database[0] == '\0') {
		fprintf(stderr, "ceems-admin: %s sets no database; give -d CONNINFO\n", path);
		return -1;
	}
	snprintf(buf, size, "%s", config.database);
	return 0;
}

static PGconn *
connect_db(const struct options *o)
{
	static int verbose;
	const char *keys[] = { "dbname", "application_name", NULL };
	const char *values[3];
	char info[CEEMS_CONFIG_STRING_MAX + 64];
	PGconn *conn;

	if (conninfo(o, info, sizeof(info)) < 0)
		return NULL;
	values[0] = info;
	values[1] = "ceems-admin";
	values[2] = NULL;
	conn = PQconnectdbParams(keys, values, 1);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK) {
		fprintf(stderr, "ceems-admin: cannot connect to the database: %s",
			conn != NULL ? PQerrorMessage(conn) : "out of memory\n");
		PQfinish(conn);
		return NULL;
	}
	verbose = o->verbose;
	PQsetNoticeProcessor(conn, quiet_notices, &verbose);
	return conn;
}

static PGconn *
connect_for_report(const void *arg)
{
	return connect_db(arg);
}

/* The position of a "report" word after the global options, or 0: the
 * report's own options follow it and are its own to parse. */
static int
report_word(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "-d") == 0 ||
		    strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "--dbname") == 0 ||
		    strcmp(argv[i], "--sql-dir") == 0) {
			i++;
			continue;
		}
		if (argv[i][0] == '-')
			continue;
		return strcmp(argv[i], "report") == 0 ? i : 0;
	}
	return 0;
}

/* Rewrite ceems.jobs in the order of (user_name, start_time), so that a
 * user's month of jobs lies on a few hundred pages rather than one page
 * a job (doc/performance.md, "Storage").  CLUSTER locks the table for
 * the whole rewrite: writers' statements time out and their records
 * wait in the nodes' spools, readers wait.  The lock is taken first, in
 * a transaction of its own: it gives up if it cannot have the lock
 * within 10 s rather than queue every other session behind it, and a
 * failure leaves the table as it was.  Rows added later are not in that
 * order until the next run: a monthly job for a quiet hour.  (Month by
 * month, each month in user order, was tried: no faster for users, no
 * faster for time ranges, and the rewrite took twice as long.) */
static int
cmd_db_cluster(const struct options *o)
{
	static const char *const steps[] = {
		"SET lock_timeout = '10s'",
		"SET maintenance_work_mem = '1GB'",
		"BEGIN",
		"LOCK TABLE ceems.jobs IN ACCESS EXCLUSIVE MODE",
		"CLUSTER ceems.jobs USING jobs_user_start",
		"COMMIT",
		"ANALYZE ceems.jobs",
		NULL
	};
	struct timespec t0, t1;
	PGconn *conn;
	PGresult *res;

	if ((conn = connect_db(o)) == NULL)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; steps[i] != NULL; i++) {
		res = PQexec(conn, steps[i]);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			fprintf(stderr, "ceems-admin: db cluster: %s: %s", steps[i],
				PQresultErrorMessage(res));
			PQclear(res);
			PQfinish(conn);
			return 1;
		}
		PQclear(res);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res = PQexec(conn, "SELECT pg_size_pretty(pg_table_size('ceems.jobs'))");
	printf("ceems.jobs rewritten in the order of jobs_user_start in %.1f s (%s)\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
	       PQresultStatus(res) == PGRES_TUPLES_OK ? PQgetvalue(res, 0, 0) : "?");
	PQclear(res);
	PQfinish(conn);
	return 0;
}

static int
cmd_db(const struct options *o, const char *what)
{
	static struct admin_migrations m;
	char err[1024];
	PGconn *conn;
	int r, version;

	if (strcmp(what, "cluster") == 0)
		return cmd_db_cluster(o);
	if (strcmp(what, "init") != 0 && strcmp(what, "migrate") != 0 &&
	    strcmp(what, "status") != 0) {
		usage(stderr);
		return 2;
	}
	if (admin_migrate_scan(o->sql_dir, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: %s\n", err);
		return 1;
	}
	if ((conn = connect_db(o)) == NULL)
		return 1;
	if (strcmp(what, "status") == 0) {
		r = admin_migrate_status(conn, &m, err, sizeof(err));
		if (r < 0)
			fprintf(stderr, "ceems-admin: %s\n", err);
		PQfinish(conn);
		return r < 0 ? 1 : 0;
	}
	/* init is migrate from nothing; on an existing schema it says so. */
	if (strcmp(what, "init") == 0) {
		if (admin_migrate_schema_version(conn, &version, err, sizeof(err)) < 0) {
			fprintf(stderr, "ceems-admin: %s\n", err);
			PQfinish(conn);
			return 1;
		}
		if (version > 0)
			printf("already initialised (schema version %d); migrating\n", version);
	}
	r = admin_migrate(conn, &m, o->target, o->verbose, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "ceems-admin: %s\n", err);
		PQfinish(conn);
		return 1;
	}
	if (admin_migrate_schema_version(conn, &version, err, sizeof(err)) < 0) {
		fprintf(stderr, "ceems-admin: %s\n", err);
		PQfinish(conn);
		return 1;
	}
	printf("schema version %d (%d migration%s applied)\n", version, r,
	       r == 1 ? "" : "s");
	PQfinish(conn);
	return 0;
}

static char *
read_file(const char *path, size_t *len)
{
	struct stat st;
	char *text;
	FILE *f;

	if ((f = fopen(path, "re")) == NULL) {
		fprintf(stderr, "ceems-admin: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > FACTORS_FILE_MAX) {
		fprintf(stderr, "ceems-admin: %s: not a regular file of at most %d bytes\n",
			path, FACTORS_FILE_MAX);
		fclose(f);
		return NULL;
	}
	if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(f);
		return NULL;
	}
	*len = fread(text, 1, (size_t)st.st_size, f);
	if (ferror(f)) {
		fprintf(stderr, "ceems-admin: %s: read error\n", path);
		free(text);
		fclose(f);
		return NULL;
	}
	fclose(f);
	return text;
}

/* Every row or none: one transaction; a row of the same zone and start
 * replaces the stored one, so loading a file twice changes nothing. */
static int
load_factors(PGconn *conn, const char *path, const struct admin_factor *rows,
	     size_t n)
{
	static const char *sql =
		"INSERT INTO ceems.emission_factors AS f "
		"(zone, valid_from, valid_to, g_per_kwh, source) "
		"SELECT $1, v.valid_from, v.valid_to, $5::double precision, $6 FROM "
		"(SELECT CASE WHEN $2::text <> '' THEN make_timestamptz(nullif($2::text, '')::integer, 1, 1, 0, 0, 0, 'UTC') "
		"             ELSE nullif($3::text, '')::timestamptz END AS valid_from, "
		"        CASE WHEN $2::text <> '' THEN make_timestamptz(nullif($2::text, '')::integer + 1, 1, 1, 0, 0, 0, 'UTC') "
		"             ELSE nullif($4::text, '')::timestamptz END AS valid_to) v "
		"ON CONFLICT (zone, valid_from) DO UPDATE SET valid_to = EXCLUDED.valid_to, "
		"g_per_kwh = EXCLUDED.g_per_kwh, source = EXCLUDED.source, loaded_at = now() "
		"WHERE (f.valid_to, f.g_per_kwh, f.source) IS DISTINCT FROM "
		"(EXCLUDED.valid_to, EXCLUDED.g_per_kwh, EXCLUDED.source)";
	PGresult *res = PQexec(conn, "BEGIN");
	int ok = PQresultStatus(res) == PGRES_COMMAND_OK;

	PQclear(res);
	for (size_t i = 0; ok && i < n; i++) {
		const struct admin_factor *r = &rows[i];
		char year[16], g[64];
		const char *params[6];

		snprintf(year, sizeof(year), "%d", r->year);
		snprintf(g, sizeof(g), "%.17g", r->g_per_kwh);
		params[0] = r->zone;
		params[1] = r->year != 0 ? year : "";
		params[2] = r->valid_from;
		params[3] = r->valid_to;
		params[4] = g;
		params[5] = r->source;
		res = PQexecParams(conn, sql, 6, NULL, params, NULL, NULL, 0);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			fprintf(stderr, "ceems-admin: %s: line %u: %s", path, r->line,
				PQresultErrorMessage(res));
			ok = 0;
		}
		PQclear(res);
	}
	res = PQexec(conn, ok ? "COMMIT" : "ROLLBACK");
	if (ok && PQresultStatus(res) != PGRES_COMMAND_OK) {
		fprintf(stderr, "ceems-admin: %s: commit: %s", path, PQresultErrorMessage(res));
		ok = 0;
	}
	PQclear(res);
	return ok ? 0 : -1;
}

static int
cmd_export(const struct options *o, const char *path)
{
	PGconn *conn;
	int r;

	if (o->zone == NULL) {
		fprintf(stderr, "ceems-admin: factors export needs --zone (the node's zone, as in ceems.conf)\n");
		return 2;
	}
	if ((conn = connect_db(o)) == NULL)
		return 1;
	r = admin_export_factors(conn, o->zone, o->hours_back, o->hours_ahead,
				 path);
	PQfinish(conn);
	return r < 0 ? 1 : 0;
}

static int
cmd_import(const struct options *o, const char *path)
{
	enum admin_import_format used;
	struct admin_factor *rows;
	char err[512];
	size_t len, n;
	PGconn *conn;
	char *text;
	int r;

	if ((text = read_file(path, &len)) == NULL)
		return 1;
	r = admin_import_parse(text, len, o->zone, o->format, &used, &rows, &n,
			       err, sizeof(err));
	free(text);
	if (r < 0) {
		fprintf(stderr, "ceems-admin: %s: %s: nothing imported\n", path, err);
		return 1;
	}
	if ((conn = connect_db(o)) == NULL) {
		free(rows);
		return 1;
	}
	r = load_factors(conn, path, rows, n);
	if (r == 0)
		printf("imported %zu interval%s (%s) from %s\n", n,
		       n == 1 ? "" : "s", admin_import_format_name(used), path);
	free(rows);
	PQfinish(conn);
	return r < 0 ? 1 : 0;
}

/* A whole number of hours from 0 to a year, or -1. */
static int
parse_hours(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 8784)
		return -1;
	return (int)v;
}

static int
cmd_factors(const struct options *o, int argc, char **argv)
{
	struct admin_factor *rows;
	char err[512];
	size_t len, n;
	PGconn *conn;
	char *text;
	int r;

	if (argc == 2 && strcmp(argv[0], "export") == 0)
		return cmd_export(o, argv[1]);
	if (argc == 2 && strcmp(argv[0], "import") == 0)
		return cmd_import(o, argv[1]);
	if (argc != 2 || strcmp(argv[0], "load") != 0) {
		usage(stderr);
		return 2;
	}
	if ((text = read_file(argv[1], &len)) == NULL)
		return 1;
	r = admin_factors_parse(text, len, &rows, &n, err, sizeof(err));
	free(text);
	if (r < 0) {
		fprintf(stderr, "ceems-admin: %s: %s\n", argv[1], err);
		return 1;
	}
	if ((conn = connect_db(o)) == NULL) {
		free(rows);
		return 1;
	}
	r = load_factors(conn, argv[1], rows, n);
	if (r == 0)
		printf("loaded %zu emission factor%s from %s\n", n, n == 1 ? "" : "s",
		       argv[1]);
	free(rows);
	PQfinish(conn);
	return r < 0 ? 1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "dbname", required_argument, NULL, 'd' },
		{ "sql-dir", required_argument, NULL, 's' },
		{ "to", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "zone", required_argument, NULL, 'z' },
		{ "hours-back", required_argument, NULL, 'B' },
		{ "hours-ahead", required_argument, NULL, 'A' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct options o = { .sql_dir = DEFAULT_SQL_DIR, .hours_back = 48,
			     .hours_ahead = 48 };
	int report_at = report_word(argc, argv), all_argc = argc;
	char *end;
	int c;

	/* Only the global options before "report" are ceems-admin's. */
	if (report_at > 0)
		argc = report_at;
	while ((c = getopt_long(argc, argv, "c:d:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o.config_path = optarg;
			break;
		case 'd':
			o.conninfo = optarg;
			break;
		case 's':
			o.sql_dir = optarg;
			break;
		case 't':
			errno = 0;
			o.target = (int)strtol(optarg, &end, 10);
			if (errno != 0 || end == optarg || *end != '\0' ||
			    o.target < 1 || o.target > ADMIN_MIGRATIONS_MAX) {
				fprintf(stderr, "ceems-admin: --to wants a migration number\n");
				return 2;
			}
			break;
		case 'v':
			o.verbose = 1;
			break;
		case 'z':
			o.zone = optarg;
			break;
		case 'F':
			o.format = admin_import_format_from_name(optarg);
			if (o.format < 0) {
				fprintf(stderr, "ceems-admin: --format %s: auto, electricitymaps, entsoe, rte or ceems\n",
					optarg);
				return 2;
			}
			break;
		case 'B':
		case 'A':
			if (parse_hours(optarg) < 0) {
				fprintf(stderr, "ceems-admin: --hours-%s wants a number of hours from 0 to 8784\n",
					c == 'B' ? "back" : "ahead");
				return 2;
			}
			*(c == 'B' ? &o.hours_back : &o.hours_ahead) = parse_hours(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (report_at > 0) {
		if (optind != report_at) {
			usage(stderr);
			return 2;
		}
		return report_main(all_argc - report_at, argv + report_at,
				   connect_for_report, &o);
	}
	argc -= optind;
	argv += optind;
	if (argc == 2 && strcmp(argv[0], "db") == 0)
		return cmd_db(&o, argv[1]);
	if (argc >= 1 && strcmp(argv[0], "factors") == 0)
		return cmd_factors(&o, argc - 1, argv + 1);
	usage(stderr);
	return 2;
}
