/* bmc_ipmi.c - the IPMI conversation with a BMC, through libfreeipmi
 * (its table of entry points, bmc_freeipmi.h, loaded at run time):
 * open a session (in band through the kernel's IPMI device, or LANplus),
 * and read the node's power by DCMI Get Power Reading, or else from a
 * power sensor of the SDR.
 *
 * BMC quirks met here (doc/ceems.conf.5, BMC):
 * - a BMC without DCMI answers "invalid command": the SDR is used;
 * - a BMC with DCMI but no power meter answers with the measurement
 *   state inactive, or with 0 W: that is no reading, and at the first
 *   read it sends the source to the SDR;
 * - DCMI's time stamp is the BMC's own clock, often unset or not in
 *   step with the node's: it is used only to see that a reading is new
 *   (the same stamp twice is the same reading), never as a time;
 * - "current power" is the BMC's average over its own sampling period
 *   (reported as the statistics period, often 1 s, sometimes longer):
 *   a reading lags the node by about that much;
 * - an SDR sensor may be "reading unavailable" (initial update in
 *   progress, or scanning disabled): no reading. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/bmc.h"
#include "sources/bmc_ipmi.h"
#include "sources/bmc_sdr.h"

int
ceems_bmc_ipmi_dcmi_judge(bool active, unsigned current_w, uint32_t stamp,
		     char *why, size_t why_size)
{
	(void)stamp;
	if (!active) {
		snprintf(why, why_size, "DCMI power measurement is not active");
		return -ENODATA;
	}
	if (current_w == 0) {
		snprintf(why, why_size, "DCMI answers 0 W (no power meter behind it)");
		return -ENODATA;
	}
	return 0;
}

static const struct {
	const char *name;
	unsigned flag;
} workaround_names[] = {
	{ "authcap", CEEMS_BMC_WORKAROUND_AUTHCAP },
	{ "intel20", CEEMS_BMC_WORKAROUND_INTEL20 },
	{ "supermicro20", CEEMS_BMC_WORKAROUND_SUPERMICRO20 },
	{ "sun20", CEEMS_BMC_WORKAROUND_SUN20 },
	{ "opensesspriv", CEEMS_BMC_WORKAROUND_OPENSESSPRIV },
	{ "integritycheckvalue", CEEMS_BMC_WORKAROUND_INTEGRITYCHECKVALUE },
	{ "nochecksumcheck", CEEMS_BMC_WORKAROUND_NOCHECKSUMCHECK },
};

static int
workaround_word(const char *word, size_t len, unsigned *flags, char *why,
		size_t why_size)
{
	if (len == 4 && memcmp(word, "none", 4) == 0)
		return 0;
	for (size_t i = 0; i < sizeof(workaround_names) /
			       sizeof(workaround_names[0]); i++)
		if (strlen(workaround_names[i].name) == len &&
		    memcmp(workaround_names[i].name, word, len) == 0) {
			*flags |= workaround_names[i].flag;
			return 0;
		}
	snprintf(why, why_size,
		 "unknown BMC workaround \"%.*s\" (known: authcap intel20 supermicro20 sun20 opensesspriv integritycheckvalue nochecksumcheck)",
		 (int)(len > 32 ? 32 : len), word);
	return -EINVAL;
}

int
ceems_bmc_ipmi_parse_workarounds(const char *text, unsigned *flags, char *why,
			    size_t why_size)
{
	*flags = 0;
	while (*text != '\0') {
		size_t len;

		text += strspn(text, ", ");
		len = strcspn(text, ", ");
		if (len > 0 &&
		    workaround_word(text, len, flags, why, why_size) < 0)
			return -EINVAL;
		text += len;
	}
	return 0;
}

#ifdef HAVE_FREEIPMI

static unsigned
freeipmi_workarounds(unsigned w)
{
	unsigned f = 0;

	if (w & CEEMS_BMC_WORKAROUND_AUTHCAP)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_AUTHENTICATION_CAPABILITIES;
	if (w & CEEMS_BMC_WORKAROUND_INTEL20)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_INTEL_2_0_SESSION;
	if (w & CEEMS_BMC_WORKAROUND_SUPERMICRO20)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUPERMICRO_2_0_SESSION;
	if (w & CEEMS_BMC_WORKAROUND_SUN20)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_SUN_2_0_SESSION;
	if (w & CEEMS_BMC_WORKAROUND_OPENSESSPRIV)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_OPEN_SESSION_PRIVILEGE;
	if (w & CEEMS_BMC_WORKAROUND_INTEGRITYCHECKVALUE)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NON_EMPTY_INTEGRITY_CHECK_VALUE;
	if (w & CEEMS_BMC_WORKAROUND_NOCHECKSUMCHECK)
		f |= IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_NO_CHECKSUM_CHECK;
	return f;
}

struct bmc_link *
ceems_bmc_ipmi_link_open(const struct ceems_bmc_options *o,
	      const struct ceems_bmc_credentials *cr, char *why,
	      size_t why_size)
{
	struct bmc_link *l = calloc(1, sizeof(*l));
	unsigned timeout_ms = (unsigned)(o->timeout_ns / 1000000);
	uint8_t privilege = IPMI_PRIVILEGE_LEVEL_USER;
	int ret;

	if (l == NULL) {
		snprintf(why, why_size, "out of memory");
		return NULL;
	}
	/* Loaded by ceems_bmc_open already: this only takes the table. */
	if (ceems_bmc_freeipmi_load(&l->fi, why, why_size) < 0) {
		free(l);
		return NULL;
	}
	if ((l->ctx = l->fi->ipmi_ctx_create()) == NULL) {
		snprintf(why, why_size, "out of memory");
		free(l);
		return NULL;
	}
	if (timeout_ms < 100)
		timeout_ms = 100;
	if (strcmp(o->privilege, "admin") == 0)
		privilege = IPMI_PRIVILEGE_LEVEL_ADMIN;
	else if (strcmp(o->privilege, "operator") == 0)
		privilege = IPMI_PRIVILEGE_LEVEL_OPERATOR;
	if (o->mode == CEEMS_BMC_LAN)
		/* Cipher suite 3 (HMAC-SHA1, AES-CBC-128): what every IPMI 2.0
		 * BMC must offer.  The retransmission timeout is a quarter
		 * of the session's, so a lost datagram is sent again. */
		ret = l->fi->ipmi_ctx_open_outofband_2_0(l->ctx, o->host,
				cr->username, cr->password, NULL, 0,
				privilege, 3, timeout_ms,
				timeout_ms / 4,
				freeipmi_workarounds(o->workarounds), 0);
	else
		ret = l->fi->ipmi_ctx_open_inband(l->ctx, IPMI_DEVICE_OPENIPMI,
						  0, 0, 0, NULL, 0, 0);
	if (ret < 0) {
		ceems_bmc_link_why(l, o->mode == CEEMS_BMC_LAN ? "LANplus session" :
			 "kernel IPMI device", why, why_size);
		ceems_bmc_ipmi_link_close(l);
		return NULL;
	}
	return l;
}

void
ceems_bmc_ipmi_link_close(struct bmc_link *l)
{
	if (l == NULL)
		return;
	if (l->ctx != NULL) {
		l->fi->ipmi_ctx_close(l->ctx);
		l->fi->ipmi_ctx_destroy(l->ctx);
	}
	free(l);
}

/* Whether a command's error says the BMC answered it with a completion
 * code: a BMC without DCMI says "invalid command", some "insufficient
 * privilege" (the simulator too). */
static bool
no_such_command(int errnum)
{
	return errnum == IPMI_ERR_BAD_COMPLETION_CODE ||
	       errnum == IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT ||
	       errnum == IPMI_ERR_COMMAND_INVALID_OR_UNSUPPORTED ||
	       errnum == IPMI_ERR_COMMAND_INVALID_FOR_SELECTED_INTERFACE;
}

/* -ENOTSUP when the BMC has no usable DCMI power reading, -EIO when the
 * exchange failed. */
static int
read_dcmi(struct bmc_link *l, struct ceems_bmc_reading *r, char *why,
	  size_t why_size)
{
	fiid_obj_t obj =
		l->fi->fiid_obj_create(l->fi->tmpl_cmd_dcmi_get_power_reading_rs);
	uint64_t current = 0, stamp = 0, period = 0, active = 0;
	int ret = 0;

	if (obj == NULL) {
		snprintf(why, why_size, "out of memory");
		return -ENOMEM;
	}
	if (l->fi->ipmi_cmd_dcmi_get_power_reading(l->ctx,
			IPMI_DCMI_POWER_READING_MODE_SYSTEM_POWER_STATISTICS,
			0, obj) < 0) {
		ceems_bmc_link_why(l, "DCMI Get Power Reading", why, why_size);
		ret = no_such_command(l->fi->ipmi_ctx_errnum(l->ctx)) ? -ENOTSUP :
		      -EIO;
	} else if (l->fi->FIID_OBJ_GET(obj, "current_power", &current) < 0 ||
		   l->fi->FIID_OBJ_GET(obj, "time_stamp", &stamp) < 0 ||
		   l->fi->FIID_OBJ_GET(obj, "statistics_reporting_time_period",
				&period) < 0 ||
		   l->fi->FIID_OBJ_GET(obj, "power_reading_state.power_measurement",
				&active) < 0) {
		snprintf(why, why_size, "DCMI Get Power Reading: short answer");
		ret = -ENOTSUP;
	} else if (ceems_bmc_ipmi_dcmi_judge(active != 0, (unsigned)current,
					(uint32_t)stamp, why, why_size) < 0) {
		ret = -ENOTSUP;
	} else {
		r->origin = CEEMS_BMC_DCMI;
		r->watts = (double)current;
		r->have_stamp = true;
		r->stamp = (uint32_t)stamp;
		r->period_ms = (uint32_t)period;
	}
	l->fi->fiid_obj_destroy(obj);
	return ret;
}

int
ceems_bmc_ipmi_link_read(struct bmc_link *l, const struct ceems_bmc_options *o,
	      struct ceems_bmc_reading *r, char *chosen, size_t chosen_size,
	      char *why, size_t why_size)
{
	bool want_dcmi = strcmp(o->sensor, "auto") == 0 ||
			 strcmp(o->sensor, "dcmi") == 0;
	int ret;

	memset(r, 0, sizeof(*r));
	chosen[0] = '\0';
	if (l->how == BMC_HOW_DCMI)
		return read_dcmi(l, r, why, why_size) == 0 ? 0 : -EIO;
	if (l->how == BMC_HOW_SDR)
		return ceems_bmc_sdr_read(l, r, why, why_size);
	if (want_dcmi) {
		ret = read_dcmi(l, r, why, why_size);
		if (ret == 0) {
			l->how = BMC_HOW_DCMI;
			snprintf(chosen, chosen_size, "DCMI Get Power Reading");
			return 0;
		}
		if (ret != -ENOTSUP)
			return ret;
		if (strcmp(o->sensor, "dcmi") == 0)
			return -ENOENT;
	}
	ret = ceems_bmc_sdr_find(l, o, why, why_size);
	if (ret < 0)
		return ret;
	l->how = BMC_HOW_SDR;
	snprintf(chosen, chosen_size, "SDR sensor \"%s\" (number %u)",
		 l->sensor_id, l->sensor_number);
	return ceems_bmc_sdr_read(l, r, why, why_size);
}

#else /* !HAVE_FREEIPMI */

struct bmc_link {
	int unused;
};

struct bmc_link *
ceems_bmc_ipmi_link_open(const struct ceems_bmc_options *o,
	      const struct ceems_bmc_credentials *cr, char *why,
	      size_t why_size)
{
	(void)o;
	(void)cr;
	snprintf(why, why_size, "ceems was built without libfreeipmi");
	return NULL;
}

int
ceems_bmc_ipmi_link_read(struct bmc_link *l, const struct ceems_bmc_options *o,
	      struct ceems_bmc_reading *r, char *chosen, size_t chosen_size,
	      char *why, size_t why_size)
{
	(void)l;
	(void)o;
	(void)r;
	(void)chosen_size;
	chosen[0] = '\0';
	snprintf(why, why_size, "ceems was built without libfreeipmi");
	return -ENOTSUP;
}

void
ceems_bmc_ipmi_link_close(struct bmc_link *l)
{
	(void)l;
}

#endif
