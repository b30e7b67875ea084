/* test_energy_plugin.c - the Slurm-free parts of the acct_gather_energy/ceems
 * plugin (plugins/acct_gather_energy/): on which node a slurmstepd is (the agent's socket holding its name), a
 * step's joules in the agent's report (the extern step's being the job's),
 * the node's joules in the agent's status, the reading kept between polls,
 * a call to an agent that never answers, bounded in time, and to one that
 * answers with the job but not yet the step. */
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

#include "../tap.h"
#include "energy_reading.h"
#include "energy_source.h"

static void
test_daemon(void)
{
	is_int(ceems_energy_source_daemon_of("slurmd"), CEEMS_ENERGY_SLURMD,
	       "slurmd is slurmd");
	is_int(ceems_energy_source_daemon_of("slurmstepd"),
	       CEEMS_ENERGY_SLURMSTEPD, "slurmstepd is slurmstepd");
	is_int(ceems_energy_source_daemon_of("slurmctld"), CEEMS_ENERGY_OTHER,
	       "slurmctld gives no figures");
}

/* A slurmstepd of a multiple-slurmd build finds its node in its cgroup
 * (v1 and v2 layouts), and the agent's socket takes it for %n; one of a
 * one-slurmd build finds none. */
static void
test_node(void)
{
	char v1[] = "12:name=systemd:/system.slice/slurmd-n2.service\n"
		    "4:cpuacct,cpu:/slurm_n2/uid_65534/job_42/step_0\n"
		    "3:memory:/slurm_n2/uid_65534/job_42/step_0\n";
	char v2[] = "0::/system.slice/n3_slurmstepd.scope/job_7/step_extern/slurm\n";
	char one[] = "4:cpuacct,cpu:/slurm/uid_65534/job_9/step_batch\n";
	char none[] = "0::/system.slice/slurmd.service\n";
	char node[CEEMS_NODE_NAME_MAX] = "x", step[CEEMS_STEP_ID_MAX];
	char path[256], err[256];
	uint32_t id = 0;

	ok(ceems_energy_source_step_from_cgroups(v1, &id, step, sizeof(step),
						 node, sizeof(node)) == 0 &&
		   id == 42 && strcmp(step, "0") == 0,
	   "v1 multiple-slurmd cgroups: job 42, step 0");
	is_str(node, "n2", "v1: node n2 from /slurm_n2, not slurmd's unit");
	ok(ceems_energy_source_step_from_cgroups(v2, &id, step, sizeof(step),
						 node, sizeof(node)) == 0 &&
		   id == 7 && strcmp(step, "extern") == 0,
	   "v2 multiple-slurmd cgroup: job 7, step extern");
	is_str(node, "n3", "v2: node n3 from n3_slurmstepd.scope");
	ok(ceems_energy_source_step_from_cgroups(one, &id, step, sizeof(step),
						 node, sizeof(node)) == 0 &&
		   id == 9 && node[0] == '\0',
	   "one-slurmd cgroup: job 9, no node");
	is_int(ceems_energy_source_step_from_cgroups(none, &id, step,
						     sizeof(step), node,
						     sizeof(node)),
	       -EINVAL, "no step line: no step");

	is_int(ceems_energy_source_socket("/run/ceems/%n/agent.sock", "n2", path,
					  sizeof(path), err, sizeof(err)),
	       0, "a socket with %n and a node");
	is_str(path, "/run/ceems/n2/agent.sock", "%n is the node");
	is_int(ceems_energy_source_socket("/run/ceems/agent.sock", NULL, path,
					  sizeof(path), err, sizeof(err)),
	       0, "a socket without %n needs no node");
	is_str(path, "/run/ceems/agent.sock", "it is kept as it is");
	is_int(ceems_energy_source_socket("/run/ceems/%n.sock", NULL, path,
					  sizeof(path), err, sizeof(err)),
	       -EINVAL, "%n with no node known is refused");
	ok(strstr(err, "%n") != NULL, "and says so: %s", err);
	is_int(ceems_energy_source_socket("/run/%n.sock", "..", path,
					  sizeof(path), err, sizeof(err)),
	       -EINVAL, "a node name that climbs out of the folder is refused");
}

static void
test_step_joules(void)
{
	static struct ceems_agent_job_report r;
	double j = -1;

	memset(&r, 0, sizeof(r));
	r.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	r.ledger.measured[CEEMS_DOMAIN_DRAM] = true;
	r.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 500;
	r.ledger.joules[CEEMS_DOMAIN_DRAM] = 20;
	r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 10;
	r.ledger.covered_s[CEEMS_DOMAIN_DRAM] = 10;
	r.ledger.lifetime_s = 10;
	r.nsteps = 3;
	snprintf(r.steps[0].id, sizeof(r.steps[0].id), "batch");
	r.steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] = true;
	r.steps[0].joules[CEEMS_DOMAIN_PACKAGE] = 3;
	snprintf(r.steps[1].id, sizeof(r.steps[1].id), "0");
	r.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] = true;
	r.steps[1].joules[CEEMS_DOMAIN_PACKAGE] = 400;
	r.steps[1].have_joules[CEEMS_DOMAIN_DRAM] = true;
	r.steps[1].joules[CEEMS_DOMAIN_DRAM] = 15;
	snprintf(r.steps[2].id, sizeof(r.steps[2].id), "extern");

	ok(ceems_energy_source_step_joules(&r, "0", &j) == 0 && j == 415,
	   "step 0: its joules over every domain (415 J)");
	ok(ceems_energy_source_step_joules(&r, "batch", &j) == 0 && j == 3,
	   "batch: its own 3 J");
	ok(ceems_energy_source_step_joules(&r, "extern", &j) == 0 && j == 520,
	   "extern: the job's whole share, 520 J");
	ok(ceems_energy_source_step_joules(&r, "1", &j) == -ENOENT,
	   "a step the agent does not know has no figure");
	r.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] = false;
	r.steps[1].have_joules[CEEMS_DOMAIN_DRAM] = false;
	ok(ceems_energy_source_step_joules(&r, "0", &j) == -ENOENT,
	   "a step measured in no domain has no figure (not 0 J)");
	memset(&r.ledger, 0, sizeof(r.ledger));
	ok(ceems_energy_source_step_joules(&r, "extern", &j) == -ENOENT,
	   "a job without energy gives the extern step no figure");
}

static void
test_node_joules(void)
{
	double j = 0;
	long pid = 0;

	ok(ceems_energy_source_node_joules(
		   "{\"ok\":true,\"pid\":77,\"energy\":{\"package\":{\"delta_j\":100.5,"
		   "\"system_j\":1},\"dram\":{\"delta_j\":9.5},\"node\":{\"delta_j\":10}}}",
		   &j, &pid) == 0 && j == 120 && pid == 77,
	   "status: the node's joules over every domain and the agent's pid");
	ok(ceems_energy_source_node_joules("{\"ok\":true,\"energy\":{}}", &j,
					   &pid) == -EPROTO,
	   "a status without pid is refused");
	ok(ceems_energy_source_node_joules(
		   "{\"ok\":true,\"pid\":1,\"energy\":{\"package\":{}}}", &j,
		   &pid) == -EPROTO,
	   "a domain without delta_j is refused");
	ok(ceems_energy_source_node_joules("{\"ok\":false,\"error\":\"x\"}", &j,
					   &pid) == -EPROTO,
	   "a refusal is no figure");
	ok(ceems_energy_source_node_joules("not json", &j, &pid) == -EPROTO,
	   "text that is not JSON is refused");
}

static void
test_reading(void)
{
	struct ceems_energy_reading r;

	ceems_energy_reading_init(&r);
	ok(!r.known, "nothing read: unknown, not 0 J");
	ok(ceems_energy_reading_silent(&r), "the first silence is logged");
	ok(!ceems_energy_reading_silent(&r), "the next is not");
	ok(!r.known, "a silence invents nothing");
	ceems_energy_reading_step(&r, 10, 100.0);
	ceems_energy_reading_step(&r, 60, 102.0);
	ok(r.known && r.joules == 60, "cumulative joules kept");
	is_near(r.watts, 25, 1e-9, "power between the two readings: 25 W");
	is_near(r.ave_watts, 30, 1e-9, "average over the time since the first: 30 W");
	ceems_energy_reading_step(&r, 50, 103.0);
	ok(r.joules == 60, "a step's energy never goes back");

	ceems_energy_reading_init(&r);
	ceems_energy_reading_node(&r, 1000, 7, 10.0);
	ok(r.known && r.joules == 0, "the node counts from the first reading");
	ceems_energy_reading_node(&r, 1100, 7, 12.0);
	ok(r.joules == 100, "the agent's delta is added (100 J)");
	is_near(r.watts, 50, 1e-9, "node power 50 W");
	ceems_energy_reading_node(&r, 30, 8, 13.0);
	ok(r.joules == 130, "a restarted agent adds what it measured since (got %g)",
	   r.joules);
	ceems_energy_reading_node(&r, 20, 8, 14.0);
	ok(r.joules == 150, "a figure that went back counts as a new agent's (got %g)",
	   r.joules);
}

/* An agent that takes the connection and never answers: the call
 * returns within a few times its timeout. */
static void
test_bounded(void)
{
	static struct ceems_energy_source_agent src;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test_energy_plugin.XXXXXX";
	char err[256] = "";
	struct timespec t0, t1;
	double j, ms;
	long pid;
	int fd, rc;

	if (mkdtemp(dir) == NULL) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	memset(&src, 0, sizeof(src));
	snprintf(src.socket_path, sizeof(src.socket_path), "%s/agent.sock", dir);
	snprintf(src.step, sizeof(src.step), "batch");
	src.jobid = 5;
	ok(ceems_energy_source_read_step(&src, &j, err, sizeof(err)) == -ENOENT,
	   "no agent: -ENOENT at once (%s)", err);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (strlen(src.socket_path) >= sizeof(sa.sun_path)) {
		ok(false, "socket path too long: %s", src.socket_path);
		return;
	}
	memcpy(sa.sun_path, src.socket_path, strlen(src.socket_path) + 1);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(fd, 4) != 0) {
		ok(false, "a silent agent's socket: %s", strerror(errno));
	} else {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = ceems_energy_source_read_node(&src, &j, &pid, err,
						   sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		ok(rc < 0, "a silent agent gives no figure (%s)", err);
		ok(ms < 4 * CEEMS_ENERGY_SOURCE_TIMEOUT_MS,
		   "and the call returns in %.1f ms (limit %d ms)", ms,
		   CEEMS_ENERGY_SOURCE_TIMEOUT_MS);
	}
	if (fd >= 0)
		close(fd);
	unlink(src.socket_path);
	rmdir(dir);
}

/* An agent that answers one request with REPLY. */
struct one_reply {
	int fd;
	const char *reply;
};

static void *
answer_once(void *arg)
{
	const struct one_reply *o = arg;
	char buf[4096];
	int c = accept(o->fd, NULL, NULL);

	if (c >= 0) {
		if (recv(c, buf, sizeof(buf), 0) > 0)
			(void)send(c, o->reply, strlen(o->reply), MSG_NOSIGNAL);
		close(c);
	}
	return NULL;
}

/* An agent that knows the job but not the step yet: -ENODATA (the plugin
 * logs no silence), then one with the step's figure. */
static void
test_answers(void)
{
	static struct ceems_energy_source_agent src;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test_energy_plugin.XXXXXX";
	char err[256] = "";
	struct one_reply o;
	pthread_t t;
	double j = -1;
	int rc;

	if (mkdtemp(dir) == NULL) {
		ok(false, "mkdtemp: %s", strerror(errno));
		return;
	}
	memset(&src, 0, sizeof(src));
	snprintf(src.socket_path, sizeof(src.socket_path), "%s/agent.sock", dir);
	snprintf(src.step, sizeof(src.step), "0");
	src.jobid = 5;
	memcpy(sa.sun_path, src.socket_path, strlen(src.socket_path) + 1);
	o.fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (o.fd < 0 || bind(o.fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(o.fd, 4) != 0) {
		ok(false, "an agent's socket: %s", strerror(errno));
		goto out;
	}
	o.reply = "{\"ok\":true,\"report\":{\"jobid\":5,\"uid\":0,"
		  "\"elapsed_s\":1,\"gap_s\":0,\"cgroup_gone\":false,"
		  "\"usage\":{},\"ledger\":{\"lifetime_s\":1},\"steps\":[]}}";
	pthread_create(&t, NULL, answer_once, &o);
	rc = ceems_energy_source_read_step(&src, &j, err, sizeof(err));
	pthread_join(t, NULL);
	ok(rc == -ENODATA, "a job whose step has no figure yet: -ENODATA (%d: %s)",
	   rc, err);
	o.reply = "{\"ok\":true,\"report\":{\"jobid\":5,\"uid\":0,"
		  "\"elapsed_s\":1,\"gap_s\":0,\"cgroup_gone\":false,"
		  "\"usage\":{},\"ledger\":{\"lifetime_s\":1},\"steps\":"
		  "[{\"id\":\"0\",\"ended\":false,\"elapsed_s\":1,"
		  "\"joules\":{\"package\":12.5,\"dram\":0.5}}]}}";
	pthread_create(&t, NULL, answer_once, &o);
	rc = ceems_energy_source_read_step(&src, &j, err, sizeof(err));
	pthread_join(t, NULL);
	ok(rc == 0 && j == 13, "the step's figure from the agent's report: 13 J (%d: %s)",
	   rc, err);
out:
	if (o.fd >= 0)
		close(o.fd);
	unlink(src.socket_path);
	rmdir(dir);
}

int
main(void)
{
	test_daemon();
	test_node();
	test_step_joules();
	test_node_joules();
	test_reading();
	test_bounded();
	test_answers();
	return done_testing();
}
