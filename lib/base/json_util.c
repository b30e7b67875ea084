/* json_util.c - small json-c helpers shared by the agent protocol and the
 * job record: encoding that tracks allocation failure once per message,
 * and strict, bounded decoding of values that come from outside. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "base/text.h"

int
ceems_json_util_error(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_size > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_size, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Add KEY: VAL to OBJ; a NULL VAL (allocation failure) fails the whole
 * encoding, tracked in *OK, so callers check once at the end. */
void
ceems_json_util_add(struct json_object *obj, const char *key, struct json_object *val,
    bool *ok)
{
	if (val == NULL || json_object_object_add(obj, key, val) != 0) {
		json_object_put(val);
		*ok = false;
	}
}

struct json_object *
ceems_json_util_new_u64(uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX)
		return json_object_new_int64((int64_t)v);
	return json_object_new_uint64(v);
}

struct json_object *
ceems_json_util_new_text(const char *s, size_t size)
{
	struct json_object *obj;
	char small[256], *text = small;
	size_t len;

	if (size > sizeof(small) && (text = malloc(size)) == NULL)
		return NULL;
	len = ceems_text_safe(text, size, s);
	obj = json_object_new_string_len(text, (int)len);
	if (text != small)
		free(text);
	return obj;
}

struct json_object *
ceems_json_util_double(double v)
{
	char text[40];

	if (!isfinite(v))
		return NULL;
	/* The shortest of 15, 16 or 17 digits that reads back as V: 0.1
	 * stays "0.1", not "0.10000000000000001". */
	for (int digits = 15; digits <= 17; digits++) {
		snprintf(text, sizeof(text), "%.*g", digits, v);
		if (strtod(text, NULL) == v)
			break;
	}
	/* Keep it a JSON double: "5" would read back as an integer. */
	if (strpbrk(text, ".eE") == NULL)
		strncat(text, ".0", sizeof(text) - strlen(text) - 1);
	return json_object_new_double_s(v, text);
}

/* A double that is not finite is not a measurement: the caller leaves
 * the key out. */
void
ceems_json_util_add_double(struct json_object *obj, const char *key, double v, bool *ok)
{
	if (isfinite(v))
		ceems_json_util_add(obj, key, ceems_json_util_double(v), ok);
}

/* Read an unsigned integer: a JSON integer (not a double) in
 * [MIN, MAX].  WHERE names the field in the message. */
int
ceems_json_util_read_uint(const struct json_object *val, const char *where, uint64_t min,
	  uint64_t max, uint64_t *out, char *err, size_t err_size)
{
	int64_t s;
	uint64_t u;

	if (!json_object_is_type(val, json_type_int))
		return ceems_json_util_error(err, err_size, "%s must be a whole number", where);
	s = json_object_get_int64(val);
	if (s < 0)
		return ceems_json_util_error(err, err_size, "%s must not be negative", where);
	u = (uint64_t)s;
	if (s == INT64_MAX)	/* maybe larger: json-c keeps those as uint64 */
		u = json_object_get_uint64(val);
	if (u < min || u > max)
		return ceems_json_util_error(err, err_size,
			      "%s must be between %llu and %llu", where,
			      (unsigned long long)min, (unsigned long long)max);
	*out = u;
	return 0;
}

/* A finite number (integer or not) in [MIN, MAX]. */
int
ceems_json_util_read_real(const struct json_object *val, const char *where, double min,
	  double max, double *out, char *err, size_t err_size)
{
	double d;

	if (json_object_is_type(val, json_type_int)) {
		int64_t s = json_object_get_int64(val);

		d = s == INT64_MAX ? (double)json_object_get_uint64(val)
				   : (double)s;
	} else if (json_object_is_type(val, json_type_double)) {
		d = json_object_get_double(val);
	} else {
		return ceems_json_util_error(err, err_size, "%s must be a number", where);
	}
	if (!isfinite(d) || d < min || d > max)
		return ceems_json_util_error(err, err_size, "%s must be a number between %g and %g",
			      where, min, max);
	*out = d;
	return 0;
}

int
ceems_json_util_read_bool(const struct json_object *val, const char *where, bool *out,
	  char *err, size_t err_size)
{
	if (!json_object_is_type(val, json_type_boolean))
		return ceems_json_util_error(err, err_size, "%s must be true or false", where);
	*out = json_object_get_boolean(val);
	return 0;
}

/* VAL's string (*S) and its length, when it is a string that fits SIZE
 * with its NUL; -EINVAL with ERR when not. */
static int
string_that_fits(const struct json_object *val, const char *where,
		 size_t size, const char **s, char *err, size_t err_size)
{
	int len;

	if (!json_object_is_type(val, json_type_string))
		return ceems_json_util_error(err, err_size, "%s must be a string", where);
	*s = json_object_get_string((struct json_object *)(uintptr_t)val);
	len = json_object_get_string_len(val);
	if (len < 0 || (size_t)len >= size)
		return ceems_json_util_error(err, err_size, "%s is longer than %zu bytes",
					where, size - 1);
	return len;
}

/* A string without NUL or control characters that fits SIZE with its
 * NUL. */
int
ceems_json_util_read_string(const struct json_object *val, const char *where, char *out,
	    size_t size, char *err, size_t err_size)
{
	const char *s;
	int len;

	if ((len = string_that_fits(val, where, size, &s, err, err_size)) < 0)
		return len;
	/* What every encoder writes (ceems_json_util_new_text): UTF-8 without
	 * controls, C1 included. */
	if (memchr(s, '\0', (size_t)len) != NULL || !ceems_text_is_clean(s))
		return ceems_json_util_error(err, err_size,
				      "%s holds a control character or bytes that are not UTF-8",
				      where);
	memcpy(out, s, (size_t)len);
	out[len] = '\0';
	return 0;
}

int
ceems_json_util_read_text(const struct json_object *val, const char *where,
		     char *out, size_t size, char *err, size_t err_size)
{
	const char *s;
	int len;

	if ((len = string_that_fits(val, where, size, &s, err, err_size)) < 0)
		return len;
	if (memchr(s, '\0', (size_t)len) != NULL)
		return ceems_json_util_error(err, err_size, "%s holds a NUL byte", where);
	if (!ceems_text_is_utf8(s, (size_t)len))
		return ceems_json_util_error(err, err_size, "%s is not UTF-8", where);
	memcpy(out, s, (size_t)len);
	out[len] = '\0';
	return 0;
}

/* Objects whose keys must all be known: the key set is checked first. */
int
ceems_json_util_check_keys(const struct json_object *obj, const char *where,
	   const char *const *known, char *err, size_t err_size)
{
	json_object_object_foreach((struct json_object *)(uintptr_t)obj, key, val) {
		size_t i;

		for (i = 0; known[i] != NULL; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (known[i] == NULL)
			return ceems_json_util_error(err, err_size, "%s has an unknown field '%.40s'",
				      where, key);
		/* json-c stores null as a NULL value, which lookups would
		 * take for a missing key: refuse it here, by name. */
		if (val == NULL)
			return ceems_json_util_error(err, err_size, "%s: field '%s' is null",
				      where, key);
	}
	return 0;
}

struct json_object *
ceems_json_util_get(const struct json_object *obj, const char *key)
{
	struct json_object *val = NULL;

	if (!json_object_object_get_ex(obj, key, &val))
		return NULL;
	return val;
}

/* Parse exactly LEN bytes as one JSON value; NULL with ERR on failure.
 * STRICT refuses json-c's extensions (single quotes, NaN, comments...). */
struct json_object *
ceems_json_util_parse(const char *buf, size_t len, bool strict, char *err,
	      size_t err_size)
{
	struct json_tokener *tok;
	struct json_object *obj;
	enum json_tokener_error jerr;
	bool consumed_all = false;

	if (len == 0) {
		ceems_json_util_error(err, err_size, "empty message");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		ceems_json_util_error(err, err_size, "message holds a NUL byte: not JSON text");
		return NULL;
	}
	tok = json_tokener_new_ex(CEEMS_JSON_MAX_DEPTH);
	if (tok == NULL) {
		ceems_json_util_error(err, err_size, "out of memory parsing a message");
		return NULL;
	}
	if (strict)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT |
					    JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	/* A bare number at the end of the input ("42") waits for more
	 * digits: a final NUL tells the tokener the input has ended. */
	if (obj == NULL && jerr == json_tokener_continue) {
		obj = json_tokener_parse_ex(tok, "", 1);
		jerr = json_tokener_get_error(tok);
		consumed_all = true;	/* the first call took every byte */
	}
	if (obj == NULL || jerr != json_tokener_success) {
		if (jerr == json_tokener_continue ||
		    jerr == json_tokener_error_parse_eof)
			ceems_json_util_error(err, err_size, "message is not complete JSON (cut short?)");
		else
			ceems_json_util_error(err, err_size, "message is not valid JSON: %s",
			       json_tokener_error_desc(jerr));
		json_object_put(obj);
		obj = NULL;
	} else if (!consumed_all && json_tokener_get_parse_end(tok) != len) {
		/* Trailing whitespace is allowed, anything else is not. */
		for (size_t i = json_tokener_get_parse_end(tok); i < len; i++) {
			if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\t' &&
			    buf[i] != '\r') {
				ceems_json_util_error(err, err_size,
				       "message has data after its JSON value");
				json_object_put(obj);
				obj = NULL;
				break;
			}
		}
	}
	json_tokener_free(tok);
	return obj;
}

