#!/bin/sh
# check-prefixes.sh - a function's name says which file defines it, so a
# reader knows where a call goes (server_client_* lives in
# server-client.c):
#
#   lib/LAYER/X.c    ceems_X_*   (lib/agent/agent_state.c: ceems_agent_state_*)
#   plugins/X.c      ceems_X_*   (plugins/job_start.c: ceems_job_start_*)
#   tools/PROG/X.c   X_*         (tools/sacct/sacct_fields.c: sacct_fields_*)
#
# A '-' in a file's name reads as '_'.  A function named exactly the
# prefix (ceems_X, X) is allowed.  Static functions are exempt: only
# functions with external linkage are checked.
#
# A definition is found by the house style: the function's name starts a
# line at column 0, followed by '(', and its return type (with `static`
# for an internal one) is on the line above.  Macro calls at column 0
# (the line above ends with ')' or ';' or a brace) are not definitions.
#
# The names in EXEMPT below are fixed by someone else (the entry points
# Slurm looks up by name, main) and are allowed; an entry that matches
# nothing fails, so that the list only holds what is there.
#
# The files are found by walking lib/, plugins/ and tools/ (no git: the
# check runs in the distribution tarball too).  TAP on stdout; `make
# check` runs it.
set -u

top=${CEEMS_TOP_SRCDIR:-.}

# FILE NAME-REGEX  reason
EXEMPT='
plugins/spank_ceems.c ^slurm_spank_  SPANK entry points, looked up by name by Slurm
plugins/acct_gather_energy/acct_gather_energy_ceems.c ^(init|fini|acct_gather_energy_p_.*)$  plugin entry points, looked up by name by Slurm
tools/admin/ceems-admin.c ^main$  the program entry point
tools/agent/ceems-agent.c ^main$  the program entry point
tools/jobinfo/ceems-jobinfo.c ^main$  the program entry point
tools/mark/ceems-mark.c ^main$  the program entry point
tools/sacct/ceems-sacct.c ^main$  the program entry point
'

files=$(cd "$top" && find lib plugins tools -type f -name '*.c' | sort)

echo "1..2"
if [ -z "$files" ]; then
	echo "not ok 1 - no C file under $top/lib, plugins or tools"
	echo "not ok 2 - # SKIP no source file"
	exit 0
fi

# Output lines: "bad FILE:LINE: NAME (wants PREFIX_)", "exempt FILE NAME",
# "stale FILE REGEX", "count N".
result=$(cd "$top" && printf '%s\n' "$files" | awk -v exempt="$EXEMPT" '
BEGIN {
	m = split(exempt, a, "\n")
	for (i = 1; i <= m; i++) {
		if (split(a[i], w, " ") < 2)
			continue
		nex++
		exfile[nex] = w[1]
		exre[nex] = w[2]
	}
	while ((getline f) > 0)
		check(f)
	for (i = 1; i <= nex; i++)
		if (!(i in used))
			print "stale " exfile[i] " " exre[i]
	print "count " ndefs
}
function prefix_of(f,    p, n, stem) {
	n = split(f, p, "/")
	stem = p[n]
	sub(/\.c$/, "", stem)
	gsub(/-/, "_", stem)
	if (p[1] == "lib" || p[1] == "plugins")
		return "ceems_" stem
	return stem
}
function exempted(f, name,    i) {
	for (i = 1; i <= nex; i++)
		if (exfile[i] == f && name ~ exre[i]) {
			used[i] = 1
			return 1
		}
	return 0
}
function check(f,    pre, line, prev, ln, name, r) {
	pre = prefix_of(f)
	prev = ""
	ln = 0
	while ((r = (getline line < f)) > 0) {
		ln++
		if (line ~ /^[A-Za-z_][A-Za-z0-9_]*\(/ &&
		    prev ~ /^[A-Za-z_]/ &&
		    prev !~ /^(typedef|extern)([ \t]|$)/ &&
		    prev !~ /[;{}=,)\\][ \t]*$/ &&
		    prev !~ /(^|[ \t)])static([ \t]|$)/) {
			name = line
			sub(/\(.*/, "", name)
			ndefs++
			if (name == pre || index(name, pre "_") == 1)
				;
			else if (exempted(f, name))
				print "exempt " f " " name
			else
				print "bad " f ":" ln ": " name " (wants " pre "_)"
		}
		prev = line
	}
	close(f)
	if (r < 0)
		print "bad " f " cannot be read"
}
')

bad=$(printf '%s\n' "$result" | sed -n 's/^bad //p')
exempted=$(printf '%s\n' "$result" | sed -n 's/^exempt //p')
stale=$(printf '%s\n' "$result" | sed -n 's/^stale //p')
ndefs=$(printf '%s\n' "$result" | sed -n 's/^count //p')

if [ -z "$bad" ]; then
	echo "ok 1 - ${ndefs:-0} functions with external linkage carry their file's prefix"
else
	echo "not ok 1 - $(printf '%s\n' "$bad" | grep -c .) of ${ndefs:-0} functions with external linkage lack their file's prefix (lib/L/X.c and plugins/X.c: ceems_X_; tools/P/X.c: X_)"
	printf '%s\n' "$bad" | sed 's/^/# /'
fi
if [ -n "$exempted" ]; then
	printf '%s\n' "$exempted" | sed 's/^/# exempt: /'
fi
if [ -z "$stale" ]; then
	echo "ok 2 - every exemption still names a function"
else
	echo "not ok 2 - exemptions that match no function: remove them from EXEMPT"
	printf '%s\n' "$stale" | sed 's/^/# /'
fi
exit 0
