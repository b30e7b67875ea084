# sacct-compare.bash - Slurm's sacct and ceems-sacct compared field by
# field for the same jobs, for tests whose cluster keeps Slurm's own
# accounting (slurmdbd): sacct-dropin.bats (jobs of every end) and
# multinode-db.bats (a job across nodes).
#
#   sacct_compare IDS CONF    every field sacct --helpformat prints, for
#                             the jobs IDS (comma-separated), through
#                             sacct and ceems-sacct -c CONF; returns 1
#                             when a field differs where it must not
#
# A field ceems fills in sacct's format (status "sacct" in ceems-sacct
# --explain-fields) is identical, unless it is one of the differences
# doc/sacct-fields.md names (SACCT_DIFFERS below, with why); a field
# ceems does not keep (status "empty") is an empty cell.  Every field and
# every line is written to fd 3, so that a run shows the whole
# comparison.

# The sacct fields ceems fills whose value differs from sacct's, and
# why (doc/sacct-fields.md says the same).
declare -gA SACCT_DIFFERS=(
	[MaxRSS]="the step's cgroup peak on its node, not its largest task's sampled RSS"
	[TotalCPU]="the cgroup's CPU time, not the tasks' rusage"
	[Elapsed]="a step's: its cgroup's life, where sacct's is its end minus its start in whole seconds"
	[ElapsedRaw]="a step's: its cgroup's life, where sacct's is its end minus its start in whole seconds"
	[ConsumedEnergy]="ceems's measure, not Slurm's energy plugin's (none, or acct_gather_energy/ceems's by its own split)"
	[ConsumedEnergyRaw]="ceems's measure, not Slurm's energy plugin's (none, or acct_gather_energy/ceems's by its own split)"
	[TRESUsageInTot]="the parts ceems keeps only (cpu, the cgroup's; energy, ceems's measure), not fs/disk, mem, pages, vmem"
	[TRESUsageInMax]="mem only, MaxRSS's: the step's cgroup peak on its node, not its largest task's sampled RSS"
	[TRESUsageOutAve]="energy=: ceems's mean power of the step; fs/disk not kept"
	[TRESUsageOutTot]="energy=: ceems's mean power of the step; fs/disk not kept"
)

# sacct_compare_fields: every field sacct prints (its --helpformat:
# names only).
sacct_compare_fields() {
	sacct --helpformat | tr -s ' \n' '\n' | grep .
}

# sacct_compare_listing TOOL IDS CONF FIELDS: TOOL's lines for the jobs,
# sorted by JobID (the first field), every field asked for.
sacct_compare_listing() {
	local tool=$1 ids=$2 conf=$3 fields=$4
	if [ "$tool" = sacct ]; then
		sacct -P -n -j "$ids" -o "JobID,$fields"
	else
		"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$conf" -P -n -j "$ids" -o "JobID,$fields"
	fi | LC_ALL=C sort -t'|' -k1,1
}

# sacct_compare_cells SACCT CEEMS: one column of both listings, line by
# line (same lines, same order): "same", "none" (ceems empty where
# sacct has a value), or "differ", one word a line.
sacct_compare_cells() {
	paste -d'\n' <(printf '%s\n' "$1") <(printf '%s\n' "$2") |
		awk 'NR % 2 { s = $0; next } { print ($0 == s ? "same" : $0 == "" ? "none" : "differ") }'
}

sacct_compare() {
	local ids=$1 conf=$2 fields names s c f i n sv cv kinds states=
	local bad=0 same=0 partly=0 differ=0 empty=0
	mapfile -t names < <(sacct_compare_fields)
	fields=$(IFS=,; echo "${names[*]}")
	s=$(sacct_compare_listing sacct "$ids" "$conf" "$fields")
	c=$(sacct_compare_listing ceems "$ids" "$conf" "$fields")
	if [ "$(cut -d'|' -f1 <<<"$s")" != "$(cut -d'|' -f1 <<<"$c")" ]; then
		echo "not the same lines: sacct [$(cut -d'|' -f1 <<<"$s" | paste -sd' ')]" \
			"ceems-sacct [$(cut -d'|' -f1 <<<"$c" | paste -sd' ')]"
		return 1
	fi
	declare -A status
	while read -r f st _; do status[$f]=$st; done < <(
		"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" --explain-fields)
	n=${#names[@]}
	# sacct's State of each line, for ExitCode below
	for i in $(seq 1 "$n"); do
		[ "${names[$((i - 1))]}" = State ] && states=$(cut -d'|' -f$((i + 1)) <<<"$s")
	done
	for i in $(seq 1 "$n"); do
		f=${names[$((i - 1))]}
		sv=$(cut -d'|' -f$((i + 1)) <<<"$s")
		cv=$(cut -d'|' -f$((i + 1)) <<<"$c")
		# sacct names who cancelled a job; ceems does not keep it
		[ "$f" = State ] && sv=$(sed 's/^CANCELLED by [0-9]*$/CANCELLED/' <<<"$sv")
		# A cancelled job's exit code: Slurm's 0:0, or, when
		# slurmctld's word reached the agent after the job's record,
		# its batch step's signal (doc/sacct-fields.md, ExitCode)
		[ "$f" = ExitCode ] && cv=$(paste -d'|' <(printf '%s\n' "$states") \
			<(printf '%s\n' "$sv") <(printf '%s\n' "$cv") |
			awk -F'|' '{ print ($1 ~ /^CANCELLED/ && $2 == "0:0" && $3 ~ /^0:[0-9]+$/) ? $2 : $3 }')
		kinds=$(sacct_compare_cells "$sv" "$cv" | sort -u | paste -sd' ')
		case ${status[$f]:-}:$kinds in
		empty:same | empty:none | "empty:none same")
			empty=$((empty + 1)) ;;
		empty:*)
			echo "$f: ceems does not keep it, yet printed: $(paste -sd' ' <<<"$cv")"
			bad=1 ;;
		sacct:same)
			same=$((same + 1))
			echo "# $f: identical" >&3 ;;
		sacct:none | "sacct:none same")
			partly=$((partly + 1))
			echo "# $f: identical where ceems has it: sacct [$(paste -sd' ' <<<"$sv")] ceems [$(paste -sd' ' <<<"$cv")]" >&3 ;;
		sacct:*)
			if [ -n "${SACCT_DIFFERS[$f]:-}" ]; then
				differ=$((differ + 1))
				echo "# $f: differs (${SACCT_DIFFERS[$f]}): sacct [$(paste -sd' ' <<<"$sv")] ceems [$(paste -sd' ' <<<"$cv")]" >&3
			else
				echo "$f: sacct [$(paste -sd' ' <<<"$sv")] ceems [$(paste -sd' ' <<<"$cv")]"
				bad=1
			fi ;;
		*)
			echo "$f: sacct prints it, ceems-sacct --explain-fields does not list it"
			bad=1 ;;
		esac
	done
	echo "# $n fields: $same identical, $partly identical where ceems has them, $differ differing as documented, $empty not kept (empty)" >&3
	[ "$bad" = 0 ]
}
