# shellcheck shell=bash
# tests/matrix/root.sh -- sourceable bash library: a Debian root made with
# debootstrap from Debian's archive (the suites trixie, sid...), holding
# a newer Slurm, PostgreSQL and ceems's build dependencies, in which the
# project is built and its end-to-end tests run (tests/matrix/run.sh).
# The root shares this machine's kernel, cgroups, /proc, /dev and
# loopback: only the userland (Slurm, libc, compilers) is the suite's.
#
#   . tests/matrix/root.sh
#   matrix_root_make ROOT SUITE MIRROR LOG   # build once; reused while its
#                                            # stamp matches the package list
#   matrix_root_mount ROOT                   # /proc /sys /dev binds (rslave)
#   matrix_root_run ROOT COMMAND...          # chroot, clean environment
#   matrix_root_umount ROOT                  # idempotent, also after a
#                                            # partial mount
#   matrix_root_mounted ROOT                 # the mounts under ROOT, one a line
#
# Functions report failures on stderr and return non-zero.

# What the root holds besides debootstrap's minimal base: the build
# dependencies (as tests/install-deps.sh's BUILD_PACKAGES, with the
# suite's PostgreSQL whatever its version), the daemons the tests start,
# and the tools the .bats files run.
MATRIX_ROOT_PACKAGES="autoconf automake libtool pkgconf make gcc libc6-dev
	libslurm-dev libjson-c-dev libcap-dev libmunge-dev libpq-dev libbpf-dev
	libelf-dev zlib1g-dev clang bpftool libfreeipmi-dev
	slurmctld slurmd slurm-client munge postgresql postgresql-client
	bats jq python3 procps iproute2 util-linux mount time ca-certificates"

_matrix_root_err() {
	echo "matrix_root: $*" >&2
}

# The stamp: what a finished root was made of.  A root without it (an
# interrupted build) or with another list is made again.
_matrix_root_stamp() {
	# shellcheck disable=SC2086 # one word a package
	printf '%s\n' "$1" $MATRIX_ROOT_PACKAGES
}

# matrix_root_make ROOT SUITE MIRROR LOG
matrix_root_make() {
	local root=$1 suite=$2 mirror=$3 log=$4 stamp
	stamp=$(_matrix_root_stamp "$suite")
	if [ -f "$root/.ceems-matrix-stamp" ] &&
	   [ "$(cat "$root/.ceems-matrix-stamp")" = "$stamp" ]; then
		echo "matrix_root: $suite root in $root is ready (cached)"
		return 0
	fi
	if [ -n "$(matrix_root_mounted "$root")" ]; then
		_matrix_root_err "$root has mounts; not removing it"
		return 1
	fi
	rm -rf --one-file-system "$root"
	mkdir -p "$(dirname "$root")"
	if ! debootstrap --variant=minbase "$suite" "$root" "$mirror" >>"$log" 2>&1; then
		_matrix_root_err "debootstrap $suite from $mirror failed (see $log)"
		tail -n 20 "$log" >&2
		return 1
	fi
	# No service starts in the root while packages are installed: munge,
	# PostgreSQL and Slurm are started by the tests' harness only.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 0755 "$root/usr/sbin/policy-rc.d"
	# The tests' cluster is NodeName=localhost on 127.0.0.1.
	printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n' >"$root/etc/hosts"
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	# A mirror that is a snapshot of the archive serves Release files
	# past their Valid-Until (sid's lasts a week): accepted, as the
	# debootstrap just done accepted them.
	echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/90ceems-matrix"
	matrix_root_mount "$root" || { matrix_root_umount "$root"; return 1; }
	# shellcheck disable=SC2086 # one word a package
	if ! matrix_root_run "$root" sh -c 'apt-get update &&
		apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "$@"' \
		sh $MATRIX_ROOT_PACKAGES >>"$log" 2>&1; then
		_matrix_root_err "installing the packages in the $suite root failed (see $log)"
		tail -n 30 "$log" >&2
		matrix_root_umount "$root"
		return 1
	fi
	matrix_root_run "$root" apt-get clean >>"$log" 2>&1
	matrix_root_umount "$root" || return 1
	echo "$stamp" >"$root/.ceems-matrix-stamp"
	echo "matrix_root: $suite root made in $root"
}

# matrix_root_mounted ROOT: mount points at or below ROOT, deepest first.
matrix_root_mounted() {
	local root
	root=$(realpath -m "$1")
	awk -v r="$root" '$5 == r || index($5, r "/") == 1 { print $5 }' \
		/proc/self/mountinfo | sort -r
}

# matrix_root_mount ROOT: the host's /proc, /sys (with its cgroup
# hierarchies, bpffs, tracefs) and /dev inside ROOT.  Recursive binds
# made slaves, so that unmounting them never reaches the host's mounts.
matrix_root_mount() {
	local root=$1 d
	for d in proc sys dev; do
		mkdir -p "$root/$d"
		if mountpoint -q "$root/$d"; then
			continue
		fi
		if ! mount --rbind "/$d" "$root/$d" ||
		   ! mount --make-rslave "$root/$d"; then
			_matrix_root_err "cannot bind /$d into $root"
			return 1
		fi
	done
	# The root's own /tmp and /run: what the tests leave there stays in
	# the root (they are plain directories of it).
	chmod 1777 "$root/tmp"
}

# matrix_root_umount ROOT: every mount below ROOT, deepest first; lazily
# for one that is busy.  Non-zero if something stays mounted.
matrix_root_umount() {
	local root=$1 m
	for m in $(matrix_root_mounted "$root"); do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	if [ -n "$(matrix_root_mounted "$root")" ]; then
		_matrix_root_err "still mounted under $root: $(matrix_root_mounted "$root" | tr '\n' ' ')"
		return 1
	fi
}

# matrix_root_run ROOT COMMAND...: run COMMAND in ROOT as root, with a
# clean environment (nothing of the host's SLURM_CONF, PATH...).
matrix_root_run() {
	local root=$1
	shift
	env -i HOME=/root TERM=dumb LC_ALL=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive chroot "$root" "$@"
}
