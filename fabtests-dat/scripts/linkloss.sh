#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# linkloss.sh: run dat_linkloss between two network namespaces of its own,
# joined by two veth pairs: one carries the DAT traffic (10.231.0.1 and
# .2, the link the server sets down and up), one the side channel
# (10.231.1.1 and .2).  The addresses exist only inside those namespaces;
# the host's namespace is not touched.  Each side gets a dat.conf naming
# its address for the IA, and the bound (default 3000 ms, -t): the server
# by DAPL_OFI_LINK_TIMEOUT, the client by link_timeout= in its dat.conf.
#
# Usage: linkloss.sh -b BUILDDIR [-p BINDIR] -D IA [-t MS] [-E PORT] [-T SEC]
#    or  linkloss.sh -l LIBDIR -p BINDIR -D IA ...   (an installed tree:
#        LIBDIR holds libdat2.so.2 and libdaplofi.so.2, BINDIR dat_linkloss)
# Exit: 0 pass, 61 not run (not root, or no unshare, nsenter or ip),
# anything else failure.  Children are ended by their PIDs.

set -u
builddir=${BUILDDIR:-.}
bindir=
libdir=
ia=ofi-tcp
bound=3000
port=47700
wd=120
while [ $# -gt 0 ]; do
	case $1 in
	-b) builddir=$2; shift 2 ;;
	-p) bindir=$2; shift 2 ;;
	-l) libdir=$2; shift 2 ;;
	-D) ia=$2; shift 2 ;;
	-t) bound=$2; shift 2 ;;
	-E) port=$2; shift 2 ;;
	-T) wd=$2; shift 2 ;;
	*) echo "$0: unknown option $1" >&2; exit 2 ;;
	esac
done
if [ -z "$libdir" ] || [ -z "$bindir" ]; then
	builddir=$(cd "$builddir" && pwd) || exit 2
	[ -n "$libdir" ] || libdir="$builddir/.libs"
	[ -n "$bindir" ] || bindir="$builddir/fabtests-dat/functional"
fi
bin="$bindir/dat_linkloss"
[ -x "$bin" ] || { echo "$bin: not built"; exit 1; }
if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
	! command -v nsenter >/dev/null || ! command -v ip >/dev/null; then
	echo "NOTRUN: dat_linkloss needs root, unshare, nsenter and ip" \
		"(two network namespaces joined by veth)"
	exit 61
fi
# MSG fabrics: the link watch over the connections' kernel TCP sockets.
# RDM fabrics over IP: the control channel's keepalive and
# TCP_USER_TIMEOUT (dapl-ofi(7)), its socket on the same link as the data.
case $ia in
ofi-tcp) prov=tcp ;;
ofi-sockets) prov=sockets ;;
ofi-rxm) prov="tcp;ofi_rxm" ;;
ofi-rxd) prov="udp;ofi_rxd" ;;
*) echo "NOTRUN: $ia: a link to lose is for tcp, sockets, tcp;ofi_rxm and udp;ofi_rxd"; exit 61 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/linkloss.XXXXXX") || exit 2
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A namespace held by a sleeping child; its PID in $holder.
mkns() {
	local mine
	mine=$(readlink /proc/self/ns/net)
	unshare -n sleep 100000 &
	holder=$!
	pids+=("$holder")
	for _ in $(seq 50); do
		if [ "$(readlink "/proc/$holder/ns/net" 2>/dev/null)" != "$mine" ]; then
			nsenter -t "$holder" -n ip link set lo up && return 0
		fi
		sleep 0.1
	done
	echo "cannot make a network namespace"
	exit 1
}
mkns; a=$holder
mkns; b=$holder
in_a() { nsenter -t "$a" -n "$@"; }
in_b() { nsenter -t "$b" -n "$@"; }
set -e
in_a ip link add lla type veth peer name llb
in_a ip link set llb netns "$b"
in_a ip link add lca type veth peer name lcb
in_a ip link set lcb netns "$b"
in_a ip addr add 10.231.0.1/24 dev lla
in_a ip addr add 10.231.1.1/24 dev lca
in_b ip addr add 10.231.0.2/24 dev llb
in_b ip addr add 10.231.1.2/24 dev lcb
in_a ip link set lla up
in_a ip link set lca up
in_b ip link set llb up
in_b ip link set lcb up
set +e

# The bound reaches the server (a) through DAPL_OFI_LINK_TIMEOUT and the
# client (b), whose writes are outstanding, through link_timeout= in its
# dat.conf instance data; DAT_LINKLOSS_BOUND tells dat_linkloss itself.
printf '%s u2.0 nonthreadsafe default libdaplofi.so.2 dapl.2.0 "%s %s" ""\n' \
	"$ia" "$prov" 10.231.0.1 >"$tmp/dat.conf.a"
printf '%s u2.0 nonthreadsafe default libdaplofi.so.2 dapl.2.0 "%s %s link_timeout=%s" ""\n' \
	"$ia" "$prov" 10.231.0.2 "$bound" >"$tmp/dat.conf.b"
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export DAT_LINKLOSS_BOUND=$bound
unset DAPL_OFI_LINK_TIMEOUT
echo "# $ia: bound ${bound} ms; data link 10.231.0.1-10.231.0.2 (lla/llb)"

in_a env DAT_OVERRIDE="$tmp/dat.conf.a" DAPL_OFI_LINK_TIMEOUT="$bound" "$bin" -D "$ia" -s 10.231.1.1 \
	-E "$port" -L lla -T "$wd" >"$tmp/server.log" 2>&1 &
spid=$!
pids+=("$spid")
in_b env DAT_OVERRIDE="$tmp/dat.conf.b" "$bin" -D "$ia" -E "$port" -T "$wd" \
	10.231.1.1 >"$tmp/client.log" 2>&1 &
cpid=$!
pids+=("$cpid")
wait "$cpid"
crc=$?
# The server ends once the client said so, or its watchdog ends it.
wait "$spid"
src=$?
echo "--- server (rc $src)"
cat "$tmp/server.log"
echo "--- client (rc $crc)"
cat "$tmp/client.log"
[ "$src" -eq 0 ] && [ "$crc" -eq 0 ] && exit 0
exit 1
