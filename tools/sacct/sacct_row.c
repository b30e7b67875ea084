/* sacct_row.c - ceems-sacct's row: initialisation, a growable array and
 * the order rows are printed in (see sacct_row.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_row.h"

void
sacct_row_add_known(double *sum, double x)
{
	if (isfinite(x))
		*sum = isfinite(*sum) ? *sum + x : x;
}

void
sacct_row_init(struct sacct_row *row)
{
	memset(row, 0, sizeof(*row));
	row->name = row->nodes = "";
	row->array_job_id = UINT32_MAX;
	row->array_task_id = UINT32_MAX;
	row->exit_code = -1;
	row->time_limit_min = UINT32_MAX;
	row->elapsed_s = row->cpu_s = row->cpu_eff = NAN;
	row->mem_peak_bytes = row->mem_eff = NAN;
	row->gpu_util_pct = NAN;
	row->gpu_sm_pct = row->gpu_mem_peak_bytes = row->gpu_mem_total_bytes = NAN;
	row->package_j = row->dram_j = row->gpu_j = row->node_j = NAN;
	row->total_j = row->quality = row->emissions_g = NAN;
	row->g_per_kwh = row->pue = NAN;
	row->io_read_bytes = row->io_write_bytes = NAN;
	row->net_in_bytes = row->net_out_bytes = NAN;
	row->io_nodes = row->net_nodes = NAN;
	row->ntasks = NAN;
	row->perf_ctxsw = row->perf_page_faults = row->perf_migrations = NAN;
	row->perf_cycles = row->perf_instructions = NAN;
	row->ci_fallback = row->idle_unlearned = NAN;
	row->work = row->energy_per_work = NAN;
	row->energy_err_j = NAN;
	row->saving_g = NAN;
}

int
sacct_row_reserve(struct sacct_rows *rows, size_t more)
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
sacct_row_add(struct sacct_rows *rows)
{
	if (rows->n == rows->cap &&
	    sacct_row_reserve(rows, rows->cap != 0 ? rows->cap : 64) < 0)
		return NULL;
	sacct_row_init(&rows->v[rows->n]);
	return &rows->v[rows->n++];
}

/* The rows' text: blocks of strings, each string written once and kept
 * until the rows are freed. */
#define TEXT_BLOCK_MIN 65536

struct sacct_text_block {
	struct sacct_text_block *next;
	size_t used, size;
	char bytes[];
};

const char *
sacct_row_text(struct sacct_rows *rows, const char *s, size_t max)
{
	struct sacct_text_block *b = rows->text;
	size_t len = max > 0 ? strnlen(s, max - 1) : 0;
	char *copy;

	if (len == 0)
		return "";
	if (b == NULL || b->size - b->used < len + 1) {
		size_t size = len + 1 > TEXT_BLOCK_MIN ? len + 1 : TEXT_BLOCK_MIN;

		if ((b = malloc(sizeof(*b) + size)) == NULL)
			return NULL;
		b->next = rows->text;
		b->used = 0;
		b->size = size;
		rows->text = b;
	}
	copy = b->bytes + b->used;
	memcpy(copy, s, len);
	copy[len] = '\0';
	b->used += len + 1;
	return copy;
}

void
sacct_row_free(struct sacct_rows *rows)
{
	struct sacct_text_block *b, *next;

	for (b = rows->text; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	rows->text = NULL;
	free(rows->v);
	rows->v = NULL;
	rows->n = rows->cap = 0;
}

/* The job's strings are copied whole, terminator and all (fields of the
 * same size): a heavy user's month has 36,000 steps, and formatting each
 * string cost more than its bytes. */
int
sacct_row_step_of(struct sacct_rows *rows, struct sacct_row *st,
		   const struct sacct_row *job, const char *id)
{
	memcpy(st->cluster, job->cluster, sizeof(st->cluster));
	st->jobid = job->jobid;
	st->array_job_id = job->array_job_id;
	st->array_task_id = job->array_task_id;
	st->uid = job->uid;
	snprintf(st->step, sizeof(st->step), "%s", id);
	if ((st->name = sacct_row_text(rows, st->step, sizeof(st->step))) == NULL)
		return -1;
	memcpy(st->account, job->account, sizeof(st->account));
	memcpy(st->partition, job->partition, sizeof(st->partition));
	memcpy(st->qos, job->qos, sizeof(st->qos));
	memcpy(st->state, job->state, sizeof(st->state));
	st->start_time = job->start_time;
	return 0;
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

bool
sacct_row_is_job(const struct sacct_row *row)
{
	return row->step[0] == '\0' && row->part_node == NULL;
}

/* The job, its nodes' parts, then its steps. */
static int
row_rank(const struct sacct_row *r, unsigned long *num)
{
	int rank;

	if (r->part_node != NULL) {
		*num = 0;
		return 1;
	}
	rank = step_rank(r->step, num);
	return rank == 0 ? 0 : rank + 1;
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
	ra = row_rank(a, &na);
	rb = row_rank(b, &nb);
	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (na != nb)
		return na < nb ? -1 : 1;
	if (a->part_node != NULL && b->part_node != NULL)
		return strcmp(a->part_node, b->part_node);
	return strcmp(a->step, b->step);
}

/* For the sort of pointers below: equal rows keep their order. */
static int
cmp_row_pointers(const void *pa, const void *pb)
{
	const struct sacct_row *const *a = pa, *const *b = pb;
	int c = cmp_rows(*a, *b);

	if (c != 0)
		return c;
	return *a < *b ? -1 : *a > *b;
}

/* A row is 592 bytes, and a heavy user's month with its steps is 55,000
 * of them: a sort that moves rows copies each one log2(n) times, half a
 * gigabyte for that month.  Pointers are sorted instead and each row copied once
 * into its place.  A listing mostly comes in order already (one user's
 * jobs by the index that found them, each followed by its steps): a
 * first pass sees it and leaves it. */
void
sacct_row_sort(struct sacct_rows *rows)
{
	const struct sacct_row **order;
	struct sacct_row *sorted;
	size_t i, n = rows->n;

	for (i = 1; i < n && cmp_rows(&rows->v[i - 1], &rows->v[i]) <= 0; i++)
		;
	if (i >= n)
		return;
	order = malloc(n * sizeof(*order));
	sorted = malloc(n * sizeof(*sorted));
	if (order == NULL || sorted == NULL) {
		/* Out of memory for the copy: sort in place, slowly. */
		free(order);
		free(sorted);
		qsort(rows->v, n, sizeof(rows->v[0]), cmp_rows);
		return;
	}
	for (i = 0; i < n; i++)
		order[i] = &rows->v[i];
	qsort(order, n, sizeof(*order), cmp_row_pointers);
	for (i = 0; i < n; i++)
		sorted[i] = *order[i];
	free(order);
	free(rows->v);
	rows->v = sorted;
	rows->cap = n;
}
