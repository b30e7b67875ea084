/* checks_sacct.c - the contract of ceems-sacct's parsers of outside
 * input (tools/sacct/sacct_*.h), as a fuzz check: the -S/-E time forms, the
 * --format list (sacct's names, prefixes and ALL), the --units letter,
 * the -j job ids (with array tasks) and lists (with ranges) and a
 * record's "series" member.  Shared
 * by tests/fuzz/fuzz_sacct.c and tests/unit/test_fuzz_parsers.c like
 * the checks of checks.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "sacct/sacct_fields.h"
#include "sacct/sacct_query.h"
#include "sacct/sacct_spool.h"
#include "sacct/sacct_time.h"
#include "sacct/sacct_units.h"
#include "sacct/sacct_jobs.h"
#include "sacct/sacct_slurm.h"

#define FUZZ_NOW 1741789845

static int
terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static size_t
digits(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += *s >= '0' && *s <= '9';
	return n;
}

/* Slurm's sacct output, any bytes: matched to two rows, or refused
 * with a message and no cell filled; a filled cell is a column ceems
 * leaves empty. */
static const char *
check_slurm_output(const char *data, size_t len)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_rows rows = { 0 };
	struct sacct_row *row;
	struct sacct_slurm *s;
	const char *const *cells;
	const char *why = NULL;
	char err[256];
	size_t n = 0, i;
	int ret;

	if (sacct_fields_format_parse("JobID,AdminComment,Comment%20", cols,
				      SACCT_MAX_COLUMNS, &n, err, sizeof(err)) < 0)
		return "the fixed --format list was refused";
	for (i = 0; i < 2; i++) {
		if ((row = sacct_row_add(&rows)) == NULL)
			return NULL;	/* out of memory: nothing to check */
		snprintf(row->cluster, sizeof(row->cluster), "c");
		row->jobid = 7;
		row->start_time = 86400;
		snprintf(row->step, sizeof(row->step), "%s", i == 0 ? "" : "batch");
	}
	if ((s = sacct_slurm_new(cols, n, &rows)) == NULL) {
		sacct_row_free(&rows);
		return NULL;
	}
	memset(err, 'x', sizeof(err));
	if (sacct_slurm_append(s, data, len) < 0)
		goto out;
	ret = sacct_slurm_match(s, err, sizeof(err));
	cells = sacct_slurm_cells(s);
	if (ret != 0 && ret != -1)
		why = "sacct_slurm_match: returned neither 0 nor -1";
	else if (ret < 0 && (cells != NULL || !terminated(err, sizeof(err))))
		why = "sacct_slurm_match: filled cells or gave no message on error";
	for (i = 0; why == NULL && ret == 0 && i < 2 * n; i++)
		if (cells[i] != NULL &&
		    cols[i % n].field->status != SACCT_FIELD_EMPTY)
			why = "sacct_slurm_match: filled a column ceems fills";
out:
	sacct_slurm_free(s);
	sacct_row_free(&rows);
	return why;
}

const char *
fuzz_check_sacct(const char *data, size_t len)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_jobsel sel;
	struct sacct_series s;
	char err[256], small[16];
	time_t t = 12345;
	size_t n = 0, i;
	int ret, unit = -1;

	memset(err, 'x', sizeof(err));
	ret = sacct_time_parse(data, FUZZ_NOW, &t, err, sizeof(err));
	if (ret != 0 && ret != -1)
		return "sacct_time_parse: returned neither 0 nor -1";
	if (ret < 0 && (t != 12345 || !terminated(err, sizeof(err)) || err[0] == '\0'))
		return "sacct_time_parse: changed the time or gave no message on error";
	if (ret == 0 && (t < -(time_t)1e15 || t > (time_t)1e15))
		return "sacct_time_parse: a time out of any sane range";
	memset(small, 'x', sizeof(small));
	if (ret < 0 && (sacct_time_parse(data, FUZZ_NOW, &t, small, 8) != -1 ||
			!terminated(small, 8) || small[8] != 'x'))
		return "sacct_time_parse: overran a short message buffer";

	ret = sacct_fields_format_parse(data, cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err));
	if (ret != 0 && ret != -1)
		return "sacct_fields_format_parse: returned neither 0 nor -1";
	if (ret < 0 && (n != 0 || !terminated(err, sizeof(err))))
		return "sacct_fields_format_parse: changed the columns or no message on error";
	for (i = 0; ret == 0 && i < n; i++)
		if (cols[i].field == NULL || cols[i].width < 0 || cols[i].width > 1000)
			return "sacct_fields_format_parse: a column without a field or a bad width";
	/* Every column a list names formats an unknown row (a field not
	 * kept has no formatter: its cell is empty). */
	if (ret == 0) {
		struct sacct_row row;
		char cell[SACCT_CELL_MAX];

		sacct_row_init(&row);
		for (i = 0; i < n; i++) {
			memset(cell, 'x', sizeof(cell));
			cell[0] = '\0';
			if (cols[i].field->format != NULL)
				cols[i].field->format(&row, cell, sizeof(cell));
			if (!terminated(cell, sizeof(cell)))
				return "a field's formatter left its cell unterminated";
			if (cols[i].field->format == NULL &&
			    cols[i].field->status != SACCT_FIELD_EMPTY)
				return "a field without a formatter is not said empty";
		}
	}

	if (ret == 0 && (n == 0 || n > SACCT_MAX_COLUMNS))
		return "sacct_fields_format_parse: accepted no columns or too many";

	ret = sacct_units_parse(data, &unit);
	if (ret != 0 && ret != -1)
		return "sacct_units_parse: returned neither 0 nor -1";
	if (ret == 0 && (unit < SACCT_UNIT_KILO || unit > SACCT_UNIT_PETA ||
			 strchr("KkMmGgTtPp", data[0]) == NULL))
		return "sacct_units_parse: a unit that is not K, M, G, T or P";

	ret = sacct_merge_jobsel_parse(data, &sel);
	if (ret != 0 && ret != -1)
		return "sacct_merge_jobsel_parse: returned neither 0 nor -1";
	if (ret == 0 && (sel.jobid == 0 || sel.jobid == UINT32_MAX ||
			 !terminated(sel.step, sizeof(sel.step))))
		return "sacct_merge_jobsel_parse: a bad job id or step accepted";
	if (ret == 0 && sel.array_task != UINT32_MAX &&
	    (memchr(data, '_', len) == NULL || data[strspn(data, "0123456789")] != '_'))
		return "sacct_merge_jobsel_parse: an array task without JOBID_TASK";

	/* The -j list; ranges kept small here (a range may give a million
	 * ids, too slow for every mutation). */
	if (memchr(data, '[', len) == NULL || digits(data) <= 8) {
		struct sacct_query q = { 0 };

		memset(err, 'x', sizeof(err));
		ret = sacct_jobs_add_list(&q, data, err, sizeof(err));
		if (ret != 0 && ret != -1)
			return "sacct_jobs_add_list: returned neither 0 nor -1";
		if (ret < 0 && !terminated(err, sizeof(err)))
			return "sacct_jobs_add_list: no message on error";
		for (i = 0; i < q.njobs; i++)
			if (q.jobs[i].jobid == 0 || q.jobs[i].jobid == UINT32_MAX)
				return "sacct_jobs_add_list: a bad job id accepted";
		if (ret == 0 && q.njobs == 0 && strspn(data, ",") != strlen(data))
			return "sacct_jobs_add_list: an entry that gave no job";
		free(q.jobs);
	}

	ret = sacct_spool_series_parse(data, len, &s, err, sizeof(err));
	if (ret != 0 && ret != -1)
		return "sacct_spool_series_parse: returned neither 0 nor -1";
	if (ret < 0 && (s.rows != NULL || s.present))
		return "sacct_spool_series_parse: left rows behind on error";
	for (i = 0; ret == 0 && i < s.nrows; i++)
		if (!isfinite(s.rows[i][SACCT_S_T]))
			return "sacct_spool_series_parse: a row without a time";
	free(s.rows);
	return check_slurm_output(data, len);
}
