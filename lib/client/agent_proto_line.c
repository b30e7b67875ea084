/* agent_proto_line.c - the plain-text form of the "mark" request on the
 * node agent's socket (agent_proto.h, doc/marks.md "The line
 * protocol"), for a language that has a socket but no JSON at hand:
 *
 *   MARK JOBID NAME VALUE UNIT add|set [TAG]\n  ->   OK\n
 *                                            or   ERR CODE sentence\n
 *
 * TAG, optional, is the application the counter's work is of
 * (model/marks.h).
 *
 * Its sender is any process of any job, so the parser is strict and
 * says in one sentence what is wrong: fields separated by one space
 * each, printable ASCII only, the final newline optional (a message is
 * a SOCK_SEQPACKET record, already framed), the value a plain decimal
 * number (no "nan", "inf" or hexadecimal that strtod would take). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/agent_proto.h"

/* The fields of a mark line: the word MARK and five more, and a tag. */
#define LINE_FIELDS 7
/* The longest field that can be right: a value of 2^53 in plain
 * decimals with a fraction fits in 64 bytes. */
#define LINE_FIELD_MAX 64

bool
ceems_agent_proto_line_is(const char *buf, size_t len)
{
	return len >= 5 && memcmp(buf, "MARK ", 5) == 0;
}

static int
line_error(char *err, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
line_error(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Cut the LEN bytes at BUF into FIELD (LINE_FIELDS - 1 or LINE_FIELDS
 * of them, each NUL ended; the tag "" when not given): 0, or -EINVAL
 * with ERR. */
static int
split(const char *buf, size_t len, char field[LINE_FIELDS][LINE_FIELD_MAX],
      char *err, size_t err_size)
{
	size_t nf = 0, at = 0;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	for (size_t i = 0; i <= len; i++) {
		if (i == len || buf[i] == ' ') {
			if (at == 0)
				return line_error(err, err_size, "mark line: "
					"fields are separated by one space each, "
					"with none at the start or the end");
			field[nf++][at] = '\0';
			at = 0;
			continue;
		}
		if ((unsigned char)buf[i] <= 0x20 || (unsigned char)buf[i] >= 0x7f)
			return line_error(err, err_size, "mark line: byte %zu is not "
				"printable ASCII (one line, one space between "
				"fields)", i);
		if (nf == LINE_FIELDS)
			return line_error(err, err_size, "mark line: more than "
				"%d fields (MARK JOBID NAME VALUE UNIT add|set "
				"[TAG])", LINE_FIELDS);
		if (at + 1 >= LINE_FIELD_MAX)
			return line_error(err, err_size, "mark line: field %zu is "
				"longer than %d bytes", nf + 1, LINE_FIELD_MAX - 1);
		field[nf][at++] = buf[i];
	}
	if (nf < LINE_FIELDS - 1)
		return line_error(err, err_size, "mark line: %zu fields, not %d "
			"(MARK JOBID NAME VALUE UNIT add|set [TAG])", nf,
			LINE_FIELDS - 1);
	if (nf == LINE_FIELDS - 1)
		field[nf][0] = '\0';
	return 0;
}

/* TEXT as a decimal in [MIN, MAX] into *OUT: digits, at most one '.',
 * an optional exponent (e or E, a sign, digits); no sign before it. */
static int
read_decimal(const char *text, const char *what, double min, double max,
	     double *out, char *err, size_t err_size)
{
	const char *p = text;
	size_t digits = 0;
	char *end;
	double v;

	while ((*p >= '0' && *p <= '9') || *p == '.')
		digits += *p++ != '.';
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			digits = 0;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (digits == 0 || *p != '\0')
		return line_error(err, err_size, "mark line: %s \"%s\" is not a "
			"decimal number", what, text);
	errno = 0;
	v = strtod(text, &end);
	if (*end != '\0' || errno != 0 || !isfinite(v) || v < min || v > max)
		return line_error(err, err_size, "mark line: %s must be from "
			"%.17g to %.17g", what, min, max);
	*out = v;
	return 0;
}

int
ceems_agent_proto_line_decode(const char *buf, size_t len,
			      struct ceems_agent_request *req, char *err,
			      size_t err_size)
{
	char field[LINE_FIELDS][LINE_FIELD_MAX];
	double jobid, value;
	int r;

	if (len > CEEMS_AGENT_MSG_MAX)
		return line_error(err, err_size, "mark line of %zu bytes is larger "
			"than the %d allowed", len, CEEMS_AGENT_MSG_MAX);
	if ((r = split(buf, len, field, err, err_size)) < 0)
		return r;
	if (strcmp(field[0], "MARK") != 0)
		return line_error(err, err_size, "mark line: it starts with MARK");
	if (strchr(field[1], '.') != NULL || strchr(field[1], 'e') != NULL ||
	    strchr(field[1], 'E') != NULL ||
	    read_decimal(field[1], "JOBID", 1, UINT32_MAX, &jobid, err,
			 err_size) < 0)
		return line_error(err, err_size, "mark line: JOBID must be a whole "
			"number from 1 to %u (SLURM_JOB_ID)", UINT32_MAX);
	if (!ceems_marks_name_ok(field[2]) || !ceems_marks_name_ok(field[4]))
		return line_error(err, err_size, "mark line: NAME and UNIT must be "
			"1 to %d letters, digits, '_', '.' or '-'",
			CEEMS_MARKS_NAME_MAX - 1);
	if ((r = read_decimal(field[3], "VALUE", 0, CEEMS_MARKS_VALUE_MAX, &value,
			      err, err_size)) < 0)
		return r;
	if (field[6][0] != '\0' && !ceems_marks_name_ok(field[6]))
		return line_error(err, err_size, "mark line: TAG must be 1 to %d "
			"letters, digits, '_', '.' or '-'",
			CEEMS_MARKS_NAME_MAX - 1);
	/* Said by the caller, never guessed, as in the JSON form. */
	if (strcmp(field[5], "add") != 0 && strcmp(field[5], "set") != 0)
		return line_error(err, err_size, "mark line: the last field is "
			"\"add\" (an increment) or \"set\" (the cumulative value)");
	memset(req, 0, sizeof(*req));
	req->op = CEEMS_AGENT_OP_MARK;
	req->jobid = (uint32_t)jobid;
	memcpy(req->mark_name, field[2], strlen(field[2]) + 1);
	memcpy(req->mark_unit, field[4], strlen(field[4]) + 1);
	memcpy(req->mark_tag, field[6], strlen(field[6]) + 1);
	req->mark_mode = field[5][0] == 'a' ? CEEMS_MARKS_ADD : CEEMS_MARKS_SET;
	req->mark_value = value;
	return 0;
}

int
ceems_agent_proto_line_reply(int code, const char *why, char *buf, size_t size)
{
	size_t at;
	int n;

	if (code == 0)
		n = snprintf(buf, size, "OK\n");
	else
		n = snprintf(buf, size, "ERR %s ", ceems_agent_proto_code_name(code));
	/* Room for the newline an error's sentence ends with, and the NUL. */
	if (n < 0 || (size_t)n + 2 > size)
		return -ENOSPC;
	if (code == 0)
		return n;
	/* One line, whatever the sentence holds: it may quote the caller. */
	at = (size_t)n;
	for (const char *p = why != NULL ? why : ""; *p != '\0' && at + 2 < size; p++)
		buf[at++] = (unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f ?
			    '?' : *p;
	buf[at++] = '\n';
	buf[at] = '\0';
	return (int)at;
}
