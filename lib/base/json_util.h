/* json_util.h - json-c helpers shared by the agent protocol and the job
 * record.  Encoding helpers track allocation failure in one flag, so a
 * caller checks once per message.  Decoding helpers check exact types and
 * ranges and say which field was wrong (WHERE) in ERR. */
#ifndef CEEMS_JSON_UTIL_H
#define CEEMS_JSON_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

/* Deepest nesting accepted by ceems_json_util_parse. */
#define CEEMS_JSON_MAX_DEPTH 8

/* Format FMT into ERR (if not NULL) and return -EINVAL. */
int ceems_json_util_error(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Add KEY: VAL to OBJ; a NULL VAL (allocation failure) clears *OK. */
void ceems_json_util_add(struct json_object *obj, const char *key,
		    struct json_object *val, bool *ok);
struct json_object *ceems_json_util_new_u64(uint64_t v);
/* A JSON string of text from outside (a name, a path, a message) for a
 * field the reader holds in SIZE bytes with its NUL: S as it is when it
 * is clean text that fits, else escaped and cut as text.h says, so that
 * the message is valid UTF-8 and reads back into the field.  Every
 * string an encoder writes that is not a constant of its own goes
 * through here. */
struct json_object *ceems_json_util_new_text(const char *s, size_t size);
/* The shortest of 15 to 17 digits that reads back exactly; NULL when V
 * is not finite (not a measurement). */
struct json_object *ceems_json_util_double(double v);
/* Add KEY: V, or nothing when V is not finite. */
void ceems_json_util_add_double(struct json_object *obj, const char *key, double v,
			   bool *ok);

/* A JSON integer (not a double) in [MIN, MAX]. */
int ceems_json_util_read_uint(const struct json_object *val, const char *where,
			 uint64_t min, uint64_t max, uint64_t *out, char *err,
			 size_t err_size);
/* A finite number in [MIN, MAX]. */
int ceems_json_util_read_real(const struct json_object *val, const char *where,
			 double min, double max, double *out, char *err,
			 size_t err_size);
int ceems_json_util_read_bool(const struct json_object *val, const char *where,
			 bool *out, char *err, size_t err_size);
/* A string without control characters (C0, DEL, C1), valid UTF-8, that
 * fits SIZE with its NUL: what ceems_json_util_new_text writes. */
int ceems_json_util_read_string(const struct json_object *val, const char *where,
			   char *out, size_t size, char *err, size_t err_size);
/* Same, but control characters are allowed: for the names in records
 * written before controls were escaped (text.h), which displays escape
 * rather than lose. */
int ceems_json_util_read_text(const struct json_object *val, const char *where,
			 char *out, size_t size, char *err, size_t err_size);
/* Every key of OBJ is in the NULL-terminated KNOWN, none is null. */
int ceems_json_util_check_keys(const struct json_object *obj, const char *where,
			  const char *const *known, char *err,
			  size_t err_size);
/* The value of KEY, or NULL when absent. */
struct json_object *ceems_json_util_get(const struct json_object *obj,
				   const char *key);
/* Parse exactly LEN bytes as one JSON value (trailing whitespace only);
 * STRICT refuses json-c's extensions.  NULL with ERR on failure. */
struct json_object *ceems_json_util_parse(const char *buf, size_t len, bool strict,
				     char *err, size_t err_size);

#endif
