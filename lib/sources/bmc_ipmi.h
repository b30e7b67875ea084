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

#ifdef HAVE_FREEIPMI
#include "sources/bmc_freeipmi.h"

enum bmc_how { BMC_HOW_UNKNOWN = 0, BMC_HOW_DCMI, BMC_HOW_SDR };

/* An open connection and how it reads the power, once chosen. */
struct bmc_link {
	const struct ceems_bmc_freeipmi *fi;	/* libfreeipmi's table */
	ipmi_ctx_t ctx;
	enum bmc_how how;
	uint8_t sensor_number;		/* BMC_HOW_SDR: its sensor */
	int8_t r_exponent, b_exponent;
	int16_t m, b;
	uint8_t linearization, analog_data_format;
	char sensor_id[CEEMS_BMC_SENSOR_MAX];
};

/* WHY = WHAT and libfreeipmi's message of L's last error. */
void ceems_bmc_ipmi_why(struct bmc_link *l, const char *what, char *why,
		  size_t why_size);

/* Find the SDR's power sensor for O->sensor into L (bmc_sdr.c).  0,
 * -ENOENT (none such) or -EIO. */
int ceems_bmc_sdr_find(struct bmc_link *l, const struct ceems_bmc_options *o,
		 char *why, size_t why_size);

/* Read L's sensor into R.  0 or -EIO. */
int ceems_bmc_sdr_read(struct bmc_link *l, struct ceems_bmc_reading *r, char *why,
		 size_t why_size);
#else
struct bmc_link;
#endif

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
