/* bmc_creds.c - the BMC's user name and password, from a file only root
 * can read (never from ceems.conf or plugstack.conf, which users can
 * read).  The file is refused when anyone but its owner, this process's
 * effective user, could read or change it, or when it is not a regular
 * file; it is opened without following a symlink. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sources/bmc.h"

/* Copy the value of a "KEY VALUE" line, LEN bytes from P, into OUT. */
static int
take_value(const char *p, size_t len, char *out, size_t max,
	   const char *key, char *why, size_t why_size)
{
	if (len == 0 || len > max) {
		snprintf(why, why_size, "%s must be 1 to %zu bytes", key, max);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++)
		if (p[i] == '\0' || p[i] == '\r') {
			snprintf(why, why_size, "%s holds a control byte", key);
			return -EINVAL;
		}
	memcpy(out, p, len);
	out[len] = '\0';
	return 0;
}

static int
parse_line(const char *line, size_t len, struct ceems_bmc_credentials *out,
	   unsigned lineno, char *why, size_t why_size)
{
	if (len == 0 || line[0] == '#')
		return 0;
	if (len > 9 && memcmp(line, "username ", 9) == 0)
		return take_value(line + 9, len - 9, out->username,
				  CEEMS_BMC_USER_MAX, "username", why, why_size);
	if (len > 9 && memcmp(line, "password ", 9) == 0)
		return take_value(line + 9, len - 9, out->password,
				  CEEMS_BMC_PASSWORD_MAX, "password", why,
				  why_size);
	snprintf(why, why_size,
		 "line %u: expected \"username NAME\" or \"password SECRET\"",
		 lineno);
	return -EINVAL;
}

int
ceems_bmc_creds_parse(const char *text,
			    struct ceems_bmc_credentials *out, char *why,
			    size_t why_size)
{
	unsigned lineno = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	while (*text != '\0') {
		size_t len = strcspn(text, "\n");

		lineno++;
		ret = parse_line(text, len, out, lineno, why, why_size);
		if (ret < 0)
			return ret;
		text += len;
		if (*text == '\n')
			text++;
	}
	if (out->username[0] == '\0' || out->password[0] == '\0') {
		snprintf(why, why_size, "needs a username and a password line");
		return -EINVAL;
	}
	return 0;
}

static int
check_file(int fd, char *why, size_t why_size)
{
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(why, why_size, "fstat: %s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, why_size, "not a regular file");
		return -EINVAL;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077) != 0) {
		snprintf(why, why_size,
			 "must be owned by uid %u and readable by no one else (chown %u; chmod 600)",
			 (unsigned)geteuid(), (unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

int
ceems_bmc_creds_load(const char *path,
			   struct ceems_bmc_credentials *out, char *why,
			   size_t why_size)
{
	char text[1024];
	ssize_t n;
	size_t len = 0;
	int fd, ret;

	/* O_NONBLOCK: a FIFO put there must not hold the BMC's thread (and
	 * the agent's shutdown) forever; fstat below refuses it. */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
		  O_NONBLOCK);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, why_size, "cannot open it: %s", strerror(errno));
		return ret;
	}
	ret = check_file(fd, why, why_size);
	while (ret == 0 && len < sizeof(text) - 1) {
		n = read(fd, text + len, sizeof(text) - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(why, why_size, "read: %s", strerror(errno));
		}
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (ret == 0 && len == sizeof(text) - 1) {
		snprintf(why, why_size, "longer than %zu bytes", sizeof(text) - 2);
		ret = -EFBIG;
	}
	if (ret == 0) {
		text[len] = '\0';
		if (strlen(text) != len) {
			snprintf(why, why_size, "holds a NUL byte");
			ret = -EINVAL;
		} else {
			ret = ceems_bmc_creds_parse(text, out, why,
							  why_size);
		}
	}
	explicit_bzero(text, sizeof(text));
	return ret;
}
