#!/bin/sh
# dat_info lists file and built-in IA names with their source, marks
# shadowed entries, and says plainly when a provider library is missing.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
info="$top_builddir/dat_info"
fail=0
check() { # description, then a command that must succeed
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/dat.conf" <<'CONF'
# test registry
mine u2.0 nonthreadsafe nondefault libdat-missing-provider.so.2 dapl.2.0 "tcp lo" ""
ofi-tcp u2.0 threadsafe default libdat-missing-provider.so.2 dapl.2.0 "tcp" ""
bad u2.0 nonthreadsafe
CONF

"$info" -f "$tmp/dat.conf" >"$tmp/out" 2>"$tmp/err"
check "list exits 0" test $? -eq 0
check "names the file read" grep -q "^# dat.conf: $tmp/dat.conf" "$tmp/out"
check "file entry with file:line and flags" \
	grep -Eq "^mine +$tmp/dat.conf:2 +libdat-missing-provider.so.2 +u2.0 +nonthreadsafe +nondefault +\"tcp lo\"" "$tmp/out"
check "every built-in listed" sh -c "for n in ofi ofi-tcp ofi-sockets ofi-verbs ofi-efa ofi-shm ofi-rxm ofi-rxd; do grep -Eq \"^\$n +built-in\" '$tmp/out' || exit 1; done"
check "built-in ofi-tcp shown shadowed by the file's" \
	grep -Eq '^ofi-tcp +built-in .*\(shadowed\)' "$tmp/out"
check "malformed line warned with file, line, field" \
	grep -q "$tmp/dat.conf:4: field 4 (default) is missing" "$tmp/err"
check "malformed entry not listed" sh -c "! grep -q '^bad ' '$tmp/out'"

# Through DAT_OVERRIDE as well as -f.
DAT_OVERRIDE="$tmp/dat.conf" "$info" >"$tmp/out2" 2>/dev/null
check "DAT_OVERRIDE is read" grep -q "^mine " "$tmp/out2"

"$info" -v mine -f "$tmp/dat.conf" >"$tmp/vout" 2>"$tmp/verr"
rc=$?
check "-v on a missing provider exits 1" test $rc -eq 1
check "-v says the provider library cannot be loaded, with dlopen's error" \
	grep -q "IA 'mine' ($tmp/dat.conf:2): cannot load provider library: libdat-missing-provider.so.2: cannot open shared object file" "$tmp/verr"
check "-v reports DAT_PROVIDER_NOT_FOUND" \
	grep -q "cannot open IA 'mine': DAT_PROVIDER_NOT_FOUND" "$tmp/verr"

"$info" -v nosuch -f "$tmp/dat.conf" >/dev/null 2>"$tmp/nerr"
check "-v on an unknown name lists the known names" \
	grep -q "IA name 'nosuch' not found .*known names: mine, ofi-tcp, ofi, ofi-sockets" "$tmp/nerr"

"$info" -x >/dev/null 2>&1
check "usage error exits 2" test $? -eq 2
"$info" -h | grep -q "Usage: dat_info"
check "-h prints usage" test $? -eq 0
exit $fail
