/* agent_server_notes.c - when the node agent reads the job note folder
 * (lib/record/job_note.h: the plugin's word on jobs whose end the agent
 * was not told).  Notes are rare and the folder is read at a tick's end;
 * reading it at every tick of an idle node would be a path walk and a
 * directory listing a second for nothing.  An inotify watch on the folder
 * says when a note arrived; the folder is read at the next tick's end
 * after that, at every tick while a read fails or leaves notes behind,
 * and with every checkpoint whatever the watch says (a folder replaced
 * by another of its name sends the old watch nothing).  Without a watch
 * (no inotify, the folder missing or removed) it is read at every tick,
 * as it would be without this file, and the watch tried again each
 * time. */
#include "config.h"

#include <sys/inotify.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent_replay.h"
#include "agent_server_internal.h"
#include "base/log.h"
#include "record/job_note.h"

/* What tells that a note may have arrived, or that the watch is gone. */
#define NOTE_EVENTS (IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | \
		     IN_MOVE_SELF | IN_ONLYDIR)

int
agent_server_notes_open(struct server *s)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	int r;

	s->notes_pending = true;
	s->notes_wd = -1;
	if (fd < 0) {
		ceems_info("no inotify (%s): the job note folder is read at "
			   "every tick", strerror(errno));
		return 0;
	}
	r = agent_server_watch_add(s, &s->notes, W_NOTES, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return 0;
}

/* Watch the folder if not watched yet; whether it is now. */
static bool
watch_folder(struct server *s)
{
	char dir[CEEMS_CONFIG_PATH_MAX + 8];

	if (s->notes_wd >= 0)
		return true;
	if (s->notes.fd < 0 || ceems_job_note_dir(s->config, dir, sizeof(dir)) < 0)
		return false;
	s->notes_wd = inotify_add_watch(s->notes.fd, dir, NOTE_EVENTS);
	if (s->notes_wd < 0)
		return false;
	/* What came before the watch is read once. */
	s->notes_pending = true;
	return true;
}

void
agent_server_notes_on_event(struct server *s)
{
	/* Events are read whole: the buffer holds at least one. */
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;

	while ((n = read(s->notes.fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			/* The folder removed or renamed: its watch is
			 * gone, and the folder read at every tick until
			 * one is set again. */
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
				if (ev->wd == s->notes_wd && !(ev->mask & IN_IGNORED))
					(void)inotify_rm_watch(s->notes.fd, ev->wd);
				if (ev->wd == s->notes_wd)
					s->notes_wd = -1;
			}
			p += sizeof(*ev) + ev->len;
		}
		s->notes_pending = true;
	}
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		ceems_warning("job note folder watch: %s: read at every tick",
			      strerror(errno));
		s->notes_wd = -1;
		s->notes_pending = true;
	}
}

/* A folder that cannot be read is said once, until it can. */
int
agent_server_notes_take(struct server *s, uint64_t now)
{
	char dir[CEEMS_CONFIG_PATH_MAX + 8];
	int r;

	/* The watch first: a note that comes during the read below is
	 * then seen at the next tick, not missed. */
	if (watch_folder(s) && !s->notes_pending)
		return 0;
	s->notes_pending = false;
	r = ceems_agent_end_take_notes(s->agent, now);
	if (r < 0 || ceems_agent_end_notes_left(s->agent))
		s->notes_pending = true;
	if (r > 0)
		agent_replay_wake(s->replay);
	if (r < 0 && !s->notes_failing) {
		if (ceems_job_note_dir(s->config, dir, sizeof(dir)) < 0)
			snprintf(dir, sizeof(dir), "(the note folder)");
		ceems_error("cannot read the job notes in %s: %s; the jobs they "
			    "name get no record until it can be read (check its "
			    "owner, root, and mode 0700)", dir, strerror(-r));
	} else if (r >= 0 && s->notes_failing)
		ceems_info("the job notes can be read again");
	s->notes_failing = r < 0;
	return r;
}
