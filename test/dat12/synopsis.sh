#!/bin/sh
# The SYNOPSIS of each DAT 1.2 seed man page (test/dat12/synopsis/*.c,
# one per page), compiled as the pages say -- "#include <dat/udat.h>",
# "cc file -ldat" -- with gcc and clang, C89 and C99, -pedantic -Wall
# -Wextra -Werror. Each declares the page's prototype, so a difference
# from the header's is a compile error; then it runs and must reach our
# libdat2 (DAT_INVALID_HANDLE and libdat2's warning for a null handle).
# Prototypes that differ from the 1.2 ones (2.0's, or a wrong one) must
# not compile.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir/build}
libs="$top_builddir/.libs"
fail=0
check() {
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}
for cc in gcc clang; do
	command -v "$cc" >/dev/null 2>&1 ||
		{ echo "SKIP: $cc not installed"; exit 77; }
done
[ -f "$libs/libdat2.so" ] || { echo "FAIL: $libs/libdat2.so not built"; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# -ldat as an installed tree has it: libdat.so -> libdat2.so.
mkdir "$tmp/lib" && ln -s "$libs/libdat2.so" "$tmp/lib/libdat.so"
: >"$tmp/dat.conf"

pages=0
for src in "$top_srcdir"/test/dat12/synopsis/dat_*.c; do
	call=$(basename "$src" .c)
	pages=$((pages + 1))
	for cc in gcc clang; do
		for std in c89 c99; do
			bin="$tmp/$call.$cc.$std"
			check "$call: $cc -std=$std compiles and links with -ldat" \
				"$cc" -std=$std -pedantic -Wall -Wextra -Werror \
				-I"$top_srcdir/include" "$src" -L"$tmp/lib" -ldat \
				-Wl,-rpath,"$libs" -o "$bin"
			[ -x "$bin" ] || continue
			check "$call: $cc -std=$std needs libdat2.so.2" \
				sh -c "readelf -d '$bin' | grep -q 'NEEDED.*\[libdat2.so.2\]'"
			DAT_OVERRIDE="$tmp/dat.conf" "$bin" >"$tmp/out" 2>&1
			rc=$?
			check "$call: $cc -std=$std returns DAT_INVALID_HANDLE (rc $rc)" \
				test "$rc" -eq 0
			check "$call: $cc -std=$std reached libdat2" \
				grep -q "$call: NULL handle" "$tmp/out"
		done
	done
done
check "five seed synopses ($pages)" test "$pages" -eq 5

# Each of these must fail to compile against <dat/udat.h>.
refuse() { # description, then the text of a C file
	printf '#include <dat/udat.h>\n%s\nint main(void) { return 0; }\n' \
		"$2" >"$tmp/bad.c"
	for cc in gcc clang; do
		if "$cc" -std=c99 -fsyntax-only -I"$top_srcdir/include" \
			"$tmp/bad.c" 2>/dev/null; then
			echo "FAIL: $cc accepts $1"; fail=1
		else
			echo "ok: $cc refuses $1"
		fi
	done
}
refuse "2.0's dat_lmr_create (va_type)" \
	'DAT_RETURN dat_lmr_create(DAT_IA_HANDLE, DAT_MEM_TYPE, DAT_REGION_DESCRIPTION, DAT_VLEN, DAT_PZ_HANDLE, DAT_MEM_PRIV_FLAGS, int, DAT_LMR_HANDLE *, DAT_LMR_CONTEXT *, DAT_RMR_CONTEXT *, DAT_VLEN *, DAT_VADDR *);'
refuse "2.0's dat_cr_reject (private data)" \
	'DAT_RETURN dat_cr_reject(DAT_CR_HANDLE, DAT_COUNT, const DAT_PVOID);'
refuse "2.0's dat_rmr_bind (lmr_handle, va_type)" \
	'DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE, DAT_LMR_HANDLE, const DAT_LMR_TRIPLET *, DAT_MEM_PRIV_FLAGS, int, DAT_EP_HANDLE, DAT_RMR_COOKIE, DAT_COMPLETION_FLAGS, DAT_RMR_CONTEXT *);'
refuse "a dat_ep_connect without connect_flags" \
	'DAT_RETURN dat_ep_connect(DAT_EP_HANDLE, DAT_IA_ADDRESS_PTR, DAT_CONN_QUAL, DAT_TIMEOUT, DAT_COUNT, const DAT_PVOID, DAT_QOS);'
refuse "a dat_ep_create with const attributes" \
	'DAT_RETURN dat_ep_create(DAT_IA_HANDLE, DAT_PZ_HANDLE, DAT_EVD_HANDLE, DAT_EVD_HANDLE, DAT_EVD_HANDLE, const DAT_EP_ATTR *, DAT_EP_HANDLE *);'
refuse "2.0's RMR triplet member virtual_address" \
	'int f(DAT_RMR_TRIPLET *t) { return t->virtual_address != 0; }'
refuse "2.0's DAT_SEG_LENGTH" 'DAT_SEG_LENGTH len;'
refuse "2.0's DAT_VA_TYPE" 'int va = DAT_VA_TYPE_VA;'
refuse "<dat2/udat.h> in the same file" '#include <dat2/udat.h>'
exit $fail
