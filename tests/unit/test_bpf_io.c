/* test_bpf_io.c - the eBPF loader (lib/sources/bpf_io.c,
 * lib/sources/bpf_choose.c): the
 * attach type each hook gets from what a kernel offers, and, as root on a
 * kernel that lets it load, the real programs: a child process tagged as
 * a job writes, reads and sends over TCP and UDP, IPv4 and IPv6, forks a
 * grandchild that writes too, and the job's slot holds what they did
 * and nothing of the parent's.  The agent's side (lib/agent/agent_bpf.c): the
 * counts of two agents, one restarted, add up with the time between
 * said; a job never tagged has its IO absent, not 0; a process is known
 * by its real uid, not by the owner of /proc/PID; on cgroup v1, a process
 * that enters a job's cgroup from outside is found by a full tick's walk,
 * not a light tick's. */
#include "config.h"

#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sources/proc_stats.h"
#include "agent/agent_internal.h"
#include "client/agent_proto.h"
#include "sources/bpf_io.h"
#include "sources/bpf_io_internal.h"
#ifdef HAVE_BPF
#include <bpf/bpf.h>
#endif
#include "../bench/bench_time.h"
#include "../tap.h"

#define F CEEMS_BPF_ATTACH_FENTRY
#define K CEEMS_BPF_ATTACH_KPROBE
#define B CEEMS_BPF_ATTACH_TP_BTF
#define T CEEMS_BPF_ATTACH_TRACEPOINT
#define NONE CEEMS_BPF_ATTACH_NONE

/* IO and network of two agents, the second restarted: they add up, the
 * time between is said; what the second could not count is absent. */
static void
test_resume(void)
{
	struct ceems_agent_io_report before, now, out;
	struct ceems_agent_job_report r, back;
	struct json_object *obj;
	char err[256];

	memset(&before, 0, sizeof(before));
	before.have_io = before.have_net = true;
	before.read_bytes = (uint64_t)getpid() << 12;
	before.write_bytes = 3 * before.read_bytes;
	before.net_bytes[CEEMS_IO_IN][CEEMS_IO_TCP][CEEMS_IO_IPV4] = before.read_bytes + 7;
	now = before;
	now.read_bytes = before.read_bytes / 2;
	now.write_bytes = 1;
	ceems_agent_bpf_io_resume(&before, &now, 2.5, &out);
	ok(out.have_io && out.read_bytes == before.read_bytes + now.read_bytes &&
	   out.write_bytes == before.write_bytes + 1,
	   "IO before and after a restart adds up");
	ok(out.have_net &&
	   out.net_bytes[CEEMS_IO_IN][CEEMS_IO_TCP][CEEMS_IO_IPV4] ==
	   2 * before.net_bytes[CEEMS_IO_IN][CEEMS_IO_TCP][CEEMS_IO_IPV4],
	   "network too");
	is_near(out.unmeasured_s, 2.5, 0, "the time no agent counted is said");
	ok(out.absent_why[0] == '\0', "measured: no reason for absence");

	r = (struct ceems_agent_job_report){ .jobid = 9, .io = out };
	obj = ceems_measure_json_report_to_json(&r);
	memset(&back, 0, sizeof(back));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == 0 &&
	   back.io.unmeasured_s == 2.5, "ebpf_unmeasured_s goes through the report");
	json_object_put(obj);

	memset(&now, 0, sizeof(now));
	snprintf(now.absent_why, sizeof(now.absent_why), "no eBPF counter slot for the job");
	ceems_agent_bpf_io_resume(&before, &now, 2.5, &out);
	ok(!out.have_io && !out.have_net && out.read_bytes == 0 &&
	   strstr(out.absent_why, "after an agent restart: no eBPF counter slot") != NULL,
	   "not counted after the restart: absent, and why (%s)", out.absent_why);

	memset(&before, 0, sizeof(before));
	now = out;
	now.have_io = true;
	ceems_agent_bpf_io_resume(&before, &now, 2.5, &out);
	ok(!out.have_io && strcmp(out.absent_why, "the agent restarted while the job ran") == 0,
	   "counted after the restart only (an agent that kept none): absent");
}

/* A job that got a slot but whose processes or cgroup were never put in
 * the maps counted nothing: its IO is unknown, not 0. */
static void
test_never_tagged(void)
{
	struct ceems_agent *a = calloc(1, sizeof(*a));
	struct agent_job *j = calloc(1, sizeof(*j));
	struct ceems_agent_io_report out;
	static char loader;

	if (a == NULL || j == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	/* As after a read of its slot: counted, zeros. */
	j->bpf = (struct ceems_bpf_io *)&loader;
	j->io.have_io = j->io.have_net = true;
	ceems_agent_bpf_fill(a, j, &out);
	ok(!out.have_io && !out.have_net && out.absent_why[0] != '\0',
	   "a job never tagged: IO absent (%s)", out.absent_why);
	j->bpf_tagged = true;
	ceems_agent_bpf_fill(a, j, &out);
	ok(out.have_io && out.absent_why[0] == '\0', "once tagged: measured");
	/* Its end frees the slot: what it counted stays. */
	j->bpf = NULL;
	ceems_agent_bpf_fill(a, j, &out);
	ok(out.have_io, "after its end, measured still");
	j->bpf_tagged = false;
	ceems_agent_bpf_fill(a, j, &out);
	ok(!out.have_io, "after its end, never tagged: absent still");
	free(j);
	free(a);
}

/* A process of the user's that runs a set-user-ID root program, not
 * dumpable: /proc/PID belongs to its effective uid, root; its status
 * says whose it is (its real uid, by which the eBPF programs count).
 * Taken for root's (slurmstepd's), it was followed only, its IO not
 * counted. */
static void
test_not_dumpable(void)
{
	int go[2], ready[2];
	uint32_t uid = 0;
	struct stat st;
	char path[64], c;
	pid_t pid;

	if (geteuid() != 0) {
		ok(true, "# skip a process of another uid needs root");
		return;
	}
	if (pipe(go) < 0 || pipe(ready) < 0) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(ready[0]);
		if (setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 0, 0) < 0)
			_exit(1);
		prctl(PR_SET_DUMPABLE, 0);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1) {
		ok(false, "the child runs as nobody");
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		st.st_uid = UINT32_MAX;
	ok(st.st_uid == 0, "a set-user-ID process: /proc/PID is root's (%u)",
	   (unsigned)st.st_uid);
	is_int(ceems_proc_stats_pid_uid("/proc", (uint32_t)pid, &uid), 0,
	       "its status is read");
	is_int(uid, 65534, "its uid is the user's (real), not root's");
	if (write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(go[1]);
	close(ready[0]);
	is_int(ceems_proc_stats_pid_uid("/proc", 4294967295U, &uid), -ENOENT,
	       "a process gone: -ENOENT");
}

/* The first of LIST's N types an offer of MASK (bit per type) has. */
static int
first_offered(const enum ceems_bpf_attach *list, int n, unsigned mask)
{
	for (int i = 0; i < n; i++)
		if (mask & (1u << list[i]))
			return (int)list[i];
	return (int)NONE;
}

/* Every combination of types accepted, for every hook at once, in
 * every mode: what choose picks is each hook's first candidate the
 * kernel accepts; a refused required hook, or a forced type refused for
 * one, gives nothing; a forced type missing for the network or the
 * retransmissions leaves that hook out. */
static void
test_choose_all(void)
{
	static const enum ceems_bpf_attach forces[] = { NONE, F, K, B, T };
	enum ceems_bpf_attach a[CEEMS_BPF_NHOOKS], list[CEEMS_BPF_NATTACH];
	int bad = 0, runs = 0;

	for (size_t fi = 0; fi < sizeof(forces) / sizeof(forces[0]); fi++)
		for (unsigned mask = 0; mask < 1u << CEEMS_BPF_NATTACH; mask++)
			for (int by_pid = 0; by_pid < 2; by_pid++) {
				struct ceems_bpf_offer offer;
				enum ceems_bpf_attach force = forces[fi];
				int want[CEEMS_BPF_NHOOKS], n, wn = 0;
				bool none = false;

				memset(&offer, 0, sizeof(offer));
				for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
					for (int t = 0; t < CEEMS_BPF_NATTACH; t++)
						offer.offered[h][t] = (mask >> t) & 1;
				for (int h = 0; h < CEEMS_BPF_NHOOKS; h++) {
					int c = ceems_bpf_choose_candidates((enum ceems_bpf_hook)h, force, list);

					want[h] = first_offered(list, c, mask & ~1u);
					if (force == NONE || c != 1 || list[0] != force ||
					    want[h] == (int)force || (!by_pid && h == CEEMS_BPF_HOOK_PROC))
						continue;
					if (h == CEEMS_BPF_HOOK_NET || h == CEEMS_BPF_HOOK_RETRANS)
						want[h] = NONE;
					else
						none = true;
				}
				if (!by_pid)
					want[CEEMS_BPF_HOOK_PROC] = NONE;
				none = none || want[CEEMS_BPF_HOOK_IO] == NONE ||
				       (by_pid && want[CEEMS_BPF_HOOK_PROC] == NONE);
				for (int h = 0; h < CEEMS_BPF_NHOOKS; h++) {
					if (none)
						want[h] = NONE;
					wn += want[h] != NONE;
				}
				n = ceems_bpf_choose(&offer, by_pid, force, a);
				runs++;
				if (n != wn)
					bad++;
				for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
					if ((int)a[h] != want[h])
						bad++;
			}
	is_int(runs, 5 * 32 * 2, "every combination tried");
	is_int(bad, 0, "every combination: each hook its first accepted candidate");
}

static void
test_choose(void)
{
	struct ceems_bpf_offer offer;
	enum ceems_bpf_attach a[CEEMS_BPF_NHOOKS], list[CEEMS_BPF_NATTACH];
	int n;

	/* The orders themselves. */
	n = ceems_bpf_choose_candidates(CEEMS_BPF_HOOK_IO, NONE, list);
	ok(n == 4 && list[0] == F && list[1] == B && list[2] == T && list[3] == K,
	   "IO: fentry, tp_btf, tracepoint, kprobe");
	n = ceems_bpf_choose_candidates(CEEMS_BPF_HOOK_NET, NONE, list);
	ok(n == 4 && list[0] == F && list[1] == B && list[2] == T && list[3] == K,
	   "network: fentry, tp_btf, tracepoint, kprobe");
	n = ceems_bpf_choose_candidates(CEEMS_BPF_HOOK_RETRANS, NONE, list);
	ok(n == 2 && list[0] == B && list[1] == T, "retransmissions: tracepoints");
	n = ceems_bpf_choose_candidates(CEEMS_BPF_HOOK_PROC, F, list);
	ok(n == 2 && list[0] == B && list[1] == T,
	   "forced fentry: processes keep their tracepoints");
	n = ceems_bpf_choose_candidates(CEEMS_BPF_HOOK_IO, K, list);
	ok(n == 1 && list[0] == K, "forced kprobe: IO by kprobe alone");

	/* This test machine: no fentry, no kprobes. */
	memset(&offer, 0, sizeof(offer));
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		offer.offered[h][B] = offer.offered[h][T] = true;
	is_int(ceems_bpf_choose(&offer, true, NONE, a), 4, "auto, by pid: 4 hooks");
	is_int(a[CEEMS_BPF_HOOK_IO], B, "auto without fentry or kprobes: tp_btf");
	is_int(ceems_bpf_choose(&offer, true, F, a), 0, "forced fentry refused: nothing");
	is_int(a[CEEMS_BPF_HOOK_IO], NONE, "forced fentry refused: IO none");
	is_int(ceems_bpf_choose(&offer, true, T, a), 4, "forced tracepoint: 4");
	is_int(a[CEEMS_BPF_HOOK_PROC], T, "forced tracepoint: processes too");
	is_int(ceems_bpf_choose(&offer, false, NONE, a), 3, "by cgroup: no process hooks");
	is_int(a[CEEMS_BPF_HOOK_PROC], NONE, "by cgroup: proc not attached");

	/* A production kernel: fentry and kprobes. */
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		offer.offered[h][F] = offer.offered[h][K] = true;
	ceems_bpf_choose(&offer, true, NONE, a);
	ok(a[CEEMS_BPF_HOOK_IO] == F && a[CEEMS_BPF_HOOK_NET] == F &&
	   a[CEEMS_BPF_HOOK_RETRANS] == B && a[CEEMS_BPF_HOOK_PROC] == B,
	   "auto: fentry for IO and network, tracepoints for the rest");
	offer.offered[CEEMS_BPF_HOOK_IO][F] = offer.offered[CEEMS_BPF_HOOK_NET][F] = false;
	ceems_bpf_choose(&offer, true, NONE, a);
	ok(a[CEEMS_BPF_HOOK_IO] == B && a[CEEMS_BPF_HOOK_NET] == B,
	   "fentry refused: IO and network by tp_btf, not by return probes");
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		offer.offered[h][B] = offer.offered[h][T] = false;
	ceems_bpf_choose(&offer, false, NONE, a);
	ok(a[CEEMS_BPF_HOOK_IO] == K && a[CEEMS_BPF_HOOK_NET] == K,
	   "kprobes alone: IO and network by kprobe");
	for (int h = 0; h < CEEMS_BPF_NHOOKS; h++)
		offer.offered[h][B] = offer.offered[h][T] = true;
	ceems_bpf_choose(&offer, true, K, a);
	ok(a[CEEMS_BPF_HOOK_IO] == K && a[CEEMS_BPF_HOOK_NET] == K &&
	   a[CEEMS_BPF_HOOK_PROC] == B, "forced kprobe: IO and network by kprobe");
	offer.offered[CEEMS_BPF_HOOK_NET][K] = false;
	is_int(ceems_bpf_choose(&offer, true, K, a), 3,
	       "forced kprobe the kernel lacks for the network alone: three hooks");
	ok(a[CEEMS_BPF_HOOK_IO] == K && a[CEEMS_BPF_HOOK_NET] == NONE &&
	   a[CEEMS_BPF_HOOK_PROC] == B,
	   "forced kprobe lacking for the network: IO by kprobe, the network absent");
	offer.offered[CEEMS_BPF_HOOK_IO][K] = false;
	is_int(ceems_bpf_choose(&offer, true, K, a), 0,
	       "forced kprobe the kernel lacks for IO: nothing");

#ifdef HAVE_BPF
	{
		/* Unknown is not zero: a network type whose IPv6 programs do
		 * not attach is refused, not taken with IPv6 reading 0. */
		static const char *const v6[] = {
			"net_fexit_send6", "net_fexit_recv6", "net_kp_send6",
			"net_krp_send6", "net_kp_recv6", "net_krp_recv6",
		};
		int optional = 0;

		for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++)
			optional += !ceems_bpf_progs_io_prog_required(v6[i]);
		is_int(optional, 0, "network by fentry or kprobe: the IPv6 programs required");
		ok(ceems_bpf_progs_io_prog_required("net_fexit_send4") &&
		   !ceems_bpf_progs_io_prog_required("no_such_program"), "required: by name");
	}
#endif
	is_int(ceems_bpf_choose_force_from_word("auto"), (int)NONE, "auto: nothing forced");
	is_int(ceems_bpf_choose_force_from_word("fentry"), (int)F, "fentry");
	is_int(ceems_bpf_choose_force_from_word("kprobe"), (int)K, "kprobe");
	is_int(ceems_bpf_choose_force_from_word("btf"), (int)B, "btf");
	is_int(ceems_bpf_choose_force_from_word("tracepoint"), (int)T, "tracepoint");
	is_int(ceems_bpf_choose_force_from_word("off"), -1, "off is no attach type");
	is_str(ceems_bpf_choose_attach_name(CEEMS_BPF_ATTACH_FENTRY), "fentry", "name");
	test_choose_all();
}

/* A figure of the mode being tested against what it must be. */
#define is_mode(got, want, what)					\
	ok((long long)(got) == (long long)(want), "%s: %s: %lld, want %lld", \
	   mode, (what), (long long)(got), (long long)(want))

/* The report's eBPF members survive their JSON, and an absent figure
 * stays absent, with its reason. */
static void
test_report_json(void)
{
	struct ceems_agent_job_report r, back;
	struct json_object *obj;
	char err[256];

	memset(&r, 0, sizeof(r));
	r.jobid = 7;
	r.io.have_io = r.io.have_net = r.io.have_tcp_retrans = true;
	r.io.read_bytes = 268435456;
	r.io.write_bytes = UINT64_MAX;
	r.io.write_errors = 3;
	r.io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6] = 104857600;
	r.io.net_msgs[CEEMS_IO_IN][CEEMS_IO_UDP][CEEMS_IO_IPV4] = 12;
	r.io.tcp_retrans = 5;
	r.io.dropped = 2;
	obj = ceems_measure_json_report_to_json(&r);
	memset(&back, 0, sizeof(back));
	is_int(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)), 0,
	       "report with IO decodes");
	ok(back.io.have_io && back.io.have_net && back.io.have_tcp_retrans,
	   "measured flags kept");
	ok(back.io.read_bytes == r.io.read_bytes && back.io.write_bytes == UINT64_MAX &&
	   back.io.write_errors == 3, "IO figures kept");
	ok(back.io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6] == 104857600 &&
	   back.io.net_msgs[CEEMS_IO_IN][CEEMS_IO_UDP][CEEMS_IO_IPV4] == 12,
	   "network by direction, protocol and family kept");
	ok(back.io.tcp_retrans == 5 && back.io.dropped == 2, "retransmissions, drops kept");
	json_object_put(obj);

	memset(&r.io, 0, sizeof(r.io));
	snprintf(r.io.absent_why, sizeof(r.io.absent_why), "no permission");
	obj = ceems_measure_json_report_to_json(&r);
	ok(json_object_object_get_ex(obj, "io", NULL) == 0 &&
	   json_object_object_get_ex(obj, "net", NULL) == 0, "absent: no io, no net");
	memset(&back, 0, sizeof(back));
	is_int(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)), 0,
	       "absent decodes");
	ok(!back.io.have_io && !back.io.have_net, "absent stays absent");
	is_str(back.io.absent_why, "no permission", "the reason kept");
	json_object_object_add(obj, "io", json_object_new_string("1"));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "io of the wrong type refused");
	json_object_object_add(obj, "io", json_object_new_object());
	json_object_object_add(json_object_object_get(obj, "io"), "read_bytes",
			       json_object_new_double(1.5));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "a fraction of a byte refused");
	json_object_put(obj);
}

#define FILE_BYTES (1 << 20)
#define NET_BYTES (200 * 1000)
#define UDP_DGRAM 1000
#define UDP_COUNT 50

/* The real programs, loaded into this machine's kernel: built with
 * eBPF only (main says so without). */
#ifdef HAVE_BPF
/* Send NET_BYTES over TCP of FAMILY to a listener of this process. */
static int
tcp_loop(int family, int *listener)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l, s;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_addr = in6addr_loopback;
		len = sizeof(*in6);
	}
	l = socket(family, SOCK_STREAM, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&ss, len) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	*listener = l;
	s = socket(family, SOCK_STREAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&ss, len) < 0)
		return -1;
	return s;
}

/* The job: file IO, a grandchild's write, TCP and UDP over IPv4 and
 * IPv6 to the parent (untagged), which receives. */
static void
job_child(const char *path, int tcp4, int tcp6, int udp4, int udp6)
{
	static char buf[FILE_BYTES];
	pid_t g;
	int fd;

	memset(buf, 'x', sizeof(buf));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
	    pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf) ||
	    pread(fd, buf, 16, -1) != -1)	/* EINVAL: one read error */
		_exit(2);
	close(fd);
	/* Not files: character devices are not IO. */
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, 65536) != 65536)
		_exit(8);
	close(fd);
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, 65536) != 65536)
		_exit(9);
	close(fd);
	g = fork();
	if (g == 0) {
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		_exit(fd >= 0 && write(fd, buf, 4096) == 4096 ? 0 : 3);
	}
	if (g < 0 || waitpid(g, NULL, 0) < 0)
		_exit(4);
	for (int sent = 0; sent < NET_BYTES; sent += 1000)
		if (send(tcp4, buf, 1000, 0) != 1000 || send(tcp6, buf, 1000, 0) != 1000)
			_exit(5);
	for (int i = 0; i < UDP_COUNT; i++)
		if (send(udp4, buf, UDP_DGRAM, 0) != UDP_DGRAM ||
		    send(udp6, buf, UDP_DGRAM, 0) != UDP_DGRAM)
			_exit(6);
	_exit(0);
}

static int
udp_pair(int family, int *rx)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int r = socket(family, SOCK_DGRAM, 0), s = socket(family, SOCK_DGRAM, 0);

	memset(&ss, 0, sizeof(ss));
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	if (r < 0 || s < 0 ||
	    bind(r, (struct sockaddr *)&ss, family == AF_INET ?
		 sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) < 0 ||
	    getsockname(r, (struct sockaddr *)&ss, &len) < 0 ||
	    connect(s, (struct sockaddr *)&ss, len) < 0)
		return -1;
	*rx = r;
	return s;
}

static void
drain(int fd, size_t want)
{
	static char buf[65536];
	size_t got = 0;

	while (got < want) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
}

/* FORCE's programs opened for the real tests, or NULL.  As root the
 * tracepoints must load (a refusal, the verifier's EACCES too, is a
 * failure, not a reason to skip); fentry and kprobes where the kernel
 * accepts them, else a refusal that says so, as auto's notes do. */
static struct ceems_bpf_io *
open_forced(enum ceems_bpf_attach force, const char *mode)
{
	struct ceems_bpf_io *bpf, *any;
	char why[512], why_auto[256];

	bpf = ceems_bpf_io_open(false, force, 8, why, sizeof(why));
	if (bpf != NULL) {
		if (force == NONE)
			ok(ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_IO) != NONE,
			   "auto: IO by %s", ceems_bpf_choose_attach_name(
				   ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_IO)));
		else
			ok(ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_IO) == force &&
			   (force == F || force == K ||
			    ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_PROC) == force),
			   "%s: forced: IO by %s", mode, ceems_bpf_choose_attach_name(
				   ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_IO)));
		return bpf;
	}
	if (geteuid() != 0) {
		ok(true, "# skip %s: %s", mode, why);
		return NULL;
	}
	if (force != F && force != K) {
		ok(false, "%s: the programs load as root: %s", mode, why);
		return NULL;
	}
	/* Refused here: a clear error, and auto falls back saying why. */
	char want[128];

	snprintf(want, sizeof(want), "ebpf = %s in ceems.conf, which this kernel "
		 "refuses: set ebpf = auto (io: %s", mode, mode);
	ok(strstr(why, want) != NULL, "%s refused: says so: %s", mode, why);
	any = ceems_bpf_io_open(false, NONE, 8, why_auto, sizeof(why_auto));
	snprintf(want, sizeof(want), "io: %s ", mode);
	/* auto tries fentry before the tracepoints, kprobes after them:
	 * the note names fentry's refusal, and kprobes are never tried
	 * where a tracepoint loads. */
	ok(any != NULL && ceems_bpf_io_attach(any, CEEMS_BPF_HOOK_IO) != force &&
	   (strstr(ceems_bpf_io_refusals(any), want) != NULL) == (force == F),
	   "%s refused: auto takes IO by %s, noting: %s", mode,
	   ceems_bpf_choose_attach_name(ceems_bpf_io_attach(any, CEEMS_BPF_HOOK_IO)),
	   any != NULL ? ceems_bpf_io_refusals(any) : why_auto);
	ceems_bpf_io_close(any);
	return NULL;
}

/* The job's network, as test_real's job sent it: bytes and datagrams
 * by protocol and family, and the TCP sockets charged to its slot. */
static void
check_net(struct ceems_bpf_io *bpf, uint32_t slot,
	  const struct ceems_agent_io_report *io, const char *mode,
	  int t4, int a4)
{
	is_mode(io->net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV4], NET_BYTES, "TCP IPv4 bytes out");
	is_mode(io->net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6], NET_BYTES, "TCP IPv6 bytes out");
	is_mode(io->net_bytes[CEEMS_IO_OUT][CEEMS_IO_UDP][CEEMS_IO_IPV4],
	       UDP_COUNT * UDP_DGRAM, "UDP IPv4 bytes out");
	is_mode(io->net_msgs[CEEMS_IO_OUT][CEEMS_IO_UDP][CEEMS_IO_IPV6], UDP_COUNT, "UDP IPv6 datagrams out");
	is_mode(io->net_bytes[CEEMS_IO_IN][CEEMS_IO_TCP][CEEMS_IO_IPV4], 0, "the parent's receipts are not the job's");
	/* The sockets a retransmission would be charged to the job for:
	 * the two it sent TCP on; one closed, it is forgotten (another
	 * socket may get its address); the job ended, none. */
	is_mode(ceems_bpf_io_sockets(bpf, slot), 2, "the job's TCP sockets remembered");
	close(t4);
	close(a4);
	for (int i = 0; i < 100 && ceems_bpf_io_sockets(bpf, slot) > 1; i++)
		usleep(10000);
	is_mode(ceems_bpf_io_sockets(bpf, slot), 1, "a closed socket is forgotten");
}

/* Whether the kernel has the socket tracepoints (Linux 6.3 and later). */
static bool
sock_events(void)
{
	return access("/sys/kernel/tracing/events/sock/sock_send_length", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/events/sock/sock_send_length", F_OK) == 0;
}

static void
test_real(enum ceems_bpf_attach force)
{
	const char *mode = force == NONE ? "auto" : force == B ? "btf" :
			   ceems_bpf_choose_attach_name(force);
	struct ceems_agent_io_report io, io2;
	int l4, l6, a4, a6, t4, t6, u4, u6, r4, r6, status;
	char path[] = "/tmp/test_bpf_io.XXXXXX";
	struct ceems_bpf_io *bpf;
	uint32_t slot, slot2;
	pid_t pid;
	bool net;

	bpf = open_forced(force, mode);
	if (bpf == NULL)
		return;
	is_mode(ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &slot), 0, "a slot");
	close(mkstemp(path));
	t4 = tcp_loop(AF_INET, &l4);
	t6 = tcp_loop(AF_INET6, &l6);
	a4 = accept(l4, NULL, NULL);
	a6 = accept(l6, NULL, NULL);
	u4 = udp_pair(AF_INET, &r4);
	u6 = udp_pair(AF_INET6, &r6);
	ok(t4 >= 0 && t6 >= 0 && a4 >= 0 && a6 >= 0 && u4 >= 0 && u6 >= 0,
	   "%s: loopback sockets", mode);
	/* The child waits until it is tagged. */
	int go[2];

	if (pipe(go) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(7);
		job_child(path, t4, t6, u4, u6);
	}
	close(go[0]);
	is_mode(ceems_bpf_io_tag_pid(bpf, slot, (uint32_t)pid, false), 0, "child tagged");
	if (write(go[1], "g", 1) != 1)
		return;
	close(go[1]);
	drain(a4, NET_BYTES);
	drain(a6, NET_BYTES);
	waitpid(pid, &status, 0);
	is_mode(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "the job ran");
	memset(&io, 0, sizeof(io));
	is_mode(ceems_bpf_io_read(bpf, slot, &io), 0, "read");
	net = ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_NET) != NONE;
	if (net || force == NONE || force == F || force == K || sock_events())
		ok(io.have_io && io.have_net, "%s: IO and network measured", mode);
	else
		/* A tracepoint type forced on a kernel before 6.3: without
		 * socket events the network is left out, not zero. */
		ok(io.have_io && !io.have_net,
		   "%s: IO measured, the network absent (no socket tracepoints)",
		   mode);
	/* The child's own writes and its grandchild's (not /dev/null's;
	 * send() is network, not IO). */
	is_mode(io.write_bytes, FILE_BYTES + 4096, "file bytes written, the grandchild's included");
	/* Not the pipe's byte, not /dev/zero's, not the parent's. */
	is_mode(io.read_bytes, FILE_BYTES, "bytes read from files");
	is_mode(io.read_errors, 1, "the failed read");
	is_mode(io.write_errors, 0, "no write errors");
	if (net)
		check_net(bpf, slot, &io, mode, t4, a4);
	ceems_bpf_io_job_end(bpf, slot);
	is_mode(ceems_bpf_io_sockets(bpf, slot), 0,
		"the job ended: none of its open sockets is the slot's any more");
	is_mode(ceems_bpf_io_job_start(bpf, (uint32_t)getuid() + 1, &slot2), 0, "a slot again");
	memset(&io2, 0xff, sizeof(io2));
	ceems_bpf_io_read(bpf, slot2, &io2);
	is_mode(io2.write_bytes + io2.read_bytes, 0, "a new slot starts at 0");
	/* A process of the job running as another user than the job's
	 * (slot2's user is not ours) is not counted. */
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);

		usleep(100000);
		_exit(fd >= 0 && write(fd, "other", 5) == 5 ? 0 : 1);
	}
	ceems_bpf_io_tag_pid(bpf, slot2, (uint32_t)pid, false);
	waitpid(pid, &status, 0);
	ceems_bpf_io_read(bpf, slot2, &io2);
	is_mode(io2.write_bytes, 0, "another user's process in the job: not counted");
	ceems_bpf_io_job_end(bpf, slot2);
	unlink(path);
	for (int fd = 3; fd < 64; fd++)
		close(fd);
	ceems_bpf_io_close(bpf);
}

/* Every hook's programs of every type this kernel can load pass the
 * verifier, attached or not: kprobe programs load where kprobes cannot
 * attach (CONFIG_KPROBES off), so that their code is checked here too.
 * fentry programs where the kernel loads tracing programs of that kind. */
static void
test_verify(void)
{
	static const enum ceems_bpf_attach types[] = { K, B, T, F };

	for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (int h = 0; h < CEEMS_BPF_NHOOKS; h++) {
			enum ceems_bpf_attach list[CEEMS_BPF_NATTACH];
			struct ceems_bpf_io trial;
			const char *failed = "load";
			char why[160];
			int err;

			if (ceems_bpf_choose_candidates((enum ceems_bpf_hook)h, types[t], list) != 1 ||
			    (types[t] != K && !ceems_bpf_progs_io_offered((enum ceems_bpf_hook)h,
							      types[t], why, sizeof(why))))
				continue;
			memset(&trial, 0, sizeof(trial));
			trial.attach[h] = types[t];
			err = ceems_bpf_progs_io_load_chosen(&trial, BPF_IO_LOAD_VERIFY, &failed);
			if (types[t] == F && err == -EPERM) {
				ok(true, "# skip %s fentry: the kernel loads no fentry "
				   "programs (EPERM)", ceems_bpf_choose_hook_name((enum ceems_bpf_hook)h));
				continue;
			}
			ok(err == 0, "%s %s programs pass the verifier%s%s",
			   ceems_bpf_choose_hook_name((enum ceems_bpf_hook)h),
			   ceems_bpf_choose_attach_name(types[t]), err < 0 ? ": " : "",
			   err < 0 ? failed : "");
			if (err == 0)
				ceems_bpf_progs_io_destroy_skel(&trial);
		}
}

/* A job's end does not walk the pid map: its entries go stale at once
 * (a process of the ended job still running is not charged to the
 * slot's next job, of the same user) and a full map makes room by
 * sweeping them. */
static void
test_job_end(void)
{
	struct ceems_agent_io_report io;
	struct ceems_bpf_io *bpf;
	char why[512], path[] = "/tmp/test_bpf_io_end.XXXXXX";
	uint32_t big, small, next;
	int go[2], status, fails = 0;
	double t0, ms_small, ms_big;
	pid_t pid;

	bpf = ceems_bpf_io_open(false, NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(false, "job end: the programs load as root: %s", why);
		return;
	}
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &small);
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &big);
	/* 60000 processes of one job (no such pids: the map does not care). */
	for (uint32_t i = 0; i < 60000; i++)
		fails += ceems_bpf_io_tag_pid(bpf, big, 0x70000000u + i, false) < 0;
	is_int(fails, 0, "job end: 60000 pids tagged");
	close(mkstemp(path));
	if (pipe(go) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char c;
		int fd;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		_exit(fd >= 0 && write(fd, "late", 4) == 4 ? 0 : 2);
	}
	close(go[0]);
	ceems_bpf_io_tag_pid(bpf, small, (uint32_t)pid, false);
	t0 = bench_now_ms();
	ceems_bpf_io_job_end(bpf, small);
	ms_small = bench_now_ms() - t0;
	t0 = bench_now_ms();
	ceems_bpf_io_job_end(bpf, big);
	ms_big = bench_now_ms() - t0;
	ok(ms_small < 10 && ms_big < 10, "job end with 60000 pids in the map: "
	   "%.2f ms, %.2f ms for the job of 60000 (no walk)", ms_small, ms_big);
	/* The same slot to a job of the same user: the ended job's process
	 * writes now, and is not the new job's. */
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &next);
	is_int(next, small, "job end: the slot given again");
	if (write(go[1], "g", 1) != 1)
		return;
	close(go[1]);
	waitpid(pid, &status, 0);
	memset(&io, 0, sizeof(io));
	ceems_bpf_io_read(bpf, next, &io);
	is_int(io.write_bytes + io.write_ops, 0,
	       "an ended job's process is not charged to the slot's next job");
	/* The map still holds the ended job's 60000: room is made. */
	fails = 0;
	for (uint32_t i = 0; i < 20000; i++)
		fails += ceems_bpf_io_tag_pid(bpf, next, 0x60000000u + i, false) < 0;
	is_int(fails, 0, "a full map sweeps the ended jobs' entries");
	ceems_bpf_io_job_end(bpf, next);
	ceems_bpf_io_close(bpf);
	unlink(path);
}

/* A full pid map of running jobs' processes: a tag that cannot be made
 * fails at once (no sweep, which would free nothing) and is counted as a
 * drop; after a job ends, one sweep makes room again. */
static void
test_full_map(void)
{
	struct ceems_bpf_io *bpf;
	char why[512];
	uint32_t live, ended, n = 0;
	uint64_t drops0;
	int fails = 0, r = 0;
	double t0, ms;

	bpf = ceems_bpf_io_open(false, NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(false, "full map: the programs load as root: %s", why);
		return;
	}
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &live);
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &ended);
	ceems_bpf_io_tag_pid(bpf, ended, 0x50000000u, false);
	while (n < 200000 &&
	       (r = ceems_bpf_io_tag_pid(bpf, live, 0x40000000u + n, false)) == 0)
		n++;
	ok(r == -ENOSPC && n > 60000, "full map: tagging stops with ENOSPC after %u pids", n);
	drops0 = ceems_bpf_io_drops(bpf);
	t0 = bench_now_ms();
	for (uint32_t i = 0; i < 200; i++)
		fails += ceems_bpf_io_tag_pid(bpf, live, 0x48000000u + i, false) == -ENOSPC;
	ms = (bench_now_ms() - t0) / 200;
	is_int(fails, 200, "full map of running jobs: every further tag refused");
	ok(ms < 0.5, "full map of running jobs: %.4f ms a refused tag (no sweep)", ms);
	is_int((int)(ceems_bpf_io_drops(bpf) - drops0), 200,
	       "full map: the refused tags counted as drops");
	ceems_bpf_io_job_end(bpf, ended);
	is_int(ceems_bpf_io_tag_pid(bpf, live, 0x49000000u, false), 0,
	       "full map: a job ended, one sweep makes room");
	is_int(ceems_bpf_io_tag_pid(bpf, live, 0x49000001u, false), -ENOSPC,
	       "full map: full again, refused");
	ceems_bpf_io_job_end(bpf, live);
	ceems_bpf_io_close(bpf);
}

/* A job end whose generation the kernel does not take leaves the slot
 * taken: given to the next job, the ended job's processes would be
 * charged to it. */
static void
test_gen_refused(void)
{
	struct ceems_bpf_io *bpf;
	char why[512];
	uint32_t slot, next, gen;

	bpf = ceems_bpf_io_open(false, NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(false, "generation refused: the programs load as root: %s", why);
		return;
	}
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &slot);
	gen = bpf->gen[slot];
	/* A frozen map refuses every update from user space. */
	ok(bpf_map_freeze(ceems_bpf_io_map_fd(bpf, "slot_gen")) == 0,
	   "generation refused: slot_gen frozen");
	ceems_bpf_io_job_end(bpf, slot);
	is_int(bpf->gen[slot], gen, "generation refused: the generation rolled back");
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &next);
	ok(next != slot, "generation refused: the slot is not given again (%u, %u)",
	   slot, next);
	ceems_bpf_io_close(bpf);
}

/* A sweep deletes only what is still stale when it deletes: a pid
 * gathered as an ended job's and tagged again for a running job since
 * stays. */
static void
test_sweep_reused(void)
{
	struct ceems_bpf_io *bpf;
	char why[512];
	uint32_t ended, live, keys[8];
	uint64_t value;
	size_t n;

	bpf = ceems_bpf_io_open(false, NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(false, "sweep: the programs load as root: %s", why);
		return;
	}
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &ended);
	ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &live);
	ceems_bpf_io_tag_pid(bpf, ended, 0x30000000u, false);
	ceems_bpf_io_tag_pid(bpf, ended, 0x30000001u, false);
	ceems_bpf_io_job_end(bpf, ended);
	n = ceems_bpf_io_gather_stale_pids(bpf, keys, 8);
	is_int(n, 2, "sweep: the ended job's two pids gathered");
	ceems_bpf_io_tag_pid(bpf, live, 0x30000001u, false);
	ceems_bpf_io_delete_stale_pids(bpf, keys, n);
	ok(bpf_map_lookup_elem(ceems_bpf_io_map_fd(bpf, "job_pids"),
			       &(uint32_t){ 0x30000000u }, &value) < 0,
	   "sweep: the stale pid deleted");
	is_int(bpf_map_lookup_elem(ceems_bpf_io_map_fd(bpf, "job_pids"),
				   &(uint32_t){ 0x30000001u }, &value), 0,
	       "sweep: the pid tagged again for a running job kept");
	ceems_bpf_io_job_end(bpf, live);
	ceems_bpf_io_close(bpf);
}

/* Attribution by cgroup v2 id: a child moved into a cgroup of the v2
 * tree (where one is mounted) is counted by its cgroup, without a pid
 * entry. */
static void
test_cgroup_v2(void)
{
	static const char *const roots[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup" };
	char dir[128], procs[160], path[] = "/tmp/test_bpf_io_v2.XXXXXX", why[256];
	struct ceems_agent_io_report io;
	struct ceems_bpf_io *bpf;
	struct stat st;
	int go[2], status, fd;
	uint32_t slot;
	pid_t pid;

	dir[0] = '\0';
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char probe[160];

		snprintf(probe, sizeof(probe), "%s/cgroup.procs", roots[i]);
		snprintf(dir, sizeof(dir), "%s/ceems-test-bpf-%d", roots[i], (int)getpid());
		if (access(probe, W_OK) == 0 && mkdir(dir, 0755) == 0)
			break;
		dir[0] = '\0';
	}
	if (dir[0] == '\0' || stat(dir, &st) < 0) {
		ok(true, "# skip cgroup v2: no writable v2 tree");
		return;
	}
	bpf = ceems_bpf_io_open(true, CEEMS_BPF_ATTACH_NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(true, "# skip cgroup v2: %s", why);
		rmdir(dir);
		return;
	}
	is_int(ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_PROC), CEEMS_BPF_ATTACH_NONE,
	       "v2: no process hooks");
	ok(ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &slot) == 0 &&
	   ceems_bpf_io_tag_cgroup(bpf, slot, st.st_ino, 1) == 0, "v2: the cgroup tagged");
	close(mkstemp(path));
	if (pipe(go) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		char c, buf[8192];

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		memset(buf, 'v', sizeof(buf));
		fd = open(path, O_WRONLY | O_CLOEXEC);
		_exit(fd >= 0 && write(fd, buf, sizeof(buf)) == sizeof(buf) ? 0 : 2);
	}
	close(go[0]);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	ok(fd >= 0 && dprintf(fd, "%d\n", (int)pid) > 0, "v2: child moved into the cgroup");
	if (fd >= 0)
		close(fd);
	if (write(go[1], "g", 1) != 1)
		return;
	close(go[1]);
	waitpid(pid, &status, 0);
	/* This process stays in its own cgroup: not counted. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "parent", 6) != 6)
			ok(false, "v2: the parent's write");
		close(fd);
	}
	memset(&io, 0, sizeof(io));
	ceems_bpf_io_read(bpf, slot, &io);
	is_int(io.write_bytes, 8192, "v2: the child's writes, by its cgroup, not the parent's");
	ceems_bpf_io_job_end(bpf, slot);
	ceems_bpf_io_close(bpf);
	unlink(path);
	rmdir(dir);
}

/* The walk test's child: 4096 bytes to FD each time it is told to
 * through GO, said done through DONE, until GO closes. */
static void
walk_child(int go, int done, int fd)
{
	char c, buf[4096];

	memset(buf, 'w', sizeof(buf));
	while (read(go, &c, 1) == 1)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf) ||
		    write(done, "d", 1) != 1)
			_exit(1);
	_exit(0);
}

/* A walk test's child, as uid 65534, appending to PATH, moved from
 * outside into the job's cgroup directories DIR; GO and DONE its pipes
 * (walk_child).  Its pid, or -1. */
static pid_t
walk_child_start(char dir[2][CEEMS_CGROUP_PATH_MAX * 2], const char *path,
		 int go[2], int done[2])
{
	char procs[CEEMS_CGROUP_PATH_MAX * 4 + 32];
	pid_t pid;
	int fd;

	if (pipe(go) < 0 || pipe(done) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		close(done[0]);
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		walk_child(go[0], done[1], fd);
	}
	close(go[0]);
	close(done[1]);
	for (int i = 0; i < 2; i++) {
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir[i]);
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "%d\n", (int)pid) <= 0)
			ok(false, "v1 walk: a child moved into %s", dir[i]);
		if (fd >= 0)
			close(fd);
	}
	return pid;
}

/* The walk test's child writes once more; false if it did not. */
static bool
walk_write(int go, int done)
{
	char c;

	return write(go, "g", 1) == 1 && read(done, &c, 1) == 1;
}

/* A full reading walks a v1 job at most once a minute: a second
 * process moved into job J (its cgroup directories DIR) from outside,
 * 10 s after a walk, is found by the reading a minute after it, and its
 * writes to PATH count from then. */
static void
test_walk_v1_once_a_minute(struct ceems_agent *a, struct agent_job *j,
			   char dir[2][CEEMS_CGROUP_PATH_MAX * 2], const char *path)
{
	const uint64_t sec = UINT64_C(1000000000);
	struct ceems_ledger_job_tick t;
	uint64_t before;
	int go[2], done[2];
	pid_t pid;

	a->tick_begin_ns = 200 * sec;
	ceems_agent_tick_collect_job(a, j, true, &t);
	before = j->io.write_bytes;
	pid = walk_child_start(dir, path, go, done);
	if (pid < 0)
		return;
	a->tick_begin_ns = 210 * sec;
	ceems_agent_tick_collect_job(a, j, true, &t);
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the second child's first write");
	a->tick_begin_ns = 220 * sec;
	ceems_agent_tick_collect_job(a, j, true, &t);
	is_int(j->io.write_bytes, before,
	       "v1 walk: full readings 10 and 20 s after a walk do not look for new processes");
	a->tick_begin_ns = 261 * sec;
	ceems_agent_tick_collect_job(a, j, true, &t);
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the second child's second write");
	a->tick_begin_ns = 262 * sec;
	ceems_agent_tick_collect_job(a, j, true, &t);
	is_int(j->io.write_bytes, before + 4096,
	       "v1 walk: the one a minute after finds it; its writes count from then");
	close(go[1]);
	waitpid(pid, NULL, 0);
	close(done[0]);
}

/* The agent's readings of a cgroup v1 job's eBPF counts
 * (lib/agent/agent_bpf.c, agent_tick.c): a process that enters the job's
 * cgroup from outside (not forked by a followed one) is found by a
 * reading that looks for new processes (a step's start, a full tick),
 * not by a light tick's; a light tick leaves the counts as they were,
 * unless the job keeps a time series. */
static void
test_walk_v1(void)
{
	static const enum ceems_cgroup_controller ctl[] = {
		CEEMS_CG_FREEZER, CEEMS_CG_CPUACCT,
	};
	static char some_series;
	struct ceems_agent *a = calloc(1, sizeof(*a));
	struct agent_job *j = calloc(1, sizeof(*j));
	struct ceems_ledger_job_tick t;
	struct ceems_agent_step_report step;
	char dir[2][CEEMS_CGROUP_PATH_MAX * 2];
	char path[] = "/tmp/test_bpf_io_walk.XXXXXX", why[256], *text;
	int go[2], done[2], fd, made = 0, err = 0;
	pid_t pid;

	if (a == NULL || j == NULL || (text = malloc(1 << 20)) == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, text, (1 << 20) - 1) <= 0 ||
	    access("/sys/fs/cgroup/cpuacct/cgroup.procs", W_OK) != 0) {
		ok(true, "# skip the walk of a v1 job: no writable cgroup v1 tree");
		goto out;
	}
	close(fd);
	text[(1 << 20) - 1] = '\0';
	ceems_cgroup_path_mounts_from_mountinfo(text, &a->mounts);
	a->cgroup_prefix = "";
	snprintf(a->config.procfs_root, sizeof(a->config.procfs_root), "/proc");
	j->spec.uid = 65534;
	j->spec.cgroup.version = CEEMS_CGROUP_V1;
	for (int i = 0; i < 2; i++) {
		snprintf(j->spec.cgroup.v1[ctl[i]], CEEMS_CGROUP_PATH_MAX,
			 "/ceems_test_walk_%d", (int)getpid());
		if (ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts, ctl[i],
					      "", dir[i], sizeof(dir[i])) < 0 ||
		    mkdir(dir[i], 0755) < 0)
			break;
		made++;
	}
	a->bpf = ceems_bpf_io_open(false, CEEMS_BPF_ATTACH_NONE, 8, why, sizeof(why));
	if (made < 2 || a->bpf == NULL) {
		ok(true, "# skip the walk of a v1 job: %s",
		   made < 2 ? "no freezer and cpuacct hierarchies" : why);
		goto out;
	}
	close(mkstemp(path));
	chmod(path, 0666);
	ceems_agent_bpf_job_start(a, j);
	ok(j->bpf != NULL && !j->bpf_tagged, "v1 walk: an empty job has a slot, nothing followed");
	pid = walk_child_start(dir, path, go, done);
	if (pid < 0)
		goto out;
	/* A light tick: the process that came from outside is not seen. */
	ceems_agent_bpf_job_read(a, j, false);
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the child's first write");
	ceems_agent_bpf_job_read(a, j, false);
	ok(!j->bpf_tagged && j->io.write_bytes == 0,
	   "v1 walk: a light tick does not look for new processes (%llu bytes)",
	   (unsigned long long)j->io.write_bytes);
	/* A full tick (or a step's start) finds and follows it. */
	ceems_agent_bpf_job_read(a, j, true);
	ok(j->bpf_tagged, "v1 walk: a full reading finds the process in the job's cgroup");
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the child's second write");
	ceems_agent_bpf_job_read(a, j, false);
	is_int(j->io.write_bytes, 4096, "v1 walk: from then on its IO counts");
	/* The tick's own reading of the job: counts on full ticks only. */
	j->reader = ceems_cgroup_stats_reader_open(&j->spec.cgroup, &a->mounts, "", &err);
	if (!ok(j->reader != NULL, "the job's cgroup opens for reading (%d)", err))
		goto stop;
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the child's third write");
	ceems_agent_tick_collect_job(a, j, false, &t);
	is_int(j->io.write_bytes, 4096, "a light tick leaves the job's counts as they were");
	ceems_agent_tick_collect_job(a, j, true, &t);
	is_int(j->io.write_bytes, 8192, "a full tick reads them");
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the child's fourth write");
	j->series = (struct ceems_series *)(void *)&some_series;
	ceems_agent_tick_collect_job(a, j, false, &t);
	j->series = NULL;
	is_int(j->io.write_bytes, 12288, "a job with a time series: every tick reads them");
	/* A step's end reads them too: the summary printed then is the
	 * job's as of its end, not as of its last full reading. */
	if (!walk_write(go[1], done[0]))
		ok(false, "v1 walk: the child's fifth write");
	j->spec.jobid = 4242;
	snprintf(j->steps[0].r.id, sizeof(j->steps[0].r.id), "batch");
	j->nsteps = 1;
	a->jobs = &j;
	a->njobs = 1;
	is_int(ceems_agent_step_end(a, 4242, "batch", 5 * UINT64_C(1000000000), &step), 0,
	       "the batch step ends");
	a->jobs = NULL;
	a->njobs = 0;
	is_int(j->io.write_bytes, 16384, "a step's end reads the job's counts");
	ok(j->counts_ns == 5 * UINT64_C(1000000000), "and notes when");
	test_walk_v1_once_a_minute(a, j, dir, path);
	ceems_cgroup_stats_reader_close(j->reader);
stop:
	close(go[1]);
	waitpid(pid, NULL, 0);
	close(done[0]);
	ceems_agent_bpf_job_end(j);
out:
	ceems_bpf_io_close(a->bpf);
	free(a->bpf_buf);
	for (int i = made - 1; i >= 0; i--)
		rmdir(dir[i]);
	unlink(path);
	free(text);
	free(j);
	free(a);
}
#endif /* HAVE_BPF */

/* A checkpoint written after light ticks holds counts read at the last
 * full one: the time since is said as not counted, so that an agent
 * restarted from it does not take a part for the whole. */
static void
test_stale_counts(void)
{
	struct agent_job *j = calloc(1, sizeof(*j));
	struct ceems_agent_io_report io;
	struct ceems_perf_report perf;

	if (j == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	memset(&io, 0, sizeof(io));
	memset(&perf, 0, sizeof(perf));
	io.have_io = true;
	io.unmeasured_s = 2;
	perf.present = 1;
	j->counts_ns = 100 * UINT64_C(1000000000);
	ceems_agent_tick_stale_counts(j, 107 * UINT64_C(1000000000), &io, &perf);
	is_near(io.unmeasured_s, 9, 1e-9, "counts 7 s old: 7 s more not counted (IO)");
	is_near(perf.unmeasured_s, 7, 1e-9, "and perf");
	memset(&io, 0, sizeof(io));
	memset(&perf, 0, sizeof(perf));
	ceems_agent_tick_stale_counts(j, 107 * UINT64_C(1000000000), &io, &perf);
	ok(io.unmeasured_s == 0 && perf.unmeasured_s == 0,
	   "counts that were never measured stay absent, with nothing to say");
	io.have_net = true;
	perf.present = 1;
	ceems_agent_tick_stale_counts(j, 100 * UINT64_C(1000000000), &io, &perf);
	ok(io.unmeasured_s == 0 && perf.unmeasured_s == 0,
	   "counts read at this tick: nothing added");
	free(j);
}

#ifdef HAVE_BPF
/* A node's boot mounts tracefs (systemd's sys-kernel-tracing.mount); a
 * container may not have: the plain tracepoints need it, as root
 * mounts it. */
static void
mount_tracefs(void)
{
	struct ceems_bpf_io *bpf;
	char why[512];

	if (access("/sys/kernel/tracing/events", X_OK) == 0 ||
	    access("/sys/kernel/debug/tracing/events", X_OK) == 0) {
		ok(true, "# skip tracefs is mounted: its absence is not seen here");
		return;
	}
	bpf = ceems_bpf_io_open(false, T, 8, why, sizeof(why));
	ok(bpf == NULL && strstr(why, "tracefs is not mounted (mount -t tracefs") != NULL,
	   "tracepoints forced without tracefs: says to mount it: %s",
	   bpf == NULL ? why : "opened");
	ceems_bpf_io_close(bpf);
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		printf("# tracefs cannot be mounted: %s\n", strerror(errno));
}
#endif

int
main(void)
{
	test_choose();
	test_report_json();
	test_resume();
	test_never_tagged();
	test_not_dumpable();
	test_stale_counts();
#ifdef HAVE_BPF
	if (geteuid() == 0) {
		mount_tracefs();
		test_real(NONE);
		test_real(F);
		test_real(K);
		test_real(B);
		test_real(T);
		test_job_end();
		test_full_map();
		test_gen_refused();
		test_sweep_reused();
		test_verify();
		test_cgroup_v2();
		test_walk_v1();
	} else {
		ok(true, "# skip the real programs need root");
	}
#else
	{
		char why[256];

		ok(ceems_bpf_io_open(false, CEEMS_BPF_ATTACH_NONE, 8, why, sizeof(why)) == NULL &&
		   strstr(why, "without eBPF") != NULL, "built without eBPF: says so");
	}
#endif
	return done_testing();
}
