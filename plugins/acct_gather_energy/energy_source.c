/* energy_source.c - the figures of the acct_gather_energy/ceems plugin,
 * asked from the node agent: a step's attributed joules in slurmstepd,
 * the node's joules in slurmd (energy_source.h).  Every call to the agent
 * is bounded by CEEMS_ENERGY_SOURCE_TIMEOUT_MS; no Slurm type here. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/conf.h"
#include "base/fileio.h"
#include "base/node_name.h"
#include "cgroup/step_ids.h"
#include "client/agent_client.h"
#include "energy_source.h"

enum ceems_energy_source_daemon
ceems_energy_source_daemon_of(const char *comm)
{
	if (strcmp(comm, "slurmd") == 0)
		return CEEMS_ENERGY_SLURMD;
	if (strcmp(comm, "slurmstepd") == 0)
		return CEEMS_ENERGY_SLURMSTEPD;
	return CEEMS_ENERGY_OTHER;
}

/* The step's joules over every domain it was measured in; false when
 * none was. */
static bool
step_sum(const struct ceems_agent_step_report *s, double *joules)
{
	bool any = false;

	*joules = 0;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (s->have_joules[d]) {
			*joules += s->joules[d];
			any = true;
		}
	return any;
}

int
ceems_energy_source_step_joules(const struct ceems_agent_job_report *report,
				const char *step, double *joules)
{
	uint32_t n = report->nsteps < CEEMS_AGENT_MAX_STEPS ?
			     report->nsteps : CEEMS_AGENT_MAX_STEPS;

	if (strcmp(step, "extern") == 0) {
		/* The job's whole share (energy_source.h says why). */
		if (!ceems_job_figures_ledger_energy_known(&report->ledger))
			return -ENOENT;
		*joules = ceems_job_figures_ledger_total_j(&report->ledger);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (strcmp(report->steps[i].id, step) == 0)
			return step_sum(&report->steps[i], joules) ? 0 : -ENOENT;
	return -ENOENT;
}

int
ceems_energy_source_node_joules(const char *text, double *joules,
				long *agent_pid)
{
	struct json_object *root = json_tokener_parse(text);
	struct json_object *energy, *pid, *delta;
	int rc = -EPROTO;

	if (root == NULL)
		return -EPROTO;
	if (!json_object_object_get_ex(root, "energy", &energy) ||
	    !json_object_is_type(energy, json_type_object) ||
	    !json_object_object_get_ex(root, "pid", &pid) ||
	    !json_object_is_type(pid, json_type_int))
		goto out;
	*joules = 0;
	json_object_object_foreach(energy, domain, figures) {
		(void)domain;
		if (!json_object_object_get_ex(figures, "delta_j", &delta) ||
		    !(json_object_is_type(delta, json_type_double) ||
		      json_object_is_type(delta, json_type_int)))
			goto out;
		*joules += json_object_get_double(delta);
	}
	*agent_pid = (long)json_object_get_int64(pid);
	rc = 0;
out:
	json_object_put(root);
	return rc;
}

int
ceems_energy_source_step_from_cgroups(char *text, uint32_t *jobid,
				      char *step, size_t step_size,
				      char *node, size_t node_size)
{
	char *line, *save = NULL;

	if (node_size > 0)
		node[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		if (ceems_step_ids_from_cgroup(line, jobid, step, step_size) != 0)
			continue;
		/* Only a path that names the step is Slurm's own. */
		if (ceems_node_name_from_cgroup_line(line, node, node_size) != 0 &&
		    node_size > 0)
			node[0] = '\0';
		return 0;
	}
	return -EINVAL;
}

int
ceems_energy_source_socket(const char *socket, const char *node, char *out,
			   size_t out_size, char *err, size_t err_size)
{
	char why[512];

	if (ceems_conf_expand_path(socket, node, out, out_size, why,
				   sizeof(why)) == 0)
		return 0;
	snprintf(err, err_size, "socket: %s", why);
	return -EINVAL;
}

/* The node of a multiple-slurmd build from the whole text of
 * /proc/self/cgroup (modified), for a slurmstepd whose ids came from its
 * title: Slurm 26.05 names a job's v2 directory by its SLUID, without
 * the job id, but the scope above it still names the node. */
static void
node_from_cgroups(char *text, char *node, size_t node_size)
{
	char *line, *save = NULL;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "/step_") != NULL &&
		    ceems_node_name_from_cgroup_line(line, node, node_size) == 0)
			return;
	node[0] = '\0';
}

/* This slurmstepd's step (and node, SRC->node): its cgroup, else its
 * process title. */
static int
find_step(struct ceems_energy_source_agent *src, char *err, size_t err_size)
{
	char text[4096], title[4096];
	ssize_t n = ceems_fileio_read_text_file("/proc/self/cgroup", text,
						sizeof(text));

	if (n > 0 &&
	    ceems_energy_source_step_from_cgroups(text, &src->jobid, src->step,
						  sizeof(src->step), src->node,
						  sizeof(src->node)) == 0)
		return 0;
	src->node[0] = '\0';
	if (ceems_fileio_read_text_file("/proc/self/cmdline", title,
					sizeof(title)) > 0 &&
	    ceems_step_ids_from_title(title, &src->jobid, src->step,
				      sizeof(src->step)) == 0) {
		if (ceems_fileio_read_text_file("/proc/self/cgroup", text,
						sizeof(text)) > 0)
			node_from_cgroups(text, src->node, sizeof(src->node));
		return 0;
	}
	snprintf(err, err_size, "this slurmstepd's step is not in its cgroup nor its title");
	return -ENOENT;
}

/* SRC's node, as the SPANK plugin names the node's agent: in slurmstepd
 * the one find_step read in its cgroup, in slurmd its -N NAME; else the
 * host's short name (node_name.h).  NULL when none can go into a path. */
static const char *
find_node(struct ceems_energy_source_agent *src)
{
	if (src->daemon == CEEMS_ENERGY_SLURMD)
		src->node[0] = '\0';
	if (src->node[0] != '\0')
		return src->node;
	if (src->daemon == CEEMS_ENERGY_SLURMD &&
	    ceems_node_name_of_slurmd(src->node, sizeof(src->node)) == 0)
		return src->node;
	if (ceems_node_name_of_host(src->node, sizeof(src->node)) == 0)
		return src->node;
	src->node[0] = '\0';
	return NULL;
}

int
ceems_energy_source_open(struct ceems_energy_source_agent *src, char *err,
			 size_t err_size)
{
	static struct ceems_config conf;
	const char *path = getenv("CEEMS_CONF");
	char comm[64];
	int rc;

	memset(src, 0, sizeof(*src));
	if (ceems_fileio_read_text_file("/proc/self/comm", comm,
					sizeof(comm)) <= 0)
		comm[0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	src->daemon = ceems_energy_source_daemon_of(comm);
	if (src->daemon == CEEMS_ENERGY_OTHER)
		return 0;
	if (path == NULL || path[0] != '/')
		path = CEEMS_DEFAULT_CONFIG_PATH;
	ceems_conf_defaults(&conf);
	if (ceems_conf_load(&conf, path, err, err_size) != 0)
		ceems_conf_defaults(&conf);	/* the default socket */
	rc = src->daemon == CEEMS_ENERGY_SLURMSTEPD ?
		     find_step(src, err, err_size) : 0;
	if (rc == 0)
		rc = ceems_energy_source_socket(conf.socket_path, find_node(src),
						src->socket_path,
						sizeof(src->socket_path), err,
						err_size);
	if (rc != 0)
		src->daemon = CEEMS_ENERGY_OTHER;
	return rc;
}

int
ceems_energy_source_read_step(const struct ceems_energy_source_agent *src,
			      double *joules, char *err, size_t err_size)
{
	/* One slurmstepd thread at a time (Slurm holds its energy lock):
	 * the report, 20 kB and more, stays off the stack. */
	static struct ceems_agent_job_report report;
	int rc;

	/* As of now: the extern step's figure, the job's, then holds the
	 * job's share up to this call, not up to the agent's last tick. */
	rc = ceems_agent_client_report_job_now(src->socket_path, src->jobid,
					       CEEMS_ENERGY_SOURCE_TIMEOUT_MS,
					       &report, err, err_size);
	if (rc != 0)
		return rc;
	if (ceems_energy_source_step_joules(&report, src->step, joules) == 0)
		return 0;
	snprintf(err, err_size, "the agent has no figure for step %s yet", src->step);
	return -ENODATA;
}

int
ceems_energy_source_read_node(const struct ceems_energy_source_agent *src,
			      double *joules, long *agent_pid, char *err,
			      size_t err_size)
{
	static char reply[CEEMS_AGENT_MSG_MAX];
	int rc;

	rc = ceems_agent_client_call(src->socket_path, "{\"op\":\"status\"}",
				     CEEMS_ENERGY_SOURCE_TIMEOUT_MS, reply,
				     sizeof(reply));
	if (rc < 0) {
		snprintf(err, err_size, "%s", strerror(-rc));
		return rc;
	}
	rc = ceems_energy_source_node_joules(reply, joules, agent_pid);
	if (rc != 0)
		snprintf(err, err_size, "the agent's status holds no energy");
	return rc;
}
