/* fuzz_cgroup_stats.c - libFuzzer target: the cgroup v1 and v2 counter files
 * (every ceems_parse_* of cgroup_stats.h).  The rules checked are in
 * checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_cgroup_stats, data, size);
}
