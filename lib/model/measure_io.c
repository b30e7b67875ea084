/* measure_io.c - a job report's eBPF figures (struct
 * ceems_agent_io_report: IO, network, drops, or why they are absent) as
 * JSON members of the report, both ways (lib/model/measure_json.c). */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "base/json_util.h"
#include "model/measure.h"
#include "model/measure_internal.h"

/* The eBPF figures (struct ceems_agent_io_report): "io", "net" and
 * "ebpf_dropped" when measured, else "ebpf_absent" with the reason.
 * IO counted per tick says so ("counting": "per-tick") and has no
 * errors (the kernel's per-process counters keep none). */
static const struct {
	const char *name;
	size_t offset;
} io_fields[] = {
#define F(f) { #f, offsetof(struct ceems_agent_io_report, f) }
	F(read_bytes), F(read_ops), F(read_errors),
	F(write_bytes), F(write_ops), F(write_errors),
#undef F
};
#define NIO_FIELDS (sizeof(io_fields) / sizeof(io_fields[0]))
#define PER_TICK_WORD "per-tick"

/* Whether io field I is one IO counted per tick lacks. */
static bool
is_error_field(size_t i)
{
	return strstr(io_fields[i].name, "_errors") != NULL;
}
/* "tcp4", "tcp6", "udp4", "udp6": [protocol][family] */
static const char *const net_names[2][2] = { { "tcp4", "tcp6" },
					     { "udp4", "udp6" } };
static const char *const net_parts[4] = { "in_bytes", "out_bytes",
					  "in_msgs", "out_msgs" };

static uint64_t *
net_part(struct ceems_agent_io_report *io, int part, int p, int f)
{
	int dir = part % 2 == 0 ? CEEMS_IO_IN : CEEMS_IO_OUT;

	return part < 2 ? &io->net_bytes[dir][p][f] : &io->net_msgs[dir][p][f];
}

void
ceems_measure_io_to_json(struct json_object *obj,
		   const struct ceems_agent_io_report *io, bool *ok)
{
	struct ceems_agent_io_report copy = *io;
	struct json_object *o;

	if (!io->have_io) {
		if (io->absent_why[0] != '\0')
			ceems_json_util_add(obj, "ebpf_absent",
				       ceems_json_util_new_text(io->absent_why,
							   sizeof(io->absent_why)), ok);
		return;
	}
	o = json_object_new_object();
	if (o != NULL && io->counting == CEEMS_IO_PER_TICK)
		ceems_json_util_add(o, "counting",
				    json_object_new_string(PER_TICK_WORD), ok);
	for (size_t i = 0; o != NULL && i < NIO_FIELDS; i++) {
		uint64_t v;

		if (io->counting == CEEMS_IO_PER_TICK && is_error_field(i))
			continue;
		memcpy(&v, (const char *)io + io_fields[i].offset, sizeof(v));
		ceems_json_util_add(o, io_fields[i].name, ceems_json_util_new_u64(v), ok);
	}
	ceems_json_util_add(obj, "io", o, ok);
	if (io->have_net) {
		o = json_object_new_object();
		for (int p = 0; o != NULL && p < 2; p++)
			for (int f = 0; f < 2; f++) {
				struct json_object *n = json_object_new_object();

				for (int k = 0; n != NULL && k < 4; k++)
					ceems_json_util_add(n, net_parts[k], ceems_json_util_new_u64(
						*net_part(&copy, k, p, f)), ok);
				ceems_json_util_add(o, net_names[p][f], n, ok);
			}
		if (o != NULL && io->have_tcp_retrans)
			ceems_json_util_add(o, "tcp_retrans", ceems_json_util_new_u64(io->tcp_retrans), ok);
		ceems_json_util_add(obj, "net", o, ok);
	}
	if (io->dropped > 0)
		ceems_json_util_add(obj, "ebpf_dropped", ceems_json_util_new_u64(io->dropped), ok);
	if (io->unmeasured_s > 0)
		ceems_json_util_add_double(obj, "ebpf_unmeasured_s", io->unmeasured_s, ok);
}

static int
net_from_json(const struct json_object *obj, struct ceems_agent_io_report *io,
	      char *err, size_t err_size)
{
	struct json_object *val, *n;
	char where[64];
	int r;

	if (!json_object_is_type(obj, json_type_object))
		return ceems_json_util_error(err, err_size, "report.net must be an object");
	for (int p = 0; p < 2; p++)
		for (int f = 0; f < 2; f++) {
			if ((n = ceems_json_util_get(obj, net_names[p][f])) == NULL)
				continue;
			if (!json_object_is_type(n, json_type_object))
				return ceems_json_util_error(err, err_size, "report.net.%s must be an object",
							net_names[p][f]);
			for (int k = 0; k < 4; k++) {
				if ((val = ceems_json_util_get(n, net_parts[k])) == NULL)
					continue;
				snprintf(where, sizeof(where), "report.net.%s.%s",
					 net_names[p][f], net_parts[k]);
				if ((r = ceems_json_util_read_uint(val, where, 0, UINT64_MAX,
							      net_part(io, k, p, f), err,
							      err_size)) < 0)
					return r;
			}
		}
	if ((val = ceems_json_util_get(obj, "tcp_retrans")) != NULL) {
		if ((r = ceems_json_util_read_uint(val, "report.net.tcp_retrans", 0, UINT64_MAX,
					      &io->tcp_retrans, err, err_size)) < 0)
			return r;
		io->have_tcp_retrans = true;
	}
	io->have_net = true;
	return 0;
}

int
ceems_measure_io_from_json(const struct json_object *obj,
		     struct ceems_agent_io_report *io, char *err,
		     size_t err_size)
{
	struct json_object *val, *o;
	char where[64];
	int r;

	if ((val = ceems_json_util_get(obj, "ebpf_absent")) != NULL &&
	    (r = ceems_json_util_read_string(val, "report.ebpf_absent", io->absent_why,
					sizeof(io->absent_why), err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "ebpf_dropped")) != NULL &&
	    (r = ceems_json_util_read_uint(val, "report.ebpf_dropped", 0, UINT64_MAX,
				      &io->dropped, err, err_size)) < 0)
		return r;
	if ((val = ceems_json_util_get(obj, "ebpf_unmeasured_s")) != NULL &&
	    (r = ceems_json_util_read_real(val, "report.ebpf_unmeasured_s", 0, 1e10,
				      &io->unmeasured_s, err, err_size)) < 0)
		return r;
	if ((o = ceems_json_util_get(obj, "io")) == NULL)
		return 0;
	if (!json_object_is_type(o, json_type_object))
		return ceems_json_util_error(err, err_size, "report.io must be an object");
	if ((val = ceems_json_util_get(o, "counting")) != NULL) {
		char word[16];

		if ((r = ceems_json_util_read_string(val, "report.io.counting", word,
						     sizeof(word), err, err_size)) < 0)
			return r;
		if (strcmp(word, PER_TICK_WORD) != 0)
			return ceems_json_util_error(err, err_size,
						     "report.io.counting must be \"%s\"",
						     PER_TICK_WORD);
		io->counting = CEEMS_IO_PER_TICK;
	}
	for (size_t i = 0; i < NIO_FIELDS; i++) {
		uint64_t v;

		snprintf(where, sizeof(where), "report.io.%s", io_fields[i].name);
		if (io->counting == CEEMS_IO_PER_TICK && is_error_field(i)) {
			if (ceems_json_util_get(o, io_fields[i].name) != NULL)
				return ceems_json_util_error(err, err_size,
							     "%s: IO counted per tick has no errors",
							     where);
			continue;
		}
		/* Measured means all of them: a missing one is not a 0. */
		if ((val = ceems_json_util_get(o, io_fields[i].name)) == NULL)
			return ceems_json_util_error(err, err_size, "%s is missing",
						where);
		if ((r = ceems_json_util_read_uint(val, where, 0, UINT64_MAX, &v, err,
					      err_size)) < 0)
			return r;
		memcpy((char *)io + io_fields[i].offset, &v, sizeof(v));
	}
	io->have_io = true;
	if ((o = ceems_json_util_get(obj, "net")) != NULL)
		return net_from_json(o, io, err, err_size);
	return 0;
}
