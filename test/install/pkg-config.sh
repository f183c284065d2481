#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# pkg-config.sh DESTDIR PREFIX LIBDIR DAT_CONF: the pkg-config files of a
# `make install DESTDIR=DESTDIR` tree (configured with PREFIX and LIBDIR)
# give what a consumer needs, and an OFED dtest-style program
# (pc_dtest.c) built with nothing but
#     cc pc_dtest.c $(pkg-config --cflags --libs dat2)
# compiles against the installed <dat2/udat.h> (not Debian's libdapl-dev
# in /usr/include), links the installed libdat2.so.2 and runs: ia_open,
# PZ, EVDs, EP create, query and free, ia_close on ofi-tcp through
# DAT_CONF (DAT_OVERRIDE).  dat.pc gives -ldat and the same include
# directory.  PKG_CONFIG_SYSROOT_DIR points pkg-config into DESTDIR, as it
# would into a cross sysroot.  Prints "ok: ..." or "FAIL: ..." lines;
# exit status 0 when every check passed.  Opens no port.
set -u

dest=${1:?usage: $0 DESTDIR PREFIX LIBDIR DAT_CONF}
prefix=${2:?}
libdir=${3:?}
conf=${4:?}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pkg-config.XXXXXX") || exit 2
trap 'rm -rf "$work"' EXIT
bad=0

ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; bad=1; }

# Exactly the flags, seen through the sysroot.
export PKG_CONFIG_PATH="$dest$libdir/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_LIBDIR="$dest$libdir/pkgconfig"
want_cflags="-I$dest$prefix/include"
for pc in dat2 dat; do
	lib=-l$pc
	if [ ! -f "$dest$libdir/pkgconfig/$pc.pc" ]; then
		fail "$pc.pc is not installed in $libdir/pkgconfig"
		continue
	fi
	# pkgconf ends its output with a blank: xargs trims it.
	cflags=$(pkg-config --cflags "$pc" | xargs)
	libs=$(pkg-config --libs "$pc" | xargs)
	version=$(pkg-config --modversion "$pc")
	echo "$pc.pc: version $version; cflags '$cflags'; libs '$libs'"
	[ "$cflags" = "$want_cflags" ] ||
		fail "pkg-config --cflags $pc: '$cflags', want '$want_cflags'"
	case " $libs " in
	*" $lib "*) ;;
	*) fail "pkg-config --libs $pc: '$libs' has no $lib" ;;
	esac
	case "$libs" in
	-L"$dest$libdir"* | *" -L$dest$libdir"*) ;;
	*) fail "pkg-config --libs $pc: '$libs' does not name $dest$libdir" ;;
	esac
	[ -n "$version" ] || fail "pkg-config --modversion $pc is empty"
done

# The dtest-style program, as a consumer builds it.
# shellcheck disable=SC2046 # pkg-config's words are separate flags
if cc -Wall -Wextra -Werror -o "$work/pc_dtest" "$here/pc_dtest.c" \
	$(pkg-config --cflags --libs dat2); then
	ok "cc pc_dtest.c \$(pkg-config --cflags --libs dat2)"
else
	fail "pc_dtest.c does not build with pkg-config dat2"
fi
# The header it compiled is the installed one.
# shellcheck disable=SC2046
hdr=$(cc -M $(pkg-config --cflags dat2) "$here/pc_dtest.c" |
	tr ' \\' '\n\n' | grep '/dat2/udat\.h$')
if [ "$hdr" = "$dest$prefix/include/dat2/udat.h" ]; then
	ok "<dat2/udat.h> is $hdr"
else
	fail "<dat2/udat.h> resolved to '$hdr', not the installed one"
fi
if [ -x "$work/pc_dtest" ]; then
	if readelf -d "$work/pc_dtest" | grep -q 'NEEDED.*\[libdat2\.so\.2\]'; then
		ok "pc_dtest needs libdat2.so.2"
	else
		fail "pc_dtest does not need libdat2.so.2"
	fi
	resolved=$(LD_LIBRARY_PATH="$dest$libdir" ldd "$work/pc_dtest" |
		awk '$1 == "libdat2.so.2" { print $3 }')
	if [ "$resolved" = "$dest$libdir/libdat2.so.2" ]; then
		ok "libdat2.so.2 resolves to $resolved"
	else
		fail "libdat2.so.2 resolves to '$resolved'"
	fi
	if DAT_OVERRIDE="$conf" LD_LIBRARY_PATH="$dest$libdir" \
		timeout 60 "$work/pc_dtest" -P ofi-tcp; then
		ok "pc_dtest ran on ofi-tcp"
	else
		fail "pc_dtest on ofi-tcp"
	fi
fi

# dat.pc: its flags build and link a consumer on libdat2.so.2 too.
printf '#include <dat2/udat.h>\nint main(void)\n{\n\tconst char *a, *b;\n\treturn dat_strerror(DAT_SUCCESS, &a, &b) != DAT_SUCCESS;\n}\n' \
	>"$work/ldat.c"
# shellcheck disable=SC2046
if cc -o "$work/ldat" "$work/ldat.c" $(pkg-config --cflags --libs dat) &&
	LD_LIBRARY_PATH="$dest$libdir" "$work/ldat" &&
	readelf -d "$work/ldat" | grep -q 'NEEDED.*\[libdat2\.so\.2\]'; then
	ok "pkg-config --libs dat links libdat2.so.2"
else
	fail "pkg-config --libs dat does not link libdat2.so.2"
fi
exit $bad
