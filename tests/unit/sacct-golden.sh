#!/bin/sh
# sacct-golden.sh - ceems-sacct's output in every mode against golden
# files, on the fixed dataset of tests/fixtures/sacct/spool (made by
# make-spool.sh).  Each golden file holds stdout, then stderr and the
# exit status, so errors are held to their one line and status too.
# TAP on stdout; `make check` runs it.  With --update it rewrites the
# goldens instead (check the diff before committing).
#
# The environment is fixed: TZ=UTC, C.UTF-8 locale, COLUMNS unset
# unless a case sets it; CEEMS_SACCT_ALL_RECORDS=1 shows every record
# as for root (the tool is not setgid here).
#
# The down-* cases configure a database that cannot be reached: the
# listing comes from the same spool, with one warning line naming the
# database's error (libpq's words) and the spool, whose path is written
# FIXTURES in the goldens.  Without libpq they are skipped.
#
# tests/integration/sacct.bats runs the same cases against PostgreSQL
# loaded with the same records: SACCT_GOLDEN_CONF names its
# configuration (not the down-* cases': they keep theirs),
# SACCT_GOLDEN_SKIP the cases (blank-separated) it leaves out.
set -u
top_src=${CEEMS_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
top_build=${CEEMS_TOP_BUILDDIR:-$PWD}
fixtures=${CEEMS_FIXTURES:-$top_src/tests/fixtures}
sacct=$top_build/tools/ceems-sacct
golden=$fixtures/sacct/golden
update=no
[ "${1:-}" = --update ] && update=yes

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sacct-golden.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'spool_dir = %s\ncluster = c1\n' "$fixtures/sacct/spool" >"$tmp/ceems.conf"
conf=${SACCT_GOLDEN_CONF:-$tmp/ceems.conf}
case_conf=$conf
# No server listens there: /nonexistent is never created.
down_db="host=/nonexistent/ceems-golden port=1 dbname=ceems"
printf 'spool_dir = %s\ncluster = c1\ndatabase = %s\n' \
    "$fixtures/sacct/spool" "$down_db" >"$tmp/down.conf"
printf 'spool_dir = /nonexistent/ceems-golden-spool\ncluster = c1\ndatabase = %s\n' \
    "$down_db" >"$tmp/down-nospool.conf"
# Job 1001 twice: its id used again by a job an hour later (-D).
mkdir "$tmp/dup-spool" && cp "$fixtures"/sacct/spool/*.json "$tmp/dup-spool/" &&
    sed 's/"submit_time":1741600700/"submit_time":1741604300/; s/"start_time":1741600800/"start_time":1741604400/; s/"end_time":1741604400/"end_time":1741608000/' \
        "$fixtures"/sacct/spool/000001741604401-c1-1001-1741600800-node01.json \
        >"$tmp/dup-spool/000001741608001-c1-1001-1741604400-node01.json" || exit 1
printf 'spool_dir = %s\ncluster = c1\n' "$tmp/dup-spool" >"$tmp/dup.conf"
# One node's spool with its part of the two-node job 1003 only.
mkdir "$tmp/part-spool" &&
    cp "$fixtures"/sacct/spool/*-c1-1003-*-node01.json "$tmp/part-spool/" || exit 1
printf 'spool_dir = %s\ncluster = c1\n' "$tmp/part-spool" >"$tmp/part.conf"
printf 'spool_dir = %s\ncluster = c1\ndatabase = %s\n' "$tmp/part-spool" "$down_db" \
    >"$tmp/down-part.conf"
# Steps with their task counts (NTasks): job 1001's step 0 ran 8 tasks,
# its batch and extern steps one each; the two-node job 1003's extern
# step one task on each node, its batch step 4 on node01 and a count
# node02's record lacks (an older plugin's): unknown, not partial.
mkdir "$tmp/tasks-spool" &&
    sed 's/"id":"0",/&"tasks":8,/; s/"id":"batch",/&"tasks":1,/; s/"id":"extern",/&"tasks":1,/' \
        "$fixtures"/sacct/spool/*-c1-1001-*-node01.json \
        >"$tmp/tasks-spool/000001741604401-c1-1001-1741600800-node01.json" &&
    sed 's/"id":"batch",/&"tasks":4,/; s/"id":"extern",/&"tasks":1,/' \
        "$fixtures"/sacct/spool/*-c1-1003-*-node01.json \
        >"$tmp/tasks-spool/000001741629601-c1-1003-1741615200-node01.json" &&
    sed 's/"id":"extern",/&"tasks":1,/' \
        "$fixtures"/sacct/spool/*-c1-1003-*-node02.json \
        >"$tmp/tasks-spool/000001741629605-c1-1003-1741615200-node02.json" || exit 1
printf 'spool_dir = %s\ncluster = c1\n' "$tmp/tasks-spool" >"$tmp/tasks.conf"
have_pq=no
grep -q '^#define HAVE_LIBPQ 1' "$top_build/config.h" 2>/dev/null && have_pq=yes
skip=" ${SACCT_GOLDEN_SKIP:-} "
export TZ=UTC LC_ALL=C.UTF-8 CEEMS_SACCT_ALL_RECORDS=1
unset COLUMNS LANG LANGUAGE

n=0
failed=0
# case NAME [VAR=VALUE...] -- ARGS...
case_() {
    name=$1
    shift
    envs=""
    while [ "$1" != -- ]; do envs="$envs $1"; shift; done
    shift
    n=$((n + 1))
    case $skip in *" $name "*) echo "ok $n - $name # SKIP"; return ;; esac
    # shellcheck disable=SC2086 # envs are VAR=VALUE words
    env $envs "$sacct" -c "$case_conf" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    { cat "$tmp/out"; echo "--- stderr"; sed -e "s|$fixtures|FIXTURES|g" -e "s|$tmp|TMP|g" "$tmp/err"
      echo "--- rc=$rc"; } >"$tmp/got"
    if [ $update = yes ]; then
        cp "$tmp/got" "$golden/$name.out"
        echo "ok $n - $name (updated)"
    elif cmp -s "$tmp/got" "$golden/$name.out"; then
        echo "ok $n - $name"
    else
        echo "not ok $n - $name"
        diff -u "$golden/$name.out" "$tmp/got" | sed 's/^/# /'
        failed=$((failed + 1))
    fi
}

# down_case NAME CONF [VAR=VALUE...] -- ARGS...: a case with the
# database unreachable, configured by CONF (down or down-nospool).
down_case() {
    if [ $have_pq = no ]; then
        n=$((n + 1))
        echo "ok $n - $1 # SKIP built without libpq"
        return
    fi
    case_conf=$tmp/$2.conf
    name=$1
    shift 2
    case_ "$name" "$@"
    case_conf=$conf
}

# own_case NAME CONF -- ARGS...: a case with its own configuration
# CONF, whichever backend the others read (its spool is not the
# dataset's).
own_case() {
    case_conf=$tmp/$2.conf
    name=$1
    shift 2
    case_ "$name" "$@"
    case_conf=$conf
}

# same_stdout A B: the goldens of cases A and B have the same stdout.
same_stdout() {
    n=$((n + 1))
    if [ $have_pq = no ]; then
        echo "ok $n - $1 lists as $2 # SKIP built without libpq"
    elif [ "$(sed '/^--- stderr$/,$d' "$golden/$1.out")" = \
           "$(sed '/^--- stderr$/,$d' "$golden/$2.out")" ]; then
        echo "ok $n - $1 lists as $2"
    else
        echo "not ok $n - $1 lists as $2"
        failed=$((failed + 1))
    fi
}

W="-S 2025-03-01 -E 2025-04-01"
# shellcheck disable=SC2086 # $W is two options
{
case_ table-ascii -- $W
case_ table-box -- $W --table=box
case_ table-narrow COLUMNS=72 -- $W --table=ascii
case_ table-all-fields -- $W -X -o JobID,JobIDRaw,JobName,User,UID,Account,Partition,QOS,Cluster,State,ExitCode,Submit,Start,End,Elapsed,ElapsedRaw,Timelimit,AllocCPUS,AllocGPUS,NNodes,NodeList,ReqMem,MaxRSS,TotalCPU,CPUTime,CPUTimeRAW,ConsumedEnergy,ConsumedEnergyRaw
case_ table-widths -- $W -X -o JobID%6,JobName%5,State%4,Energy%12
case_ parsable -- $W -p -o JobID,JobName,State,ExitCode,Elapsed,TotalCPU,ReqMem,MaxRSS,ConsumedEnergy
case_ parsable2 -- $W -P -o JobID,User,CPUEff,MemEff,GPUUtil,GPUMemEff,EnergyCPU,EnergyDRAM,EnergyGPU,EnergyOther,Energy,CO2e,CIFactor,PUE,Quality
case_ gpus -- -j 1003 -X -P -o JobID,AllocGPUS,GPUUtil,GPUSMAct,GPUEff,GPUMem,GPUMemEff,EnergyGPU
case_ quality -- $W -X -P -o JobID,Energy,CO2e,CIFallback,IdleUnlearned,Quality
case_ delimiter -- $W -P -n --delimiter=';' -X
case_ noheader -- $W -n -X --table=ascii
case_ csv -- $W --csv -X -o JobID,JobName,State,Energy,CO2e
case_ json -- --json -j 1001
case_ json-quality -- --json -j 1003
case_ json-window -- $W --json -u bob
# A node with a zone and no energy source: no emissions (an older record's 0 g).
case_ json-noenergy -- --json -j 1004
case_ summary -- $W -X --summary
case_ summary-account -- $W -X -P --summary=account
case_ series -- --series 1007
case_ explain -- --explain 1001
case_ explain-multinode -- --explain 1003
case_ helpformat -- -e
case_ steps -- -j 1001.batch,1003 -o JobID,JobName,Elapsed,TotalCPU,MaxRSS,ConsumedEnergy
# Each job's part on each node, between the job and its steps; the
# totals of --summary count each job once.
case_ per-node -- -j 1001,1003 --per-node -o JobID,JobIDRaw,JobName,NodeList,NNodes,State,Elapsed,AllocCPUS,CPUEff,MemEff,TotalCPU,MaxRSS,EnergyCPU,ConsumedEnergyRaw,CO2e,Quality
case_ per-node-summary -- $W -X --per-node -P -o JobID,NodeList,EnergyRaw --summary
case_ states -- $W -X -s TO,oom -o JobID,State
case_ user -- $W -u bob -o JobID,User,State
case_ account -- $W -A physics -o JobID,Account
case_ partition -- $W -r gpu -X -o JobID,Partition
case_ allclusters -- $W -L -X -o JobID,Cluster
case_ cluster -- $W -M c2 -X -o JobID,Cluster
case_ jobs-window -- -j 1005 -X -o JobID,Start
case_ window-empty -- -S 2025-01-01 -E 2025-01-31 -X
case_ err-field -- -o JobID,Bogus
case_ err-width -- -o JobID%0
case_ err-time -- -S 2025-13-01
case_ err-user -- $W -u nosuchuser
case_ err-series -- --series 1001
case_ err-explain -- --explain 9999
case_ err-option -- --bogus
case_ err-state -- -s DONE
case_ err-jobid -- -j 12x
# sacct's own callers: names only, every field (empty where not kept),
# its units, its options that change nothing here, thousands of ids.
case_ explain-fields -- --explain-fields
case_ sacct-fields -- -j 1001,1004 -P -o JobID,AdminComment,NTasks,TRESUsageOutAve,Timelimit,TimelimitRaw,MaxRSS,ReqMem,ConsumedEnergy,NCPUS,tresusageinmaxn
case_ units-m -- -j 1001,1004 -P -o JobID,ReqMem,MaxRSS,ConsumedEnergy --units=M
# TRES usage: the parts ceems keeps of a step, in sacct's order and
# units (--units converts them too); job lines and the rest empty.
case_ tres-usage -- -j 1001,1003,1004 -P -o JobID,TotalCPU,ConsumedEnergyRaw,MaxRSS,TRESUsageInTot,TRESUsageInMax,TRESUsageInAve,TRESUsageOutTot
case_ tres-usage-units -- -j 1001 -P -o JobID,TRESUsageInTot,TRESUsageInMax --units=M
case_ units-k -- -j 1001 -P -o JobID,ReqMem,MaxRSS,ConsumedEnergy --units=k
case_ noconvert -- -j 1001 -P -o JobID,ReqMem,MaxRSS,ConsumedEnergy --noconvert
case_ err-units -- --units=X
case_ array -- -j 1001,1003 -X -P -o JobID,State --array
case_ array-task -- -j 1001_0,1003_2 -X -P -o JobID,State
# NTasks: a step's tasks summed over its nodes, empty on job lines and
# where a node's record lacks the count; --json keeps each node's.
own_case ntasks tasks -- -j 1001,1003 -P -o JobID,NNodes,NTasks,MaxRSS
own_case ntasks-json tasks -- --json -j 1001
own_case duplicates dup -- -j 1001 -P -o JobID,Start,End -D
own_case duplicates-latest dup -- -j 1001 -P -o JobID,Start,End
own_case duplicates-window dup -- -S 2025-03-10 -E 2025-03-11 -X -P -o JobID,Start
case_ brief -- -j 1002 -b -P
case_ long -- -j 1002 -X -l -P
case_ all -- -j 1007 -X -P -o ALL
case_ accepted-noops -- -j 1001 -X -P -o JobID -v --federation --local --use-local-uid --expand-patterns
case_ err-refused -- -j 1001 --batch-script
case_ err-refused-filter -- -j 1001 --qos normal
case_ many-jobids -- -X -P -o JobID,State -j "$(seq -s, 1 5000)"
case_ jobs-range -- -X -P -o JobID -j '100[1-3],1006,[1007-1009]'
case_ jobs-range-steps -- -P -o JobID -j '[1001-1002].batch'
case_ err-jobs-range -- -j '1_[0-4000000000]'
case_ many-jobids-repeated -- -X -P -o JobID -j 1001 $(seq 2000 2300 | sed 's/^/-j /')
# The caller's control bytes come back escaped, never raw to the terminal.
case_ err-control -- -S "$(printf '2025\033[2J')"
case_ err-control-format -- -o "$(printf 'JobID,\033]0;x\007')"
# A path too long for the system is refused with that reason, not cut.
case_ err-config-long -- -c "/$(printf 'a%.0s' $(seq 5000))"
down_case down-table down -- $W
down_case down-filters down -- $W -u alice -s CD,F -X -P -o JobID,User,State,CPUEff,MemEff,Energy,CO2e
down_case down-steps down -- -j 1001.batch,1003 -P -o JobID,Elapsed,TotalCPU,MaxRSS,ConsumedEnergy,EnergyGPU
down_case down-summary down -- $W -X -P --summary=account
down_case down-json down -- --json -j 1001
down_case down-series down -- --series 1007
down_case down-explain down -- --explain 1003
down_case down-no-spool down-nospool -- $W
# A job of two nodes from a spool holding one node's record: the
# listing says it shows that part only, in one line.
own_case spool-part part -- -j 1003 -X -o JobID,NNodes,Energy
down_case down-part down-part -- -j 1003 -X -o JobID,NNodes,Energy
# The fallback lists what the spool backend lists, byte for byte.
same_stdout down-table table-ascii
same_stdout down-json json
same_stdout down-series series
same_stdout down-explain explain-multinode
# doc/sacct-fields.md is the table --explain-fields prints.
n=$((n + 1))
if [ "$(sed -n 's/^| \([^ |]*\) | \([a-z]*\) | \(.*\) |$/\1 \2 \3/p' "$top_src/doc/sacct-fields.md")" = \
     "$(sed '/^--- stderr$/,$d' "$golden/explain-fields.out" | sed 's/  */ /; s/  */ /')" ]; then
    echo "ok $n - doc/sacct-fields.md lists the fields as --explain-fields"
else
    echo "not ok $n - doc/sacct-fields.md lists the fields as --explain-fields (regenerate it)"
    failed=$((failed + 1))
fi
}
echo "1..$n"
[ $failed -eq 0 ]
