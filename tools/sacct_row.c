/* sacct_row.c - ceems-sacct's row: initialisation, a growable array and
 * the order rows are printed in (see sacct_row.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_row.h"

void
sacct_row_init(struct sacct_row *row)
{
	memset(row, 0, sizeof(*row));
	row->array_job_id = UINT32_MAX;
	row->array_task_id = UINT32_MAX;
	row->exit_code = -1;
	row->time_limit_min = UINT32_MAX;
	row->elapsed_s = row->cpu_s = row->cpu_eff = NAN;
	row->mem_peak_bytes = row->mem_eff = NAN;
	row->gpu_util_pct = row->gpu_mem_eff = NAN;
	row->package_j = row->dram_j = row->gpu_j = row->node_j = NAN;
	row->total_j = row->quality = row->emissions_g = NAN;
	row->g_per_kwh = row->pue = NAN;
}

int
sacct_rows_reserve(struct sacct_rows *rows, size_t more)
{
	struct sacct_row *v;

	if (more <= rows->cap - rows->n)
		return 0;
	if (more > SIZE_MAX / sizeof(*v) - rows->n ||
	    (v = realloc(rows->v, (rows->n + more) * sizeof(*v))) == NULL)
		return -1;
	rows->v = v;
	rows->cap = rows->n + more;
	return 0;
}

struct sacct_row *
sacct_rows_add(struct sacct_rows *rows)
{
	if (rows->n == rows->cap &&
	    sacct_rows_reserve(rows, rows->cap != 0 ? rows->cap : 64) < 0)
		return NULL;
	sacct_row_init(&rows->v[rows->n]);
	return &rows->v[rows->n++];
}

void
sacct_rows_free(struct sacct_rows *rows)
{
	free(rows->v);
	rows->v = NULL;
	rows->n = rows->cap = 0;
}

/* batch, extern, interactive, then numbered steps in order, then the
 * rest by name. */
static int
step_rank(const char *id, unsigned long *num)
{
	char *end;

	*num = 0;
	if (id[0] == '\0')
		return 0;
	if (strcmp(id, "batch") == 0)
		return 1;
	if (strcmp(id, "extern") == 0)
		return 2;
	if (strcmp(id, "interactive") == 0)
		return 3;
	*num = strtoul(id, &end, 10);
	if (end != id && *end == '\0')
		return 4;
	return 5;
}

static int
cmp_rows(const void *pa, const void *pb)
{
	const struct sacct_row *a = pa, *b = pb;
	unsigned long na, nb;
	int c, ra, rb;

	if (a->start_time != b->start_time)
		return a->start_time < b->start_time ? -1 : 1;
	if ((c = strcmp(a->cluster, b->cluster)) != 0)
		return c;
	if (a->jobid != b->jobid)
		return a->jobid < b->jobid ? -1 : 1;
	ra = step_rank(a->step, &na);
	rb = step_rank(b->step, &nb);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (na != nb)
		return na < nb ? -1 : 1;
	return strcmp(a->step, b->step);
}

void
sacct_rows_sort(struct sacct_rows *rows)
{
	if (rows->n > 1)
		qsort(rows->v, rows->n, sizeof(rows->v[0]), cmp_rows);
}
