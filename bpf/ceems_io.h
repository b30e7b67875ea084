/* ceems_io.h - the types the eBPF programs of ceems_io.bpf.c and their loader
 * (lib/sources/bpf_io.c) share: the per-job counters, the attribution modes,
 * the drop counters, and the bounds of every map.  Plain fixed-width
 * types only: this header is read by clang -target bpf (after
 * vmlinux.h) and by the host compiler (after <linux/types.h>). */
#ifndef CEEMS_IO_BPF_SHARED_H
#define CEEMS_IO_BPF_SHARED_H

/* Job slots: the agent gives each registered job one, and a slot is
 * zeroed before it is given again.  As conf.c's largest max_jobs. */
#define CEEMS_BPF_MAX_JOBS 4096
/* Processes tagged on a cgroup v1 host (pid -> slot), and cgroups
 * registered on a cgroup v2 host (cgroup id -> slot). */
#define CEEMS_BPF_MAX_PIDS 65536
#define CEEMS_BPF_MAX_CGROUPS 8192
/* Sockets remembered for the retransmissions the kernel makes outside
 * the sender's context (least recently used go first). */
#define CEEMS_BPF_MAX_SOCKS 16384
/* Deepest cgroup v2 level a job's directory may sit at. */
#define CEEMS_BPF_MAX_LEVEL 16

/* In a pid map value: the process's forks are the job's, its own IO is
 * not (slurmstepd, in the job's cgroup on cgroup v1). */
#define CEEMS_BPF_FOLLOW_ONLY 0x80000000u

/* How a process is found to be a job's. */
enum ceems_bpf_attrib {
	CEEMS_BPF_BY_PID = 0,		/* cgroup v1: pid map, forks followed */
	CEEMS_BPF_BY_CGROUP = 1,	/* cgroup v2: the job cgroup's id */
};

/* The network counters' indices: the measurement model's own. */
#include "model/net_kinds.h"

/* One job's counters on one CPU (the map is per CPU: no atomics; the
 * loader sums the CPUs).  Network figures are what the socket layer
 * moved for the job's processes (sock_sendmsg/sock_recvmsg), messages
 * being the calls that moved data (a UDP datagram each). */
struct ceems_bpf_job_counters {
	__u64 read_bytes;
	__u64 read_ops;
	__u64 read_errors;
	__u64 write_bytes;
	__u64 write_ops;
	__u64 write_errors;
	__u64 net_bytes[2][2][2];	/* [direction][protocol][family] */
	__u64 net_msgs[2][2][2];
	__u64 tcp_retrans;
};

/* Events that found a full map (per CPU, summed by the loader). */
struct ceems_bpf_drops {
	__u64 pids;			/* a fork not followed */
	__u64 socks;			/* unused: the socket map evicts */
};

#endif
