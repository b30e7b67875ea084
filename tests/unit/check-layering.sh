#!/bin/sh
# check-layering.sh - libceems is built in layers, each a folder of lib/,
# and a layer includes only its own headers and those of the layers
# below it (lowest first; the programs, tools/ and plugins/, are above
# them all):
#
#   base     logging, clocks, bounded file reads, numbers, text, JSON
#            helpers, the configuration file
#   cgroup   a job's cgroup: where it is, what it used
#   model    what is measured and how it is split: energy domains and
#            gaps, a job's metadata, the ledger, idle power, emissions,
#            carbon intensity, time series
#   sources  the node's and the jobs' counters: RAPL, hwmon,
#            pm_counters, the BMC, GPUs, perf, eBPF, /proc
#   summary  the end-of-job summary and the units people read
#   record   the job record, the job note, the spool, PostgreSQL, replay
#   agent    the node agent's engine: every source and job on one timer
#   client   the agent's protocol and its client, the job-side work and
#            the agent's launch (what the SPANK plugin links)
#   mark     the API a job's own processes report their work with
#            (libceems_mark: the model's rule for a counter's name, libc)
#
# Every #include "FOLDER/NAME.h" of a file under lib/ is checked: one that
# goes from a lower layer up to a higher one is a failure naming the file,
# the line and both layers.  An include of a lib/ header without its
# folder, a file of lib/ outside the layer folders, or a folder not in
# the order above fails too, so that no edge is hidden.
#
# The edges in ALLOWED below exist today and are tolerated, each with its
# reason; the list may only shrink: an entry whose include is gone fails,
# so that it is removed with the include.  No new entry: move the header
# down instead.
#
# The files are found by walking lib/ (no git: the check runs in the
# distribution tarball too).  TAP on stdout; `make check` runs it.
set -u

top=${CEEMS_TOP_SRCDIR:-.}
order="base cgroup model sources summary record agent client mark"

# FILE INCLUDE  reason, one per line.  None today: the job report that
# the record, the summary and the eBPF reader once took from the engine
# is the measurement model's (model/measure.h).
ALLOWED='
'

files=$(cd "$top" && find lib -type f \( -name '*.c' -o -name '*.h' \) | sort)

echo "1..3"
if [ -z "$files" ]; then
	echo "not ok 1 - no source file under $top/lib"
	echo "not ok 2 - # SKIP no source file"
	echo "not ok 3 - # SKIP no source file"
	exit 0
fi

# One pass: the header names of lib/, then each file's includes.  Output
# lines: "folder FILE why", "up FILE:LINE: FROM -> TO (INCLUDE)",
# "allowed FILE INCLUDE", "stale FILE INCLUDE".
result=$(cd "$top" && printf '%s\n' "$files" | awk -v order="$order" \
    -v allowed="$ALLOWED" '
BEGIN {
	n = split(order, o, " ")
	for (i = 1; i <= n; i++)
		rank[o[i]] = i
	m = split(allowed, a, "\n")
	for (i = 1; i <= m; i++) {
		if (split(a[i], w, " ") < 2)
			continue
		allow[w[1] " " w[2]] = 1
	}
	while ((getline f) > 0) {
		nfiles++
		list[nfiles] = f
		if (f ~ /\.h$/) {
			b = f
			sub(/.*\//, "", b)
			header[b] = f
		}
	}
	for (k = 1; k <= nfiles; k++)
		check(list[k])
	for (e in allow)
		if (!(e in used))
			print "stale " e
}
function layer_of(f,    p) {
	if (split(f, p, "/") != 3)
		return ""
	return p[2]
}
function check(f,    from, line, ln, inc, to, r) {
	from = layer_of(f)
	if (from == "") {
		print "folder " f " is not in a layer folder of lib/"
		return
	}
	if (!(from in rank)) {
		print "folder " f " is in lib/" from "/, which is not in the layer order"
		return
	}
	ln = 0
	while ((r = (getline line < f)) > 0) {
		ln++
		if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/)
			continue
		inc = line
		sub(/^[^"]*"/, "", inc)
		sub(/".*/, "", inc)
		if (inc !~ /\//) {
			if (inc in header)
				print "up " f ":" ln ": includes \"" inc \
				    "\" without its folder (" header[inc] ")"
			continue
		}
		to = inc
		sub(/\/.*/, "", to)
		if (!(to in rank))
			continue
		if (rank[to] <= rank[from])
			continue
		if ((f " " inc) in allow) {
			used[f " " inc] = 1
			print "allowed " f ":" ln ": " from " -> " to " (" inc ")"
			continue
		}
		print "up " f ":" ln ": " from " -> " to " (" inc ")"
	}
	close(f)
	if (r < 0)
		print "folder " f " cannot be read"
}
')

folders=$(printf '%s\n' "$result" | sed -n 's/^folder //p')
ups=$(printf '%s\n' "$result" | sed -n 's/^up //p')
allowed=$(printf '%s\n' "$result" | sed -n 's/^allowed //p')
stale=$(printf '%s\n' "$result" | sed -n 's/^stale //p')

nfiles=$(printf '%s\n' "$files" | grep -c .)
if [ -z "$folders" ]; then
	echo "ok 1 - $nfiles files of lib/ are in the layer folders ($order)"
else
	echo "not ok 1 - files of lib/ outside the layer order ($order)"
	printf '%s\n' "$folders" | sed 's/^/# /'
fi
if [ -z "$ups" ]; then
	echo "ok 2 - no include of lib/ goes up a layer"
else
	echo "not ok 2 - $(printf '%s\n' "$ups" | grep -c .) includes of lib/ go up a layer or name no folder (order, lowest first: $order)"
	printf '%s\n' "$ups" | sed 's/^/# /'
fi
if [ -n "$allowed" ]; then
	printf '%s\n' "$allowed" | sed 's/^/# allowed for now: /'
fi
if [ -z "$stale" ]; then
	echo "ok 3 - every allowed upward include still exists"
else
	echo "not ok 3 - allowed upward includes that are gone: remove them from ALLOWED"
	printf '%s\n' "$stale" | sed 's/^/# /'
fi
exit 0
