/* marks.c - a job's work counters (marks.h): one mark applied with its
 * checks, the per-job rate bound, and their JSON form.  The marks come
 * from the job's own processes, which are not trusted more than any
 * other input: every name, unit and value is checked here, and a bad
 * one leaves the counters as they were. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "model/marks.h"
#include "base/json_util.h"

static int fail(char *err, size_t err_size, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Format FMT into ERR and return CODE. */
static int
fail(char *err, size_t err_size, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return code;
}

static struct ceems_marks_counter *
find(struct ceems_marks *m, const char *name)
{
	for (uint32_t i = 0; i < m->n && i < CEEMS_MARKS_MAX; i++)
		if (strcmp(m->c[i].name, name) == 0)
			return &m->c[i];
	return NULL;
}

int
ceems_marks_apply(struct ceems_marks *m, const char *name, const char *unit,
		  const char *tag, enum ceems_marks_mode mode, double value,
		  char *err, size_t err_size)
{
	struct ceems_marks_counter *c;
	double work;

	if (!ceems_marks_name_ok(name))
		return fail(err, err_size, -EINVAL, "the counter's name must be 1 "
			    "to 31 letters, digits, '_', '.' or '-'");
	if (!ceems_marks_name_ok(unit))
		return fail(err, err_size, -EINVAL, "the unit of %s must be 1 "
			    "to 31 letters, digits, '_', '.' or '-'", name);
	if (tag != NULL && tag[0] != '\0' && !ceems_marks_name_ok(tag))
		return fail(err, err_size, -EINVAL, "the tag of %s must be 1 "
			    "to 31 letters, digits, '_', '.' or '-'", name);
	if (mode != CEEMS_MARKS_ADD && mode != CEEMS_MARKS_SET)
		return fail(err, err_size, -EINVAL, "a mark of %s must say add or "
			    "set", name);
	if (!isfinite(value) || value < 0 || value > CEEMS_MARKS_VALUE_MAX)
		return fail(err, err_size, -EINVAL, "the value of %s must be a "
			    "number from 0 to 2^53", name);
	c = find(m, name);
	if (c != NULL && strcmp(c->unit, unit) != 0)
		return fail(err, err_size, -EINVAL, "counter %s counts in %s: a "
			    "counter keeps the unit of its first mark", name,
			    c->unit);
	/* One application per counter: a second tag would split its work
	 * between two without saying which part is whose. */
	if (c != NULL && tag != NULL && tag[0] != '\0' && c->tag[0] != '\0' &&
	    strcmp(c->tag, tag) != 0)
		return fail(err, err_size, -EINVAL, "counter %s is tagged %s: a "
			    "counter keeps the tag it was first given", name,
			    c->tag);
	if (c == NULL && m->n >= CEEMS_MARKS_MAX)
		return fail(err, err_size, -ENOSPC, "the job has %d counters "
			    "already: %s is not kept", CEEMS_MARKS_MAX, name);
	work = c == NULL ? 0 : c->work;
	if (mode == CEEMS_MARKS_SET && value < work)
		return fail(err, err_size, -EINVAL, "counter %s is cumulative: "
			    "a set may not go below its value", name);
	work = mode == CEEMS_MARKS_SET ? value : work + value;
	if (work > CEEMS_MARKS_VALUE_MAX)
		return fail(err, err_size, -EINVAL, "counter %s would pass 2^53",
			    name);
	if (c == NULL) {
		c = &m->c[m->n++];
		memset(c, 0, sizeof(*c));
		/* Both checked to fit by ceems_marks_name_ok. */
		memcpy(c->name, name, strlen(name) + 1);
		memcpy(c->unit, unit, strlen(unit) + 1);
	}
	if (tag != NULL && tag[0] != '\0' && c->tag[0] == '\0')
		memcpy(c->tag, tag, strlen(tag) + 1);
	c->work = work;
	c->marks++;
	return 0;
}

bool
ceems_marks_rate_take(struct ceems_marks_rate *r, uint64_t now_ns)
{
	if (!r->started) {
		r->started = true;
		r->tokens = CEEMS_MARKS_BURST;
		r->last_ns = now_ns;
	}
	/* A clock that went back (it is monotonic: never) adds nothing. */
	if (now_ns > r->last_ns) {
		r->tokens += (double)(now_ns - r->last_ns) * 1e-9 * CEEMS_MARKS_RATE;
		if (r->tokens > CEEMS_MARKS_BURST)
			r->tokens = CEEMS_MARKS_BURST;
		r->last_ns = now_ns;
	}
	if (r->tokens < 1) {
		r->refused++;
		return false;
	}
	r->tokens -= 1;
	return true;
}

const struct ceems_marks_counter *
ceems_marks_main(const struct ceems_marks *m)
{
	const struct ceems_marks_counter *best = NULL;

	for (uint32_t i = 0; m != NULL && i < m->n && i < CEEMS_MARKS_MAX; i++)
		if (best == NULL || m->c[i].marks > best->marks)
			best = &m->c[i];
	return best;
}

struct json_object *
ceems_marks_json_entry(struct json_object *arr, const char *name,
		       const char *unit, bool *ok)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL || json_object_array_add(arr, o) != 0) {
		json_object_put(o);
		*ok = false;
		return NULL;
	}
	ceems_json_util_add(o, "name", json_object_new_string(name), ok);
	ceems_json_util_add(o, "unit", json_object_new_string(unit), ok);
	return o;
}

int
ceems_marks_json_read_entry(const struct json_object *o, const char *where,
			    const char *const *known, char *name, char *unit,
			    char *err, size_t err_size)
{
	int r;

	if (!json_object_is_type(o, json_type_object))
		return ceems_json_util_error(err, err_size, "%s must be an object", where);
	if ((r = ceems_json_util_check_keys(o, where, known, err, err_size)) < 0)
		return r;
	if (ceems_json_util_get(o, "name") == NULL || ceems_json_util_get(o, "unit") == NULL)
		return ceems_json_util_error(err, err_size, "%s needs name and unit", where);
	if ((r = ceems_json_util_read_string(ceems_json_util_get(o, "name"), where,
				name, CEEMS_MARKS_NAME_MAX, err, err_size)) < 0 ||
	    (r = ceems_json_util_read_string(ceems_json_util_get(o, "unit"), where,
				unit, CEEMS_MARKS_NAME_MAX, err, err_size)) < 0)
		return r;
	if (!ceems_marks_name_ok(name) || !ceems_marks_name_ok(unit))
		return ceems_json_util_error(err, err_size,
			"%s: a name or unit is not 1 to 31 letters, digits, "
			"'_', '.' or '-'", where);
	return 0;
}

/* M as JSON; BRIEF: each counter's name, unit, work and marks only. */
static struct json_object *
to_json(const struct ceems_marks *m, bool brief)
{
	struct json_object *arr = json_object_new_array();
	bool ok = arr != NULL;

	for (uint32_t i = 0; ok && i < m->n && i < CEEMS_MARKS_MAX; i++) {
		const struct ceems_marks_counter *c = &m->c[i];
		struct json_object *o = ceems_marks_json_entry(arr, c->name, c->unit, &ok);

		if (o == NULL)
			break;
		ceems_json_util_add(o, "work", ceems_json_util_double(c->work), &ok);
		ceems_json_util_add(o, "marks", ceems_json_util_new_u64(c->marks), &ok);
		if (brief)
			continue;
		if (c->tag[0] != '\0')
			ceems_json_util_add(o, "tag", json_object_new_string(c->tag), &ok);
		ceems_marks_series_to_json(o, c, m->interval_s, &ok);
	}
	if (!ok) {
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

struct json_object *
ceems_marks_to_json(const struct ceems_marks *m)
{
	return to_json(m, false);
}

struct json_object *
ceems_marks_to_json_brief(const struct ceems_marks *m)
{
	return to_json(m, true);
}

static int
counter_from_json(const struct json_object *o, size_t i,
		  struct ceems_marks_counter *c, uint32_t *interval_s, char *err,
		  size_t err_size)
{
	static const char *const known[] = { "name", "unit", "work", "marks",
					     "tag", "interval_s", "intervals",
					     NULL };
	const struct json_object *tag;
	char where[32];
	int r;

	snprintf(where, sizeof(where), "marks[%zu]", i);
	if ((r = ceems_marks_json_read_entry(o, where, known, c->name, c->unit,
					     err, err_size)) < 0)
		return r;
	if (ceems_json_util_get(o, "work") == NULL || ceems_json_util_get(o, "marks") == NULL)
		return ceems_json_util_error(err, err_size, "%s needs work and marks", where);
	if ((r = ceems_json_util_read_real(ceems_json_util_get(o, "work"), where, 0,
				CEEMS_MARKS_VALUE_MAX, &c->work, err, err_size)) < 0 ||
	    (r = ceems_json_util_read_uint(ceems_json_util_get(o, "marks"), where, 0,
				UINT64_MAX, &c->marks, err, err_size)) < 0)
		return r;
	if ((tag = ceems_json_util_get(o, "tag")) != NULL &&
	    (r = ceems_json_util_read_string(tag, where, c->tag, sizeof(c->tag),
					     err, err_size)) < 0)
		return r;
	if (tag != NULL && !ceems_marks_name_ok(c->tag))
		return ceems_json_util_error(err, err_size, "%s: its tag is not 1 "
			"to 31 letters, digits, '_', '.' or '-'", where);
	return ceems_marks_series_from_json(o, where, c, interval_s, err, err_size);
}

int
ceems_marks_from_json(const struct json_object *obj, struct ceems_marks *m,
		      char *err, size_t err_size)
{
	struct ceems_marks out;
	size_t n;
	int r;

	if (!json_object_is_type(obj, json_type_array))
		return ceems_json_util_error(err, err_size, "marks must be an array");
	n = json_object_array_length(obj);
	if (n > CEEMS_MARKS_MAX)
		return ceems_json_util_error(err, err_size,
			"marks has more than %d counters", CEEMS_MARKS_MAX);
	memset(&out, 0, sizeof(out));
	for (size_t i = 0; i < n; i++) {
		if ((r = counter_from_json(json_object_array_get_idx(obj, i), i,
					   &out.c[i], &out.interval_s, err,
					   err_size)) < 0)
			return r;
		for (size_t k = 0; k < i; k++)
			if (strcmp(out.c[k].name, out.c[i].name) == 0)
				return ceems_json_util_error(err, err_size,
					"marks[%zu] names counter %s twice", i,
					out.c[i].name);
	}
	out.n = (uint32_t)n;
	*m = out;
	return 0;
}
