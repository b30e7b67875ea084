#!/usr/bin/env bats
# debian.bats - the Debian packages (debian/) as an admin gets them:
# dpkg-buildpackage in a copy of the tree (tracked and untracked files
# that git does not ignore), lintian at its default level, installation
# with apt on this machine, the demo's jobs on the local Slurm cluster
# through the installed plugin, agent, ceems-admin (and its migrations)
# and ceems-sacct, then purge and a search for anything left.
#
# It changes the machine (installs packages, adds the "ceems" group) and
# undoes it: purge, then the group, which purge leaves by Debian policy.
# It starts the test cluster: run it under the cluster lock, as the
# integration tests:  flock /tmp/ceems-cluster.lock make check-packages
# Needs (tests/install-deps.sh): debhelper, lintian, the build
# dependencies of debian/control; CEEMS_TOP_SRCDIR and CEEMS_TOP_BUILDDIR
# (its tests/doubles/fake-rapl, the simulated RAPL node of the demo).

PKGS="ceems-common ceems-agent slurm-spank-ceems ceems-sacct ceems-admin"

_skip_reason() {
	local p
	if [ "$(id -u)" != 0 ]; then
		echo "installs packages: run as root"
		return
	fi
	for p in dpkg-buildpackage lintian dh git; do
		command -v "$p" >/dev/null || { echo "$p not installed (tests/install-deps.sh)"; return; }
	done
	if ! git -C "$CEEMS_TOP_SRCDIR" rev-parse --git-dir >/dev/null 2>&1; then
		echo "$CEEMS_TOP_SRCDIR is not a git checkout (the copy is made of git's files)"
		return
	fi
	if [ ! -x "${CEEMS_TOP_BUILDDIR:-}/tests/doubles/fake-rapl" ]; then
		echo "no tests/doubles/fake-rapl in CEEMS_TOP_BUILDDIR (make check builds it)"
		return
	fi
	# A ceems installed otherwise (from the source) keeps its files there:
	# the test would mix with them, and its cleanup would remove them.
	for p in /etc/ceems /var/lib/ceems /var/spool/ceems /var/log/ceems /run/ceems; do
		if [ -e "$p" ]; then
			echo "$p exists: ceems is installed on this machine, the test would mix with it"
			return
		fi
	done
	for p in $PKGS; do
		if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$'; then
			echo "$p is installed on this machine: the test would replace it"
			return
		fi
	done
}

# Every path under the places packages write, for the search after purge.
_snapshot() {
	find /etc /usr /var/lib /var/spool /var/log /run -xdev 2>/dev/null |
		grep -v -e '^/var/lib/dpkg/' -e '^/var/lib/apt/' -e '^/var/cache/' | sort
}

setup_file() {
	export CEEMS_TOP_SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}
	SKIP_REASON=$(_skip_reason)
	export SKIP_REASON
	[ -z "$SKIP_REASON" ] || return 0
	T=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.debian.XXXXXX")
	chmod 0755 "$T"
	export T
	MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	export MULTIARCH
	getent group ceems >/dev/null && echo yes >"$T/group-before" || echo no >"$T/group-before"
	_snapshot >"$T/before"
	mkdir -p "$T/src/ceems"
	(cd "$CEEMS_TOP_SRCDIR" && git ls-files -z -co --exclude-standard |
		xargs -0 cp --parents -t "$T/src/ceems")
	# nocheck: the unit suite has run on this tree already.
	(cd "$T/src/ceems" && DEB_BUILD_OPTIONS="nocheck parallel=2" \
		dpkg-buildpackage -us -uc -b) >"$T/build.log" 2>&1 || true
}

teardown_file() {
	[ -n "${T:-}" ] || return 0
	# shellcheck source=tests/harness/slurm.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/slurm.sh"
	# shellcheck source=tests/harness/pg.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/pg.sh"
	[ ! -s "$T/slurm-dir" ] || slurm_harness_stop "$(cat "$T/slurm-dir")" || true
	[ ! -s "$T/fake-rapl.pid" ] || kill "$(cat "$T/fake-rapl.pid")" 2>/dev/null || true
	[ ! -s "$T/pg-dir" ] || pg_harness_stop "$(cat "$T/pg-dir")" || true
	# A test that failed half-way leaves packages, directories or the group.
	# shellcheck disable=SC2086
	dpkg --purge $PKGS >/dev/null 2>&1 || true
	rm -rf /var/spool/ceems
	if [ "$(cat "$T/group-before")" = no ] && getent group ceems >/dev/null; then
		delgroup --system --quiet ceems || true
	fi
	rm -rf "$T"
}

setup() {
	[ -z "$SKIP_REASON" ] || skip "$SKIP_REASON"
}

debs() {
	local p
	for p in $PKGS; do
		echo "$T/src/${p}_"*.deb
	done
}

@test "dpkg-buildpackage -us -uc -b builds the five packages from a copy of the tree" {
	for f in $(debs); do
		[ -f "$f" ] || { tail -n 40 "$T/build.log"; false; }
	done
}

@test "lintian reports no error and no warning" {
	run lintian --fail-on error,warning "$T"/src/ceems_*.changes
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "apt installs them: files in place, conffiles, the ceems group, the directories' owners and modes" {
	# shellcheck disable=SC2046
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(debs) >"$T/install.log" 2>&1 ||
		{ tail -n 30 "$T/install.log"; false; }
	getent group ceems
	[ "$(stat -c '%U:%G %a' /var/lib/ceems/agent)" = "root:root 700" ]
	[ "$(stat -c '%U:%G %a' /var/spool/ceems)" = "root:ceems 2750" ]
	[ "$(stat -c '%U:%G %a' /var/log/ceems)" = "root:adm 750" ]
	[ "$(stat -c '%U:%G %a' /usr/bin/ceems-sacct)" = "root:ceems 2755" ]
	dpkg-query -W -f='${Conffiles}\n' ceems-common | grep -q '^ /etc/ceems/ceems.conf '
	dpkg-query -W -f='${Conffiles}\n' slurm-spank-ceems |
		grep -q '^ /etc/slurm/plugstack.conf.d/ceems.conf '
	# The snippet is commented out, and names the installed plugin.
	[ -z "$(grep -v '^#' /etc/slurm/plugstack.conf.d/ceems.conf)" ]
	grep -q "^#optional /usr/lib/$MULTIARCH/slurm-wlm/spank_ceems.so config=/etc/ceems/ceems.conf\$" \
		/etc/slurm/plugstack.conf.d/ceems.conf
	[ -f "/usr/lib/$MULTIARCH/slurm-wlm/spank_ceems.so" ]
	# libpq and libfreeipmi are loaded at run time where the agent uses
	# them: named by ceems-agent (Recommends, Suggests), linked by no
	# part of the agent; ceems-sacct links libpq.
	dpkg-query -W -f='${Recommends}\n' ceems-agent | grep -qw libpq5
	dpkg-query -W -f='${Suggests}\n' ceems-agent | grep -qw libfreeipmi17
	! dpkg-query -W -f='${Depends}\n' ceems-common ceems-agent | grep -Eq 'libpq|libfreeipmi'
	! readelf -d /usr/lib/"$MULTIARCH"/ceems/libceems.so.* /usr/sbin/ceems-agent |
		grep -Eq 'NEEDED.*(libpq|libfreeipmi)'
	dpkg-query -W -f='${Depends}\n' ceems-sacct | grep -qw libpq5
	# The shipped ceems.conf is valid and gives the packaged directories.
	run ceems-agent --check-config
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^state_dir = /var/lib/ceems/agent$'
	echo "$output" | grep -q '^spool_dir = /var/spool/ceems$'
	for m in spank-ceems.8 ceems-agent.8 ceems.conf.5 ceems-sacct.1 ceems-admin.8; do
		man -w "$m" >/dev/null
	done
	# Every document of README's list that an admin reads is shipped
	# (testing.md and performance.md's figures are the source tree's).
	for f in $(sed -n '/^Documentation$/,/^ceems is free/p' "$CEEMS_TOP_SRCDIR/README" |
			grep -o 'doc/[a-z-]*\.md' | grep -v testing.md); do
		f=/usr/share/doc/ceems-common/${f#doc/}
		[ -f "$f" ] || [ -f "$f.gz" ] || { echo "not shipped: $f"; false; }
	done
	# An ordinary user's ceems-sacct reads the node's spool through the
	# ceems group (empty yet): the statoverride and the spool fit.
	runuser -u nobody -- ceems-sacct -S today
}

@test "the demo's jobs run through the installed plugin, agent, ceems-admin and ceems-sacct; an upgrade restarts the agent" {
	# shellcheck source=tests/harness/slurm.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/slurm.sh"
	# shellcheck source=tests/harness/pg.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/pg.sh"
	pg=$(pg_harness_mktemp)
	echo "$pg" >"$T/pg-dir"
	pg_harness_start "$pg"
	# The schema from the installed migrations (ceems-admin's default).
	ceems-admin -d "host=$pg port=$PGPORT dbname=ceems user=postgres" db init
	psql -X -q -c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer'
	sock=$(pg_harness_root_socket "$pg")
	mkdir -p "$T/sys"
	"$CEEMS_TOP_BUILDDIR/tests/doubles/fake-rapl" --root "$T/sys" \
		--truth "$T/fake-rapl.truth" --period-ms 5 >"$T/fake-rapl.log" 2>&1 &
	echo $! >"$T/fake-rapl.pid"
	for _ in $(seq 1 50); do
		[ -e "$T/sys/class/powercap/intel-rapl:0/energy_uj" ] && break
		sleep 0.1
	done
	# The node's files are the package's defaults: socket, state, spool,
	# log, agent and emissions table are not named here.
	cat >"$T/ceems.conf" <<-EOC
		interval = 500ms
		sysfs_root = $T/sys
		source_hwmon = no
		source_pm_counters = no
		cluster = ceemstest
		zone = FR
		database = host=$sock port=$PGPORT dbname=ceems user=ceems_node
		sacct_database = host=$sock port=$PGPORT dbname=ceems user=postgres
	EOC
	slurm=$(slurm_harness_mktemp)
	echo "$slurm" >"$T/slurm-dir"
	slurm_harness_start "$slurm" \
		"required /usr/lib/$MULTIARCH/slurm-wlm/spank_ceems.so config=$T/ceems.conf"
	for _ in $(seq 1 50); do
		ceems-agent --status -c "$T/ceems.conf" >/dev/null 2>&1 && break
		sleep 0.2
	done
	ceems-agent --status -c "$T/ceems.conf" | jq -e .ok
	[ -S /run/ceems/agent.sock ]
	grep -q . /var/log/ceems/agent.log

	# The demo's jobs, shorter.
	# shellcheck disable=SC2016 # the scripts' own expansions
	printf '#!/bin/bash\nend=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do :; done; echo burned\n' >"$slurm/out/burner.sh"
	printf '#!/bin/bash\nsleep 3; echo slept\n' >"$slurm/out/sleeper.sh"
	printf '#!/bin/bash\nsrun -n1 hostname; srun -n1 sleep 1; echo two steps done\n' >"$slurm/out/steps.sh"
	printf '#!/bin/bash\necho "something went wrong" >&2; exit 3\n' >"$slurm/out/failing.sh"
	declare -A id_of
	ids=
	for name in burner sleeper steps failing; do
		chmod 755 "$slurm/out/$name.sh"
		id=$(cd "$slurm/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
			sbatch --parsable -J "demo-$name" -c 1 -o "$slurm/out/$name-%j.out" "$slurm/out/$name.sh")
		ids="$ids $id"
		id_of[$name]=$id
	done
	for id in $ids; do
		slurm_harness_wait_job "$id" 120
	done
	for name in burner sleeper steps failing; do
		id=${id_of[$name]}
		cat "$slurm/out/$name-$id.out"
		grep -Eq "^ceems - job $id \\(nobody[,)] " "$slurm/out/$name-$id.out"
	done
	grep -Eq "^ceems - job ${id_of[failing]} \\(nobody[,)] FAILED \\(exit 3\\)" \
		"$slurm/out/failing-${id_of[failing]}.out"
	# Every job's record reaches PostgreSQL through the installed agent.
	want=$(echo "$ids" | wc -w)
	list=$(echo "$ids" | xargs | tr ' ' ',')
	for _ in $(seq 1 60); do
		n=$(psql -X -tAc "SELECT count(*) FROM ceems.jobs WHERE jobid IN ($list)")
		[ "$n" = "$want" ] && break
		sleep 0.5
	done
	[ "$n" = "$want" ]
	# The burner ran 4 s on the simulated node: its energy was measured.
	[ "$(psql -X -tAc "SELECT total_j > 0 FROM ceems.jobs WHERE jobid = ${id_of[burner]}")" = t ]
	# The installed ceems-sacct lists them from the database.
	run ceems-sacct -c "$T/ceems.conf" -X -n -P -o JobID,State,ConsumedEnergyRaw -j "$list"
	echo "$output"
	[ "$status" -eq 0 ]
	for id in $ids; do
		echo "$output" | grep -q "^$id|"
	done
	# An upgrade (the same packages again) restarts the running agent on
	# the installed files.
	old=$(ceems-agent --status -c "$T/ceems.conf" | jq -r .pid)
	# shellcheck disable=SC2046
	dpkg -i $(debs) >"$T/upgrade.log" 2>&1 || { cat "$T/upgrade.log"; false; }
	cat "$T/upgrade.log"
	grep -q '^ceems-agent: restarted' "$T/upgrade.log"
	new=$(ceems-agent --status -c "$T/ceems.conf" | jq -r .pid)
	[ -n "$new" ] && [ "$new" != "$old" ]
	slurm_harness_stop "$slurm"
	: >"$T/slurm-dir"
	kill "$(cat "$T/fake-rapl.pid")"
	: >"$T/fake-rapl.pid"
	pg_harness_stop "$pg"
	: >"$T/pg-dir"
}

@test "remove keeps the data; purge removes what the packages made and keeps unstored records" {
	# shellcheck disable=SC2086
	dpkg --remove $PKGS
	[ -d /var/lib/ceems/agent ]
	[ -d /var/log/ceems ]
	[ -d /var/spool/ceems ]
	[ -f /etc/ceems/ceems.conf ]
	# What the agent of the jobs above left in the spool, every record
	# stored: its usage file and empty folders, nothing of a job.
	[ -z "$(find /var/spool/ceems -mindepth 1 -type f ! -name .usage)" ]
	# A record the database never got: purge (the package's postrm, as
	# dpkg runs it) keeps it and says so.
	echo '{}' >/var/spool/ceems/kept.json
	run /var/lib/dpkg/info/ceems-agent.postrm purge
	echo "$output"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q '^ceems-agent: /var/spool/ceems is kept: it holds job records not stored in PostgreSQL (1) '
	[ -f /var/spool/ceems/kept.json ]
	rm /var/spool/ceems/kept.json
	# shellcheck disable=SC2086
	run dpkg --purge $PKGS
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"is kept"* ]]
	[ ! -e /var/spool/ceems ]
	# Nothing else with ceems in its path is new since before the build.
	_snapshot >"$T/after"
	run bash -c "comm -13 '$T/before' '$T/after' | grep -i ceems"
	echo "$output"
	[ -z "$output" ]
	[ -z "$(dpkg-statoverride --list /usr/bin/ceems-sacct)" ]
	# The group stays (Debian policy: files may still carry its id); the
	# test removes it when it made it.
	getent group ceems
	if [ "$(cat "$T/group-before")" = no ]; then
		delgroup --system --quiet ceems
	fi
}
