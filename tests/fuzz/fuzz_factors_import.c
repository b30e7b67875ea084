/* fuzz_factors_import.c - libFuzzer target: the exports that `ceems-admin
 * factors import` reads (binary input: it takes a length).  The rules
 * checked are in checks_intensity.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_factors_import, data, size);
}
