# accuracy-mix.bash - a mix of jobs sharing the simulated RAPL node of
# ceems-cluster.bash, each job's energy as ceems attributes it, as the
# node's power model says it is (the ground truth) and as Slurm's energy
# accounting gives it (the node's energy over the job's life).  Shared by
# accuracy-mix.bats (the check) and tests/bench/run-sidebyside.sh (the
# published figures).
#
# The mix, each job one core of the node's two, so that two jobs always
# share the node: a CPU burner (B s), a job holding its core and sleeping
# (B/2 s), a 50% duty-cycle job (0.5 s busy, 0.5 s asleep, 3B/4 s) that
# starts when the sleeper ends, and a job of three steps (burn, sleep,
# burn) that starts when the burner ends.
#
# The truth is computed from the model's inputs, not from ceems: fake-rapl
# makes the package draw P_IDLE + K_ACTIVE x (the node's busy CPU rate),
# so a job holding C of the node's N CPUs for T seconds and using c
# CPU-seconds is responsible for P_IDLE x C / N x T + K_ACTIVE x c
# joules.  T, C and c come from the job's own cgroup, watched by
# tests/bench/sidebyside_sample.py (which also reads the node's counter
# over each job's life: the Slurm-style figure).  The agent is told the
# node's idle power (idle_power_package in ceems.conf), as an admin who
# measured it once does.
#
# Call mix_run SCALE OUT from a set-up cluster (ceems_cluster_setup, with
# the jobs' user nobody); it writes OUT/mix.csv:
#   jobid,kind,cores,life_s,cpu_s,truth_j,ceems_j,slurm_j,ceems_err_pct,
#   slurm_err_pct,ceems_dram_j,ceems_co2e_g,g_per_kwh,pue
# (package energy; errors relative to the truth, signed).

# mix_burn SECONDS: a shell command that keeps one CPU busy that long.
mix_burn() {
	echo "timeout $1 sh -c 'while :; do :; done'; true"
}

# mix_submit SCALE: submit the four jobs; prints "ID KIND" lines.
mix_submit() {
	local b=$1 id
	id=$(submit nobody -J burner -c1 --mem=256M --wrap "$(mix_burn "$b")") || return 1
	echo "$id burner"
	id=$(submit nobody -J sleeper -c1 --mem=256M --wrap "sleep $((b / 2))") || return 1
	echo "$id sleeper"
	id=$(submit nobody -J duty50 -c1 --mem=256M --wrap \
		"end=\$((\$(date +%s) + $((b * 3 / 4)))); while [ \$(date +%s) -lt \$end ]; do $(mix_burn 0.5); sleep 0.5; done") || return 1
	echo "$id duty50"
	id=$(submit nobody -J steps -c1 --mem=256M --wrap \
		"srun -n1 sh -c \"$(mix_burn $((b / 5)))\"; srun -n1 sleep $((b / 10)); srun -n1 sh -c \"$(mix_burn $((b / 5)))\"") || return 1
	echo "$id steps"
}

# mix_run SCALE OUT: run the mix with the observer, wait for every job
# and its record, write OUT/mix.csv.
mix_run() {
	local b=$1 out=$2 sampler id kind state r
	mkdir -p "$out" || return 1
	python3 "$CEEMS_TOP_SRCDIR/tests/bench/sidebyside_sample.py" \
		--sys "$CEEMS_DIR/sys" --out "$out/observed.csv" 3>&- &
	sampler=$!
	mix_submit "$b" >"$out/jobs" || { kill "$sampler"; return 1; }
	while read -r id kind; do
		state=$(finish "$id") || { kill "$sampler"; return 1; }
		[ "$state" = COMPLETED ] || echo "mix: job $id ($kind) ended $state" >&2
	done <"$out/jobs"
	# the observer sees the cgroups go; the records follow the epilog
	while read -r id kind; do
		r=$(record_of "$id") || { kill "$sampler"; return 1; }
		cp "$r" "$out/record-$id.json"
	done <"$out/jobs"
	sleep 1
	kill -TERM "$sampler"
	wait "$sampler" || return 1
	mix_table "$out"
}

# mix_table OUT: join what was observed with ceems's records.
mix_table() {
	local out=$1 id kind obs ncpus
	ncpus=$(getconf _NPROCESSORS_ONLN)
	echo "jobid,kind,cores,life_s,cpu_s,truth_j,ceems_j,slurm_j,ceems_err_pct,slurm_err_pct,ceems_dram_j,ceems_co2e_g,g_per_kwh,pue" \
		>"$out/mix.csv"
	while read -r id kind; do
		obs=$(awk -F, -v id="$id" '$1 == id' "$out/observed.csv")
		[ -n "$obs" ] || { echo "mix: the observer never saw job $id's cgroup" >&2; return 1; }
		jq -r '[.measurements.ledger.package.joules // "",
			.measurements.ledger.dram.joules // "",
			.measurements.ledger.emissions.grams // "",
			.measurements.ledger.emissions.factor.g_per_kwh // "",
			.measurements.ledger.emissions.factor.pue // ""] | @csv' \
			"$out/record-$id.json" | tr -d '"' |
		awk -F, -v obs="$obs" -v kind="$kind" -v n="$ncpus" \
			-v pidle="$P_IDLE" -v k="$K_ACTIVE" '{
			split(obs, o, ",")
			life = o[3] - o[2]; cores = o[4]; cpu = o[5]
			truth = pidle * cores / n * life + k * cpu
			printf "%s,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.6f,%s,%s\n",
				o[1], kind, cores, life, cpu, truth, $1, o[6],
				($1 - truth) / truth * 100, (o[6] - truth) / truth * 100,
				$2, $3, $4, $5
		}' >>"$out/mix.csv"
	done <"$out/jobs"
}
