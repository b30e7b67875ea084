/* job.c - job metadata helpers. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/job.h"
#include "base/number.h"

void
ceems_job_meta_init(struct ceems_job_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
	meta->array_job_id = CEEMS_UNKNOWN_U32;
	meta->array_task_id = CEEMS_UNKNOWN_U32;
	meta->gid = CEEMS_UNKNOWN_U32;
	meta->exit_code = -1;
	meta->time_limit_min = CEEMS_UNKNOWN_U32;
}

static void
fill_string(char *dst, size_t size, const char *src)
{
	if (dst[0] == '\0' && src[0] != '\0')
		snprintf(dst, size, "%s", src);
}

void
ceems_job_meta_fill_from(struct ceems_job_meta *meta,
			 const struct ceems_job_meta *known)
{
	fill_string(meta->cluster, sizeof(meta->cluster), known->cluster);
	fill_string(meta->account, sizeof(meta->account), known->account);
	fill_string(meta->partition, sizeof(meta->partition), known->partition);
	fill_string(meta->qos, sizeof(meta->qos), known->qos);
	fill_string(meta->name, sizeof(meta->name), known->name);
	fill_string(meta->nodes, sizeof(meta->nodes), known->nodes);
	if (meta->array_job_id == CEEMS_UNKNOWN_U32 &&
	    meta->array_task_id == CEEMS_UNKNOWN_U32) {
		meta->array_job_id = known->array_job_id;
		meta->array_task_id = known->array_task_id;
	}
	if (meta->gid == CEEMS_UNKNOWN_U32)
		meta->gid = known->gid;
	if (meta->submit_time == 0)
		meta->submit_time = known->submit_time;
	/* Listed at the start, it held the start back, even if slurmctld
	 * has let it go by the end. */
	if (meta->dependency == CEEMS_JOB_DEPENDENCY_UNKNOWN ||
	    known->dependency == CEEMS_JOB_DEPENDENCY_LISTED)
		meta->dependency = known->dependency;
	if (meta->start_time == 0)
		meta->start_time = known->start_time;
	if (meta->time_limit_min == CEEMS_UNKNOWN_U32)
		meta->time_limit_min = known->time_limit_min;
	if (meta->alloc_cpus == 0)
		meta->alloc_cpus = known->alloc_cpus;
	if (meta->req_mem_bytes == 0)
		meta->req_mem_bytes = known->req_mem_bytes;
	if (meta->alloc_gpus == 0)
		meta->alloc_gpus = known->alloc_gpus;
	if (meta->nnodes == 0)
		meta->nnodes = known->nnodes;
}

/* Scale memory by its unit suffix (Slurm's default unit is MiB). */
static int
scale_memory(uint64_t n, char unit, uint64_t *bytes)
{
	unsigned shift;

	switch (unit) {
	case 'K': shift = 10; break;
	case 'M': case '\0': shift = 20; break;
	case 'G': shift = 30; break;
	case 'T': shift = 40; break;
	default: return -1;
	}
	if (n > (UINT64_MAX >> shift))
		return -1;
	*bytes = n << shift;
	return 0;
}

int
ceems_job_meta_parse_tres(struct ceems_job_meta *meta, const char *tres)
{
	struct ceems_job_meta work = *meta;
	uint32_t gpus = 0;
	bool saw_gpu = false;
	const char *p = tres;

	while (*p != '\0') {
		const char *eq = strchr(p, '='), *end;
		size_t klen;
		uint64_t n;

		if (eq == NULL)
			return -EINVAL;
		klen = (size_t)(eq - p);
		end = eq + 1;
		if (ceems_number_take_u64(&end, &n) < 0)
			return -EINVAL;
		if (klen == 3 && strncmp(p, "cpu", 3) == 0) {
			if (*end != ',' && *end != '\0')
				return -EINVAL;
			if (n > UINT32_MAX - 1)
				return -EINVAL;
			work.alloc_cpus = (uint32_t)n;
		} else if (klen == 4 && strncmp(p, "node", 4) == 0) {
			if (*end != ',' && *end != '\0')
				return -EINVAL;
			if (n > UINT32_MAX - 1)
				return -EINVAL;
			work.nnodes = (uint32_t)n;
		} else if (klen == 3 && strncmp(p, "mem", 3) == 0) {
			char unit = *end;

			if (unit != ',' && unit != '\0')
				end++;
			else
				unit = '\0';
			if ((*end != ',' && *end != '\0') ||
			    scale_memory(n, unit, &work.req_mem_bytes) < 0)
				return -EINVAL;
		} else if ((klen == 8 && strncmp(p, "gres/gpu", 8) == 0) ||
			   (klen > 9 && strncmp(p, "gres/gpu:", 9) == 0)) {
			/* Typed counts repeat the untyped one: take the
			 * untyped count when present, else sum the types. */
			if (*end != ',' && *end != '\0')
				return -EINVAL;
			if (n > UINT32_MAX - gpus)
				return -EINVAL;
			if (klen == 8) {
				work.alloc_gpus = (uint32_t)n;
				saw_gpu = true;
			} else {
				gpus += (uint32_t)n;
			}
		} else {
			/* billing=, energy=, license/... : skip the
			 * value, which may carry a unit. */
			while (*end != ',' && *end != '\0')
				end++;
		}
		p = *end == ',' ? end + 1 : end;
	}
	if (!saw_gpu && gpus > 0)
		work.alloc_gpus = gpus;
	*meta = work;
	return 0;
}
