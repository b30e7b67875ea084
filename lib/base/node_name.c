/* node_name.c - this process's Slurm node name (node_name.h). */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/conf.h"
#include "base/fileio.h"
#include "base/node_name.h"

/* Copy LEN bytes of NAME into NODE when it may go into a path. */
static int
take(const char *name, size_t len, char *node, size_t size)
{
	char buf[CEEMS_NODE_NAME_MAX];

	if (len == 0 || len >= sizeof(buf) || len >= size)
		return -1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (!ceems_conf_node_name_ok(buf))
		return -1;
	memcpy(node, buf, len + 1);
	return 0;
}

int
ceems_node_name_from_slurmd_cmdline(const char *cmdline, size_t len,
				    char *node, size_t size)
{
	const char *end = cmdline + len, *arg = cmdline;

	/* The program's own name first: options follow it. */
	arg += strnlen(arg, (size_t)(end - arg)) + 1;
	while (arg < end) {
		size_t n = strnlen(arg, (size_t)(end - arg));
		const char *next = arg + n + 1;

		if (strcmp(arg, "--") == 0)
			return -1;
		if (n > 2 && strncmp(arg, "-N", 2) == 0)
			return take(arg + 2, n - 2, node, size);
		if (n == 2 && strcmp(arg, "-N") == 0 && next < end)
			return take(next, strnlen(next, (size_t)(end - next)),
				    node, size);
		arg = next;
	}
	return -1;
}

int
ceems_node_name_from_cgroup(const char *path, char *node, size_t size)
{
	static const char v1[] = "/slurm_", v2[] = "_slurmstepd.scope/";
	const char *p, *start;

	/* v1: Slurm's root is the hierarchy's top directory. */
	if (strncmp(path, v1, sizeof(v1) - 1) == 0) {
		start = path + sizeof(v1) - 1;
		p = strchr(start, '/');
		return take(start, p != NULL ? (size_t)(p - start) : strlen(start),
			    node, size);
	}
	/* v2: the component before "_slurmstepd.scope". */
	p = strstr(path, v2);
	if (p == NULL)
		return -1;
	for (start = p; start > path && start[-1] != '/'; start--)
		;
	return take(start, (size_t)(p - start), node, size);
}

int
ceems_node_name_of_host(char *node, size_t size)
{
	char host[256];

	if (gethostname(host, sizeof(host)) < 0)
		return -1;
	host[sizeof(host) - 1] = '\0';
	return take(host, strcspn(host, "."), node, size);
}

int
ceems_node_name_of_slurmd(char *node, size_t size)
{
	char cmdline[4096];
	ssize_t n;

	n = ceems_fileio_read_text_file("/proc/self/cmdline", cmdline,
					sizeof(cmdline));
	if (n > 0 &&
	    ceems_node_name_from_slurmd_cmdline(cmdline, (size_t)n, node,
						size) == 0)
		return 0;
	return ceems_node_name_of_host(node, size);
}

int
ceems_node_name_from_cgroup_line(const char *line, char *node, size_t size)
{
	/* "ID:CONTROLLERS:PATH": the path follows the second ':'. */
	const char *p = strchr(line, ':');

	if (p == NULL || (p = strchr(p + 1, ':')) == NULL)
		return -1;
	return ceems_node_name_from_cgroup(p + 1, node, size);
}
