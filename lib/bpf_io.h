/* bpf_io.h - per-job IO and network counters from the eBPF programs of
 * bpf/ceems_io.bpf.c: loaded and attached once per node (by the node agent,
 * before it drops its capabilities), a slot per registered job, the
 * slots read at each tick.
 *
 * Each hook (IO, network, TCP retransmissions, process tracking) is
 * attached the best way the kernel offers: a BTF tracepoint, else a
 * plain tracepoint (tracefs).  A build without libbpf (--disable-bpf),
 * a kernel without the hooks or a process without CAP_BPF and
 * CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8) gets no handle and a
 * reason, and the jobs' figures are absent, not zero. */
#ifndef CEEMS_BPF_IO_H
#define CEEMS_BPF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"
#include "conf.h"

enum ceems_bpf_hook {
	CEEMS_BPF_HOOK_IO,		/* read/write system call exits */
	CEEMS_BPF_HOOK_NET,		/* sock_send_length, sock_recv_length */
	CEEMS_BPF_HOOK_RETRANS,		/* tcp_retransmit_skb */
	CEEMS_BPF_HOOK_PROC,		/* sched_process_fork, _exit */
	CEEMS_BPF_NHOOKS,
};

enum ceems_bpf_attach {
	CEEMS_BPF_ATTACH_NONE,
	CEEMS_BPF_ATTACH_TP_BTF,	/* BTF tracepoint (raw, typed) */
	CEEMS_BPF_ATTACH_TRACEPOINT,	/* tracefs tracepoint */
};

/* What the kernel offers for each hook. */
struct ceems_bpf_offer {
	bool tp_btf[CEEMS_BPF_NHOOKS];	/* btf_trace_<event> in vmlinux BTF */
	bool tracepoint[CEEMS_BPF_NHOOKS];	/* events/<group>/<event> in tracefs */
};

/* The attach type of each hook: a BTF tracepoint where offered (and not
 * ruled out by NO_BTF, after a failed load), else a tracepoint, else
 * none.  Process tracking (needed on cgroup v1, BY_PID) and IO are the
 * required hooks: without them, everything is NONE.  Returns how many
 * hooks are attached. */
int ceems_bpf_choose(const struct ceems_bpf_offer *offer, bool by_pid,
		     bool no_btf, enum ceems_bpf_attach out[CEEMS_BPF_NHOOKS]);

const char *ceems_bpf_attach_name(enum ceems_bpf_attach a);
const char *ceems_bpf_hook_name(enum ceems_bpf_hook h);

/* Fill OFFER from the running kernel (BTF at /sys/kernel/btf/vmlinux,
 * tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing). */
void ceems_bpf_probe(struct ceems_bpf_offer *offer);

struct ceems_bpf_io;

/* Load and attach the programs for MAX_JOBS job slots, attributing by
 * cgroup v2 id (BY_CGROUP) or by process (cgroup v1), with plain
 * tracepoints only when NO_BTF.  NULL with WHY (for the jobs' data
 * quality and the log) when it cannot. */
struct ceems_bpf_io *ceems_bpf_io_open(bool by_cgroup, bool no_btf,
				       uint32_t max_jobs, char *why,
				       size_t why_size);
void ceems_bpf_io_close(struct ceems_bpf_io *io);

/* The attach type chosen for hook H. */
enum ceems_bpf_attach ceems_bpf_io_attach(const struct ceems_bpf_io *io,
					  enum ceems_bpf_hook h);
bool ceems_bpf_io_by_cgroup(const struct ceems_bpf_io *io);

/* The node agent loads the programs while it still holds its
 * capabilities (tools/ceems-agent.c), and its engine takes them at
 * open.  Take returns the loaded handle (once), or loads now; NULL with
 * WHY as ceems_bpf_io_open. */
void ceems_bpf_io_preload(const struct ceems_config *config);
bool ceems_bpf_io_preloaded(void);
struct ceems_bpf_io *ceems_bpf_io_take(const struct ceems_config *config,
				       char *why, size_t why_size);

/* Whether this kernel refuses the eBPF map reads and updates of a
 * process without CAP_BPF, even through the maps' descriptors: before
 * Linux 6.5, when kernel.unprivileged_bpf_disabled is set (Debian's
 * default). */
bool ceems_bpf_io_maps_need_cap(void);

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
/* Forget the slot's processes and cgroups, free the slot. */
void ceems_bpf_io_job_end(struct ceems_bpf_io *io, uint32_t slot);
/* Forks not followed because the pid map was full, since load. */
uint64_t ceems_bpf_io_drops(struct ceems_bpf_io *io);

#endif
