/* job_note.c - notes of jobs whose end the node agent was not told
 * (job_note.h): written by the job-side plugin as root, read by the
 * agent.  The folder is root's alone; files are opened with O_NOFOLLOW
 * and O_CLOEXEC, relative to the folder's own descriptor, so that no
 * path a user controls is followed. */
#include "config.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/fileio.h"
#include "model/job.h"
#include "record/job_note.h"
#include "base/json_util.h"

int
ceems_job_note_dir(const struct ceems_config *config, char *dir, size_t size)
{
	int n = config->note_dir[0] != '\0' ?
		snprintf(dir, size, "%s", config->note_dir) :
		snprintf(dir, size, "%s/notes", config->spool_dir);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int
ceems_job_note_encode(const struct ceems_job_note *note, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	const char *text;
	size_t len;
	bool ok = obj != NULL;

	if (obj == NULL)
		return -ENOMEM;
	ceems_json_util_add(obj, "format", json_object_new_string(CEEMS_NOTE_FORMAT), &ok);
	ceems_json_util_add(obj, "by", json_object_new_string(note->by), &ok);
	ceems_json_util_add(obj, "why", json_object_new_string(note->why), &ok);
	ceems_json_util_add(obj, "job", ceems_job_json_meta_to_json(&note->meta), &ok);
	text = ok ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						 JSON_C_TO_STRING_NOSLASHESCAPE) :
		    NULL;
	if (text == NULL) {
		json_object_put(obj);
		return -ENOMEM;
	}
	len = strlen(text);
	if (len + 1 > size || len > CEEMS_NOTE_MAX) {
		json_object_put(obj);
		return -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	json_object_put(obj);
	return (int)len;
}

int
ceems_job_note_decode(const char *buf, size_t len, struct ceems_job_note *note,
		  char *err, size_t err_size)
{
	static const char *const known[] = { "format", "by", "why", "job", NULL };
	struct json_object *obj, *val;
	char format[32];
	int r = -EINVAL;

	if (len > CEEMS_NOTE_MAX)
		return ceems_json_util_error(err, err_size, "note is larger than %d bytes",
					CEEMS_NOTE_MAX);
	obj = ceems_json_util_parse(buf, len, true, err, err_size);
	if (obj == NULL)
		return -EINVAL;
	memset(note, 0, sizeof(*note));
	if (!json_object_is_type(obj, json_type_object)) {
		ceems_json_util_error(err, err_size, "note must be a JSON object");
		goto out;
	}
	if ((r = ceems_json_util_check_keys(obj, "note", known, err, err_size)) < 0)
		goto out;
	r = -EINVAL;
	if ((val = ceems_json_util_get(obj, "format")) == NULL ||
	    ceems_json_util_read_string(val, "format", format, sizeof(format), err,
				   err_size) < 0 ||
	    strcmp(format, CEEMS_NOTE_FORMAT) != 0) {
		ceems_json_util_error(err, err_size, "note: \"format\" must be \"%s\"",
				 CEEMS_NOTE_FORMAT);
		goto out;
	}
	if ((val = ceems_json_util_get(obj, "by")) == NULL ||
	    ceems_json_util_read_string(val, "by", note->by, sizeof(note->by), err,
				   err_size) < 0 ||
	    (strcmp(note->by, "extern") != 0 && strcmp(note->by, "epilog") != 0)) {
		ceems_json_util_error(err, err_size, "note: \"by\" must be \"extern\" or \"epilog\"");
		goto out;
	}
	if ((val = ceems_json_util_get(obj, "why")) == NULL ||
	    ceems_json_util_read_string(val, "why", note->why, sizeof(note->why), err,
				   err_size) < 0) {
		if (val == NULL)
			ceems_json_util_error(err, err_size, "note needs \"why\"");
		goto out;
	}
	if ((val = ceems_json_util_get(obj, "job")) == NULL) {
		ceems_json_util_error(err, err_size, "note needs \"job\"");
		goto out;
	}
	if ((r = ceems_job_json_meta_from_json(val, &note->meta, err, err_size)) < 0)
		goto out;
	r = -EINVAL;
	if (note->meta.jobid == 0) {
		ceems_json_util_error(err, err_size, "note: the job has no id");
		goto out;
	}
	r = 0;
out:
	json_object_put(obj);
	return r;
}

/* Open level NAME of AT (a folder descriptor), creating it with MODE
 * when missing.  A symbolic link is followed only when FOLLOW_ROOTS and
 * root owns it (a system's own, such as /var/run): another user's could
 * send root's note anywhere. */
static int
open_level(int at, const char *name, mode_t mode, bool follow_roots)
{
	struct stat st;
	int fd;

	if (mkdirat(at, name, mode) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 || (errno != ELOOP && errno != ENOTDIR))
		return fd >= 0 ? fd : -errno;
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -ENOTDIR;
	if (st.st_uid != 0 || !follow_roots)
		return -ELOOP;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 ? fd : -errno;
}

/* Open DIR level by level from the root (or the working folder), each
 * missing one created: 0755 (the spool's parents, on a node where the
 * agent never ran), DIR itself 0700 and never a symbolic link. */
static int
make_dir(const char *dir, char *err, size_t err_size)
{
	char level[CEEMS_CONFIG_PATH_MAX + 8];
	const char *p = dir;
	int at = dir[0] == '/' ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
		 open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (at < 0)
		return -errno;
	while (*p != '\0') {
		size_t len;
		int fd;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len >= sizeof(level)) {
			close(at);
			return -ENAMETOOLONG;
		}
		memcpy(level, p, len);
		level[len] = '\0';
		p += len;
		while (*p == '/')
			p++;
		fd = open_level(at, level, *p == '\0' ? 0700 : 0755,
				*p != '\0');
		close(at);
		if (fd < 0) {
			snprintf(err, err_size, "cannot create or open %s (at %s): "
				 "%s", dir, level, strerror(-fd));
			return fd;
		}
		at = fd;
	}
	return at;
}

/* Open DIR, creating it, and check that it is root's (this user's)
 * alone: a folder another user can write is no place for root's files. */
static int
open_dir(const char *dir, bool create, char *err, size_t err_size)
{
	struct stat st;
	int fd;

	if (create) {
		fd = make_dir(dir, err, err_size);
		if (fd < 0)
			return fd;
	} else
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, err_size, "cannot open %s: %s", dir, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		snprintf(err, err_size, "%s is not a folder of uid %u alone "
			 "(make it mode 0700, owned by uid %u)", dir,
			 (unsigned)geteuid(), (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	return fd;
}

int
ceems_job_note_write(const char *dir, const struct ceems_job_note *note,
		 char *err, size_t err_size)
{
	char text[CEEMS_NOTE_MAX + 1], name[CEEMS_NOTE_NAME_MAX],
	     tmp[CEEMS_NOTE_NAME_MAX + 8];
	int dfd, fd, len, r;

	len = ceems_job_note_encode(note, text, sizeof(text));
	if (len < 0) {
		snprintf(err, err_size, "cannot encode the note: %s", strerror(-len));
		return len;
	}
	snprintf(name, sizeof(name), "job-%u-%lld-%s.note", note->meta.jobid,
		 (long long)note->meta.start_time, note->by);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	if ((dfd = open_dir(dir, true, err, err_size)) < 0)
		return dfd;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0) {
		r = -errno;
		snprintf(err, err_size, "cannot create %s/%s: %s", dir, tmp,
			 strerror(errno));
		close(dfd);
		return r;
	}
	r = ceems_fileio_write_all(fd, text, (size_t)len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r == 0 && fsync(dfd) < 0)
		r = -errno;
	if (r < 0) {
		snprintf(err, err_size, "cannot write %s/%s: %s", dir, name,
			 strerror(-r));
		(void)unlinkat(dfd, tmp, 0);
	}
	close(dfd);
	return r;
}

static bool
is_note_name(const char *name)
{
	size_t len = strlen(name);

	return name[0] != '.' && len > 5 && len < CEEMS_NOTE_NAME_MAX &&
	       strcmp(name + len - 5, ".note") == 0;
}

int
ceems_job_note_list(const char *dir, const char *after,
		char names[][CEEMS_NOTE_NAME_MAX], size_t max)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0, at;

	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	/* NAMES holds the first N found so far, in order: each new one
	 * goes in its place, the last falling out when NAMES is full. */
	while ((e = readdir(d)) != NULL && max > 0) {
		if (!is_note_name(e->d_name) || strcmp(e->d_name, after) <= 0 ||
		    (n == max && strcmp(e->d_name, names[n - 1]) >= 0))
			continue;
		at = n < max ? n : max - 1;
		while (at > 0 && strcmp(e->d_name, names[at - 1]) < 0) {
			memcpy(names[at], names[at - 1], CEEMS_NOTE_NAME_MAX);
			at--;
		}
		snprintf(names[at], CEEMS_NOTE_NAME_MAX, "%s", e->d_name);
		if (n < max)
			n++;
	}
	closedir(d);
	return (int)n;
}

int
ceems_job_note_next(const char *dir, const char *after, char *name, size_t size)
{
	char first[1][CEEMS_NOTE_NAME_MAX];
	int r = ceems_job_note_list(dir, after, first, 1);

	if (r > 0)
		snprintf(name, size, "%s", first[0]);
	return r;
}

int
ceems_job_note_read(const char *dir, const char *name, struct ceems_job_note *note,
		char *err, size_t err_size)
{
	char text[CEEMS_NOTE_MAX + 1];
	ssize_t n;
	int dfd;

	if ((dfd = open_dir(dir, false, err, err_size)) < 0)
		return dfd == -EPERM ? -EPERM : dfd;
	n = ceems_fileio_read_text_file_at(dfd, name, text, sizeof(text));
	close(dfd);
	if (n == -EFBIG)
		return ceems_json_util_error(err, err_size, "note is larger than %d bytes",
					CEEMS_NOTE_MAX);
	if (n < 0) {
		snprintf(err, err_size, "cannot read %s/%s: %s", dir, name,
			 strerror((int)-n));
		return (int)n;
	}
	return ceems_job_note_decode(text, (size_t)n, note, err, err_size);
}

int
ceems_job_note_remove(const char *dir, const char *name)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;

	if (dfd < 0)
		return -errno;
	if (unlinkat(dfd, name, 0) < 0)
		r = -errno;
	close(dfd);
	return r;
}

int
ceems_job_note_set_aside(const char *dir, const char *name)
{
	char bad[CEEMS_NOTE_NAME_MAX + 8];
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = 0;

	if (dfd < 0)
		return -errno;
	snprintf(bad, sizeof(bad), "%s.bad", name);
	if (renameat(dfd, name, dfd, bad) < 0)
		r = -errno;
	close(dfd);
	return r;
}
