#!/bin/sh
# OFED's dtest (Debian's dapl2-utils), unmodified, against our libdat2 with
# an IA name whose provider library is absent: it must fail cleanly with
# DAT_PROVIDER_NOT_FOUND and our warning saying why -- and it must have
# loaded our libdat2, not OFED's.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
dtest=${DTEST:-/usr/bin/dtest}
if [ ! -x "$dtest" ]; then
	echo "SKIP: $dtest not installed (Debian package dapl2-utils)"
	exit 77
fi
fail=0
check() {
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' 'ofi-missing u2.0 nonthreadsafe default libdaplofi-missing.so.2 dapl.2.0 "tcp lo" ""' >"$tmp/dat.conf"
libs="$top_builddir/.libs"

# Which libdat2 will the dynamic linker give dtest?
LD_LIBRARY_PATH="$libs" ldd "$dtest" >"$tmp/ldd"
check "dtest resolves libdat2.so.2 to ours" \
	grep -q "libdat2.so.2 => $libs/libdat2.so.2" "$tmp/ldd"

for name in ofi-missing no-such-ia; do
	DAT_OVERRIDE="$tmp/dat.conf" LD_LIBRARY_PATH="$libs" \
		LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/lddebug" \
		timeout 60 "$dtest" -P "$name" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/out" "$tmp/err" | sed "s/^/  $name| /"
	check "$name: dtest exits without hanging (rc $rc)" test $rc -ne 124
	check "$name: dtest did not crash (rc $rc)" test $rc -lt 128
	check "$name: dtest reports DAT_PROVIDER_NOT_FOUND" \
		grep -q "DAT_PROVIDER_NOT_FOUND" "$tmp/out" "$tmp/err"
	check "$name: dtest ran on our libdat2" \
		grep -qs "calling init: $libs/libdat2.so.2" "$tmp"/lddebug.*
	rm -f "$tmp"/lddebug.*
done
check "the warning names the entry and dlopen's error" \
	sh -c "DAT_OVERRIDE='$tmp/dat.conf' LD_LIBRARY_PATH='$libs' timeout 60 '$dtest' -P ofi-missing 2>&1 | grep -q \"IA 'ofi-missing' ($tmp/dat.conf:1): cannot load provider library: libdaplofi-missing.so.2: cannot open shared object file\""
check "an unknown name lists the names that exist" \
	sh -c "DAT_OVERRIDE='$tmp/dat.conf' LD_LIBRARY_PATH='$libs' timeout 60 '$dtest' -P no-such-ia 2>&1 | grep -q \"IA name 'no-such-ia' not found .*known names: ofi-missing, ofi, ofi-tcp\""
exit $fail
