/* test_cgroup.c - cgroups for the drivers that play a job's processes
 * (see test_cgroup.h). */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_cgroup.h"

int test_cgroup_v1;

static const char *v1_controllers[] = { "cpuacct", "memory", "cpuset" };
#define NCONTROLLERS (sizeof(v1_controllers) / sizeof(v1_controllers[0]))

static int
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	(void)close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static int
copy_file(const char *from, const char *to)
{
	char buf[4096];
	ssize_t n;
	int fd = open(from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	return write_file(to, buf);
}

int
test_cgroup_make(const char *path)
{
	char dir[512], to[600];

	if (!test_cgroup_v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", path);
		return mkdir(dir, 0755) < 0 && errno != EEXIST ? -errno : 0;
	}
	for (size_t i = 0; i < NCONTROLLERS; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s",
			 v1_controllers[i], path);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
	/* The agent counts a job's cores from its cpuset. */
	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/cpuset/%s", path);
	snprintf(to, sizeof(to), "%s/cpuset.cpus", dir);
	if (copy_file("/sys/fs/cgroup/cpuset/cpuset.cpus", to) < 0)
		return -EIO;
	snprintf(to, sizeof(to), "%s/cpuset.mems", dir);
	return copy_file("/sys/fs/cgroup/cpuset/cpuset.mems", to) < 0 ? -EIO : 0;
}

void
test_cgroup_remove(const char *path)
{
	char dir[512];

	if (!test_cgroup_v1) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s", path);
		(void)rmdir(dir);
		return;
	}
	for (size_t i = 0; i < NCONTROLLERS; i++) {
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s/%s",
			 v1_controllers[i], path);
		(void)rmdir(dir);
	}
}

int
test_cgroup_enter(const char *path)
{
	char file[600], pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (!test_cgroup_v1) {
		snprintf(file, sizeof(file), "/sys/fs/cgroup/%s/cgroup.procs",
			 path);
		return write_file(file, pid);
	}
	for (size_t i = 0; i < NCONTROLLERS; i++) {
		snprintf(file, sizeof(file), "/sys/fs/cgroup/%s/%s/cgroup.procs",
			 v1_controllers[i], path);
		if (write_file(file, pid) < 0)
			return -1;
	}
	return 0;
}
