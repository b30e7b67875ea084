/* checks_text.c - arbitrary bytes in every string field of the job
 * record and of the agent's requests and replies, as a fuzz check: the
 * encoders never fail and always write valid UTF-8 JSON, the decoders
 * take it back, and each string comes back as lib/base/text.h promises (clean
 * text as it was; anything else escaped and cut between characters).
 * The input is cut at its NUL bytes into the strings, one per field in
 * turn.  Shared by tests/fuzz/fuzz_text.c and
 * tests/unit/test_fuzz_parsers.c like the checks of checks.c. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "base/json_util.h"
#include "record/record.h"
#include "base/text.h"

#include "checks.h"

/* The next of the NUL-separated strings of the input, or "" when they
 * are used up. */
struct pieces {
	const char *data;
	size_t len, at;
};

static const char *
next_piece(struct pieces *p)
{
	const char *s;

	if (p->at > p->len)
		return "";
	s = p->data + p->at;
	p->at += strlen(s) + 1;	/* DATA[LEN] is a NUL */
	return s;
}

/* FIELD (SIZE bytes) filled from the next piece: raw bytes cut to fit
 * when RAW (what a caller that skipped the escape hands over), else
 * through ceems_text_escape (what the plugin does).  *ORIG keeps the
 * piece. */
static void
fill(char *field, size_t size, struct pieces *p, bool raw, const char **orig)
{
	const char *s = next_piece(p);
	size_t n = strlen(s);

	*orig = s;
	if (raw) {
		if (n >= size)
			n = size - 1;
		memcpy(field, s, n);
		field[n] = '\0';
	} else {
		ceems_text_escape(field, size, s, n, NULL);
	}
}

/* Is what came back what text.h promises for what was sent (SENT, in a
 * field of SIZE bytes)?  And when SENT was escaped from ORIG, does
 * unescaping it give ORIG's first bytes? */
static bool
came_back(const char *got, const char *sent, size_t size, const char *orig,
	  bool raw)
{
	char *want = malloc(size), *bytes;
	bool same;
	long n;

	if (want == NULL)
		return true;
	ceems_text_safe(want, size, sent);
	same = strcmp(got, want) == 0 && ceems_text_is_clean(got);
	free(want);
	if (!same || raw)
		return same;
	/* Escaped once, where it entered: nothing is escaped again, and the
	 * way back gives the original's first bytes. */
	if (strcmp(got, sent) != 0)
		return false;
	bytes = malloc(size);
	if (bytes == NULL)
		return true;
	n = ceems_text_unescape(bytes, size, got);
	same = n >= 0 && strncmp(bytes, orig, (size_t)n) == 0 &&
	       strlen(bytes) == (size_t)n;
	free(bytes);
	return same;
}

static bool
strict_json(const char *text, size_t len)
{
	struct json_object *obj = ceems_json_util_parse(text, len, true, NULL, 0);

	json_object_put(obj);
	return obj != NULL;
}

#define META_TEXT(f) { #f, offsetof(struct ceems_job_meta, f), \
		       sizeof(((struct ceems_job_meta *)0)->f) }
static const struct {
	const char *name;
	size_t offset, size;
} meta_text[] = {
	META_TEXT(cluster), META_TEXT(node), META_TEXT(user),
	META_TEXT(account), META_TEXT(partition), META_TEXT(qos),
	META_TEXT(name), META_TEXT(nodes),
};
#define NMETA_TEXT (sizeof(meta_text) / sizeof(meta_text[0]))

static void
fill_meta(struct ceems_job_meta *m, struct pieces *p, bool raw,
	  const char **orig)
{
	for (size_t i = 0; i < NMETA_TEXT; i++)
		fill((char *)m + meta_text[i].offset, meta_text[i].size, p, raw,
		     &orig[i]);
}

static bool
meta_came_back(const struct ceems_job_meta *got,
	       const struct ceems_job_meta *sent, const char **orig, bool raw)
{
	for (size_t i = 0; i < NMETA_TEXT; i++)
		if (!came_back((const char *)got + meta_text[i].offset,
			       (const char *)sent + meta_text[i].offset,
			       meta_text[i].size, orig[i], raw))
			return false;
	return true;
}

static struct ceems_job_record record, back;
static char text[CEEMS_RECORD_MAX + 1];

/* A finished job's record whose every string is from the input. */
static const char *
check_record(const char *data, size_t len, bool raw)
{
	struct pieces p = { data, len, 0 };
	const char *orig[NMETA_TEXT + 6];
	struct ceems_job_ledger *l = &record.report.ledger;
	char err[256];
	int n;

	memset(&record, 0, sizeof(record));
	ceems_job_meta_init(&record.meta);
	record.written_at = 1763790611;
	snprintf(record.finalized_by, sizeof(record.finalized_by), "extern");
	record.meta.jobid = record.report.jobid = 42;
	record.meta.uid = record.report.uid = 1000;
	record.meta.start_time = 1763790010;
	record.meta.end_time = 1763790610;
	ceems_job_figures_ledger_init(l);
	fill_meta(&record.meta, &p, raw, orig);
	record.nnotes = 1;
	fill(record.notes[0].id, sizeof(record.notes[0].id), &p, raw,
	     &orig[NMETA_TEXT]);
	fill(record.notes[0].text, sizeof(record.notes[0].text), &p, raw,
	     &orig[NMETA_TEXT + 1]);
	/* Emissions (and their factor's strings) are written beside a
	 * measured energy only. */
	l->measured[CEEMS_DOMAIN_PACKAGE] = true;
	l->covered_s[CEEMS_DOMAIN_PACKAGE] = 600;
	l->lifetime_s = 600;
	l->have_emissions = true;
	fill(l->factor.source, sizeof(l->factor.source), &p, raw,
	     &orig[NMETA_TEXT + 2]);
	fill(l->factor.zone, sizeof(l->factor.zone), &p, raw,
	     &orig[NMETA_TEXT + 3]);
	record.report.ngpus = 1;
	record.report.gpus[0].share = 1;
	record.report.gpus[0].instance = -1;
	fill(record.report.gpus[0].uuid, sizeof(record.report.gpus[0].uuid), &p,
	     raw, &orig[NMETA_TEXT + 4]);
	fill(record.report.gpus[0].bus_id, sizeof(record.report.gpus[0].bus_id),
	     &p, raw, &orig[NMETA_TEXT + 5]);
	/* A GPU with no name at all is no GPU: the decoder refuses it. */
	if (record.report.gpus[0].uuid[0] == '\0' &&
	    record.report.gpus[0].bus_id[0] == '\0')
	{
		snprintf(record.report.gpus[0].bus_id,
			 sizeof(record.report.gpus[0].bus_id), "0000:3b:00.0");
		orig[NMETA_TEXT + 5] = record.report.gpus[0].bus_id;
	}
	n = ceems_record_encode(&record, text, sizeof(text));
	if (n <= 0)
		return "ceems_record_encode: a record with odd strings does not encode";
	if (!strict_json(text, (size_t)n))
		return "ceems_record_encode: not valid UTF-8 JSON";
	if (ceems_record_decode(text, (size_t)n, &back, err, sizeof(err)) != 0)
		return "ceems_record_decode: refuses what ceems_record_encode wrote";
	if (!meta_came_back(&back.meta, &record.meta, orig, raw) ||
	    back.nnotes != 1 ||
	    !came_back(back.notes[0].id, record.notes[0].id,
		       sizeof(record.notes[0].id), orig[NMETA_TEXT], raw) ||
	    !came_back(back.notes[0].text, record.notes[0].text,
		       sizeof(record.notes[0].text), orig[NMETA_TEXT + 1], raw) ||
	    !came_back(back.report.ledger.factor.source, l->factor.source,
		       sizeof(l->factor.source), orig[NMETA_TEXT + 2], raw) ||
	    !came_back(back.report.ledger.factor.zone, l->factor.zone,
		       sizeof(l->factor.zone), orig[NMETA_TEXT + 3], raw) ||
	    back.report.ngpus != 1 ||
	    !came_back(back.report.gpus[0].uuid, record.report.gpus[0].uuid,
		       sizeof(record.report.gpus[0].uuid), orig[NMETA_TEXT + 4], raw) ||
	    !came_back(back.report.gpus[0].bus_id, record.report.gpus[0].bus_id,
		       sizeof(record.report.gpus[0].bus_id), orig[NMETA_TEXT + 5], raw))
		return "record: a string did not come back as text.h says";
	return NULL;
}

static struct ceems_agent_request req, req_back;

/* A deregistration carrying the job's metadata. */
static const char *
check_deregister(const char *data, size_t len, bool raw)
{
	struct pieces p = { data, len, 0 };
	const char *orig[NMETA_TEXT];
	char err[256];
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_DEREGISTER;
	req.jobid = 42;
	req.have_meta = true;
	ceems_job_meta_init(&req.meta);
	req.meta.jobid = 42;
	req.meta.uid = 1000;
	fill_meta(&req.meta, &p, raw, orig);
	n = ceems_agent_proto_request_encode(&req, text, CEEMS_AGENT_MSG_MAX);
	if (n <= 0)
		return "ceems_agent_proto_request_encode: a deregistration does not encode";
	if (!strict_json(text, (size_t)n))
		return "ceems_agent_proto_request_encode: not valid UTF-8 JSON";
	if (ceems_agent_proto_request_decode(text, (size_t)n, &req_back, err,
				       sizeof(err)) != 0 || !req_back.have_meta)
		return "ceems_agent_proto_request_decode: refuses a deregistration "
		       "ceems_agent_proto_request_encode wrote";
	if (!meta_came_back(&req_back.meta, &req.meta, orig, raw))
		return "deregister: a string did not come back as text.h says";
	return NULL;
}

/* A registration: the cluster, and a cgroup path whose component above
 * the job's is from the input ('/' left out: it would be a path).  The
 * path is sent whole: escaped it would mean another directory, which
 * the agent would not find (a gap, never a lost job). */
static const char *
check_register(const char *data, size_t len, bool raw)
{
	struct pieces p = { data, len, 0 };
	struct ceems_agent_job_spec *s = &req.spec;
	const char *cluster, *component;
	char path[CEEMS_CGROUP_PATH_MAX], err[256];
	size_t o;
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_REGISTER;
	req.jobid = s->jobid = 42;
	s->uid = 1000;
	s->cgroup.version = CEEMS_CGROUP_V2;
	fill(s->cluster, sizeof(s->cluster), &p, raw, &cluster);
	component = next_piece(&p);
	memcpy(path, "/s", 2);
	o = 2;
	/* Short enough that even escaped it fits, whole: a path cut to
	 * its field may end in '/', which the decoder rightly refuses. */
	for (const char *c = component; *c != '\0' && o < 100; c++)
		if (*c != '/')
			path[o++] = *c;
	snprintf(path + o, sizeof(path) - o, "/job_42");
	fill(s->cgroup.unified, sizeof(s->cgroup.unified),
	     &(struct pieces){ path, strlen(path), 0 }, raw, &component);
	n = ceems_agent_proto_request_encode(&req, text, CEEMS_AGENT_MSG_MAX);
	if (n <= 0)
		return "ceems_agent_proto_request_encode: a registration does not encode";
	if (!strict_json(text, (size_t)n))
		return "ceems_agent_proto_request_encode: not valid UTF-8 JSON";
	if (ceems_agent_proto_request_decode(text, (size_t)n, &req_back, err,
				       sizeof(err)) != 0)
		return "ceems_agent_proto_request_decode: refuses a registration "
		       "ceems_agent_proto_request_encode wrote";
	if (!came_back(req_back.spec.cluster, s->cluster, sizeof(s->cluster),
		       cluster, raw) ||
	    !came_back(req_back.spec.cgroup.unified, s->cgroup.unified,
		       sizeof(s->cgroup.unified), component, raw))
		return "register: a string did not come back as text.h says";
	return NULL;
}

/* A step request (its name is checked: only Slurm's step names pass)
 * and a refusal whose message is from the input. */
static const char *
check_step_and_error(const char *data, size_t len, bool raw)
{
	struct pieces p = { data, len, 0 };
	const char *orig;
	char err[CEEMS_AGENT_ERROR_MAX + 64];
	int n, r;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_STEP_START;
	req.jobid = 42;
	fill(req.step, sizeof(req.step), &p, raw, &orig);
	n = ceems_agent_proto_request_encode(&req, text, CEEMS_AGENT_MSG_MAX);
	if (n <= 0 || !strict_json(text, (size_t)n))
		return "ceems_agent_proto_request_encode: a step request is not valid JSON";
	r = ceems_agent_proto_request_decode(text, (size_t)n, &req_back, err, sizeof(err));
	if (r != 0 && r != -EINVAL)
		return "ceems_agent_proto_request_decode: undocumented return code";
	if (r == 0 && !came_back(req_back.step, req.step, sizeof(req.step), orig,
				 raw))
		return "step: the name did not come back as text.h says";
	orig = next_piece(&p);
	n = ceems_agent_proto_reply_error(-EINVAL, orig, text, CEEMS_AGENT_MSG_MAX);
	if (n <= 0 || !strict_json(text, (size_t)n))
		return "ceems_agent_proto_reply_error: not valid UTF-8 JSON";
	/* An empty message comes back as a sentence saying so: a refusal
	 * always says something. */
	if (ceems_agent_proto_reply_decode(text, (size_t)n, NULL, err, sizeof(err)) !=
	    -EINVAL || (orig[0] != '\0' &&
			!came_back(err, orig, CEEMS_AGENT_ERROR_MAX, orig, true)) ||
	    (orig[0] == '\0' && strstr(err, "without saying why") == NULL))
		return "ceems_agent_proto_reply_error: the message did not come back "
		       "as text.h says";
	return NULL;
}

const char *
fuzz_check_text(const char *data, size_t len)
{
	const char *problem = NULL;

	/* Strings as the plugin hands them over (escaped where they
	 * entered), then raw, as a caller that skipped the escape would. */
	for (int raw = 0; raw <= 1 && problem == NULL; raw++) {
		problem = check_record(data, len, raw);
		if (problem == NULL)
			problem = check_deregister(data, len, raw);
		if (problem == NULL)
			problem = check_register(data, len, raw);
		if (problem == NULL)
			problem = check_step_and_error(data, len, raw);
	}
	return problem;
}
