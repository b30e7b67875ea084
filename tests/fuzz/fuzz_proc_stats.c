/* fuzz_proc_stats.c - libFuzzer target: /proc/stat and /proc/meminfo. The
 * rules checked are in checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_proc_stats, data, size);
}
