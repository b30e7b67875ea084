/* test_intensity.c - the node's carbon-intensity cache: the fixture's
 * rows and gap, the lookup at row edges and outside, refused files (each
 * with its line named), the size bound, and the atomic write read back. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/intensity.h"
#include "../tap.h"
#include "fixture.h"

static void
test_fixture(void)
{
	struct ceems_intensity_series s;
	const struct ceems_intensity_row *r;
	char err[200] = "";
	int ret;

	ret = ceems_intensity_load(fixture_path("intensity/hourly.txt"), &s,
				   err, sizeof(err));
	ok(ret == 0, "the fixture loads (%s)", err);
	is_str(s.zone, "FR", "zone");
	is_str(s.source, "test-grid", "source");
	is_int(s.nrows, 4, "four rows");
	r = ceems_intensity_at(&s, 1704067200);
	ok(r != NULL && r->g_per_kwh == 52.5, "first second of the first row");
	r = ceems_intensity_at(&s, 1704070799);
	ok(r != NULL && r->g_per_kwh == 52.5, "last second of the first row");
	r = ceems_intensity_at(&s, 1704070800);
	ok(r != NULL && r->g_per_kwh == 48, "valid_to is the next row's");
	r = ceems_intensity_at(&s, 1704077999);
	ok(r != NULL && r->g_per_kwh == 61.25, "third row");
	ok(ceems_intensity_at(&s, 1704078000) == NULL, "the gap is not covered");
	ok(ceems_intensity_at(&s, 1704081599) == NULL, "the gap's end either");
	r = ceems_intensity_at(&s, 1704081600);
	ok(r != NULL && r->g_per_kwh == 70, "the row after the gap");
	ok(ceems_intensity_at(&s, 1704067199) == NULL, "before the series");
	ok(ceems_intensity_at(&s, 1704085200) == NULL, "after the series");
	ceems_intensity_free(&s);
	ok(ceems_intensity_at(&s, 1704067200) == NULL, "an empty series");
}

static void
refused(const char *text, const char *want_err, const char *name)
{
	struct ceems_intensity_series s;
	char err[200] = "";
	int ret = ceems_intensity_parse(text, strlen(text), &s, err,
					sizeof(err));

	ok(ret == -EINVAL && s.rows == NULL && s.nrows == 0 &&
	   strstr(err, want_err) != NULL, "refused: %s (%s)", name, err);
}

static void
test_refused(void)
{
	refused("", "empty", "empty file");
	refused("ceems-intensity 2\nzone FR\nsource s\n", "line 1:",
		"another version");
	refused("ceems-intensity 1\nzone FR\nsource s\n0 10 1\n5 20 2\n",
		"line 5: rows must be sorted", "overlap");
	refused("ceems-intensity 1\nzone FR\nsource s\n0 10 1\n10 20 x\n",
		"line 5: g_per_kwh", "not a number");
	refused("ceems-intensity 1\nzone FR\nsource s\n0 10 10001\n",
		"line 4: g_per_kwh", "beyond any grid");
	refused("ceems-intensity 1\nzone FR\nsource s\n10 10 1\n",
		"line 4: valid_to must be after", "empty interval");
	refused("ceems-intensity 1\n0 10 1\n", "line 2: the zone and source",
		"rows before zone");
	refused("ceems-intensity 1\nzone FR\n", "no zone or no source",
		"no source");
	refused("ceems-intensity 1\nzone fr\nsource s\n", "line 2: zone",
		"lower-case zone");
	refused("ceems-intensity 1\nzone FR\nsource a/b\n", "line 3: source",
		"a slash in the source");
}

static void
test_too_big(const char *dir)
{
	char path[4096], err[200] = "";
	struct ceems_intensity_series s;
	char *big = calloc(1, CEEMS_INTENSITY_MAX_BYTES + 10);
	int fd;

	snprintf(path, sizeof(path), "%s/big", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	memset(big, '#', CEEMS_INTENSITY_MAX_BYTES + 10);
	ok(fd >= 0 && write(fd, big, CEEMS_INTENSITY_MAX_BYTES + 10) > 0,
	   "a big file written");
	close(fd);
	is_int(ceems_intensity_load(path, &s, err, sizeof(err)), -EFBIG,
	       "a file over the bound is refused unread");
	unlink(path);
	free(big);
}

static void
test_write(const char *dir)
{
	struct ceems_intensity_row rows[] = {
		{ 100, 200, 0.1 }, { 300, 400, 1234.5678 },
	};
	struct ceems_intensity_series s = { .zone = "DE", .source = "x-1",
					    .rows = rows, .nrows = 2 };
	struct ceems_intensity_series back;
	char path[4096], err[200] = "";
	struct stat st;

	snprintf(path, sizeof(path), "%s/cache", dir);
	is_int(ceems_intensity_write(path, &s), 0, "written");
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode 0644");
	is_int(ceems_intensity_load(path, &back, err, sizeof(err)), 0,
	       "read back");
	ok(back.nrows == 2 && back.rows[1].g_per_kwh == 1234.5678 &&
	   back.rows[0].valid_to == 200 && strcmp(back.source, "x-1") == 0,
	   "the same series");
	ceems_intensity_free(&back);
	strcpy(s.source, "bad source");
	is_int(ceems_intensity_write(path, &s), -EINVAL,
	       "a bad source is not written");
	unlink(path);
}

int
main(void)
{
	char dir[] = "/tmp/ceems-test-intensity-XXXXXX";

	if (mkdtemp(dir) == NULL)
		return 1;
	test_fixture();
	test_refused();
	test_too_big(dir);
	test_write(dir);
	rmdir(dir);
	return done_testing();
}
