#!/bin/bash
# tests/matrix/inside.sh -- runs inside a matrix root (tests/matrix/root.sh),
# as root, with the source tree copied to /ceems/src:
#
#   inside.sh build           autoreconf, configure --enable-werror and make
#                             (the tests' programs too) in /ceems/build,
#                             against the root's Slurm
#   inside.sh test TEST...    the integration tests named (smoke, jobs...:
#                             tests/integration/NAME.bats) through make
#                             check, with the root's PostgreSQL; the caller
#                             holds the cluster lock
#   inside.sh cleanup         stop whatever a test killed mid-run left: its
#                             Slurm cluster, its PostgreSQL
#   inside.sh versions        one line: the root's Slurm, PostgreSQL, gcc
set -u

src=/ceems/src
build=/ceems/build

pg_bin() {
	# shellcheck disable=SC2012 # /usr/lib/postgresql/NN/bin
	ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1
}

case ${1:-} in
build)
	cd "$src" && autoreconf -fi || exit 1
	rm -rf "$build" && mkdir -p "$build" && cd "$build" || exit 1
	"$src/configure" --enable-werror || { tail -n 40 config.log; exit 1; }
	# The tests' programs too (fake-rapl...), so that the tests, which
	# hold the machine's cluster lock, do not wait for a compiler.
	make -j"$(nproc)" && make -j"$(nproc)" check TESTS=
	;;
test)
	shift
	tests=
	for t in "$@"; do
		tests="$tests tests/integration/$t.bats"
	done
	CEEMS_TEST_PGBIN=$(pg_bin)
	export CEEMS_TEST_PGBIN
	cd "$build" || exit 1
	find . -name '*.trs' -delete
	make -j1 check TESTS="${tests# }"
	;;
cleanup)
	# shellcheck source=tests/harness/slurm.sh
	. "$src/tests/harness/slurm.sh"
	# shellcheck source=tests/harness/pg.sh
	. "$src/tests/harness/pg.sh"
	rc=0
	for d in /tmp/ceems-test.slurm.*; do
		[ -d "$d" ] || continue
		echo "inside.sh: stopping the cluster left in $d"
		slurm_harness_stop "$d" || rc=1
	done
	for d in /tmp/ceems-test.pg.*; do
		[ -d "$d" ] || continue
		echo "inside.sh: stopping the PostgreSQL left in $d"
		CEEMS_TEST_PGBIN=$(pg_bin) pg_harness_stop "$d" || rc=1
	done
	slurm_harness_leftovers || rc=1
	exit $rc
	;;
versions)
	printf 'Slurm %s, PostgreSQL %s, %s\n' \
		"$(dpkg-query -W -f '${Version}' slurmd)" \
		"$("$(pg_bin)/postgres" --version | awk '{print $3}')" \
		"$(gcc --version | head -n 1)"
	;;
*)
	echo "usage: inside.sh build | test TEST... | cleanup | versions" >&2
	exit 2
	;;
esac
