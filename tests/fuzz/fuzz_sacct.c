/* fuzz_sacct.c - libFuzzer target: ceems-sacct's parsers of outside
 * input (times, --format, job ids, a record's series).  The rules
 * checked are in checks_sacct.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_sacct, data, size);
}
