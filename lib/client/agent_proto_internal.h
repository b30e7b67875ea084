/* agent_proto_internal.h - what the parts of the node agent's protocol
 * (agent_proto.c, agent_proto_report.c) share and no user of libceems
 * needs.  Not installed; nothing here is exported (the shared library
 * exports only ceems_*). */
#ifndef CEEMS_AGENT_PROTO_INTERNAL_H
#define CEEMS_AGENT_PROTO_INTERNAL_H

#include <stdbool.h>

/* Whether ID can be a step id: not empty, and only digits, lower-case
 * letters and '+'.  Both requests and reports carry step ids. */
bool agent_proto_step_id_ok(const char *id);

/* agent_proto_io.c: the report's eBPF members (io, net, ebpf_dropped,
 * ebpf_absent) from IO into OBJ, and back (-EINVAL with ERR). */
void agent_proto_io_to_json(struct json_object *obj,
			    const struct ceems_agent_io_report *io, bool *ok);
int agent_proto_io_from_json(const struct json_object *obj,
			     struct ceems_agent_io_report *io, char *err,
			     size_t err_size);

#endif /* CEEMS_AGENT_PROTO_INTERNAL_H */
