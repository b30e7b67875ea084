/* fuzz_gather.c - libFuzzer target: the gather's request lines and
 * gather_nodes files (lib/client/gather_proto.h).  The rules checked are
 * in checks_gather.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_gather, data, size);
}
