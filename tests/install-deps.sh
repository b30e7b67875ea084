#!/bin/sh
# install-deps.sh - install the Debian 12 packages that ceems needs to build
# and to run its tests and demo (real Slurm, PostgreSQL, munge, bats).
# Idempotent and non-interactive: it only calls apt-get when something is
# missing.  Run as root.  qemu-system-x86 and busybox-static run the eBPF
# tests in a virtual machine on Debian's own kernel (tests/vm/README).
set -eu

BUILD_PACKAGES="autoconf automake libtool pkg-config make gcc clang llvm
	libslurm-dev libjson-c-dev libcap-dev libpq-dev libbpf-dev libelf-dev
	zlib1g-dev bpftool libfreeipmi-dev librocm-smi-dev libclang-rt-14-dev"
# The Debian packages (debian/, tests/packaging/debian.bats).
PACKAGING_PACKAGES="debhelper lintian"
TEST_PACKAGES="slurmctld slurmd slurm-client munge postgresql-15
	postgresql-client-15 bats iproute2 procps util-linux valgrind jq
	python3 time openipmi libopenipmi-dev
	linux-perf qemu-system-x86 busybox-static"

if [ "$(id -u)" != 0 ]; then
	echo "install-deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

missing=""
for pkg in $BUILD_PACKAGES $PACKAGING_PACKAGES $TEST_PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done

if [ -n "$missing" ]; then
	echo "install-deps.sh: installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	# shellcheck disable=SC2086 # word splitting of the list is intended
	apt-get install -y -qq $missing
fi
