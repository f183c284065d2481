#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# bench-compare.sh: run a fabtests-dat benchmark in DAT mode and in --raw
# mode (the same pattern on libfabric) alternately, and print per size the
# median of each and the DAT/raw ratio, then check the DAT-layer targets:
#
#   8-byte ping-pong latency (dat_pingpong -t send)   DAT/raw <= 1.05
#   bandwidth at >= 64 KiB (dat_bw)                    DAT/raw >= 0.97
#   8-byte message rate (dat_bw -t send -S 8)          DAT/raw >= 0.90
#   connection rate (dat_cm_rate)                      DAT/raw >= 0.80
#
# and one information row: 1 MiB RDMA Writes against raw writes with the
# acknowledgement DAT asks for on tcp (--raw-write=delivery).
#
# Each run is a server and a client process on the loopback, each under
# timeout(1), tracked by PID (never killed by name), on its own ports.
# Exit status: 0 when every run worked (missed targets print MISS but do
# not fail), 1 when a run failed, 2 on bad usage.
#
# Usage:
#   bench-compare.sh [options]                      the four targets
#   bench-compare.sh [options] PROGRAM [ARGS...]    one benchmark
#
# Options:
#   -n PAIRS    DAT/raw pairs per benchmark (default 5, at least 5)
#   -b PAIRS    pairs for the bandwidth rows of the four targets (default
#               11, at least PAIRS): loopback TCP settles each connection
#               in a fast or a slow state, in both modes, where both
#               processes spend about twice the kernel time per message;
#               about one run in four is slow, often enough for a median
#               of 5 to compare a slow run with a fast one
#   -D IA       IA name (default ofi-tcp; --raw maps it to the provider)
#   -B DIR      directory holding the benchmark programs (default:
#               $BENCH_BINDIR, else ./fabtests-dat/benchmarks, else the
#               build tree next to this script)
#   -p PORT     first side-channel port (default 24000, below Linux's
#               ephemeral range); each run takes two
#   -T SECONDS  timeout of each process (default 120)
#   -k          keep the per-run logs (default: remove them)
#   -R ARGS     more arguments for the --raw runs only, e.g.
#               -R "--raw-wait=fd --raw-thread=safe" for a raw baseline
#               with what DAT promises (waitable, thread-safe queues)
#   -U          leave the processes unpinned (default: with two or more
#               CPUs, the server runs on CPU 1 and the client on CPU 0,
#               in both modes: on loopback, where the scheduler puts two
#               busy-polling processes decides the figure more than the
#               code does, and it does so differently from run to run)
#   -h          this text
#
# Examples:
#   fabtests-dat/scripts/bench-compare.sh
#   fabtests-dat/scripts/bench-compare.sh -n 7 dat_bw -t write -S 64k,1m
#   fabtests-dat/scripts/bench-compare.sh dat_pingpong -t write -S all -I 2000

set -u

pairs=5
bwpairs=
ia=ofi-tcp
bindir=${BENCH_BINDIR:-}
port=24000
tmo=120
keep=0

usage() {
	sed -n '/^# Usage:/,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

pin=1
raw_args=()
while getopts "n:b:D:B:p:T:kR:Uh" opt; do
	case $opt in
	n) pairs=$OPTARG ;;
	b) bwpairs=$OPTARG ;;
	D) ia=$OPTARG ;;
	B) bindir=$OPTARG ;;
	p) port=$OPTARG ;;
	T) tmo=$OPTARG ;;
	k) keep=1 ;;
	R) read -r -a raw_args <<<"$OPTARG" ;;
	U) pin=0 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))

case $pairs in
'' | *[!0-9]*) echo "bench-compare: -n wants a number" >&2; exit 2 ;;
esac
if [ "$pairs" -lt 5 ]; then
	echo "bench-compare: at least 5 pairs (-n $pairs given)" >&2
	exit 2
fi
case ${bwpairs:=11} in
'' | *[!0-9]*) echo "bench-compare: -b wants a number" >&2; exit 2 ;;
esac
[ "$bwpairs" -lt "$pairs" ] && bwpairs=$pairs

# shellcheck source=fabtests-dat/scripts/bench-lib.sh
. "$(cd "$(dirname "$0")" && pwd)/bench-lib.sh" || exit 2
bench_find_bindir bench-compare dat_pingpong || exit 2

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX") || exit 1
declare -a live_pids=()
failed=0

cleanup() {
	local p
	for p in "${live_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	[ "$keep" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "bench-compare: interrupted" >&2; exit 1' INT TERM

# run_once TAG MODE PROGRAM ARGS... -> client output in $work/TAG.out.
# A port some other socket holds: once more on the next ports.
run_once() {
	local r
	run_pair "$@"
	r=$?
	if [ "$r" -eq 3 ]; then
		run_pair "$@"
		r=$?
	fi
	[ "$r" -eq 0 ]
}

run_pair() {
	local tag=$1 mode=$2 prog=$3 spid cpid src crc
	shift 3
	local extra=()
	[ "$mode" = raw ] && extra=(--raw "${raw_args[@]}")
	local oob=$port
	port=$((port + 2))

	local spin=() cpin=()
	if [ "$pin" = 1 ] && [ "$(nproc)" -ge 2 ] &&
		command -v taskset >/dev/null 2>&1; then
		spin=(taskset -c 1)
		cpin=(taskset -c 0)
	fi
	timeout -k 5 "$tmo" "${spin[@]}" "$bindir/$prog" -D "$ia" -p "$oob" \
		"${extra[@]}" "$@" >"$work/$tag.srv" 2>&1 &
	spid=$!
	live_pids=("$spid")
	timeout -k 5 "$tmo" "${cpin[@]}" "$bindir/$prog" -D "$ia" -p "$oob" \
		"${extra[@]}" --detail -v "$@" 127.0.0.1 >"$work/$tag.out" \
		2>"$work/$tag.err" &
	cpid=$!
	live_pids=("$spid" "$cpid")
	wait "$cpid"
	crc=$?
	if [ "$crc" -ne 0 ]; then
		# The client failed: the server has nobody left to serve.
		kill "$spid" 2>/dev/null
	fi
	wait "$spid"
	src=$?
	live_pids=()
	if [ "$crc" -ne 0 ] || [ "$src" -ne 0 ]; then
		if grep -qi 'address already in use\|CONN_QUAL_IN_USE' \
			"$work/$tag.srv"; then
			echo "bench-compare: port $oob or $((oob + 1)) busy, next ports" >&2
			return 3
		fi
		echo "bench-compare: $mode run of $prog $* failed (client $crc, server $src)" >&2
		sed 's/^/  client: /' "$work/$tag.err" | tail -n 8 >&2
		sed 's/^/  server: /' "$work/$tag.srv" | tail -n 8 >&2
		return 1
	fi
	return 0
}

# The libraries a DAT run used, as the client saw them.
show_libs() {
	grep -h '^# lib ' "$1" 2>/dev/null | sort -u | sed 's/^# lib /  using /'
}

# compare [-b] [-r ARG] NAME PROGRAM ARGS...: pairs of runs (-b: bandwidth
# rows' count), then the table and targets. -r: one more argument for the
# raw runs, which makes the rows information rather than targets.
compare() {
	local name prog i tag order mode n=$pairs info=0 rc=0
	local saved=("${raw_args[@]}")
	while :; do
		case $1 in
		-b) n=$bwpairs; shift ;;
		-r) raw_args+=("$2"); info=1; shift 2 ;;
		*) break ;;
		esac
	done
	compare_rows "$n" "$info" "$@" || rc=1
	raw_args=("${saved[@]}")
	return "$rc"
}

compare_rows() {
	local n=$1 info=$2 name prog i tag order mode
	shift 2
	name=$1
	prog=$2
	shift 2
	echo
	echo "== $prog $* ($ia, $n pairs${raw_args[*]:+, raw: ${raw_args[*]}}) =="
	: >"$work/$name.dat"
	: >"$work/$name.raw"
	for ((i = 0; i < n; i++)); do
		# Alternate which mode goes first, so drift hits both alike.
		if ((i % 2 == 0)); then order="dat raw"; else order="raw dat"; fi
		for mode in $order; do
			tag="$name.$mode.$i"
			if ! run_once "$tag" "$mode" "$prog" "$@"; then
				failed=1
				return 1
			fi
			grep '^#detail ' "$work/$tag.out" >>"$work/$name.$mode"
		done
	done
	show_libs "$work/$name.dat.0.err"
	awk -v prog="$prog" -v args=" $* " -v info="$info" \
		-v rawx="${raw_args[*]}" -f - "$work/$name.dat" \
		"$work/$name.raw" <<'EOF'
# Split list into a[1..n], lowest first; returns n.
function sortv(list, a,    n, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) {
		t = a[i]
		for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--)
			a[j + 1] = a[j]
		a[j + 1] = t
	}
	return n
}
function median(list,    n, a) {
	n = sortv(list, a)
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
# Every run's figure, lowest first: loopback TCP bandwidth often falls in
# one of two states per connection, which a median alone hides.
function runs(list,    n, a, i, out) {
	n = sortv(list, a)
	out = ""
	for (i = 1; i <= n; i++)
		out = out sprintf(" %.0f", a[i])
	return out
}
# The runs of list at or above lim (the fast state), as a list; their
# count goes to nfast.
function fast(list, lim,    n, a, i, out) {
	n = sortv(list, a)
	out = ""
	nfast = 0
	for (i = 1; i <= n; i++)
		if (a[i] + 0 >= lim) {
			out = out " " a[i]
			nfast++
		}
	return out
}
# Both modes by state: a median lands in either state when slow runs are
# near half, so compare the fast runs, and count the slow ones (where the
# slowest run is under 60% of the best: a spread, not two states, else).
function states(d, r,    a, n, lim, td, tr, fd, fr, nd, nr) {
	n = sortv(d " " r, a)
	# Two states only where some run fell far below the best.
	if (a[1] + 0 >= 0.6 * a[n])
		return
	lim = 0.8 * a[n]
	td = sortv(d, a)
	tr = sortv(r, a)
	fd = fast(d, lim)
	nd = nfast
	fr = fast(r, lim)
	nr = nfast
	printf "  fast state (>= 80%% of the best run): DAT %.0f, raw %.0f MB/s, DAT/raw %.3f; slow runs DAT %d/%d, raw %d/%d\n",
		median(fd), median(fr), median(fd) / median(fr),
		td - nd, td, tr - nr, tr
}
FNR == 1 { mode = (FILENAME ~ /\.dat$/) ? "dat" : "raw" }
{
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		v[kv[1]] = kv[2]
	}
	s = v["size"] + 0
	if (!(s in seen)) {
		seen[s] = 1
		sizes[++ns] = s
	}
	lat[mode, s] = lat[mode, s] " " v["usec_per_xfer"]
	bw[mode, s] = bw[mode, s] " " v["mb_per_sec"]
	rate[mode, s] = rate[mode, s] " " v["mxfers_per_sec"]
}
function target(what, r, op, lim) {
	if (info) {
		# Not the target's comparison: raw was given more to do.
		printf "info    %-34s DAT/raw %6.3f (raw: %s)\n", what, r,
			rawx
		return
	}
	ok = (op == "<=") ? (r <= lim) : (r >= lim)
	printf "target  %-34s DAT/raw %6.3f %s %.2f  %s\n", what, r, op, lim,
		ok ? "PASS" : "MISS"
}
END {
	cm = (prog == "dat_cm_rate")
	pp = (prog == "dat_pingpong")
	test = "send"
	if (match(args, / -t [a-z]+ /))
		test = substr(args, RSTART + 4, RLENGTH - 5)
	if (cm)
		printf "%-8s %14s %14s %9s\n", "bytes", "DAT conn/s", "raw conn/s", "DAT/raw"
	else if (pp)
		printf "%-8s %12s %12s %9s\n", "bytes", "DAT usec", "raw usec", "DAT/raw"
	else
		printf "%-8s %11s %11s %8s %11s %11s %8s\n", "bytes", "DAT MB/s",
			"raw MB/s", "DAT/raw", "DAT Mmsg/s", "raw Mmsg/s", "DAT/raw"
	for (k = 1; k <= ns; k++) {
		s = sizes[k]
		if (!((("dat", s) in lat) && (("raw", s) in lat))) {
			printf "%-8d missing results\n", s
			continue
		}
		if (cm) {
			d = median(rate["dat", s]) * 1e6
			r = median(rate["raw", s]) * 1e6
			printf "%-8s %14.0f %14.0f %9.3f\n", "-", d, r, d / r
			target("connection rate", d / r, ">=", 0.80)
		} else if (pp) {
			d = median(lat["dat", s])
			r = median(lat["raw", s])
			printf "%-8d %12.3f %12.3f %9.3f\n", s, d, r, d / r
			if (s == 8 && test == "send")
				target("8-byte ping-pong latency", d / r, "<=", 1.05)
		} else {
			db = median(bw["dat", s])
			rb = median(bw["raw", s])
			dm = median(rate["dat", s])
			rm = median(rate["raw", s])
			printf "%-8d %11.2f %11.2f %8.3f %11.4f %11.4f %8.3f\n", s,
				db, rb, db / rb, dm, rm, dm / rm
			if (s >= 65536)
				printf "  runs, MB/s: DAT%s; raw%s\n",
					runs(bw["dat", s]), runs(bw["raw", s])
			if (s >= 65536)
				states(bw["dat", s], bw["raw", s])
			if (s >= 65536)
				target(sprintf("%s bandwidth at %d bytes", test, s),
					db / rb, ">=", 0.97)
			if (s == 8 && test == "send")
				target("8-byte message rate", dm / rm, ">=", 0.90)
		}
	}
}
EOF
}

if [ $# -gt 0 ]; then
	prog=$1
	shift
	case $prog in
	dat_pingpong | dat_bw | dat_cm_rate) ;;
	*) echo "bench-compare: unknown program '$prog'" >&2; exit 2 ;;
	esac
	compare one "$prog" "$@"
else
	# The four targets; iteration counts give runs of about 0.1-0.5 s.
	compare lat dat_pingpong -t send -S 8 -I 20000 -w 1000
	compare rate dat_bw -t send -S 8 -I 200000 -w 2000
	compare -b bw64 dat_bw -t write -S 64k -I 20000 -w 200
	compare -b bw1m dat_bw -t write -S 1m -I 2000 -w 20
	# DAT acknowledges writes on tcp (dapl-ofi(7)); raw with the same
	# guarantee shows what the DAT layer itself costs.
	compare -b -r --raw-write=delivery bw1mack dat_bw -t write -S 1m \
		-I 2000 -w 20
	compare -b sbw64 dat_bw -t send -S 64k -I 20000 -w 200
	compare cm dat_cm_rate -I 3000 -w 50
fi

if [ "$failed" -ne 0 ]; then
	echo
	echo "bench-compare: a run failed"
	exit 1
fi
exit 0
