/* bmc_ipmi.h - one IPMI connection to a BMC and its power reading
 * (bmc_ipmi.c, through libfreeipmi's table, bmc_freeipmi.h).  Used by the BMC source's thread
 * only: every call may block up to the options' timeout (LAN) or the
 * kernel driver's (in band). */
#ifndef CEEMS_BMC_IPMI_H
#define CEEMS_BMC_IPMI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/bmc.h"
#include "sources/bmc_link.h"

/* Connect as the options say.  The link, or NULL with the reason in
 * WHY. */
struct bmc_link *ceems_bmc_ipmi_link_open(const struct ceems_bmc_options *o,
			       const struct ceems_bmc_credentials *cr,
			       char *why, size_t why_size);

/* Read the node's power.  The first read chooses how (DCMI, else the
 * SDR's power sensor) and says so in CHOSEN (empty when nothing new was
 * chosen).  0; -ENOENT when the BMC has no such sensor (no point in
 * retrying soon); another -errno when the exchange failed (the link
 * should be reopened).  WHY says what happened. */
int ceems_bmc_ipmi_link_read(struct bmc_link *l, const struct ceems_bmc_options *o,
		  struct ceems_bmc_reading *r, char *chosen, size_t chosen_size,
		  char *why, size_t why_size);

void ceems_bmc_ipmi_link_close(struct bmc_link *l);

#endif
