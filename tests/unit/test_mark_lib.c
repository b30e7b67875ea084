/* test_mark_lib.c - libceems_mark (ceems_mark.h), the job's side of
 * marks, against a socket served here: every message it sends is the
 * agent's own decoder's to judge (ceems_agent_proto_request_decode),
 * marks made in a loop reach the socket once a second summed, exactly,
 * a flush sends what is held, refusals come back as the errno and the
 * sentence the agent gave, and bad input never leaves the process. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "client/agent_proto.h"
#include "mark/ceems_mark.h"
#include "../tap.h"

/* What the server saw and how it answers, under LOCK. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct ceems_agent_request got[64];
static int ngot, nbad;
static const char *answer = "{\"ok\":true}";
/* Answer a mark with a tag as an agent older than tags does. */
static int refuse_tags;
static int listen_fd;
static char sock_path[108];

static void *
serve(void *arg)
{
	(void)arg;
	for (;;) {
		char buf[1024], err[256];
		struct ceems_agent_request req;
		int fd = accept(listen_fd, NULL, NULL);
		ssize_t n;

		if (fd < 0)
			return NULL;
		n = recv(fd, buf, sizeof(buf), 0);
		pthread_mutex_lock(&lock);
		if (n > 0 && ceems_agent_proto_request_decode(buf, (size_t)n, &req,
							      err, sizeof(err)) == 0 &&
		    refuse_tags && req.mark_tag[0] != '\0') {
			static const char old[] = "{\"ok\":false,\"error\":\"request: "
				"unknown key tag\",\"code\":\"EINVAL\"}";

			send(fd, old, strlen(old), MSG_NOSIGNAL);
			pthread_mutex_unlock(&lock);
			close(fd);
			continue;
		}
		if (n > 0 && ceems_agent_proto_request_decode(buf, (size_t)n, &req,
							      err, sizeof(err)) == 0 &&
		    ngot < 64)
			got[ngot++] = req;
		else
			nbad++;
		send(fd, answer, strlen(answer), MSG_NOSIGNAL);
		pthread_mutex_unlock(&lock);
		close(fd);
	}
}

static int
received(void)
{
	int n;

	pthread_mutex_lock(&lock);
	n = ngot;
	pthread_mutex_unlock(&lock);
	return n;
}

static void
answer_with(const char *text)
{
	pthread_mutex_lock(&lock);
	answer = text;
	pthread_mutex_unlock(&lock);
}

int
main(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/ceems-test-mark-XXXXXX";
	pthread_t server;
	int r;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(sock_path, sizeof(sock_path), "%s/agent.sock", dir);
	memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
	listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listen_fd, 16) < 0 || pthread_create(&server, NULL, serve, NULL) != 0) {
		printf("Bail out! cannot serve a socket at %s\n", sock_path);
		return 1;
	}
	setenv("CEEMS_AGENT_SOCKET", sock_path, 1);

	unsetenv("SLURM_JOB_ID");
	is_int(ceems_mark_add("steps", "timesteps", 1), -ENOENT,
	       "outside a job a mark is ENOENT");
	ok(strstr(ceems_mark_error(), "SLURM_JOB_ID") != NULL,
	   "saying why: %s", ceems_mark_error());
	is_int(received(), 0, "and nothing is sent");

	setenv("SLURM_JOB_ID", "4242", 1);
	is_int(ceems_mark_add("steps", "timesteps", 1), 0, "the first mark is taken");
	is_int(received(), 1, "and sent at once");
	for (int i = 0; i < 100000; i++)
		(void)ceems_mark_add("steps", "timesteps", 1);
	is_int(received(), 1, "100000 more within the second are held, not sent");
	is_int(ceems_mark_flush(), 0, "a flush sends them");
	is_int(received(), 2, "in one message");
	ok(got[0].op == CEEMS_AGENT_OP_MARK && got[0].jobid == 4242 &&
	   strcmp(got[0].mark_name, "steps") == 0 &&
	   strcmp(got[0].mark_unit, "timesteps") == 0 &&
	   got[0].mark_mode == CEEMS_MARKS_ADD && got[0].mark_value == 1,
	   "the agent's decoder reads the first as the job's increment");
	is_near(got[0].mark_value + got[1].mark_value, 100001, 0,
		"the increments sent add up to every mark made");
	is_int(ceems_mark_flush(), 0, "a flush with nothing held");
	is_int(received(), 2, "sends nothing");

	is_int(ceems_mark_set("ns", "ns_simulated", 2.5), 0, "a cumulative mark");
	is_int(ceems_mark_set("ns", "ns_simulated", 2), -EINVAL,
	       "one going down is refused here");
	is_int(ceems_mark_add("ns", "ns_simulated", 1), -EINVAL,
	       "as is an add to a set counter");
	is_int(ceems_mark_add("bad name", "x", 1), -EINVAL, "a bad name is refused");
	is_int(ceems_mark_add("x", "y", -1), -EINVAL, "a negative value too");
	is_int(received(), 3, "no refused mark was sent");
	ok(got[2].mark_mode == CEEMS_MARKS_SET && got[2].mark_value == 2.5,
	   "the set went as a set");

	answer_with("{\"ok\":false,\"error\":\"mark of job 4242: the caller is "
		    "not a process of job 4242\",\"code\":\"EPERM\"}");
	r = ceems_mark_add("other", "units", 3);
	is_int(r, -EPERM, "the agent's refusal comes back as its errno");
	ok(strstr(ceems_mark_error(), "not a process of job") != NULL,
	   "with its sentence: %s", ceems_mark_error());
	is_int(ceems_mark_flush(), 0, "a refused mark is not held for later");

	answer_with("{\"ok\":false,\"error\":\"busy\",\"code\":\"EBUSY\"}");
	is_int(ceems_mark_add("busy", "units", 5), -EBUSY, "a busy agent is EBUSY");
	answer_with("{\"ok\":true}");
	is_int(ceems_mark_flush(), 0, "and what was held goes at the flush");
	ok(received() >= 6 && got[received() - 1].mark_value == 5,
	   "whole (%d messages)", received());

	is_int(ceems_mark_tag("bad tag"), -EINVAL, "a tag with a space is refused");
	is_int(ceems_mark_tag("lammps"), 0, "a tag is taken");
	is_int(ceems_mark_add("tagged", "units", 2), 0, "and a mark after it");
	ok(received() >= 7 && strcmp(got[received() - 1].mark_tag, "lammps") == 0 &&
	   strcmp(got[received() - 1].mark_name, "tagged") == 0,
	   "goes with the tag (%s)", got[received() - 1].mark_tag);
	pthread_mutex_lock(&lock);
	refuse_tags = 1;
	pthread_mutex_unlock(&lock);
	is_int(ceems_mark_add("older", "units", 4), 0,
	       "an agent older than tags refuses the tag: the mark is taken without it");
	ok(strcmp(got[received() - 1].mark_name, "older") == 0 &&
	   got[received() - 1].mark_tag[0] == '\0' && got[received() - 1].mark_value == 4,
	   "its work whole, without the tag");
	pthread_mutex_lock(&lock);
	refuse_tags = 0;
	pthread_mutex_unlock(&lock);
	is_int(ceems_mark_tag(NULL), 0, "no tag again");
	ok(ceems_mark_add("untagged", "units", 1) == 0 &&
	   got[received() - 1].mark_tag[0] == '\0' &&
	   strcmp(got[received() - 1].mark_name, "untagged") == 0,
	   "then marks go without one");

	setenv("CEEMS_AGENT_SOCKET", "/nonexistent/agent.sock", 1);
	is_int(ceems_mark_add("away", "units", 1), -ECONNREFUSED,
	       "no agent is ECONNREFUSED, and the process goes on");
	close(listen_fd);
	unlink(sock_path);
	rmdir(dir);
	return done_testing();
}
