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

static int
series_from_json(const struct json_object *obj, struct sacct_series *s,
		 char *err, size_t err_size)
{
	struct json_object *cols, *rows, *row, *v;
	int map[64];
	size_t ncols, nrows, i, j;
	uint64_t res;
	double x;
	int k;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_error(err, err_size, "series: not an object");
	if ((v = ceems_json_get(obj, "resolution_s")) == NULL ||
	    ceems_json_read_uint(v, "series.resolution_s", 1, 86400, &res, err, err_size) < 0)
		return ceems_json_error(err, err_size, "series: resolution_s missing or out of range");
	cols = ceems_json_get(obj, "columns");
	rows = ceems_json_get(obj, "rows");
	if (cols == NULL || !json_object_is_type(cols, json_type_array) ||
	    rows == NULL || !json_object_is_type(rows, json_type_array))
		return ceems_json_error(err, err_size, "series: columns and rows must be arrays");
	ncols = json_object_array_length(cols);
	if (ncols == 0 || ncols > 64)
		return ceems_json_error(err, err_size, "series: 1 to 64 columns");
	for (i = 0; i < ncols; i++) {
		const char *name;

		v = json_object_array_get_idx(cols, i);
		if (!json_object_is_type(v, json_type_string))
			return ceems_json_error(err, err_size, "series: a column name is not a string");
		name = json_object_get_string(v);
		map[i] = -1;
		for (k = 0; k < SACCT_S_NCOLS; k++)
			if (strcmp(name, sacct_series_names[k]) == 0)
				map[i] = k;
	}
	nrows = json_object_array_length(rows);
	if (nrows > 10000000)
		return ceems_json_error(err, err_size, "series: too many rows");
	s->rows = nrows > 0 ? calloc(nrows, sizeof(s->rows[0])) : NULL;
	if (nrows > 0 && s->rows == NULL)
		return ceems_json_error(err, err_size, "series: out of memory");
	for (i = 0; i < nrows; i++) {
		for (k = 0; k < SACCT_S_NCOLS; k++)
			s->rows[i][k] = NAN;
		row = json_object_array_get_idx(rows, i);
		if (!json_object_is_type(row, json_type_array) ||
		    json_object_array_length(row) != ncols)
			goto bad;
		for (j = 0; j < ncols; j++) {
			v = json_object_array_get_idx(row, j);
			if (v == NULL)
				continue;	/* null: absent */
			if (!json_object_is_type(v, json_type_int) &&
			    !json_object_is_type(v, json_type_double))
				goto bad;
			x = json_object_get_double(v);
			if (!isfinite(x))
				goto bad;
			if (map[j] >= 0)
				s->rows[i][map[j]] = x;
		}
		if (!isfinite(s->rows[i][SACCT_S_T]))
			goto bad;
	}
	s->present = true;
	s->resolution_s = (int)res;
	s->nrows = nrows;
	return 0;
bad:
	free(s->rows);
	s->rows = NULL;
	return ceems_json_error(err, err_size, "series: row %zu is not an array of %zu numbers (or null) with a time", i, ncols);
}

int
sacct_series_parse(const char *text, size_t len, struct sacct_series *s,
		   char *err, size_t err_size)
{
	struct json_object *obj;
	int r;

	memset(s, 0, sizeof(*s));
	if ((obj = ceems_json_parse(text, len, true, err, err_size)) == NULL)
		return -1;
	r = series_from_json(obj, s, err, err_size);
	json_object_put(obj);
	return r < 0 ? -1 : 0;
}

/* Decode TEXT; a "series" member (kept beside the record by agents that
 * record time series) is taken out first and parsed on its own. */
static int
decode(const char *text, size_t len, struct ceems_job_record *r,
       struct sacct_series *s, char *err, size_t err_size)
{
	struct json_object *obj, *series;
	const char *rest;
	int ret;

	if (memmem(text, len, "\"series\"", 8) == NULL)
		return ceems_record_decode(text, len, r, err, err_size);
	if ((obj = ceems_json_parse(text, len, true, err, err_size)) == NULL)
		return -EINVAL;
	series = ceems_json_get(obj, "series");
	if (series == NULL || !json_object_is_type(obj, json_type_object)) {
		json_object_put(obj);
		return ceems_record_decode(text, len, r, err, err_size);
	}
	json_object_get(series);
	json_object_object_del(obj, "series");
	rest = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	ret = rest != NULL ? ceems_record_decode(rest, strlen(rest), r, err, err_size) : -ENOMEM;
	if (ret == 0 && series_from_json(series, s, err, err_size) < 0)
		ret = -EINVAL;
	json_object_put(series);
	json_object_put(obj);
	return ret;
}

static int
read_record(int dirfd, const char *name, char *buf, size_t size,
	    size_t *len)
{
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	while (got < size) {
		n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got == size)
		return -EFBIG;
	*len = got;
	return 0;
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
	if (q->njobs > 0) {
		for (i = 0, hit = false; i < q->njobs; i++)
			hit = hit || q->jobs[i].jobid == r->meta.jobid ||
				(r->meta.array_job_id != CEEMS_UNKNOWN_U32 &&
				 q->jobs[i].jobid == r->meta.array_job_id);
		if (!hit)
			return false;
	}
	return true;
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
	size_t len = 0, bufsize = 2 * CEEMS_RECORD_MAX + 1;
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
	/* Records with a series may be larger than a bare record. */
	if ((buf = malloc(bufsize)) == NULL) {
		closedir(d);
		snprintf(err, err_size, "out of memory");
		return -ENOMEM;
	}
	while ((de = readdir(d)) != NULL) {
		if (!ceems_spool_is_record_name(de->d_name))
			continue;
		if (read_record(dirfd, de->d_name, buf, bufsize, &len) < 0) {
			(*skipped)++;
			continue;
		}
		memset(&ts, 0, sizeof(ts));
		if (decode(buf, len, &tmp, &ts, derr, sizeof(derr)) < 0) {
			(*skipped)++;
			continue;
		}
		if (!may_select(q, &tmp)) {
			free(ts.rows);
			continue;
		}
		if ((r = sacct_records_add(recs, &s)) == NULL) {
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
	sacct_records_sort(recs);
	return 0;
}
