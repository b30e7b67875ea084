/* test_node_name.c - this process's Slurm node name, from slurmd's
 * command line and from the job cgroups of a slurmd built for several
 * slurmd per host (base/node_name.h). */
#include "config.h"

#include <string.h>

#include "base/node_name.h"
#include "../tap.h"

/* ARGV as /proc/PID/cmdline has it: NUL after each argument. */
static int
from_cmdline(const char *text, size_t len, char *node, size_t size)
{
	return ceems_node_name_from_slurmd_cmdline(text, len, node, size);
}

static void
test_cmdline(void)
{
	static const char sep[] = "slurmd\0-f\0/etc/slurm.conf\0-N\0n1\0";
	static const char glued[] = "slurmd\0-D\0-Nn2\0";
	static const char none[] = "slurmd\0-D\0";
	static const char last[] = "slurmd\0-N";
	static const char bad[] = "slurmd\0-N\0../x\0";
	static const char prog[] = "-Nn9\0-D\0";
	char node[64] = "";

	is_int(from_cmdline(sep, sizeof(sep) - 1, node, sizeof(node)), 0, "-N NAME");
	is_str(node, "n1", "its name");
	is_int(from_cmdline(glued, sizeof(glued) - 1, node, sizeof(node)), 0, "-NNAME");
	is_str(node, "n2", "its name");
	is_int(from_cmdline(none, sizeof(none) - 1, node, sizeof(node)), -1,
	       "no -N: no name");
	is_int(from_cmdline(last, sizeof(last) - 1, node, sizeof(node)), -1,
	       "-N at the end, without its value (no NUL after it either)");
	is_int(from_cmdline(bad, sizeof(bad) - 1, node, sizeof(node)), -1,
	       "a name with / or .. refused");
	is_int(from_cmdline(prog, sizeof(prog) - 1, node, sizeof(node)), -1,
	       "the program's own name is no option");
	is_int(from_cmdline(sep, sizeof(sep) - 1, node, 2), -1,
	       "a name longer than the buffer");
}

static void
test_cgroup(void)
{
	char node[64] = "";

	is_int(ceems_node_name_from_cgroup("/slurm_n3/uid_0/job_7", node,
					   sizeof(node)), 0, "v1: /slurm_NODE");
	is_str(node, "n3", "its name");
	is_int(ceems_node_name_from_cgroup("/system.slice/node-1_slurmstepd.scope/job_7",
					   node, sizeof(node)), 0,
	       "v2: NODE_slurmstepd.scope");
	is_str(node, "node-1", "its name");
	is_int(ceems_node_name_from_cgroup("/slurm/uid_0/job_7", node, sizeof(node)),
	       -1, "v1 of a one-slurmd build: no name");
	is_int(ceems_node_name_from_cgroup("/system.slice/slurmstepd.scope/job_7",
					   node, sizeof(node)), -1,
	       "v2 of a one-slurmd build: no name");
	is_int(ceems_node_name_from_cgroup("/slurm_../uid_0/job_7", node, sizeof(node)),
	       -1, "a name of .. refused");
	is_int(ceems_node_name_from_cgroup("/slurm_/uid_0/job_7", node, sizeof(node)),
	       -1, "an empty name refused");
	is_int(ceems_node_name_from_cgroup_line("4:cpuacct,cpu:/slurm_n2/uid_0/job_7/step_0",
						node, sizeof(node)), 0,
	       "a /proc/PID/cgroup line: the path after the second ':'");
	is_str(node, "n2", "its name");
	is_int(ceems_node_name_from_cgroup_line("0::/system.slice/n1_slurmstepd.scope/job_7",
						node, sizeof(node)), 0,
	       "a v2 line");
	is_str(node, "n1", "its name");
	is_int(ceems_node_name_from_cgroup_line("/slurm_n2/uid_0/job_7", node,
						sizeof(node)), -1,
	       "a bare path is no line");
}

static void
test_host(void)
{
	char node[64] = "";

	if (ceems_node_name_of_host(node, sizeof(node)) == 0)
		ok(node[0] != '\0' && strchr(node, '.') == NULL,
		   "the host's short name: %s", node);
	else
		ok(1, "# SKIP the host name cannot go into a path");
}

int
main(void)
{
	test_cmdline();
	test_cgroup();
	test_host();
	return done_testing();
}
