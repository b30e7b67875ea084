/* fuzz_text.c - libFuzzer target: arbitrary bytes in every string field
 * of the job record and of the agent's messages (binary input: its NULs
 * cut it into the strings).  The rules checked are in checks_text.c;
 * `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_text, data, size);
}
