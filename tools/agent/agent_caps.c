/* agent_caps.c - capability dropping for the node agent (libcap).
 *
 * What each feature needs (also in ceems-agent(8)):
 *   RAPL (powercap energy_uj is 0400 root since Linux 5.10): nothing as
 *     uid 0 (the owner may read), CAP_DAC_READ_SEARCH as any other uid;
 *   hwmon, pm_counters, cgroupfs, /proc: world-readable, nothing;
 *   the socket and state directories: nothing as their owner (root);
 *   per-job IO counted per tick (ebpf = per-tick): a BPF task iterator,
 *     loaded before this drop as the programs are, read as their maps
 *     are (CAP_BPF kept where those need it);
 *   eBPF: CAP_BPF + CAP_PERFMON to load, before this drop
 *     (tools/agent/ceems-agent.c); after it, CAP_BPF only where the kernel
 *     (before Linux 6.5, with unprivileged eBPF disabled) refuses map
 *     reads through their descriptors without it;
 *   the BMC: nothing (in band through the kernel's /dev/ipmi0, owned by
 *     root; over LAN a UDP socket);
 *   perf counters per job (perf = on): perf_event_open in cgroup mode
 *     is per CPU, which perf_event_paranoid above 0 (Debian's default
 *     is 2 or more) allows only with CAP_PERFMON (CAP_SYS_ADMIN on
 *     kernels before 5.8); moving a v1 job's processes into the
 *     perf_event cgroup the agent makes needs nothing as uid 0 (it
 *     owns cgroupfs);
 * Everything else goes from the effective, permitted, inheritable,
 * ambient and bounding sets, and no_new_privs is set, so that a bug in
 * the agent cannot be turned into more than reading counters.  What uid
 * 0 may still do as the owner of root's files, agent_confine.c takes
 * away. */
#include "config.h"

#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_caps.h"
#include "sources/bpf_io.h"
#include "base/fileio.h"
#include "base/log.h"

#define MAX_KEEP 8

/* CAP_BPF (Linux 5.8); CAP_SYS_ADMIN grants the same before it. */
#ifdef CAP_BPF
#define CEEMS_CAP_BPF CAP_BPF
#else
#define CEEMS_CAP_BPF CAP_SYS_ADMIN
#endif

void
agent_caps_raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		ceems_warning("getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
		return;
	}
	/* An infinite hard limit cannot be a soft one (the kernel caps open
	 * files at fs.nr_open): ask for its default instead. */
	want = rl.rlim_max == RLIM_INFINITY ? 1048576 : rl.rlim_max;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		ceems_warning("cannot raise the open-files limit to %llu (%s): "
			      "with many jobs, registrations may fail",
			      (unsigned long long)want, strerror(errno));
		return;
	}
	ceems_debug("open-files limit raised to %llu", (unsigned long long)want);
}

static void
want_cap(cap_value_t *keep, const char **why, int *nkeep, cap_value_t cap,
	 const char *reason)
{
	for (int i = 0; i < *nkeep; i++)
		if (keep[i] == cap)
			return;
	if (*nkeep < MAX_KEEP) {
		keep[*nkeep] = cap;
		why[*nkeep] = reason;
		(*nkeep)++;
	}
}

static bool
kept(const cap_value_t *keep, int nkeep, cap_value_t cap)
{
	for (int i = 0; i < nkeep; i++)
		if (keep[i] == cap)
			return true;
	return false;
}

static void
log_caps(void)
{
	cap_t now = cap_get_proc();
	char *text = now != NULL ? cap_to_text(now, NULL) : NULL;

	/* cap_to_text writes "=" for the empty set. */
	ceems_info("capabilities kept: %s",
		   text == NULL ? "(unknown)" :
		   strcmp(text, "=") == 0 ? "none" : text);
	cap_free(text);
	cap_free(now);
}

/* CAP_PERFMON where the kernel knows it (5.8), else CAP_SYS_ADMIN. */
static cap_value_t
perf_cap(void)
{
#ifdef CAP_PERFMON
	if (cap_max_bits() > CAP_PERFMON)
		return CAP_PERFMON;
#endif
	return CAP_SYS_ADMIN;
}

/* Per-CPU events need a capability unless perf_event_paranoid is 0 or
 * less (an unreadable setting: assume they do). */
static bool
perf_needs_cap(void)
{
	char text[32];
	long v;

	if (ceems_fileio_read_text_file("/proc/sys/kernel/perf_event_paranoid", text,
				 sizeof(text)) < 0)
		return true;
	v = strtol(text, NULL, 10);
	return v > 0;
}

int
agent_caps_restrict(const struct ceems_config *config)
{
	cap_value_t keep[MAX_KEEP];
	const char *why[MAX_KEEP];
	int nkeep = 0, bound_failed = 0;
	cap_t have, caps;

	if (config->source_rapl && geteuid() != 0)
		want_cap(keep, why, &nkeep, CAP_DAC_READ_SEARCH,
			 "RAPL energy_uj is readable by root only");
	if (ceems_agent_bpf_io_preloaded() && ceems_agent_bpf_io_maps_need_cap())
		want_cap(keep, why, &nkeep, CEEMS_CAP_BPF,
			 "this kernel reads eBPF maps and iterators for CAP_BPF holders only");
	if (config->perf && perf_needs_cap())
		want_cap(keep, why, &nkeep, perf_cap(),
			 "perf counters per job: perf_event_open on a job's cgroup");

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		ceems_error("cannot set no_new_privs: %s", strerror(errno));
		return -1;
	}

	/* The bounding set first: dropping from it needs CAP_SETPCAP, which
	 * is about to go from the effective set. */
	for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++) {
		if (kept(keep, nkeep, c) || cap_get_bound(c) != 1)
			continue;
		if (cap_drop_bound(c) < 0)
			bound_failed++;
	}
	if (bound_failed > 0)
		ceems_info("bounding set left as it was (no CAP_SETPCAP): "
			   "no_new_privs still stops any capability from being regained");
	if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
		ceems_debug("cannot clear the ambient set: %s", strerror(errno));

	/* Keep only what this process actually holds: asking for a missing
	 * capability fails, and the feature that needs it is then logged. */
	have = cap_get_proc();
	caps = cap_init();
	if (have == NULL || caps == NULL) {
		ceems_error("cannot read the capability sets: %s", strerror(errno));
		cap_free(have);
		cap_free(caps);
		return -1;
	}
	for (int i = 0; i < nkeep; i++) {
		cap_flag_value_t permitted = CAP_CLEAR;

		cap_get_flag(have, keep[i], CAP_PERMITTED, &permitted);
		if (permitted != CAP_SET) {
			char *name = cap_to_name(keep[i]);

			ceems_warning("%s is needed (%s) but this process does not hold it: "
				      "that feature will fail", name != NULL ? name : "?",
				      why[i]);
			cap_free(name);
			continue;
		}
		cap_set_flag(caps, CAP_PERMITTED, 1, &keep[i], CAP_SET);
		cap_set_flag(caps, CAP_EFFECTIVE, 1, &keep[i], CAP_SET);
	}
	if (cap_set_proc(caps) < 0) {
		ceems_error("cannot drop capabilities: %s", strerror(errno));
		cap_free(have);
		cap_free(caps);
		return -1;
	}
	cap_free(have);
	cap_free(caps);
	log_caps();
	return 0;
}
