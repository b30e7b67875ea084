#!/usr/bin/env bats
# debian.bats - the Debian packages (debian/) as an admin gets them:
# dpkg-buildpackage in a copy of the tree (tracked and untracked files
# that git does not ignore), lintian at its default level, installation
# with apt on this machine, the demo's jobs on the local Slurm cluster
# through the installed plugin, agent, ceems-admin (and its migrations)
# and ceems-sacct, then purge and a search for anything left; then the
# same tree built and installed from the source into the /usr the
# packages left, a job through that plugin, make uninstall and the
# same search.
#
# The documents are the test: the build, the installation, the database
# of one machine (doc/storage.md), users' ceems-sacct, the purge and the
# installation from the source with its set-group-id spool are the
# documents' own commands, taken from the Markdown by doc-steps.sh
# (the blocks marked <!-- doc-test: NAME -->) and run as written, with
# bash -e; only their working directory and environment are the test's.
# A document edit that breaks a step, or drops its mark, fails here.
#
# It changes the machine (installs packages, adds the "ceems" group; the
# one-machine database adds the users alice and bob when missing, and
# the database ceems, its roles and the peer map to Debian's cluster 15
# main) and undoes it: purge, then the group, which purge leaves by
# Debian policy; the users, roles, database and PostgreSQL files; the
# source installation by make uninstall, its group, spool and the
# agent's directories.
# It starts the test cluster: run it under the cluster lock, as the
# integration tests:  flock /tmp/ceems-cluster.lock make check-packages
# Needs (tests/install-deps.sh): debhelper, lintian, the build
# dependencies of debian/control; CEEMS_TOP_SRCDIR and CEEMS_TOP_BUILDDIR
# (its tests/doubles/fake-rapl, the simulated RAPL node of the demo).

PKGS="ceems-common ceems-agent slurm-spank-ceems slurm-acct-gather-energy-ceems ceems-sacct ceems-admin"
# The roles of the one-machine database: doc/storage.md's, and the group
# roles its db init makes.
DOC_ROLES="slurm root alice bob ceems_owner ceems_writer ceems_reader ceems_admin ceems_admin_reader"

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

# doc_step FILE NAME: the block of doc/FILE marked NAME, extracted into
# $T/steps/NAME (doc-steps.sh fails when the mark or the block is gone).
doc_step() {
	mkdir -p "$T/steps"
	"$CEEMS_TOP_SRCDIR/tests/packaging/doc-steps.sh" "$CEEMS_TOP_SRCDIR/doc/$1" "$2" >"$T/steps/$2"
}

# run_doc_step NAME: its commands as an admin pasting them runs them,
# each shown, stopping at the first that fails.  apt answers yes
# (APT_CONFIG), as the admin would at its prompt.
run_doc_step() {
	APT_CONFIG="$T/apt.conf" DEBIAN_FRONTEND=noninteractive bash -ex "$T/steps/$1"
}

# psql as PostgreSQL's superuser on Debian's cluster, from a directory
# postgres may read.
_pg_debian() {
	(cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 "$@")
}

# Undo what the one-machine database test did, as far as it went (its
# files in $T say): the database and roles, pg_hba.conf and
# pg_ident.conf as they were, the cluster stopped if it was, the users
# it added.  Idempotent.
_undo_one_machine() {
	local conf=/etc/postgresql/15/main u rc=0
	if [ -e "$T/pg-debian-ours" ]; then
		_pg_debian -d postgres -c 'DROP DATABASE IF EXISTS ceems WITH (FORCE)' \
			-c "DROP ROLE IF EXISTS ${DOC_ROLES// /, }" || rc=1
		rm -f "$T/pg-debian-ours"
	fi
	if [ -e "$T/postgresql.auto.conf.orig" ]; then
		cp -p "$T/postgresql.auto.conf.orig" /var/lib/postgresql/15/main/postgresql.auto.conf &&
			rm -f "$T/postgresql.auto.conf.orig" || rc=1
	fi
	if [ -s "$T/ca-made" ]; then
		rm -f "$(cat "$T/ca-made")" "$T/ca-made" || rc=1
	fi
	if [ -e "$T/pg_hba.conf.orig" ]; then
		cp -p "$T/pg_hba.conf.orig" "$conf/pg_hba.conf" &&
			cp -p "$T/pg_ident.conf.orig" "$conf/pg_ident.conf" &&
			rm -f "$T/pg_hba.conf.orig" "$T/pg_ident.conf.orig" || rc=1
	fi
	if [ -s "$T/pg-debian-was" ]; then
		if [ "$(cat "$T/pg-debian-was")" = online ]; then
			pg_ctlcluster 15 main reload || rc=1
		else
			pg_ctlcluster 15 main stop || rc=1
		fi
		rm -f "$T/pg-debian-was"
	fi
	if [ -s "$T/users-made" ]; then
		while read -r u; do
			userdel "$u" || rc=1
		done <"$T/users-made"
		rm -f "$T/users-made"
	fi
	return "$rc"
}

# _copy_tree DIR: the tree an admin has, in DIR: the files git tracks,
# and the untracked ones it does not ignore (not this checkout's builds).
_copy_tree() {
	mkdir -p "$1"
	(cd "$CEEMS_TOP_SRCDIR" && git ls-files -z -co --exclude-standard |
		xargs -0 cp --parents -t "$1")
}

# _agent_answers [OPTION...]: wait up to 10 s for the agent that the
# plugin starts to answer ceems-agent --status (with OPTION...), then
# check that it says ok.  The status goes through a file: jq -e passes
# on no input, so a pipe would pass when the agent never answers.
_agent_answers() {
	for _ in $(seq 1 50); do
		ceems-agent --status "$@" >/dev/null 2>&1 && break
		sleep 0.2
	done
	ceems-agent --status "$@" >"$T/status.json"
	jq -e .ok "$T/status.json"
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
	echo 'APT::Get::Assume-Yes "true";' >"$T/apt.conf"
	_copy_tree "$T/src/ceems"
	# doc/install.md's build, in the tree as it says; nocheck: the unit
	# suite has run on this tree already.
	{ doc_step install.md deb-build &&
		(cd "$T/src/ceems" && DEB_BUILD_OPTIONS="nocheck parallel=2" run_doc_step deb-build)
	} >"$T/build.log" 2>&1 || true
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
	_undo_one_machine || true
	# A source installation a failed test left, and what its agent made.
	if [ -e "$T/source-installed" ]; then
		make -C "$T/source/ceems" uninstall >/dev/null 2>&1 || true
		rm -rf /etc/ceems /var/lib/ceems /var/log/ceems /run/ceems
	fi
	# The test's own override of ceems-sacct, which purge keeps.
	[ ! -e "$T/own-override" ] || dpkg-statoverride --remove /usr/bin/ceems-sacct 2>/dev/null || true
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

@test "dpkg-buildpackage -us -uc -b builds the six packages from a copy of the tree" {
	for f in $(debs); do
		[ -f "$f" ] || { tail -n 40 "$T/build.log"; false; }
	done
}

@test "lintian reports no error and no warning" {
	run lintian --fail-on error,warning "$T"/src/ceems_*.changes
	echo "$output"
	[ "$status" -eq 0 ]
}

@test "apt installs them as doc/install.md says: files in place, conffiles, the ceems group, the directories' owners and modes" {
	doc_step install.md deb-install
	# From the tree, where the packages were built: ../ are the packages.
	(cd "$T/src/ceems" && run_doc_step deb-install) >"$T/install.log" 2>&1 ||
		{ tail -n 30 "$T/install.log"; false; }
	for p in $PKGS; do
		dpkg-query -W -f='${Status}\n' "$p" | grep -q ' installed$'
	done
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
	# The energy plugin loads only in the Slurm release it was built for:
	# its package depends on that release of slurmd.
	[ -f "/usr/lib/$MULTIARCH/slurm-wlm/acct_gather_energy_ceems.so" ]
	rel=$(dpkg-query -W -f='${Version}' libslurm-dev | sed 's/-.*//')
	dpkg-query -W -f='${Depends}\n' slurm-acct-gather-energy-ceems |
		grep -qF "slurmd (>= $rel), slurmd (<< $rel.~)"
	# libpq and libfreeipmi are loaded at run time where the agent uses
	# them: named by ceems-agent (Recommends, Suggests), linked by no
	# part of the agent; ceems-sacct links libpq.
	dpkg-query -W -f='${Recommends}\n' ceems-agent | grep -qw libpq5
	dpkg-query -W -f='${Suggests}\n' ceems-agent | grep -qw libfreeipmi17
	# (A bare "! cmd" would not fail a bats test: set -e ignores it.)
	if dpkg-query -W -f='${Depends}\n' ceems-common ceems-agent | grep -Eq 'libpq|libfreeipmi'; then
		false
	fi
	if readelf -d /usr/lib/"$MULTIARCH"/ceems/libceems.so.* /usr/sbin/ceems-agent |
		grep -Eq 'NEEDED.*(libpq|libfreeipmi)'; then
		false
	fi
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
	_agent_answers -c "$T/ceems.conf"
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

@test "one machine as doc/storage.md says (database, roles, peer map, ceems.conf): alice's and bob's jobs stored; ceems-sacct shows each their own, root both, with and without the set-group-id" {
	# Debian's cluster, which the documents' commands name; on a machine
	# without systemd nothing started it: the test starts it, as the
	# package would have.
	[ -n "$(pg_lsclusters -h 15 main 2>/dev/null)" ] ||
		skip "no PostgreSQL cluster 15 main (Debian's postgresql-15 makes it)"
	conf=/etc/postgresql/15/main
	was=$(pg_lsclusters -h 15 main | awk '{ print $4 }')
	echo "$was" >"$T/pg-debian-was"
	[ "$was" = online ] || pg_ctlcluster 15 main start
	# A database or roles of these names are someone else's.
	# shellcheck disable=SC2086
	taken=$(_pg_debian -d postgres -c "SELECT string_agg(rolname, ' ') FROM pg_roles
		WHERE rolname = ANY (string_to_array('$DOC_ROLES', ' '))" \
		-c "SELECT datname FROM pg_database WHERE datname = 'ceems'")
	if [ -n "$taken" ]; then
		_undo_one_machine
		skip "PostgreSQL 15 main already has $taken: not the test's to change"
	fi
	for f in pg_hba.conf pg_ident.conf; do
		cp -p "$conf/$f" "$T/$f.orig"
		cp -p "$conf/$f" "$T/$f.before"
	done
	: >"$T/pg-debian-ours"
	for u in alice bob; do
		if ! getent passwd "$u" >/dev/null; then
			useradd --no-create-home --shell /usr/sbin/nologin "$u"
			echo "$u" >>"$T/users-made"
		fi
	done
	unset PGHOST PGPORT PGDATABASE PGUSER PGSERVICE PGSERVICEFILE
	for step in db-one-machine db-user-roles db-peer-map conf-one-machine; do
		doc_step storage.md "$step"
	done
	doc_step install.md plugstack
	doc_step install.md sacct-no-setgid
	(cd "$T" && run_doc_step db-one-machine && run_doc_step db-user-roles &&
		run_doc_step db-peer-map)
	# "in /etc/ceems/ceems.conf": the lines added to the package's file.
	cat "$T/steps/conf-one-machine" >>/etc/ceems/ceems.conf
	ceems-agent --check-config | grep -qx 'database = dbname=ceems user=slurm'

	# shellcheck source=tests/harness/slurm.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/slurm.sh"
	slurm=$(slurm_harness_mktemp)
	echo "$slurm" >"$T/slurm-dir"
	slurm_harness_start "$slurm" "$(cat "$T/steps/plugstack")"
	_agent_answers
	declare -A id_of
	for u in alice bob; do
		id_of[$u]=$(cd "$slurm/out" && runuser -u "$u" -- env SLURM_CONF="$SLURM_CONF" \
			sbatch --parsable -J "doc-$u" -o "$slurm/out/$u-%j.out" --wrap 'srun hostname')
	done
	a=${id_of[alice]} b=${id_of[bob]}
	slurm_harness_wait_job "$a" 120
	slurm_harness_wait_job "$b" 120
	for u in alice bob; do
		cat "$slurm/out/$u-${id_of[$u]}.out"
		grep -Eq "^ceems - job ${id_of[$u]} \\(${u}[,)] COMPLETED" "$slurm/out/$u-${id_of[$u]}.out"
	done
	# The agent, as root mapped to slurm, stores both jobs.
	for _ in $(seq 1 60); do
		rows=$(_pg_debian -d ceems -c "SELECT jobid || ' ' || user_name FROM ceems.jobs
			WHERE jobid IN ($a, $b) ORDER BY jobid")
		[ "$rows" = "$(printf '%s alice\n%s bob' "$a" "$b")" ] && break
		sleep 0.5
	done
	echo "$rows"
	[ "$rows" = "$(printf '%s alice\n%s bob' "$a" "$b")" ]
	# What the node measured decides what the rows hold: a figure not
	# measured is absent, never 0 (no energy counter on the node: no
	# energy and no emissions in the summary, the database and
	# ceems-sacct).
	_agent_answers
	if [ "$(jq '.energy | length' "$T/status.json")" = 0 ]; then
		grep -q '^Carbon   not computed (no energy measured)' "$slurm/out/alice-$a.out"
		[ "$(_pg_debian -d ceems -c "SELECT count(*) FROM ceems.jobs WHERE jobid IN ($a, $b)
			AND total_j IS NULL AND emissions_g IS NULL")" = 2 ]
		run ceems-sacct -X -n -P -o JobID,ConsumedEnergyRaw,CO2e -j "$a"
		echo "# root, no energy: $output" >&3
		[ "$status" -eq 0 ]
		[ "$output" = "$a||" ]
	else
		[ "$(_pg_debian -d ceems -c "SELECT count(*) FROM ceems.jobs WHERE jobid IN ($a, $b)
			AND total_j > 0")" = 2 ]
	fi
	# ceems-sacct as each user (their own role, by peer) and as root
	# (mapped to the role root, which reads every job).
	for u in alice bob; do
		run runuser -u "$u" -- ceems-sacct -X -n -P -o JobID,User -j "$a,$b"
		echo "$u: $output"
		[ "$status" -eq 0 ]
		[ "$output" = "${id_of[$u]}|$u" ]
	done
	run ceems-sacct -X -n -P -o JobID,User -j "$a,$b"
	echo "root: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "$(printf '%s|alice\n%s|bob' "$a" "$b")" ]
	# The central server's service entry and ceems.conf lines as written,
	# over TCP and TLS (verify-full) to this machine's server: a
	# certificate of the test's own CA, at the path the entry names, makes
	# it db.example.org, and PGHOSTADDR takes that name to loopback, as
	# DNS would to the server.  Debian's own pg_hba.conf line for
	# 127.0.0.1 (scram-sha-256) stands in for the hostssl line of the
	# nodes' network; root logs in with a password from its password file.
	ca=/etc/ssl/certs/ceems-db-ca.pem
	if [ -e "$ca" ]; then
		echo "# $ca exists: the central server's client side is not tried" >&3
	else
		doc_step storage.md pg-service
		doc_step storage.md conf-central
		mkdir -p "$T/tls"
		openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ceems-test-ca \
			-keyout "$T/tls/ca.key" -out "$T/tls/ca.pem" 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -subj /CN=db.example.org \
			-keyout "$T/tls/server.key" -out "$T/tls/server.csr" 2>/dev/null
		openssl x509 -req -in "$T/tls/server.csr" -CA "$T/tls/ca.pem" -CAkey "$T/tls/ca.key" \
			-CAcreateserial -days 1 -out "$T/tls/server.crt" 2>/dev/null
		chown postgres: "$T/tls/server.key" "$T/tls/server.crt"
		chmod 0600 "$T/tls/server.key"
		echo "$ca" >"$T/ca-made"
		cp "$T/tls/ca.pem" "$ca"
		auto=/var/lib/postgresql/15/main/postgresql.auto.conf
		cp -p "$auto" "$T/postgresql.auto.conf.orig"
		_pg_debian -d postgres -c 'ALTER SYSTEM SET ssl = on' \
			-c "ALTER SYSTEM SET ssl_cert_file = '$T/tls/server.crt'" \
			-c "ALTER SYSTEM SET ssl_key_file = '$T/tls/server.key'" \
			-c 'SELECT pg_reload_conf()' >/dev/null
		_pg_debian -d ceems -c "ALTER ROLE root PASSWORD 'ceems-doc-test'"
		cp "$T/steps/pg-service" "$T/pg_service.conf"
		(umask 077 && echo 'db.example.org:5432:ceems:root:ceems-doc-test' >"$T/pgpass")
		cp "$T/steps/conf-central" "$T/central.conf"
		ceems-agent -c "$T/central.conf" --check-config |
			grep -qx 'database = service=ceems user=slurm'
		for _ in $(seq 1 20); do
			[ "$(_pg_debian -d postgres -c 'SHOW ssl')" = on ] && break
			sleep 0.2
		done
		run env PGSERVICEFILE="$T/pg_service.conf" PGPASSFILE="$T/pgpass" PGHOSTADDR=127.0.0.1 \
			ceems-sacct -c "$T/central.conf" -X -n -P -o JobID,User -j "$a,$b"
		echo "root, central: $output"
		[ "$status" -eq 0 ]
		[ "$output" = "$(printf '%s|alice\n%s|bob' "$a" "$b")" ]
	fi
	# install.md's override that takes the group away: the users still
	# list their jobs, from the database.
	: >"$T/own-override"
	run_doc_step sacct-no-setgid
	[ "$(stat -c '%U:%G %a' /usr/bin/ceems-sacct)" = "root:root 755" ]
	run runuser -u alice -- ceems-sacct -X -n -P -o JobID,User -j "$a,$b"
	echo "alice: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "$a|alice" ]

	slurm_harness_stop "$slurm"
	: >"$T/slurm-dir"
	# Nothing of it is left (_undo_one_machine fails when a DROP does):
	# PostgreSQL's files as they were, the users the test added gone.
	made=$(cat "$T/users-made" 2>/dev/null || true)
	_undo_one_machine
	cmp "$T/pg_hba.conf.before" "$conf/pg_hba.conf"
	cmp "$T/pg_ident.conf.before" "$conf/pg_ident.conf"
	for u in $made; do
		if getent passwd "$u"; then false; fi
	done
}

@test "remove keeps the data; purge as doc/install.md says removes what the packages made, keeps unstored records, the group and an admin's override" {
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
	doc_step install.md deb-purge
	run run_doc_step deb-purge
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" != *"is kept"* ]]
	for p in $PKGS; do
		if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv 'not-installed$'; then false; fi
	done
	# What install.md says purge removes: the configuration, the state
	# and log directories, /run/ceems, and the spool with nothing of a job.
	for p in /etc/ceems /var/lib/ceems /var/log/ceems /run/ceems /var/spool/ceems; do
		[ ! -e "$p" ] || { echo "purge left $p"; false; }
	done
	# Nothing else with ceems in its path is new since before the build.
	_snapshot >"$T/after"
	run bash -c "comm -13 '$T/before' '$T/after' | grep -i ceems"
	echo "$output"
	[ -z "$output" ]
	# The package's override is gone; the admin's own, when the test
	# made one as install.md says, stays until they remove it.
	if [ -e "$T/own-override" ]; then
		[ "$(dpkg-statoverride --list /usr/bin/ceems-sacct)" = "root root 755 /usr/bin/ceems-sacct" ]
		dpkg-statoverride --remove /usr/bin/ceems-sacct
		rm "$T/own-override"
	fi
	[ -z "$(dpkg-statoverride --list /usr/bin/ceems-sacct)" ]
	# The group stays (Debian policy: files may still carry its id); the
	# test removes it when it made it.
	getent group ceems
	if [ "$(cat "$T/group-before")" = no ]; then
		delgroup --system --quiet ceems
	fi
}

@test "from the source as doc/install.md says, then its set-group-id spool: a job through the installed plugin, its record listed by its user's ceems-sacct; make uninstall leaves nothing" {
	# After the purge above: no package file of ceems in /usr, nothing a
	# source installation would mix with (a failure above left it: that
	# test failed already).
	reason=$(_skip_reason)
	[ -z "$reason" ] || { echo "left by the tests above: $reason"; false; }
	[ "$(cat "$T/group-before")" = no ] ||
		skip "the group ceems exists: install.md's groupadd is for a machine without it"
	src=$T/source/ceems
	_copy_tree "$src"
	doc_step install.md source-install
	doc_step install.md source-conf
	doc_step install.md sacct-setgid-source
	doc_step install.md plugstack
	: >"$T/source-installed"
	start=$SECONDS
	(cd "$src" && run_doc_step source-install) >"$T/source.log" 2>&1 ||
		{ tail -n 40 "$T/source.log"; false; }
	echo "# from the source: built and installed in $((SECONDS - start)) s" >&3
	(cd "$src" && run_doc_step source-conf && run_doc_step sacct-setgid-source) \
		>"$T/setgid.log" 2>&1 || { cat "$T/setgid.log"; false; }

	# What a user finds: the plugin where the plugstack line loads it, the
	# programs in PATH, ceems-sacct and the spool as install.md says.
	plugin=/usr/lib/$MULTIARCH/slurm-wlm/spank_ceems.so
	[ -f "$plugin" ]
	grep -q "^optional $plugin " "$T/steps/plugstack"
	[ "$(command -v ceems-agent)" = /usr/sbin/ceems-agent ]
	[ "$(command -v ceems-sacct)" = /usr/bin/ceems-sacct ]
	[ "$(stat -c '%U:%G %a' /usr/bin/ceems-sacct)" = "root:ceems 2755" ]
	[ "$(stat -c '%U:%G %a' /var/spool/ceems)" = "root:ceems 2750" ]

	# A job through the installed plugin, with install.md's ceems.conf
	# (every default: no database, so its record stays in the spool).
	# shellcheck source=tests/harness/slurm.sh
	. "$CEEMS_TOP_SRCDIR/tests/harness/slurm.sh"
	slurm=$(slurm_harness_mktemp)
	echo "$slurm" >"$T/slurm-dir"
	slurm_harness_start "$slurm" "$(cat "$T/steps/plugstack")"
	_agent_answers
	# The agent logs where the packages' agent does.
	grep -q . /var/log/ceems/agent.log
	id=$(cd "$slurm/out" && runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable -J doc-source -o "$slurm/out/source-%j.out" --wrap 'srun hostname')
	slurm_harness_wait_job "$id" 120
	cat "$slurm/out/source-$id.out"
	grep -Eq "^ceems - job $id \\(nobody[,)] COMPLETED" "$slurm/out/source-$id.out"
	# Its user lists it from the spool, which they cannot read themselves:
	# through ceems-sacct's set-group-id only.
	for _ in $(seq 1 60); do
		run runuser -u nobody -- ceems-sacct -X -n -P -o JobID,User -j "$id"
		[ "$output" = "$id|nobody" ] && break
		sleep 0.5
	done
	echo "nobody: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "$id|nobody" ]
	if runuser -u nobody -- ls /var/spool/ceems >/dev/null 2>&1; then false; fi
	slurm_harness_stop "$slurm"
	: >"$T/slurm-dir"

	# make uninstall in the tree; then what it does not know of: the
	# configuration, the group and spool of install.md's blocks, the
	# agent's directories.
	(cd "$src" && make uninstall) >"$T/uninstall.log" 2>&1 ||
		{ tail -n 30 "$T/uninstall.log"; false; }
	rm "$T/source-installed"
	rm -r /etc/ceems /var/spool/ceems /var/lib/ceems /var/log/ceems /run/ceems
	groupdel ceems
	# Nothing with ceems in its path is new since before the packages.
	_snapshot >"$T/after-source"
	run bash -c "comm -13 '$T/before' '$T/after-source' | grep -i ceems"
	echo "$output"
	[ -z "$output" ]
}
