/* report_row.h - one row of the period's jobs as binary COPY sends it
 * (report_fetch.c's jobs_sql), into a report_job. */
#ifndef REPORT_ROW_H
#define REPORT_ROW_H

#include <stddef.h>

#include "report_rules.h"

/* The columns of jobs_sql: the job id (int8), three names (text), then
 * REPORT_ROW_FIELDS - 4 numbers (float8). */
#define REPORT_ROW_FIELDS 23

/* The binary COPY's header at the start of BUF (it comes with the first
 * row): its length, to skip, or -1 when BUF does not start with one. */
long report_row_header(const unsigned char *buf, size_t len);

/* One tuple of LEN bytes into J: NULL numbers are NaN, NULL names
 * empty, names cleaned to printable ASCII, since_first_s the job's start
 * (the caller makes it relative).  1: a row; 0: the end-of-data mark
 * (J untouched); -1, J untouched: any other shape (a field count, a
 * length, a type's size, bytes left over). */
int report_row_parse(const unsigned char *buf, size_t len, struct report_job *j);

#endif /* REPORT_ROW_H */
