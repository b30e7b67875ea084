#!/bin/sh
# plugin-link.sh - the SPANK plugin is a thin client: slurmstepd loads
# the agent's protocol and client, and nothing of the database (libpq),
# the storage, the spool, the ledger's split or the energy sources, which
# are the node agent's alone.  Checked on the built .so with ldd and nm
# (its symbol table keeps the local names the version script hides).
# TAP on stdout; `make check` runs it.
set -u
so=${CEEMS_SPANK_PLUGIN:-plugins/.libs/spank_ceems.so}

echo "1..4"
if [ ! -f "$so" ]; then
	echo "not ok 1 - $so is built"
	echo "not ok 2 - # SKIP no plugin"
	echo "not ok 3 - # SKIP no plugin"
	echo "not ok 4 - # SKIP no plugin"
	exit 0
fi
echo "ok 1 - $so is built"

libs=$(ldd "$so" 2>&1)
if printf '%s\n' "$libs" | grep -q 'libpq'; then
	echo "not ok 2 - the plugin links no libpq"
	printf '%s\n' "$libs" | sed 's/^/# /'
else
	echo "ok 2 - the plugin links no libpq"
fi

syms=$(nm "$so" 2>&1)
if ! printf '%s\n' "$syms" | grep -q ' ceems_agent_client_end_job$'; then
	echo "not ok 3 - the plugin's symbol table is readable (no ceems_agent_client_end_job)"
else
	echo "ok 3 - the plugin's symbol table is readable"
fi
# The agent's side: storage, database, spool, replay, ledger split,
# energy sources, the agent's engine.
bad=$(printf '%s\n' "$syms" | awk '{ print $NF }' | grep -E \
	'^(PQ|ceems_(storage|db|spool|replay|ledger_split|ledger_carry|rapl|hwmon|pm_counters|energy_source|emissions_(load|lookup|table)|agent_(open|tick|register|deregister|sweep|restore|checkpoint)$))' \
	| sort -u)
if [ -n "$bad" ]; then
	echo "not ok 4 - no storage, ledger or source symbol in the plugin"
	printf '%s\n' "$bad" | sed 's/^/# /'
else
	echo "ok 4 - no storage, ledger or source symbol in the plugin"
fi
