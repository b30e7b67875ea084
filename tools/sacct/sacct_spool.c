/* sacct_spool.c - the spool backend of ceems-sacct (see sacct_spool.h).
 * Every file is opened relative to the spool's descriptor, without
 * following symlinks, and read with a size bound; a record that does not
 * decode is skipped, never guessed at. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/agent_series.h"
#include "sacct_spool.h"
#include "record/spool.h"

int
sacct_spool_open(const char *dir, char *err, size_t err_size)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		snprintf(err, err_size, "cannot open the spool %s: %s%s", dir,
			 strerror(errno), errno == EACCES ?
			 " (ceems-sacct must be installed setgid to the spool's group: doc/install.md)" : "");
		return -errno;
	}
	return fd;
}

/* The columns of both are in the order of ceems_series_columns (the
 * golden --series cases hold the names to the figures). */
_Static_assert(SACCT_S_NODE - SACCT_S_PACKAGE + 1 == CEEMS_DOMAIN_COUNT,
	       "a series column per energy domain");
_Static_assert(SACCT_S_CTX_SWITCHES - SACCT_S_READ + 1 == CEEMS_SC_NROW,
	       "a series column per count a row keeps");
_Static_assert(SACCT_S_NCOLS == CEEMS_SERIES_NCOLUMNS,
	       "the agent's columns, named by ceems_series_columns");

/* The rows of a series as the agent keeps them (lib/model/agent_series.h)
 * into S, one number a column, NaN where unknown.  0 or -1 with ERR. */
static int
series_copy(const struct ceems_series *from, struct sacct_series *s,
	    char *err, size_t err_size)
{
	const struct ceems_series_row *f;
	double *row;
	int c;

	memset(s, 0, sizeof(*s));
	if (from->nrows > 0 &&
	    (s->rows = calloc(from->nrows, sizeof(s->rows[0]))) == NULL)
		return ceems_json_util_error(err, err_size, "series: out of memory");
	for (size_t i = 0; i < from->nrows; i++) {
		f = &from->rows[i];
		row = s->rows[i];
		row[SACCT_S_T] = (double)f->t;
		row[SACCT_S_INTERVAL] = f->interval_s;
		row[SACCT_S_CPU] = f->cpu_s;
		row[SACCT_S_MEM] = f->mem_bytes;
		for (c = 0; c < CEEMS_DOMAIN_COUNT; c++)
			row[SACCT_S_PACKAGE + c] = f->joules[c];
		row[SACCT_S_GPU_UTIL] = f->gpu_util_pct;
		for (c = 0; c < CEEMS_SC_NROW; c++)
			row[SACCT_S_READ + c] = f->count[c];
		row[SACCT_S_IPC] = f->ipc;
	}
	s->present = true;
	s->resolution_s = (int)from->resolution_s;
	s->nrows = from->nrows;
	return 0;
}

int
sacct_spool_series_parse(const char *text, size_t len, struct sacct_series *s,
		   char *err, size_t err_size)
{
	struct ceems_series *series = NULL;
	struct json_object *obj;
	int r;

	memset(s, 0, sizeof(*s));
	if ((obj = ceems_json_util_parse(text, len, true, err, err_size)) == NULL)
		return -1;
	r = ceems_agent_series_from_json(obj, &series, err, err_size);
	json_object_put(obj);
	if (r == 0)
		r = series_copy(series, s, err, err_size);
	ceems_agent_series_free(series);
	return r < 0 ? -1 : 0;
}

/* Decode TEXT, once, with its "series" member (kept beside the record
 * by agents that record time series), read as the replay reads it. */
static int
decode(const char *text, size_t len, struct ceems_job_record *r,
       struct sacct_series *s, char *err, size_t err_size)
{
	struct ceems_series *series;
	int ret;

	ret = ceems_record_decode_series(text, len, r, &series, err, err_size);
	if (ret == 0 && series != NULL &&
	    series_copy(series, s, err, err_size) < 0)
		ret = -ENOMEM;
	ceems_agent_series_free(series);
	return ret;
}

/* What can be decided from one record alone: its identity (cluster,
 * job id, start) and owner are the same in every node record of a job,
 * so a record they rule out cannot change a job that is listed.  This
 * keeps memory to the window's jobs, not the whole spool's. */
static bool
may_select(const struct sacct_query *q, const struct ceems_job_record *r)
{
	size_t i;
	bool hit;

	if (q->only_uid != UINT32_MAX && r->meta.uid != q->only_uid)
		return false;
	if (r->meta.start_time >= (int64_t)q->end)
		return false;
	if (q->nclusters > 0) {
		for (i = 0, hit = false; i < q->nclusters; i++)
			hit = hit || strcmp(q->clusters[i], r->meta.cluster) == 0;
		if (!hit)
			return false;
	}
	return sacct_merge_query_names(q, r->meta.jobid,
				       r->meta.array_job_id == CEEMS_UNKNOWN_U32 ?
				       UINT32_MAX : r->meta.array_job_id,
				       r->meta.array_task_id, NULL);
}

int
sacct_spool_load(int dirfd, const struct sacct_query *q,
		 struct sacct_records *recs, size_t *skipped, char *err,
		 size_t err_size)
{
	struct ceems_job_record *r, tmp;
	struct sacct_series *s, ts;
	struct dirent *de;
	char *buf, derr[256];
	size_t len = 0, bufsize = CEEMS_RECORD_MAX + 1;
	ssize_t n;
	DIR *d;
	int fd;

	*skipped = 0;
	if ((fd = dup(dirfd)) < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			close(fd);
		snprintf(err, err_size, "cannot list the spool: %s", strerror(errno));
		return -errno;
	}
	rewinddir(d);
	if ((buf = malloc(bufsize)) == NULL) {
		closedir(d);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL) {
		if (!ceems_spool_is_record_name(de->d_name))
			continue;
		n = ceems_spool_read_file(dirfd, de->d_name, buf, bufsize,
					  derr, sizeof(derr));
		if (n < 0) {
			(*skipped)++;
			continue;
		}
		len = (size_t)n;
		memset(&ts, 0, sizeof(ts));
		if (decode(buf, len, &tmp, &ts, derr, sizeof(derr)) < 0) {
			(*skipped)++;
			continue;
		}
		if (!may_select(q, &tmp)) {
			free(ts.rows);
			continue;
		}
		if ((r = sacct_merge_records_add(recs, &s)) == NULL) {
			free(ts.rows);
			free(buf);
			closedir(d);
			snprintf(err, err_size, "out of memory");
			return -ENOMEM;
		}
		*r = tmp;
		*s = ts;
	}
	free(buf);
	closedir(d);
	sacct_merge_records_sort(recs);
	return 0;
}
