#!/bin/sh
# check-model-includes.sh - what a job measured has one header, the
# measurement model's (measure.h), which the engine, the protocol, the
# record, the summary and ceems-sacct each include, so that none of them
# reaches the figures through another's header:
#   1. the record (record*) and the summary (summary*) include neither the
#      agent's engine (agent.h) nor its protocol (agent_proto*.h);
#   2. the protocol (agent_proto*) does not include the record (record.h):
#      the job's metadata has its own codec (job.h, job_json.c);
#   3. the job's report (struct ceems_agent_job_report) is declared in
#      measure.h and nowhere else;
#   4. the client's calls (agent_client.h) are all ceems_agent_client_*,
#      never to be taken for the engine's ceems_agent_register and kin.
# Headers are matched by name, with or without their lib/ folder.  Each
# hit names file:line.  TAP on stdout; `make check` runs it.
set -u

top=${CEEMS_TOP_SRCDIR:-.}

echo "1..4"
if [ ! -d "$top/lib" ]; then
	for n in 1 2 3 4; do
		echo "not ok $n - # SKIP no lib/ under $top"
	done
	exit 0
fi

# includes FILES... : "file:line:#include ..." of every quoted include.
includes() {
	grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$@" \
	    /dev/null 2>/dev/null
}

# The files of lib/ whose base name matches the shell pattern $1.
lib_files() {
	find "$top/lib" -type f \( -name '*.c' -o -name '*.h' \) \
	    -name "$1" | sort
}

report() {	# N DESCRIPTION HITS
	if [ -z "$3" ]; then
		echo "ok $1 - $2"
	else
		echo "not ok $1 - $2"
		printf '%s\n' "$3" | sed "s|^$top/||; s/^/# /"
	fi
}

files=$(lib_files 'record*'; lib_files 'summary*')
hits=$(includes $files | grep -E '"([a-z]+/)?(agent|agent_proto[a-z_]*)\.h"')
report 1 "the record and the summary include neither agent.h nor agent_proto*.h" "$hits"

files=$(lib_files 'agent_proto*')
hits=$(includes $files | grep -E '"([a-z]+/)?record\.h"')
report 2 "the protocol does not include record.h" "$hits"

hits=$(grep -rn --include='*.h' '^struct ceems_agent_job_report {' "$top/lib" |
    grep -v '/measure\.h:')
found=$(grep -rln --include='measure.h' '^struct ceems_agent_job_report {' "$top/lib")
if [ -z "$found" ]; then
	hits="${hits}${hits:+
}measure.h does not declare struct ceems_agent_job_report"
fi
report 3 "the job's report is declared in measure.h alone" "$hits"

client=$(lib_files 'agent_client.h')
if [ -z "$client" ]; then
	hits="no agent_client.h under lib/"
else
	hits=$(grep -Hn '^[a-z].*[( ]\**ceems_[a-z_]*(' $client |
	    grep -v 'ceems_agent_client_[a-z_]*(')
fi
report 4 "every call of agent_client.h is named ceems_agent_client_*" "$hits"
exit 0
