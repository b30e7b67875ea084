/* job_gpus.c - the identifiers of a job's GPUs on this node, for the node
 * agent: Slurm's GRES indices of the job here (slurmctld's answer), each
 * turned into its device file's numbers through gres.conf, so that the
 * agent matches them to its devices by what cannot be renumbered
 * (lib/sources/gres.h, lib/agent/agent_gpu.h).  Runs in the start lookup's
  * child
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

#include "base/fileio.h"
#include "base/log.h"
#include "plugin.h"
#include "slurm_compat.h"

/* gres.conf larger than this is not one: nodes list a few lines. */
#define GRES_CONF_MAX (256 * 1024)

static bool
names_node(const char *nodes, void *arg)
{
	const char *node = arg;
	ceems_hostlist_t hl = slurm_hostlist_create(nodes);
	bool found;

	if (hl == NULL)
		return false;
	found = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return found;
}

/* gres.conf's text, or NULL (logged unless there is none). */
static char *
read_gres_conf(const char *path, ssize_t *len)
{
	char *text = malloc(GRES_CONF_MAX);

	if (text == NULL)
		return NULL;
	*len = ceems_fileio_read_text_file(path, text, GRES_CONF_MAX);
	if (*len >= 0)
		return text;
	if (*len != -ENOENT)
		ceems_warning("cannot read %s (%s): GPUs are matched by their GRES index alone",
			      path, strerror((int)-*len));
	free(text);
	return NULL;
}

static void
conf_error(const char *path, unsigned int line, int r)
{
	ceems_warning("%s line %u: %s: GPUs are matched by their GRES index alone",
		      path, line, r == -E2BIG ? "more GPU files than ceems handles" :
		      "a GPU line ceems does not understand");
}

/* The file of a GRES index that names what the job holds: for a MIG
 * slice (several files: its GPU's, then its nvidia-caps ones) the first
 * capability file, which the agent knows as the slice's; else the one
 * file.  Cut in place. */
static char *
identifying_file(char *files)
{
	char *cap = strstr(files, "/nvidia-caps/"), *comma;

	if (strchr(files, ',') == NULL)
		return files;
	if (cap != NULL) {
		while (cap > files && cap[-1] != ',')
			cap--;
		files = cap;
	}
	if ((comma = strchr(files, ',')) != NULL)
		*comma = '\0';
	return files;
}

/* One identifier: the device file's numbers when FILE is one, else the
 * GRES index; then "/A/B" when the job holds A of the device's B shared
 * units. */
static void
put_id(char *id, const char *file, uint32_t index, uint64_t a, uint64_t b)
{
	struct stat st;
	int n;

	if (file != NULL && stat(file, &st) == 0 && S_ISCHR(st.st_mode))
		n = snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "dev:%u:%u",
			     major(st.st_rdev), minor(st.st_rdev));
	else
		n = snprintf(id, CEEMS_AGENT_GPU_ID_MAX, "gres:%u", index);
	if (b > 0 && n > 0 && n < CEEMS_AGENT_GPU_ID_MAX)
		snprintf(id + n, (size_t)(CEEMS_AGENT_GPU_ID_MAX - n),
			 "/%llu/%llu", (unsigned long long)a,
			 (unsigned long long)b);
}

/* The job's shares of shared GPUs (shards, MPS), each against what
 * gres.conf gives the device. */
static void
add_shared(const char *path, const char *text, size_t len, char *node,
	   const char *detail, char files[][CEEMS_GRES_PATH_MAX],
	   size_t nfiles, struct ceems_agent_job_spec *spec)
{
	struct ceems_gres_shared sh[CEEMS_AGENT_MAX_GPU_IDS];
	double counts[CEEMS_GRES_MAX_FILES];
	unsigned int line = 0;
	const char *last = "";
	size_t n = 0;
	int r;

	if (ceems_gres_detail_shared(detail, sh, CEEMS_AGENT_MAX_GPU_IDS,
				     &n) < 0 || n == 0)
		return;
	for (size_t i = 0; i < n && spec->ngpu_ids < CEEMS_AGENT_MAX_GPU_IDS;
	     i++) {
		double total;

		if (sh[i].total == 0 && text != NULL &&
		    strcmp(sh[i].name, last) != 0) {
			r = ceems_gres_conf_shared_counts(text, len, names_node,
				node, sh[i].name, files, nfiles, counts, &line);
			if (r < 0) {
				conf_error(path, line, r);
				return;
			}
			last = sh[i].name;
		}
		total = sh[i].total > 0 ? (double)sh[i].total :
			sh[i].index < nfiles ? counts[sh[i].index] : 0;
		if (total <= 0)
			continue;
		/* count/ndev of TOTAL, in integers: count of ndev x total. */
		put_id(spec->gpu_ids[spec->ngpu_ids++],
		       sh[i].index < nfiles ? files[sh[i].index] : NULL,
		       sh[i].index, sh[i].count,
		       (uint64_t)(total * sh[i].ndev + 0.5));
	}
}

int
ceems_job_gpus_ids(const char *gres_conf,
		     const struct ceems_plugin_job_gpus *g,
		     struct ceems_agent_job_spec *spec)
{
	static char files[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];
	uint32_t idx[CEEMS_AGENT_MAX_GPU_IDS];
	char node[CEEMS_GRES_PATH_MAX], *text = NULL;
	unsigned int line = 0;
	size_t n = 0, nfiles = 0;
	ssize_t len = 0;
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
	if (g->gres_detail[0] != '\0' && node[0] != '\0')
		text = read_gres_conf(gres_conf, &len);
	if (text != NULL &&
	    (r = ceems_gres_conf_gpu_files(text, (size_t)len, names_node, node,
					   files, &nfiles, &line)) < 0) {
		conf_error(gres_conf, line, r);
		nfiles = 0;
	}
	for (size_t i = 0; i < n; i++)
		put_id(spec->gpu_ids[spec->ngpu_ids++],
		       idx[i] < nfiles ? identifying_file(files[idx[i]]) : NULL,
		       idx[i], 0, 0);
	add_shared(gres_conf, text, (size_t)(len > 0 ? len : 0), node,
		   g->gres_detail, files, nfiles, spec);
	free(text);
	return (int)spec->ngpu_ids;
}
