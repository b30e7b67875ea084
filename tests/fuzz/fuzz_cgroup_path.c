/* fuzz_cgroup_path.c - libFuzzer target: /proc/PID/cgroup and
 * /proc/self/mountinfo, and the job directories built from them.  The rules
 * checked are in checks.c; `make fuzz` builds and runs it. */
#include "config.h"

#include "fuzz_target.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_run(fuzz_check_cgroup_path, data, size);
}
