/* fuzz_mark_line.c - libFuzzer target: the plain-text mark on the
 * agent's socket (lib/client/agent_proto.h).  The rules checked are in
 * checks_mark_line.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_mark_line, data, size);
}
