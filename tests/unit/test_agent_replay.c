/* test_agent_replay.c - tools/agent/agent_replay.c: the spool's replay process,
 * started while the starting process has another thread busy in the C
 * library (the time zone's code: a lock a bare fork could inherit
 * taken), is that process's program executed anew: the
 * same executable, "--replay" on its command line, one thread, none of
 * the starter's memory (a mapping made before the start is not in it),
 * only the descriptors it is meant to hold (0-2 and the pipe the starter
 * watches), no capability and no_new_privs.  It reads its configuration
 * from the descriptor it was given, not its command line: it connects to
 * the database the configuration names (a socket this test listens on).
 * Its death is seen and backed off; stopping it is bounded; run by hand
 * without the descriptors, the mode refuses.
 *
 * This program is the executable the replay process runs: called with
 * "--replay", it is that process, as ceems-agent is. */
#include "config.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_replay.h"
#include "base/conf.h"
#include "base/log.h"
#include "record/record.h"
#include "record/spool.h"
#include "../tap.h"

#define MARKER_NAME "ceems-test-starter-only"

static char dir[] = "/tmp/ceems-test-replay.XXXXXX";
static volatile bool busy_stop;

/* The other thread: in the C library's time zone code all the time,
 * holding its lock most of it. */
static void *
busy(void *arg)
{
	time_t now = time(NULL);
	struct tm tm;

	(void)arg;
	while (!busy_stop)
		for (int i = 0; i < 1000; i++)
			localtime_r(&now, &tm);
	return NULL;
}

static long
status_field(pid_t pid, const char *name)
{
	char path[64], line[256];
	size_t len = strlen(name);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, name, len) == 0 && line[len] == ':')
			v = strtol(line + len + 1, NULL, strcmp(name, "CapEff") == 0 ? 16 : 10);
	fclose(f);
	return v;
}

/* Whether /proc/PID/maps names NEEDLE. */
static bool
maps_hold(pid_t pid, const char *needle)
{
	char path[64], line[1024];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return false;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			found = true;
	fclose(f);
	return found;
}

/* PID's open descriptors, "0 1 2 4" (ascending). */
static void
fd_list(pid_t pid, char *out, size_t size)
{
	char path[64];
	int fds[64], n = 0;
	struct dirent *e;
	size_t used = 0;
	DIR *d;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return;
	while ((e = readdir(d)) != NULL && n < 64)
		if (e->d_name[0] != '.')
			fds[n++] = atoi(e->d_name);
	closedir(d);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (fds[j] < fds[i]) {
				int t = fds[i];

				fds[i] = fds[j];
				fds[j] = t;
			}
	for (int i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%d",
					 i > 0 ? " " : "", fds[i]);
}

/* PID's command line, NULs as spaces. */
static void
cmdline_of(pid_t pid, char *out, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		return;
	for (ssize_t i = 0; i < n - 1; i++)
		if (out[i] == '\0')
			out[i] = ' ';
	out[n] = '\0';
}

/* A record in the spool, so that the replay has something to store. */
static void
spool_one(const char *spool)
{
	static char text[CEEMS_RECORD_MAX + 1];
	struct ceems_agent_job_report rep;
	struct ceems_job_record r;
	struct ceems_job_meta meta;
	char name[256], err[512];
	int n;

	ceems_job_meta_init(&meta);
	meta.jobid = 4242;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "replaytest");
	snprintf(meta.node, sizeof(meta.node), "n1");
	meta.start_time = 1700000000;
	meta.end_time = 1700000600;
	memset(&rep, 0, sizeof(rep));
	rep.jobid = 4242;
	rep.uid = 1000;
	rep.elapsed_s = 600;
	ceems_job_figures_ledger_init(&rep.ledger);
	ceems_record_build(&r, &meta, &rep, "extern", 1700000601);
	n = ceems_record_encode(&r, text, sizeof(text));
	if (n < 0 || ceems_spool_put(spool, 1 << 20, &r, text, (size_t)n, name,
				     sizeof(name), err, sizeof(err)) < 0) {
		printf("Bail out! cannot spool a record: %s\n", err);
		exit(1);
	}
}

/* A "database" on a unix socket: accepts, so the test sees who came. */
static int
listen_db(const char *socket_dir)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/.s.PGSQL.5999", socket_dir);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 8) < 0) {
		printf("Bail out! cannot listen on %s: %s\n", sun.sun_path,
		       strerror(errno));
		exit(1);
	}
	return fd;
}

/* The peer of a connection accepted within MS, or -1. */
static pid_t
accept_peer(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int c;

	if (poll(&p, 1, ms) != 1 || (c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
		return -1;
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		cred.pid = -1;
	close(c);		/* the "database" hangs up: the pass fails */
	return cred.pid;
}

static bool
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

static void
check_fresh_process(struct agent_replay *rp, int watch_fd, int lfd)
{
	pid_t pid = agent_replay_pid(rp), peer;
	char path[64], fds[256], cmd[512], want[64];
	struct stat pipe_st, child_st;
	uint64_t until;

	peer = accept_peer(lfd, 10000);
	ok(peer == pid, "the replay process reached the database its configuration "
	   "names (peer %d, process %d)", (int)peer, (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ok(same_file(path, "/proc/self/exe"),
	   "its executable is the starter's program");
	cmdline_of(pid, cmd, sizeof(cmd));
	ok(strstr(cmd, " --replay ") != NULL, "its command line is the replay "
	   "mode: '%s'", cmd);
	ok(strstr(cmd, dir) == NULL, "the configuration is not on its command line");
	ok(maps_hold(getpid(), MARKER_NAME), "the starter holds its marker mapping");
	ok(!maps_hold(pid, MARKER_NAME), "the replay process has none of the "
	   "starter's memory: it was executed anew, not only forked");
	ok(status_field(getpid(), "Threads") >= 2, "the starter had %ld threads",
	   status_field(getpid(), "Threads"));
	is_int(status_field(pid, "Threads"), 1, "the replay process has one thread");
	is_int(status_field(pid, "CapEff"), 0, "no effective capability");
	is_int(status_field(pid, "NoNewPrivs"), 1, "no_new_privs");
	/* The failed connection's socket goes within the pass. */
	snprintf(want, sizeof(want), "0 1 2 %d", AGENT_REPLAY_ALIVE_FD);
	until = (uint64_t)time(NULL) + 5;
	do {
		fd_list(pid, fds, sizeof(fds));
		if (strcmp(fds, want) == 0)
			break;
		poll(NULL, 0, 20);
	} while ((uint64_t)time(NULL) < until);
	is_str(fds, want, "its descriptors are 0-2 and the pipe, nothing inherited");
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, AGENT_REPLAY_ALIVE_FD);
	ok(fstat(watch_fd, &pipe_st) == 0 && stat(path, &child_st) == 0 &&
	   pipe_st.st_ino == child_st.st_ino, "its descriptor %d is the pipe the "
	   "starter watches", AGENT_REPLAY_ALIVE_FD);
}

static void
check_death_and_stop(struct agent_replay *rp, int watch_fd, int lfd)
{
	struct pollfd p = { .fd = watch_fd, .events = POLLIN };
	struct timespec t0, t1;
	uint64_t again;
	pid_t pid = agent_replay_pid(rp);
	int fd;

	kill(pid, SIGKILL);
	ok(poll(&p, 1, 5000) == 1, "the pipe tells of the process's death");
	again = agent_replay_on_event(rp);
	is_int(again, 5 * UINT64_C(1000000000), "a new one is due in 5 s");
	is_int(agent_replay_pid(rp), 0, "the dead process is collected");

	fd = agent_replay_spawn(rp, 0);
	ok(fd >= 0, "a new replay process");
	ok(accept_peer(lfd, 10000) == agent_replay_pid(rp),
	   "the new process reaches the database too");
	pid = agent_replay_pid(rp);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	agent_replay_free(rp);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 2500,
	   "stopping it is bounded");
	ok(kill(pid, 0) < 0 && errno == ESRCH, "it is stopped and collected");
}

/* Run by hand, without the descriptors: the mode refuses. */
static void
check_by_hand(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		static char a0[] = "test", a1[] = "--replay", a2[] = "0";
		char *argv[] = { a0, a1, a2, NULL };

		for (int fd = 3; fd < 64; fd++)
			close(fd);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 2,
	   "--replay without the agent's descriptors exits 2 (status %d)", status);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static void
rm_tree(const char *path)
{
	if (nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		printf("# could not remove %s\n", path);
}

int
main(int argc, char **argv)
{
	static struct ceems_config config;
	char text[2 * PATH_MAX], spool[PATH_MAX], err[512];
	struct agent_replay *rp;
	pthread_t thread;
	uint64_t delay;
	int marker, lfd, fd;

	/* The replay process, as ceems-agent runs it. */
	if (argc >= 2 && strcmp(argv[1], "--replay") == 0) {
		if (agent_replay_load(argc - 1, argv + 1, &config, &delay) < 0)
			return 2;
		ceems_log_set_level(CEEMS_LOG_DEBUG);
		agent_replay_main(&config, delay);
	}
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	mkdir(spool, 0700);
	spool_one(spool);
	lfd = listen_db(dir);
	snprintf(text, sizeof(text), "spool_dir = %s\ndatabase = host=%s port=5999 "
		 "dbname=ceems connect_timeout=2\ndatabase_timeout = 2s\n", spool, dir);
	ceems_conf_defaults(&config);
	if (ceems_conf_parse(&config, text, "test", err, sizeof(err)) < 0) {
		printf("Bail out! %s\n", err);
		return 1;
	}
	/* Memory only the starter has: a fork would copy it, an exec not. */
	marker = memfd_create(MARKER_NAME, MFD_CLOEXEC);
	if (marker < 0 || ftruncate(marker, 4096) < 0 ||
	    mmap(NULL, 4096, PROT_READ, MAP_SHARED, marker, 0) == MAP_FAILED) {
		printf("Bail out! marker mapping: %s\n", strerror(errno));
		return 1;
	}
	pthread_create(&thread, NULL, busy, NULL);

	rp = agent_replay_new(&config, text);
	ok(rp != NULL, "agent_replay_new");
	if (rp == NULL)
		return 1;
	fd = agent_replay_spawn(rp, 0);
	ok(fd >= 0, "agent_replay_spawn: %s", fd < 0 ? strerror(-fd) : "ok");
	if (fd < 0)
		return 1;
	check_fresh_process(rp, fd, lfd);
	check_death_and_stop(rp, fd, lfd);
	busy_stop = true;
	pthread_join(thread, NULL);
	check_by_hand();
	close(lfd);
	rm_tree(dir);
	printf("1..%d\n", tap_count);
	return tap_failed != 0;
}
