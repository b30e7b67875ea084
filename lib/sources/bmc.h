/* bmc.h - the node's power from its BMC (IPMI, through libfreeipmi), as
 * an energy source of the NODE domain.
 *
 * A BMC answers in tens of milliseconds to seconds, and sometimes not at
 * all, so it is never read on the agent's tick: a thread of its own
 * reads it every bmc_interval (DCMI Get Power Reading where the BMC has
 * it, else an SDR power sensor), and the curve of its readings
 * (bmc_curve.c) turns them into the energy each tick is handed.  The
 * parts: bmc_curve.c (readings to energy, pure), bmc_creds.c (the
 * root-only credentials file), bmc_ipmi.c (the IPMI conversation),
 * bmc.c (the source and its thread). */
#ifndef CEEMS_BMC_H
#define CEEMS_BMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/energy.h"

enum ceems_bmc_mode {
	CEEMS_BMC_NONE = 0,
	CEEMS_BMC_INBAND,	/* the local BMC, kernel IPMI device */
	CEEMS_BMC_LAN,		/* out of band, IPMI 2.0 LANplus */
};

#define CEEMS_BMC_HOST_MAX 256
#define CEEMS_BMC_SENSOR_MAX 64
#define CEEMS_BMC_PATH_MAX 4096

struct ceems_bmc_options {
	enum ceems_bmc_mode mode;
	char host[CEEMS_BMC_HOST_MAX];	/* LAN: "name" or "name:port" */
	char credentials_file[CEEMS_BMC_PATH_MAX];
	/* "auto": DCMI, else the first power sensor of the SDR; "dcmi":
	 * DCMI only; anything else: the SDR sensor of that id string. */
	char sensor[CEEMS_BMC_SENSOR_MAX];
	uint64_t interval_ns;		/* between two readings */
	uint64_t timeout_ns;		/* one IPMI exchange, at most */
	unsigned workarounds;		/* CEEMS_BMC_WORKAROUND_* */
	char privilege[16];		/* LAN session: user, operator, admin */
};

/* freeipmi's workarounds for BMCs that break the IPMI 2.0 session
 * protocol, by the names its tools give them (--workaround-flags). */
enum {
	CEEMS_BMC_WORKAROUND_AUTHCAP = 1 << 0,
	CEEMS_BMC_WORKAROUND_INTEL20 = 1 << 1,
	CEEMS_BMC_WORKAROUND_SUPERMICRO20 = 1 << 2,
	CEEMS_BMC_WORKAROUND_SUN20 = 1 << 3,
	CEEMS_BMC_WORKAROUND_OPENSESSPRIV = 1 << 4,
	CEEMS_BMC_WORKAROUND_INTEGRITYCHECKVALUE = 1 << 5,
	CEEMS_BMC_WORKAROUND_NOCHECKSUMCHECK = 1 << 6,
};

/* Parse TEXT, workaround names separated by commas or spaces ("" or
 * "none": none), into *FLAGS.  0, or -EINVAL naming the unknown word in
 * WHY. */
int ceems_bmc_ipmi_parse_workarounds(const char *text, unsigned *flags, char *why,
				size_t why_size);

/* --- Credentials (bmc_creds.c). --- */

#define CEEMS_BMC_USER_MAX 16	/* IPMI user names: 16 bytes */
#define CEEMS_BMC_PASSWORD_MAX 20	/* IPMI 2.0 passwords: 20 bytes */

struct ceems_bmc_credentials {
	char username[CEEMS_BMC_USER_MAX + 1];
	char password[CEEMS_BMC_PASSWORD_MAX + 1];
};

/* Parse TEXT: lines "username NAME" and "password SECRET" (one space,
 * the rest of the line is the value), blank lines and "#" comments.  0,
 * or -EINVAL with a reason in WHY (never quoting the password). */
int ceems_bmc_creds_parse(const char *text,
				struct ceems_bmc_credentials *out,
				char *why, size_t why_size);

/* Read PATH: a regular file (no symlink) owned by this process's
 * effective user and readable by no one else, else refused.  0 or
 * -errno with the reason in WHY. */
int ceems_bmc_creds_load(const char *path,
			       struct ceems_bmc_credentials *out,
			       char *why, size_t why_size);

/* --- One reading, as the IPMI side (bmc_ipmi.c) returns it. --- */

enum ceems_bmc_origin {
	CEEMS_BMC_DCMI = 1,
	CEEMS_BMC_SDR,
};

struct ceems_bmc_reading {
	enum ceems_bmc_origin origin;
	double watts;
	bool have_stamp;	/* DCMI: the BMC's own time of the reading */
	uint32_t stamp;		/* seconds, the BMC's clock */
	uint32_t period_ms;	/* DCMI: the statistics' averaging period */
};

/* Judge a DCMI Get Power Reading answer: ACTIVE (the power measurement
 * state bit), the current power and the time stamp.  0 when usable, or
 * -ENODATA (measurement inactive, or 0 W: a BMC without a power meter
 * answers either way), with the reason in WHY. */
int ceems_bmc_ipmi_dcmi_judge(bool active, unsigned current_w, uint32_t stamp,
			 char *why, size_t why_size);

/* --- The curve of readings (bmc_curve.c). --- */

/* Readings above this are garbage: no node draws 100 kW. */
#define CEEMS_BMC_MAX_WATTS 100000.0

struct ceems_bmc_curve {
	uint64_t max_hold_ns;	/* a reading older than this is no estimate */
	bool have_last;		/* a reading the curve goes on from */
	uint64_t last_ns;	/* its local time */
	double last_w;
	bool have_stamp;	/* the BMC's stamp of the last fresh reading */
	uint32_t stamp;
	bool rebase;		/* the next take is a gap: a new baseline */
	enum ceems_energy_gap rebase_gap;
	uint64_t taken_ns;	/* takes have accounted up to here */
	uint64_t measured_from_ns;	/* energy after this was handed out */
	double owed_j;		/* known but not handed out (may be < 0) */
};

enum ceems_bmc_verdict {
	CEEMS_BMC_FRESH = 0,
	CEEMS_BMC_STALE,	/* the BMC's stamp did not move */
	CEEMS_BMC_GARBAGE,	/* not a power a node can draw */
};

void ceems_bmc_curve_init(struct ceems_bmc_curve *c, uint64_t max_hold_ns,
			  uint64_t now_ns);

/* A reading R taken at NOW_NS: the segment since the last reading is
 * integrated as a trapezoid, and what earlier takes handed out as the
 * last power held is corrected.  A stale or garbage reading changes
 * nothing. */
enum ceems_bmc_verdict ceems_bmc_curve_reading(struct ceems_bmc_curve *c,
					       const struct ceems_bmc_reading *r,
					       uint64_t now_ns);

/* No reading could be had: the next good one starts a new baseline (its
 * tick a gap of kind GAP). */
void ceems_bmc_curve_lost(struct ceems_bmc_curve *c, enum ceems_energy_gap gap);

/* The energy since the last take, up to NOW_NS: what the readings owe
 * plus the last power held since the last reading.  Returns
 * CEEMS_GAP_NONE with *JOULES >= 0, or the gap (no reading yet, a new
 * baseline, or a last reading older than max_hold_ns). */
enum ceems_energy_gap ceems_bmc_curve_take(struct ceems_bmc_curve *c,
					   uint64_t now_ns, double *joules);

/* --- The source (bmc.c). --- */

/* Start the BMC's thread and return the source (one NODE counter), or
 * NULL when the options are unusable (logged: what and how to fix).  A
 * BMC that does not answer yet is no failure: its ticks are gaps until
 * it does.  NOW_NS is CLOCK_MONOTONIC, as every sample's. */
struct ceems_energy_source *ceems_bmc_open(const struct ceems_bmc_options *o,
					   uint64_t now_ns);

#endif
