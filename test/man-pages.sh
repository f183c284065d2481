#!/bin/sh
# Every exported DAT call has its own man page in the seed pages' structure,
# and every page renders without a groff warning.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
man="$srcdir/man"
fail=0
if ! command -v groff >/dev/null 2>&1; then
	echo "SKIP: groff not installed (Debian package groff-base)"
	exit 77
fi
pages=0
while read -r fn; do
	p="$man/man3/$fn.3"
	if [ ! -f "$p" ]; then
		echo "FAIL: no page for $fn"; fail=1; continue
	fi
	# dat_ia_openv.3 is a .so link to dat_ia_open.3.
	if grep -q '^\.so ' "$p"; then
		p="$man/$(sed -n 's/^\.so //p' "$p")"
	fi
	for s in NAME SYNOPSIS PARAMETERS DESCRIPTION "RETURN VALUES" USAGE "SEE ALSO"; do
		grep -q "^\.SH \"\{0,1\}$s\"\{0,1\}\$" "$p" ||
			{ echo "FAIL: $fn: no $s section"; fail=1; }
	done
	pages=$((pages + 1))
done <"$srcdir/test/dat2-symbols.txt"
for p in "$man"/man*/*.[1-9]; do
	# From man/, so a ".so man3/x.3" link resolves as man(1) would.
	out=$(cd "$man" && groff -man -ww -z "$p" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: $p renders with warnings:"; echo "$out"; fail=1
	fi
done
for p in man5/dat.conf.5 man1/dat_info.1 man7/dapl-ofi.7; do
	[ -f "$man/$p" ] || { echo "FAIL: missing $p"; fail=1; }
done
echo "$pages exported calls checked, $(ls "$man"/man*/*.[1-9] | wc -l) pages rendered"
exit $fail
