/* sacct_jobs.c - sacct's -j list (see sacct_jobs.h): the commas split
 * entries outside brackets only, and an entry with a bracketed range is
 * each of its numbers between the text before and after it, parsed as
 * one entry (sacct_merge_jobsel_parse). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sacct_jobs.h"
#include "base/text.h"

#define ENTRY_MAX 64

static int
bad(const char *entry, size_t len, char *err, size_t err_size)
{
	char shown[ENTRY_MAX], cut[ENTRY_MAX];

	snprintf(cut, sizeof(cut), "%.*s", (int)(len < 40 ? len : 40), entry);
	ceems_text_safe(shown, sizeof(shown), cut);
	/* sacct's JOBID+OFFSET: ceems keeps each component of a
	 * heterogeneous job under its own job id, not its leader's */
	if (memchr(entry, '+', len) != NULL)
		snprintf(err, err_size, "'%s%s' names a component of a heterogeneous job: give its own job id (sacct's JobIDRaw)",
			 shown, len > 40 ? "..." : "");
	else
		snprintf(err, err_size, "'%s%s' is not JOBID, JOBID_TASK or either .STEP",
			 shown, len > 40 ? "..." : "");
	return -1;
}

/* One entry without brackets, TEXT of LEN bytes. */
static int
add_one(struct sacct_query *q, const char *text, size_t len, char *err,
	size_t err_size)
{
	struct sacct_jobsel sel;
	char entry[ENTRY_MAX];

	if (len >= sizeof(entry))
		return bad(text, len, err, err_size);
	memcpy(entry, text, len);
	entry[len] = '\0';
	if (sacct_merge_jobsel_parse(entry, &sel) < 0)
		return bad(text, len, err, err_size);
	if (sacct_merge_jobsel_add(q, &sel) < 0) {
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* An entry PRE[RANGES]POST: each number of RANGES ("1-3,7") between PRE
 * and POST. */
static int
add_range(struct sacct_query *q, const char *e, size_t len, const char *open,
	  const char *close, char *err, size_t err_size)
{
	char buf[ENTRY_MAX];
	const char *p = open + 1;
	unsigned long lo, hi, v, count = 0;
	char *end;
	int n, r;

	while (p < close) {
		errno = 0;
		if (!isdigit((unsigned char)*p))
			return bad(e, len, err, err_size);
		lo = hi = strtoul(p, &end, 10);
		if (*end == '-') {
			if (!isdigit((unsigned char)end[1]))
				return bad(e, len, err, err_size);
			hi = strtoul(end + 1, &end, 10);
		}
		if (errno != 0 || end > close || (*end != ',' && end != close) ||
		    hi < lo || hi - lo >= SACCT_JOBS_RANGE_MAX - count)
			return bad(e, len, err, err_size);
		count += hi - lo + 1;
		for (v = lo; v <= hi; v++) {
			n = snprintf(buf, sizeof(buf), "%.*s%lu%.*s",
				     (int)(open - e), e, v,
				     (int)(e + len - close - 1), close + 1);
			if (n < 0 || (size_t)n >= sizeof(buf))
				return bad(e, len, err, err_size);
			r = add_one(q, buf, (size_t)n, err, err_size);
			if (r == -ENOMEM)
				return -1;	/* ERR says so */
			if (r < 0)
				return bad(e, len, err, err_size);
		}
		p = end + (*end == ',');
	}
	return count > 0 ? 0 : bad(e, len, err, err_size);
}

int
sacct_jobs_add_list(struct sacct_query *q, const char *list, char *err,
		    size_t err_size)
{
	const char *p = list, *end, *open, *close;
	size_t len;

	for (;; p = end + 1) {
		/* the entry's end: a comma outside brackets */
		for (end = p, open = close = NULL; *end != '\0'; end++) {
			if (*end == '[' && open == NULL)
				open = end;
			else if (*end == ']' && open != NULL && close == NULL)
				close = end;
			else if (*end == ',' && (open == NULL || close != NULL))
				break;
		}
		len = (size_t)(end - p);
		if (open != NULL && (close == NULL ||
		    memchr(close + 1, '[', (size_t)(end - close - 1)) != NULL))
			return bad(p, len, err, err_size);
		if (len > 0 && (open != NULL ?
		    add_range(q, p, len, open, close, err, err_size) :
		    add_one(q, p, len, err, err_size)) < 0)
			return -1;
		if (*end == '\0')
			return 0;
	}
}
