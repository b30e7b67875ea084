/* agent_privcheck.c - ceems-agent --check-privileges: put this process in
 * the privilege state of the running agent, by the same calls the agent
 * makes at start (agent_caps.c, agent_confine.c), then try what the agent
 * must not be able to do and what it must still do, and say what
 * happened: the database's credential files (lib/record/pg_files.h) that exist
 * and the libraries libpq loads must be readable, without connecting.  For admins checking a node, and
 * for the tests. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_caps.h"
#include "agent_confine.h"
#include "base/fileio.h"
#include "base/log.h"

static int failures;

static void
expect(bool good, const char *what, int err)
{
	printf("%s: %s%s%s\n", good ? "ok" : "FAIL", what,
	       err != 0 ? ": " : "", err != 0 ? strerror(err) : "");
	if (!good)
		failures++;
}

/* Opening PATH with FLAGS must fail (MUST_FAIL) or succeed. */
static void
try_open(const char *path, int flags, bool must_fail, const char *what)
{
	int fd = open(path, flags | O_CLOEXEC | O_NOFOLLOW, 0600);
	int err = fd < 0 ? errno : 0;

	if (fd >= 0) {
		(void)close(fd);
		if ((flags & O_CREAT) != 0)
			(void)unlink(path);
	}
	expect(must_fail ? fd < 0 : fd >= 0, what, err);
}

/* The first RAPL zone's energy_uj under SYSFS into BUF, or "". */
static void
find_rapl(const char *sysfs, char *buf, size_t size)
{
	char dir[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;

	buf[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/class/powercap", sysfs);
	if ((d = opendir(dir)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (snprintf(buf, size, "%s/%s/energy_uj", dir, de->d_name) <
		    (int)size && stat(buf, &st) == 0)
			break;
		buf[0] = '\0';
	}
	closedir(d);
}

/* A cgroup file of this process that exists: its cgroup's cgroup.procs
 * in the unified hierarchy or in cpuacct's, where /proc/self/cgroup and
 * the usual mount points say (the agent reads the same files of jobs). */
static void
find_cgroup_file(const struct ceems_config *c, char *buf, size_t size)
{
	static const char *const mounts[] = {
		"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpuacct",
		"/sys/fs/cgroup/memory", "/sys/fs/cgroup",
	};
	const char *prefix = strcmp(c->cgroupfs_prefix, "/") == 0 ? "" :
		c->cgroupfs_prefix;
	struct stat st;

	for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
		if (snprintf(buf, size, "%s%s/cgroup.procs", prefix, mounts[i]) <
		    (int)size && stat(buf, &st) == 0)
			return;
	}
	buf[0] = '\0';
}

/* The database's credential files that exist, found before the
 * confinement (as the agent's rules are), checked readable after it. */
/* What the confinement allows for the database (agent_confine_prepare:
 * libpq's files and libraries), those that exist. */
#define DB_FILES_MAX 64
struct db_files {
	char paths[DB_FILES_MAX][PATH_MAX];
	bool is_dir[DB_FILES_MAX];
	bool library[DB_FILES_MAX];
	int n;
};

static void
note_db_file(const char *path, bool library, void *arg)
{
	struct db_files *f = arg;
	struct stat st;

	for (int i = 0; i < f->n; i++)
		if (strcmp(f->paths[i], path) == 0)
			return;
	if (f->n < DB_FILES_MAX && stat(path, &st) == 0 &&
	    snprintf(f->paths[f->n], PATH_MAX, "%s", path) < PATH_MAX) {
		f->is_dir[f->n] = S_ISDIR(st.st_mode);
		f->library[f->n++] = library;
	}
}

static void
find_db_files(const struct ceems_config *config, struct db_files *f)
{
	f->n = 0;
	if (config->database[0] == '\0')
		return;
	agent_confine_prepare(config);
	agent_confine_each_db_path(note_db_file, f);
	expect(f->n > 0, "libpq loads and lists the files it may read for the database", 0);
}

/* Connects to nothing: only what libpq would open to do so. */
static void
check_db_files(const struct db_files *f)
{
	char what[PATH_MAX + 64];

	for (int i = 0; i < f->n; i++) {
		int fd = open(f->paths[i], O_RDONLY | O_CLOEXEC |
			      (f->is_dir[i] ? O_DIRECTORY : 0));
		int err = fd < 0 ? errno : 0;

		if (fd >= 0)
			(void)close(fd);
		snprintf(what, sizeof(what), "can read %s (%s)", f->paths[i],
			 f->library[i] ? "libpq, for the replay process" :
			 "database credentials");
		expect(fd >= 0, what, err);
	}
}

int
agent_privcheck_run(const struct ceems_config *config)
{
	static struct db_files db;
	char path[PATH_MAX], what[PATH_MAX + 64];
	int confined, r;

	/* The agent creates its state directory before it is confined. */
	if ((r = ceems_fileio_mkdir_p(config->state_dir, 0700)) < 0)
		ceems_warning("cannot create %s: %s", config->state_dir, strerror(-r));
	if (agent_caps_restrict(config) < 0)
		return 1;
	find_db_files(config, &db);
	confined = agent_confine_fs(config);
	if (confined < 0)
		return 1;
	expect(confined == 1, "file system confined", 0);

	try_open("/etc/shadow", O_RDONLY, true, "cannot read /etc/shadow");
	snprintf(path, sizeof(path), "/etc/.ceems-privileges.%d", (int)getpid());
	snprintf(what, sizeof(what), "cannot create %s", path);
	try_open(path, O_WRONLY | O_CREAT | O_EXCL, true, what);
	try_open("/etc/passwd", O_WRONLY | O_APPEND, true, "cannot write /etc/passwd");

	snprintf(path, sizeof(path), "%s/.privileges.%d", config->state_dir,
		 (int)getpid());
	snprintf(what, sizeof(what), "can create %s", path);
	try_open(path, O_WRONLY | O_CREAT | O_EXCL, false, what);
	snprintf(path, sizeof(path), "%s/self/stat", config->procfs_root);
	snprintf(what, sizeof(what), "can read %s", path);
	try_open(path, O_RDONLY, false, what);
	find_cgroup_file(config, path, sizeof(path));
	if (path[0] != '\0') {
		snprintf(what, sizeof(what), "can read %s", path);
		try_open(path, O_RDONLY, false, what);
	}
	find_rapl(config->sysfs_root, path, sizeof(path));
	if (config->source_rapl && path[0] != '\0') {
		snprintf(what, sizeof(what), "can read %s", path);
		try_open(path, O_RDONLY, false, what);
	}
	check_db_files(&db);
	return failures == 0 ? 0 : 1;
}
