/* test_agent_confine.c - tools/agent/agent_confine.c and lib/record/pg_files.c:
 * the
 * files libpq may read for a connection string (its service entry's
 * included) are listed, in a child process too (this one then maps no
 * libpq), and a process confined with Landlock can read
 * them, and only them, in the database user's home, and still load
 * libpq (as the replay process does); a note_dir outside
 * spool_dir, and a spool_dir missing at start, stay readable and
 * writable.  Each confinement runs in a
 * child: Landlock cannot be undone. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <ftw.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_confine.h"
#include "base/conf.h"
#include "base/log.h"
#include "record/pg_files.h"
#include "record/pg_lib.h"
#include "../tap.h"

static char dir[] = "/tmp/ceems-test-confine.XXXXXX";

static void
path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static void
make_file(const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	path_of(path, sizeof(path), name);
	f = fopen(path, "w");
	if (f == NULL) {
		printf("Bail out! cannot create %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static void
make_dir(const char *name)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), name);
	(void)mkdir(path, 0700);
}

struct listed {
	char paths[32][PATH_MAX];
	bool is_dir[32];
	int n;
};

static void
collect(const char *path, bool is_dir, void *arg)
{
	struct listed *l = arg;

	if (l->n < 32) {
		snprintf(l->paths[l->n], PATH_MAX, "%s", path);
		l->is_dir[l->n++] = is_dir;
	}
}

static bool
listed(const struct listed *l, const char *name, bool is_dir)
{
	char path[PATH_MAX];

	path_of(path, sizeof(path), name);
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->paths[i], path) == 0 && l->is_dir[i] == is_dir)
			return true;
	return false;
}

/* The connection string used below: a service entry in root's (here the
 * test's) ~/.pg_service.conf, a password file and a CA it names, and a
 * key the string itself names. */
static void
connection(char *buf, size_t size)
{
	char key[PATH_MAX];

	path_of(key, sizeof(key), "keys/client.key");
	snprintf(buf, size, "service=ceemsdb sslkey=%s", key);
}

static void
test_files(void)
{
	static struct listed l;
	char conninfo[PATH_MAX * 2], home[PATH_MAX], err[512];

	connection(conninfo, sizeof(conninfo));
	path_of(home, sizeof(home), "home");
	is_int(ceems_pg_files(conninfo, home, collect, &l, err, sizeof(err)), 0,
	       "conninfo parsed");
	ok(listed(&l, "home/.pgpass", false), "~/.pgpass listed");
	ok(listed(&l, "home/.pg_service.conf", false), "~/.pg_service.conf listed");
	ok(listed(&l, "home/.postgresql", true), "~/.postgresql/ listed");
	ok(listed(&l, "keys/client.key", false), "the conninfo's sslkey listed");
	ok(listed(&l, "creds/ceems.pass", false), "the service entry's passfile listed");
	ok(listed(&l, "certs/ca.crt", false), "the service entry's sslrootcert listed");
	ok(!listed(&l, "home/other", false), "nothing else of the home listed");
	is_int(ceems_pg_files("host='unterminated", home, collect, &l, err,
			      sizeof(err)), -EINVAL,
	       "a conninfo that does not parse is refused");
}

/* Whether this process maps a file whose name has NAME in it. */
static bool
maps_library(const char *name)
{
	char line[PATH_MAX + 128];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return false;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

/* What ceems_pg_files_apart hands out: the files, and the libraries
 * libpq brought (their number, and whether libpq's own is one). */
struct apart {
	struct listed files;
	int libraries;
	bool libpq;
};

static void
collect_apart_file(const char *path, bool is_dir, void *arg)
{
	collect(path, is_dir, &((struct apart *)arg)->files);
}

static void
collect_apart_library(const char *path, bool is_dir, void *arg)
{
	struct apart *a = arg;
	const char *base = strrchr(path, '/');

	(void)is_dir;
	a->libraries++;
	if (base != NULL && strncmp(base + 1, "libpq.so", 8) == 0)
		a->libpq = true;
}

/* The same files found by a child process, with the libraries libpq
 * brought, and this process left without libpq. */
static void
test_files_apart(void)
{
	static struct apart a;
	char conninfo[PATH_MAX * 2], home[PATH_MAX], err[512];
	const char *homes[1] = { home };

	connection(conninfo, sizeof(conninfo));
	path_of(home, sizeof(home), "home");
	ok(!maps_library("/libpq.so"), "libpq is not mapped before");
	is_int(ceems_pg_files_apart(conninfo, homes, 1, collect_apart_file,
				    collect_apart_library, &a, err, sizeof(err)),
	       0, "listed apart");
	ok(listed(&a.files, "home/.pgpass", false), "apart: ~/.pgpass listed");
	ok(listed(&a.files, "home/.postgresql", true), "apart: ~/.postgresql/ listed");
	ok(listed(&a.files, "keys/client.key", false), "apart: the conninfo's sslkey listed");
	ok(listed(&a.files, "creds/ceems.pass", false),
	   "apart: the service entry's passfile listed");
	ok(a.libpq, "apart: libpq's own file among the %d libraries listed", a.libraries);
	ok(!maps_library("/libpq.so"), "libpq is still not mapped in this process");
	memset(&a, 0, sizeof(a));
	is_int(ceems_pg_files_apart("host='unterminated", homes, 1,
				    collect_apart_file, collect_apart_library,
				    &a, err, sizeof(err)),
	       -EINVAL, "apart: a conninfo that does not parse is refused");
	ok(a.files.n == 0 && a.libraries == 0, "apart: nothing listed then");
	ok(strstr(err, "does not parse") != NULL, "apart: the child's reason given: %s", err);
}

/* Open NAME (under the test directory) with FLAGS: 0 or errno. */
static int
try_open(const char *name, int flags)
{
	char path[PATH_MAX];
	int fd;

	path_of(path, sizeof(path), name);
	fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	if ((flags & O_CREAT) != 0)
		(void)unlink(path);
	return 0;
}

/* The spool and, with note_dir unset, the note folder in it, made with
 * the modes the plugin's note writer and the replay expect. */
static void
test_made_dirs(void)
{
	static struct ceems_config config;
	char path[PATH_MAX];
	struct stat st;

	ceems_conf_defaults(&config);
	path_of(config.spool_dir, sizeof(config.spool_dir), "made/spool");
	agent_confine_make_dirs(&config);
	path_of(path, sizeof(path), "made/spool");
	ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0750,
	   "spool_dir made, mode 0750");
	path_of(path, sizeof(path), "made/spool/notes");
	ok(stat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	   "the note folder made in it, mode 0700");
	/* Made already: left as it is. */
	chmod(path, 0711);
	agent_confine_make_dirs(&config);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 0711, "an existing folder left alone");
}

/* In a child: confine as the agent would, then each open's errno (as a
 * byte) into the pipe. */
static void
test_confined(void)
{
	static const struct {
		const char *name;
		int flags;
		int want;
		const char *what;
	} opens[] = {
		{ "home/.pgpass", O_RDONLY, 0, "~/.pgpass readable" },
		{ "home/.pg_service.conf", O_RDONLY, 0, "~/.pg_service.conf readable" },
		{ "home/.postgresql/root.crt", O_RDONLY, 0, "~/.postgresql/root.crt readable" },
		{ "creds/ceems.pass", O_RDONLY, 0, "the service's passfile readable" },
		{ "certs/ca.crt", O_RDONLY, 0, "the service's sslrootcert readable" },
		{ "keys/client.key", O_RDONLY, 0, "the conninfo's sslkey readable" },
		{ "creds/ceems.pass", O_WRONLY, EACCES, "the passfile not writable" },
		{ "home/other", O_RDONLY, EACCES, "the rest of the home unreadable" },
		{ "certs/other.key", O_RDONLY, EACCES, "the rest of a named file's folder unreadable" },
		{ "notes/job-1.note", O_WRONLY | O_CREAT | O_EXCL, 0, "note_dir outside spool_dir writable" },
		{ "notes/old.note", O_RDONLY, 0, "note_dir outside spool_dir readable" },
		{ "spool/1.json", O_WRONLY | O_CREAT | O_EXCL, 0, "spool_dir missing at start writable" },
		{ "spool", O_RDONLY | O_DIRECTORY, 0, "spool_dir missing at start listable" },
		{ "elsewhere/x", O_WRONLY | O_CREAT | O_EXCL, EACCES, "another folder not writable" },
	};
	static struct ceems_config config;
	/* The confinement's outcome, each open's, then libpq's load. */
	unsigned char got[sizeof(opens) / sizeof(opens[0]) + 2];
	const size_t load = sizeof(opens) / sizeof(opens[0]) + 1;
	int fds[2], status;
	pid_t pid;

	ceems_conf_defaults(&config);
	path_of(config.state_dir, sizeof(config.state_dir), "state");
	path_of(config.spool_dir, sizeof(config.spool_dir), "spool");
	path_of(config.note_dir, sizeof(config.note_dir), "notes");
	path_of(config.socket_path, sizeof(config.socket_path), "run/agent.sock");
	connection(config.database, sizeof(config.database));
	if (pipe(fds) < 0 || (pid = fork()) < 0) {
		printf("Bail out! pipe or fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		const struct ceems_pg_lib *pq;
		char err[512];
		int r;

		/* As the agent starts: its directories made, then confined. */
		agent_confine_make_dirs(&config);
		r = agent_confine_fs(&config);

		got[0] = r == 1 ? 1 : r == 0 ? 2 : 3;
		for (size_t i = 0; r == 1 && i < sizeof(opens) / sizeof(opens[0]); i++)
			got[i + 1] = (unsigned char)try_open(opens[i].name, opens[i].flags);
		/* As the replay process does, after the confinement: this
		 * process had not loaded libpq before. */
		got[load] = maps_library("/libpq.so") ? 2 :
			ceems_pg_lib_load(&pq, err, sizeof(err)) == 0 ? 0 : 1;
		(void)!write(fds[1], got, sizeof(got));
		_exit(0);
	}
	close(fds[1]);
	memset(got, 0xff, sizeof(got));
	if (read(fds[0], got, sizeof(got)) != (ssize_t)sizeof(got) && got[0] != 2)
		got[0] = 0;
	close(fds[0]);
	(void)waitpid(pid, &status, 0);
	if (got[0] == 2) {
		printf("ok %d # SKIP the kernel offers no Landlock (ABI 2 or later)\n",
		       ++tap_count);
		return;
	}
	is_int(got[0], 1, "the child is confined");
	for (size_t i = 0; i < sizeof(opens) / sizeof(opens[0]); i++)
		ok(got[i + 1] == opens[i].want, "%s (%s): %s", opens[i].what,
		   opens[i].name, got[i + 1] == 0 ? "opened" : strerror(got[i + 1]));
	is_int(got[load], 0, "libpq loads once confined (2: it was loaded before, 1: refused)");
}

static int
rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

int
main(void)
{
	char text[PATH_MAX * 3], pass[PATH_MAX], ca[PATH_MAX], home[PATH_MAX];

	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	ceems_log_set_level(CEEMS_LOG_ERROR);
	make_dir("home");
	make_dir("home/.postgresql");
	make_dir("creds");
	make_dir("certs");
	make_dir("keys");
	make_dir("state");
	make_dir("run");
	make_dir("elsewhere");
	path_of(pass, sizeof(pass), "creds/ceems.pass");
	path_of(ca, sizeof(ca), "certs/ca.crt");
	snprintf(text, sizeof(text),
		 "[other]\nsslrootcert=/nonexistent/other.crt\n"
		 "[ceemsdb]\nhost=/nonexistent\ndbname=ceems\n"
		 "passfile=%s\nsslrootcert=%s\n", pass, ca);
	make_file("home/.pg_service.conf", text);
	make_file("home/.pgpass", "*:*:*:*:secret\n");
	make_file("home/.postgresql/root.crt", "ca\n");
	make_file("home/other", "private\n");
	make_file("creds/ceems.pass", "*:*:*:ceems:secret\n");
	make_file("certs/ca.crt", "ca\n");
	make_file("certs/other.key", "private\n");
	make_file("keys/client.key", "key\n");
	/* libpq (15 and later) finds ~/.pg_service.conf through $HOME. */
	path_of(home, sizeof(home), "home");
	setenv("HOME", home, 1);
	unsetenv("PGSERVICEFILE");
	unsetenv("PGSYSCONFDIR");
	/* note_dir and spool_dir need not exist yet: the agent creates them
	 * (before the first record or note, which a confined agent could
	 * not otherwise reach). */
	/* Before anything loads libpq into this process. */
	test_files_apart();
	test_made_dirs();
	make_dir("notes");
	make_file("notes/old.note", "{}\n");
	test_confined();
	test_files();
	nftw(dir, rm, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
