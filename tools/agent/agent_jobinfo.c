/* agent_jobinfo.c - the agent's requests to ceems-jobinfo
 * (agent_jobinfo.h).  A request is a file written whole under a name
 * ceems-jobinfo skips (".new-"), then renamed to its own name: it sees
 * whole requests only, and one that a restart of it finds still there
 * is taken then.  The folder is root's alone (0700): no other user can
 * put a request there, nor read one. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent_jobinfo.h"
#include "base/fileio.h"
#include "base/log.h"
#include "client/agent_proto.h"

int
agent_jobinfo_open(const struct ceems_config *config)
{
	char path[CEEMS_CONFIG_PATH_MAX + 16];
	struct stat st;
	int fd;

	if (!config->jobinfo)
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", config->state_dir,
		     AGENT_JOBINFO_DIR) >= (int)sizeof(path)) {
		ceems_error("state_dir %s is too long for the jobinfo requests",
			    config->state_dir);
		return -1;
	}
	fd = ceems_fileio_open_made_dir(path, 0700, &st);
	if (fd < 0) {
		ceems_error("cannot create or open %s: %s; the records of jobs have no word of slurmctld at their end",
			    path, strerror(errno));
		return -1;
	}
	/* Made by someone else, or opened up: not trusted to be ours. */
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		ceems_error("%s belongs to uid %u, not root: no jobinfo request is made",
			    path, (unsigned)st.st_uid);
		(void)close(fd);
		return -1;
	}
	if ((st.st_mode & 077) != 0 && fchmod(fd, 0700) < 0) {
		ceems_error("cannot make %s root's alone: %s", path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	return fd;
}

static int
put(int dirfd, const char *kind, uint32_t jobid, const char *text)
{
	char tmp[48], name[32];
	size_t len = text != NULL ? strlen(text) : 0;
	int fd, r = 0;

	snprintf(tmp, sizeof(tmp), ".new-%s-%u", kind, jobid);
	snprintf(name, sizeof(name), "%s-%u", kind, jobid);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		r = -errno;
	else
		r = ceems_fileio_write_all(fd, text, len);
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0) {
		ceems_warning("job %u: cannot ask ceems-jobinfo (%s): %s", jobid,
			      name, strerror(-r));
		if (fd >= 0)
			(void)unlinkat(dirfd, tmp, 0);
	}
	return r;
}

int
agent_jobinfo_ask_start(int dirfd, const struct ceems_agent_job_spec *spec)
{
	struct json_object *obj;
	int r;

	if (dirfd < 0)
		return -EBADF;
	obj = ceems_agent_proto_spec_to_json(spec);
	if (obj == NULL)
		return -ENOMEM;
	r = put(dirfd, "start", spec->jobid,
		json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
	json_object_put(obj);
	return r;
}

int
agent_jobinfo_ask_end(int dirfd, uint32_t jobid, int64_t start_time)
{
	char text[32];

	if (dirfd < 0)
		return -EBADF;
	/* The run's start, so that its end word finds that run and no
	 * later one of the job (requeued). */
	snprintf(text, sizeof(text), "%lld", (long long)start_time);
	return put(dirfd, "end", jobid, text);
}

static void
drop(int dirfd, const char *kind, uint32_t jobid)
{
	char name[32];

	if (dirfd < 0)
		return;
	snprintf(name, sizeof(name), "%s-%u", kind, jobid);
	(void)unlinkat(dirfd, name, 0);
}

void
agent_jobinfo_drop_start(int dirfd, uint32_t jobid)
{
	drop(dirfd, "start", jobid);
}

void
agent_jobinfo_drop_end(int dirfd, uint32_t jobid)
{
	drop(dirfd, "end", jobid);
}
