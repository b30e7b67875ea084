/* vm_io.c - the eBPF IO and network acceptance in miniature, for one
 * attach type, as TAP: run as root inside the virtual machine of
 * tests/vm/run-vm.sh (tests/vm/bpf-vm.sh runs it once per type the guest
 * kernel should offer).
 *
 *   vm_io TYPE net|nonet
 *
 * TYPE is a word of the ebpf key (auto, fentry, kprobe, btf,
 * tracepoint); the programs must load with it, and when forced the IO
 * hook must be attached by it.  A
 * child tagged as a job writes 32 MiB to a file and reads them back,
 * then sends 8 MiB over TCP to this (untagged) process: its slot must
 * count each within 2%.  A second child doing no IO must count close to
 * nothing.  NET says whether the guest kernel offers TYPE's network hook:
 * "net" wants the 8 MiB counted, "nonet" wants the network figures
 * absent (not a false zero). */
#include "config.h"

#include <sys/socket.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "sources/bpf_io.h"
#include "../tap.h"

#define FILE_BYTES (32u << 20)
#define NET_BYTES (8u << 20)
#define CHUNK (1u << 20)
#define TOLERANCE 0.02
/* What a process doing no IO may be charged: far below a file's worth. */
#define IDLE_MAX 4096

static bool
within(uint64_t got, uint64_t want)
{
	double d = (double)got - (double)want;

	return d <= TOLERANCE * want && -d <= TOLERANCE * want;
}

/* A TCP connection over IPv4 loopback: the sending end, the receiving
 * one in *RX. */
static int
tcp_pair(int *rx)
{
	struct sockaddr_in in;
	socklen_t len = sizeof(in);
	int l, s;

	memset(&in, 0, sizeof(in));
	in.sin_family = AF_INET;
	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*rx = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0 || s < 0 || bind(l, (struct sockaddr *)&in, len) < 0 ||
	    listen(l, 1) < 0 || getsockname(l, (struct sockaddr *)&in, &len) < 0 ||
	    connect(s, (struct sockaddr *)&in, len) < 0)
		return -1;
	*rx = accept(l, NULL, NULL);
	close(l);
	return *rx < 0 ? -1 : s;
}

/* The job: 32 MiB written and read back, 8 MiB sent. */
static int
io_job(const char *path, int tx)
{
	static char buf[CHUNK];
	int fd;

	memset(buf, 'v', sizeof(buf));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return 2;
	for (unsigned off = 0; off < FILE_BYTES; off += CHUNK)
		if (write(fd, buf, CHUNK) != (ssize_t)CHUNK)
			return 3;
	for (unsigned off = 0; off < FILE_BYTES; off += CHUNK)
		if (pread(fd, buf, CHUNK, off) != (ssize_t)CHUNK)
			return 4;
	close(fd);
	for (unsigned sent = 0; sent < NET_BYTES; sent += CHUNK)
		if (send(tx, buf, CHUNK, 0) != (ssize_t)CHUNK)
			return 5;
	close(tx);
	return 0;
}

/* Not IO: computing for a while. */
static int
idle_job(void)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < 20000000; i++)
		x += i ^ (x >> 3);
	return x == 1 ? 1 : 0;
}

/* Run JOB (io_job when PATH, else idle_job) in a child tagged into SLOT
 * before it starts; drain RX (when >= 0) until the child closes its end.
 * The child's exit status. */
static int
run_tagged(struct ceems_bpf_io *bpf, uint32_t slot, const char *path, int tx, int rx)
{
	static char buf[65536];
	int go[2], status;
	pid_t pid;
	char c;

	if (pipe(go) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(go[1]);
		if (rx >= 0)
			close(rx);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(path != NULL ? io_job(path, tx) : idle_job());
	}
	close(go[0]);
	if (tx >= 0)
		close(tx);
	if (ceems_bpf_io_tag_pid(bpf, slot, (uint32_t)pid, false) < 0 ||
	    write(go[1], "g", 1) != 1)
		kill(pid, SIGKILL);
	close(go[1]);
	while (rx >= 0 && recv(rx, buf, sizeof(buf), 0) > 0)
		;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
check_io_job(const char *type, struct ceems_bpf_io *bpf, bool want_net)
{
	char path[] = "/tmp/vm_io.XXXXXX";
	struct ceems_agent_io_report io;
	uint64_t tcp_out;
	uint32_t slot;
	int fd, tx, rx = -1;

	fd = mkstemp(path);
	tx = tcp_pair(&rx);
	if (!ok(fd >= 0 && tx >= 0 && ceems_bpf_io_job_start(bpf, 0, &slot) == 0,
		"%s: a file, a TCP connection over loopback, a slot", type))
		return;
	close(fd);
	is_int(run_tagged(bpf, slot, path, tx, rx), 0, "the job wrote, read and sent");
	close(rx);
	unlink(path);
	memset(&io, 0, sizeof(io));
	is_int(ceems_bpf_io_read(bpf, slot, &io), 0, "the slot read");
	ok(io.have_io, "%s: IO measured", type);
	ok(within(io.write_bytes, FILE_BYTES), "%s: %u bytes written counted within 2%%: %llu",
	   type, FILE_BYTES, (unsigned long long)io.write_bytes);
	ok(within(io.read_bytes, FILE_BYTES), "%s: %u bytes read back counted within 2%%: %llu",
	   type, FILE_BYTES, (unsigned long long)io.read_bytes);
	tcp_out = io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV4];
	if (want_net) {
		ok(io.have_net, "%s: network measured", type);
		ok(within(tcp_out, NET_BYTES), "%s: %u bytes sent over TCP counted within 2%%: %llu",
		   type, NET_BYTES, (unsigned long long)tcp_out);
	} else {
		ok(!io.have_net, "%s: network not offered by this kernel: absent, not zero", type);
	}
	ceems_bpf_io_job_end(bpf, slot);
}

static void
check_idle_job(const char *type, struct ceems_bpf_io *bpf)
{
	struct ceems_agent_io_report io;
	uint32_t slot;

	if (!ok(ceems_bpf_io_job_start(bpf, 0, &slot) == 0, "%s: a slot for a job without IO", type))
		return;
	is_int(run_tagged(bpf, slot, NULL, -1, -1), 0, "the job without IO ran");
	memset(&io, 0xff, sizeof(io));
	ceems_bpf_io_read(bpf, slot, &io);
	ok(io.read_bytes + io.write_bytes <= IDLE_MAX,
	   "%s: a job without IO counts about nothing: %llu bytes", type,
	   (unsigned long long)(io.read_bytes + io.write_bytes));
	ceems_bpf_io_job_end(bpf, slot);
}

int
main(int argc, char **argv)
{
	struct ceems_bpf_io *bpf;
	enum ceems_bpf_attach io;
	const char *type;
	char why[256];
	bool want_net;
	int force;

	force = argc == 3 ? ceems_bpf_choose_force_from_word(argv[1]) : -1;
	if (force < 0 || (strcmp(argv[2], "net") != 0 && strcmp(argv[2], "nonet") != 0)) {
		fprintf(stderr, "usage: vm_io auto|fentry|kprobe|btf|tracepoint net|nonet\n");
		return 2;
	}
	type = argv[1];
	want_net = strcmp(argv[2], "net") == 0;
	bpf = ceems_bpf_io_open(false, (enum ceems_bpf_attach)force, 8, why, sizeof(why));
	if (!ok(bpf != NULL, "%s: the kernel accepts the programs%s%s", type,
		bpf == NULL ? ": " : "", bpf == NULL ? why : ""))
		return done_testing();
	io = ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_IO);
	printf("# %s: io by %s, network by %s\n", type, ceems_bpf_choose_attach_name(io),
	       ceems_bpf_choose_attach_name(ceems_bpf_io_attach(bpf, CEEMS_BPF_HOOK_NET)));
	if (force != CEEMS_BPF_ATTACH_NONE)
		ok(io == (enum ceems_bpf_attach)force, "%s: forced, IO attached by it", type);
	check_io_job(type, bpf, want_net);
	check_idle_job(type, bpf);
	ceems_bpf_io_close(bpf);
	return done_testing();
}
