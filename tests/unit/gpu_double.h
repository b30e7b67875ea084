/* gpu_double.h - what the GPU unit tests share: where the built library
 * doubles are, a scenario file the doubles read (CEEMS_GPU_DOUBLE_SCENARIO)
 * rewritten by rename as the real tests do, and the log lines libceems
 * wrote, to check that a problem is logged once. */
#ifndef CEEMS_TEST_GPU_DOUBLE_H
#define CEEMS_TEST_GPU_DOUBLE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"

static char gpu_scenario_dir[] = "/tmp/ceems-gpu-test.XXXXXX";
static char gpu_scenario_file[512];
static char gpu_log_text[8192];
static int gpu_log_warnings;

static void
gpu_log_capture(enum ceems_log_level level, const char *msg, void *arg)
{
	size_t len = strlen(gpu_log_text);

	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		gpu_log_warnings++;
	if (len + strlen(msg) + 2 < sizeof(gpu_log_text))
		snprintf(gpu_log_text + len, sizeof(gpu_log_text) - len,
			 "%s\n", msg);
}

static void
gpu_log_reset(void)
{
	gpu_log_text[0] = '\0';
	gpu_log_warnings = 0;
}

/* How many times NEEDLE is in the captured log. */
static int
gpu_log_count(const char *needle)
{
	const char *p = gpu_log_text;
	int n = 0;

	while ((p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

/* The built double NAME ("libnvml-double.so"). */
static const char *
gpu_double_path(const char *name)
{
	static char buf[4][1024];
	static int next;
	const char *top = getenv("CEEMS_TOP_BUILDDIR");
	char *p = buf[next++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/tests/doubles/.libs/%s",
		 top != NULL ? top : ".", name);
	return p;
}

static void
gpu_double_setup(void)
{
	if (mkdtemp(gpu_scenario_dir) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	snprintf(gpu_scenario_file, sizeof(gpu_scenario_file),
		 "%s/scenario", gpu_scenario_dir);
	setenv("CEEMS_GPU_DOUBLE_SCENARIO", gpu_scenario_file, 1);
	ceems_log_set_handler(gpu_log_capture, NULL);
	ceems_log_set_level(CEEMS_LOG_INFO);
}

/* Replace the scenario by TEXT (a new file renamed over the old). */
static void
gpu_scenario(const char *text)
{
	char tmp[600];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", gpu_scenario_file);
	f = fopen(tmp, "w");
	if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0 ||
	    rename(tmp, gpu_scenario_file) < 0) {
		printf("Bail out! scenario %s: %s\n", tmp, strerror(errno));
		exit(1);
	}
}

static void
gpu_double_teardown(void)
{
	unlink(gpu_scenario_file);
	rmdir(gpu_scenario_dir);
}

#endif
