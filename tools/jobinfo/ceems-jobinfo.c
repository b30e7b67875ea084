/* ceems-jobinfo - ask slurmctld about jobs on the node agent's behalf.
 *
 * One process per node, started and restarted by the agent's supervisor
 * beside the agent (tools/agent/agent_supervise.c), so that no step of a
 * job asks slurmctld anything: neither a child of the extern step at the
 * job's start nor a "slurmstepd spank epilog" process at its end.  The
 * agent leaves a request in STATE_DIR/jobinfo (tools/agent/agent_jobinfo.c):
 *   start-JOBID  a job registered without Slurm's start time; the file
 *                holds its registration (the agent's protocol's SPEC).
 *                Answered with a second register of the job carrying
 *                Slurm's start time, the cluster and the job's GPUs on
 *                this node, as the extern step's child did.
 *   end-JOBID    the extern step ended the job (or was killed); the
 *                file holds Slurm's start time of the run, 0 when the
 *                agent did not know it.  Answered, once
 *                slurmctld has decided the job's state, with the job's
 *                end by "epilog" with slurmctld's metadata (state, exit
 *                code, end time, account...), as the epilog did.
 * It waits on inotify (no cost while idle), asks slurmctld with libslurm
 * (slurm.conf found as Slurm's clients find it: SLURM_CONF, else the
 * default, else configless /run/slurm/conf), each question bounded by
 * slurm.conf's MessageTimeout, and retries a request slurmctld did not
 * answer every RETRY_S until it is older than GIVE_UP_S.  An end
 * slurmctld has not answered by half of finish_grace is given with what
 * slurmctld said at the job's start (kept for the last CACHE_JOBS jobs),
 * the state then the steps'; without even that, the agent writes the
 * job's record after finish_grace with what the plugin said: nothing is
 * lost.
 *
 * It runs as root, which the agent requires of whoever registers or
 * ends jobs, with no capability at all and no way to gain one: what it
 * touches (the request folder, the agent's socket) is root's own, and
 * munge's socket and slurm.conf are open to everyone.  A request is
 * opened with O_NOFOLLOW in a folder that must be root's alone; a name
 * that is not a request is left alone, a request that does not parse is
 * removed. */
#include "config.h"

#include <sys/capability.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "base/conf.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/node_name.h"
#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "plugin.h"
#include "slurm_compat.h"
#include "slurm_ctld.h"

#define RETRY_S 2
/* A request still unanswered after this is dropped: by then the agent
 * has written the record itself (finish_grace is 30 s by default). */
#define GIVE_UP_S 600
#define AGENT_TIMEOUT_MS 2000
#define REQUEST_DIR "jobinfo"

/* What slurmctld said of the last jobs at their start, to fill what it
 * no longer says at their end (the node list of a job that other nodes
 * have completed) or, when it says nothing by half of finish_grace, to
 * give the agent the job's metadata with its end all the same. */
#define CACHE_JOBS 1024

static struct ceems_config config;
static const char *node;
static volatile sig_atomic_t got_term;
static struct ceems_job_meta *cache;	/* CACHE_JOBS, by jobid modulo */
static int request_dir = -1;

static void
on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

static void
log_to_stderr(enum ceems_log_level level, const char *message, void *arg)
{
	static const char *const names[] = {
		[CEEMS_LOG_ERROR] = "error", [CEEMS_LOG_WARNING] = "warning",
		[CEEMS_LOG_INFO] = "info", [CEEMS_LOG_DEBUG] = "debug",
	};
	char line[1200], stamp[32];
	struct tm tm;
	time_t now = time(NULL);
	int n;

	(void)arg;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", &tm);
	n = snprintf(line, sizeof(line), "%s ceems-jobinfo[%d]: %s: %s\n",
		     stamp, (int)getpid(), names[level], message);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = (int)sizeof(line) - 1;
	if (write(STDERR_FILENO, line, (size_t)n) < 0) {
		/* Nowhere left to say it. */
	}
}

/* No capability, now or after an exec: root's own files are all it
 * needs. */
static int
drop_privileges(void)
{
	cap_t none;
	int r;

	/* Every capability the kernel knows, not only the headers'. */
	for (int cap = 0; cap < 64; cap++)
		(void)prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	none = cap_init();
	if (none == NULL)
		return -1;
	r = cap_set_proc(none);
	cap_free(none);
	if (r < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return 0;
}

/* The request folder, root's alone: made if missing, refused if someone
 * else could write or read it.  Its descriptor, or -1 (logged). */
static int
open_dir(char *path, size_t size)
{
	struct stat st;
	int fd;

	if (snprintf(path, size, "%s/%s", config.state_dir, REQUEST_DIR) >=
	    (int)size) {
		ceems_error("state_dir %s is too long", config.state_dir);
		return -1;
	}
	fd = ceems_fileio_open_made_dir(path, 0700, &st);
	if (fd < 0) {
		ceems_error("cannot create or open %s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		ceems_error("%s is not root's alone (uid %u, mode %04o): no request there is trusted",
			    path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* NAME "start-N" or "end-N" (N 1..2^32-1, digits only): 1 start, 2 end,
 * 0 not a request. */
static int
request_kind(const char *name, uint32_t *jobid)
{
	const char *digits;
	unsigned long long v = 0;
	int kind;

	if (strncmp(name, "start-", 6) == 0) {
		kind = 1;
		digits = name + 6;
	} else if (strncmp(name, "end-", 4) == 0) {
		kind = 2;
		digits = name + 4;
	} else {
		return 0;
	}
	if (*digits == '\0' || strlen(digits) > 10)
		return 0;
	for (const char *p = digits; *p != '\0'; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (unsigned)(*p - '0');
	}
	if (v == 0 || v > UINT32_MAX)
		return 0;
	*jobid = (uint32_t)v;
	return kind;
}

/* The request NAME's text into BUF, its age in seconds into AGE.
 * Length, or -1 when it is no regular file or cannot be read. */
static ssize_t
read_request(int dirfd, const char *name, char *buf, size_t size,
	     time_t *age)
{
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
			O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size >= size) {
		(void)close(fd);
		return -1;
	}
	n = read(fd, buf, size - 1);
	(void)close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	*age = time(NULL) - st.st_mtime;
	return n;
}

static void
cache_put(const struct ceems_job_meta *meta)
{
	if (cache != NULL)
		cache[meta->jobid % CACHE_JOBS] = *meta;
}

static const struct ceems_job_meta *
cache_get(uint32_t jobid)
{
	const struct ceems_job_meta *m;

	if (cache == NULL)
		return NULL;
	m = &cache[jobid % CACHE_JOBS];
	return m->jobid == jobid ? m : NULL;
}

/* ceems_slurm_ctld_meta, with a slurmctld that stops answering (or
 * answers again) said once, not at every try. */
static bool silent_this_scan;

static int
ask(uint32_t jobid, struct ceems_job_meta *meta,
    struct ceems_plugin_job_gpus *gpus)
{
	static bool silent;
	bool no_answer;
	int r, err;

	/* One question a scan to a slurmctld that does not answer: each
	 * may wait MessageTimeout. */
	if (silent_this_scan)
		return -1;
	r = ceems_slurm_ctld_meta(jobid, config.cluster, meta, 0, node, gpus);
	err = errno;	/* Slurm's reason, where r < 0 (slurm_ctld.h) */
	no_answer = r < 0 && err != ESLURM_INVALID_JOB_ID;
	silent_this_scan = no_answer;

	if (no_answer && !silent)
		ceems_warning("slurmctld does not answer (%s): the requests wait, tried again every %d s",
			      slurm_strerror(err), RETRY_S);
	else if (!no_answer && silent)
		ceems_info("slurmctld answers again");
	silent = no_answer;
	return r;
}

/* Whether the agent's socket is there: a call's -ENOENT is then the
 * agent's refusal (no such job), not a missing socket. */
static bool
agent_up(void)
{
	return access(config.socket_path, F_OK) == 0;
}

/* Whether the agent holds job JOBID (registered, not ended): a
 * connection refused or timed out says yes, so the register that
 * follows fails and the request is tried again. */
static bool
agent_holds(uint32_t jobid)
{
	static struct ceems_agent_job_report report;
	char err[256];
	int r = ceems_agent_client_report_job(config.socket_path, jobid,
					      AGENT_TIMEOUT_MS, &report, err,
					      sizeof(err));

	if (r == -ENOENT && agent_up()) {
		ceems_debug("job %u: ended before slurmctld answered; its start time goes with its end",
			    jobid);
		return false;
	}
	return true;
}

/* A start request: Slurm's start time, cluster and GPUs given to the
 * agent.  1 done (or never to be), 0 to try again. */
static int
answer_start(uint32_t jobid, const char *text, size_t len)
{
	struct ceems_agent_job_spec spec;
	struct ceems_plugin_job_gpus gpus;
	struct ceems_job_meta meta;
	struct json_tokener *tok = json_tokener_new();
	struct json_object *obj = NULL;
	char err[256];
	int r;

	if (tok != NULL)
		obj = json_tokener_parse_ex(tok, text, (int)len);
	json_tokener_free(tok);
	memset(&spec, 0, sizeof(spec));
	r = obj != NULL ? ceems_agent_proto_spec_from_json(obj, &spec, err,
							    sizeof(err)) : -EINVAL;
	json_object_put(obj);
	if (r < 0 || spec.jobid != jobid) {
		ceems_warning("job %u: its start request does not parse; dropped",
			      jobid);
		return 1;
	}
	if (ask(jobid, &meta, &gpus) < 0 || meta.start_time <= 0)
		return 0;
	cache_put(&meta);
	/* A register of a job the agent no longer holds (it ended while
	 * slurmctld was asked) would register it anew: asked first. */
	if (!agent_holds(jobid))
		return 1;
	if (meta.start_time <= CEEMS_AGENT_START_TIME_MAX)
		spec.start_time = meta.start_time;
	snprintf(spec.cluster, sizeof(spec.cluster), "%s", meta.cluster);
	(void)ceems_job_gpus_ids(config.gres_conf, &gpus, &spec);
	r = ceems_agent_client_register_job(config.socket_path, &spec,
					    AGENT_TIMEOUT_MS, err, sizeof(err));
	if (r == 0 || r == -EEXIST) {
		ceems_info("job %u: start time %lld, cluster '%s' and %u GPU%s given to the node agent",
			   jobid, (long long)spec.start_time, spec.cluster,
			   spec.ngpu_ids, spec.ngpu_ids == 1 ? "" : "s");
		return 1;
	}
	ceems_info("job %u: the node agent did not take its start time (%s)",
		   jobid, err);
	/* The agent away: tried again; refused (the job gone): done. */
	return r == -ECONNREFUSED || (r == -ENOENT && !agent_up()) ||
	       r == -ETIMEDOUT ? 0 : 1;
}

static bool
past_half_grace(time_t age)
{
	return age > 0 && (uint64_t)age * 2000000000ull >= config.finish_grace_ns;
}

/* Whether the request NAME is still in the folder. */
static bool
still_asked(const char *name)
{
	struct stat st;

	return fstatat(request_dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* An end request: slurmctld's decided state and metadata given to the
 * agent as the job's end.  1 done, 0 to try again. */

static int
answer_end(uint32_t jobid, const char *name, const char *text, time_t age)
{
	static struct ceems_agent_job_report report;
	const struct ceems_job_meta *known = cache_get(jobid);
	struct ceems_job_meta meta;
	char err[768], *end;
	int r;
	time_t asked = time(NULL);
	/* The run's start as the agent knew it: what slurmctld said at
	 * the start if this process has it, else the agent's. */
	long long run_start = strtoll(text, &end, 10);

	if (end == text || run_start < 0)
		run_start = 0;
	if (known != NULL && known->start_time > 0)
		run_start = known->start_time;

	/* Not decided yet, or no answer: asked again, until half of
	 * finish_grace has gone; then what slurmctld said at the start is
	 * better than what the node knows alone (the state then comes
	 * from the steps' exit status).  A question may wait for
	 * MessageTimeout: the time it took counts. */
	r = known != NULL && past_half_grace(age) ? -1 :
	    ask(jobid, &meta, NULL);
	/* Running, but a run that started after the one that ended here
	 * (its start as slurmctld said it then, else the end request's
	 * time): the job was requeued and runs again, elsewhere or here
	 * before its new run registers.  The run that ended was requeued;
	 * the new run's times and node list are not its own. */
	if (r == 0 && meta.start_time > 0 &&
	    meta.start_time > (run_start > 0 ? run_start : asked - age)) {
		ceems_info("job %u: slurmctld runs it again (started %lld): the run that ended here was requeued",
			   jobid, (long long)meta.start_time);
		if (known != NULL && known->start_time > 0) {
			meta = *known;
		} else {
			/* The run's own start, so that the agent finds
			 * that run and not the new one. */
			meta.start_time = run_start;
			meta.end_time = 0;
			meta.nodes[0] = '\0';
		}
		snprintf(meta.state, sizeof(meta.state), "REQUEUED");
		meta.exit_code = 0;
		meta.exit_signal = 0;
		r = 1;
	}
	age += time(NULL) - asked;
	if (r < 1 && (known == NULL || !past_half_grace(age)))
		return 0;
	if (r < 1) {
		meta = *known;
		ceems_info("job %u: slurmctld did not say how it ended; its metadata from its start given to the node agent",
			   jobid);
	} else if (known != NULL) {
		ceems_job_meta_fill_from(&meta, known);
	}
	if (node != NULL)
		snprintf(meta.node, sizeof(meta.node), "%s", node);
	/* Withdrawn meanwhile: a new run of the job registered. */
	if (!still_asked(name)) {
		ceems_info("job %u: a new run registered; the last run's end goes unanswered",
			   jobid);
		return 1;
	}
	r = ceems_agent_client_end_job(config.socket_path, &meta, "epilog",
				       AGENT_TIMEOUT_MS, &report, err,
				       sizeof(err));
	if (r == 0) {
		ceems_agent_series_free(report.series);
		report.series = NULL;
		if (meta.state[0] != '\0')
			ceems_info("job %u: slurmctld's end (%s) given to the node agent",
				   jobid, meta.state);
		return 1;
	}
	ceems_info("job %u: the node agent did not take slurmctld's end (%s)",
		   jobid, err);
	return (r == -ENOENT && agent_up()) || r == -EINVAL ? 1 : 0;
}

/* Take every request in the folder.  Returns how many wait for another
 * try. */
static int
scan(int dirfd)
{
	static char text[CEEMS_AGENT_MSG_MAX + 1];
	struct dirent *de;
	int pending = 0, fd = dup(dirfd);
	DIR *d;

	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		ceems_error("cannot read the request folder: %s", strerror(errno));
		if (fd >= 0)
			(void)close(fd);
		return 1;
	}
	rewinddir(d);
	silent_this_scan = false;
	while (!got_term && (de = readdir(d)) != NULL) {
		uint32_t jobid;
		int kind = request_kind(de->d_name, &jobid), done;
		time_t age = 0;
		ssize_t n;

		if (kind == 0)
			continue;
		n = read_request(dirfd, de->d_name, text, sizeof(text), &age);
		if (n < 0)
			done = 1;
		else if (kind == 1)
			done = answer_start(jobid, text, (size_t)n);
		else
			done = answer_end(jobid, de->d_name, text, age);
		if (!done && age > GIVE_UP_S) {
			ceems_warning("job %u: slurmctld did not answer for %d s; %s request dropped",
				      jobid, GIVE_UP_S, kind == 1 ? "its start" : "its end");
			done = 1;
		}
		if (done)
			(void)unlinkat(dirfd, de->d_name, 0);
		else
			pending++;
	}
	closedir(d);
	return pending;
}

static int
run(void)
{
	char path[CEEMS_CONFIG_PATH_MAX + 16], events[4096];
	struct pollfd pfd;
	int dirfd, pending;

	dirfd = open_dir(path, sizeof(path));
	if (dirfd < 0)
		return 1;
	request_dir = dirfd;
	pfd.fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	pfd.events = POLLIN;
	if (pfd.fd < 0 ||
	    inotify_add_watch(pfd.fd, path, IN_MOVED_TO | IN_CLOSE_WRITE |
			      IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
		ceems_error("cannot watch %s: %s", path, strerror(errno));
		return 1;
	}
	ceems_info("answering the node agent's requests in %s (socket %s)",
		   path, config.socket_path);
	pending = scan(dirfd);
	while (!got_term) {
		int r = poll(&pfd, 1, pending > 0 ? RETRY_S * 1000 : -1);

		if (r < 0 && errno != EINTR) {
			ceems_error("poll: %s", strerror(errno));
			return 1;
		}
		while (r > 0 && read(pfd.fd, events, sizeof(events)) > 0)
			;	/* drained: the folder says the rest */
		if (!got_term)
			pending = scan(dirfd);
	}
	ceems_info("SIGTERM: exiting");
	return 0;
}

static void
usage(FILE *out)
{
	fprintf(out, "usage: ceems-jobinfo [-c CONFIG] [--node NODE]\n"
		"Ask slurmctld about jobs for the node agent (ceems-jobinfo(8)).\n");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "node", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = CEEMS_DEFAULT_CONFIG_PATH;
	struct sigaction sa;
	char err[512];
	int c;

	ceems_log_set_handler(log_to_stderr, NULL);
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'n': node = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	ceems_conf_defaults(&config);
	if (ceems_conf_load(&config, path, err, sizeof(err)) < 0 &&
	    (errno != ENOENT || strcmp(path, CEEMS_DEFAULT_CONFIG_PATH) != 0)) {
		ceems_error("%s", err);
		return 1;
	}
	if (ceems_conf_expand_node(&config, node, err, sizeof(err)) < 0) {
		ceems_error("%s", err);
		return 1;
	}
	if (geteuid() != 0) {
		ceems_error("must run as root: the node agent takes a job's start and end from root alone");
		return 1;
	}
	cache = calloc(CACHE_JOBS, sizeof(*cache));
	/* Slurm's configuration and its client plugins, before anything is
	 * asked of slurmctld (Slurm 23.11 on fatal()s without them); while
	 * root still has its capabilities, whatever they read. */
	compat_slurm_init();
	ceems_slurm_ctld_quiet(true);
	if (drop_privileges() < 0) {
		ceems_error("cannot drop its capabilities: %s", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	(void)sigaction(SIGTERM, &sa, NULL);
	(void)sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	(void)sigaction(SIGPIPE, &sa, NULL);
	return run();
}
