/* job_gpus.c - the identifiers of a job's GPUs on this node, for the node
 * agent: Slurm's GRES indices of the job here (slurmctld's answer), each
 * turned into its device file's numbers through gres.conf, so that the
 * agent matches them to its devices by what cannot be renumbered
 * (lib/gres.h, lib/agent_gpu.h).  Runs in the start lookup's child
 * (job_start.c), as root, off the job's path: it reads only gres.conf,
 * root's, and stats device files. */
#include "config.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "fileio.h"
#include "log.h"
#include "plugin.h"

/* gres.conf larger than this is not one: nodes list a few lines. */
#define GRES_CONF_MAX (256 * 1024)

static bool
names_node(const char *nodes, void *arg)
{
	const char *node = arg;
	hostlist_t hl = slurm_hostlist_create(nodes);
	bool found;

	if (hl == NULL)
		return false;
	found = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return found;
}

/* The node's GPU files from gres.conf, in Slurm's index order: their
 * number, or 0 when the file says none (or cannot be read: logged). */
static size_t
gpu_files(const char *path, char *node, char files[][CEEMS_GRES_PATH_MAX])
{
	char *text = malloc(GRES_CONF_MAX);
	unsigned int line = 0;
	size_t n = 0;
	ssize_t len;
	int r;

	if (text == NULL)
		return 0;
	len = ceems_read_text_file(path, text, GRES_CONF_MAX);
	if (len < 0) {
		if (len != -ENOENT)
			ceems_warning("cannot read %s (%s): GPUs are matched by their GRES index alone",
				      path, strerror((int)-len));
		free(text);
		return 0;
	}
	r = ceems_gres_conf_gpu_files(text, (size_t)len, names_node,
				      node, files, &n, &line);
	free(text);
	if (r < 0) {
		ceems_warning("%s line %u: %s: GPUs are matched by their GRES index alone",
			      path, line, r == -E2BIG ? "more GPU files than ceems handles" :
			      "a GPU line ceems does not understand");
		return 0;
	}
	return n;
}

int
ceems_plugin_gpu_ids(const char *gres_conf,
		     const struct ceems_plugin_job_gpus *g,
		     struct ceems_agent_job_spec *spec)
{
	static char files[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];
	uint32_t idx[CEEMS_AGENT_MAX_GPU_IDS];
	char node[CEEMS_GRES_PATH_MAX];
	size_t n = 0, nfiles = 0;
	int r;

	spec->ngpu_ids = 0;
	r = ceems_gres_detail_gpu_indices(g->gres_detail, idx,
					  CEEMS_AGENT_MAX_GPU_IDS, &n);
	if (r < 0) {
		ceems_warning("job %u: cannot read its GPUs from slurmctld's '%s'",
			      spec->jobid, g->gres_detail);
		return 0;
	}
	snprintf(node, sizeof(node), "%s", g->node);
	if (n > 0 && node[0] != '\0')
		nfiles = gpu_files(gres_conf, node, files);
	for (size_t i = 0; i < n; i++) {
		char *id = spec->gpu_ids[spec->ngpu_ids++];
		struct stat st;

		if (idx[i] < nfiles && stat(files[idx[i]], &st) == 0 &&
		    S_ISCHR(st.st_mode))
			snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "dev:%u:%u",
				 major(st.st_rdev), minor(st.st_rdev));
		else
			snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "gres:%u", idx[i]);
	}
	return (int)spec->ngpu_ids;
}
