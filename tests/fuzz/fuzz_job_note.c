/* fuzz_job_note.c - libFuzzer target: the notes the job-side plugin
 * leaves for the node agent (lib/record/job_note.h).  The rules checked are in
 * checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_job_note, data, size);
}
