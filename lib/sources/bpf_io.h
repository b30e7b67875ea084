/* bpf_io.h - per-job IO and network counters from the eBPF programs of
 * bpf/ceems_io.bpf.c: loaded and attached once per node (by the node agent,
 * before it drops its capabilities), a slot per registered job, the
 * slots read at each tick.
 *
 * Each hook (IO, network, TCP retransmissions, process tracking) is
 * attached the best way the kernel accepts (lib/sources/bpf_choose.c): fentry,
 * kprobe, BTF tracepoint, plain tracepoint, tried by loading.  A build
 * without libbpf (--disable-bpf), a kernel without the hooks or a
 * process without CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before Linux
 * 5.8) gets no handle and a reason, and the jobs' figures are absent,
 * not zero. */
#ifndef CEEMS_BPF_IO_H
#define CEEMS_BPF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "model/measure.h"

enum ceems_bpf_hook {
	CEEMS_BPF_HOOK_IO,		/* read/write system call returns */
	CEEMS_BPF_HOOK_NET,		/* sends and receives on IP sockets */
	CEEMS_BPF_HOOK_RETRANS,		/* tcp_retransmit_skb, sockets closing */
	CEEMS_BPF_HOOK_PROC,		/* sched_process_fork, _exit */
	CEEMS_BPF_NHOOKS,
};

/* The attach types; NONE doubles as "auto" where a type is forced. */
enum ceems_bpf_attach {
	CEEMS_BPF_ATTACH_NONE,
	CEEMS_BPF_ATTACH_TP_BTF,	/* BTF tracepoint (raw, typed) */
	CEEMS_BPF_ATTACH_TRACEPOINT,	/* tracefs tracepoint */
	CEEMS_BPF_ATTACH_FENTRY,	/* fentry/fexit (BPF trampoline) */
	CEEMS_BPF_ATTACH_KPROBE,	/* kprobe/kretprobe */
	CEEMS_BPF_NATTACH,
};

/* What the kernel accepts for each hook: OFFERED[hook][attach]. */
struct ceems_bpf_offer {
	bool offered[CEEMS_BPF_NHOOKS][CEEMS_BPF_NATTACH];
};

/* The attach types to try for hook H, best first, into LIST (NATTACH
 * long); their number.  Auto (FORCE NONE): IO fentry, kprobe, tp_btf,
 * tracepoint; network fentry, tp_btf, tracepoint, kprobe; the others
 * tp_btf, tracepoint.  FORCE: that type alone for each hook that has a
 * variant of it; a hook without one (kprobe, fentry: retransmissions
 * and processes) its auto list. */
int ceems_bpf_choose_candidates(enum ceems_bpf_hook h, enum ceems_bpf_attach force,
			 enum ceems_bpf_attach list[CEEMS_BPF_NATTACH]);

/* The attach type of each hook: the first of its candidates that OFFER
 * says the kernel accepts, else none.  IO and process tracking (needed
 * on cgroup v1, BY_PID) are the required hooks: without them, and when
 * FORCE is refused for a hook that has a variant of it, everything is
 * NONE.  Returns how many hooks are attached. */
int ceems_bpf_choose(const struct ceems_bpf_offer *offer, bool by_pid,
		     enum ceems_bpf_attach force,
		     enum ceems_bpf_attach out[CEEMS_BPF_NHOOKS]);

/* The ebpf key's word as the type it forces: per-call and auto (NONE),
 * fentry, kprobe, btf, tracepoint; -1 for any other (off and per-tick,
 * which load no program, included). */
int ceems_bpf_choose_force_from_word(const char *word);

const char *ceems_bpf_choose_attach_name(enum ceems_bpf_attach a);
const char *ceems_bpf_choose_hook_name(enum ceems_bpf_hook h);

struct ceems_bpf_io;

/* Load and attach the programs for MAX_JOBS job slots, attributing by
 * cgroup v2 id (BY_CGROUP) or by process (cgroup v1), each hook the
 * best way the kernel accepts, or by FORCE where not NONE.  NULL with
 * WHY (for the jobs' data quality and the log) when it cannot. */
struct ceems_bpf_io *ceems_bpf_io_open(bool by_cgroup,
				       enum ceems_bpf_attach force,
				       uint32_t max_jobs, char *why,
				       size_t why_size);
void ceems_bpf_io_close(struct ceems_bpf_io *io);

/* The attach type chosen for hook H. */
enum ceems_bpf_attach ceems_bpf_io_attach(const struct ceems_bpf_io *io,
					  enum ceems_bpf_hook h);
bool ceems_bpf_io_by_cgroup(const struct ceems_bpf_io *io);
/* Why hooks got a worse type than the best one of their kind ("io:
 * fentry refused (...); ..."), "" when none did. */
const char *ceems_bpf_io_refusals(const struct ceems_bpf_io *io);

/* The node agent loads the programs while it still holds its
 * capabilities (tools/agent/ceems-agent.c), and its engine takes them at
 * open.  Take returns the loaded handle (once), or loads now; NULL with
 * WHY as ceems_bpf_io_open. */
void ceems_agent_bpf_io_preload(const struct ceems_config *config);
bool ceems_agent_bpf_io_preloaded(void);
struct ceems_bpf_io *ceems_agent_bpf_io_take(const struct ceems_config *config,
				       char *why, size_t why_size);

/* Whether this kernel refuses the eBPF map reads and updates of a
 * process without CAP_BPF, even through the maps' descriptors: before
 * Linux 6.5, when kernel.unprivileged_bpf_disabled is set (Debian's
 * default). */
bool ceems_agent_bpf_io_maps_need_cap(void);

/* A slot for a new job of user UID (only its processes running as UID
 * count), its counters zeroed: 0 and *SLOT, or -ENOSPC, -errno. */
int ceems_bpf_io_job_start(struct ceems_bpf_io *io, uint32_t uid,
			   uint32_t *slot);
/* Tag process PID (cgroup v1) or the cgroup of id CGROUP_ID at LEVEL of
 * the v2 tree as the slot's; a process tagged FOLLOW_ONLY (slurmstepd)
 * is not counted, its children are.  0, -ENOSPC (map full), -errno. */
int ceems_bpf_io_tag_pid(struct ceems_bpf_io *io, uint32_t slot, uint32_t pid,
			 bool follow_only);
int ceems_bpf_io_tag_cgroup(struct ceems_bpf_io *io, uint32_t slot,
			    uint64_t cgroup_id, unsigned level);
/* The slot's counters summed over the CPUs into OUT (its have_ flags
 * from the hooks attached).  0 or -errno. */
int ceems_bpf_io_read(struct ceems_bpf_io *io, uint32_t slot,
		      struct ceems_agent_io_report *out);
/* End the slot's job: nothing more is charged to it (its processes'
 * entries go stale, deleted as they are met and by a sweep when the
 * pid map fills), its cgroups are forgotten, the slot is free. */
void ceems_bpf_io_job_end(struct ceems_bpf_io *io, uint32_t slot);
/* How many sockets the kernel would charge a TCP retransmission to the
 * slot's job for: those it sent on, not yet closed.  -errno. */
int ceems_bpf_io_sockets(struct ceems_bpf_io *io, uint32_t slot);
/* Forks not followed and processes not tagged because the pid map was
 * full, since load. */
uint64_t ceems_bpf_io_drops(struct ceems_bpf_io *io);

#endif
