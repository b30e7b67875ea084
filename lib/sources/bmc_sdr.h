/* bmc_sdr.h - the BMC's power sensor from its SDR repository
 * (bmc_sdr.c), for a link that has no DCMI power reading. */
#ifndef CEEMS_BMC_SDR_H
#define CEEMS_BMC_SDR_H

#include <stddef.h>

#include "sources/bmc.h"
#include "sources/bmc_link.h"

#ifdef HAVE_FREEIPMI
/* Find the SDR's power sensor for O->sensor into L.  0, -ENOENT (none
 * such) or -EIO. */
int ceems_bmc_sdr_find(struct bmc_link *l, const struct ceems_bmc_options *o,
		       char *why, size_t why_size);

/* Read L's sensor into R.  0 or -EIO. */
int ceems_bmc_sdr_read(struct bmc_link *l, struct ceems_bmc_reading *r, char *why,
		       size_t why_size);
#endif

#endif
