#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
#
# layout-probe.sh -- check that our public DAT 2.0 headers (include/dat2/*.h)
# are ABI-identical with OFED dapl-2.1.10's (Debian libdapl-dev,
# /usr/include/dat2/*.h).
#
# usage: test/abi/layout-probe.sh [OURS_INCDIR [THEIRS_INCDIR]]
#
#   OURS_INCDIR    directory holding our dat2/ (default: $DAT_ABI_OURS, else
#                  <top srcdir>/include, found from $srcdir or this script)
#   THEIRS_INCDIR  directory holding the reference dat2/ (default:
#                  $DAT_ABI_THEIRS, else /usr/include)
#
# environment: CC (default cc), CLANG (default clang), PYTHON (default
# python3), LAYOUT_PROBE_KEEP=1 keeps the temporary directory.
#
# How it works (abi-probe.py does the C work):
#  1. `abi-probe.py gen` parses both header sets with clang (JSON AST, and
#     `clang -E -dD` for macros), takes the UNION of the names, and generates
#     one probe program printing, one line each:
#       sizeof/alignof <typedef | struct tag | union tag | enum tag>
#       offsetof/sizeof <type>.<field.path>   (recursing into nested and
#                                              anonymous structs/unions)
#       enum <ENUMERATOR> = value (type)
#       macro <NAME> = value (type)   str <NAME> = "..."   addr <NAME> = value
#       defined <NAME> = yes          (function-like and other macros)
#     plus, from each set's clang AST, the canonical C type of every typedef,
#     field, function and variable (`ctype`, `func`, `var` lines; typedefs
#     resolved, so e.g. DAT_PROVIDER's 79 function-pointer prototypes are
#     compared parameter by parameter).
#  2. `abi-probe.py build` compiles the probe with `$CC -std=gnu11` against
#     each set; a fact that does not compile against a set (name missing or
#     of another kind there) prints `<fact> = MISSING` instead.
#  3. Both outputs are sorted and diffed; `$CC -M` checks that every dat2
#     header each build used came from the intended directory.
#
# Exit: 0 identical; 1 differences (or a build used headers from the wrong
# directory, or too few facts); 77 (SKIP) when the reference headers are not
# installed; 99 when a required tool is missing.

set -u

LC_ALL=C
export LC_ALL

me=layout-probe
script_dir=$(cd "$(dirname "$0")" && pwd)
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/abi/abi-probe.py" ]; then
	top_srcdir=$(cd "$srcdir" && pwd)
else
	top_srcdir=$(cd "$script_dir/../.." && pwd)
fi
probe_py=$script_dir/abi-probe.py

ours=${1:-${DAT_ABI_OURS:-$top_srcdir/include}}
theirs=${2:-${DAT_ABI_THEIRS:-/usr/include}}
CC=${CC:-cc}
CLANG=${CLANG:-clang}
PYTHON=${PYTHON:-python3}
MIN_FACTS=300
# the headers OFED installs; all of them are reached from the probe's includes
EXPECTED="dat.h dat_error.h dat_ib_extensions.h dat_platform_specific.h
dat_redirection.h dat_registry.h dat_vendor_specific.h udat.h udat_config.h
udat_redirection.h udat_vendor_specific.h"

if [ ! -f "$theirs/dat2/dat.h" ]; then
	echo "$me: SKIP: reference headers $theirs/dat2/dat.h not found" >&2
	echo "$me: SKIP: install Debian's libdapl-dev (OFED dapl-2.1.10) to run the ABI layout comparison" >&2
	echo "SKIP: $me: $theirs/dat2/dat.h absent, ABI NOT CHECKED"
	exit 77
fi
if [ ! -d "$ours/dat2" ]; then
	echo "$me: FAIL: our headers $ours/dat2 not found" >&2
	exit 1
fi
for tool in "$PYTHON" "$CLANG" "${CC%% *}"; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "$me: ERROR: required tool '$tool' not found (apt-get install clang python3)" >&2
		exit 99
	fi
done

ours=$(cd "$ours" && pwd)
theirs=$(cd "$theirs" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/layout-probe.XXXXXX") || exit 99
# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
	if [ "${LAYOUT_PROBE_KEEP:-0}" = 1 ]; then
		echo "$me: kept temporaries in $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 99' HUP INT PIPE TERM

echo "$me: ours   = $ours/dat2"
echo "$me: theirs = $theirs/dat2"

# -I for a header set; none for the compiler's own /usr/include
incflags() {
	if [ "$1" = /usr/include ]; then
		echo ""
	else
		echo "-I$1"
	fi
}

if ! "$PYTHON" "$probe_py" gen --side "ours=$ours" --side "theirs=$theirs" \
	--workdir "$tmp" --cc "$CC" --clang "$CLANG"; then
	echo "$me: FAIL: generating the probe failed (see the abi-probe messages above)" >&2
	exit 1
fi

status=0
for side in ours theirs; do
	case $side in
	ours) dir=$ours ;;
	*) dir=$theirs ;;
	esac
	if ! "$PYTHON" "$probe_py" build --facts "$tmp/facts.json" \
		--incdir "$dir" --out "$tmp/probe-$side" --cc "$CC"; then
		echo "$me: FAIL: the probe does not compile against $side headers ($dir/dat2)" >&2
		exit 1
	fi
	if ! "$tmp/probe-$side" >"$tmp/probe-$side.out"; then
		echo "$me: FAIL: probe-$side crashed" >&2
		exit 1
	fi
	cat "$tmp/probe-$side.out" "$tmp/types-$side.txt" | sort >"$tmp/$side.facts"

	# which dat2 headers did this build really use?
	# shellcheck disable=SC2046
	if ! $CC -std=gnu11 -w $(incflags "$dir") -M "$tmp/probe-$side.c" \
		>"$tmp/deps-$side" 2>"$tmp/deps-$side.err"; then
		echo "$me: FAIL: $CC -M failed for $side:" >&2
		cat "$tmp/deps-$side.err" >&2
		exit 1
	fi
	# one dependency per line: split on blanks and line continuations
	sed 's/\\$//' "$tmp/deps-$side" | tr ' ' '\n' | grep '/dat2/[^/]*\.h$' |
		sort -u >"$tmp/dat2-$side"
	wrong=
	used=
	nused=0
	while read -r h; do
		hdir=$(cd "$(dirname "$h")" && pwd -P)
		if [ "$hdir" != "$(cd "$dir/dat2" && pwd -P)" ]; then
			wrong="$wrong $h"
		else
			used="$used $(basename "$h")"
			nused=$((nused + 1))
		fi
	done <"$tmp/dat2-$side"
	echo "$me: $side build used $nused dat2 headers from $dir/dat2:$used"
	if [ -n "$wrong" ]; then
		echo "$me: FAIL: the $side build took these dat2 headers from the WRONG directory (not $dir/dat2):" >&2
		for h in $wrong; do echo "    $h" >&2; done
		if [ "$side" = ours ]; then
			echo "$me: FAIL: our header set is incomplete: add them to $dir/dat2" >&2
		fi
		status=1
	fi
	notused=
	for h in $EXPECTED; do
		case " $used " in
		*" $h "*) ;;
		*) notused="$notused $h" ;;
		esac
	done
	if [ -n "$notused" ]; then
		echo "$me: note: $side build did not use its own:$notused"
	fi
	nmiss=$(grep -c ' = MISSING$' "$tmp/$side.facts")
	echo "$me: $side: $(wc -l <"$tmp/$side.facts") facts, $nmiss MISSING (do not compile against $side)"
done

nours=$(wc -l <"$tmp/ours.facts")
ntheirs=$(wc -l <"$tmp/theirs.facts")
if [ "$nours" -lt "$MIN_FACTS" ] || [ "$ntheirs" -lt "$MIN_FACTS" ]; then
	echo "$me: FAIL: the probe covered too little ($ntheirs/$nours facts, want >= $MIN_FACTS): broken generator?" >&2
	status=1
fi

diff -u --label "theirs ($theirs/dat2)" --label "ours ($ours/dat2)" \
	"$tmp/theirs.facts" "$tmp/ours.facts" >"$tmp/diff"
ndiff=$(grep -c '^[-+][^-+]' "$tmp/diff")
nfacts=$(cut -d= -f1 "$tmp/theirs.facts" "$tmp/ours.facts" | sort -u | wc -l)
nbad=$(grep '^[-+][^-+]' "$tmp/diff" | cut -c2- | cut -d= -f1 | sort -u | wc -l)

if [ "$ndiff" -ne 0 ]; then
	cat "$tmp/diff"
	echo "$me: $ndiff differing lines (- theirs, + ours)"
	status=1
fi
echo "$nfacts layout facts compared, $nbad differences"
if [ "$status" -eq 0 ]; then
	echo "$me: PASS: our dat2 headers are ABI-identical with $theirs/dat2"
else
	echo "$me: FAIL"
fi
exit $status
