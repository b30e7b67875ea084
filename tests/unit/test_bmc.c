/* test_bmc.c - the BMC source's pure parts: the curve of readings
 * (trapezoid, the last power held and corrected, stale and garbage
 * readings, gaps after a silence, a new baseline after a loss), the
 * credentials file (parse, and the refusal of a file others can read or
 * a symlink), and the judgement of DCMI answers (inactive, 0 W). */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/bmc.h"
#include "../tap.h"

#define SEC 1000000000ULL

static struct ceems_bmc_reading
sdr(double w)
{
	return (struct ceems_bmc_reading){ .origin = CEEMS_BMC_SDR, .watts = w };
}

static struct ceems_bmc_reading
dcmi(double w, uint32_t stamp)
{
	return (struct ceems_bmc_reading){ .origin = CEEMS_BMC_DCMI, .watts = w,
					   .have_stamp = true, .stamp = stamp };
}

static void
test_constant(void)
{
	struct ceems_bmc_curve c;
	struct ceems_bmc_reading r = sdr(200);
	double j = -1;

	ceems_bmc_curve_init(&c, 5 * SEC, 0);
	ok(ceems_bmc_curve_take(&c, SEC / 2, &j) == CEEMS_GAP_FIRST_READ,
	   "no reading yet: the first tick is a gap");
	is_int(ceems_bmc_curve_reading(&c, &r, SEC), CEEMS_BMC_FRESH,
	       "a first reading is fresh");
	ok(ceems_bmc_curve_take(&c, 2 * SEC, &j) == CEEMS_GAP_FIRST_READ,
	   "the baseline's tick is a gap");
	is_int(ceems_bmc_curve_take(&c, 3 * SEC, &j), CEEMS_GAP_NONE,
	       "then the held power measures");
	is_near(j, 200, 1e-9, "200 W held for 1 s is 200 J");
	ceems_bmc_curve_reading(&c, &r, 3 * SEC + SEC / 2);
	is_int(ceems_bmc_curve_take(&c, 4 * SEC, &j), CEEMS_GAP_NONE,
	       "a tick after a reading measures");
	is_near(j, 200, 1e-9, "constant power: no correction");
}

/* A ramp read every 1 s, ticks every 0.3 s: the sum over the ticks is the
 * trapezoid integral of the readings, whatever the phase. */
static void
test_ramp_sum(void)
{
	struct ceems_bmc_curve c;
	struct ceems_bmc_reading r;
	double sum = 0, j, want = 0, prev_w = 0;
	uint64_t t, next_read = SEC, last_read = 0;
	bool negative = false;

	ceems_bmc_curve_init(&c, 10 * SEC, 0);
	for (t = SEC / 10; t <= 20 * SEC; t += SEC / 10) {
		if (t == next_read) {
			double w = 100 + 10 * (double)(t / SEC);

			if (t / SEC == 12)
				w = 50;		/* a drop: a negative correction */
			r = sdr(w);
			ceems_bmc_curve_reading(&c, &r, t);
			if (last_read >= 2 * SEC)
				want += (prev_w + w) / 2 * (double)(t - last_read) / 1e9;
			prev_w = w;
			last_read = t;
			next_read += SEC;
		}
		if (t % (3 * SEC / 10) == 0 &&
		    ceems_bmc_curve_take(&c, t, &j) == CEEMS_GAP_NONE) {
			sum += j;
			negative |= j < 0;
		}
	}
	/* Up to the last tick (19.8 s) the last reading (19 s) was held;
	 * the reading at 20 s corrects it at the next take. */
	ceems_bmc_curve_take(&c, 20 * SEC + SEC / 10, &j);
	sum += j;
	want += prev_w * 0.1;
	ok(!negative, "no tick gets negative energy");
	/* The baseline (1 s, 110 W) had its tick (1.2 s) a gap: the line
	 * counts from 1.2 s (112 W) to the next reading (2 s, 120 W). */
	want += (112 + 120) / 2.0 * 0.8;
	is_near(sum, want, 1e-6,
		"the ticks add up to the trapezoid integral of the readings");
}

static void
test_stale_garbage(void)
{
	struct ceems_bmc_curve c;
	struct ceems_bmc_reading r;
	double j;

	ceems_bmc_curve_init(&c, 3 * SEC, 0);
	r = dcmi(300, 77);
	ceems_bmc_curve_reading(&c, &r, SEC);
	ceems_bmc_curve_take(&c, SEC, &j);
	r = dcmi(500, 77);
	is_int(ceems_bmc_curve_reading(&c, &r, 2 * SEC), CEEMS_BMC_STALE,
	       "the same DCMI stamp twice is a stale reading");
	is_int(ceems_bmc_curve_take(&c, 2 * SEC, &j), CEEMS_GAP_NONE,
	       "a stale reading is no gap while the last one holds");
	is_near(j, 300, 1e-9, "and its value is not used as new");
	r = sdr(0);
	is_int(ceems_bmc_curve_reading(&c, &r, 2 * SEC), CEEMS_BMC_GARBAGE, "0 W is garbage");
	r = sdr(NAN);
	is_int(ceems_bmc_curve_reading(&c, &r, 2 * SEC), CEEMS_BMC_GARBAGE, "NaN is garbage");
	r = sdr(-5);
	is_int(ceems_bmc_curve_reading(&c, &r, 2 * SEC), CEEMS_BMC_GARBAGE, "negative is garbage");
	r = sdr(1e6);
	is_int(ceems_bmc_curve_reading(&c, &r, 2 * SEC), CEEMS_BMC_GARBAGE, "1 MW is garbage");
	r = sdr(400);
	is_int(ceems_bmc_curve_reading(&c, &r, SEC / 2), CEEMS_BMC_GARBAGE,
	       "a reading older than the last one is garbage");
	is_int(ceems_bmc_curve_take(&c, 5 * SEC, &j), CEEMS_GAP_READ_ERROR,
	       "4 s after the last fresh reading (hold 3 s): a gap");
	r = dcmi(999, 77);
	is_int(ceems_bmc_curve_reading(&c, &r, 5 * SEC + SEC / 2), CEEMS_BMC_STALE,
	       "after the gap, the same stamp is still not a new reading");
	r = dcmi(310, 78);
	ceems_bmc_curve_reading(&c, &r, 6 * SEC);
	is_int(ceems_bmc_curve_take(&c, 7 * SEC, &j), CEEMS_GAP_READ_ERROR,
	       "the reading after a silence is a new baseline: its tick is a gap");
	is_int(ceems_bmc_curve_take(&c, 8 * SEC, &j), CEEMS_GAP_NONE,
	       "then it measures");
	is_near(j, 310, 1e-9, "from the new baseline only");
}

static void
test_lost(void)
{
	struct ceems_bmc_curve c;
	struct ceems_bmc_reading r = sdr(100);
	double j;

	ceems_bmc_curve_init(&c, 10 * SEC, 0);
	ceems_bmc_curve_reading(&c, &r, 0);
	ceems_bmc_curve_take(&c, SEC, &j);
	ceems_bmc_curve_take(&c, 2 * SEC, &j);
	ceems_bmc_curve_lost(&c, CEEMS_GAP_READ_ERROR);
	is_int(ceems_bmc_curve_take(&c, 3 * SEC, &j), CEEMS_GAP_READ_ERROR,
	       "a failed read: the tick is a gap, not the old power held");
	r = sdr(150);
	ceems_bmc_curve_reading(&c, &r, 3 * SEC + SEC / 2);
	is_int(ceems_bmc_curve_take(&c, 4 * SEC, &j), CEEMS_GAP_READ_ERROR,
	       "the first reading after a loss is a baseline");
	r = sdr(250);
	ceems_bmc_curve_reading(&c, &r, 4 * SEC + SEC / 2);
	is_int(ceems_bmc_curve_take(&c, 5 * SEC, &j), CEEMS_GAP_NONE, "then it measures");
	/* [4, 4.5] on the line 150 -> 250 (200..250), then 250 held. */
	is_near(j, (200 + 250) / 2.0 * 0.5 + 250 * 0.5, 1e-9,
		"nothing is interpolated across the gap");
}

static void
test_credentials(void)
{
	struct ceems_bmc_credentials cr;
	char why[256], dir[] = "/tmp/ceems-test-bmc-XXXXXX", path[300], link[300];
	int fd;

	is_int(ceems_bmc_creds_parse("# BMC\nusername admin\npassword s3cret pw\n",
					   &cr, why, sizeof(why)), 0, "credentials parse");
	is_str(cr.username, "admin", "user name");
	is_str(cr.password, "s3cret pw", "the password is the rest of the line");
	is_int(ceems_bmc_creds_parse("username admin\n", &cr, why, sizeof(why)),
	       -EINVAL, "a password is needed");
	is_int(ceems_bmc_creds_parse("username admin\npassword 123456789012345678901\n",
					   &cr, why, sizeof(why)),
	       -EINVAL, "a password over 20 bytes is refused");
	ok(strstr(why, "123456") == NULL, "and the reason does not quote it");
	is_int(ceems_bmc_creds_parse("user admin\npassword x\n", &cr, why, sizeof(why)),
	       -EINVAL, "an unknown line is refused");

	if (mkdtemp(dir) == NULL) {
		ok(false, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/creds", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || write(fd, "username u\npassword p\n", 22) != 22)
		ok(false, "write %s", path);
	close(fd);
	is_int(ceems_bmc_creds_load(path, &cr, why, sizeof(why)), 0,
	       "a 0600 file of this user loads");
	is_str(cr.password, "p", "its password");
	chmod(path, 0640);
	is_int(ceems_bmc_creds_load(path, &cr, why, sizeof(why)), -EPERM,
	       "a file the group can read is refused");
	ok(strstr(why, "chmod 600") != NULL, "the reason says what to do (%s)", why);
	chmod(path, 0600);
	if (symlink(path, link) < 0)
		ok(false, "symlink");
	is_int(ceems_bmc_creds_load(link, &cr, why, sizeof(why)), -ELOOP,
	       "a symlink is not followed");
	unlink(link);
	unlink(path);
	rmdir(dir);
}

static void
test_dcmi_judge(void)
{
	char why[128];

	is_int(ceems_bmc_ipmi_dcmi_judge(true, 250, 1, why, sizeof(why)), 0,
	       "an active DCMI reading is usable");
	is_int(ceems_bmc_ipmi_dcmi_judge(false, 250, 1, why, sizeof(why)), -ENODATA,
	       "an inactive power measurement is no reading");
	is_int(ceems_bmc_ipmi_dcmi_judge(true, 0, 1, why, sizeof(why)), -ENODATA,
	       "a BMC answering 0 W has no meter");
}

int
main(void)
{
	test_constant();
	test_ramp_sum();
	test_stale_garbage();
	test_lost();
	test_credentials();
	test_dcmi_judge();
	return done_testing();
}
