/* ipmi_sim_dcmi.c - DCMI Get Power Reading for OpenIPMI's ipmi_sim, which
 * has no DCMI of its own: a module that ipmi_sim loads ("loadlib" in its
 * lan.conf, tests/harness/bmc.sh) and that answers the DCMI group
 * extension (0xdc).  Each Get Power Reading reads the file named by the
 * module's options, "WATTS STAMP ACTIVE" (decimal: the current power, the
 * BMC's time stamp in seconds, 1 when the power measurement is active),
 * so that a test sets the BMC's answer while the agent reads it: a new
 * power, the same stamp again (a stale reading), 0 W or an inactive
 * measurement (a BMC without a meter).  Other DCMI commands, and a file
 * that cannot be read, get "invalid command".
 *
 * ipmi_sim allows the group extensions to an admin session only (a real
 * BMC's DCMI Get Power Reading needs user privilege): its tests set
 * bmc_privilege = admin. */
#include <stdio.h>
#include <string.h>

#include <OpenIPMI/serv.h>
#include <OpenIPMI/mcserv.h>

#define DCMI_GROUP 0xdc
#define DCMI_GET_POWER_READING 0x02
#define CC_INVALID_COMMAND 0xc1
#define DCMI_PERIOD_MS 1000

static char reading_path[512];

static void
put_le(unsigned char *p, unsigned value, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(value >> (8 * i));
}

static void
get_power_reading(lmc_data_t *mc, msg_t *msg, unsigned char *rdata,
		  unsigned int *rdata_len, void *cb_data)
{
	unsigned watts, stamp, active;
	FILE *f;
	int n = 0;

	(void)mc;
	(void)cb_data;
	rdata[0] = CC_INVALID_COMMAND;
	*rdata_len = 1;
	if (msg->cmd != DCMI_GET_POWER_READING)
		return;
	f = fopen(reading_path, "re");
	if (f == NULL)
		return;
	n = fscanf(f, "%u %u %u", &watts, &stamp, &active);
	fclose(f);
	if (n != 3 || watts > 0xffff)
		return;
	/* Completion code, group, current, min, max and average power, the
	 * stamp, the statistics period, the state (bit 6: active). */
	memset(rdata, 0, 19);
	rdata[1] = DCMI_GROUP;
	put_le(rdata + 2, watts, 2);
	put_le(rdata + 4, watts, 2);
	put_le(rdata + 6, watts, 2);
	put_le(rdata + 8, watts, 2);
	put_le(rdata + 10, stamp, 4);
	put_le(rdata + 14, DCMI_PERIOD_MS, 4);
	rdata[18] = active ? 0x40 : 0;
	*rdata_len = 19;
}

int ipmi_sim_module_init(sys_data_t *sys, const char *options);

int
ipmi_sim_module_init(sys_data_t *sys, const char *options)
{
	(void)sys;
	if (options == NULL || strlen(options) >= sizeof(reading_path))
		return -1;
	memcpy(reading_path, options, strlen(options) + 1);
	ipmi_emu_register_group_extension_handler(DCMI_GROUP, get_power_reading,
						  NULL);
	return 0;
}
