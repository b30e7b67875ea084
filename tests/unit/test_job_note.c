/* test_job_note.c - where the plugin leaves a note of a job
 * (lib/record/job_note.c): the missing levels of the note folder are created
 * (its parents 0755, the folder root's alone), so that a node where the
 * agent never ran (no spool yet) still gets the note; another user's
 * symbolic link on the way, or a link as the folder itself, is refused.
 * Notes are listed in name order, a bounded batch at a time. */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "record/job_note.h"
#include "../tap.h"

static char root_dir[200];

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static int
write_note(const char *dir, char *err, size_t err_size)
{
	static struct ceems_job_note note;

	memset(&note, 0, sizeof(note));
	ceems_job_meta_init(&note.meta);
	note.meta.jobid = 91;
	note.meta.uid = 1000;
	note.meta.start_time = 1700000000;
	snprintf(note.by, sizeof(note.by), "epilog");
	snprintf(note.why, sizeof(note.why), "the agent was not running");
	return ceems_job_note_write(dir, &note, err, err_size);
}

/* Notes listed in name order, a bounded batch from one reading. */
static void
test_list(void)
{
	static struct ceems_job_note note;
	char dir[300], names[2][CEEMS_NOTE_NAME_MAX], err[512] = "";
	uint32_t ids[] = { 5, 3, 9, 1, 7 };

	snprintf(dir, sizeof(dir), "%s/listed", root_dir);
	memset(&note, 0, sizeof(note));
	ceems_job_meta_init(&note.meta);
	snprintf(note.by, sizeof(note.by), "epilog");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		note.meta.jobid = ids[i];
		if (ceems_job_note_write(dir, &note, err, sizeof(err)) < 0)
			printf("# cannot write a note: %s\n", err);
	}
	is_int(ceems_job_note_list(dir, "", names, 2), 2, "two of five listed");
	ok(strncmp(names[0], "job-1-", 6) == 0 && strncmp(names[1], "job-3-", 6) == 0,
	   "the first two in name order (%s, %s)", names[0], names[1]);
	is_int(ceems_job_note_list(dir, names[1], names, 2), 2, "after them, two more");
	ok(strncmp(names[0], "job-5-", 6) == 0 && strncmp(names[1], "job-7-", 6) == 0,
	   "the next two (%s, %s)", names[0], names[1]);
	is_int(ceems_job_note_list(dir, names[1], names, 2), 1, "then the last");
	ok(strncmp(names[0], "job-9-", 6) == 0, "job 9's (%s)", names[0]);
	snprintf(dir, sizeof(dir), "%s/absent", root_dir);
	is_int(ceems_job_note_list(dir, "", names, 2), 0, "a folder not there: none");
}

static unsigned
mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) < 0 ? 0 : (unsigned)(st.st_mode & 07777);
}

static void
test_missing_levels(void)
{
	char dir[300], path[300], name[CEEMS_NOTE_NAME_MAX], err[512] = "";
	static struct ceems_job_note back;

	snprintf(dir, sizeof(dir), "%s/var/spool/ceems/notes", root_dir);
	ok(write_note(dir, err, sizeof(err)) == 0,
	   "a note is written where no level existed (%s)", err);
	snprintf(path, sizeof(path), "%s/var", root_dir);
	is_int((int)mode_of(path), 0755, "a parent is created 0755");
	snprintf(path, sizeof(path), "%s/var/spool/ceems", root_dir);
	is_int((int)mode_of(path), 0755, "the spool too");
	is_int((int)mode_of(dir), 0700, "the note folder is its owner's alone");
	is_int(ceems_job_note_next(dir, "", name, sizeof(name)), 1, "the note is there");
	ok(ceems_job_note_read(dir, name, &back, err, sizeof(err)) == 0,
	   "and reads back (%s)", err);
	is_int((int)back.meta.jobid, 91, "as job 91's");
	ok(write_note(dir, err, sizeof(err)) == 0,
	   "a second write finds the levels there (%s)", err);
}

/* A link owned by a user other than root on the way to the folder, and
 * a link as the folder itself. */
static void
test_links(void)
{
	char target[240], link[240], dir[300], err[512] = "";

	snprintf(target, sizeof(target), "%s/elsewhere", root_dir);
	mkdir(target, 0755);
	snprintf(link, sizeof(link), "%s/users-link", root_dir);
	if (symlink(target, link) < 0) {
		printf("Bail out! symlink %s: %s\n", link, strerror(errno));
		exit(1);
	}
	if (geteuid() == 0 && lchown(link, 65534, 65534) < 0) {
		printf("ok %d # SKIP cannot give the link to another user: %s\n",
		       ++tap_count, strerror(errno));
	} else {
		snprintf(dir, sizeof(dir), "%s/notes", link);
		ok(write_note(dir, err, sizeof(err)) == -ELOOP,
		   "a user's link on the way is refused (%s)", err);
		snprintf(dir, sizeof(dir), "%s/notes", target);
		is_int((int)mode_of(dir), 0, "nothing was created through it");
	}
	snprintf(link, sizeof(link), "%s/roots-link", root_dir);
	if (geteuid() == 0 && symlink(target, link) == 0) {
		snprintf(dir, sizeof(dir), "%s/notes", link);
		ok(write_note(dir, err, sizeof(err)) == 0,
		   "root's link on the way is followed, as /var/run (%s)", err);
	} else
		printf("ok %d # SKIP root's links are followed: not root here\n",
		       ++tap_count);
	snprintf(dir, sizeof(dir), "%s/notes-link", root_dir);
	if (symlink(target, dir) < 0) {
		printf("Bail out! symlink %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	ok(write_note(dir, err, sizeof(err)) == -ELOOP,
	   "a link as the note folder is refused (%s)", err);
}

int
main(void)
{
	snprintf(root_dir, sizeof(root_dir), "%s/ceems-test-note-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root_dir) == NULL) {
		printf("Bail out! mkdtemp %s: %s\n", root_dir, strerror(errno));
		return 1;
	}
	umask(022);
	test_missing_levels();
	test_links();
	test_list();
	nftw(root_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
