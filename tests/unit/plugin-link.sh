#!/bin/sh
# plugin-link.sh - the SPANK plugin is a thin client: slurmstepd loads
# the agent's protocol and client, and nothing of the database (libpq),
# the storage, the spool, the ledger's split or the energy sources, which
# are the node agent's alone.  Checked on the built .so with ldd and nm
# (its symbol table keeps the local names the version script hides).
# The acct_gather_energy/ceems plugin links only the files of libceems it
# needs: none of its own symbols may then be left undefined, which only
# slurmd's dlopen would otherwise tell.
# TAP on stdout; `make check` runs it.
set -u
so=${CEEMS_SPANK_PLUGIN:-plugins/.libs/spank_ceems.so}
energy_so=${CEEMS_ENERGY_PLUGIN_DIR:-plugins/acct_gather_energy/.libs}/acct_gather_energy_ceems.so

echo "1..5"
# 5: the acct_gather_energy/ceems plugin's own symbols all defined.
energy_check() {
	if [ -f "$energy_so" ]; then
		und=$(nm -u "$energy_so" | awk '{ print $NF }' | grep '^ceems_')
		if [ -n "$und" ]; then
			echo "not ok 5 - $energy_so leaves no ceems_ symbol undefined"
			printf '%s\n' "$und" | sed 's/^/# /'
		else
			echo "ok 5 - $energy_so leaves no ceems_ symbol undefined"
		fi
	else
		echo "ok 5 - # SKIP $energy_so is not built"
	fi
}

if [ ! -f "$so" ]; then
	echo "not ok 1 - $so is built"
	echo "not ok 2 - # SKIP no plugin"
	echo "not ok 3 - # SKIP no plugin"
	echo "not ok 4 - # SKIP no plugin"
	energy_check
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
energy_check
