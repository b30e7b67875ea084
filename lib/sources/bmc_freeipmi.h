/* bmc_freeipmi.h - libfreeipmi, loaded at run time by the BMC source
 * (bmc.c, when bmc is lan or inband), not linked into libceems: an
 * agent without a BMC source maps none of it (libfreeipmi and the
 * libgcrypt it brings: about 2 MiB of resident memory).  bmc_ipmi.c and
 * bmc_sdr.c call freeipmi through the one table below, declared with
 * freeipmi's own headers so that every entry point has freeipmi's type.
 * The fiid templates are data symbols: the table holds their address. */
#ifndef CEEMS_BMC_FREEIPMI_H
#define CEEMS_BMC_FREEIPMI_H

#include <stddef.h>

#ifdef HAVE_FREEIPMI
#include <freeipmi/freeipmi.h>

/* The soname of the libfreeipmi ABI the headers declare, and the Debian
 * package that ships it. */
#define CEEMS_BMC_FREEIPMI_SONAME "libfreeipmi.so.17"
#define CEEMS_BMC_FREEIPMI_PACKAGE "libfreeipmi17"

/* The entry points the BMC source calls, by freeipmi's names. */
struct ceems_bmc_freeipmi {
	__typeof__(ipmi_ctx_create) *ipmi_ctx_create;
	__typeof__(ipmi_ctx_open_outofband_2_0) *ipmi_ctx_open_outofband_2_0;
	__typeof__(ipmi_ctx_open_inband) *ipmi_ctx_open_inband;
	__typeof__(ipmi_ctx_close) *ipmi_ctx_close;
	__typeof__(ipmi_ctx_destroy) *ipmi_ctx_destroy;
	__typeof__(ipmi_ctx_errormsg) *ipmi_ctx_errormsg;
	__typeof__(ipmi_ctx_errnum) *ipmi_ctx_errnum;
	__typeof__(fiid_obj_create) *fiid_obj_create;
	__typeof__(fiid_obj_destroy) *fiid_obj_destroy;
	__typeof__(FIID_OBJ_GET) *FIID_OBJ_GET;
	__typeof__(fiid_obj_get_data) *fiid_obj_get_data;
	__typeof__(ipmi_cmd_dcmi_get_power_reading) *ipmi_cmd_dcmi_get_power_reading;
	__typeof__(ipmi_cmd_get_sdr) *ipmi_cmd_get_sdr;
	__typeof__(ipmi_cmd_reserve_sdr_repository) *ipmi_cmd_reserve_sdr_repository;
	__typeof__(ipmi_cmd_get_sensor_reading) *ipmi_cmd_get_sensor_reading;
	__typeof__(ipmi_sdr_ctx_create) *ipmi_sdr_ctx_create;
	__typeof__(ipmi_sdr_ctx_destroy) *ipmi_sdr_ctx_destroy;
	__typeof__(ipmi_sdr_parse_record_id_and_type) *ipmi_sdr_parse_record_id_and_type;
	__typeof__(ipmi_sdr_parse_sensor_owner_id) *ipmi_sdr_parse_sensor_owner_id;
	__typeof__(ipmi_sdr_parse_sensor_owner_lun) *ipmi_sdr_parse_sensor_owner_lun;
	__typeof__(ipmi_sdr_parse_sensor_units) *ipmi_sdr_parse_sensor_units;
	__typeof__(ipmi_sdr_parse_id_string) *ipmi_sdr_parse_id_string;
	__typeof__(ipmi_sdr_parse_sensor_number) *ipmi_sdr_parse_sensor_number;
	__typeof__(ipmi_sdr_parse_sensor_decoding_data) *ipmi_sdr_parse_sensor_decoding_data;
	__typeof__(ipmi_sensor_decode_value) *ipmi_sensor_decode_value;
	/* The answers' templates (fiid_template_t, arrays). */
	fiid_field_t *tmpl_cmd_dcmi_get_power_reading_rs;
	fiid_field_t *tmpl_cmd_get_sdr_rs;
	fiid_field_t *tmpl_cmd_reserve_sdr_repository_rs;
	fiid_field_t *tmpl_cmd_get_sensor_reading_rs;
};
#endif

/* libfreeipmi's table, loaded at the first call and kept for the
 * process's life (thread-safe).  0 with *FI set; or -ENOENT (not
 * installed), -ENOSYS (an entry point missing) or -ENOTSUP (built
 * without freeipmi), with ERR a line an admin can act on. */
struct ceems_bmc_freeipmi;
int ceems_bmc_freeipmi_load(const struct ceems_bmc_freeipmi **fi, char *err,
			    size_t err_size);

#endif
