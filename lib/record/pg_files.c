/* pg_files.c - the files libpq may read for a connection string.
 *
 * Why: the node agent confines itself with Landlock before its replay
 * child connects to PostgreSQL, so every file libpq opens then must have
 * been allowed by name.  libpq reads, as the agent's uid (root):
 *   - the password file: passfile, or $PGPASSFILE, or ~/.pgpass;
 *   - the service files, when a service is named: $PGSERVICEFILE or
 *     ~/.pg_service.conf, then $PGSYSCONFDIR/pg_service.conf or the one
 *     of the directory libpq was built with (Debian's
 *     /etc/postgresql-common, the PGDG packages' /etc/sysconfig/pgsql);
 *   - the TLS files: sslcert, sslkey, sslrootcert, sslcrl, sslcrldir,
 *     by default under ~/.postgresql.
 * "~" is $HOME when set, else the password database's home: the agent
 * runs with PATH alone in its environment, so root's /root.
 * The values of the service entry are libpq's own reading of it:
 * PQconndefaults with PGSERVICE set to the entry fills in exactly what
 * a connection would get from it (and from the PG* environment),
 * without connecting. */
#include "config.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record/pg_files.h"
#include "record/pg_lib.h"

int
ceems_pg_files_home(char *buf, size_t size)
{
	const char *home = getenv("HOME");
	struct passwd *pw;
	int n;

	if (home == NULL || home[0] == '\0') {
		pw = getpwuid(geteuid());
		if (pw == NULL || pw->pw_dir == NULL || pw->pw_dir[0] == '\0')
			return -ENOENT;
		home = pw->pw_dir;
	}
	n = snprintf(buf, size, "%s", home);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

#ifdef HAVE_LIBPQ

/* The keywords whose value is a file (or, sslcrldir, a directory). */
static const char *const file_keywords[] = {
	"passfile", "sslcert", "sslkey", "sslrootcert", "sslcrl", "sslcrldir",
};

/* Where libpq may look for the system service file when $PGSYSCONFDIR
 * is not set: the directory it was built with, by distribution. */
static const char *const system_service_files[] = {
	"/etc/postgresql-common/pg_service.conf",
	"/etc/sysconfig/pgsql/pg_service.conf",
	"/etc/pgsql/pg_service.conf",
	"/etc/pg_service.conf",
};

static void
add_joined(ceems_pg_file_fn add, void *arg, const char *dir,
	   const char *name, bool is_dir)
{
	char path[4096];

	if (dir != NULL && dir[0] != '\0' &&
	    snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
		add(path, is_dir, arg);
}

/* The file keywords of OPTIONS that have a value.  sslrootcert=system
 * (the system's TLS roots, under /etc/ssl) and a key held by an OpenSSL
 * engine ("engine:key") name no file. */
static void
add_options(const PQconninfoOption *options, ceems_pg_file_fn add, void *arg)
{
	for (const PQconninfoOption *o = options; o->keyword != NULL; o++) {
		for (size_t i = 0; i < sizeof(file_keywords) / sizeof(file_keywords[0]); i++) {
			if (strcmp(o->keyword, file_keywords[i]) != 0 ||
			    o->val == NULL || o->val[0] == '\0')
				continue;
			if (strcmp(o->keyword, "sslrootcert") == 0 &&
			    strcmp(o->val, "system") == 0)
				continue;
			if (strcmp(o->keyword, "sslkey") == 0 &&
			    strchr(o->val, ':') != NULL && o->val[0] != '/')
				continue;
			add(o->val, strcmp(o->keyword, "sslcrldir") == 0, arg);
		}
	}
}

/* What libpq fills in for SERVICE (and the PG* environment), by its own
 * reading of the service files: PGSERVICE set for the call only. */
static void
add_service(const struct ceems_pg_lib *pq, const char *service,
	    ceems_pg_file_fn add, void *arg)
{
	const char *old = getenv("PGSERVICE");
	char *saved = old != NULL ? strdup(old) : NULL;
	PQconninfoOption *defaults;

	if (service != NULL && setenv("PGSERVICE", service, 1) < 0) {
		free(saved);
		return;
	}
	defaults = pq->conndefaults();
	if (saved != NULL)
		(void)setenv("PGSERVICE", saved, 1);
	else if (service != NULL)
		(void)unsetenv("PGSERVICE");
	free(saved);
	if (defaults == NULL)
		return;
	add_options(defaults, add, arg);
	pq->conninfoFree(defaults);
}

int
ceems_pg_files(const char *conninfo, const char *home,
	       ceems_pg_file_fn add, void *arg, char *err, size_t err_size)
{
	const struct ceems_pg_lib *pq;
	PQconninfoOption *options;
	const char *service = NULL, *env;
	char *why = NULL;
	int r;

	r = ceems_pg_lib_load(&pq, err, err_size);
	if (r < 0)
		return r;
	options = pq->conninfoParse(conninfo, &why);
	if (options == NULL) {
		snprintf(err, err_size, "the database connection string does not parse: %s",
			 why != NULL ? why : "out of memory");
		pq->freemem(why);
		return -EINVAL;
	}
	add_joined(add, arg, home, ".pgpass", false);
	add_joined(add, arg, home, ".pg_service.conf", false);
	add_joined(add, arg, home, ".postgresql", true);
	if ((env = getenv("PGPASSFILE")) != NULL && env[0] != '\0')
		add(env, false, arg);
	if ((env = getenv("PGSERVICEFILE")) != NULL && env[0] != '\0')
		add(env, false, arg);
	add_joined(add, arg, getenv("PGSYSCONFDIR"), "pg_service.conf", false);
	for (size_t i = 0; i < sizeof(system_service_files) /
	     sizeof(system_service_files[0]); i++)
		add(system_service_files[i], false, arg);
	add_options(options, add, arg);
	for (const PQconninfoOption *o = options; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "service") == 0 && o->val != NULL &&
		    o->val[0] != '\0')
			service = o->val;
	add_service(pq, service, add, arg);
	pq->conninfoFree(options);
	return 0;
}

#else

int
ceems_pg_files(const char *conninfo, const char *home,
	       ceems_pg_file_fn add, void *arg, char *err, size_t err_size)
{
	(void)conninfo;
	(void)home;
	(void)add;
	(void)arg;
	snprintf(err, err_size, "this ceems was built without PostgreSQL (--without-pq)");
	return -ENOTSUP;
}

#endif
