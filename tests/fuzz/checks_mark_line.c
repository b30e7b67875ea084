/* checks_mark_line.c - the plain-text mark (lib/client/agent_proto.h,
 * agent_proto_line.c) held to its contract: it decodes only into a mark
 * that marks.h can apply (names and units that are ones, a value in
 * range, add or set said, a job id that is one), leaves the request as
 * it was on error with one sentence said, reads back the same from the
 * line its fields make; and its answer, whatever sentence it carries, is
 * one line. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "client/agent_proto.h"

/* The answer to a refusal that quotes DATA: one line, "ERR CODE ...". */
static const char *
check_reply(const char *data, size_t len)
{
	char why[300], out[512];
	int n;

	snprintf(why, sizeof(why), "%.*s", (int)(len < 299 ? len : 299), data);
	n = ceems_agent_proto_line_reply(-EPERM, why, out, sizeof(out));
	if (n <= 0 || (size_t)n >= sizeof(out) || out[n - 1] != '\n' ||
	    strncmp(out, "ERR EPERM ", 10) != 0)
		return "ceems_agent_proto_line_reply: not one ERR line";
	for (int i = 0; i < n - 1; i++)
		if ((unsigned char)out[i] < 0x20 || (unsigned char)out[i] >= 0x7f)
			return "ceems_agent_proto_line_reply: a control byte in the line";
	return NULL;
}

const char *
fuzz_check_mark_line(const char *data, size_t len)
{
	static struct ceems_agent_request req, again, before;
	char err[256], line[256];
	int r, n;

	memset(err, 'x', sizeof(err));
	memset(&req, 0x5a, sizeof(req));
	before = req;
	r = ceems_agent_proto_line_decode(data, len, &req, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		return "ceems_agent_proto_line_decode: undocumented return code";
	if (r < 0) {
		if (memchr(err, '\0', sizeof(err)) == NULL || err[0] == '\0')
			return "ceems_agent_proto_line_decode: error without a sentence";
		if (memcmp(&req, &before, sizeof(req)) != 0)
			return "ceems_agent_proto_line_decode: request changed on error";
		return check_reply(data, len);
	}
	if (req.op != CEEMS_AGENT_OP_MARK || req.jobid == 0 ||
	    !ceems_marks_name_ok(req.mark_name) || !ceems_marks_name_ok(req.mark_unit) ||
	    (req.mark_mode != CEEMS_MARKS_ADD && req.mark_mode != CEEMS_MARKS_SET) ||
	    !(req.mark_value >= 0 && req.mark_value <= CEEMS_MARKS_VALUE_MAX))
		return "ceems_agent_proto_line_decode: a mark marks.h refuses";
	if (!ceems_agent_proto_line_is(data, len))
		return "ceems_agent_proto_line_decode: a line line_is does not know";
	if (req.mark_tag[0] != '\0' && !ceems_marks_name_ok(req.mark_tag))
		return "ceems_agent_proto_line_decode: a tag marks.h refuses";
	n = snprintf(line, sizeof(line), "MARK %u %s %.17g %s %s%s%s\n", req.jobid,
		     req.mark_name, req.mark_value, req.mark_unit,
		     req.mark_mode == CEEMS_MARKS_ADD ? "add" : "set",
		     req.mark_tag[0] != '\0' ? " " : "", req.mark_tag);
	if (n <= 0 || (size_t)n >= sizeof(line) ||
	    ceems_agent_proto_line_decode(line, (size_t)n, &again, err,
					  sizeof(err)) != 0 ||
	    again.jobid != req.jobid || again.mark_mode != req.mark_mode ||
	    again.mark_value != req.mark_value ||
	    strcmp(again.mark_name, req.mark_name) != 0 ||
	    strcmp(again.mark_unit, req.mark_unit) != 0 ||
	    strcmp(again.mark_tag, req.mark_tag) != 0)
		return "ceems_agent_proto_line_decode: its own fields read back otherwise";
	return NULL;
}
