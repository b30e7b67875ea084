/* sacct_explain.h - what --explain adds to a job's summary
 * (sacct_explain.c). */
#ifndef CEEMS_SACCT_EXPLAIN_H
#define CEEMS_SACCT_EXPLAIN_H

#include <stdio.h>

#include "model/measure.h"

/* Where the error bound of R's energy comes from, per domain and cause,
 * into OUT; nothing when R has no energy. */
void sacct_explain_err(FILE *out, const struct ceems_agent_job_report *r);

#endif
