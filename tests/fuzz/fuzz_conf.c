/* fuzz_conf.c - libFuzzer target: the configuration file and its durations.
 * The rules checked are in checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_conf, data, size);
}
