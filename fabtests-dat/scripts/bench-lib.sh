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
