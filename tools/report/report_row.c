/* report_row.c - a row of COPY's text format into a report_job: the
 * reports' one parser of what the database sends, held by
 * tests/unit/test_report_row (cut and mutated rows). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_buf.h"
#include "report_row.h"


/* One COPY text field: NULL is \N; a backslash escapes the next byte
 * (\t, \n and \r stand for their control characters, cleaned to '?'
 * below like any other). */
static double
num(const char *f)
{
	if (strcmp(f, "\\N") == 0)
		return NAN;
	return strtod(f, NULL);
}

static void
text(char *dst, size_t size, const char *f)
{
	char raw[256];
	size_t n = 0;

	if (strcmp(f, "\\N") == 0)
		f = "";
	for (; *f != '\0' && n + 1 < sizeof(raw); f++) {
		if (*f == '\\' && f[1] != '\0') {
			f++;
			/* a control character: cleaned to '?' below */
			raw[n++] = strchr("bfnrtv", *f) != NULL ? '\1' : *f;
			continue;
		}
		raw[n++] = *f;
	}
	raw[n] = '\0';
	/* Names reach mail headers, terminals and HTML: printable ASCII. */
	report_buf_clean(dst, size, raw);
}

int
report_row_parse(char *line, size_t len, struct report_job *j)
{
	char *field[REPORT_ROW_FIELDS];
	size_t k = 0;

	if (len > 0 && line[len - 1] == '\n')
		line[--len] = '\0';
	field[k++] = line;
	for (size_t i = 0; i < len; i++)
		if (line[i] == '\t') {
			line[i] = '\0';
			if (k == REPORT_ROW_FIELDS)
				return -1;
			field[k++] = line + i + 1;
		}
	if (k != REPORT_ROW_FIELDS)
		return -1;
	memset(j, 0, sizeof(*j));
	j->jobid = strtoll(field[0], NULL, 10);
	text(j->user, sizeof(j->user), field[1]);
	text(j->account, sizeof(j->account), field[2]);
	text(j->state, sizeof(j->state), field[3]);
	j->elapsed_s = num(field[4]);
	j->time_limit_min = num(field[5]);
	j->alloc_cpus = num(field[6]);
	j->cpu_time_s = num(field[7]);
	j->req_mem_bytes = num(field[8]);
	j->mem_peak_bytes = num(field[9]);
	j->alloc_gpus = num(field[10]);
	j->gpu_util_pct = num(field[11]);
	j->package_static_j = num(field[12]);
	j->dram_static_j = num(field[13]);
	j->gpu_j = num(field[14]);
	j->total_j = num(field[15]);
	j->emissions_g = num(field[16]);
	j->coverage = num(field[17]);
	j->gap_s = num(field[18]);
	j->wait_s = num(field[19]);
	j->nnodes = num(field[20]);
	j->nodes_reported = num(field[21]);
	/* the start, made relative to the user's first job by the caller */
	j->since_first_s = num(field[22]);
	return 0;
}

