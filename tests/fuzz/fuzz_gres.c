/* fuzz_gres.c - libFuzzer target: Slurm's GPU allocation of a job
 * and gres.conf (lib/sources/gres.h).  The rules checked are in
 * checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_gres, data, size);
}
