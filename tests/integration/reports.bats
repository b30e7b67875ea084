#!/usr/bin/env bats
# tests/integration/reports.bats -- ceems-admin report against a real
# PostgreSQL 15 (tests/harness/pg.sh) holding a generated month of jobs
# (lib/reports-data.sql), mailing through a real MTA: Debian's exim4,
# run with a configuration of this test's own through the sendmail
# interface (-C, delivering at once into one mailbox file per user).
# The digests' figures against SQL, both parts of each message, no
# user's mail with another user's jobs, opt-out, a second run that sends
# nothing, reports built as their reader (SET ROLE), the admins' triage
# list, the node whose static power stands out and those whose energy per
# busy core-second or BMC residual does.
#
# Run as root:  CEEMS_TOP_BUILDDIR=$PWD bats --tap ../../tests/integration/reports.bats
# Needs: postgresql-15, bats, exim4-daemon-light; a build with libpq.

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}
SQL_DIR=$SRCDIR/sql/migrations
EXIM=/usr/sbin/exim4
PERIOD="--from 2026-10-01T00:00:00Z --to 2026-11-01T00:00:00Z"

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

# exim as this test's MTA: its spool, log and mailboxes in DIR; it gives
# up root for a configuration of its own and runs as its user, which
# owns them.
exim_setup() {
    local dir=$1
    chmod 0755 "$dir" || return 1
    mkdir -p "$dir/spool" "$dir/log" "$dir/mail" || return 1
    chown Debian-exim:Debian-exim "$dir/spool" "$dir/log" "$dir/mail" || return 1
    cat >"$dir/exim.conf" <<EOC
primary_hostname = ceems-test
keep_environment =
domainlist local_domains = localhost
qualify_domain = localhost
spool_directory = $dir/spool
log_file_path = $dir/log/%slog
begin routers
mailbox:
  driver = accept
  domains = +local_domains
  local_parts = alice : bob : carol : dave : erin : frank : gina : admins
  transport = mailbox_file
begin transports
mailbox_file:
  driver = appendfile
  file = $dir/mail/\${local_part_data}
  user = Debian-exim
  group = Debian-exim
  mode = 0644
EOC
    printf '#!/bin/sh\nexec %s -C %s -odi "$@"\n' "$EXIM" "$dir/exim.conf" >"$dir/sendmail"
    chmod 0755 "$dir/sendmail"
}

setup_file() {
    [ "$(id -u)" = 0 ] || return 0
    [ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] || return 0
    [ -x "$EXIM" ] || return 0
    local dir
    dir=$(pg_harness_mktemp) || return 1
    echo "$dir" >"$BATS_FILE_TMPDIR/pgdir"
    pg_harness_start "$dir" || return 1
    export PGHOST=$dir PGPORT=${CEEMS_TEST_PGPORT:-15432} PGUSER=postgres PGDATABASE=reports
    psql -X -q -d postgres -c "CREATE DATABASE reports" || return 1
    "$CEEMS_TOP_BUILDDIR/tools/ceems-admin" --sql-dir "$SQL_DIR" -d "dbname=reports" \
        db migrate >/dev/null || return 1
    psql -X -q -v ON_ERROR_STOP=1 <<'EOF' || return 1
CREATE ROLE alice LOGIN IN ROLE ceems_reader;
CREATE ROLE bob LOGIN IN ROLE ceems_reader;
CREATE ROLE carol LOGIN IN ROLE ceems_reader;
CREATE ROLE erin LOGIN IN ROLE ceems_reader;
CREATE ROLE frank LOGIN IN ROLE ceems_reader;
CREATE ROLE dave LOGIN IN ROLE ceems_reader;
CREATE ROLE gina LOGIN IN ROLE ceems_reader;
EOF
    psql -X -q -v ON_ERROR_STOP=1 -f "$BATS_TEST_DIRNAME/lib/reports-data.sql" || return 1
    # exim's own user must reach its mailboxes: not under bats' 0700 tree
    local mta
    mta=$(mktemp -d /tmp/ceems-test.reports-mta.XXXXXX) || return 1
    echo "$mta" >"$BATS_FILE_TMPDIR/mta"
    exim_setup "$mta"
}

teardown_file() {
    local dir mta
    mta=$(cat "$BATS_FILE_TMPDIR/mta" 2>/dev/null) && case $mta in
        /tmp/ceems-test.reports-mta.*) rm -rf "$mta" ;;
    esac
    dir=$(cat "$BATS_FILE_TMPDIR/pgdir" 2>/dev/null) || return 0
    pg_harness_stop "$dir"
}

setup() {
    [ "$(id -u)" = 0 ] || skip "the PostgreSQL harness needs root"
    [ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] || skip "no tools/ceems-admin (built without libpq?)"
    [ -x "$EXIM" ] || skip "exim4 not installed"
    local dir
    dir=$(cat "$BATS_FILE_TMPDIR/pgdir")
    export PGHOST=$dir PGPORT=${CEEMS_TEST_PGPORT:-15432} PGUSER=postgres PGDATABASE=reports
    ADMIN=$CEEMS_TOP_BUILDDIR/tools/ceems-admin
    MTA=$(cat "$BATS_FILE_TMPDIR/mta")
}

report() {
    # shellcheck disable=SC2086
    "$ADMIN" -d "dbname=reports user=${AS:-postgres}" report "$@" $PERIOD
}

send_users() {
    report user --send --domain localhost --sender ceems@localhost --sendmail "$MTA/sendmail"
}

sql() {
    psql -X -At -v ON_ERROR_STOP=1 "$@"
}

# The plain-text part of the one message in a mailbox.
text_part() {
    awk '/^Content-Type: text\/plain/ { on = 1; next } /^--=_ceems_/ { on = 0 } on' "$MTA/mail/$1"
}

@test "a preview of one user's digest prints it and sends and records nothing" {
    run report user --only alice
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    [[ "$output" == *"your jobs from 2026-10-01 to 2026-11-01 (alice)"* ]] || _fail "$output"
    [[ "$output" == *"--cpus-per-task=3"* ]] || _fail "no cpu suggestion: $output"
    [[ "$output" != *"(bob)"* ]] || _fail "another user's digest"
    [ -z "$(ls -A "$MTA/mail")" ] || _fail "a preview mailed: $(ls "$MTA/mail")"
    [ "$(sql -c 'SELECT count(*) FROM ceems.report_sent')" = 0 ] || _fail "a preview recorded"
    run report user --only alice --html
    [[ "$output" == *'<th scope="col">Light</th>'* ]] || _fail "html preview: $output"
}

@test "bad input: an unreadable period is refused with a clear error" {
    run "$ADMIN" -d "dbname=reports" report user --from yesterday-ish
    [ "$status" -eq 2 ] || _fail "status $status: $output"
    [[ "$output" == *"the period (--from, --to)"* ]] || _fail "$output"
    run "$ADMIN" -d "dbname=reports" report user --send
    [ "$status" -eq 2 ] && [[ "$output" == *"--sender"* ]] || _fail "$output"
}

@test "digests through exim: each user's own, figures as SQL sums them, both parts, opt-out respected" {
    run send_users
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    [[ "$output" == *"5 sent, 0 sent already, 0 failed"* ]] || _fail "$output"
    [ -f "$MTA/mail/alice" ] && [ -f "$MTA/mail/bob" ] && [ -f "$MTA/mail/erin" ] &&
        [ -f "$MTA/mail/frank" ] || _fail "mailboxes: $(ls "$MTA/mail")"
    [ ! -e "$MTA/mail/carol" ] || _fail "carol opted out and got mail"
    local u other
    for u in alice bob erin frank gina; do
        [ "$(grep -c '^From ' "$MTA/mail/$u")" = 1 ] || _fail "$u: not one message"
        grep -q "^To: $u@localhost$" "$MTA/mail/$u" || _fail "$u: To"
        grep -q '^Content-Type: text/plain; charset=us-ascii' "$MTA/mail/$u" || _fail "$u: text part"
        grep -q '^Content-Type: text/html; charset=us-ascii' "$MTA/mail/$u" || _fail "$u: html part"
        grep -q "your jobs from 2026-10-01 to 2026-11-01 ($u)" "$MTA/mail/$u" || _fail "$u: title"
        for other in alice bob carol erin frank gina; do
            [ "$other" = "$u" ] && continue
            ! grep -q "($other)" "$MTA/mail/$u" || _fail "$u's mail names $other"
        done
    done
    # alice's figures, summed by hand in SQL over her jobs ending in October
    local q="FROM ceems.jobs WHERE user_name = 'alice' AND end_time >= '2026-10-01Z' AND end_time < '2026-11-01Z'"
    local jobs held used
    jobs=$(sql -c "SELECT count(*) $q")
    held=$(sql -c "SELECT to_char(sum(alloc_cpus * elapsed_s) / 3600, 'FM999990.0') $q")
    used=$(sql -c "SELECT to_char(sum(cpu_time_s) / 3600, 'FM999990.0') $q")
    text_part alice >"$BATS_TEST_TMPDIR/alice.txt"
    grep -Eq "^  Jobs +$jobs$" "$BATS_TEST_TMPDIR/alice.txt" || _fail "jobs $jobs: $(cat "$BATS_TEST_TMPDIR/alice.txt")"
    grep -Eq "^  Core-hours held +$held$" "$BATS_TEST_TMPDIR/alice.txt" || _fail "held $held"
    grep -Eq "^  Core-hours used +$used$" "$BATS_TEST_TMPDIR/alice.txt" || _fail "used $used"
    # the cpu suggestion: 16 cores using 2 -> 3, 13 core-hours back per job
    local freed
    freed=$(sql -c "SELECT to_char(sum((alloc_cpus - 3) * elapsed_s) / 3600, 'FM999990.0') $q")
    tr '\n' ' ' <"$BATS_TEST_TMPDIR/alice.txt" | grep -q "CPU: $jobs jobs asked for 16 cores.*--cpus-per-task=3.*$freed core-hours free" ||
        _fail "cpu suggestion ($freed): $(cat "$BATS_TEST_TMPDIR/alice.txt")"
    grep -q -- "--mem=5G" "$BATS_TEST_TMPDIR/alice.txt" || _fail "memory suggestion"
    grep -q -- "--time=01:30:00" "$BATS_TEST_TMPDIR/alice.txt" || _fail "time suggestion"
    grep -Eq "^  CPU +red +12% " "$BATS_TEST_TMPDIR/alice.txt" || _fail "cpu light"
    # bob asks what he uses; erin is new; frank has two jobs
    text_part bob | grep -q "Nothing to suggest" || _fail "bob got a suggestion"
    text_part bob | grep -Eq "^  CPU +green +90% " || _fail "bob's cpu light"
    text_part erin | grep -q "first weeks: 20" || _fail "erin judged as a new user"
    text_part erin | grep -q "Nothing to suggest" || _fail "erin got a suggestion"
    text_part frank | grep -q "Nothing to suggest" || _fail "frank's two jobs made a suggestion"
    [ "$(sql -c "SELECT string_agg(recipient || ':' || jobs, ',' ORDER BY recipient) FROM ceems.report_sent")" = \
        "alice:40,bob:30,erin:20,frank:2,gina:5" ] || _fail "report_sent"
    text_part gina | tr '\n' ' ' | grep -q "GPU: 4 jobs held a GPU that was busy less than 5%" ||
        _fail "gina's GPU suggestion"
}

@test "a second run sends nothing, nor one over an overlapping period" {
    local before
    before=$(cat "$MTA"/mail/* | md5sum)
    run send_users
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    [[ "$output" == *"0 sent, 5 sent already, 0 failed"* ]] || _fail "$output"
    run "$ADMIN" -d "dbname=reports" report user --send --domain localhost --sender ceems@localhost \
        --sendmail "$MTA/sendmail" --from 2026-10-15T00:00:00Z --to 2026-11-15T00:00:00Z
    [[ "$output" == *"0 sent, 4 sent already, 0 failed"* ]] || _fail "overlap: $output"
    [ "$(cat "$MTA"/mail/* | md5sum)" = "$before" ] || _fail "mail was sent again"
}

@test "reports are built as their reader: a role that cannot be the user gets nothing of theirs" {
    AS=dave run report user --only alice
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [[ "$output" == *"cannot read as alice"* ]] || _fail "$output"
    [[ "$output" != *"cpus-per-task"* ]] || _fail "a report built without the user's role"
}

@test "an account's overview goes to its coordinator, built as the coordinator" {
    run report account --send --domain localhost --sender ceems@localhost --sendmail "$MTA/sendmail"
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    [[ "$output" == *"account report for dave, physics"* ]] || _fail "$output"
    text_part dave >"$BATS_TEST_TMPDIR/dave.txt"
    grep -q "account physics from 2026-10-01" "$BATS_TEST_TMPDIR/dave.txt" || _fail "title"
    grep -Eq "^  alice " "$BATS_TEST_TMPDIR/dave.txt" && grep -Eq "^  bob " "$BATS_TEST_TMPDIR/dave.txt" ||
        _fail "physics users: $(cat "$BATS_TEST_TMPDIR/dave.txt")"
    ! grep -Eq "^  (carol|erin|frank) " "$BATS_TEST_TMPDIR/dave.txt" || _fail "another account's users"
    # alice first: she has the most to gain
    [ "$(grep -Eo '^  (alice|bob) ' "$BATS_TEST_TMPDIR/dave.txt" | head -1)" = "  alice " ] || _fail "ranking"
}

@test "the admins' triage list: users who repeatedly over-ask, most idle energy first" {
    run report triage
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    local rows
    rows=$(printf '%s\n' "$output" | grep -Eo '^  (alice|bob|carol|erin|frank|gina) ' | tr -d ' ' | tr '\n' ,)
    [ "$rows" = "alice,carol,gina," ] || _fail "rows $rows: $output"
    run report triage --send --sender ceems@localhost --admin-to admins@localhost --sendmail "$MTA/sendmail"
    [ "$status" -eq 0 ] && grep -q "users to offer help" "$MTA/mail/admins" || _fail "$output"
}

@test "alerts: GPU jobs of an hour or more whose GPU sat idle, with what they cost, once" {
    run report alert --send --domain localhost --sender ceems@localhost --sendmail "$MTA/sendmail"
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    [[ "$output" == *"1 sent, 0 sent already, 0 failed"* ]] || _fail "only gina's jobs alert: $output"
    [ "$(grep -c '^From ' "$MTA/mail/gina")" = 2 ] || _fail "gina: the digest and one alert"
    awk '/^Subject: GPUs that sat idle/ { on = 1 } on' "$MTA/mail/gina" | tr '\n' ' ' >"$BATS_TEST_TMPDIR/alert"
    grep -q "Subject: GPUs that sat idle in 3 of your jobs" "$BATS_TEST_TMPDIR/alert" || _fail "subject"
    grep -q "jobs 6001, 6002, 6003\." "$BATS_TEST_TMPDIR/alert" ||
        _fail "not the three idle hours (6004 was busy, 6005 short): $(cat "$BATS_TEST_TMPDIR/alert")"
    local gh
    gh=$(sql -c "SELECT to_char(sum(alloc_gpus * elapsed_s) / 3600, 'FM990.0') FROM ceems.jobs WHERE jobid IN (6001, 6002, 6003)")
    grep -q "held $gh GPU-hours" "$BATS_TEST_TMPDIR/alert" || _fail "GPU-hours $gh"
    run report alert --send --domain localhost --sender ceems@localhost --sendmail "$MTA/sendmail"
    [[ "$output" == *"0 sent, 1 sent already, 0 failed"* ]] || _fail "alerted twice: $output"
}

@test "nodes: the one with higher static power stands out; identical nodes do not" {
    run report nodes
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    printf '%s\n' "$output" | grep -Eq '^  n3 +static power per core held \(W\) +3.25 +2.5 ' || _fail "$output"
    ! printf '%s\n' "$output" | grep -Eq '^  n[124] ' || _fail "an ordinary node listed: $output"
    sql -c "UPDATE ceems.job_nodes SET package_static_j = package_static_j / 1.3,
        package_j = package_j - package_static_j + package_static_j / 1.3 WHERE node = 'n3'" >/dev/null
    run report nodes
    [[ "$output" == *"No node stands out in the period."* ]] || _fail "identical nodes: $output"
}

@test "nodes: energy per busy core-second and a BMC residual stand out on the odd node only" {
    # n3's static power as its group's (the test before lowers it; this
    # one stands alone).
    sql -c "UPDATE ceems.job_nodes SET package_j = package_j - package_static_j + 2.5 * alloc_cores * lifetime_s,
        package_static_j = 2.5 * alloc_cores * lifetime_s WHERE node = 'n3'" >/dev/null
    # The generated nodes draw 10 J per busy core-second alike: n2 draws
    # half as much again for the same CPU time.
    sql -c "UPDATE ceems.job_nodes SET package_j = package_j + 5 * cpu_s WHERE node = 'n2'" >/dev/null
    # A BMC on each node: a tenth of each job's total outside RAPL and the
    # GPUs on n1, n3, n4, and on n2 as well; n4's BMC says 16%.
    sql -c "UPDATE ceems.job_nodes SET node_j = total_j * CASE node WHEN 'n4' THEN 0.16 ELSE 0.1 END
        WHERE node IN ('n1', 'n2', 'n3', 'n4')" >/dev/null
    run report nodes
    [ "$status" -eq 0 ] || _fail "status $status: $output"
    printf '%s\n' "$output" | grep -Eq '^  n2 +package energy per busy core-second \(J\) +15 +10 ' ||
        _fail "n2's energy per busy core-second: $output"
    printf '%s\n' "$output" | grep -Eq '^  n4 +node power outside RAPL and GPUs \(share of the total\) +0.16 +0.1 ' ||
        _fail "n4's BMC residual: $output"
    ! printf '%s\n' "$output" | grep -Eq '^  n1 |^  n[34] +package|^  n[123] +node power' ||
        _fail "an ordinary node listed: $output"
    # The same figures on every node: nothing stands out.
    sql -c "UPDATE ceems.job_nodes SET package_j = package_j - 5 * cpu_s WHERE node = 'n2';
        UPDATE ceems.job_nodes SET node_j = total_j * 0.1 WHERE node IN ('n1', 'n2', 'n3', 'n4')" >/dev/null
    run report nodes
    [[ "$output" == *"No node stands out in the period."* ]] || _fail "identical nodes: $output"
}
