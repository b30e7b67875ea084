# acct-energy.bash - shared by acct-energy.bats (Slurm's accounting fed
# by acct_gather_energy/ceems) and acct-energy-rapl.bats (the same jobs
# under Slurm's own acct_gather_energy/rapl): the two jobs that share the
# simulated node, and each job's energy as Slurm's accounting (sacct,
# from slurmdbd) and ceems-sacct (the agent's records) give it.  Load
# after lib/ceems-cluster.

# The burner's and the sleeper's length, s.
: "${BURN_S:=14}"

# slurm_plugindir: where Debian keeps Slurm's own plugins.
slurm_plugindir() {
	local f
	for f in /usr/lib/*/slurm-wlm/acct_gather_energy_none.so /usr/lib/slurm/acct_gather_energy_none.so; do
		[ -e "$f" ] && { dirname "$f"; return 0; }
	done
	return 1
}

# slurm_energy_skip_reason: why Slurm's own energy accounting cannot be
# tested here, "" when it can.
slurm_energy_skip_reason() {
	if [ -z "${CEEMS_SPANK_PLUGIN:-}" ] || [ -z "${CEEMS_ENERGY_PLUGIN_DIR:-}" ]; then
		echo "CEEMS_SPANK_PLUGIN or CEEMS_ENERGY_PLUGIN_DIR is not set (run through make check-integration)"
	elif ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null; then
		echo "slurmdbd or mariadbd not found (packages slurmdbd, mariadb-server)"
	elif ! slurm_plugindir >/dev/null; then
		echo "Slurm's plugin directory not found"
	fi
}

# node_j: the node's energy since the agent started, J (every domain).
node_j() {
	agent_status | jq '[.energy[] | .delta_j] | add'
}

# shared_jobs: the burner and the sleeper, submitted together; their ids in
# CEEMS_DIR/jobs, the node's energy over their run in CEEMS_DIR/node_j.
shared_jobs() {
	local before after b s
	before=$(node_j) || return 1
	b=$(submit nobody -J burner -c1 --mem=256M --wrap \
		"srun -n1 timeout $BURN_S sh -c 'while :; do :; done'; true") || return 1
	s=$(submit nobody -J sleeper -c1 --mem=256M --wrap "sleep $BURN_S") || return 1
	echo "$b burner" >"$CEEMS_DIR/jobs"
	echo "$s sleeper" >>"$CEEMS_DIR/jobs"
	[ "$(finish "$b")" = COMPLETED ] || return 1
	[ "$(finish "$s")" = COMPLETED ] || return 1
	after=$(node_j) || return 1
	record_of "$b" >/dev/null && record_of "$s" >/dev/null || return 1
	echo "$before $after" | awk '{ print $2 - $1 }' >"$CEEMS_DIR/node_j"
}

# slurm_energy ID: "STEP JOULES" lines of Slurm's accounting for job ID
# (the job's own line as "job"), once slurmdbd holds every step.
slurm_energy() {
	local out
	for _ in $(seq 1 50); do
		out=$(sacct -j "$1" -n -P -o JobID,ConsumedEnergyRaw,State)
		if [ -n "$out" ] && ! grep -q 'RUNNING\|PENDING\|COMPLETING' <<<"$out"; then
			awk -F'|' -v id="$1" '{ s = $1; sub("^" id "\\.?", "", s); print (s == "" ? "job" : s), $2 }' <<<"$out"
			return 0
		fi
		sleep 0.2
	done
	echo "sacct never showed job $1 complete: $out" >&2
	return 1
}

# ceems_energy ID: the same from ceems-sacct (the agent's records).
ceems_energy() {
	"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" \
		-j "$1" -n -P -o JobID,ConsumedEnergyRaw |
		awk -F'|' -v id="$1" '{ s = $1; sub("^" id "\\.?", "", s); print (s == "" ? "job" : s), $2 }'
}

# close_to A B [OF]: A is B within TOLERANCE (a fraction) of OF (default
# B), 1 J at least.
close_to() {
	awk -v a="$1" -v b="$2" -v of="${3:-$2}" -v t="$TOLERANCE" 'BEGIN {
		d = a - b; if (d < 0) d = -d
		lim = t * (of < 0 ? -of : of); if (lim < 1) lim = 1
		exit !(a != "" && b != "" && d <= lim) }'
}

