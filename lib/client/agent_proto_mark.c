/* agent_proto_mark.c - the "mark" request of the node agent's protocol
 * (agent_proto.h): a job's process saying how much work it did, one
 * counter at a time.  Apart from the other requests because its sender
 * is any process of any job, not the plugin: the decoder takes exactly
 * the keys below and says in one sentence what is wrong, so that a
 * developer trying the protocol by hand sees why a mark was refused. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "base/json_util.h"

void
ceems_agent_proto_mark_encode(struct json_object *obj,
			      const struct ceems_agent_request *req, bool *ok)
{
	ceems_json_util_add(obj, "jobid", json_object_new_int64(req->jobid), ok);
	ceems_json_util_add(obj, "name", ceems_json_util_new_text(req->mark_name,
				sizeof(req->mark_name)), ok);
	ceems_json_util_add(obj, "unit", ceems_json_util_new_text(req->mark_unit,
				sizeof(req->mark_unit)), ok);
	ceems_json_util_add(obj, req->mark_mode == CEEMS_MARKS_SET ? "set" : "add",
			    ceems_json_util_double(req->mark_value), ok);
	if (req->mark_tag[0] != '\0')
		ceems_json_util_add(obj, "tag", ceems_json_util_new_text(req->mark_tag,
					sizeof(req->mark_tag)), ok);
}

/* "name" or "unit" of OBJ into OUT: a counter's name as marks.h says. */
static int
read_name(const struct json_object *obj, const char *key, char *out,
	  size_t size, char *err, size_t err_size)
{
	const struct json_object *val = ceems_json_util_get(obj, key);
	char where[32];
	int r;

	snprintf(where, sizeof(where), "mark.%s", key);
	if (val == NULL)
		return ceems_json_util_error(err, err_size, "mark request needs \"%s\"", key);
	if ((r = ceems_json_util_read_string(val, where, out, size, err,
					     err_size)) < 0)
		return r;
	if (!ceems_marks_name_ok(out))
		return ceems_json_util_error(err, err_size, "%s must be 1 to %d "
			"letters, digits, '_', '.' or '-'", where,
			CEEMS_MARKS_NAME_MAX - 1);
	return 0;
}

int
ceems_agent_proto_mark_decode(const struct json_object *obj,
			      struct ceems_agent_request *req, char *err,
			      size_t err_size)
{
	static const char *const known[] = { "op", "jobid", "name", "unit",
					     "add", "set", "tag", NULL };
	const struct json_object *add, *set;
	uint64_t jobid;
	int r;

	req->op = CEEMS_AGENT_OP_MARK;
	if ((r = ceems_json_util_check_keys(obj, "mark request", known, err,
					    err_size)) < 0)
		return r;
	if (ceems_json_util_get(obj, "jobid") == NULL)
		return ceems_json_util_error(err, err_size, "mark request needs \"jobid\"");
	if ((r = ceems_json_util_read_uint(ceems_json_util_get(obj, "jobid"),
			"jobid", 1, UINT32_MAX, &jobid, err, err_size)) < 0)
		return r;
	req->jobid = (uint32_t)jobid;
	if ((r = read_name(obj, "name", req->mark_name, sizeof(req->mark_name),
			   err, err_size)) < 0 ||
	    (r = read_name(obj, "unit", req->mark_unit, sizeof(req->mark_unit),
			   err, err_size)) < 0)
		return r;
	req->mark_tag[0] = '\0';
	if (ceems_json_util_get(obj, "tag") != NULL &&
	    (r = read_name(obj, "tag", req->mark_tag, sizeof(req->mark_tag),
			   err, err_size)) < 0)
		return r;
	add = ceems_json_util_get(obj, "add");
	set = ceems_json_util_get(obj, "set");
	/* Said by the caller, never guessed: an increment and a running
	 * total read alike as one number. */
	if ((add == NULL) == (set == NULL))
		return ceems_json_util_error(err, err_size, "mark request needs "
			"exactly one of \"add\" (an increment) and \"set\" "
			"(the cumulative value)");
	req->mark_mode = add != NULL ? CEEMS_MARKS_ADD : CEEMS_MARKS_SET;
	return ceems_json_util_read_real(add != NULL ? add : set,
			add != NULL ? "mark.add" : "mark.set", 0,
			CEEMS_MARKS_VALUE_MAX, &req->mark_value, err, err_size);
}
