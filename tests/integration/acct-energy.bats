#!/usr/bin/env bats
# acct-energy.bats - Slurm's own energy accounting fed by the ceems node
# agent (AcctGatherEnergyType=acct_gather_energy/ceems), read back through
# Slurm's own tools: sacct and sstat from a real slurmdbd and MariaDB
# (tests/harness/slurmdbd.sh), scontrol show node.  The node is the
# simulated RAPL node of ceems-cluster.bash; the SPANK plugin and its
# agent measure as in every other end-to-end test.
#
# Two jobs share the node's two cores: a CPU burner (one srun step) and a
# job holding its core while it sleeps.  What Slurm recorded for each job
# and each step must be what ceems-sacct gives from the agent's records,
# within 1% of the job's figure (1 J at least: Slurm keeps whole joules).
# A step's last reading in Slurm is taken as its tasks end, while the
# agent charges the step until its cgroup goes (slurmstepd's own work at
# the step's end): a step of a few joules differs by a joule or two, a
# small part of its job's energy.  The extern step
# carries the job's whole share: with PrologFlags=Contain slurmctld takes
# the job's energy from it alone.
#
# Runs as root, about 70 s.  Needs CEEMS_SPANK_PLUGIN,
# CEEMS_ENERGY_PLUGIN_DIR, CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by
# `make check-integration`), mariadb-server and slurmdbd.

load lib/ceems-cluster
load lib/acct-energy

TOLERANCE=0.01

# Runs once CEEMS_DIR exists: slurmd (and so slurmstepd) finds the test's
# ceems.conf, and with it the agent's socket, through CEEMS_CONF.
ceems_cluster_prepare() {
	export CEEMS_CONF=$CEEMS_DIR/ceems.conf
}

setup_file() {
	[ -z "$(slurm_energy_skip_reason)" ] || return 0
	export CEEMS_TEST_SLURMDBD=1 CEEMS_TEST_SLURMDBD_USERS=nobody
	export CEEMS_TEST_SLURM_CONF_EXTRA="AcctGatherEnergyType=acct_gather_energy/ceems
AcctGatherNodeFreq=1
PluginDir=$CEEMS_ENERGY_PLUGIN_DIR:$(slurm_plugindir)"
	# A step's last reading in Slurm is the agent's last tick before its
	# tasks ended: a short tick keeps that within the tolerance.
	CEEMS_CLUSTER_INTERVAL=100ms ceems_cluster_setup acctenergy || return 1
	shared_jobs
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	local why
	load_lib
	why=$(slurm_energy_skip_reason)
	[ -z "$why" ] || skip "$why"
}

# _compare ID KIND: every line of Slurm's accounting of job ID against
# ceems's, within TOLERANCE of the job's figure; the extern step against
# the job.
_compare() {
	local id=$1 kind=$2 slurm ceems step want got job
	slurm=$(slurm_energy "$id") || return 1
	ceems=$(ceems_energy "$id") || return 1
	echo "# $kind job $id (STEP J): Slurm [$(tr '\n' ' ' <<<"$slurm")] ceems [$(tr '\n' ' ' <<<"$ceems")]" >&3
	[ "$(grep -c . <<<"$slurm")" -ge 3 ] || { echo "Slurm has too few lines for job $id: $slurm"; return 1; }
	job=$(awk '$1 == "job" { print $2 }' <<<"$ceems")
	while read -r step got; do
		if [ "$step" = extern ]; then
			want=$(awk '$1 == "job" { print $2 }' <<<"$ceems")
		else
			want=$(awk -v s="$step" '$1 == s { print $2 }' <<<"$ceems")
		fi
		close_to "$got" "$want" "$job" || {
			echo "job $id step $step: Slurm $got J, ceems $want J"
			echo "Slurm:"; echo "$slurm"; echo "ceems-sacct:"; echo "$ceems"
			return 1
		}
	done <<<"$slurm"
}

_job_of() {
	awk -v k="$1" '$2 == k { print $1 }' "$CEEMS_DIR/jobs"
}

@test "shared node, CPU burner: sacct's ConsumedEnergyRaw per job and step is ceems's within 1% of the job" {
	_compare "$(_job_of burner)" burner
}

@test "shared node, job sleeping on its core: sacct's ConsumedEnergyRaw per job and step is ceems's within 1% of the job" {
	_compare "$(_job_of sleeper)" sleeper
}

@test "the shared jobs' energy in Slurm adds up to no more than the node's over their run" {
	local sum node
	sum=$(for id in $(cut -d' ' -f1 "$CEEMS_DIR/jobs"); do
		slurm_energy "$id" | awk '$1 == "job" { print $2 }'
	done | awk '{ s += $1 } END { print s }')
	node=$(cat "$CEEMS_DIR/node_j")
	echo "# jobs in Slurm: $sum J; the node over their run: $node J" >&3
	check "$sum > 0 && $sum <= $node"
}

@test "sstat on a running step shows its share as the agent has it at that moment" {
	local id before live after
	id=$(submit nobody -J live -c1 --mem=256M --wrap \
		"srun -n1 timeout 12 sh -c 'while :; do :; done'; true")
	wait_running "$id"
	for _ in $(seq 1 40); do
		sstat -n -P -j "$id.0" -o JobID >/dev/null 2>&1 &&
			[ -n "$(sstat -n -P -j "$id.0" -o JobID 2>/dev/null)" ] && break
		sleep 0.25
	done
	sleep 3
	_step_j() {
		"$CEEMS_TOP_BUILDDIR/tools/ceems-agent" -c "$CEEMS_DIR/ceems.conf" \
			--call "{\"op\":\"report\",\"jobid\":$id}" |
			jq '[.report.steps[] | select(.id == "0") | .joules[]] | add // 0'
	}
	before=$(_step_j)
	live=$(sstat -n -P -j "$id.0" -o ConsumedEnergyRaw)
	after=$(_step_j)
	echo "# step $id.0 while running: agent $before J, sstat $live J, agent $after J" >&3
	finish "$id" >/dev/null
	check "$before > 0 && $live >= $before - 1 && $live <= $after + 1"
}

@test "scontrol show node shows the node's power as the agent measures it" {
	local line watts t0 j0 t1 j1 agent_w
	# slurmctld asks slurmd every second (AcctGatherNodeFreq=1); the
	# node settles from the jobs before, then the agent's power over a
	# window holding slurmd's last reading.
	sleep 3
	t0=$(date +%s.%N); j0=$(node_j)
	sleep 3
	line=$(scontrol -o show node localhost)
	sleep 0.5
	t1=$(date +%s.%N); j1=$(node_j)
	watts=$(sed -n 's/.*CurrentWatts=\([0-9]*\).*/\1/p' <<<"$line")
	agent_w=$(awk -v a="$j0" -v b="$j1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", (b - a) / (e - s) }')
	echo "# scontrol: $(grep -o 'CurrentWatts=[0-9]* AveWatts=[0-9]*' <<<"$line"); the agent over the last 3.5 s: $agent_w W" >&3
	# the machine's other work moves the simulated power from second to
	# second: 25% apart at most
	check "${watts:-0} > 0 && $watts >= 0.75 * $agent_w && $watts <= 1.25 * $agent_w"
}

@test "agent stopped: jobs run and end normally, each step logs one line, no energy is invented" {
	local id n
	"$CEEMS_TOP_BUILDDIR/tools/ceems-agent" -c "$CEEMS_DIR/ceems.conf" --stop
	for _ in $(seq 1 50); do
		agent_status >/dev/null 2>&1 || break
		sleep 0.2
	done
	! agent_status >/dev/null 2>&1
	id=$(submit nobody -J noagent -c1 --mem=256M --wrap "srun -n1 sleep 1; sleep 1")
	[ "$(finish "$id")" = COMPLETED ]
	run slurm_energy "$id"
	echo "# job $id without an agent, Slurm's energy: $(paste -sd' ' <<<"$output")" >&3
	[ "$status" -eq 0 ]
	# steps: unknown (empty), never a figure; the job: none added (0)
	awk '$1 != "job" && $2 != "" { bad = 1 } $1 == "job" && $2 != 0 && $2 != "" { bad = 1 } END { exit bad }' <<<"$output"
	for step in batch extern 0; do
		n=$(grep -c "\[$id\.$step\] acct_gather_energy/ceems: the node agent at .* gave no energy" "$SLURM_DIR/log/slurmd.log")
		[ "$n" = 1 ] || { echo "step $step logged $n lines:"; grep "\[$id\.$step\].*ceems" "$SLURM_DIR/log/slurmd.log"; false; }
	done
}
