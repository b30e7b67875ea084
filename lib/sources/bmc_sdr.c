/* bmc_sdr.c - the BMC's power sensor from its SDR repository (through
 * libfreeipmi's table, bmc_freeipmi.h): walk the
 * repository for a full sensor record in Watts owned by the BMC itself
 * (the one whose id string the configuration names, or the first), and
 * read it.  The SDR half of the conversation bmc_ipmi.c holds. */
#include "config.h"

#ifdef HAVE_FREEIPMI

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sources/bmc.h"
#include "sources/bmc_sdr.h"

/* Many BMCs return at most this much of a record per Get SDR. */
#define SDR_CHUNK 16
#define SDR_HEADER 5

/* Read COUNT bytes at OFFSET of record ID into BUF.  The bytes read, or
 * -EIO. */
static int
get_part(struct bmc_link *l, uint16_t reservation, uint16_t id,
	 unsigned offset, unsigned count, uint16_t *next, uint8_t *buf)
{
	fiid_obj_t obj = l->fi->fiid_obj_create(l->fi->tmpl_cmd_get_sdr_rs);
	uint64_t next_id = 0xffff;
	int len = -EIO;

	if (obj == NULL)
		return -ENOMEM;
	if (l->fi->ipmi_cmd_get_sdr(l->ctx, reservation, id, (uint8_t)offset,
			     (uint8_t)count, obj) >= 0 &&
	    l->fi->FIID_OBJ_GET(obj, "next_record_id", &next_id) >= 0) {
		len = l->fi->fiid_obj_get_data(obj, "record_data", buf, count);
		if (len < 0)
			len = -EIO;
	}
	*next = (uint16_t)next_id;
	l->fi->fiid_obj_destroy(obj);
	return len;
}

/* Read record ID whole into BUF (SIZE bytes), its header first, then the
 * rest in chunks.  The record's length, or -EIO. */
static int
get_record(struct bmc_link *l, uint16_t reservation, uint16_t id,
	   uint16_t *next, uint8_t *buf, size_t size)
{
	unsigned total, have;
	int n;

	n = get_part(l, reservation, id, 0, SDR_HEADER, next, buf);
	if (n != SDR_HEADER)
		return -EIO;
	total = SDR_HEADER + buf[SDR_HEADER - 1];
	if (total > size)
		return -EIO;
	for (have = SDR_HEADER; have < total; have += (unsigned)n) {
		uint16_t ignored;
		unsigned want = total - have < SDR_CHUNK ? total - have :
				SDR_CHUNK;

		n = get_part(l, reservation, id, have, want, &ignored,
			     buf + have);
		if (n <= 0)
			return -EIO;
	}
	return (int)total;
}

/* Whether record BUF is a BMC-owned full sensor record in Watts (named
 * WANT, when not "auto"); if so, keep what reading it needs. */
static bool
take_record(struct bmc_link *l, ipmi_sdr_ctx_t sdr, const uint8_t *buf,
	    unsigned len, const char *want)
{
	const struct ceems_bmc_freeipmi *fi = l->fi;
	uint16_t id;
	uint8_t type, owner_type, owner, lun, channel, number;
	uint8_t percentage, modifier, rate, base, modifier_type;
	char name[CEEMS_BMC_SENSOR_MAX];
	int n;

	if (fi->ipmi_sdr_parse_record_id_and_type(sdr, buf, len, &id, &type) < 0 ||
	    type != IPMI_SDR_FORMAT_FULL_SENSOR_RECORD)
		return false;
	if (fi->ipmi_sdr_parse_sensor_owner_id(sdr, buf, len, &owner_type,
					       &owner) < 0 ||
	    owner_type != IPMI_SDR_SENSOR_OWNER_ID_TYPE_IPMB_SLAVE_ADDRESS ||
	    (owner << 1) != IPMI_SLAVE_ADDRESS_BMC ||	/* 7-bit address */
	    fi->ipmi_sdr_parse_sensor_owner_lun(sdr, buf, len, &lun,
						&channel) < 0 ||
	    lun != 0)
		return false;
	if (fi->ipmi_sdr_parse_sensor_units(sdr, buf, len, &percentage,
					    &modifier, &rate, &base,
					    &modifier_type) < 0 ||
	    base != IPMI_SENSOR_UNIT_WATTS || percentage != 0 || rate != 0 ||
	    modifier != 0)
		return false;
	memset(name, 0, sizeof(name));
	n = fi->ipmi_sdr_parse_id_string(sdr, buf, len, name, sizeof(name) - 1);
	if (n < 0)
		return false;
	if (strcmp(want, "auto") != 0 && strcmp(want, name) != 0)
		return false;
	if (fi->ipmi_sdr_parse_sensor_number(sdr, buf, len, &number) < 0 ||
	    fi->ipmi_sdr_parse_sensor_decoding_data(sdr, buf, len,
			&l->r_exponent,
			&l->b_exponent, &l->m, &l->b, &l->linearization,
			&l->analog_data_format) < 0)
		return false;
	l->sensor_number = number;
	snprintf(l->sensor_id, sizeof(l->sensor_id), "%s", name);
	return true;
}

static int
reserve(struct bmc_link *l, uint16_t *reservation, char *why, size_t why_size)
{
	fiid_obj_t obj =
		l->fi->fiid_obj_create(l->fi->tmpl_cmd_reserve_sdr_repository_rs);
	uint64_t v = 0;
	int ret = 0;

	if (obj == NULL)
		return -ENOMEM;
	if (l->fi->ipmi_cmd_reserve_sdr_repository(l->ctx, obj) < 0 ||
	    l->fi->FIID_OBJ_GET(obj, "reservation_id", &v) < 0) {
		ceems_bmc_link_why(l, "Reserve SDR Repository", why, why_size);
		ret = -EIO;
	}
	*reservation = (uint16_t)v;
	l->fi->fiid_obj_destroy(obj);
	return ret;
}

/* Walk the SDR.  0, -ENOENT (no such sensor) or -EIO. */
int
ceems_bmc_sdr_find(struct bmc_link *l, const struct ceems_bmc_options *o, char *why,
	    size_t why_size)
{
	const char *want = strcmp(o->sensor, "dcmi") == 0 ? "auto" : o->sensor;
	ipmi_sdr_ctx_t sdr = l->fi->ipmi_sdr_ctx_create();
	uint8_t buf[IPMI_SDR_MAX_RECORD_LENGTH];
	uint16_t reservation, id = 0, next;
	int len, ret, records = 0;

	if (sdr == NULL)
		return -ENOMEM;
	ret = reserve(l, &reservation, why, why_size);
	while (ret == 0 && records++ < 4096) {
		len = get_record(l, reservation, id, &next, buf, sizeof(buf));
		if (len < 0) {
			ceems_bmc_link_why(l, "Get SDR", why, why_size);
			ret = -EIO;
			break;
		}
		if (take_record(l, sdr, buf, (unsigned)len, want))
			break;
		if (next == 0xffff || next == id) {
			snprintf(why, why_size, strcmp(want, "auto") == 0 ?
				 "the BMC has neither DCMI power readings nor a power sensor (Watts) in its SDR" :
				 "the BMC's SDR has no power sensor (Watts) named \"%s\"",
				 want);
			ret = -ENOENT;
			break;
		}
		id = next;
	}
	l->fi->ipmi_sdr_ctx_destroy(sdr);
	return ret;
}

/* 0, or -EIO when the sensor could not be read (or has no reading). */
int
ceems_bmc_sdr_read(struct bmc_link *l, struct ceems_bmc_reading *r, char *why,
	    size_t why_size)
{
	fiid_obj_t obj =
		l->fi->fiid_obj_create(l->fi->tmpl_cmd_get_sensor_reading_rs);
	uint64_t raw = 0, unavailable = 1;
	double value;
	int ret = 0;

	if (obj == NULL)
		return -ENOMEM;
	if (l->fi->ipmi_cmd_get_sensor_reading(l->ctx, l->sensor_number, obj) < 0) {
		ceems_bmc_link_why(l, "Get Sensor Reading", why, why_size);
		ret = -EIO;
	} else if (l->fi->FIID_OBJ_GET(obj, "sensor_reading", &raw) < 0 ||
		   l->fi->FIID_OBJ_GET(obj, "reading_state", &unavailable) < 0 ||
		   unavailable != 0) {
		snprintf(why, why_size, "sensor \"%s\" has no reading",
			 l->sensor_id);
		ret = -EIO;
	} else if (l->fi->ipmi_sensor_decode_value(l->r_exponent, l->b_exponent,
			l->m, l->b, l->linearization, l->analog_data_format,
			(uint8_t)raw, &value) < 0) {
		snprintf(why, why_size, "sensor \"%s\": undecodable reading",
			 l->sensor_id);
		ret = -EIO;
	} else {
		r->origin = CEEMS_BMC_SDR;
		r->watts = value;
	}
	l->fi->fiid_obj_destroy(obj);
	return ret;
}

#endif
