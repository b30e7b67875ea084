/* test_agent_launch.c - lib/client/agent_launch.c: the supervisor's lock
 * decides
 * who runs (a second taker is refused, a probe takes nothing, a file
 * without a holder is stale whatever it says), the pid file's parser, and
 * the launch: the program runs detached (own session, not our child),
 * with PATH alone, /dev/null on 0 and 1, the log on 2, the lock on 3 and
 * nothing else, holding the lock after the caller closed its copy; an
 * exec that fails is reported.  The pid file is root's alone (0600, an
 * old 0644 one made so, a link refused), and a read lock another process
 * holds on it is reported as foreign, not adopted as a supervisor. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <ftw.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/agent_launch.h"
#include "../tap.h"

static char dir[] = "/tmp/ceems-test-launch.XXXXXX";

static unsigned
file_mode(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0;
}

static void
test_parse(void)
{
	static const struct {
		const char *text;
		long sv, agent;
	} cases[] = {
		{ "123 456\n", 123, 456 }, { "123 0\n", 123, 0 },
		{ "123\n", 123, 0 }, { "", 0, 0 }, { "x 1\n", 0, 0 },
		{ "12x 4\n", 0, 0 }, { "99999999999 1\n", 0, 0 },
		{ "2147483647 2147483648\n", 2147483647, 0 },
		{ "-1 -1\n", 0, 0 }, { " 7  8", 7, 8 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t sv = -1, agent = -1;

		ceems_agent_launch_pid_parse(cases[i].text, strlen(cases[i].text), &sv,
				      &agent);
		ok(sv == cases[i].sv && agent == cases[i].agent,
		   "parse '%s' -> %ld %ld (got %ld %ld)", cases[i].text,
		   cases[i].sv, cases[i].agent, (long)sv, (long)agent);
	}
}

static void
test_lock(void)
{
	char path[PATH_MAX];
	pid_t sv, agent;
	int fd;

	snprintf(path, sizeof(path), "%s/state/%s", dir, CEEMS_AGENT_PID_FILE);
	is_int(ceems_agent_launch_lock_probe(path, &sv, &agent), 0, "no file: no supervisor");
	fd = ceems_agent_launch_lock_take(path);
	ok(fd >= 0, "the lock is taken (its directory created)");
	ok(file_mode(path) == 0600, "the pid file is created 0600 (got %04o)",
	   file_mode(path));
	is_int(ceems_agent_launch_lock_take(path), -EWOULDBLOCK,
	       "a second taker, even in the same process, is refused");
	is_int(ceems_agent_launch_lock_write(fd, 123, 456), 0, "pids written");
	is_int(ceems_agent_launch_lock_probe(path, &sv, &agent), 1, "probe: held");
	ok(sv == 123 && agent == 456, "probe reads the pids");
	is_int(ceems_agent_launch_lock_probe(path, &sv, &agent), 1,
	       "a probe takes no lock (a second one sees the same)");
	close(fd);
	is_int(ceems_agent_launch_lock_probe(path, &sv, &agent), 0,
	       "the holder gone, the file (still naming pids) is stale");
	fd = ceems_agent_launch_lock_take(path);
	ok(fd >= 0, "a stale file's lock is taken");
	close(fd);
}

/* An unprivileged reader's trick: open the pid file read-only while it
 * was readable by all, take a read lock, and keep it.  Done by a child,
 * which holds it until told to go (a byte on GO). */
static pid_t
hold_read_lock(const char *path, int *go)
{
	int ready[2], wait_go[2];
	char c = 0;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(wait_go) < 0 || (pid = fork()) < 0) {
		printf("Bail out! pipe or fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		c = fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 'y' : 'n';
		(void)!write(ready[1], &c, 1);
		(void)!read(wait_go[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(wait_go[0]);
	if (read(ready[0], &c, 1) != 1 || c != 'y') {
		printf("Bail out! the child could not take a read lock on %s\n", path);
		exit(1);
	}
	close(ready[0]);
	*go = wait_go[1];
	return pid;
}

static void
test_foreign_lock(void)
{
	char path[PATH_MAX], link[PATH_MAX];
	pid_t sv = -1, agent = -1, child;
	int fd, go, status;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, CEEMS_AGENT_PID_FILE);
	f = fopen(path, "w");
	if (f == NULL) {
		printf("Bail out! %s: %s\n", path, strerror(errno));
		exit(1);
	}
	fputs("4321 0\n", f);
	fclose(f);
	(void)chmod(path, 0644);
	child = hold_read_lock(path, &go);
	is_int(ceems_agent_launch_lock_take(path), -EBUSY,
	       "a read lock of another process: foreign, not a supervisor to adopt");
	is_int(ceems_agent_launch_lock_probe(path, &sv, &agent), -EBUSY,
	       "the probe sees the read lock and reports it as foreign");
	ok(sv == 0 && agent == 0, "no pid is read from a foreign-held file");
	ok(strstr(ceems_agent_launch_lock_strerror(-EBUSY), "no ceems-agent supervisor") != NULL,
	   "the error says that no supervisor holds it");
	(void)!write(go, "x", 1);
	close(go);
	(void)waitpid(child, &status, 0);
	fd = ceems_agent_launch_lock_take(path);
	ok(fd >= 0, "the reader gone, the lock is taken");
	ok(file_mode(path) == 0600, "the old 0644 file is made 0600 (got %04o)",
	   file_mode(path));
	close(fd);
	snprintf(link, sizeof(link), "%s/link.pid", dir);
	(void)!symlink(path, link);
	is_int(ceems_agent_launch_lock_take(link), -EPERM, "a link is refused");
}

/* The launched "agent": a script that writes what it sees and waits for
 * a file to go away. */
static void
write_script(const char *script)
{
	FILE *f = fopen(script, "w");

	if (f == NULL) {
		printf("Bail out! %s: %s\n", script, strerror(errno));
		exit(1);
	}
	fprintf(f, "#!/bin/sh\n"
		"d=%s\n"
		"env > $d/env.tmp; mv $d/env.tmp $d/env\n"
		"echo \"$@\" > $d/args\n"
		"(for n in 0 1 2 3 4 5 6 7 8 9 10 11 12; do\n"
		"  [ -e /proc/$$/fd/$n ] && echo \"$n $(readlink /proc/$$/fd/$n)\"\n"
		"done) > $d/fds\n"
		"echo $(cut -d' ' -f4,6 /proc/$$/stat) > $d/stat\n"
		"touch $d/ready\n"
		"while [ -e $d/hold ]; do sleep 0.05; done\n", dir);
	fclose(f);
	chmod(script, 0755);
}

static char *
slurp(const char *name)
{
	static char buf[4096];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	if ((fd = open(path, O_RDONLY)) < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static bool
wait_for(const char *name, bool present)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 200; i++) {
		if ((access(path, F_OK) == 0) == present)
			return true;
		poll(NULL, 0, 25);
	}
	return false;
}

static void
test_launch(void)
{
	char script[PATH_MAX], log[PATH_MAX], lock[PATH_MAX], hold[PATH_MAX];
	char want[PATH_MAX * 4], conf[PATH_MAX];
	struct ceems_launch_spec spec;
	pid_t sv, p, a;
	int fd, line, junk;

	snprintf(script, sizeof(script), "%s/agent.sh", dir);
	snprintf(log, sizeof(log), "%s/agent.log", dir);
	snprintf(lock, sizeof(lock), "%s/state/%s", dir, CEEMS_AGENT_PID_FILE);
	snprintf(hold, sizeof(hold), "%s/hold", dir);
	snprintf(conf, sizeof(conf), "%s/ceems.conf", dir);
	write_script(script);
	close(open(hold, O_WRONLY | O_CREAT, 0600));
	spec = (struct ceems_launch_spec){ .agent = script, .config = conf,
					   .log = log, .interval = "2s" };

	junk = open("/dev/null", O_RDONLY);	/* not O_CLOEXEC: must not leak */
	fd = ceems_agent_launch_lock_take(lock);
	sv = ceems_agent_launch(&spec, fd);
	close(fd);
	ok(sv > 0, "launched: pid %ld", (long)sv);
	ok(wait_for("ready", true), "the program ran");
	is_int(waitpid(sv, NULL, WNOHANG), -1, "it is not our child");
	{
		long ppid = 0, sid = 0;

		ok(sscanf(slurp("stat"), "%ld %ld", &ppid, &sid) == 2 &&
		   ppid != getpid() && sid != getsid(0) && sid != sv,
		   "its parent is not us, its session not ours (and it does not lead it): %s",
		   slurp("stat"));
	}
	snprintf(want, sizeof(want), "--supervise --agent %s -c %s --interval 2s --log %s --lock-fd 3\n",
		 script, conf, log);
	is_str(slurp("args"), want, "its arguments");
	line = 0;
	for (char *l = strtok(slurp("env"), "\n"); l != NULL; l = strtok(NULL, "\n"))
		if (strncmp(l, "PWD=", 4) != 0 && strncmp(l, "SHLVL=", 6) != 0 &&
		    strncmp(l, "_=", 2) != 0 && strncmp(l, "OLDPWD=", 7) != 0)
			line += strcmp(l, "PATH=/usr/sbin:/usr/bin:/sbin:/bin") == 0 ? 1 : 100;
	is_int(line, 1, "its environment is PATH alone (the shell's own aside)");
	snprintf(want, sizeof(want), "0 /dev/null\n1 /dev/null\n2 %s\n3 %s\n",
		 log, lock);
	/* The shell itself opens the script (fd 10 or so in dash): ignore
	 * descriptors above 3 that point at the script. */
	{
		char fds[4096], kept[4096] = "";

		snprintf(fds, sizeof(fds), "%s", slurp("fds"));
		for (char *l = strtok(fds, "\n"); l != NULL; l = strtok(NULL, "\n"))
			if (strstr(l, "agent.sh") == NULL) {
				strncat(kept, l, sizeof(kept) - strlen(kept) - 2);
				strcat(kept, "\n");
			}
		is_str(kept, want, "descriptors: /dev/null, /dev/null, the log, the lock");
	}
	is_int(ceems_agent_launch_lock_take(lock), -EWOULDBLOCK,
	       "the launched program holds the lock");
	is_int(ceems_agent_launch_lock_probe(lock, &p, &a), 1, "a probe sees it held");
	unlink(hold);
	for (int i = 0; i < 200 && ceems_agent_launch_lock_probe(lock, &p, &a) == 1; i++)
		poll(NULL, 0, 25);
	is_int(ceems_agent_launch_lock_probe(lock, &p, &a), 0,
	       "the lock goes with the program's exit");
	close(junk);

	spec.agent = "/nonexistent/ceems-agent";
	fd = ceems_agent_launch_lock_take(lock);
	is_int(ceems_agent_launch(&spec, fd), -ENOENT, "a failed exec is reported");
	close(fd);
	spec.agent = "relative";
	is_int(ceems_agent_launch(&spec, -1), -EINVAL, "a relative path is refused");
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	test_parse();
	test_lock();
	test_foreign_lock();
	test_launch();
	if (nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
