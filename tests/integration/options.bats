#!/usr/bin/env bats
# options.bats - the plugin's user options and plugstack.conf arguments on
# the real local Slurm cluster (tests/integration/lib/ceems-cluster.bash):
# --ceems-summary and its SLURM_SPANK_ variable, a refused bad value, the
# site default summary=none overridden by the user, srun-only jobs, the
# interval= argument reaching the agent, and a job whose extern step died.
#
# Runs as root.  Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR,
# CEEMS_TOP_SRCDIR (set by `make check-integration`).

load lib/ceems-cluster

setup_file() {
	# The site's default is no summary: every summary seen here was asked.
	ceems_cluster_setup options summary=none interval=500ms
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

# The summary lines of job ID's output (they start with "ceems" or with
# the names of the full summary's rows).
summary_lines() {
	out_of "$1" | grep -E '^(ceems|CPU |Memory |Energy |Carbon |Note )' || true
}

@test "plugstack.conf interval= reaches the agent as --interval" {
	pid=$(agent_status | jq .pid)
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "--interval 500ms"
	# It wins over the file's interval (250ms in the cluster's ceems.conf).
	grep -qx 'interval = 250ms' "$CEEMS_DIR/ceems.conf"
	[ "$(agent_status | jq .interval_s)" = 0.5 ]
	# And the agent's own view of it: --check-config with the override.
	"$(agent_bin)" -c "$CEEMS_DIR/ceems.conf" --interval 500ms --check-config |
		grep -qx 'interval = 500ms'
	run "$(agent_bin)" -c "$CEEMS_DIR/ceems.conf" --interval 1ms --check-config
	[ "$status" -eq 1 ]
	[[ "$output" == *"--interval 1ms is out of range; allowed: 10ms to 1h"* ]]
}

@test "site default summary=none: a job without the option prints nothing" {
	id=$(submit nobody -J quiet --wrap 'echo hello')
	[ "$(finish "$id")" = COMPLETED ]
	[ -z "$(summary_lines "$id")" ]
	out_of "$id" | grep -qx hello
	record_of "$id" >/dev/null	# measured all the same
}

@test "--ceems-summary=full overrides the site's none" {
	id=$(submit nobody -J full --ceems-summary=full --wrap 'true')
	[ "$(finish "$id")" = COMPLETED ]
	summary_lines "$id" | grep -q "^ceems - job $id (nobody"
	summary_lines "$id" | grep -q '^CPU '
}

@test "--ceems-summary=short prints exactly one line" {
	id=$(submit nobody -J short --ceems-summary=short --wrap 'true')
	[ "$(finish "$id")" = COMPLETED ]
	summary_lines "$id" >&3
	[ "$(summary_lines "$id" | wc -l)" -eq 1 ]
	summary_lines "$id" | grep -q "^ceems.* $id"
}

@test "--ceems-summary=none prints nothing" {
	id=$(submit nobody -J none --ceems-summary=none --wrap 'true')
	[ "$(finish "$id")" = COMPLETED ]
	[ -z "$(summary_lines "$id")" ]
}

@test "SLURM_SPANK__SLURM_SPANK_OPTION_ceems_ceems_summary=short works like the option" {
	id=$(cd "$SLURM_DIR/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
		SLURM_SPANK__SLURM_SPANK_OPTION_ceems_ceems_summary=short \
		sbatch --parsable -o "$SLURM_DIR/out/job-%j.out" --wrap true)
	[ "$(finish "$id")" = COMPLETED ]
	[ "$(summary_lines "$id" | wc -l)" -eq 1 ]
}

@test "an invalid --ceems-summary is refused by sbatch with a clear message" {
	run submit nobody --ceems-summary=loud --wrap true
	echo "$output" >&3
	[ "$status" -ne 0 ]
	[[ "$output" == *"--ceems-summary=loud: expected none, short or full"* ]]
}

@test "an srun-only job gets its summary on srun's stderr" {
	run bash -c "cd '$SLURM_DIR/out' && runuser -u nobody -- env SLURM_CONF='$SLURM_CONF' srun -n1 --ceems-summary=short true 2>&1 >/dev/null"
	echo "$output" >&3
	[ "$status" -eq 0 ]
	[[ "$output" == *"ceems"*"job "* ]]
}

@test "a job whose extern step died is ended with slurmctld's word (ceems-jobinfo, once its cgroup is gone)" {
	id=$(submit nobody -J orphan --wrap 'sleep 8')
	for _ in $(seq 1 60); do
		[ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break
		sleep 0.5
	done
	sleep 2
	# The extern step's slurmstepd holds the job's registration; killed,
	# it can neither deregister the job nor write its record.
	pid=$(pgrep -f "^slurmstepd: \[$id\.extern\]")
	[ -n "$pid" ]
	kill -9 $pid
	finish "$id" >/dev/null
	r=$(record_of "$id")
	[ "$(jq -r .finalized_by "$r")" = epilog ]
	[ "$(jq -r .job.state "$r")" = COMPLETED ]
	grep "job $id: slurmctld's end (COMPLETED) given to the node agent" "$CEEMS_DIR/agent.log" >&3
	run agent_status
	[ "$(echo "$output" | jq .jobs)" -eq 0 ]
}

@test "--ceems-series: the record holds the job's time series; without it, none" {
	id=$(submit nobody -J series --ceems-series --wrap 'sleep 4')
	plain=$(submit nobody -J plain --wrap 'sleep 1')
	[ "$(finish "$id")" = COMPLETED ]
	[ "$(finish "$plain")" = COMPLETED ]
	rec=$(record_of "$id")
	[ "$(jq -r '.series.resolution_s' "$rec")" = 1 ]
	[ "$(jq -c '.series.columns' "$rec")" = '["t","interval_s","cpu_s","mem_bytes","package_j","dram_j","gpu_j","node_j","gpu_util_pct","read_bytes","write_bytes","net_in_bytes","net_out_bytes","page_faults","ctx_switches","ipc"]' ]
	rows=$(jq '.series.rows | length' "$rec")
	[ "$rows" -ge 3 ] || { jq -c .series "$rec"; false; }
	# No GPU on this node: its utilisation is unknown in every row.
	[ "$(jq '[.series.rows[][8] | select(. != null)] | length' "$rec")" = 0 ]
	# The rows add up to the job's totals (package energy, time); a
	# domain the job's ledger lacks is null in every row, not 0.
	jq -e '([.series.rows[][4] | select(. != null)] | add) as $s
	       | .measurements.ledger.package.joules as $t
	       | if $t == null then $s == null
	         else ($s - $t | fabs) <= 1e-6 * $t + 1e-9 end' "$rec" >/dev/null ||
		{ jq -c '[.series, .measurements.ledger.package]' "$rec"; false; }
	# The extern step registers the job without seeing the option; the
	# batch step's registration turns the series on, a moment later,
	# from the job's registration: the rows span the job's whole life.
	jq -e '([.series.rows[][1]] | add) as $s | .measurements.ledger.lifetime_s as $l
	       | $s <= $l + 0.01 and $s >= $l - 0.01' \
		"$rec" >/dev/null || { jq -c '[.series.rows, .measurements.elapsed_s, .measurements.ledger.lifetime_s]' "$rec"; false; }
	rec=$(record_of "$plain")
	[ "$(jq 'has("series")' "$rec")" = false ]
}
