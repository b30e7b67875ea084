/* fuzz_intensity.c - libFuzzer target: the node's carbon-intensity cache
 * (binary input: it takes a length).  The rules checked are in
 * checks_intensity.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_intensity, data, size);
}
