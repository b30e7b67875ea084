/* report_row.h - one row of the period's jobs as COPY's text format
 * sends it (report_fetch.c's jobs_sql), into a report_job. */
#ifndef REPORT_ROW_H
#define REPORT_ROW_H

#include <stddef.h>

#include "report_rules.h"

/* The columns of jobs_sql. */
#define REPORT_ROW_FIELDS 23

/* Split LINE (tab-separated, maybe newline-ended; written to) into J:
 * \N is NULL (NaN), names cleaned to printable ASCII, since_first_s the
 * job's start (the caller makes it relative).  -1, J untouched, when the
 * row has not REPORT_ROW_FIELDS fields. */
int report_row_parse(char *line, size_t len, struct report_job *j);

#endif /* REPORT_ROW_H */
