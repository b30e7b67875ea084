/* test_agent_jobinfo.c - the agent's requests to ceems-jobinfo
 * (tools/agent/agent_jobinfo.c): the folder made root's alone, another
 * user's refused, requests written whole under their names (an end
 * request holding its run's start), a start request withdrawn, a link in the folder never followed. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent/agent_jobinfo.h"
#include "base/conf.h"
#include "client/agent_proto.h"
#include "../tap.h"

static char top[] = "/tmp/ceems-test-jobinfo.XXXXXX";

static struct ceems_config config;

static const char *
path(const char *name)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "%s/%s%s%s", top, AGENT_JOBINFO_DIR,
		 name[0] != '\0' ? "/" : "", name);
	return buf;
}

/* The whole of a small file, "" when it cannot be read. */
static const char *
slurp(const char *file)
{
	static char buf[256];
	FILE *f = fopen(file, "re");
	size_t n = 0;

	if (f != NULL) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static void
test_folder(void)
{
	struct stat st;
	int fd;

	config.jobinfo = false;
	ok(agent_jobinfo_open(&config) == -1, "jobinfo = no: no folder");
	ok(stat(path(""), &st) < 0, "and none made");
	config.jobinfo = true;
	fd = agent_jobinfo_open(&config);
	ok(fd >= 0, "made and opened");
	ok(stat(path(""), &st) == 0 && (st.st_mode & 0777) == 0700,
	   "mode 0700");
	close(fd);
	ok(chmod(path(""), 0755) == 0, "opened up");
	fd = agent_jobinfo_open(&config);
	ok(fd >= 0 && stat(path(""), &st) == 0 && (st.st_mode & 0777) == 0700,
	   "made root's alone again");
	close(fd);
	if (geteuid() == 0) {
		ok(chown(path(""), 65534, 65534) == 0, "given to nobody");
		ok(agent_jobinfo_open(&config) == -1, "another user's: refused");
		ok(chown(path(""), 0, 0) == 0, "given back");
	}
}

static void
test_requests(void)
{
	struct ceems_agent_job_spec spec, back;
	struct json_object *obj;
	char text[4096], err[256];
	struct stat st;
	ssize_t n;
	int dir = agent_jobinfo_open(&config), fd;

	memset(&spec, 0, sizeof(spec));
	spec.jobid = 4294967295u;
	spec.uid = 1000;
	spec.cgroup.version = 1;
	snprintf(spec.cgroup.v1[0], sizeof(spec.cgroup.v1[0]),
		 "/slurm/uid_1000/job_4294967295");
	ok(agent_jobinfo_ask_start(dir, &spec) == 0, "a start request");
	fd = open(path("start-4294967295"), O_RDONLY | O_NOFOLLOW);
	n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	ok(n > 0, "written under its name");
	text[n > 0 ? n : 0] = '\0';
	ok(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600,
	   "mode 0600");
	if (fd >= 0)
		close(fd);
	obj = json_tokener_parse(text);
	memset(&back, 0, sizeof(back));
	ok(obj != NULL && ceems_agent_proto_spec_from_json(obj, &back, err,
							   sizeof(err)) == 0 &&
	   back.jobid == spec.jobid && back.uid == 1000 &&
	   strcmp(back.cgroup.v1[0], spec.cgroup.v1[0]) == 0,
	   "it holds the job's registration");
	json_object_put(obj);
	ok(access(path(".new-start-4294967295"), F_OK) < 0,
	   "nothing left under the name being written");
	agent_jobinfo_drop_start(dir, spec.jobid);
	ok(access(path("start-4294967295"), F_OK) < 0, "withdrawn");
	/* A link where the request goes: replaced, never followed. */
	ok(symlink("/etc/passwd-not-here", path(".new-end-7")) == 0 &&
	   agent_jobinfo_ask_end(dir, 7, 0) < 0 &&
	   access("/etc/passwd-not-here", F_OK) < 0,
	   "a link under the name being written: refused, not followed");
	unlink(path(".new-end-7"));
	ok(agent_jobinfo_ask_end(dir, 7, 1700000123) == 0 &&
	   stat(path("end-7"), &st) == 0 && S_ISREG(st.st_mode),
	   "an end request: a file");
	is_str(slurp(path("end-7")), "1700000123", "holding the run's start");
	agent_jobinfo_drop_end(dir, 7);
	ok(access(path("end-7"), F_OK) < 0, "an end request withdrawn (a new run)");
	ok(agent_jobinfo_ask_end(-1, 8, 0) == -EBADF, "no folder: no request");
	close(dir);
}

int
main(void)
{
	char cmd[600];

	if (mkdtemp(top) == NULL)
		return 1;
	ceems_conf_defaults(&config);
	snprintf(config.state_dir, sizeof(config.state_dir), "%s", top);
	test_folder();
	test_requests();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("# cannot remove %s\n", top);
	return done_testing();
}
