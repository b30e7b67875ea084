/* agent_status.c - the node agent's `status' reply, from the totals the
 * ticks add up (see agent_status.h). */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agent_status.h"
#include "base/json_util.h"

void
agent_status_totals_add(struct agent_totals *tot, const struct ceems_ledger_tick *t,
		 uint64_t now)
{
	if (t == NULL || now <= tot->last_ns)
		return;
	tot->last_ns = now;
	tot->ticks++;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!t->measured[d])
			continue;
		tot->measured[d] = true;
		tot->delta_j[d] += t->delta_j[d];
		tot->system_j[d] += t->system_j[d] + t->restated_system_j[d];
		tot->idle_j[d] += t->idle_j[d] + t->restated_idle_j[d];
		/* Never negative energy: what the system cannot give back
		 * of a restatement is said, not subtracted. */
		if (tot->system_j[d] < 0) {
			tot->restated_over_j[d] += -tot->system_j[d];
			tot->system_j[d] = 0;
		}
		if (t->gap[d] != CEEMS_GAP_NONE)
			tot->gap_ticks[d]++;
	}
	tot->residual_clamped_j += t->residual_clamped_j;
}

static void
add_domain_totals(struct json_object *energy, const struct agent_totals *t, int d)
{
	struct json_object *o = json_object_new_object();

	if (o == NULL)
		return;
	json_object_object_add(o, "delta_j", ceems_json_util_double(t->delta_j[d]));
	json_object_object_add(o, "system_j", ceems_json_util_double(t->system_j[d]));
	json_object_object_add(o, "idle_j", ceems_json_util_double(t->idle_j[d]));
	json_object_object_add(o, "gap_ticks", json_object_new_int64((int64_t)t->gap_ticks[d]));
	if (t->restated_over_j[d] > 0)
		json_object_object_add(o, "restated_over_j",
				       ceems_json_util_double(t->restated_over_j[d]));
	json_object_object_add(energy, ceems_job_figures_energy_domain_name(d), o);
}

static void
add_int(struct json_object *obj, const char *key, int64_t v)
{
	json_object_object_add(obj, key, json_object_new_int64(v));
}

int
agent_status_reply(const struct agent_status_in *in, char *buf, size_t size)
{
	struct json_object *obj = json_object_new_object();
	struct json_object *energy = json_object_new_object();
	const struct agent_totals *tot = in->totals;
	const char *text;
	size_t len;

	if (obj == NULL || energy == NULL) {
		json_object_put(obj);
		json_object_put(energy);
		return -ENOMEM;
	}
	json_object_object_add(obj, "ok", json_object_new_boolean(1));
	json_object_object_add(obj, "version", json_object_new_string(PACKAGE_VERSION));
	add_int(obj, "pid", getpid());
	json_object_object_add(obj, "uptime_s",
			       ceems_json_util_double((double)in->uptime_ns / 1e9));
	add_int(obj, "jobs", (int64_t)ceems_agent_njobs(in->agent));
	add_int(obj, "finishing", (int64_t)ceems_agent_nfinishing(in->agent));
	add_int(obj, "max_jobs", in->config->max_jobs);
	add_int(obj, "clients", in->clients);
	json_object_object_add(obj, "interval_s",
			       ceems_json_util_double((double)in->config->interval_ns / 1e9));
	json_object_object_add(obj, "tick_s",
			       ceems_json_util_double((double)in->tick_period_ns / 1e9));
	json_object_object_add(obj, "source_interval_s",
			       ceems_json_util_double((double)ceems_agent_open_source_interval_ns(in->agent) / 1e9));
	add_int(obj, "ticks", (int64_t)tot->ticks);
	add_int(obj, "requests", (int64_t)in->requests);
	add_int(obj, "refusals", (int64_t)in->refusals);
	add_int(obj, "clients_refused", (int64_t)in->clients_refused);
	/* Only the domains the node measures: unknown is not zero. */
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (tot->measured[d])
			add_domain_totals(energy, tot, d);
	json_object_object_add(obj, "energy", energy);
	json_object_object_add(obj, "residual_clamped_j",
			       ceems_json_util_double(tot->residual_clamped_j));
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
						   JSON_C_TO_STRING_NOSLASHESCAPE);
	len = text != NULL ? strlen(text) : 0;
	if (text == NULL || len >= size) {
		json_object_put(obj);
		return -ENOSPC;
	}
	memcpy(buf, text, len + 1);
	json_object_put(obj);
	return (int)len;
}
