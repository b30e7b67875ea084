/* step_ids.c - Slurm's names for a job's and a step's cgroup directories
 * and for a slurmstepd's process title (step_ids.h).  Pure text: the
 * callers read the files. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/step_ids.h"

#define SLUID_LEN 14

bool
ceems_step_ids_is_sluid(const char *name, size_t len)
{
	if (len != SLUID_LEN || name[0] != 's')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!((name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9')))
			return false;
	return true;
}

/* Whether WORD (LEN bytes) is S. */
static bool
word_is(const char *word, size_t len, const char *s)
{
	return strlen(s) == len && memcmp(word, s, len) == 0;
}

bool
ceems_step_ids_is_step_dir(const char *name, size_t len)
{
	const char *s = name + 5;
	size_t n = len - 5;

	if (len <= 5 || memcmp(name, "step_", 5) != 0)
		return false;
	if (word_is(s, n, "batch") || word_is(s, n, "extern") ||
	    word_is(s, n, "interactive"))
		return true;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

bool
ceems_step_ids_name_ok(const char *id)
{
	if (id[0] == '\0')
		return false;
	for (const char *p = id; *p != '\0'; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      *p == '+'))
			return false;
	return true;
}

/* JOB and STEP as the agent names them, from "42" and "batch"/"0"
 * (LEN bytes of STEP_TEXT).  0 or -EINVAL. */
static int
take_ids(const char *job_text, const char *step_text, size_t len,
	 uint32_t *jobid, char *step, size_t step_size)
{
	char *end;
	unsigned long id;

	if (!isdigit((unsigned char)job_text[0]))
		return -EINVAL;
	errno = 0;
	id = strtoul(job_text, &end, 10);
	if (errno != 0 || end == job_text || id == 0 || id > UINT32_MAX)
		return -EINVAL;
	if (len == 0 || len >= step_size)
		return -EINVAL;
	memcpy(step, step_text, len);
	step[len] = '\0';
	if (!ceems_step_ids_name_ok(step))
		return -EINVAL;
	*jobid = (uint32_t)id;
	return 0;
}

static size_t
word_len(const char *s)
{
	size_t n = 0;

	while (isalnum((unsigned char)s[n]))
		n++;
	return n;
}

int
ceems_step_ids_from_cgroup(const char *text, uint32_t *jobid, char *step,
			   size_t step_size)
{
	const char *job = strstr(text, "/job_");
	const char *st;

	for (; job != NULL; job = strstr(job + 1, "/job_")) {
		st = job + 5;
		while (isdigit((unsigned char)*st))
			st++;
		if (strncmp(st, "/step_", 6) != 0)
			continue;
		return take_ids(job + 5, st + 6, word_len(st + 6), jobid, step,
				step_size);
	}
	return -EINVAL;
}

int
ceems_step_ids_from_title(const char *text, uint32_t *jobid, char *step,
			  size_t step_size)
{
	const char *open = strstr(text, "slurmstepd: [");
	const char *dot;

	if (open == NULL)
		return -EINVAL;
	open += strlen("slurmstepd: [");
	dot = open;
	while (isdigit((unsigned char)*dot))
		dot++;
	if (*dot != '.' || dot[1 + word_len(dot + 1)] != ']')
		return -EINVAL;
	return take_ids(open, dot + 1, word_len(dot + 1), jobid, step,
			step_size);
}
