/* bench_gather.c - the gather of a multi-node job's figures at scale
 * (doc/performance.md, "The whole-job summary"): NODES simulated node
 * agents, each the agent's own gather listener (tools/agent/agent_gather.c,
 * one thread each, on 127.0.0.1 ports of their own, listed in a
 * gather_nodes file) in front of a stand-in for the agent's socket that
 * answers every report with one real job's report; the batch node's side
 * is the plugin's own call, ceems_gather_client_ask, over all of them.
 * Each round: the gather's wall time, and the CPU time of the calling
 * thread (the batch node's slurmstepd) and of munged (both sides'
 * credentials go through it).
 *
 * usage: bench_gather MUNGE_SOCKET DIR MUNGED_PID [NODES [ROUNDS]]
 * DIR: a scratch folder (the stand-in's socket, the gather_nodes file).
 * tests/bench/run-gather.sh starts a munged of its own and runs it. */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_gather.h"
#include "base/log.h"
#include "client/agent_proto.h"
#include "client/gather_client.h"
#include "bench_time.h"

#define BASE_PORT 17100
#define MAX_NODES 512

static struct ceems_agent_job_report report;
static char reply[CEEMS_AGENT_MSG_MAX];
static int reply_len;

/* A report as a busy node's agent gives it: a ledger of every domain,
 * usage, two steps, IO. */
static void
make_report(uint32_t jobid)
{
	struct ceems_ledger_job_share share;
	struct ceems_emission_factor fr = { "owid-ember-2025", "FR", 2024, 44.2, 1.3 };

	memset(&report, 0, sizeof(report));
	report.jobid = jobid;
	report.uid = 1000;
	report.alloc_cores = 64;
	report.alloc_mem_bytes = 256ULL << 30;
	report.elapsed_s = 3600;
	report.cpu_s = 3600 * 60.5;
	report.usage.present = CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_PEAK;
	report.usage.cpu_usage_ns = (uint64_t)(report.cpu_s * 1e9);
	report.usage.mem_peak_bytes = 100ULL << 30;
	memset(&share, 0, sizeof(share));
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		share.joules[d] = 1000.0 * (d + 1);
		share.static_j[d] = 100.0 * (d + 1);
		share.measured[d] = share.covered[d] = true;
	}
	ceems_job_figures_ledger_init(&report.ledger);
	ceems_ledger_add_tick(&report.ledger, &share, 3600, &fr);
	report.nsteps = 2;
	snprintf(report.steps[0].id, sizeof(report.steps[0].id), "batch");
	snprintf(report.steps[1].id, sizeof(report.steps[1].id), "0");
	report.io.have_io = true;
	report.io.read_bytes = 1ULL << 40;
	reply_len = ceems_agent_proto_reply_ok(&report, reply, sizeof(reply));
}

/* The stand-in for the agents' socket: every request gets the report. */
static void *
agent_socket(void *arg)
{
	int lfd = *(int *)arg;
	char buf[4096];

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0)
			continue;
		if (recv(fd, buf, sizeof(buf), 0) > 0)
			(void)send(fd, reply, (size_t)reply_len, MSG_NOSIGNAL);
		close(fd);
	}
	return NULL;
}

static int
listen_unix(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (strlen(path) >= sizeof(a.sun_path))
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 256) < 0)
		return -1;
	return fd;
}

/* munged's CPU seconds so far, from /proc/PID/stat. */
static double
process_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((fp = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), fp) != NULL && (p = strrchr(buf, ')')) != NULL)
		(void)sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			     &ut, &st);
	fclose(fp);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double
thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int
main(int argc, char **argv)
{
	static struct ceems_config config;
	static struct agent_gather agents[MAX_NODES];
	static double wall[1000], cpu[1000], munge_cpu[1000];
	struct ceems_gather_node *nodes;
	char path[CEEMS_CONFIG_PATH_MAX];
	pthread_t th;
	pid_t munged;
	FILE *fp;
	int nnodes, rounds, lfd;

	if (argc < 4) {
		fprintf(stderr, "usage: bench_gather MUNGE_SOCKET DIR MUNGED_PID "
			"[NODES [ROUNDS]]\n");
		return 2;
	}
	munged = (pid_t)atoi(argv[3]);
	nnodes = argc > 4 ? atoi(argv[4]) : 64;
	rounds = argc > 5 ? atoi(argv[5]) : 20;
	if (nnodes < 1 || nnodes > MAX_NODES || rounds < 1 || rounds > 1000)
		return 2;
	ceems_log_set_level(CEEMS_LOG_WARNING);
	ceems_conf_defaults(&config);
	snprintf(config.munge_socket, sizeof(config.munge_socket), "%s", argv[1]);
	snprintf(config.socket_path, sizeof(config.socket_path), "%s/agent.sock",
		 argv[2]);
	snprintf(config.gather_nodes, sizeof(config.gather_nodes), "%s/nodes",
		 argv[2]);
	config.gather_port = BASE_PORT;
	config.gather_timeout_ns = 10000000000ull;
	make_report(4242);
	if ((fp = fopen(config.gather_nodes, "w")) == NULL)
		return 1;
	for (int i = 0; i < nnodes; i++)
		fprintf(fp, "b%d 127.0.0.1:%d\n", i + 1, BASE_PORT + i);
	fclose(fp);
	if ((lfd = listen_unix(config.socket_path)) < 0 ||
	    pthread_create(&th, NULL, agent_socket, &lfd) != 0) {
		perror("the agents' socket");
		return 1;
	}
	for (int i = 0; i < nnodes; i++) {
		snprintf(path, sizeof(path), "b%d", i + 1);
		if (agent_gather_open(&agents[i], &config, path) != 0 ||
		    agent_gather_start(&agents[i]) != 0) {
			fprintf(stderr, "agent %s did not start\n", path);
			return 1;
		}
	}
	nodes = calloc((size_t)nnodes, sizeof(*nodes));
	if (nodes == NULL)
		return 1;
	for (int r = 0; r < rounds; r++) {
		double t0, c0, m0;
		int answered;

		for (int i = 0; i < nnodes; i++)
			snprintf(nodes[i].node, sizeof(nodes[i].node), "b%d", i + 1);
		m0 = process_cpu_s(munged);
		c0 = thread_cpu_ms();
		t0 = bench_now_ms();
		answered = ceems_gather_client_ask(&config, 4242, nodes,
						   (size_t)nnodes, 10000, 10000);
		wall[r] = bench_now_ms() - t0;
		cpu[r] = thread_cpu_ms() - c0;
		munge_cpu[r] = (process_cpu_s(munged) - m0) * 1e3;
		if (answered != nnodes) {
			for (int i = 0; i < nnodes; i++)
				if (nodes[i].status != 0)
					fprintf(stderr, "%s: %s\n", nodes[i].node,
						nodes[i].why);
			return 1;
		}
	}
	{
		double mw = bench_sort_median(wall, (size_t)rounds);
		double mc = bench_sort_median(cpu, (size_t)rounds);
		double mm = bench_sort_median(munge_cpu, (size_t)rounds);

		printf("nodes %d, rounds %d, each answer a report of %d bytes\n",
		       nnodes, rounds, reply_len);
		printf("gather wall ms: min %.1f median %.1f max %.1f\n",
		       wall[0], mw, wall[rounds - 1]);
		printf("batch node's CPU ms: min %.1f median %.1f max %.1f\n",
		       cpu[0], mc, cpu[rounds - 1]);
		printf("munged's CPU ms (both sides' credentials): median %.0f\n",
		       mm);
	}
	free(nodes);
	return 0;
}
