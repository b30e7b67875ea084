/* bmc_link.h - an open IPMI connection to a BMC, as the DCMI reading
 * (bmc_ipmi.c) and the SDR's power sensor (bmc_sdr.h) both use it, and
 * the reason of its last error. */
#ifndef CEEMS_BMC_LINK_H
#define CEEMS_BMC_LINK_H

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
void ceems_bmc_link_why(struct bmc_link *l, const char *what, char *why,
			size_t why_size);
#else
struct bmc_link;
#endif

#endif
