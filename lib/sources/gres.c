/* gres.c - Slurm's GPU allocation of a job on a node (gres_detail_str)
 * and the device files of GPU GRES indices (gres.conf).  See gres.h. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sources/gres.h"

/* GRES indices above this are garbage: no node has that many. */
#define GRES_INDEX_MAX 65535

static int
parse_index(const char **p, const char *end, uint32_t *out)
{
	uint32_t v = 0;
	const char *s = *p;

	if (s >= end || !isdigit((unsigned char)*s))
		return -EINVAL;
	while (s < end && isdigit((unsigned char)*s)) {
		v = v * 10 + (uint32_t)(*s - '0');
		if (v > GRES_INDEX_MAX)
			return -EINVAL;
		s++;
	}
	*p = s;
	*out = v;
	return 0;
}

/* Add A..B to the sorted set IDX (*N of MAX). */
static int
add_range(uint32_t a, uint32_t b, uint32_t *idx, size_t max, size_t *n)
{
	for (uint32_t v = a; v <= b; v++) {
		size_t i = 0;

		while (i < *n && idx[i] < v)
			i++;
		if (i < *n && idx[i] == v)
			continue;
		if (*n >= max)
			return -E2BIG;
		memmove(&idx[i + 1], &idx[i], (*n - i) * sizeof(idx[0]));
		idx[i] = v;
		(*n)++;
	}
	return 0;
}

/* "0-1,3" between P and END into the set. */
static int
parse_index_list(const char *p, const char *end, uint32_t *idx, size_t max,
		 size_t *n)
{
	while (p < end) {
		uint32_t a, b;
		int r;

		if (parse_index(&p, end, &a) < 0)
			return -EINVAL;
		b = a;
		if (p < end && *p == '-') {
			p++;
			if (parse_index(&p, end, &b) < 0 || b < a)
				return -EINVAL;
		}
		if ((r = add_range(a, b, idx, max, n)) < 0)
			return r;
		if (p < end && *p != ',')
			return -EINVAL;
		if (p < end)
			p++;
		if (p == end && end[-1] == ',')
			return -EINVAL;
	}
	return 0;
}

/* One entry, "gpu:a100:2(IDX:0-1)", between P and END. */
static int
parse_detail_entry(const char *p, const char *end, uint32_t *idx, size_t max,
		   size_t *n)
{
	const char *open = memchr(p, '(', (size_t)(end - p));
	size_t name_len = strcspn(p, ":(");

	if (name_len > (size_t)(end - p))
		name_len = (size_t)(end - p);
	if (name_len != 3 || strncmp(p, "gpu", 3) != 0)
		return 0;	/* another GRES: not ours */
	if (open == NULL)
		return 0;	/* no index list: nothing on this node */
	if (end[-1] != ')')
		return -EINVAL;
	open++;
	if ((size_t)(end - 1 - open) >= 4 && strncmp(open, "IDX:", 4) == 0)
		open += 4;
	else
		return -EINVAL;
	/* "IDX:N/A": Slurm knows no index (a GRES without files). */
	if (end - 1 - open == 3 && strncmp(open, "N/A", 3) == 0)
		return 0;
	return parse_index_list(open, end - 1, idx, max, n);
}

/* Call FN on each entry of DETAIL ("gpu:2(IDX:0-1),mps:50(IDX:0)"):
 * entries are split by the commas outside parentheses. */
static int
each_detail_entry(const char *detail,
		  int (*fn)(const char *p, const char *end, void *arg),
		  void *arg)
{
	const char *p = detail;

	if (detail == NULL)
		return 0;
	while (*p != '\0') {
		const char *e = p;
		int depth = 0, r;

		while (*e != '\0' && (depth > 0 || *e != ',')) {
			if (*e == '(')
				depth++;
			else if (*e == ')' && --depth < 0)
				return -EINVAL;
			e++;
		}
		if (depth != 0 || e == p)
			return -EINVAL;
		if ((r = fn(p, e, arg)) < 0)
			return r;
		p = *e == ',' ? e + 1 : e;
		if (*e == ',' && *p == '\0')
			return -EINVAL;
	}
	return 0;
}

struct index_set {
	uint32_t *idx;
	size_t max, *n;
};

static int
gpu_entry(const char *p, const char *end, void *arg)
{
	struct index_set *s = arg;

	return parse_detail_entry(p, end, s->idx, s->max, s->n);
}

int
ceems_gres_detail_gpu_indices(const char *detail, uint32_t *idx, size_t max,
			      size_t *n)
{
	struct index_set s = { idx, max, n };

	*n = 0;
	return each_detail_entry(detail, gpu_entry, &s);
}

struct shared_set {
	struct ceems_gres_shared *out;
	size_t max, *n;
};

static int
parse_u64(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	const char *s = *p;

	if (s >= end || !isdigit((unsigned char)*s))
		return -EINVAL;
	for (; s < end && isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	*out = v;
	return 0;
}

/* "2/4,0/4" between P and END: GPU i's part and total, in index order;
 * NAME (LEN bytes) the GRES's. */
static int
shared_parts(const char *name, size_t len, const char *p, const char *end,
	     struct shared_set *s)
{
	for (uint32_t i = 0; p < end; i++) {
		struct ceems_gres_shared *o;
		uint64_t a, b;

		if (i > GRES_INDEX_MAX || parse_u64(&p, end, &a) < 0 ||
		    p >= end || *p++ != '/' || parse_u64(&p, end, &b) < 0 ||
		    a > b || (p < end && *p != ','))
			return -EINVAL;
		if (p < end && ++p == end)
			return -EINVAL;
		if (a == 0)
			continue;
		if (*s->n >= s->max)
			return -E2BIG;
		o = &s->out[(*s->n)++];
		memset(o, 0, sizeof(*o));
		memcpy(o->name, name, len);
		o->index = i;
		o->count = a;
		o->ndev = 1;
		o->total = b;
	}
	return 0;
}

/* "shard:2(IDX:0)", "mps:gv100:50(IDX:0-1)": the count is the number
 * before the parenthesis. */
static int
shared_entry(const char *p, const char *end, void *arg)
{
	struct shared_set *s = arg;
	const char *open = memchr(p, '(', (size_t)(end - p)), *c;
	size_t name_len = strcspn(p, ":("), ni = 0;
	uint32_t idx[64];
	uint64_t count = 0;
	int r;

	if (name_len > (size_t)(end - p))
		name_len = (size_t)(end - p);
	if (!((name_len == 5 && strncmp(p, "shard", 5) == 0) ||
	      (name_len == 3 && strncmp(p, "mps", 3) == 0)) || open == NULL)
		return 0;
	for (c = open; c > p && isdigit((unsigned char)c[-1]); c--)
		;
	if (c == open || c[-1] != ':' || open - c > 15)
		return -EINVAL;
	for (; c < open; c++)
		count = count * 10 + (uint64_t)(*c - '0');
	if (end[-1] != ')')
		return -EINVAL;
	if ((size_t)(end - 1 - open) < 5 || strncmp(open + 1, "IDX:", 4) != 0)
		return shared_parts(p, name_len, open + 1, end - 1, s);
	if ((r = parse_index_list(open + 5, end - 1, idx, 64, &ni)) < 0)
		return r;
	for (size_t i = 0; i < ni; i++) {
		struct ceems_gres_shared *o;

		if (*s->n >= s->max)
			return -E2BIG;
		o = &s->out[(*s->n)++];
		memset(o, 0, sizeof(*o));
		memcpy(o->name, p, name_len);
		o->index = idx[i];
		o->count = count;
		o->ndev = (uint32_t)ni;
	}
	return 0;
}

int
ceems_gres_detail_shared(const char *detail, struct ceems_gres_shared *out,
			 size_t max, size_t *n)
{
	struct shared_set s = { out, max, n };

	*n = 0;
	return each_detail_entry(detail, shared_entry, &s);
}

/* ---- gres.conf ---- */

struct gres_line {
	char name[32];
	char file[CEEMS_GRES_PATH_MAX];
	char nodes[512];
	char count[24];
	bool has_name, has_file, has_nodes, has_count;
	bool multiple;		/* MultipleFiles=: one GRES, several files */
};

static int
copy_value(char *dst, size_t size, const char *v, size_t len)
{
	if (len == 0 || len >= size)
		return -EINVAL;
	memcpy(dst, v, len);
	dst[len] = '\0';
	return 0;
}

/* One "Key=Value" token into L; unknown keys are Slurm's business. */
static int
take_token(struct gres_line *l, const char *t, size_t len)
{
	const char *eq = memchr(t, '=', len);
	size_t klen, vlen;

	if (eq == NULL)
		return 0;
	klen = (size_t)(eq - t);
	vlen = len - klen - 1;
	if (klen == 4 && strncasecmp(t, "Name", 4) == 0) {
		l->has_name = true;
		return copy_value(l->name, sizeof(l->name), eq + 1, vlen);
	}
	if (klen == 4 && strncasecmp(t, "File", 4) == 0) {
		l->has_file = true;
		return copy_value(l->file, sizeof(l->file), eq + 1, vlen);
	}
	if (klen == 13 && strncasecmp(t, "MultipleFiles", 13) == 0) {
		l->has_file = l->multiple = true;
		return copy_value(l->file, sizeof(l->file), eq + 1, vlen);
	}
	if (klen == 5 && strncasecmp(t, "Count", 5) == 0) {
		l->has_count = true;
		return copy_value(l->count, sizeof(l->count), eq + 1, vlen);
	}
	if (klen == 8 && strncasecmp(t, "NodeName", 8) == 0) {
		l->has_nodes = true;
		return copy_value(l->nodes, sizeof(l->nodes), eq + 1, vlen);
	}
	return 0;
}

static int
parse_line(const char *p, const char *end, struct gres_line *l)
{
	memset(l, 0, sizeof(*l));
	while (p < end) {
		const char *t;
		int r;

		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p < end && *p == '#')
			break;
		t = p;
		while (p < end && !isspace((unsigned char)*p) && *p != '#')
			p++;
		if (p > t && (r = take_token(l, t, (size_t)(p - t))) < 0)
			return r;
	}
	return 0;
}

static int
add_file(char files[][CEEMS_GRES_PATH_MAX], size_t *n, const char *path)
{
	if (*n >= CEEMS_GRES_MAX_FILES)
		return -E2BIG;
	if (path[0] != '/' || strlen(path) >= CEEMS_GRES_PATH_MAX)
		return -EINVAL;
	snprintf(files[(*n)++], CEEMS_GRES_PATH_MAX, "%s", path);
	return 0;
}

/* "/dev/nvidia[0,2-3]" (one bracket at most) or a plain path. */
static int
expand_file(const char *item, char files[][CEEMS_GRES_PATH_MAX], size_t *n)
{
	const char *open = strchr(item, '['), *close, *p;
	char path[CEEMS_GRES_PATH_MAX];

	if (open == NULL)
		return strpbrk(item, "]") != NULL ? -EINVAL :
		       add_file(files, n, item);
	close = strchr(open, ']');
	if (close == NULL || strpbrk(close + 1, "[]") != NULL ||
	    memchr(item, ']', (size_t)(open - item)) != NULL)
		return -EINVAL;
	for (p = open + 1; p < close;) {
		const char *s = p;
		uint32_t a, b;
		int width, r;

		if (parse_index(&p, close, &a) < 0)
			return -EINVAL;
		width = (int)(p - s);	/* "[00-03]" keeps the zeros */
		b = a;
		if (p < close && *p == '-') {
			p++;
			if (parse_index(&p, close, &b) < 0 || b < a)
				return -EINVAL;
			if (b - a >= CEEMS_GRES_MAX_FILES)
				return -E2BIG;
		}
		for (uint32_t v = a; v <= b; v++) {
			if (snprintf(path, sizeof(path), "%.*s%0*u%s",
				     (int)(open - item), item, width, v,
				     close + 1) >= (int)sizeof(path))
				return -EINVAL;
			if ((r = add_file(files, n, path)) < 0)
				return r;
		}
		if (p < close && *p++ != ',')
			return -EINVAL;
	}
	return 0;
}

/* File= is a comma-separated list of items, outside brackets. */
static int
expand_files(const char *value, char files[][CEEMS_GRES_PATH_MAX], size_t *n)
{
	char item[CEEMS_GRES_PATH_MAX];
	const char *p = value;

	while (*p != '\0') {
		size_t len = 0;
		int depth = 0, r;

		while (p[len] != '\0' && (depth > 0 || p[len] != ',')) {
			depth += p[len] == '[' ? 1 : p[len] == ']' ? -1 : 0;
			len++;
		}
		if (len == 0 || len >= sizeof(item))
			return -EINVAL;
		memcpy(item, p, len);
		item[len] = '\0';
		if ((r = expand_file(item, files, n)) < 0)
			return r;
		p += len;
		if (*p == ',' && *++p == '\0')
			return -EINVAL;
	}
	return 0;
}

/* MultipleFiles=: one GRES index whose files (a MIG slice: its GPU and
 * its nvidia-caps files) are kept together, comma-separated. */
static int
add_multiple(const char *value, char files[][CEEMS_GRES_PATH_MAX], size_t *n)
{
	static char parts[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];
	char joined[CEEMS_GRES_PATH_MAX] = "";
	size_t np = 0, len = 0;
	int r;

	if ((r = expand_files(value, parts, &np)) < 0)
		return r;
	for (size_t i = 0; i < np; i++) {
		size_t plen = strlen(parts[i]);

		if (len + plen + 2 > sizeof(joined))
			return -EINVAL;
		if (i > 0)
			joined[len++] = ',';
		memcpy(joined + len, parts[i], plen + 1);
		len += plen;
	}
	if (*n >= CEEMS_GRES_MAX_FILES)
		return -E2BIG;
	memcpy(files[(*n)++], joined, len + 1);
	return 0;
}

/* The number at the end of a path, as Slurm sorts GPU files by. */
static unsigned long
file_suffix(const char *path)
{
	size_t len = strlen(path), i = len;

	while (i > 0 && isdigit((unsigned char)path[i - 1]))
		i--;
	if (i == len || len - i > 9)
		return 0;
	return strtoul(path + i, NULL, 10);
}

/* Stable insertion sort by suffix: a few dozen files at most. */
static void
sort_by_suffix(char files[][CEEMS_GRES_PATH_MAX], size_t n)
{
	char tmp[CEEMS_GRES_PATH_MAX];

	for (size_t i = 1; i < n; i++) {
		size_t j = i;

		memcpy(tmp, files[i], sizeof(tmp));
		while (j > 0 && file_suffix(files[j - 1]) > file_suffix(tmp)) {
			memcpy(files[j], files[j - 1], sizeof(tmp));
			j--;
		}
		memcpy(files[j], tmp, sizeof(tmp));
	}
}

/* Call FN on each line of gres.conf TEXT (LEN bytes) that names GRES
 * NAME for this node (MATCH); *LINE_NO is the line a failure is on. */
static int
each_line_of(const char *text, size_t len, ceems_gres_node_match_fn match,
	     void *arg, const char *name,
	     int (*fn)(const struct gres_line *l, void *ctx), void *ctx,
	     unsigned int *line_no)
{
	const char *p = text, *end = text + len;
	struct gres_line l;
	int r;

	*line_no = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (eol == NULL)
			eol = end;
		(*line_no)++;
		if (memchr(p, '\0', (size_t)(eol - p)) != NULL)
			return -EINVAL;
		if ((r = parse_line(p, eol, &l)) < 0)
			return r;
		p = eol < end ? eol + 1 : end;
		if (!l.has_name || strcasecmp(l.name, name) != 0)
			continue;
		if (l.has_nodes && (match == NULL || !match(l.nodes, arg)))
			continue;
		if ((r = fn(&l, ctx)) < 0)
			return r;
	}
	*line_no = 0;
	return 0;
}

struct file_list {
	char (*files)[CEEMS_GRES_PATH_MAX];
	size_t *n;
};

static int
add_gpu_line(const struct gres_line *l, void *ctx)
{
	struct file_list *f = ctx;

	if (!l->has_file)
		return 0;
	return l->multiple ? add_multiple(l->file, f->files, f->n) :
	       expand_files(l->file, f->files, f->n);
}

int
ceems_gres_conf_gpu_files(const char *text, size_t len,
			  ceems_gres_node_match_fn match, void *arg,
			  char files[][CEEMS_GRES_PATH_MAX], size_t *n,
			  unsigned int *line_no)
{
	struct file_list f = { files, n };
	int r;

	*n = 0;
	r = each_line_of(text, len, match, arg, "gpu", add_gpu_line, &f,
			 line_no);
	if (r < 0)
		return r;
	sort_by_suffix(files, *n);
	return 0;
}

/* Count=N with Slurm's suffixes (K, M, G: powers of 1024), or -1. */
static double
parse_count(const char *text)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0 || v > (1ULL << 40))
		return -1;
	if (*end != '\0' && end[1] != '\0')
		return -1;
	switch (*end) {
	case '\0':
		return (double)v;
	case 'k': case 'K':
		return (double)(v << 10);
	case 'm': case 'M':
		return (double)(v << 20);
	case 'g': case 'G':
		return (double)(v << 30);
	}
	return -1;
}

/* Spread COUNT over the GPU files L's File= names (all of them when
 * it names none). */
static int
spread_count(const struct gres_line *l, double count,
	     char gpus[][CEEMS_GRES_PATH_MAX], size_t ngpus, double *counts)
{
	static char files[CEEMS_GRES_MAX_FILES][CEEMS_GRES_PATH_MAX];
	size_t n = 0;
	int r;

	if (!l->has_file) {
		for (size_t i = 0; i < ngpus; i++)
			counts[i] += count / (double)ngpus;
		return 0;
	}
	if ((r = expand_files(l->file, files, &n)) < 0)
		return r;
	for (size_t f = 0; f < n; f++)
		for (size_t i = 0; i < ngpus; i++)
			if (strcmp(files[f], gpus[i]) == 0)
				counts[i] += count / (double)n;
	return 0;
}

struct shared_counts {
	char (*gpus)[CEEMS_GRES_PATH_MAX];
	size_t ngpus;
	double *counts;
};

static int
add_shared_line(const struct gres_line *l, void *ctx)
{
	struct shared_counts *c = ctx;
	double count;

	if (!l->has_count || c->ngpus == 0)
		return 0;
	if ((count = parse_count(l->count)) < 0)
		return -EINVAL;
	return spread_count(l, count, c->gpus, c->ngpus, c->counts);
}

int
ceems_gres_conf_shared_counts(const char *text, size_t len,
			      ceems_gres_node_match_fn match, void *arg,
			      const char *name,
			      char gpus[][CEEMS_GRES_PATH_MAX], size_t ngpus,
			      double *counts, unsigned int *line_no)
{
	struct shared_counts c = { gpus, ngpus, counts };

	for (size_t i = 0; i < ngpus; i++)
		counts[i] = 0;
	return each_line_of(text, len, match, arg, name, add_shared_line, &c,
			    line_no);
}

int
ceems_gres_mig_minor_parse(const char *line, struct ceems_mig_minor *out)
{
	unsigned int gpu, gi, ci, minor;
	char tail;

	if (sscanf(line, "gpu%u/gi%u/ci%u/access %u%c", &gpu, &gi, &ci,
		   &minor, &tail) == 4) {
		if (ci > GRES_INDEX_MAX)
			return -EINVAL;
		out->ci = (int32_t)ci;
	} else if (sscanf(line, "gpu%u/gi%u/access %u%c", &gpu, &gi, &minor,
			  &tail) == 3) {
		out->ci = -1;
	} else {
		return -EINVAL;
	}
	if (gpu > GRES_INDEX_MAX || gi > GRES_INDEX_MAX || minor > 1048575 ||
	    !isdigit((unsigned char)line[3]))
		return -EINVAL;
	out->gpu = gpu;
	out->gi = gi;
	out->minor = minor;
	return 0;
}

int
ceems_gres_proc_devices_major(const char *text, const char *driver)
{
	size_t dlen = strlen(driver);

	for (const char *p = text; p != NULL && *p != '\0';) {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
		unsigned int major;
		int used = 0;

		/* "195 nvidia-frontend", right-aligned numbers. */
		if (sscanf(p, "%u %n", &major, &used) == 1 && used > 0 &&
		    (size_t)used + dlen == len &&
		    strncmp(p + used, driver, dlen) == 0 && major < 4096)
			return (int)major;
		p = eol != NULL ? eol + 1 : NULL;
	}
	return -ENOENT;
}
