/* SPDX-License-Identifier: GPL-2.0-only */
/* ceems_io.bpf.c - per-job IO and network counters, loaded once per node by
 * the node agent (lib/sources/bpf_io.c).
 *
 * Each hook exists in several variants, of which the loader keeps one
 * per hook, the best the kernel accepts (lib/sources/bpf_choose.c):
 *   fentry/fexit (BPF trampolines on the kernel functions themselves:
 *       calls not hooked pay nothing), kprobe/kretprobe (the same
 *       functions, through the kprobe machinery), BTF tracepoints
 *       (tp_btf, typed arguments) and plain tracepoints (tracefs; fixed
 *       record layouts, no BTF needed).
 *   IO: the returns of the read and write system calls on files (so that
 *       every file system counts: local, NFS, Lustre, GPFS; not pipes,
 *       sockets or character devices), bytes from their return values,
 *       errors from their negative ones;
 *   network: every send and receive through an IPv4 or IPv6 socket, by
 *       its family and protocol;
 *   TCP retransmissions: tcp_retransmit_skb, charged to the job that
 *       last sent on the socket (retransmissions run off timers, in no
 *       job's context); the socket is forgotten when it closes;
 *   processes: sched_process_fork / sched_process_exit, which follow a
 *       job's processes where the cgroup cannot tell (cgroup v1).
 * A process is a job's by its cgroup v2 ancestor's id, or (v1) by its
 * thread group id in the pid map that the agent fills at registration
 * and the fork hook extends; it counts when it runs as the job's user.
 * Counters are per CPU and per job slot. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "ceems_io.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by the loader before loading. */
const volatile __u32 attrib_mode = CEEMS_BPF_BY_PID;
/* The host's system call numbers (from its <sys/syscall.h>), -1 where
 * the architecture has none: the BTF variant sees every exit. */
const volatile long nr_read = -1, nr_readv = -1, nr_pread64 = -1,
	nr_preadv = -1, nr_preadv2 = -1;
const volatile long nr_write = -1, nr_writev = -1, nr_pwrite64 = -1,
	nr_pwritev = -1, nr_pwritev2 = -1;
const volatile long nr_sendfile = -1, nr_splice = -1,
	nr_copy_file_range = -1;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CEEMS_BPF_MAX_JOBS);
	__type(key, __u32);
	__type(value, struct ceems_bpf_job_counters);
} job_counters SEC(".maps");

/* A process's job: (generation << 32) | slot, with CEEMS_BPF_FOLLOW_ONLY
 * in the slot's bits.  An entry of an older generation than its slot's
 * is stale (the job ended): ignored, and deleted where it is met. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CEEMS_BPF_MAX_PIDS);
	__type(key, __u32);
	__type(value, __u64);
} job_pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CEEMS_BPF_MAX_CGROUPS);
	__type(key, __u64);
	__type(value, __u32);
} job_cgroups SEC(".maps");

/* Bit L set: some job's cgroup sits at level L of the v2 tree. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_levels SEC(".maps");

/* A socket's job: (generation << 32) | slot, by the socket's address.
 * The loader bumps a slot's generation when the slot's job ends, so
 * that a socket of an ended job is never charged to the next one; the
 * entry goes when the socket closes, so that another socket allocated
 * at the same address is not charged to the old job. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CEEMS_BPF_MAX_SOCKS);
	__type(key, __u64);
	__type(value, __u64);
} sock_jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CEEMS_BPF_MAX_JOBS);
	__type(key, __u32);
	__type(value, __u32);
} slot_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ceems_bpf_drops);
} drops SEC(".maps");

/* The kprobe network variant: a job's send or receive in flight, from
 * the function's entry (its arguments) to its return (its result), by
 * thread.  LRU: a return the kernel missed does not leak an entry.  The
 * entry names its function (NET_CALL_*): after a missed return, a
 * return of another function does not take the stale entry's socket
 * and flags. */
struct net_call {
	__u64 sk;
	__s32 family;
	__s32 protocol;
	__s32 flags;
	__s32 fn;
};

enum {
	NET_CALL_SEND4 = 1, NET_CALL_SEND6, NET_CALL_RECV4, NET_CALL_RECV6,
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct net_call);
} net_calls SEC(".maps");

/* The uid of each slot's job: only its processes running as that user
 * count (not slurmstepd, nor the root helpers Slurm and its plugins fork
 * in the job's cgroup). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CEEMS_BPF_MAX_JOBS);
	__type(key, __u32);
	__type(value, __u32);
} slot_uid SEC(".maps");

/* The read and write calls, by where their file descriptors are:
 * IO_SENDFILE (out_fd, in_fd, ...), IO_SPLICE (fd_in, off_in, fd_out,
 * ...) as splice and copy_file_range. */
enum io_kind { IO_NONE, IO_READ, IO_WRITE, IO_SENDFILE, IO_SPLICE };

#define S_IFMT 0170000
#define S_IFREG 0100000
#define S_IFBLK 0060000

/* Whether the pid map's VALUE is of its slot's current generation. */
static __always_inline bool
pid_entry_live(__u64 value)
{
	__u32 slot = (__u32)value & ~CEEMS_BPF_FOLLOW_ONLY;
	__u32 *gen = bpf_map_lookup_elem(&slot_gen, &slot);

	return gen != NULL && *gen == (__u32)(value >> 32);
}

/* The current process's pid map entry (cgroup v1), NULL when it has
 * none or a stale one (deleted then: the job ended). */
static __always_inline __u64 *
current_pid_entry(void)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *value = bpf_map_lookup_elem(&job_pids, &tgid);

	if (value == NULL)
		return NULL;
	if (!pid_entry_live(*value)) {
		bpf_map_delete_elem(&job_pids, &tgid);
		return NULL;
	}
	return value;
}

/* The current process's slot (with CEEMS_BPF_FOLLOW_ONLY) into *OUT. */
static __always_inline bool
current_slot(__u32 *out)
{
	if (attrib_mode == CEEMS_BPF_BY_CGROUP) {
		__u32 zero = 0, *mask = bpf_map_lookup_elem(&cgroup_levels, &zero);

		if (mask == NULL || *mask == 0)
			return false;
		for (int level = 1; level < CEEMS_BPF_MAX_LEVEL; level++) {
			__u64 id;
			__u32 *slot;

			if (!(*mask & (1u << level)))
				continue;
			id = bpf_get_current_ancestor_cgroup_id(level);
			slot = bpf_map_lookup_elem(&job_cgroups, &id);
			if (slot != NULL) {
				*out = *slot;
				return true;
			}
		}
		return false;
	}
	__u64 *value = current_pid_entry();

	if (value == NULL)
		return false;
	*out = (__u32)*value;
	return true;
}

static __always_inline struct ceems_bpf_job_counters *
current_counters(__u32 *slot_out)
{
	__u32 *uid, s;

	/* A process the agent tagged to follow only (slurmstepd): its
	 * children are the job's, its own IO is Slurm's. */
	if (!current_slot(&s) || (s & CEEMS_BPF_FOLLOW_ONLY))
		return NULL;
	uid = bpf_map_lookup_elem(&slot_uid, &s);
	if (uid == NULL || *uid != (__u32)bpf_get_current_uid_gid())
		return NULL;
	if (slot_out != NULL)
		*slot_out = s;
	return bpf_map_lookup_elem(&job_counters, &s);
}

/* Whether FD of the current process is a file (regular or block
 * device, on any file system): pipes, sockets, terminals and character
 * devices (/dev/zero, /dev/null) are not IO. */
static __always_inline bool
fd_is_file(long fd)
{
	/* Typed pointers, walked with plain loads (the verifier guards
	 * them); only the descriptor table's slot needs a helper. */
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *file = NULL;
	unsigned int mode;

	if (fdt == NULL || fd < 0 || fd >= fdt->max_fds)
		return false;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fdt->fd[fd]) < 0 ||
	    file == NULL)
		return false;
	mode = BPF_CORE_READ(file, f_inode, i_mode);
	return (mode & S_IFMT) == S_IFREG || (mode & S_IFMT) == S_IFBLK;
}

static __always_inline void
count_read(struct ceems_bpf_job_counters *c, long ret)
{
	c->read_ops++;
	if (ret < 0)
		c->read_errors++;
	else
		c->read_bytes += ret;
}

static __always_inline void
count_write(struct ceems_bpf_job_counters *c, long ret)
{
	c->write_ops++;
	if (ret < 0)
		c->write_errors++;
	else
		c->write_bytes += ret;
}

/* A read or write call of KIND returned RET; REGS hold its arguments. */
static __always_inline void
count_io(enum io_kind kind, long ret, struct pt_regs *regs)
{
	struct ceems_bpf_job_counters *c;
	long in = -1, out = -1;

	if (kind == IO_NONE || regs == NULL)
		return;
	c = current_counters(NULL);
	if (c == NULL)
		return;
	/* REGS is a typed kernel pointer in every variant (the tracepoint's
	 * argument, the system call function's, bpf_task_pt_regs'): where
	 * the architecture's macros allow (x86), plain loads, not a
	 * helper call each as the CO-RE macros make. */
	if (kind == IO_READ)
		in = PT_REGS_PARM1_SYSCALL(regs);
	else if (kind == IO_WRITE)
		out = PT_REGS_PARM1_SYSCALL(regs);
	else if (kind == IO_SENDFILE) {
		out = PT_REGS_PARM1_SYSCALL(regs);
		in = PT_REGS_PARM2_SYSCALL(regs);
	} else {
		in = PT_REGS_PARM1_SYSCALL(regs);
		out = PT_REGS_PARM3_SYSCALL(regs);
	}
	if (in >= 0 && fd_is_file(in))
		count_read(c, ret);
	if (out >= 0 && fd_is_file(out))
		count_write(c, ret);
}

static __always_inline enum io_kind
io_kind_of(long nr)
{
	if (nr < 0)
		return IO_NONE;
	if (nr == nr_read || nr == nr_readv || nr == nr_pread64 ||
	    nr == nr_preadv || nr == nr_preadv2)
		return IO_READ;
	if (nr == nr_write || nr == nr_writev || nr == nr_pwrite64 ||
	    nr == nr_pwritev || nr == nr_pwritev2)
		return IO_WRITE;
	if (nr == nr_sendfile)
		return IO_SENDFILE;
	if (nr == nr_splice || nr == nr_copy_file_range)
		return IO_SPLICE;
	return IO_NONE;
}

/* A send or receive of RET bytes on SK counted to counters C of slot
 * SLOT (the calling process's job's): TCP and UDP over IPv4 and IPv6. */
static __always_inline void
count_net_to(struct ceems_bpf_job_counters *c, __u32 slot, int dir,
	     const void *sk, int family, int protocol, int ret)
{
	int fam, proto;

	if (family == 2 /* AF_INET */)
		fam = CEEMS_IO_IPV4;
	else if (family == 10 /* AF_INET6 */)
		fam = CEEMS_IO_IPV6;
	else
		return;
	if (protocol == 6 /* IPPROTO_TCP */)
		proto = CEEMS_IO_TCP;
	else if (protocol == 17 /* IPPROTO_UDP */)
		proto = CEEMS_IO_UDP;
	else
		return;
	c->net_bytes[dir][proto][fam] += ret;
	c->net_msgs[dir][proto][fam]++;
	if (proto == CEEMS_IO_TCP && dir == CEEMS_IO_OUT) {
		__u64 key = (__u64)(unsigned long)sk, value, *known;
		__u32 *gen = bpf_map_lookup_elem(&slot_gen, &slot);

		if (gen == NULL)
			return;
		value = ((__u64)*gen << 32) | slot;
		known = bpf_map_lookup_elem(&sock_jobs, &key);
		if (known == NULL || *known != value)
			bpf_map_update_elem(&sock_jobs, &key, &value, BPF_ANY);
	}
}

/* A send or receive of RET bytes (a receive with FLAGS) on SK, counted
 * to the calling process's job if it is a job's. */
static __always_inline void
count_net(int dir, const void *sk, int family, int protocol, int ret,
	  int flags)
{
	struct ceems_bpf_job_counters *c;
	__u32 slot;

	if (ret <= 0 || (dir == CEEMS_IO_IN && (flags & 2 /* MSG_PEEK */)))
		return;
	c = current_counters(&slot);
	if (c == NULL)
		return;
	count_net_to(c, slot, dir, sk, family, protocol, ret);
}

static __always_inline void
count_retrans(const void *sk)
{
	__u64 key = (__u64)(unsigned long)sk;
	__u64 *value = bpf_map_lookup_elem(&sock_jobs, &key);
	struct ceems_bpf_job_counters *c;
	__u32 slot, *gen;

	if (value == NULL)
		return;
	slot = (__u32)*value;
	gen = bpf_map_lookup_elem(&slot_gen, &slot);
	if (gen == NULL || *gen != (__u32)(*value >> 32))
		return;
	c = bpf_map_lookup_elem(&job_counters, &slot);
	if (c != NULL)
		c->tcp_retrans++;
}

/* A TCP socket went to NEWSTATE: closed, it is forgotten (the kernel
 * may give its address to another socket). */
static __always_inline void
forget_closed(const void *sk, int newstate)
{
	__u64 key = (__u64)(unsigned long)sk;

	if (newstate == 7 /* TCP_CLOSE */)
		bpf_map_delete_elem(&sock_jobs, &key);
}

static __always_inline void
follow_fork(__u32 child_pid)
{
	__u64 *parent, value;

	if (attrib_mode != CEEMS_BPF_BY_PID)
		return;
	parent = current_pid_entry();
	if (parent == NULL)
		return;
	value = *parent & ~(__u64)CEEMS_BPF_FOLLOW_ONLY;
	if (bpf_map_update_elem(&job_pids, &child_pid, &value, BPF_ANY) < 0) {
		__u32 zero = 0;
		struct ceems_bpf_drops *d = bpf_map_lookup_elem(&drops, &zero);

		if (d != NULL)
			d->pids++;
	}
}

static __always_inline void
forget_exit(void)
{
	__u32 pid = (__u32)bpf_get_current_pid_tgid();

	if (attrib_mode == CEEMS_BPF_BY_PID)
		bpf_map_delete_elem(&job_pids, &pid);
}

/* ---- fentry/fexit (BPF trampolines) ---- */

/* IO: fexit on the architecture's system call functions
 * (__x64_sys_read...), each resolved by the loader from the kernel's BTF
 * (bpf_program__set_attach_target).  Not vfs_read and vfs_write: the
 * system calls are exactly what the tracepoint variants count (readv,
 * preadv, sendfile, splice and copy_file_range do not all pass through
 * vfs_read or vfs_write, and the kernel's own reads, as at exec, do),
 * and their functions take the caller's registers, so that count_io()
 * finds the descriptors as the other variants do.  A trampoline costs
 * only the calls it hooks: the node's other system calls pay nothing. */
#define IO_FEXIT(name, kind)						\
	SEC("fexit")							\
	int BPF_PROG(io_fexit_##name, const struct pt_regs *regs, long ret) \
	{								\
		count_io(kind, ret, (struct pt_regs *)regs);		\
		return 0;						\
	}

IO_FEXIT(read, IO_READ)
IO_FEXIT(readv, IO_READ)
IO_FEXIT(pread64, IO_READ)
IO_FEXIT(preadv, IO_READ)
IO_FEXIT(preadv2, IO_READ)
IO_FEXIT(write, IO_WRITE)
IO_FEXIT(writev, IO_WRITE)
IO_FEXIT(pwrite64, IO_WRITE)
IO_FEXIT(pwritev, IO_WRITE)
IO_FEXIT(pwritev2, IO_WRITE)
IO_FEXIT(sendfile64, IO_SENDFILE)
IO_FEXIT(splice, IO_SPLICE)
IO_FEXIT(copy_file_range, IO_SPLICE)

static __always_inline void
count_net_sock(int dir, struct socket *sock, int ret, int flags)
{
	struct ceems_bpf_job_counters *c;
	struct sock *sk;
	__u32 slot;

	/* Whether the process is a job's first: every IP send and receive
	 * of the node comes here, and most are not a job's; the three
	 * kernel reads are for those that are. */
	if (ret <= 0 || (dir == CEEMS_IO_IN && (flags & 2 /* MSG_PEEK */)))
		return;
	c = current_counters(&slot);
	if (c == NULL)
		return;
	sk = BPF_CORE_READ(sock, sk);
	if (sk == NULL)
		return;
	count_net_to(c, slot, dir, sk, BPF_CORE_READ(sk, __sk_common.skc_family),
		     BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol), ret);
}

/* Network: fexit on inet_sendmsg, inet6_sendmsg, inet_recvmsg and
 * inet6_recvmsg, the socket operations of every IPv4 and IPv6 socket,
 * which the kernel calls for each send and receive (send, write,
 * sendmsg, sendmmsg, their receiving twins, and the kernel's own users
 * of a socket): the calls around which sock_send_length and
 * sock_recv_length fire, and present on kernels before 6.3 that lack
 * those tracepoints.  Not sock_sendmsg: recent kernels reach the
 * operation through __sock_sendmsg, a static function, without it. */
SEC("fexit")
int BPF_PROG(net_fexit_send4, struct socket *sock, struct msghdr *msg,
	     size_t size, int ret)
{
	count_net_sock(CEEMS_IO_OUT, sock, ret, 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(net_fexit_send6, struct socket *sock, struct msghdr *msg,
	     size_t size, int ret)
{
	count_net_sock(CEEMS_IO_OUT, sock, ret, 0);
	return 0;
}

SEC("fexit")
int BPF_PROG(net_fexit_recv4, struct socket *sock, struct msghdr *msg,
	     size_t size, int flags, int ret)
{
	count_net_sock(CEEMS_IO_IN, sock, ret, flags);
	return 0;
}

SEC("fexit")
int BPF_PROG(net_fexit_recv6, struct socket *sock, struct msghdr *msg,
	     size_t size, int flags, int ret)
{
	count_net_sock(CEEMS_IO_IN, sock, ret, flags);
	return 0;
}

/* ---- kprobes and kretprobes ---- */

/* IO: the same system call functions, at their return (libbpf names
 * them with the architecture's prefix); the caller's registers, which
 * a return probe no longer has as an argument, are the task's. */
#define IO_KRETSYSCALL(name, kind)					\
	SEC("kretsyscall/" #name)					\
	int BPF_KRETPROBE(io_kret_##name, long ret)			\
	{								\
		count_io(kind, ret, (struct pt_regs *)			\
			 bpf_task_pt_regs(bpf_get_current_task_btf()));	\
		return 0;						\
	}

IO_KRETSYSCALL(read, IO_READ)
IO_KRETSYSCALL(readv, IO_READ)
IO_KRETSYSCALL(pread64, IO_READ)
IO_KRETSYSCALL(preadv, IO_READ)
IO_KRETSYSCALL(preadv2, IO_READ)
IO_KRETSYSCALL(write, IO_WRITE)
IO_KRETSYSCALL(writev, IO_WRITE)
IO_KRETSYSCALL(pwrite64, IO_WRITE)
IO_KRETSYSCALL(pwritev, IO_WRITE)
IO_KRETSYSCALL(pwritev2, IO_WRITE)
IO_KRETSYSCALL(sendfile64, IO_SENDFILE)
IO_KRETSYSCALL(splice, IO_SPLICE)
IO_KRETSYSCALL(copy_file_range, IO_SPLICE)

/* Network: the socket operations as the fexit variant, the arguments
 * kept from the entry (a job's calls only) for the return. */
static __always_inline void
net_enter(struct socket *sock, int flags, int fn)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct net_call call = { 0 };
	struct sock *sk;

	if (current_counters(NULL) == NULL)
		return;
	sk = BPF_CORE_READ(sock, sk);
	if (sk == NULL)
		return;
	call.sk = (__u64)(unsigned long)sk;
	call.family = BPF_CORE_READ(sk, __sk_common.skc_family);
	call.protocol = BPF_CORE_READ_BITFIELD_PROBED(sk, sk_protocol);
	call.flags = flags;
	call.fn = fn;
	bpf_map_update_elem(&net_calls, &key, &call, BPF_ANY);
}

static __always_inline void
net_leave(int dir, int ret, int fn)
{
	__u64 key = bpf_get_current_pid_tgid();
	struct net_call *call = bpf_map_lookup_elem(&net_calls, &key), copy;

	if (call == NULL)
		return;
	copy = *call;
	bpf_map_delete_elem(&net_calls, &key);
	/* Another function's entry, left by a missed return: not this
	 * call's socket nor flags. */
	if (copy.fn != fn)
		return;
	count_net(dir, (const void *)(unsigned long)copy.sk, copy.family,
		  copy.protocol, ret, copy.flags);
}

SEC("kprobe/inet_sendmsg")
int BPF_KPROBE(net_kp_send4, struct socket *sock)
{
	net_enter(sock, 0, NET_CALL_SEND4);
	return 0;
}

SEC("kprobe/inet6_sendmsg")
int BPF_KPROBE(net_kp_send6, struct socket *sock)
{
	net_enter(sock, 0, NET_CALL_SEND6);
	return 0;
}

SEC("kprobe/inet_recvmsg")
int BPF_KPROBE(net_kp_recv4, struct socket *sock, struct msghdr *msg,
	       size_t size, int flags)
{
	net_enter(sock, flags, NET_CALL_RECV4);
	return 0;
}

SEC("kprobe/inet6_recvmsg")
int BPF_KPROBE(net_kp_recv6, struct socket *sock, struct msghdr *msg,
	       size_t size, int flags)
{
	net_enter(sock, flags, NET_CALL_RECV6);
	return 0;
}

SEC("kretprobe/inet_sendmsg")
int BPF_KRETPROBE(net_krp_send4, int ret)
{
	net_leave(CEEMS_IO_OUT, ret, NET_CALL_SEND4);
	return 0;
}

SEC("kretprobe/inet6_sendmsg")
int BPF_KRETPROBE(net_krp_send6, int ret)
{
	net_leave(CEEMS_IO_OUT, ret, NET_CALL_SEND6);
	return 0;
}

SEC("kretprobe/inet_recvmsg")
int BPF_KRETPROBE(net_krp_recv4, int ret)
{
	net_leave(CEEMS_IO_IN, ret, NET_CALL_RECV4);
	return 0;
}

SEC("kretprobe/inet6_recvmsg")
int BPF_KRETPROBE(net_krp_recv6, int ret)
{
	net_leave(CEEMS_IO_IN, ret, NET_CALL_RECV6);
	return 0;
}

/* ---- BTF tracepoints ---- */

/* A BTF tracepoint's REGS is a typed kernel pointer: read directly,
 * without a helper call (this runs at every system call's exit). */
static __always_inline long
syscall_nr(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
	return -1;
#endif
}

SEC("tp_btf/sys_exit")
int BPF_PROG(io_exit_btf, struct pt_regs *regs, long ret)
{
	enum io_kind kind = io_kind_of(syscall_nr(regs));

	if (kind != IO_NONE)
		count_io(kind, ret, regs);
	return 0;
}

SEC("tp_btf/sock_send_length")
int BPF_PROG(net_send_btf, struct sock *sk, int ret, int flags)
{
	count_net(CEEMS_IO_OUT, sk, BPF_CORE_READ(sk, __sk_common.skc_family),
		  BPF_CORE_READ(sk, sk_protocol), ret, flags);
	return 0;
}

SEC("tp_btf/sock_recv_length")
int BPF_PROG(net_recv_btf, struct sock *sk, int ret, int flags)
{
	count_net(CEEMS_IO_IN, sk, BPF_CORE_READ(sk, __sk_common.skc_family),
		  BPF_CORE_READ(sk, sk_protocol), ret, flags);
	return 0;
}

SEC("tp_btf/tcp_retransmit_skb")
int BPF_PROG(retrans_btf, const struct sock *sk)
{
	count_retrans(sk);
	return 0;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(close_btf, const struct sock *sk, int oldstate, int newstate)
{
	forget_closed(sk, newstate);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
	/* A new thread shares its thread group's entry. */
	if (BPF_CORE_READ(child, tgid) != BPF_CORE_READ(parent, tgid))
		follow_fork(BPF_CORE_READ(child, tgid));
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf)
{
	forget_exit();
	return 0;
}

/* ---- Plain tracepoints (record layouts of their tracefs format) ---- */

struct tp_sys_exit {
	__u64 common;
	long nr;
	long ret;
};

#define IO_TRACEPOINT(name, kind)					\
	SEC("tracepoint/syscalls/sys_exit_" #name)			\
	int io_exit_##name(struct tp_sys_exit *ctx)			\
	{								\
		count_io(kind, ctx->ret, (struct pt_regs *)		\
			 bpf_task_pt_regs(bpf_get_current_task_btf()));	\
		return 0;						\
	}

IO_TRACEPOINT(read, IO_READ)
IO_TRACEPOINT(readv, IO_READ)
IO_TRACEPOINT(pread64, IO_READ)
IO_TRACEPOINT(preadv, IO_READ)
IO_TRACEPOINT(preadv2, IO_READ)
IO_TRACEPOINT(write, IO_WRITE)
IO_TRACEPOINT(writev, IO_WRITE)
IO_TRACEPOINT(pwrite64, IO_WRITE)
IO_TRACEPOINT(pwritev, IO_WRITE)
IO_TRACEPOINT(pwritev2, IO_WRITE)
IO_TRACEPOINT(sendfile64, IO_SENDFILE)
IO_TRACEPOINT(splice, IO_SPLICE)
IO_TRACEPOINT(copy_file_range, IO_SPLICE)

struct tp_sock_length {
	__u64 common;
	const void *sk;
	__u16 family;
	__u16 protocol;
	int ret;
	int flags;
};

SEC("tracepoint/sock/sock_send_length")
int net_send_tp(struct tp_sock_length *ctx)
{
	count_net(CEEMS_IO_OUT, ctx->sk, ctx->family, ctx->protocol,
		  ctx->ret, ctx->flags);
	return 0;
}

SEC("tracepoint/sock/sock_recv_length")
int net_recv_tp(struct tp_sock_length *ctx)
{
	count_net(CEEMS_IO_IN, ctx->sk, ctx->family, ctx->protocol,
		  ctx->ret, ctx->flags);
	return 0;
}

struct tp_tcp_retransmit {
	__u64 common;
	const void *skbaddr;
	const void *skaddr;
};

SEC("tracepoint/tcp/tcp_retransmit_skb")
int retrans_tp(struct tp_tcp_retransmit *ctx)
{
	count_retrans(ctx->skaddr);
	return 0;
}

struct tp_inet_sock_set_state {
	__u64 common;
	const void *skaddr;
	int oldstate;
	int newstate;
};

SEC("tracepoint/sock/inet_sock_set_state")
int close_tp(struct tp_inet_sock_set_state *ctx)
{
	forget_closed(ctx->skaddr, ctx->newstate);
	return 0;
}

/* sched_process_fork's record has had two layouts: the names as
 * __data_loc words (Linux 6.5 and later), child_pid at 20, or as
 * char[16] (before), child_pid at 44.  One program each, with a
 * constant offset (the verifier allows no other read of a record): the
 * loader loads the one tracefs's format file names. */
struct tp_sched_fork_loc {
	__u64 common;
	__u32 parent_comm;
	int parent_pid;
	__u32 child_comm;
	int child_pid;
};

struct tp_sched_fork_arr {
	__u64 common;
	char parent_comm[16];
	int parent_pid;
	char child_comm[16];
	int child_pid;
};

/* A thread gets an entry of its own here (the record does not say which
 * a child is); it is never looked up and goes at its exit. */
SEC("tracepoint/sched/sched_process_fork")
int fork_tp(struct tp_sched_fork_loc *ctx)
{
	follow_fork((__u32)ctx->child_pid);
	return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int fork_tp_arr(struct tp_sched_fork_arr *ctx)
{
	follow_fork((__u32)ctx->child_pid);
	return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int exit_tp(void *ctx)
{
	forget_exit();
	return 0;
}
