/* bmc_link.c - the reason of an IPMI connection's last error
 * (bmc_link.h), for both halves of the conversation with a BMC. */
#include "config.h"

#ifdef HAVE_FREEIPMI

#include <stdio.h>

#include "sources/bmc_link.h"

void
ceems_bmc_link_why(struct bmc_link *l, const char *what, char *why, size_t why_size)
{
	snprintf(why, why_size, "%s: %s", what,
		 l->fi->ipmi_ctx_errormsg(l->ctx));
}

#endif
