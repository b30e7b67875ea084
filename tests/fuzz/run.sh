#!/bin/sh
# run.sh - build the libFuzzer targets of tests/fuzz and run each for a
# bounded time on its seed corpus.  Called by `make fuzz` from the build
# directory:
#   run.sh TOP_SRCDIR 'LIBCEEMS_SOURCES' TARGET...
# with FUZZ_CC (clang), FUZZ_TIME (seconds per target), FUZZ_CPPFLAGS
# and FUZZ_LIBS in the environment.  Outputs go to tests/fuzz/ of the
# build directory: corpus-T/ (what libFuzzer found, kept between runs),
# seeds-T/ (copied from tests/fixtures at each run) and crash-T-* files.
set -eu

top_srcdir=$1
lib_sources=$2
shift 2
cc=${FUZZ_CC:-clang}
max_time=${FUZZ_TIME:-30}
out=tests/fuzz
flags="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined
	-fno-sanitize-recover=all"

# The seeds of each target, as "DIR GLOB" pairs under tests/fixtures (the
# same files tests/unit/test_fuzz_parsers.c starts from).
seeds_of() {
	case $1 in
	cgroup_path) echo "proc cgroup-*.txt proc mountinfo-*.txt"
		echo "cgroup cgroup-*.txt cgroup mountinfo.txt" ;;
	cgroup_stats) echo "cgroup *" ;;
	proc_stats) echo "proc stat* proc meminfo*" ;;
	conf) echo "conf *" ;;
	emissions) echo "emissions *" ;;
	intensity) echo "intensity *" ;;
	factors_import) echo "factors-import *" ;;
	energy) echo "sys *" ;;
	agent_proto) echo "agent *.json" ;;
	job_note) echo "notes *.json" ;;
	gather) echo "gather *" ;;
	mark_line) echo "agent *.line" ;;
	sacct) echo "sacct/spool *.json" ;;
	text) echo "sacct/spool *.json" ;;
	*) echo "run.sh: no seeds known for target '$1'" >&2; exit 1 ;;
	esac
}

mkdir -p "$out/obj"
# The library and the checks, instrumented for libFuzzer's coverage but
# without its main(); linked from an archive so that each target takes
# only the objects it needs.  FUZZ_CPPFLAGS is split on blanks, with no
# shell quoting: a -D value needs none (-DNAME="text").
objs=""
for src in $lib_sources tests/fuzz/checks.c; do
	case $src in *.c) ;; *) continue ;; esac
	obj="$out/obj/$(basename "$src" .c).o"
	# shellcheck disable=SC2086 # the flag lists are split on purpose
	$cc $flags -fsanitize=fuzzer-no-link $FUZZ_CPPFLAGS \
		-I"$top_srcdir/tests/fuzz" -c "$top_srcdir/$src" -o "$obj"
	objs="$objs $obj"
done
rm -f "$out/libceems-fuzz.a"
# shellcheck disable=SC2086
ar rcs "$out/libceems-fuzz.a" $objs

failed=""
for t in "$@"; do
	echo "== fuzz_$t: building"
	# shellcheck disable=SC2086
	$cc $flags -fsanitize=fuzzer $FUZZ_CPPFLAGS -I"$top_srcdir/tests/fuzz" \
		"$top_srcdir/tests/fuzz/fuzz_$t.c" "$out/libceems-fuzz.a" \
		$FUZZ_LIBS -o "$out/fuzz_$t"

	rm -rf "$out/seeds-$t"
	mkdir -p "$out/seeds-$t" "$out/corpus-$t"
	seeds_of "$t" | while read -r line; do
		# Split the pairs, leaving their globs for find.
		set -f
		# shellcheck disable=SC2086
		set -- $line
		set +f
		while [ $# -ge 2 ]; do
			find "$top_srcdir/tests/fixtures/$1" -type f -name "$2" |
			while read -r f; do
				name=$(echo "${f#"$top_srcdir"/tests/fixtures/}" | tr '/' '_')
				cp "$f" "$out/seeds-$t/$name"
			done
			shift 2
		done
	done

	echo "== fuzz_$t: $(find "$out/seeds-$t" -type f | wc -l) seeds, ${max_time} s"
	if ! "$out/fuzz_$t" -max_total_time="$max_time" -print_final_stats=1 \
		-artifact_prefix="$out/crash-$t-" \
		"$out/corpus-$t" "$out/seeds-$t" >"$out/fuzz_$t.log" 2>&1; then
		tail -n 40 "$out/fuzz_$t.log"
		echo "== fuzz_$t: FAILED; reproduce with $out/fuzz_$t $out/crash-$t-*"
		failed="$failed $t"
	else
		grep -E '^(Done|stat::number_of_executed_units|stat::new_units_added)' \
			"$out/fuzz_$t.log" || true
	fi
done

if [ -n "$failed" ]; then
	echo "make fuzz: failed:$failed" >&2
	exit 1
fi
echo "make fuzz: every target ran ${max_time} s without a finding"
