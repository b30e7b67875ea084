#!/bin/bash
# run-sidebyside.sh - ceems side by side with Slurm's own accounting on
# the local test cluster (tests/harness/slurm.sh, the simulated RAPL node
# of tests/integration/lib/ceems-cluster.bash): what each costs the node,
# and how right each is.  The figures are in doc/performance.md ("ceems
# and Slurm's sampler") and doc/accuracy.md; tests/bench/plot-sidebyside.py
# draws them from the CSV files this writes.
#
# The cluster runs go in chunks of a few minutes, each taken under the
# machine's cluster lock (flock /tmp/ceems-cluster.lock) and released
# after, so that others can test between chunks: a round of the ways,
# scale and profile, the two accuracy runs.
#
#   run-sidebyside.sh all OUT        BENCH_ROUNDS (2) rounds, then the rest
#   run-sidebyside.sh round R OUT    one overhead run of each way, in turn
#   run-sidebyside.sh overhead R WAY OUT
#       round R, one way: slurm = Slurm's sampler (jobacct_gather/cgroup,
#       JobAcctGatherFrequency=task=1), no ceems; ceems = the plugin and
#       its agent with the defaults (a tick every 1 s, full cgroup
#       readings and checkpoints every 10 s, series every 30 s);
#       ceems1s = the same with full readings, checkpoints and series
#       every 1 s (the test cluster's ceems.conf); none = neither.
#       Every way but slurm has jobacct_gather/cgroup sampling nothing
#       (task=0): on cgroup v1 it makes the jobs' cpuacct cgroups,
#       which ceems needs.  BENCH_JOBS (16) jobs sleeping
#       BENCH_SLEEP (40) s at once, oversubscribed on the node's cores;
#       CPU time of slurmd, of the slurmstepds (with the jobs' own sleep
#       and shell, which are the same in every way) and of the ceems
#       agent over the run -> OUT/overhead.csv.  Then BENCH_LATENCY (10)
#       `sbatch --wait` of a job that does nothing, one after the other
#       -> OUT/latency.csv.
#   run-sidebyside.sh scale OUT
#       way ceems; the agent's CPU per second idle and with 1, 16 and 128
#       sleeping jobs (BENCH_WINDOW, 30 s each) -> OUT/scale.csv
#   run-sidebyside.sh steady OUT
#       BENCH_STEADY_ROUNDS (3) rounds of each way in turn, BENCH_JOBS
#       jobs running through a BENCH_WINDOW s window (no job starts or
#       ends in it), a bare wake-up's CPU measured beside each window
#       (tests/bench/bench_wakeup) -> OUT/steady.csv
#   run-sidebyside.sh jobcost OUT
#       what a job costs at its start and end alone: BENCH_STEADY_ROUNDS
#       rounds of ways ceems and none in turn, each on a fresh cluster,
#       BENCH_JOBS jobs that run `true` at once; CPU time of the
#       slurmstepds (with the epilog processes slurmd runs after each
#       job) and of the agent from submission until the last slurmstepd
#       has gone, the agent's idle cost over a window as long before
#       -> OUT/jobcost.csv (ms per job: doc/performance.md)
#   run-sidebyside.sh jobpair OUT
#       the same question in one cluster of way ceems, where the plugin
#       is the only difference: BENCH_STEADY_ROUNDS rounds of two
#       batches of BENCH_JOBS jobs of `true`, one with the plugin in
#       plugstack.conf and one with it empty (each slurmstepd reads the
#       file when it starts; the agent runs through both), in the
#       order ceems, none, then none, ceems; CPU time of the
#       slurmstepds, slurmd and the agent per batch -> OUT/jobpair.csv
#   run-sidebyside.sh profile OUT
#       way ceems, BENCH_JOBS sleeping jobs: where the agent's CPU goes
#       (perf record) -> OUT/agent-profile.txt, and its system calls
#       (strace -c) -> OUT/agent-syscalls.txt
#   run-sidebyside.sh accuracy IDLE OUT
#       the job mix of tests/integration/lib/accuracy-mix.bash
#       (BENCH_MIX_SCALE 60: the burner's seconds) with the agent told
#       the idle power (IDLE = configured) or learning it (IDLE = learn)
#       -> OUT/accuracy-IDLE.csv
#
# CPU time, counted whole, threads and children that are gone included:
# right after the cluster starts, slurmd is moved into a cpuacct cgroup of
# the bench's own (ceems_bench_slurm), so that every slurmstepd it forks
# and their jobs count there, and the agent's processes into another
# (ceems_bench_agent): a cgroup's CPU time keeps what its exited
# processes used.  slurmd alone is its /proc/PID/stat utime + stime
# (clock ticks); the slurmstepds are the first cgroup less slurmd, plus
# what the jobs' processes used in the cpuacct cgroups Slurm's sampler
# moves them to (slurm_localhost), so that every way counts the jobs'
# own processes (sleep and its shell: the same in every way).
#
# Run as root from a build directory, after make check:
#   bash ../../tests/bench/run-sidebyside.sh all ../../doc/bench
# Needs CEEMS_TOP_BUILDDIR (default .), python3, jq.
set -u

src=$(cd "$(dirname "$0")/../.." && pwd)
: "${CEEMS_TOP_BUILDDIR:=$PWD}"
CEEMS_TOP_BUILDDIR=$(cd "$CEEMS_TOP_BUILDDIR" && pwd)
: "${CEEMS_SPANK_PLUGIN:=$CEEMS_TOP_BUILDDIR/plugins/.libs/spank_ceems.so}"
export CEEMS_TOP_SRCDIR=$src CEEMS_TOP_BUILDDIR CEEMS_SPANK_PLUGIN
LOCK=/tmp/ceems-cluster.lock
: "${BENCH_JOBS:=16}" "${BENCH_SLEEP:=40}" "${BENCH_LATENCY:=10}"
: "${BENCH_WINDOW:=30}" "${BENCH_MIX_SCALE:=60}" "${BENCH_ROUNDS:=2}"
: "${BENCH_STEADY_ROUNDS:=3}"
: "${BENCH_WAYS:=slurm ceems ceems1s none}"
WAYS=$BENCH_WAYS
# sleeping jobs share the cores: up to 64 jobs per core
OVERSUBSCRIBE="PartitionName=over Nodes=localhost OverSubscribe=FORCE:64 MaxTime=INFINITE State=UP"

# shellcheck source=tests/integration/lib/ceems-cluster.bash
. "$src/tests/integration/lib/ceems-cluster.bash"
# shellcheck source=tests/integration/lib/accuracy-mix.bash
. "$src/tests/integration/lib/accuracy-mix.bash"
load_lib

die() {
	echo "run-sidebyside.sh: $*" >&2
	exit 1
}

CLK_TCK=$(getconf CLK_TCK)

# proc_cpu_ns PID: CPU time (user + system) of a process, all its threads
# alive or gone, ns (clock-tick granularity).
proc_cpu_ns() {
	local line
	read -r line 2>/dev/null <"/proc/$1/stat" || { echo 0; return; }
	# the command (field 2) may hold spaces: cut after its ')'
	line=${line##*) }
	set -- $line
	echo $(( (${12} + ${13}) * 1000000000 / CLK_TCK ))
}

# agent_pids: the supervisor, the agent and their children.
agent_pids() {
	local top p line
	top=$(_slurm_harness_agent_procs "$SLURM_DIR" ceems-agent-sv ceems-agent lt-ceems-agent)
	[ -n "$top" ] || return 0
	{
		echo "$top"
		for p in /proc/[0-9]*; do
			read -r line 2>/dev/null <"$p/stat" || continue
			line=${line##*) }
			set -- $line
			case " "$(echo $top)" " in
				*" $2 "*) echo "${p#/proc/}" ;;
			esac
		done
	} | sort -u
}

# The bench's own CPU-accounting cgroups: ceems_bench_slurm holds slurmd,
# so every slurmstepd it forks (and the jobs' processes, unless Slurm's
# sampler moves them to its own cpuacct cgroups) is counted there, its
# time kept when it exits; ceems_bench_agent holds the agent's processes.
if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
	BENCH_CG=/sys/fs/cgroup
else
	BENCH_CG=/sys/fs/cgroup/cpuacct
fi

# cg_cpu_ns DIR: CPU time of a cgroup and its descendants, ns.
cg_cpu_ns() {
	local v
	if [ -r "$1/cpuacct.usage" ]; then
		cat "$1/cpuacct.usage"
	else
		v=$(awk '$1 == "usage_usec" { print $2 }' "$1/cpu.stat" 2>/dev/null)
		echo $(( ${v:-0} * 1000 ))
	fi
}

# cg_enter NAME PID...: move the processes into the bench's cgroup NAME.
cg_enter() {
	local dir=$BENCH_CG/ceems_bench_$1 p
	shift
	mkdir -p "$dir" || die "cannot create $dir"
	for p in "$@"; do
		echo "$p" >"$dir/cgroup.procs" 2>/dev/null || true
	done
}

cg_remove() {
	local d
	for d in "$BENCH_CG"/ceems_bench_*; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	return 0
}

now_ns() {
	date +%s%N
}

slurmd_pid() {
	_slurm_harness_pidfile "$SLURM_DIR/run/slurmd.pid" slurmd
}

# snapshot: "time_ns slurmd_ns slurm_tree_ns agent_ns sampled_jobs_ns":
# slurmd alone, slurmd with its slurmstepds, the agent, and the jobs'
# processes that Slurm's sampler moved to its own cpuacct cgroups.
snapshot() {
	echo "$(now_ns) $(proc_cpu_ns "$(slurmd_pid)") $(cg_cpu_ns "$BENCH_CG/ceems_bench_slurm")" \
		"$(cg_cpu_ns "$BENCH_CG/ceems_bench_agent") $(cg_cpu_ns "$BENCH_CG/slurm_localhost")"
}

# way_setup WAY: start the cluster of a way.
way_setup() {
	local way=$1
	export CEEMS_TEST_SLURM_CONF_EXTRA=$OVERSUBSCRIBE CEEMS_CLUSTER_INTERVAL=1s
	# The simulated RAPL with a server's counter range (an Intel Xeon's
	# max_energy_range_uj), not the test suite's, which wraps in a
	# fraction of a second to test the wrap handling and so has the
	# agent sample the counters 20 times a second.
	export CEEMS_FAKE_RAPL_ARGS="--package-range-uj 262143328850 --dram-range-uj 262143328850"
	# Slurm's cgroup gatherer, sampling nothing (task=0), in every way:
	# on cgroup v1 only it makes the job's cpuacct cgroup, which ceems
	# needs (as its install guide says); jobacct_gather/none would leave
	# every job unregistered, and the ways would compare ceems's
	# failure path with Slurm.
	export CEEMS_CLUSTER_PLUGIN=no CEEMS_TEST_JOBACCT_GATHER=jobacct_gather/cgroup \
		CEEMS_TEST_JOBACCT_FREQ=task=0 CEEMS_CLUSTER_CONF=
	case $way in
		slurm) export CEEMS_TEST_JOBACCT_GATHER=jobacct_gather/cgroup \
			CEEMS_TEST_JOBACCT_FREQ=task=1 ;;
		# the test cluster's ceems.conf reads every job's cgroup and
		# keeps its series every second: back to the defaults
		ceems) export CEEMS_CLUSTER_PLUGIN=yes CEEMS_CLUSTER_CONF="usage_interval = 10s
series_interval = 30s
checkpoint_interval = 10s
idle_interval = 10s" ;;
		ceems1s) export CEEMS_CLUSTER_PLUGIN=yes ;;
		none) ;;
		*) die "unknown way $way (slurm, ceems, ceems1s, none)" ;;
	esac
	ceems_cluster_setup "bench$way" summary=full || { bench_teardown; die "cluster of way $way did not start"; }
	if [ "$CEEMS_CLUSTER_PLUGIN" = yes ] && ! agent_status >/dev/null 2>&1; then
		bench_teardown
		die "way $way: the node agent does not answer"
	fi
	cg_enter slurm "$(slurmd_pid)"
	cg_enter agent $(agent_pids)
}

bench_teardown() {
	ceems_cluster_teardown
	cg_remove
}

# measured N: in a way with the plugin, N jobs were registered with the
# agent (a job left unregistered is measured by nobody: the run would
# time ceems's failure path), else the run stops.
measured() {
	local n i
	[ "$CEEMS_CLUSTER_PLUGIN" = yes ] || return 0
	for i in $(seq 50); do
		n=$(grep -c "registered (uid" "$CEEMS_DIR/agent.log")
		[ "$n" -ge "$1" ] && return 0
		sleep 0.2
	done
	grep -m3 "cannot be registered\|not registered" "$CEEMS_DIR/agent.log" "$SLURM_DIR/log/slurmd.log" >&2
	bench_teardown
	die "$n of $1 jobs registered with the agent: the run measured no job"
}

# submit_sleepers N SECONDS: N jobs of nobody sleeping SECONDS each,
# oversubscribed on the node's cores.
submit_sleepers() {
	local i
	for i in $(seq "$1"); do
		submit nobody -p over -c1 --mem=64M -o /dev/null --wrap "sleep $2" >/dev/null ||
			{ bench_teardown; die "sbatch failed"; }
	done
}

# wait_running N: until N jobs run (up to 300 s).
wait_running() {
	local i n
	for i in $(seq 1500); do
		n=$(squeue -h -t R -o %i 2>/dev/null | wc -l)
		[ "$n" -ge "$1" ] && return 0
		sleep 0.2
	done
	die "only $n of $1 jobs running after 300 s"
}

# wait_empty: until no job is left in the queue (up to 300 s).
wait_empty() {
	local i
	for i in $(seq 1500); do
		[ -z "$(squeue -h -o %i 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	die "jobs still queued after 300 s: $(squeue -h -o '%i %T' | tr '\n' ' ')"
}

overhead_chunk() {
	local round=$1 way=$2 out=$3 s0 s1 i t0 t1 t2 id start
	way_setup "$way"
	sleep 3
	s0=$(snapshot)
	submit_sleepers "$BENCH_JOBS" "$BENCH_SLEEP"
	wait_running "$BENCH_JOBS"
	measured "$BENCH_JOBS"
	wait_empty
	sleep 2
	s1=$(snapshot)
	[ -s "$out/overhead.csv" ] ||
		echo "round,way,jobs,job_s,window_s,slurmd_cpu_s,stepd_cpu_s,agent_cpu_s" >"$out/overhead.csv"
	# slurmstepds = the slurm tree less slurmd, plus the jobs' processes
	# Slurm's sampler moved out of it (so that every way counts them)
	echo "$s0 $s1" | awk -v r="$round" -v w="$way" -v n="$BENCH_JOBS" -v s="$BENCH_SLEEP" '{
		slurmd = ($7 - $2) / 1e9; tree = ($8 - $3) / 1e9
		printf "%s,%s,%d,%d,%.3f,%.6f,%.6f,%.6f\n", r, w, n, n * s,
			($6 - $1) / 1e9, slurmd, tree - slurmd + ($10 - $5) / 1e9, ($9 - $4) / 1e9 }' \
		>>"$out/overhead.csv"
	# latency as a user sees it: sbatch --wait of a job that does nothing
	[ -s "$out/latency.csv" ] ||
		echo "round,way,i,submit_to_start_ms,wait_ms" >"$out/latency.csv"
	for i in $(seq "$BENCH_LATENCY"); do
		t0=$(now_ns)
		id=$(cd "$SLURM_DIR/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
			sbatch --parsable --wait -p debug -c1 --mem=64M -o "$SLURM_DIR/out/lat-%j.out" \
			--wrap 'date +%s%N') || { bench_teardown; die "sbatch --wait failed"; }
		t1=$(now_ns)
		start=$(head -n 1 "$SLURM_DIR/out/lat-$id.out")
		echo "$round,$way,$i,$(((start - t0) / 1000000)),$(((t1 - t0) / 1000000))" >>"$out/latency.csv"
	done
	bench_teardown
}

scale_chunk() {
	local out=$1 n have=0 s0 s1 i
	way_setup ceems
	echo "jobs,window_s,agent_cpu_s,agent_cpu_ms_per_s" >"$out/scale.csv"
	for n in 0 1 16 128; do
		for i in $(seq $((have + 1)) "$n"); do
			submit nobody -p over -c1 --mem=64M -o /dev/null --wrap 'sleep 900' >/dev/null ||
				{ bench_teardown; die "sbatch failed"; }
		done
		have=$n
		[ "$n" = 0 ] || { wait_running "$n"; measured "$n"; }
		sleep 5
		s0=$(snapshot)
		sleep "$BENCH_WINDOW"
		s1=$(snapshot)
		echo "$s0 $s1" | awk -v n="$n" '{ w = ($6 - $1) / 1e9; a = ($9 - $4) / 1e9
			printf "%d,%.3f,%.6f,%.3f\n", n, w, a, a / w * 1000 }' >>"$out/scale.csv"
	done
	scancel -u nobody 2>/dev/null
	bench_teardown
}

# steady_chunk OUT: BENCH_STEADY_ROUNDS rounds of each way in turn, each
# on a fresh cluster with BENCH_JOBS jobs running through a BENCH_WINDOW
# s window (no job starts or end in it): what each costs per job-second
# while jobs run -> OUT/steady.csv.  Beside each window, bench_wakeup
# sleeps a second at a time: what a bare wake-up was charged then (on a
# virtual machine it varies by an order of magnitude with the host).
steady_chunk() {
	local out=$1 way i s0 s1 r wake
	[ -s "$out/steady.csv" ] ||
		echo "round,way,jobs,window_s,slurmd_cpu_s,stepd_cpu_s,agent_cpu_s,wakeup_us" >"$out/steady.csv"
	for r in $(seq "$BENCH_STEADY_ROUNDS"); do
		for way in $WAYS; do
			way_setup "$way"
			submit_sleepers "$BENCH_JOBS" 900
			wait_running "$BENCH_JOBS"
			measured "$BENCH_JOBS"
			sleep 5
			"$CEEMS_TOP_BUILDDIR/tests/bench/bench_wakeup" "$BENCH_WINDOW" >"$out/wakeup.tmp" &
			wake=$!
			s0=$(snapshot)
			sleep "$BENCH_WINDOW"
			s1=$(snapshot)
			wait "$wake"
			wake=$(cut -d' ' -f1 "$out/wakeup.tmp")
			rm -f "$out/wakeup.tmp"
			echo "$s0 $s1" | awk -v r="$r" -v w="$way" -v n="$BENCH_JOBS" -v k="${wake:-}" '{
				slurmd = ($7 - $2) / 1e9; tree = ($8 - $3) / 1e9
				printf "%s,%s,%d,%.3f,%.6f,%.6f,%.6f,%s\n", r, w, n, ($6 - $1) / 1e9, slurmd,
					tree - slurmd + ($10 - $5) / 1e9, ($9 - $4) / 1e9, k }' >>"$out/steady.csv"
			scancel -u nobody 2>/dev/null
			bench_teardown
		done
	done
}

# stepds_gone: until slurmd has no slurmstepd left (the epilog processes
# included), up to 60 s.
stepds_gone() {
	local i
	for i in $(seq 300); do
		pgrep -x slurmstepd >/dev/null || return 0
		sleep 0.2
	done
	die "slurmstepds still running after 60 s"
}

# jobcost_chunk OUT: the CPU a job costs at its start and end, ceems
# against none, BENCH_STEADY_ROUNDS rounds -> OUT/jobcost.csv.
jobcost_chunk() {
	local out=$1 way r s0 s1 p0 t
	[ -s "$out/jobcost.csv" ] ||
		echo "round,way,jobs,window_s,slurmd_cpu_s,stepd_cpu_s,agent_cpu_s,agent_idle_cpu_s" >"$out/jobcost.csv"
	for r in $(seq "$BENCH_STEADY_ROUNDS"); do
		for way in ceems none; do
			way_setup "$way"
			sleep 3
			p0=$(snapshot)
			t=$(date +%s%N)
			for i in $(seq "$BENCH_JOBS"); do
				submit nobody -p over -c1 --mem=64M -o /dev/null --wrap true >/dev/null ||
					{ bench_teardown; die "sbatch failed"; }
			done
			wait_empty
			stepds_gone
			measured "$BENCH_JOBS"
			t=$(( ($(date +%s%N) - t) / 1000000000 + 1 ))
			# the agent's idle cost over a window as long, before the jobs
			s0=$(snapshot)
			sleep "$t"
			s1=$(snapshot)
			echo "$p0 $s0 $s1" | awk -v r="$r" -v w="$way" -v n="$BENCH_JOBS" '{
				slurmd = ($7 - $2) / 1e9; tree = ($8 - $3) / 1e9
				printf "%s,%s,%d,%.3f,%.6f,%.6f,%.6f,%.6f\n", r, w, n, ($6 - $1) / 1e9, slurmd,
					tree - slurmd + ($10 - $5) / 1e9, ($9 - $4) / 1e9, ($14 - $9) / 1e9 }' \
				>>"$out/jobcost.csv"
			bench_teardown
		done
	done
}

# profile_chunk OUT: where the agent's CPU goes with BENCH_JOBS sleeping
# jobs (perf record of its processes, cpu-clock, BENCH_WINDOW s).
profile_chunk() {
	local out=$1 i pids
	way_setup ceems
	submit_sleepers "$BENCH_JOBS" 900
	wait_running "$BENCH_JOBS"
	measured "$BENCH_JOBS"
	sleep 5
	pids=$(agent_pids | paste -sd, -)
	perf record -q -e cpu-clock -F 999 -g -p "$pids" -o "$out/agent.perf.data" \
		-- sleep "$BENCH_WINDOW" >/dev/null 2>&1
	perf report -q -i "$out/agent.perf.data" --stdio --no-children \
		--sort dso,symbol -g none --percent-limit 1 >"$out/agent-profile.txt" 2>&1
	rm -f "$out/agent.perf.data"
	# and its system calls, counted (strace slows them: counts only)
	if command -v strace >/dev/null; then
		timeout -s INT "$BENCH_WINDOW" strace -c -f $(agent_pids | sed 's/^/-p /') \
			-o "$out/agent-syscalls.txt" >/dev/null 2>&1
	fi
	scancel -u nobody 2>/dev/null
	bench_teardown
}

accuracy_chunk() {
	local idle=$1 out=$2
	export CEEMS_TEST_SLURM_CONF_EXTRA= CEEMS_CLUSTER_INTERVAL=1s CEEMS_CLUSTER_PLUGIN=yes
	unset CEEMS_TEST_JOBACCT_GATHER CEEMS_TEST_JOBACCT_FREQ
	case $idle in
		configured) export CEEMS_CLUSTER_CONF= ;;
		learn) export CEEMS_CLUSTER_CONF="idle_power_package = learn
idle_power_dram = learn" ;;
		*) die "accuracy: IDLE is configured or learn" ;;
	esac
	ceems_cluster_setup "benchacc" summary=full || { bench_teardown; die "cluster did not start"; }
	if ! mix_run "$BENCH_MIX_SCALE" "$CEEMS_DIR/mix"; then
		bench_teardown
		die "the mix failed"
	fi
	cp "$CEEMS_DIR/mix/mix.csv" "$out/accuracy-$idle.csv"
	# the same jobs as a user reads them
	"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" -X \
		-j "$(cut -d' ' -f1 "$CEEMS_DIR/mix/jobs" | paste -sd, -)" \
		-o JobID,JobName,Elapsed,CPUEff,EnergyCPU,EnergyDRAM,ConsumedEnergyRaw,CO2e,CIFactor,PUE \
		>"$out/accuracy-$idle.sacct" 2>&1
	bench_teardown
}

# batch_cpu ROUND WAY OUT: BENCH_JOBS jobs of `true` at once, until the
# last slurmstepd has gone; one line of OUT/jobpair.csv.
batch_cpu() {
	local r=$1 way=$2 out=$3 s0 s1 i
	s0=$(snapshot)
	for i in $(seq "$BENCH_JOBS"); do
		submit nobody -p over -c1 --mem=64M -o /dev/null --wrap true >/dev/null ||
			{ bench_teardown; die "sbatch failed"; }
	done
	wait_empty
	stepds_gone
	s1=$(snapshot)
	echo "$s0 $s1" | awk -v r="$r" -v w="$way" -v n="$BENCH_JOBS" '{
		slurmd = ($7 - $2) / 1e9; tree = ($8 - $3) / 1e9
		printf "%s,%s,%d,%.3f,%.6f,%.6f,%.6f\n", r, w, n, ($6 - $1) / 1e9, slurmd,
			tree - slurmd + ($10 - $5) / 1e9, ($9 - $4) / 1e9 }' >>"$out/jobpair.csv"
}

# jobpair_chunk OUT: the plugin's cost in slurmstepd, batches with and
# without it in one cluster -> OUT/jobpair.csv.
jobpair_chunk() {
	local out=$1 r way stack registered=0
	[ -s "$out/jobpair.csv" ] ||
		echo "round,way,jobs,window_s,slurmd_cpu_s,stepd_cpu_s,agent_cpu_s" >"$out/jobpair.csv"
	way_setup ceems
	stack=$(cat "$SLURM_DIR/plugstack.conf")
	[ -n "$stack" ] || { bench_teardown; die "way ceems has an empty plugstack.conf"; }
	sleep 3
	for r in $(seq "$BENCH_STEADY_ROUNDS"); do
		for way in $( [ $((r % 2)) = 1 ] && echo ceems none || echo none ceems); do
			if [ "$way" = ceems ]; then
				printf '%s\n' "$stack" >"$SLURM_DIR/plugstack.conf"
			else
				: >"$SLURM_DIR/plugstack.conf"
			fi
			batch_cpu "$r" "$way" "$out"
			if [ "$way" = ceems ]; then
				registered=$((registered + BENCH_JOBS))
				measured "$registered"
			fi
		done
	done
	printf '%s\n' "$stack" >"$SLURM_DIR/plugstack.conf"
	bench_teardown
}

machine() {
	local cpu
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "$(nproc) CPUs, ${cpu:-unknown CPU}, $(free -g | awk '/^Mem:/ { print $2 }') GiB," \
		"Linux $(uname -r), $(slurmd -V), cgroup $(stat -fc %T /sys/fs/cgroup)," \
		"$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$src" rev-parse --short HEAD 2>/dev/null)"
}

[ "$(id -u)" = 0 ] || die "run as root (the cluster needs it)"
[ -x "$CEEMS_TOP_BUILDDIR/tests/doubles/fake-rapl" ] || die "no tests/doubles/fake-rapl in $CEEMS_TOP_BUILDDIR: run make check first"
[ -x "$CEEMS_TOP_BUILDDIR/tests/bench/bench_wakeup" ] || die "no tests/bench/bench_wakeup in $CEEMS_TOP_BUILDDIR: make tests/bench/bench_wakeup"
cmd=${1:-}
shift || true
case $cmd in
	overhead) [ $# = 3 ] || die "usage: overhead ROUND WAY OUT"
		mkdir -p "$3" && overhead_chunk "$1" "$2" "$(cd "$3" && pwd)" ;;
	steady) [ $# = 1 ] || die "usage: steady OUT"
		mkdir -p "$1" && steady_chunk "$(cd "$1" && pwd)" ;;
	jobcost) [ $# = 1 ] || die "usage: jobcost OUT"
		mkdir -p "$1" && jobcost_chunk "$(cd "$1" && pwd)" ;;
	jobpair) [ $# = 1 ] || die "usage: jobpair OUT"
		mkdir -p "$1" && jobpair_chunk "$(cd "$1" && pwd)" ;;
	profile) [ $# = 1 ] || die "usage: profile OUT"
		mkdir -p "$1" && profile_chunk "$(cd "$1" && pwd)" ;;
	scale) [ $# = 1 ] || die "usage: scale OUT"
		mkdir -p "$1" && scale_chunk "$(cd "$1" && pwd)" ;;
	accuracy) [ $# = 2 ] || die "usage: accuracy IDLE OUT"
		mkdir -p "$2" && accuracy_chunk "$1" "$(cd "$2" && pwd)" ;;
	round) [ $# = 2 ] || die "usage: round R OUT"
		for w in $WAYS; do
			bash "$0" overhead "$1" "$w" "$2" || exit 1
		done ;;
	all) [ $# = 1 ] || die "usage: all OUT"
		mkdir -p "$1" && out=$(cd "$1" && pwd) || exit 1
		rm -f "$out/overhead.csv" "$out/latency.csv"
		machine >"$out/machine.txt"
		for r in $(seq "$BENCH_ROUNDS"); do
			flock "$LOCK" bash "$0" round "$r" "$out" || exit 1
		done
		flock "$LOCK" bash -c 'bash "$0" scale "$1" && bash "$0" profile "$1"' "$0" "$out" || exit 1
		flock "$LOCK" bash "$0" steady "$out" || exit 1
		flock "$LOCK" bash -c 'bash "$0" accuracy configured "$1" && bash "$0" accuracy learn "$1"' "$0" "$out" || exit 1 ;;
	*) die "usage: run-sidebyside.sh all|overhead|scale|accuracy ... (see its top comment)" ;;
esac
