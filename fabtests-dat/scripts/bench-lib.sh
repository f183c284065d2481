#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# bench-lib.sh: what the benchmark scripts share; sourced, not run.
#
# bench_find_bindir SCRIPT PROG: set bindir to the directory holding the
# benchmark program PROG: the -B DIR the caller already put in bindir,
# else $BENCH_BINDIR, else ./fabtests-dat/benchmarks, else the build tree
# next to the scripts, else ../benchmarks (an installed tree). In a build
# tree, libdat2 loads the provider from the same .libs: LD_LIBRARY_PATH
# gets it, so dlopen finds it there (each DAT run prints the libraries it
# used). Returns 1, with a message naming SCRIPT, when there is none.
bench_find_bindir() {
	local script=$1 prog=$2 here d libs

	here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
	[ -z "${bindir:-}" ] && bindir=${BENCH_BINDIR:-}
	if [ -z "$bindir" ]; then
		for d in ./fabtests-dat/benchmarks \
			"$here/../../build/fabtests-dat/benchmarks" \
			"$here/../benchmarks"; do
			if [ -x "$d/$prog" ]; then
				bindir=$d
				break
			fi
		done
	fi
	if [ -z "$bindir" ] || [ ! -x "$bindir/$prog" ]; then
		echo "$script: no $prog found; build it or give -B DIR" >&2
		return 1
	fi
	bindir=$(cd "$bindir" && pwd)
	libs=$(cd "$bindir/../.." 2>/dev/null && pwd)/.libs
	if [ -e "$libs/libdaplofi.so.2" ]; then
		export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	fi
	return 0
}

# bench_loopback_conf SCRIPT DIR: unless DAT_OVERRIDE names a dat.conf
# already, write DIR/dat.conf.loopback, which gives the built-in IA names
# loopback instance data ("tcp lo", "sockets lo", ...: the format of the
# runner's --loopback; "shm" has no interface), and export DAT_OVERRIDE to it, so that no DAT run
# opens its IA on another interface (without it, "sockets" takes the
# first interface up, eth0 say). The raw runs need nothing: the server
# binds 127.0.0.1 and the client connects to it. Returns 1, with a
# message naming SCRIPT, when the file cannot be written.
bench_loopback_conf() {
	local script=$1 conf=$2/dat.conf.loopback

	[ -n "${DAT_OVERRIDE:-}" ] && return 0
	if ! {
		echo "# $script: the built-in names on the loopback"
		echo 'ofi u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "auto lo" ""'
		echo 'ofi-tcp u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "tcp lo" ""'
		echo 'ofi-sockets u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "sockets lo" ""'
		echo 'ofi-rxm u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "tcp;ofi_rxm lo" ""'
		echo 'ofi-shm u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "shm" ""'
		echo 'ofi-rxd u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "udp;ofi_rxd lo" ""'
	} >"$conf"; then
		echo "$script: cannot write $conf" >&2
		return 1
	fi
	export DAT_OVERRIDE=$conf
	return 0
}
