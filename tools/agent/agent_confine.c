/* agent_confine.c - the node agent's file-system confinement (Landlock).
 *
 * Why: the agent runs as uid 0, because RAPL's energy_uj is readable by
 * root only (0400) and another uid would need CAP_DAC_READ_SEARCH, which
 * reads every file on the node (/etc/shadow included).  agent_caps.c
 * drops every capability (CAP_PERFMON aside, for perf counters), so file
 * permissions apply to it again; but to
 * uid 0 they still grant what the owner may: reading /etc/shadow (0640
 * root) and writing /etc (0755 root).  Landlock takes that away: the
 * kernel lets this process, and every child it forks, open only
 *   read:          sysfs_root, procfs_root, the cgroup hierarchies
 *                  (where mountinfo puts them), the emissions table,
 *                  /etc/ceems, the system files libraries read (name
 *                  service, time zone, TLS roots), and what libpq may
 *                  read for the configured database (lib/record/pg_files.h:
 *                  root's ~/.pgpass and ~/.postgresql, the service
 *                  files, the files the connection string names);
 *   read, execute: /usr and /lib* (libraries loaded later, NSS modules);
 *                  with a database, the agent's own program, and read
 *                  the libraries it was loaded with, wherever they are:
 *                  its replay process is that program executed anew
 *                  (agent_replay.h);
 *   read, write:   the state, spool and note directories and the
 *                  socket's directory (create, rename, remove within
 *                  them), /dev/null, and the perf_event cgroups it
 *                  makes for jobs of cgroup v1 (ceems_perf/ beneath
 *                  the perf_event hierarchy, lib/sources/perf_cgroup.h);
 *   read, write existing files only: the GPU devices (/dev/nvidia*,
 *                  /dev/dri, /dev/kfd), when a GPU library is in use,
 *                  and read the drivers' files under /proc and /sys;
 *                  the IPMI device /dev/ipmi0 with bmc = inband;
 *   read:          bmc_credentials_file with bmc = lan.
 * Everything else, /etc/shadow and every write outside those three
 * directories included, is refused with EACCES.  Files opened before the
 * confinement (the log on stderr, sources opened at start) stay usable.
 *
 * Landlock needs no privilege and no_new_privs (set by agent_caps.c).  A
 * kernel without it (before 5.13, or with it disabled) leaves the agent
 * unconfined, with a warning; ABI 1 too, whose ban on moving files
 * between directories would break the spool's rejected folder.  Device
 * ioctls (ABI 5) are not restricted: GPU libraries will need them. */
#include "config.h"

#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_LINUX_LANDLOCK_H
#include <linux/landlock.h>
#endif

#include "agent_caps.h"
#include "agent_confine.h"
#include "cgroup/cgroup_path.h"
#include "base/fileio.h"
#include "base/log.h"
#include "sources/perf_cgroup.h"
#include "record/job_note.h"
#include "record/pg_files.h"

static void
make_dir(const char *path, mode_t mode, const char *what)
{
	int r = ceems_fileio_mkdir_p(path, mode);

	if (r < 0)
		ceems_warning("cannot create the %s %s: %s; the agent cannot use it until it restarts",
			      what, path, strerror(-r));
}

void
agent_confine_make_dirs(const struct ceems_config *c)
{
	char notes[CEEMS_CONFIG_PATH_MAX + 8];

	make_dir(c->spool_dir, 0750, "spool_dir");
	if (ceems_job_note_dir(c, notes, sizeof(notes)) == 0)
		make_dir(notes, 0700, "job note folder");
}

/* What the confinement lets the agent's processes read for the
 * configured database: the files libpq may read (lib/record/pg_files.h:
 * root's ~/.pgpass, ~/.pg_service.conf and ~/.postgresql, the service
 * files, the files the connection string or its service names) and the
 * libraries libpq loads, which the replay process loads after the
 * confinement.  Found by a child process (ceems_pg_files_apart), so
 * that the agent itself never maps libpq. */
struct db_path {
	char *path;
	bool library;		/* a library libpq loads, else a file it reads */
};
struct db_paths {
	struct db_path *paths;
	size_t n, cap;
	bool found;
	bool incomplete;	/* out of memory: a path was not kept */
};
static struct db_paths db_paths;

static void
keep_db_path(struct db_paths *d, const char *path, bool library)
{
	char *copy;

	if (d->n == d->cap) {
		size_t cap = d->cap == 0 ? 32 : 2 * d->cap;
		struct db_path *more = realloc(d->paths, cap * sizeof(*more));

		if (more == NULL) {
			d->incomplete = true;
			return;
		}
		d->paths = more;
		d->cap = cap;
	}
	copy = strdup(path);
	if (copy == NULL) {
		d->incomplete = true;
		return;
	}
	d->paths[d->n].path = copy;
	d->paths[d->n++].library = library;
}

static void
keep_db_file(const char *path, bool is_dir, void *arg)
{
	(void)is_dir;
	keep_db_path(arg, path, false);
}

static void
keep_db_library(const char *path, bool is_dir, void *arg)
{
	(void)is_dir;
	keep_db_path(arg, path, true);
}

void
agent_confine_prepare(const struct ceems_config *c)
{
	char home[CEEMS_CONFIG_PATH_MAX], pw_home[CEEMS_CONFIG_PATH_MAX];
	const char *homes[2];
	size_t nhomes = 0;
	struct passwd *pw;
	char err[512];

	if (c->database[0] == '\0' || db_paths.found)
		return;
	db_paths.found = true;
	if (ceems_pg_files_home(home, sizeof(home)) < 0)
		home[0] = '\0';
	homes[nhomes++] = home;
	/* libpq before 15 takes the password database's home over $HOME. */
	pw = getpwuid(geteuid());
	if (pw != NULL && pw->pw_dir != NULL && strcmp(pw->pw_dir, home) != 0 &&
	    snprintf(pw_home, sizeof(pw_home), "%s", pw->pw_dir) < (int)sizeof(pw_home))
		homes[nhomes++] = pw_home;
	if (ceems_pg_files_apart(c->database, homes, nhomes, keep_db_file,
				 keep_db_library, &db_paths, err, sizeof(err)) < 0)
		ceems_warning("confinement: %s: the replay process will not reach the database",
			      err);
	else if (db_paths.incomplete)
		ceems_warning("confinement: out of memory listing libpq's files: the replay process may not reach the database");
}

void
agent_confine_each_db_path(void (*fn)(const char *path, bool library,
				      void *arg), void *arg)
{
	for (size_t i = 0; i < db_paths.n; i++)
		fn(db_paths.paths[i].path, db_paths.paths[i].library, arg);
}

#if defined(HAVE_LINUX_LANDLOCK_H) && defined(SYS_landlock_create_ruleset)
#define HAVE_LANDLOCK 1

/* Rights of later ABIs, by the kernel's values, for older headers. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

#define FS_READ (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_EXEC (FS_READ | LANDLOCK_ACCESS_FS_EXECUTE)
#define FS_WRITE (FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE | \
		  LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | \
		  LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_DIR | \
		  LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_REFER | \
		  LANDLOCK_ACCESS_FS_TRUNCATE)
/* The rights a rule on a file (not a directory) may carry. */
#define FS_FILE_RIGHTS (LANDLOCK_ACCESS_FS_READ_FILE | \
			LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_TRUNCATE)

/* What libraries may read: the name service (libpq looks the user up),
 * the time zone (log time stamps), TLS roots and libpq's service file. */
static const char *const system_read[] = {
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts",
	"/etc/host.conf", "/etc/resolv.conf", "/etc/services", "/etc/gai.conf",
	"/etc/localtime", "/etc/ld.so.cache", "/etc/ssl", "/etc/ceems",
	"/etc/postgresql-common", "/dev/urandom", "/dev/random",
};
static const char *const system_exec[] = { "/usr", "/lib", "/lib64", "/lib32" };
/* What the GPU libraries open while they run: the devices (read and
 * write, for their ioctls; nothing may be made or removed there) and
 * the drivers' files under /proc and /sys. */
#define FS_DEVICE (LANDLOCK_ACCESS_FS_READ_FILE | \
		   LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
static const char *const gpu_device_dirs[] = {
	"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools",
	"/dev/nvidia-modeset", "/dev/nvidia-caps", "/dev/dri", "/dev/kfd",
};
static const char *const gpu_read[] = {
	"/proc/driver/nvidia", "/proc/driver/nvidia-caps", "/sys/bus/pci",
	"/sys/class/drm", "/sys/class/kfd", "/sys/devices", "/sys/module",
};

static int
landlock_abi(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : (int)abi;
}

/* Allow ACCESS beneath PATH (a file: its file rights only).  A missing
 * path is skipped; 0 or -1 after logging. */
static int
allow(int ruleset, uint64_t handled, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr rule = { 0 };
	struct stat st;
	int fd, r;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 0;
		ceems_error("confinement: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= FS_FILE_RIGHTS;
	rule.parent_fd = fd;
	rule.allowed_access = access & handled;
	r = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH,
		    &rule, 0);
	if (r < 0)
		ceems_error("confinement: cannot allow %s: %s", path, strerror(errno));
	(void)close(fd);
	return r < 0 ? -1 : 0;
}

/* The directory of PATH into BUF ("/" for a file at the top). */
static const char *
parent_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash == NULL || slash == path ? 1 : (size_t)(slash - path);

	if (n >= size)
		n = size - 1;
	memcpy(buf, slash == NULL ? "/" : path, n);
	buf[n] = '\0';
	return buf;
}

/* The cgroup hierarchies, where mountinfo says they are (under
 * cgroupfs_prefix), as the agent finds them: read only. */
static int
allow_cgroups(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	static struct ceems_cgroup_mounts mounts;
	char path[PATH_MAX], dir[PATH_MAX], perf_v1[CEEMS_CGROUP_PATH_MAX];
	const char *prefix = strcmp(c->cgroupfs_prefix, "/") == 0 ? "" :
		c->cgroupfs_prefix;
	char *text = malloc(1 << 20);
	int bad = 0;
	ssize_t n;

	if (text == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/self/mountinfo", c->procfs_root);
	n = ceems_fileio_read_text_file(path, text, 1 << 20);
	if (n < 0 || ceems_cgroup_path_mounts_from_mountinfo(text, &mounts) < 0 ||
	    ceems_perf_cgroup_mount_from_mountinfo(text, perf_v1, sizeof(perf_v1)) < 0) {
		ceems_warning("confinement: cannot read the cgroup mounts from %s: no cgroup is readable",
			      path);
		free(text);
		return 0;
	}
	free(text);
	for (int i = 0; i <= CEEMS_CG_NCONTROLLERS; i++) {
		const char *mnt = i == CEEMS_CG_NCONTROLLERS ? mounts.unified :
			mounts.v1[i];

		if (mnt[0] == '\0')
			continue;
		if (snprintf(dir, sizeof(dir), "%s%s", prefix, mnt) >= (int)sizeof(dir))
			continue;
		bad |= allow(ruleset, handled, dir, FS_READ);
	}
	/* The perf_event cgroups the agent makes for jobs of cgroup v1
	 * (lib/sources/perf_cgroup.h), made at start: written beneath. */
	if (c->perf && c->perf_adopt &&
	    ceems_perf_cgroup_root(&mounts, perf_v1, prefix, dir,
			    sizeof(dir) - sizeof(CEEMS_PERF_ADOPT_DIR) - 1) == 0) {
		strcat(dir, "/" CEEMS_PERF_ADOPT_DIR);
		bad |= allow(ruleset, handled, dir, FS_WRITE);
	}
	return bad;
}

/* A directory the agent writes in (agent_confine_make_dirs made it):
 * an empty PATH (note_dir unset, the notes then in the spool) needs no
 * rule. */
static int
allow_dir(int ruleset, uint64_t handled, const char *path)
{
	if (path[0] == '\0')
		return 0;
	return allow(ruleset, handled, path, FS_WRITE);
}

/* Allow what agent_confine_prepare found (prepared now if it was not),
 * read-only, and forget the list: it is needed once.  Not fatal: a file
 * the agent cannot reach only fails its store, logged, and the records
 * wait in the spool. */
static void
allow_database(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	agent_confine_prepare(c);
	for (size_t i = 0; i < db_paths.n; i++) {
		(void)allow(ruleset, handled, db_paths.paths[i].path, FS_READ);
		free(db_paths.paths[i].path);
	}
	free(db_paths.paths);
	db_paths.paths = NULL;
	db_paths.n = db_paths.cap = 0;
}

/* The GPU devices and drivers' files, when a GPU library is in use:
 * each /dev/nvidiaN on its own (a rule on /dev would open every
 * device). */
static int
allow_gpus(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	char path[sizeof(((struct dirent *)0)->d_name) + 8];
	struct dirent *e;
	DIR *dev;
	int bad = 0;

	if (strcmp(c->gpu_nvml_library, "none") == 0 &&
	    strcmp(c->gpu_rocm_smi_library, "none") == 0)
		return 0;
	for (size_t i = 0; i < sizeof(gpu_device_dirs) / sizeof(gpu_device_dirs[0]); i++)
		bad |= allow(ruleset, handled, gpu_device_dirs[i], FS_DEVICE);
	for (size_t i = 0; i < sizeof(gpu_read) / sizeof(gpu_read[0]); i++)
		bad |= allow(ruleset, handled, gpu_read[i], FS_READ);
	if ((dev = opendir("/dev")) == NULL)
		return bad;
	while ((e = readdir(dev)) != NULL) {
		size_t digits;

		if (strncmp(e->d_name, "nvidia", 6) != 0)
			continue;
		digits = strspn(e->d_name + 6, "0123456789");
		if (digits == 0 || e->d_name[6 + digits] != '\0')
			continue;
		snprintf(path, sizeof(path), "/dev/%s", e->d_name);
		bad |= allow(ruleset, handled, path, FS_DEVICE);
	}
	closedir(dev);
	return bad;
}

/* The BMC's thread reads its credentials file again at every
 * reconnection (LAN), or talks to the kernel's IPMI device (in band). */
static int
allow_bmc(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	if (strcmp(c->bmc, "lan") == 0 && c->bmc_credentials_file[0] != '\0')
		return allow(ruleset, handled, c->bmc_credentials_file, FS_READ);
	if (strcmp(c->bmc, "inband") == 0)
		return allow(ruleset, handled, "/dev/ipmi0", FS_DEVICE);
	return 0;
}

struct self_rules {
	int ruleset;
	uint64_t handled;
	int bad;
};

static int
allow_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_rules *self = arg;

	(void)size;
	/* The program itself and the vDSO have no path here. */
	if (info->dlpi_name != NULL && info->dlpi_name[0] == '/')
		self->bad |= allow(self->ruleset, self->handled, info->dlpi_name,
				   FS_READ);
	return 0;
}

/* With a database, the replay process is the agent's program executed
 * anew: that file may be executed, and the libraries the agent was
 * loaded with read (a build or an install outside /usr has them
 * elsewhere).  Rules on these files alone, not their directories. */
static int
allow_self(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	struct self_rules self = { ruleset, handled, 0 };

	if (c->database[0] == '\0')
		return 0;
	self.bad |= allow(ruleset, handled, "/proc/self/exe", FS_EXEC);
	dl_iterate_phdr(allow_loaded, &self);
	return self.bad;
}

static int
add_rules(int ruleset, uint64_t handled, const struct ceems_config *c)
{
	char socket_dir[CEEMS_CONFIG_PATH_MAX];
	int bad = 0;

	bad |= allow(ruleset, handled, c->sysfs_root, FS_READ);
	bad |= allow(ruleset, handled, c->procfs_root, FS_READ);
	bad |= allow_cgroups(ruleset, handled, c);
	bad |= allow(ruleset, handled, c->emissions_table, FS_READ);
	bad |= allow(ruleset, handled, c->state_dir, FS_WRITE);
	bad |= allow_dir(ruleset, handled, c->spool_dir);
	bad |= allow_dir(ruleset, handled, c->note_dir);
	allow_database(ruleset, handled, c);
	bad |= allow(ruleset, handled,
		     parent_of(c->socket_path, socket_dir, sizeof(socket_dir)),
		     FS_WRITE);
	bad |= allow(ruleset, handled, "/dev/null", FS_WRITE);
	bad |= allow_gpus(ruleset, handled, c);
	bad |= allow_bmc(ruleset, handled, c);
	bad |= allow_self(ruleset, handled, c);
	for (size_t i = 0; i < sizeof(system_read) / sizeof(system_read[0]); i++)
		bad |= allow(ruleset, handled, system_read[i], FS_READ);
	for (size_t i = 0; i < sizeof(system_exec) / sizeof(system_exec[0]); i++)
		bad |= allow(ruleset, handled, system_exec[i], FS_EXEC);
	return bad != 0 ? -1 : 0;
}

int
agent_confine_fs(const struct ceems_config *config)
{
	struct landlock_ruleset_attr attr = { 0 };
	char socket_dir[CEEMS_CONFIG_PATH_MAX];
	int abi = landlock_abi(), ruleset, r;

	if (abi < 2) {
		ceems_warning("the kernel offers no Landlock%s: the agent is not confined to its files (as uid 0 without capabilities it can still read and write what root owns)",
			      abi == 1 ? " beyond ABI 1" : "");
		return 0;
	}
	attr.handled_access_fs = FS_WRITE | FS_EXEC |
		LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
	if (abi < 3)
		attr.handled_access_fs &= ~LANDLOCK_ACCESS_FS_TRUNCATE;
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr,
			       sizeof(attr.handled_access_fs), 0);
	if (ruleset < 0) {
		ceems_error("confinement: cannot create a Landlock ruleset: %s",
			    strerror(errno));
		return -1;
	}
	r = add_rules(ruleset, attr.handled_access_fs, config);
	if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -1;
	if (r == 0 && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) {
		ceems_error("confinement: cannot enforce the Landlock ruleset: %s",
			    strerror(errno));
		r = -1;
	}
	(void)close(ruleset);
	if (r < 0)
		return -1;
	ceems_info("file system confined (Landlock ABI %d): read %s, %s, the cgroup mounts; write %s, %s, %s",
		   abi, config->sysfs_root, config->procfs_root,
		   config->state_dir, config->spool_dir,
		   parent_of(config->socket_path, socket_dir, sizeof(socket_dir)));
	return 1;
}

#else

int
agent_confine_fs(const struct ceems_config *config)
{
	(void)config;
	ceems_warning("built without Landlock: the agent is not confined to its files (as uid 0 without capabilities it can still read and write what root owns)");
	return 0;
}

#endif
