/* tmptree.h - copy a fixture tree into a fresh temporary directory, so a
 * test can rewrite counter files between two samples, and remove it
 * afterwards.  Files are rewritten in place (same inode), as the kernel
 * updates a sysfs attribute that a source keeps open. */
#ifndef CEEMS_TEST_TMPTREE_H
#define CEEMS_TEST_TMPTREE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static __attribute__((unused)) void
tmptree_die(const char *what, const char *path)
{
	printf("Bail out! %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static __attribute__((unused)) void
tmptree_copy(const char *from, const char *to)
{
	struct dirent *de;
	DIR *dir;

	if (mkdir(to, 0755) < 0 && errno != EEXIST)
		tmptree_die("mkdir", to);
	dir = opendir(from);
	if (dir == NULL)
		tmptree_die("opendir", from);
	while ((de = readdir(dir)) != NULL) {
		char src[PATH_MAX], dst[PATH_MAX], buf[4096];
		struct stat st;
		ssize_t n;
		int in, out;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(src, sizeof(src), "%s/%s", from, de->d_name);
		snprintf(dst, sizeof(dst), "%s/%s", to, de->d_name);
		if (lstat(src, &st) < 0)
			tmptree_die("lstat", src);
		if (S_ISDIR(st.st_mode)) {
			tmptree_copy(src, dst);
			continue;
		}
		in = open(src, O_RDONLY);
		if (in < 0)
			tmptree_die("open", src);
		out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (out < 0)
			tmptree_die("create", dst);
		while ((n = read(in, buf, sizeof(buf))) > 0)
			if (write(out, buf, (size_t)n) != n)
				tmptree_die("write", dst);
		close(in);
		close(out);
	}
	closedir(dir);
}

/* Copy fixture directory FROM into a new temporary directory; its path
 * is returned in static storage. */
static __attribute__((unused)) const char *
tmptree_new(const char *from)
{
	static char root[PATH_MAX];

	snprintf(root, sizeof(root), "%s/ceems-test-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root) == NULL)
		tmptree_die("mkdtemp", root);
	tmptree_copy(from, root);
	return root;
}

/* Rewrite ROOT/REL with TEXT in place (truncate, same inode). */
static __attribute__((unused)) void
tmptree_write(const char *root, const char *rel, const char *text)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		tmptree_die("open", path);
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		tmptree_die("write", path);
	close(fd);
}

static __attribute__((unused)) int
tmptree_rm_one(const char *path, const struct stat *st, int flag,
	       struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static __attribute__((unused)) void
tmptree_remove(const char *root)
{
	nftw(root, tmptree_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
