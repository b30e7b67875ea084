/* agent_idle_store.c - the node's learned idle power, kept across agent
 * restarts in STATE_DIR/idle-power.
 *
 * Why: learning takes quiet ticks or a varying load (agent_tick.c); a
 * restarted agent (an upgrade, a crash) on a node busy with steady jobs
 * may see neither for hours, and until then splits every joule by use
 * and flags every job.  The idle power is the hardware's, not the
 * agent's: the value an earlier agent learned is used from the first
 * tick, until this agent's own ticks teach one.
 *
 * The file is text, one line per domain:
 *     package 40.25 quiet 9c0f3a71d2e4b865
 * the watts, how they were learned (quiet or fit), and a key of what
 * measured them (the source's kind, its counters of the domain, the
 * node's CPUs): a value learned on other counters (a new sysfs_root, a
 * CPU added) is not used.  It is read like any outside input: a line
 * that does not parse, or a value out of range, is ignored with a
 * warning.  Written atomically (a temporary file, fsync, rename) when a
 * learned value moved by more than 1%, at most once a minute, and at
 * the agent's close. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/tick_path.h"

#define IDLE_STORE_NAME "idle-power"
#define IDLE_STORE_MAX 1024		/* bytes read: two short lines */
#define IDLE_STORE_MAX_W 1e7		/* 10 MW: no reading */
#define IDLE_STORE_MIN_NS 60000000000ULL
#define IDLE_STORE_MOVED 0.01

static const char *const domain_word[2] = { "package", "dram" };

static uint64_t
fnv1a(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The key of what measures domain D on this node: 0 when nothing does. */
static uint64_t
domain_key(const struct ceems_agent *a, int d)
{
	const struct ceems_energy_source *src;
	char cpus[32];
	uint64_t h = 0xcbf29ce484222325ULL;

	if (a->domain_source[d] < 0)
		return 0;
	src = a->sources[a->domain_source[d]];
	h = fnv1a(h, src->ops->kind);
	for (size_t i = 0; i < src->ncounters; i++)
		if ((int)src->counters[i].domain == d) {
			h = fnv1a(h, "/");
			h = fnv1a(h, src->counters[i].name);
		}
	snprintf(cpus, sizeof(cpus), "/cpus=%u", a->node_cpu.ncpus);
	return fnv1a(h, cpus);
}

/* The value domain D splits with now, when learned (here or by the
 * agent before: a restored value is kept as it came). */
static bool
learned_now(const struct ceems_agent *a, int d, double *w, const char **how)
{
	if (a->idle_source[d] == IDLE_RESTORED) {
		*w = a->idle_restored_w[d];
		*how = a->idle_restored_fit[d] ? "fit" : "quiet";
		return true;
	}
	if (a->idle_source[d] == IDLE_QUIET) {
		*w = a->idle[d].value;
		*how = "quiet";
		return true;
	}
	if (a->idle_source[d] == IDLE_FIT) {
		*w = a->idle_learned_w[d];
		*how = "fit";
		return true;
	}
	return false;
}

/* One line of the file into the agent, when it is sane, of this node's
 * counters and for a domain to learn. */
static void
take_line(struct ceems_agent *a, const char *line, const char *path)
{
	const double configured[2] = { a->config.idle_power_package_w,
				       a->config.idle_power_dram_w };
	char word[16], how[16], rest;
	double w;
	uint64_t key;
	int d;

	if (line[0] == '\0' || line[0] == '#')
		return;
	if (sscanf(line, "%15s %lf %15s %" SCNx64 " %c", word, &w, how, &key,
		   &rest) != 4 || !isfinite(w) || w <= 0 || w > IDLE_STORE_MAX_W ||
	    (strcmp(how, "quiet") != 0 && strcmp(how, "fit") != 0)) {
		ceems_warning("%s: a line that is not '<domain> <watts> quiet|fit <key>' ignored",
			      path);
		return;
	}
	for (d = 0; d < 2 && strcmp(word, domain_word[d]) != 0; d++)
		;
	if (d == 2) {
		ceems_warning("%s: unknown domain '%s' ignored", path, word);
		return;
	}
	if (configured[d] >= 0)
		return;		/* a configured value is the one used */
	if (key == 0 || key != domain_key(a, d)) {
		ceems_info("idle power of the %s kept by an earlier agent not used: it was learned on other counters or CPUs",
			   domain_word[d]);
		return;
	}
	a->idle_restored_w[d] = w;
	a->idle_restored_fit[d] = strcmp(how, "fit") == 0;
	a->idle_saved_w[d] = w;
	a->idle_source[d] = IDLE_RESTORED;
	ceems_info("idle power of the %s from the earlier agent: %.1f W (learned %s); used until this agent's ticks teach one",
		   domain_word[d], w,
		   strcmp(how, "quiet") == 0 ? "from quiet ticks" : "by regression");
}

void
ceems_agent_idle_store_load(struct ceems_agent *a)
{
	char path[CEEMS_CONFIG_PATH_MAX + sizeof(IDLE_STORE_NAME) + 1];
	char text[IDLE_STORE_MAX + 1];
	char *line, *save = NULL;
	ssize_t n;

	if (a->config.idle_power_package_w >= 0 && a->config.idle_power_dram_w >= 0)
		return;
	snprintf(path, sizeof(path), "%s/" IDLE_STORE_NAME, a->config.state_dir);
	n = ceems_fileio_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		if (n != -ENOENT)
			ceems_warning("%s: cannot read it (%s): the idle power is learned anew",
				      path, strerror((int)-n));
		return;
	}
	text[n] = '\0';
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save))
		take_line(a, line, path);
}

/* Whether a learned value moved by more than 1% from the one kept. */
static bool
moved_since_saved(const struct ceems_agent *a)
{
	for (int d = 0; d < 2; d++) {
		double w, saved = a->idle_saved_w[d];
		const char *how;

		if (learned_now(a, d, &w, &how) && w > 0 &&
		    (!(saved > 0) || fabs(w - saved) > IDLE_STORE_MOVED * saved))
			return true;
	}
	return false;
}

CEEMS_TICK_PATH void
ceems_agent_idle_store_save(struct ceems_agent *a, uint64_t now_ns, bool closing)
{
	char text[256];
	size_t len = 0;
	int err;

	if (!moved_since_saved(a) ||
	    (!closing && a->idle_saved_ns != 0 &&
	     now_ns - a->idle_saved_ns < IDLE_STORE_MIN_NS))
		return;
	a->idle_saved_ns = now_ns;
	text[0] = '\0';
	for (int d = 0; d < 2; d++) {
		double w;
		const char *how;

		int r;

		/* What load would refuse is not written. */
		if (!learned_now(a, d, &w, &how) || !(w > 0) ||
		    w > IDLE_STORE_MAX_W || domain_key(a, d) == 0)
			continue;
		r = snprintf(text + len, sizeof(text) - len,
			     "%s %.3f %s %016" PRIx64 "\n", domain_word[d], w,
			     how, domain_key(a, d));
		if (r > 0 && (size_t)r < sizeof(text) - len)
			len += (size_t)r;
	}
	err = ceems_fileio_replace(a->config.state_dir, IDLE_STORE_NAME, text);
	if (err < 0) {
		if (!a->idle_save_failed)
			ceems_warning("cannot keep the learned idle power in %s/" IDLE_STORE_NAME " (%s): a restarted agent will learn it anew",
				      a->config.state_dir, strerror(-err));
		a->idle_save_failed = true;
		return;
	}
	a->idle_save_failed = false;
	for (int d = 0; d < 2; d++) {
		double w;
		const char *how;

		if (learned_now(a, d, &w, &how))
			a->idle_saved_w[d] = w;
	}
}
