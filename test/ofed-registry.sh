#!/bin/sh
# OFED's own libdat2.so.2 (Debian's libdapl2, not ours) loads our provider
# from a dat.conf entry, and OFED's dtest passes over it on loopback.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
dtest=${DTEST:-/usr/bin/dtest}
ofed=/usr/lib/x86_64-linux-gnu/libdat2.so.2
prov="$top_builddir/.libs/libdaplofi.so.2"
if [ ! -x "$dtest" ] || [ ! -f "$ofed" ]; then
	echo "SKIP: OFED's dtest or libdat2 not installed (dapl2-utils, libdapl2)"
	exit 77
fi
[ -f "$prov" ] || { echo "FAIL: $prov not built"; exit 1; }
fail=0
tmp=$(mktemp -d) || exit 1
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
printf 'ofi-tcp-lo u2.0 nonthreadsafe default %s dapl.2.0 "tcp lo" ""\n' \
	"$prov" >"$tmp/dat.conf"
# No LD_LIBRARY_PATH: the dynamic linker gives dtest the system libdat2.
env -u LD_LIBRARY_PATH DAT_OVERRIDE="$tmp/dat.conf" LD_DEBUG=libs \
	LD_DEBUG_OUTPUT="$tmp/server.ld" timeout 120 "$dtest" -P ofi-tcp-lo \
	>"$tmp/server.out" 2>&1 &
server=$!
sleep 1
env -u LD_LIBRARY_PATH DAT_OVERRIDE="$tmp/dat.conf" LD_DEBUG=libs \
	LD_DEBUG_OUTPUT="$tmp/client.ld" timeout 120 "$dtest" -P ofi-tcp-lo \
	-h 127.0.0.1 >"$tmp/client.out" 2>&1
rc=$?
wait "$server"
src=$?
server=
sed 's/^/  client| /' "$tmp/client.out" | tail -5
sed 's/^/  server| /' "$tmp/server.out" | tail -3
for side in client server; do
	# /usr/lib or /lib (merged /usr): any libdat2 but the build tree's.
	if grep -hs "calling init: .*/libdat2.so.2" "$tmp/$side.ld".* |
	   grep -qv "$top_builddir"; then
		echo "ok: $side ran on OFED's libdat2 ($ofed)"
	else
		echo "FAIL: $side did not load OFED's libdat2"; fail=1
	fi
	if grep -qs "calling init: .*libdaplofi.so.2" "$tmp/$side.ld".*; then
		echo "ok: $side's libdat2 loaded our provider"
	else
		echo "FAIL: $side did not load $prov"; fail=1
	fi
	if grep -q "DAPL Test Complete. PASSED" "$tmp/$side.out"; then
		echo "ok: $side PASSED"
	else
		echo "FAIL: $side did not pass"; fail=1
	fi
done
[ "$rc" -eq 0 ] && [ "$src" -eq 0 ] || { echo "FAIL: exit $rc/$src"; fail=1; }
exit $fail
