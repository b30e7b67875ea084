/* gather_cred.c - munge credentials for the gather (gather_cred.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <munge.h>

#include "client/gather_cred.h"

static munge_ctx_t
context(const char *socket, char *err, size_t err_size)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (ctx == NULL) {
		snprintf(err, err_size, "munge: out of memory");
		return NULL;
	}
	if (socket[0] != '\0' &&
	    munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
		snprintf(err, err_size, "munge: cannot use socket %s: %s",
			 socket, munge_ctx_strerror(ctx));
		munge_ctx_destroy(ctx);
		return NULL;
	}
	return ctx;
}

int
ceems_gather_cred_encode(const char *socket, const void *payload, size_t len,
			 bool root_only, char **cred, char *err,
			 size_t err_size)
{
	munge_ctx_t ctx;
	munge_err_t e;

	*cred = NULL;
	if (len > (size_t)INT32_MAX) {
		snprintf(err, err_size, "munge: payload too long");
		return -EIO;
	}
	if ((ctx = context(socket, err, err_size)) == NULL)
		return -EIO;
	e = root_only ? munge_ctx_set(ctx, MUNGE_OPT_UID_RESTRICTION, (uid_t)0)
		      : EMUNGE_SUCCESS;
	if (e == EMUNGE_SUCCESS)
		e = munge_encode(cred, ctx, payload, (int)len);
	if (e != EMUNGE_SUCCESS)
		snprintf(err, err_size, "munge: cannot encode a credential: %s",
			 munge_ctx_strerror(ctx) != NULL ?
			 munge_ctx_strerror(ctx) : munge_strerror(e));
	munge_ctx_destroy(ctx);
	return e == EMUNGE_SUCCESS ? 0 : -EIO;
}

int
ceems_gather_cred_decode(const char *socket, const char *cred,
			 char **payload, size_t *len, char *err,
			 size_t err_size)
{
	munge_ctx_t ctx;
	munge_err_t e;
	void *buf = NULL;
	int n = 0;
	uid_t uid = (uid_t)-1;
	gid_t gid;

	*payload = NULL;
	*len = 0;
	if ((ctx = context(socket, err, err_size)) == NULL)
		return -EIO;
	e = munge_decode(cred, ctx, &buf, &n, &uid, &gid);
	if (e != EMUNGE_SUCCESS) {
		snprintf(err, err_size, "munge: %s",
			 munge_ctx_strerror(ctx) != NULL ?
			 munge_ctx_strerror(ctx) : munge_strerror(e));
		munge_ctx_destroy(ctx);
		free(buf);	/* some refusals still fill it */
		return -EIO;
	}
	munge_ctx_destroy(ctx);
	if (uid != 0) {
		snprintf(err, err_size, "credential of uid %u, not root",
			 (unsigned)uid);
		free(buf);
		return -EACCES;
	}
	/* munge's payload is NUL-terminated beyond its length; an empty
	 * one is NULL. */
	if (buf == NULL && (buf = calloc(1, 1)) == NULL) {
		snprintf(err, err_size, "out of memory");
		return -EIO;
	}
	*payload = buf;
	*len = n > 0 ? (size_t)n : 0;
	return 0;
}
