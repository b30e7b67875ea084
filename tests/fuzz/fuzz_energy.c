/* fuzz_energy.c - libFuzzer target: the sysfs files and names of the RAPL,
 * hwmon and pm_counters sources.  The rules checked are in checks.c; `make
 * fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_energy, data, size);
}
