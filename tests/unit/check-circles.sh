#!/bin/sh
# check-circles.sh - no circle between the files of a folder: within each
# folder of the product (lib/LAYER, plugins, plugins/acct_gather_energy,
# tools/PROG), a file that calls a function of another file of the
# folder depends on it, and no file may depend, through any chain, on a
# file that depends on it.  A piece two files share goes into a small
# file of its own, below both (lib/base/conf_value.c,
# lib/agent/agent_state_checksum.c, lib/sources/bmc_link.c,
# tools/admin/admin_sql.c, tools/agent/agent_server_watch.c).
#
# Which file a call goes to comes from the name alone: a function with
# external linkage carries its file's prefix (check-prefixes.sh holds
# this): ceems_X_* in lib/LAYER/X.c and plugins/X.c, X_* in
# tools/PROG/X.c; the longest file name of the folder that prefixes the
# call wins (ceems_agent_state_check_* is agent_state_check.c's, not
# agent_state.c's).  Calls are names followed by "(", outside comments
# and string literals.
#
# The circles in ALLOWED below exist today and are tolerated, each with
# its reason; the list may only shrink: a circle found that is not
# listed exactly (the same files), or a listed one no longer found,
# fails, so that the entry is updated with the code.
#
# The files are found by walking the folders (no git: the check runs in
# the distribution tarball too).  TAP on stdout; `make check` runs it.
set -u

top=${CEEMS_TOP_SRCDIR:-.}

# FOLDER: FILE FILE ...  reason (the stems of the files, sorted).
ALLOWED='
lib/agent: agent agent_adopt agent_extern agent_finish agent_marks agent_open agent_tick agent_tick_series  the engine (agent.c) and its parts, which call back its job lookup and reports
tools/agent: agent_mark agent_server_clients agent_server_dispatch  a request is read, dispatched and answered through the client it came on
'

folders=$(cd "$top" && for d in lib plugins tools; do
	[ -d "$d" ] && find "$d" -type f -name '*.c' -exec dirname {} \;
done | LC_ALL=C sort -u)

echo "1..2"
if [ -z "$folders" ]; then
	echo "not ok 1 - no C file under $top/lib, plugins or tools"
	echo "not ok 2 - # SKIP no source file"
	exit 0
fi

# Output lines: "circle FOLDER: A B C" for each circle found (its files
# sorted), "edges N" once.
found=$(cd "$top" && for d in $folders; do
	set -- "$d"/*.c
	[ $# -ge 2 ] || continue
	awk -v folder="$d" '
	FNR == 1 {
		f = FILENAME
		sub(/.*\//, "", f)
		sub(/\.c$/, "", f)
		n++
		stem[n] = f
		idx[f] = n
		incomment = 0
	}
	{
		line = $0
		# comments (possibly across lines), then string and
		# character literals
		out = ""
		while (line != "") {
			if (incomment) {
				p = index(line, "*/")
				if (p == 0) { line = ""; break }
				line = substr(line, p + 2)
				incomment = 0
				continue
			}
			p = index(line, "/*")
			q = index(line, "//")
			if (q > 0 && (p == 0 || q < p)) {
				out = out substr(line, 1, q - 1)
				line = ""
				break
			}
			if (p == 0) { out = out line; line = ""; break }
			out = out substr(line, 1, p - 1) " "
			line = substr(line, p + 2)
			incomment = 1
		}
		gsub(/"([^"\\]|\\.)*"/, "\"\"", out)
		gsub(/\047([^\047\\]|\\.)*\047/, "0", out)
		text[n] = text[n] " " out
	}
	END {
		pre = folder ~ /^tools\// ? "" : "ceems_"
		for (i = 1; i <= n; i++) {
			t = text[i]
			while (match(t, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {
				name = substr(t, RSTART, RLENGTH)
				t = substr(t, RSTART + RLENGTH)
				sub(/[ \t]*\($/, "", name)
				if (substr(name, 1, length(pre)) != pre)
					continue
				rest = substr(name, length(pre) + 1)
				best = 0
				for (j = 1; j <= n; j++)
					if (index(rest "_", stem[j] "_") == 1 &&
					    (best == 0 || length(stem[j]) > length(stem[best])))
						best = j
				if (best != 0 && best != i && !((i, best) in reach)) {
					reach[i, best] = 1
					edges++
				}
			}
		}
		# which file reaches which, through any chain
		for (k = 1; k <= n; k++)
			for (i = 1; i <= n; i++)
				if ((i, k) in reach)
					for (j = 1; j <= n; j++)
						if ((k, j) in reach)
							reach[i, j] = 1
		for (i = 1; i <= n; i++) {
			if (done[i] || !((i, i) in reach))
				continue
			m = 0
			for (j = 1; j <= n; j++)
				if (j == i || (((i, j) in reach) && ((j, i) in reach))) {
					done[j] = 1
					m++
					member[m] = stem[j]
				}
			# sorted, for a stable line
			for (a = 2; a <= m; a++)
				for (b = a; b > 1 && member[b - 1] > member[b]; b--) {
					x = member[b]; member[b] = member[b - 1]; member[b - 1] = x
				}
			s = "circle " folder ":"
			for (a = 1; a <= m; a++)
				s = s " " member[a]
			print s
		}
		print "edges " edges + 0
	}' "$@"
done)

nedges=$(printf '%s\n' "$found" | awk '$1 == "edges" { s += $2 } END { print s + 0 }')
circles=$(printf '%s\n' "$found" | sed -n 's/^circle //p')
# The allowed lines' files end at the reason, set off by two spaces.
allowed=$(printf '%s\n' "$ALLOWED" | sed -n 's/^\([^ ]*:\( [a-z0-9_]*\)*\)  .*/\1/p')

new=$(printf '%s\n' "$circles" | grep -v '^$' | while IFS= read -r c; do
	printf '%s\n' "$allowed" | grep -qxF "$c" || printf '%s\n' "$c"
done)
stale=$(printf '%s\n' "$allowed" | grep -v '^$' | while IFS= read -r a; do
	printf '%s\n' "$circles" | grep -qxF "$a" || printf '%s\n' "$a"
done)

if [ -z "$new" ]; then
	echo "ok 1 - no circle between the files of a folder but the allowed ($nedges calls between files followed)"
else
	echo "not ok 1 - files of a folder that depend on one another (move what they share into a file of its own)"
	printf '%s\n' "$new" | sed 's/^/#   /'
fi
if [ -z "$stale" ]; then
	echo "ok 2 - every allowed circle is still there, file for file"
else
	echo "not ok 2 - allowed circles no longer found as listed (update ALLOWED)"
	printf '%s\n' "$stale" | sed 's/^/#   /'
fi
