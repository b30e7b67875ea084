#!/usr/bin/env bats
# rpm.bats - the RPM packages of rpm/ceems.spec, built by rpmbuild (Debian's
# rpm package) from the release tarball (make dist), as a RHEL build host
# would: the six packages, each file where Slurm's and RHEL's conventions
# put it (the plugin in %{_libdir}/slurm, its plugstack.conf.d line, the
# private libceems found through RUNPATH), the group, modes and owners of
# the agent's directories and of ceems-sacct, the plugin's dependency on
# the Slurm release it was built against, and rpmlint where it is
# installed.  The packages are not installed: this machine is Debian.
#
# The build dependencies are Debian's (tests/install-deps.sh), which rpm
# cannot see: rpmbuild runs with --nodeps, and the Slurm release is
# libslurm-dev's (rpmbuild --define slurm_version).  Needs rpmbuild,
# CEEMS_TOP_BUILDDIR (a configured build tree, for make dist).

_skip_reason() {
	if ! command -v rpmbuild >/dev/null; then
		echo "rpmbuild not installed (Debian's rpm, tests/install-deps.sh)"
	elif [ ! -f "${CEEMS_TOP_BUILDDIR:-}/Makefile" ]; then
		echo "CEEMS_TOP_BUILDDIR is not a configured build tree"
	fi
}

setup_file() {
	[ -z "$(_skip_reason)" ] || return 0
	local top slurm
	top=$(mktemp -d /tmp/ceems-rpm.XXXXXX)
	echo "$top" >"$BATS_FILE_TMPDIR/top"
	mkdir -p "$top/SOURCES"
	# The release tarball of the tree as it is.
	make -C "$CEEMS_TOP_BUILDDIR" dist >"$top/dist.log" 2>&1 ||
		{ tail -n 30 "$top/dist.log" >&2; return 1; }
	mv "$CEEMS_TOP_BUILDDIR/ceems-0.1.0.tar.gz" "$top/SOURCES/" || return 1
	tar -xzf "$top/SOURCES/ceems-0.1.0.tar.gz" -O ceems-0.1.0/rpm/ceems.spec \
		>"$top/ceems.spec" || return 1
	slurm=$(dpkg-query -W -f '${Version}' libslurm-dev | sed 's/-.*//')
	echo "$slurm" >"$BATS_FILE_TMPDIR/slurm"
	rpmbuild -bb --nodeps --define "_topdir $top" --define "slurm_version $slurm" \
		--define "_smp_mflags -j$(nproc)" "$top/ceems.spec" >"$top/rpmbuild.log" 2>&1 ||
		{ tail -n 40 "$top/rpmbuild.log" >&2; return 1; }
}

teardown_file() {
	local top
	top=$(cat "$BATS_FILE_TMPDIR/top" 2>/dev/null) || return 0
	case $top in
		/tmp/ceems-rpm.*) rm -rf "$top" ;;
	esac
}

setup() {
	local why
	why=$(_skip_reason)
	[ -z "$why" ] || skip "$why"
	TOP=$(cat "$BATS_FILE_TMPDIR/top")
	SLURM=$(cat "$BATS_FILE_TMPDIR/slurm")
	MAJOR=$(echo "$SLURM" | cut -d. -f1-2)
}

# rpm_of NAME: the path of package NAME's RPM.
rpm_of() {
	ls "$TOP"/RPMS/*/"$1"-[0-9]*.rpm 2>/dev/null | head -n 1
}

# has_file NAME PATH: package NAME holds PATH (else show what it holds).
has_file() {
	rpm -qlp "$(rpm_of "$1")" | grep -qx "$2" && return 0
	echo "$1 does not hold $2; it holds:" >&2
	rpm -qlp "$(rpm_of "$1")" >&2
	return 1
}

@test "rpmbuild makes the six packages, their release naming the Slurm release" {
	local p
	for p in ceems ceems-agent slurm-spank-ceems slurm-acct-gather-energy-ceems ceems-sacct ceems-admin; do
		[ -n "$(rpm_of "$p")" ] || { echo "no $p package in $TOP/RPMS" >&2; false; }
		[ "$(rpm -qp --qf '%{RELEASE}' "$(rpm_of "$p")")" = "1.slurm$MAJOR" ]
	done
}

@test "the plugin is in Slurm's plugin directory, its plugstack.conf.d line names it, commented out" {
	has_file slurm-spank-ceems /usr/lib64/slurm/spank_ceems.so
	has_file slurm-spank-ceems /etc/slurm/plugstack.conf.d/ceems.conf
	rpm2cpio "$(rpm_of slurm-spank-ceems)" | (cd "$TOP" && cpio -id --quiet ./etc/slurm/plugstack.conf.d/ceems.conf)
	grep -qx '#optional /usr/lib64/slurm/spank_ceems.so config=/etc/ceems/ceems.conf' \
		"$TOP/etc/slurm/plugstack.conf.d/ceems.conf"
	! grep -q '^[^#]' "$TOP/etc/slurm/plugstack.conf.d/ceems.conf"
}

@test "the plugin requires the Slurm release it was built against, and no later one" {
	local req
	req=$(rpm -qp --requires "$(rpm_of slurm-spank-ceems)")
	echo "$req" | grep -qx "slurm >= $MAJOR"
	echo "$req" | grep -qx "slurm < $(echo "$MAJOR" | awk -F. '{ printf "%s.%02d", $1, $2 + 1 }')"
	# acct_gather_energy/ceems loads in the very release it was built for.
	has_file slurm-acct-gather-energy-ceems /usr/lib64/slurm/acct_gather_energy_ceems.so
	rpm -qp --requires "$(rpm_of slurm-acct-gather-energy-ceems)" | grep -qx "slurm-slurmd = $SLURM"
}

@test "libceems is private: in its own directory, found through RUNPATH, no development files" {
	local f dir
	[ -n "$(rpm -qlp "$(rpm_of ceems)" | grep -x '/usr/lib64/ceems/libceems\.so\.[0-9]*')" ]
	for f in $(rpm -qlp "$TOP"/RPMS/*/*.rpm); do
		case $f in
			# the jobs' own API (doc/marks.md): its header and library
			# are for users to build against
			/usr/include/ceems_mark.h|/usr/lib64/ceems/libceems_mark.so) ;;
			*.la|*.a|/usr/include/*|*/pkgconfig/*|/usr/lib64/ceems/libceems.so)
				echo "development file packaged: $f" >&2; false ;;
		esac
	done
	dir=$TOP/x
	mkdir -p "$dir"
	rpm2cpio "$(rpm_of ceems-agent)" | (cd "$dir" && cpio -id --quiet ./usr/sbin/ceems-agent)
	readelf -d "$dir/usr/sbin/ceems-agent" | grep -E 'R(UN)?PATH' | grep -q '/usr/lib64/ceems'
	# and nothing asks rpm for libceems, which no package provides
	! rpm -qp --requires "$(rpm_of ceems-agent)" | grep -q libceems
}

@test "ceems-sacct is set-group-id ceems, the spool is the group's, the group is made before" {
	rpm -qlvp "$(rpm_of ceems-sacct)" | grep -E '^-rwxr-sr-x .* root +ceems .* /usr/bin/ceems-sacct$'
	rpm -qlvp "$(rpm_of ceems-agent)" | grep -E '^drwxr-s--- .* root +ceems .* /var/spool/ceems$'
	rpm -qlvp "$(rpm_of ceems-agent)" | grep -E '^drwx------ .* root +root .* /var/lib/ceems/agent$'
	rpm -qp --scripts "$(rpm_of ceems)" | grep -q 'groupadd -r ceems'
}

@test "the configuration files are kept across upgrades" {
	rpm -qp --configfiles "$(rpm_of ceems)" | grep -qx /etc/ceems/ceems.conf
	rpm -qp --configfiles "$(rpm_of slurm-spank-ceems)" | grep -qx /etc/slurm/plugstack.conf.d/ceems.conf
	rpm -qp --qf '[%{FILENAMES} %{FILEFLAGS:fflags}\n]' "$(rpm_of ceems)" |
		grep -qx '/etc/ceems/ceems.conf cn'
}

@test "the agent and ceems-jobinfo, ceems-admin's schema and the man pages are in their packages" {
	has_file ceems-agent /usr/sbin/ceems-agent
	has_file ceems-agent /usr/sbin/ceems-jobinfo
	rpm -qlp "$(rpm_of ceems-agent)" | grep -q '/usr/share/man/man8/ceems-jobinfo\.8'
	has_file ceems-admin /usr/sbin/ceems-admin
	has_file ceems-admin /usr/share/ceems/sql/migrations
	has_file ceems /usr/share/ceems/carbon-intensity.tsv
	rpm -qlp "$(rpm_of ceems-sacct)" | grep -q '/usr/share/man/man1/ceems-sacct\.1'
	rpm -qlp "$(rpm_of slurm-spank-ceems)" | grep -q '/usr/share/man/man8/spank-ceems\.8'
}

@test "rpmlint finds no error in the spec and the packages" {
	command -v rpmlint >/dev/null || skip "rpmlint not installed"
	# the spec as rpmbuild read it: with this machine's Slurm release
	{ echo "%global slurm_version $SLURM"; cat "$TOP/ceems.spec"; } >"$TOP/lint.spec"
	run rpmlint -r "$CEEMS_TOP_SRCDIR/rpm/ceems.rpmlintrc" "$TOP/lint.spec" "$TOP"/RPMS/*/*.rpm
	echo "$output"
	echo "$output" | grep -Eq '[0-9]+ packages and [0-9]+ specfiles checked; 0 errors'
}
