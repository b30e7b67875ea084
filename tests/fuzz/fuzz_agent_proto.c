/* fuzz_agent_proto.c - libFuzzer target: the node agent's requests and
 * replies (binary input: they take a length).  The rules checked are in
 * checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_agent_proto, data, size);
}
