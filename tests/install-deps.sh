#!/bin/sh
# install-deps.sh - install the Debian 12 packages (from Debian's own
# archive) that ceems needs, for one of two uses:
#
#   demo    what ./tests/demo.sh needs: the build dependencies and the
#           parts the demo runs (Slurm, munge, PostgreSQL)
#   suite   all of that and what the test suite (tests/run-all.sh) runs:
#           bats, valgrind, the sanitizers' and fuzzers' runtime, lintian
#           and debhelper for the packages, ipmi_sim as a BMC, qemu and
#           busybox-static for the eBPF tests in a virtual machine
#           (tests/vm/README), python3, jq...  The default.
#
#   install-deps.sh [demo|suite]          install what is missing
#   install-deps.sh --list [demo|suite]   print the packages, one a line
#
# Idempotent and non-interactive: apt-get runs only when something is
# missing, without the packages' Recommends (the lists name everything
# used).  It prints one line per stage; apt-get's output goes to a log
# (CEEMS_INSTALL_LOG, or _build/logs/install-deps.log in the checkout),
# and the failing stage's part of it is shown when apt-get fails.  Run as
# root.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)

BUILD_PACKAGES="autoconf automake libtool pkg-config make gcc libc6-dev
	libslurm-dev libjson-c-dev libcap-dev libmunge-dev libpq-dev libbpf-dev
	libelf-dev zlib1g-dev clang bpftool libfreeipmi-dev"
DEMO_PACKAGES="slurmctld slurmd slurm-client munge postgresql-15
	postgresql-client-15"
# llvm: llvm-symbolizer, which the sanitizers' reports are symbolized
# with; libclang-rt-14-dev: the fuzzers' runtime; librocm-smi-dev: the
# ROCm backend's tests open the real library; debhelper, lintian, git
# and build-essential (which dpkg-buildpackage requires of every build,
# and dpkg-dev only recommends): the Debian packages
# (tests/packaging/debian.bats), which also runs doc/storage.md's
# `apt-get install postgresql` as written (installed here, it is a no-op)
# and makes a CA with openssl for the central server's TLS.  slurmdbd
# and mariadb-server: Slurm's own accounting (sacct, sstat) that the
# acct_gather_energy/ceems plugin feeds (tests/integration/acct-energy.bats);
# debootstrap: the Debian roots of newer Slurm releases
# (tests/matrix/run.sh); rpm and rpmlint: the RPM packages
# (tests/packaging/rpm.bats); faketime: slurmdbd restarted hours ahead
# rolls up the hour of the jobs just run, which sreport reads
# (tests/integration/multinode-db.bats); exim4-daemon-light: the MTA
# the reports are mailed through (tests/integration/reports.bats).
SUITE_PACKAGES="slurmdbd mariadb-server faketime llvm libclang-rt-14-dev librocm-smi-dev debhelper lintian
	git build-essential postgresql openssl bats iproute2 procps util-linux valgrind jq python3
	time openipmi libopenipmi-dev linux-perf qemu-system-x86 busybox-static
	debootstrap rpm rpmlint exim4-daemon-light"

list=no
if [ "${1:-}" = --list ]; then
	list=yes
	shift
fi
case "${1:-suite}" in
demo) packages="$BUILD_PACKAGES $DEMO_PACKAGES" ;;
suite) packages="$BUILD_PACKAGES $DEMO_PACKAGES $SUITE_PACKAGES" ;;
*)
	echo "usage: install-deps.sh [--list] [demo|suite]" >&2
	exit 2
	;;
esac
if [ "$list" = yes ]; then
	# shellcheck disable=SC2086 # one package a line
	printf '%s\n' $packages
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

missing=""
count=0
total=0
for pkg in $packages; do
	total=$((total + 1))
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*)
		missing="$missing $pkg"
		count=$((count + 1))
		;;
	esac
done
if [ -z "$missing" ]; then
	echo "install-deps.sh: the $total packages needed are installed"
	exit 0
fi

log=${CEEMS_INSTALL_LOG:-$top/_build/logs/install-deps.log}
mkdir -p "$(dirname "$log")"
: >"$log"

# stage WHAT COMMAND...: one line for the stage; the command's output
# into the log, and on failure that part of the log on stderr.
stage() {
	what=$1
	shift
	start=$(wc -l <"$log")
	printf 'install-deps.sh: %s ... ' "$what"
	if "$@" >>"$log" 2>&1; then
		echo "done"
		return 0
	fi
	echo failed
	echo "install-deps.sh: $1 failed; its output (all of it in $log):" >&2
	tail -n "+$((start + 1))" "$log" >&2
	exit 1
}

export DEBIAN_FRONTEND=noninteractive
stage "updating the package lists" apt-get update
[ "$count" = 1 ] && noun=package || noun=packages
# shellcheck disable=SC2086 # word splitting of the list is intended
stage "installing $count $noun:$missing" \
	apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 $missing
