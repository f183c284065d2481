#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# deb.sh TARBALL WORKDIR: the Debian packages of a make dist TARBALL.
#   1. dpkg-buildpackage -us -uc -b in WORKDIR/<tree> (the .debs land in
#      WORKDIR; nothing is written beside the caller's trees), with
#      DEB_BUILD_OPTIONS nocheck (the tests run elsewhere in CI);
#   2. lintian on the .changes: no error (warnings are printed);
#   3. the packages install beside the host's libfabric1: they depend on
#      it, and a file they share with a host package belongs to one that
#      the package sharing it Replaces (libdapl2, libdapl-dev,
#      dapl2-utils; README.Debian);
#   4. dpkg --root installs all of them into the empty WORKDIR/root (the
#      host's own dpkg database and /usr are not touched: CI keeps
#      Debian's libdapl2 there as the reference);
#   5. from WORKDIR/root: dat_info lists and opens ofi-tcp, the installed
#      runfabtests-dat.sh runs dat_ia and dat_msg, and OFED's /usr/bin/dtest
#      (dapl2-utils) runs server and client on 127.0.0.1 with
#      LD_LIBRARY_PATH at the root's library directory, so that it loads
#      the packaged libdat2.so.2, and DAT_OVERRIDE at a dat.conf naming the
#      packaged provider by its path in the root.
# Steps 5's programs open ports on 127.0.0.1: run this in a network
# namespace of its own on a shared machine.  Prints "ok: ..." and "FAIL:
# ..." lines; exit status 0 when every check passed.
set -u

tarball=${1:?usage: $0 TARBALL WORKDIR}
work=${2:?usage: $0 TARBALL WORKDIR}
tarball=$(cd "$(dirname "$tarball")" && pwd)/$(basename "$tarball")
bad=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; bad=1; }

rm -rf "$work"
mkdir -p "$work" || exit 2
work=$(cd "$work" && pwd)
tar -xzf "$tarball" -C "$work" || exit 2
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)

# ---- 1. build ------------------------------------------------------------------------
jobs=$(nproc 2>/dev/null || echo 2)
t0=$SECONDS
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$jobs" \
	dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc -b ($((SECONDS - t0)) s)"
else
	tail -n 40 "$work/build.log"
	echo "FAIL: dpkg-buildpackage (log: $work/build.log)"
	exit 1
fi
changes=$(ls "$work"/*.changes)
debs=()
for p in libdapl-ofi2 libdapl-ofi-dev dapl-ofi-utils fabtests-dat; do
	d=$(ls "$work/${p}_"*.deb 2>/dev/null)
	if [ -z "$d" ]; then
		fail "no $p package"
	else
		debs+=("$d")
	fi
done
[ "$bad" -eq 0 ] || exit 1

# ---- 2. lintian ----------------------------------------------------------------------
if lintian --fail-on error "$changes" >"$work/lintian.out" 2>&1; then
	ok "lintian: no error ($(grep -c '^W: ' "$work/lintian.out") warnings)"
else
	fail "lintian reports errors"
fi
sed 's/^/  lintian: /' "$work/lintian.out"

# ---- 3. beside the host's packages ------------------------------------------------------
dep=$(dpkg-deb -f "$work"/libdapl-ofi2_*.deb Depends)
case "$dep" in
*libfabric1*) ok "libdapl-ofi2 depends on libfabric1 ($dep)" ;;
*) fail "libdapl-ofi2 does not depend on libfabric1: $dep" ;;
esac
for d in "${debs[@]}"; do
	pkg=$(dpkg-deb -f "$d" Package)
	replaces=$(dpkg-deb -f "$d" Replaces | tr -d ' ' | tr ',' ' ')
	# Its files (not directories) that the host's dpkg knows an owner of.
	mapfile -t files < <(dpkg-deb -c "$d" | awk '$1 !~ /^d/ { print $6 }' |
		sed 's|^\./|/|')
	shared=0
	while IFS= read -r line; do
		owners=${line%%: *}
		for o in ${owners//,/ }; do
			o=${o%%:*}
			case " $replaces " in
			*" $o "*) shared=$((shared + 1)) ;;
			*) fail "$pkg shares ${line#*: } with $o, which it does not Replace" ;;
			esac
		done
	done < <(dpkg -S "${files[@]}" 2>/dev/null)
	echo "  $pkg: ${#files[@]} files, $shared shared with host packages it Replaces (${replaces:-none})"
done

# ---- 4. dpkg --root ----------------------------------------------------------------------
root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" \
	"$root/var/log"
: >"$root/var/lib/dpkg/status"
force=--force-depends
[ "$(id -u)" -eq 0 ] || force="$force,not-root"
# --force-depends: the root is empty, so libc6, libfabric1 and the rest
# are the host's (they are found through LD_LIBRARY_PATH below).
if dpkg --root="$root" "$force" -i "${debs[@]}" >"$work/dpkg.log" 2>&1; then
	ok "dpkg --root installs ${#debs[@]} packages into $root"
else
	cat "$work/dpkg.log"
	fail "dpkg --root -i"
fi
dpkg --root="$root" -l | awk '/^ii/ { print "  installed: " $2, $3 }'
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir="$root/usr/lib/$triplet"
for f in "$libdir/libdat2.so.2" "$libdir/libdaplofi.so.2" \
	"$root/etc/dat.conf" "$root/usr/bin/dat_info" \
	"$root/usr/include/dat2/udat.h" "$libdir/pkgconfig/dat2.pc" \
	"$libdir/pkgconfig/dat.pc" "$root/usr/bin/runfabtests-dat.sh" \
	"$root/usr/libexec/fabtests-dat/dat_ia"; do
	[ -e "$f" ] || fail "${f#"$root"} is not installed"
done
grep -qx '/etc/dat.conf' "$root/var/lib/dpkg/info/libdapl-ofi2:"*.conffiles \
	"$root/var/lib/dpkg/info/libdapl-ofi2.conffiles" 2>/dev/null ||
	fail "/etc/dat.conf is no conffile of libdapl-ofi2"

# ---- 5. run from the root -----------------------------------------------------------------
conf="$work/dat.conf"
printf 'ofi-tcp u2.0 nonthreadsafe default %s dapl.2.0 "tcp lo" ""\n' \
	"$libdir/libdaplofi.so.2" >"$conf"
export LD_LIBRARY_PATH="$libdir" DAT_OVERRIDE="$conf"
if "$root/usr/bin/dat_info" >"$work/dat_info.out" 2>&1 &&
	grep -q "$libdir/libdaplofi.so.2" "$work/dat_info.out" &&
	"$root/usr/bin/dat_info" -v ofi-tcp >>"$work/dat_info.out" 2>&1 &&
	ldd "$root/usr/bin/dat_info" |
	grep -q "libdat2.so.2 => $libdir/libdat2.so.2"; then
	ok "dat_info lists and opens ofi-tcp from the packaged provider"
else
	cat "$work/dat_info.out"
	fail "dat_info from the packages"
fi
sed -n '1,12s/^/  dat_info: /p' "$work/dat_info.out"

if (cd / && env -u BUILDDIR "$root/usr/bin/runfabtests-dat.sh" --loopback \
	-D ofi-tcp -t dat_ia,dat_msg -T 120 -v) >"$work/suite.out" 2>&1 &&
	grep -q "^# fabtests-dat: installed under $root in /usr/bin," \
		"$work/suite.out" &&
	tail -n 1 "$work/suite.out" | grep -qx '2 passed, 0 failed, 0 skipped'; then
	ok "the packaged runfabtests-dat.sh ran dat_ia and dat_msg"
else
	fail "the packaged runfabtests-dat.sh"
fi
sed 's/^/  runner: /' "$work/suite.out"

dtest=/usr/bin/dtest
if [ ! -x "$dtest" ]; then
	fail "$dtest is missing (Debian package dapl2-utils)"
elif ! ldd "$dtest" | grep -q "libdat2.so.2 => $libdir/libdat2.so.2"; then
	ldd "$dtest"
	fail "$dtest does not load the packaged libdat2.so.2"
else
	timeout 120 "$dtest" -P ofi-tcp >"$work/dtest.server" 2>&1 &
	spid=$!
	# dtest's server listens on its side channel, TCP port 15828.
	for _ in $(seq 100); do
		ss -ltnH 'sport = :15828' 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	timeout 120 "$dtest" -P ofi-tcp -h 127.0.0.1 >"$work/dtest.client" 2>&1
	crc=$?
	[ "$crc" -eq 0 ] || kill -TERM "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] &&
		! grep -qE 'FAILED|failed|Error|ERROR' "$work/dtest.server" \
			"$work/dtest.client"; then
		ok "OFED dtest server and client on the packaged libdat2 and provider"
	else
		sed 's/^/  server: /' "$work/dtest.server"
		sed 's/^/  client: /' "$work/dtest.client"
		fail "OFED dtest (server rc $src, client rc $crc)"
	fi
	grep -hE 'PASSED|Connection|RDMA|Send' "$work/dtest.client" | head -n 6 |
		sed 's/^/  dtest: /'
fi
exit $bad
