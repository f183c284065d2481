#!/bin/sh
# libdat2.so.2 exports exactly the 74 DAT 2.0 symbols, each @@DAT_2.0, with
# SONAME libdat2.so.2 -- and the same list as OFED's libdat2 when installed.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
srcdir=${srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
lib="$top_builddir/.libs/libdat2.so.2"
list="$srcdir/test/dat2-symbols.txt"
fail=0

[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" = libdat2.so.2 ]; then
	echo "ok: SONAME $soname"
else
	echo "FAIL: SONAME is '$soname', want libdat2.so.2"; fail=1
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
nm -D --defined-only --with-symbol-versions "$lib" | awk '{print $3}' |
	sort >"$tmp/ours"
sed 's/$/@@DAT_2.0/' "$list" | sort >"$tmp/want"
# The version node itself is listed as a defined absolute symbol.
printf 'DAT_2.0@@DAT_2.0\nDAT_2.0\n' >"$tmp/node"
grep -vxF -f "$tmp/node" "$tmp/ours" >"$tmp/ours.syms"
n=$(wc -l <"$tmp/ours.syms")
if diff -u "$tmp/want" "$tmp/ours.syms"; then
	echo "ok: $n symbols exported, all @@DAT_2.0, none else"
else
	echo "FAIL: exported symbols differ from $list (diff above)"; fail=1
fi
[ "$(wc -l <"$list")" -eq 74 ] || { echo "FAIL: list is not 74 names"; fail=1; }

ofed=/usr/lib/x86_64-linux-gnu/libdat2.so.2
if [ -f "$ofed" ] && [ "$(readlink -f "$ofed")" != "$(readlink -f "$lib")" ]; then
	nm -D --defined-only --with-symbol-versions "$ofed" | awk '{print $3}' |
		grep -vxF -f "$tmp/node" | sort >"$tmp/ofed"
	if diff -u "$tmp/ofed" "$tmp/ours.syms"; then
		echo "ok: identical to OFED's export list ($ofed)"
	else
		echo "FAIL: export list differs from OFED's $ofed"; fail=1
	fi
else
	echo "note: OFED's libdat2 not installed; compared with the list only"
fi
exit $fail
