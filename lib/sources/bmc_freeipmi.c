/* bmc_freeipmi.c - libfreeipmi's table of entry points, loaded by the
 * BMC source at its open (bmc_freeipmi.h). */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "base/dynlib.h"
#include "sources/bmc_freeipmi.h"

#ifdef HAVE_FREEIPMI

#define SYM(member) \
	{ #member, offsetof(struct ceems_bmc_freeipmi, member), true }
static const struct ceems_dynlib_symbol freeipmi_symbols[] = {
	SYM(ipmi_ctx_create), SYM(ipmi_ctx_open_outofband_2_0),
	SYM(ipmi_ctx_open_inband), SYM(ipmi_ctx_close), SYM(ipmi_ctx_destroy),
	SYM(ipmi_ctx_errormsg), SYM(ipmi_ctx_errnum), SYM(fiid_obj_create),
	SYM(fiid_obj_destroy), SYM(FIID_OBJ_GET), SYM(fiid_obj_get_data),
	SYM(ipmi_cmd_dcmi_get_power_reading), SYM(ipmi_cmd_get_sdr),
	SYM(ipmi_cmd_reserve_sdr_repository), SYM(ipmi_cmd_get_sensor_reading),
	SYM(ipmi_sdr_ctx_create), SYM(ipmi_sdr_ctx_destroy),
	SYM(ipmi_sdr_parse_record_id_and_type),
	SYM(ipmi_sdr_parse_sensor_owner_id),
	SYM(ipmi_sdr_parse_sensor_owner_lun), SYM(ipmi_sdr_parse_sensor_units),
	SYM(ipmi_sdr_parse_id_string), SYM(ipmi_sdr_parse_sensor_number),
	SYM(ipmi_sdr_parse_sensor_decoding_data), SYM(ipmi_sensor_decode_value),
	SYM(tmpl_cmd_dcmi_get_power_reading_rs), SYM(tmpl_cmd_get_sdr_rs),
	SYM(tmpl_cmd_reserve_sdr_repository_rs),
	SYM(tmpl_cmd_get_sensor_reading_rs),
};
#undef SYM

static const struct ceems_dynlib_spec freeipmi_spec = {
	CEEMS_BMC_FREEIPMI_SONAME, CEEMS_BMC_FREEIPMI_PACKAGE, "the BMC source",
	freeipmi_symbols, sizeof(freeipmi_symbols) / sizeof(freeipmi_symbols[0]),
};
static struct ceems_bmc_freeipmi freeipmi;
static struct ceems_dynlib_once freeipmi_once = CEEMS_DYNLIB_ONCE_INIT;

int
ceems_bmc_freeipmi_load(const struct ceems_bmc_freeipmi **fi, char *err,
			size_t err_size)
{
	int r = ceems_dynlib_once_open(&freeipmi_once, &freeipmi_spec,
				       &freeipmi, sizeof(freeipmi), err,
				       err_size);

	*fi = r == 0 ? &freeipmi : NULL;
	return r;
}

#else /* !HAVE_FREEIPMI */

int
ceems_bmc_freeipmi_load(const struct ceems_bmc_freeipmi **fi, char *err,
			size_t err_size)
{
	*fi = NULL;
	snprintf(err, err_size, "ceems was built without libfreeipmi");
	return -ENOTSUP;
}

#endif
