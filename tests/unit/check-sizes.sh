#!/bin/sh
# check-sizes.sh - small files with one job, short functions: no source
# file of the product (lib/, plugins/, tools/, bpf/, sql/, every folder
# under them) may be over 900 lines, and no C function over 120 lines.
# Each excess is a failure naming the file, the function and its length.
# TAP on stdout; `make check` runs it.
#
# The files are found by walking the folders (no git), so the check runs
# alike in a git checkout and in the distcheck tarball.  Source files are
# those of the kinds the product is written in (C, SQL, shell, the
# linker script, templates); data such as the carbon intensity table is
# not code and may be long, nor are the headers a build in the source
# tree generates (bpf/vmlinux.h, the eBPF skeleton *.skel.h).
#
# Function lengths come from the house style, which every C file here
# follows: a function's body opens with "{" alone at column 0 and closes
# with "}" at column 0; its name is the identifier before the first "("
# on the last line before the body that starts at column 0 (the line
# after the return type).  A function's length runs from that line to
# the closing brace: its parameters and its body.  A column-0 "{" anywhere else (none today) would be counted
# as a function too, and its excess reported under the nearest name: the
# check errs towards reporting.
set -u

top=${CEEMS_TOP_SRCDIR:-.}
max_file_lines=${CEEMS_MAX_FILE_LINES:-900}
max_function_lines=${CEEMS_MAX_FUNCTION_LINES:-120}

list_files() {
	(cd "$top" && for d in lib plugins tools bpf sql; do
		[ -d "$d" ] && find "$d" -type f \( -name '*.c' -o -name '*.h' \
		    -o -name '*.sql' -o -name '*.sh' -o -name '*.in' \
		    -o -name '*.lds' -o -name '*.awk' -o -name '*.py' \) \
		    ! -name '*.skel.h' ! -name vmlinux.h
	done) | LC_ALL=C sort
}

files=$(list_files)
nfiles=$(printf '%s\n' "$files" | grep -c .)
cfiles=$(printf '%s\n' "$files" | grep -E '\.[ch]$')

long_files=$(cd "$top" && printf '%s\n' "$files" | while IFS= read -r f; do
	[ -n "$f" ] || continue
	n=$(wc -l < "$f")
	[ "$n" -gt "$max_file_lines" ] && echo "$f: $n lines"
done)

# One line per function: "file function lines".
functions=$(cd "$top" && printf '%s\n' "$cfiles" | while IFS= read -r f; do
	[ -n "$f" ] || continue
	awk -v file="$f" '
	function name_of(line,    s) {
		s = line
		sub(/\(.*/, "", s)
		sub(/.*[^A-Za-z0-9_]/, "", s)
		return s
	}
	depth == 0 && /^[A-Za-z_]/ && /\(/ {
		s = name_of($0)
		if (s != "" && s != "__attribute__" && s != "SEC") {
			name = s
			name_line = NR
		}
	}
	depth == 0 && /^\{/ {
		depth = 1
		start = name == "" ? NR : name_line
		next
	}
	depth == 1 && /^\}/ {
		print file, (name == "" ? "?" : name), NR - start + 1
		depth = 0
		name = ""
	}' "$f"
done)
nfunctions=$(printf '%s\n' "$functions" | grep -c .)
long_functions=$(printf '%s\n' "$functions" |
    awk -v max="$max_function_lines" '$3 > max {
	print $1 ": " $2 "(): " $3 " lines"
    }')

echo "1..3"
if [ "$nfiles" -gt 0 ] && printf '%s\n' "$files" | grep -q '^lib/' &&
    [ "$nfunctions" -gt 0 ]; then
	echo "ok 1 - $nfiles source files, $nfunctions C functions found under $top"
else
	echo "not ok 1 - $nfiles source files, $nfunctions C functions found under $top"
fi
if [ -z "$long_files" ]; then
	echo "ok 2 - no source file is over $max_file_lines lines"
else
	echo "not ok 2 - $(printf '%s\n' "$long_files" | grep -c .) source files are over $max_file_lines lines: split them along a seam"
	printf '%s\n' "$long_files" | sed 's/^/# /'
fi
if [ -z "$long_functions" ]; then
	echo "ok 3 - no C function is over $max_function_lines lines"
else
	echo "not ok 3 - $(printf '%s\n' "$long_functions" | grep -c .) C functions are over $max_function_lines lines: split them into steps"
	printf '%s\n' "$long_functions" | sed 's/^/# /'
fi
exit 0
