#!/bin/sh
# Every DAT 1.2 header (include/dat/*.h) compiles on its own, first in a
# file, with gcc and clang as C89, C99 and C11 (-pedantic -Wall -Wextra
# -Werror and more), optimised and not, and as C++11; each is installed
# (listed in Makefile.am); and <dat/udat.h> refuses to follow
# <dat2/udat.h>.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
inc="$top_srcdir/include"
fail=0
for cc in gcc clang g++ clang++; do
	command -v "$cc" >/dev/null 2>&1 ||
		{ echo "SKIP: $cc not installed"; exit 77; }
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
warn="-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes
	-Wundef -Wcast-qual -Wconversion -Wsign-conversion -Wpointer-arith
	-Wredundant-decls"
cxxwarn="-Wall -Wextra -Werror -Wshadow -Wundef -Wconversion"

n=0
for h in "$inc"/dat/*.h; do
	name=dat/$(basename "$h")
	n=$((n + 1))
	# A declaration after the include: an empty file is not ISO C.
	printf '#include <%s>\ntypedef int dat12_header_test_t;\n' "$name" \
		>"$tmp/h.c"
	cp "$tmp/h.c" "$tmp/h.cc"
	ok=1
	for cc in gcc clang; do
		for std in c89 c99 c11; do
			for opt in -O0 -O2; do
				# shellcheck disable=SC2086
				"$cc" -std=$std -pedantic $opt $warn -I"$inc" \
					-c "$tmp/h.c" -o "$tmp/h.o" 2>"$tmp/err" || {
					echo "FAIL: $name: $cc -std=$std $opt"
					sed 's/^/  /' "$tmp/err" | head -20
					ok=0
				}
			done
		done
	done
	for cxx in g++ clang++; do
		# shellcheck disable=SC2086
		"$cxx" -std=c++11 -pedantic $cxxwarn -I"$inc" -c "$tmp/h.cc" \
			-o "$tmp/h.o" 2>"$tmp/err" || {
			echo "FAIL: $name: $cxx -std=c++11"
			sed 's/^/  /' "$tmp/err" | head -20
			ok=0
		}
	done
	if [ $ok -eq 1 ]; then
		echo "ok: $name on its own: gcc, clang (C89, C99, C11; -O0, -O2), g++, clang++ (C++11)"
	else
		fail=1
	fi
	if grep -q "include/$name" "$top_srcdir/Makefile.am"; then
		echo "ok: $name is installed (Makefile.am)"
	else
		echo "FAIL: $name is not in Makefile.am's dat12include_HEADERS"
		fail=1
	fi
done
[ "$n" -ge 8 ] || { echo "FAIL: only $n headers in $inc/dat"; fail=1; }

printf '#include <dat2/udat.h>\n#include <dat/udat.h>\n' >"$tmp/both.c"
if gcc -std=c99 -D_GNU_SOURCE -I"$inc" -fsyntax-only "$tmp/both.c" \
	2>"$tmp/err"; then
	echo "FAIL: <dat/udat.h> after <dat2/udat.h> compiles"; fail=1
elif grep -q 'exclude each other' "$tmp/err"; then
	echo "ok: <dat/udat.h> after <dat2/udat.h> stops with its #error"
else
	echo "FAIL: <dat/udat.h> after <dat2/udat.h>: not our #error"
	sed 's/^/  /' "$tmp/err" | head; fail=1
fi
exit $fail
