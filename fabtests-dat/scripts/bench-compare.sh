#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# bench-compare.sh: run a fabtests-dat benchmark in DAT mode and in --raw
# mode (the same pattern on libfabric) alternately, and print per size the
# median of each, the DAT/raw ratio and how many runs of each mode were
# slow, then check the DAT-layer targets:
#
#   8-byte ping-pong latency (dat_pingpong -t send)   DAT/raw <= 1.05
#     on ofi-shm also                                  DAT - raw <= 0.2 usec
#   bandwidth at >= 64 KiB (dat_bw)                    DAT/raw >= 0.97
#   8-byte message rate (dat_bw -t send -S 8)          DAT/raw >= 0.90
#   the same two for -t writeimm and -t atomic (the IB extension)
#   connection rate (dat_cm_rate)                      DAT/raw >= 0.80
#
# With -D ofi-tcp and other IAs, the connection rate of each other IA is
# also given against ofi-tcp's (DAT against DAT, raw against raw). The
# four targets' connection rate takes 3000 connections on MSG fabrics,
# 50 on RDM ones (ofi-rxm: 0.1-0.3 s each).
# On RDM fabrics (ofi-rxm, ofi-shm, ofi-rxd) the raw runs use an RDM
# endpoint per connection with what dapl-ofi asks there (--raw-ep, see
# fabtests-dat/benchmarks/README.md), writes included: on ofi-rxm both
# modes' RDMA Writes complete on delivery.
#
# and one information row: 1 MiB RDMA Writes against raw writes with the
# acknowledgement DAT asks for on tcp (--raw-write=delivery).
#
# A slow run: one whose time per transfer is more than 1.3 times that of
# the fastest run of the same size, in either mode. TCP over loopback
# runs in one of two states, for a whole run (connection) or for a spell
# of time, in both modes alike: the fast runs of a size lie within 1.25x
# of the fastest, the slow ones from 1.4x up (about 4.5 against 6.5 us
# for an 8-byte ping-pong, 10 against 17-25 us at 64 KiB). A median of
# few runs can land in either state; the slow counts say when it may
# have, and a row with slow runs is followed by the medians of its fast
# runs alone (not with -s). On a busy machine, runs slowed by other work
# count as slow too.
#
# Each run is a server and a client process on the loopback, each under
# timeout(1), tracked by PID (never killed by name), on its own ports.
# Unless DAT_OVERRIDE is set, the runs use a dat.conf written in the work
# directory that gives the built-in IA names loopback instance data
# ("tcp lo", "sockets lo", ...); a run whose client reports a local
# address other than a loopback one fails.
# Exit status: 0 when every run worked (missed targets print MISS but do
# not fail), 1 when a run failed, 2 on bad usage or a missing tool.
#
# Usage:
#   bench-compare.sh [options]                      the four targets
#   bench-compare.sh [options] PROGRAM [ARGS...]    one benchmark
#   bench-compare.sh --plot DIR [options] [PROGRAM [ARGS...]]
#                    the same, and charts; with no PROGRAM, size sweeps
#   bench-compare.sh --from RUNDIR [--plot DIR] [-s]
#                    the tables (and charts) of runs kept with -k
#
# Options:
#   -n PAIRS    DAT/raw pairs per benchmark (default 5, at least 3); each
#               pair runs its two modes in turn, the first of each pair
#               alternating (DAT raw, raw DAT, ...), so drift hits both
#   -b PAIRS    pairs for the bandwidth rows of the four targets (default
#               11, at least PAIRS): about one run in four is slow, often
#               enough for a median of 5 to compare a slow run with a fast
#               one
#   -D IA       IA name (default ofi-tcp; --raw maps it to the provider);
#               repeat for several, each in turn
#   -B DIR      directory holding the benchmark programs (default:
#               $BENCH_BINDIR, else ./fabtests-dat/benchmarks, else the
#               build tree next to this script)
#   -p PORT     first side-channel port (default 24000, below Linux's
#               ephemeral range); each run takes two
#   -T SECONDS  timeout of each process (default 120)
#   -k          keep the runs' output, in a directory named at the end
#               (for --from)
#   -R ARGS     more arguments for the --raw runs only, e.g.
#               -R "--raw-wait=fd --raw-thread=safe" for a raw baseline
#               with what DAT promises (waitable, thread-safe queues),
#               or -R --raw-progress=thread for one whose RDMA writes
#               land at a target that only polls memory
#   -U          leave the processes unpinned (default: with two or more
#               CPUs, the server runs on CPU 1 and the client on CPU 0,
#               in both modes: on loopback, where the scheduler puts two
#               busy-polling processes decides the figure more than the
#               code does, and it does so differently from run to run)
#   -s          the tables alone: no per-run figures, fast-run medians or
#               targets
#   --plot DIR  also write a PNG chart per pattern and IA into DIR:
#               latency (ping-pong, connections) or bandwidth against
#               message size, DAT and raw, the median with a bar from the
#               fastest to the slowest run. Needs gnuplot ($GNUPLOT, else
#               gnuplot; Debian: gnuplot-nox). With no PROGRAM it runs,
#               per IA, send/recv and RDMA-write ping-pongs (1 byte to
#               1 MiB) and RDMA-write and send bandwidth (to 4 MiB),
#               sizes a factor of 4 apart, instead of the four targets:
#               about a minute per IA at -n 5 on an idle machine
#   --from RUNDIR  run nothing: the tables of the runs kept in RUNDIR by
#               -k (its file 'index' lists them)
#   -h          this text
#
# Examples:
#   fabtests-dat/scripts/bench-compare.sh
#   fabtests-dat/scripts/bench-compare.sh -n 7 dat_bw -t write -S 64k,1m
#   fabtests-dat/scripts/bench-compare.sh dat_pingpong -t write -S all -I 2000
#   fabtests-dat/scripts/bench-compare.sh --plot plots -n 3

set -u

pairs=5
bwpairs=
ias=()
bindir=${BENCH_BINDIR:-}
port=24000
tmo=120
keep=0
brief=0
plotdir=
from=
slowx=1.3
gnuplot=${GNUPLOT:-gnuplot}

usage() {
	sed -n '/^# Usage:/,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

# The long options first; getopts takes the rest.
pin=1
raw_args=()
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--plot | --from)
		if [ $# -lt 2 ] || [ -z "$2" ]; then
			echo "bench-compare: $1 wants a directory" >&2
			exit 2
		fi
		[ "$1" = --plot ] && plotdir=$2 || from=$2
		shift 2
		;;
	--plot=* | --from=*)
		[ "${1%%=*}" = --plot ] && plotdir=${1#*=} || from=${1#*=}
		shift
		;;
	--) args+=("$@"); break ;;
	*) args+=("$1"); shift ;;
	esac
done
set -- "${args[@]+"${args[@]}"}"
while getopts "n:b:D:B:p:T:kR:Ush" opt; do
	case $opt in
	n) pairs=$OPTARG ;;
	b) bwpairs=$OPTARG ;;
	D) ias+=("$OPTARG") ;;
	B) bindir=$OPTARG ;;
	p) port=$OPTARG ;;
	T) tmo=$OPTARG ;;
	k) keep=1 ;;
	R) read -r -a raw_args <<<"$OPTARG" ;;
	U) pin=0 ;;
	s) brief=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ ${#ias[@]} -gt 0 ] || ias=(ofi-tcp)

case $pairs in
'' | *[!0-9]*) echo "bench-compare: -n wants a number" >&2; exit 2 ;;
esac
if [ "$pairs" -lt 3 ]; then
	echo "bench-compare: at least 3 pairs (-n $pairs given)" >&2
	exit 2
fi
case ${bwpairs:=11} in
'' | *[!0-9]*) echo "bench-compare: -b wants a number" >&2; exit 2 ;;
esac
[ "$bwpairs" -lt "$pairs" ] && bwpairs=$pairs

# Before any run: a sweep that cannot be drawn is time lost.
if [ -n "$plotdir" ]; then
	if ! command -v "$gnuplot" >/dev/null 2>&1; then
		echo "bench-compare: --plot needs gnuplot, and '$gnuplot' is" \
			"not found: install it (Debian: apt-get install" \
			"gnuplot-nox) or set GNUPLOT" >&2
		exit 2
	fi
	mkdir -p "$plotdir" || exit 2
fi
if [ -n "$from" ] && [ ! -f "$from/index" ]; then
	echo "bench-compare: $from/index: no runs kept there (-k)" >&2
	exit 2
fi

if [ -z "$from" ]; then
	# shellcheck source=fabtests-dat/scripts/bench-lib.sh
	. "$(cd "$(dirname "$0")" && pwd)/bench-lib.sh" || exit 2
	bench_find_bindir bench-compare dat_pingpong || exit 2
fi

work=
if [ -z "$from" ]; then
	work=$(mktemp -d "${TMPDIR:-/tmp}/bench-compare.XXXXXX") || exit 1
	: >"$work/index"
	# Every run on 127.0.0.1: DAT's IA names on lo (unless DAT_OVERRIDE
	# says otherwise); run_pair checks the address each client used.
	bench_loopback_conf bench-compare "$work" || exit 1
fi
declare -a live_pids=()
failed=0

# On a terminal, one line saying which run is going, rewritten in place;
# nothing when stderr is not a terminal.
progress=0
[ -t 2 ] && progress=1
progress_show() {
	[ "$progress" = 1 ] && printf '\r  %s\033[K' "$*" >&2
	return 0
}
progress_clear() {
	[ "$progress" = 1 ] && printf '\r\033[K' >&2
	return 0
}

cleanup() {
	local p
	for p in "${live_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	progress_clear
	[ -n "$work" ] || return 0
	if [ "$keep" = 1 ]; then
		echo "bench-compare: runs kept in $work (--from $work)" >&2
	else
		rm -rf "$work"
	fi
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
		progress_clear
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
	if ! loopback_only "$work/$tag.err"; then
		progress_clear
		echo "bench-compare: $mode run of $prog $* did not stay on the loopback:" >&2
		grep 'local address' "$work/$tag.err" | sed 's/^/  client: /' >&2
		echo "  (DAT_OVERRIDE=${DAT_OVERRIDE:-})" >&2
		return 1
	fi
	return 0
}

# loopback_only FILE: the client's -v output in FILE names a local
# address and every one it names is a loopback one.
loopback_only() {
	local a n=0
	while read -r a; do
		n=$((n + 1))
		case $a in
		127.* | ::1) ;;
		fi_shm://*) ;; # raw shm: a name, this host's alone
		*) return 1 ;;
		esac
	done < <(sed -n 's/.*: local address \([^ ]*\)$/\1/p' "$1")
	[ "$n" -gt 0 ]
}

# The libraries a DAT run used, as the client saw them.
show_libs() {
	grep -h '^# lib ' "$1" 2>/dev/null | sort -u | sed 's/^# lib /  using /'
	sed -n 's/.*: local address \([^ ]*\)$/  local address \1/p' "$1" \
		2>/dev/null | sort -u
}

# The test a benchmark's arguments ask for (-t), else its default.
test_of() {
	local t=send
	while [ $# -gt 0 ]; do
		[ "$1" = -t ] && [ $# -gt 1 ] && t=$2
		shift
	done
	echo "$t"
}

# compare [-b] [-r ARG] NAME PROGRAM ARGS...: pairs of runs (-b: bandwidth
# rows' count) on each IA, then the table and targets. -r: one more
# argument for the raw runs, which makes the rows information rather
# than targets.
compare() {
	local n=$pairs info=0 rc=0
	local saved=("${raw_args[@]}")
	while :; do
		case $1 in
		-b) n=$bwpairs; shift ;;
		-r) raw_args+=("$2"); info=1; shift 2 ;;
		*) break ;;
		esac
	done
	for ia in "${ias[@]}"; do
		compare_runs "$n" "$info" "$@" || rc=1
	done
	raw_args=("${saved[@]}")
	return "$rc"
}

compare_runs() {
	local n=$1 info=$2 name prog i tag order mode
	shift 2
	name=$1.$ia
	prog=$2
	shift 2
	: >"$work/$name.dat"
	: >"$work/$name.raw"
	for ((i = 0; i < n; i++)); do
		# Alternate which mode goes first, so drift hits both alike.
		if ((i % 2 == 0)); then order="dat raw"; else order="raw dat"; fi
		for mode in $order; do
			tag="$name.$mode.$i"
			progress_show "$prog $* ($ia): pair $((i + 1)) of $n, $mode"
			if ! run_once "$tag" "$mode" "$prog" "$@"; then
				failed=1
				return 1
			fi
			grep '^#detail ' "$work/$tag.out" >>"$work/$name.$mode"
		done
	done
	progress_clear
	printf '%s|%s|%s|%s|%s|%s\n' "$name" "$ia" "$n" "$info" \
		"${raw_args[*]}" "$prog $*" >>"$work/index"
	report "$work" "$name" "$ia" "$n" "$info" "${raw_args[*]}" "$prog" "$@"
}

# report DIR NAME IA PAIRS INFO RAWX PROGRAM ARGS...: the table of the
# runs in DIR/NAME.dat and DIR/NAME.raw (their '#detail' lines), and with
# --plot the chart.
report() {
	local dir=$1 name=$2 ia=$3 n=$4 info=$5 rawx=$6 prog=$7
	shift 7
	local test pdata=
	test=$(test_of "$@")
	echo
	echo "== $prog $* ($ia, $n pairs${rawx:+, raw: $rawx}) =="
	show_libs "$dir/$name.dat.0.err"
	[ -n "$plotdir" ] && pdata="$plotdir/$ia-${name%."$ia"}.data"
	awk -v prog="$prog" -v test="$test" -v info="$info" -v rawx="$rawx" \
		-v brief="$brief" -v slowx="$slowx" -v plot="$pdata" -v ia="$ia" \
		-v cmout="$dir/$name.cm" \
		-f - "$dir/$name.dat" "$dir/$name.raw" <<'EOF'
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
	if (n == 0)
		return 0
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
function lowest(list,    a) {
	return sortv(list, a) ? a[1] : 0
}
function highest(list,    n, a) {
	n = sortv(list, a)
	return n ? a[n] : 0
}
# Every run's figure, lowest first: a median alone hides two states.
function runs(list,    n, a, i, out) {
	n = sortv(list, a)
	out = ""
	for (i = 1; i <= n; i++)
		out = out sprintf(" %.0f", a[i])
	return out
}
# Of mode's runs at size s, the figures of list (rate, bw or lat) of those
# whose time per transfer is at most lim (fast: 1) or above it (slow: 0),
# as a list; their count goes to nsel.
function pick(list, m, s, lim, fast,    k, out) {
	out = ""
	nsel = 0
	for (k = 1; k <= nrun[m, s]; k++)
		if ((t[m, s, k] + 0 <= lim) == fast) {
			out = out " " val[list, m, s, k]
			nsel++
		}
	return out
}
FNR == 1 { mode = (FILENAME ~ /\.dat$/) ? "dat" : "raw" }
/^#detail / {
	delete v
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		v[kv[1]] = kv[2]
	}
	s = v["size"] + 0
	if (!(s in seen)) {
		seen[s] = 1
		sizes[++ns] = s
	}
	k = ++nrun[mode, s]
	t[mode, s, k] = v["usec_per_xfer"]
	val["lat", mode, s, k] = v["usec_per_xfer"]
	val["bw", mode, s, k] = v["mb_per_sec"]
	val["rate", mode, s, k] = v["mxfers_per_sec"]
	lat[mode, s] = lat[mode, s] " " v["usec_per_xfer"]
	bw[mode, s] = bw[mode, s] " " v["mb_per_sec"]
	rate[mode, s] = rate[mode, s] " " v["mxfers_per_sec"]
}
# DAT's cost in usec over raw's: a target of its own (shm's ping-pong).
function target_add(what, dd, lim,    ok) {
	if (brief || info)
		return
	ok = dd <= lim
	printf "target  %-34s DAT-raw %+6.3f usec <= %.2f  %s\n", what, dd,
		lim, ok ? "PASS" : "MISS"
}
function target(what, r, op, lim) {
	if (brief)
		return
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
# The fast runs alone, where some are slow and each mode has fast ones.
function fastrow(s, lim, what, scale, fmt,    fd, fr, nd, nr, d, r) {
	if (brief)
		return
	fd = pick(what, "dat", s, lim, 1)
	nd = nsel
	fr = pick(what, "raw", s, lim, 1)
	nr = nsel
	if (nd == nrun["dat", s] && nr == nrun["raw", s])
		return
	if (nd == 0 || nr == 0) {
		printf "  fast runs only: none in %s\n", nd ? "raw" : "DAT"
		return
	}
	d = median(fd) * scale
	r = median(fr) * scale
	printf "  fast runs only: DAT " fmt ", raw " fmt ", DAT/raw %.3f (%d and %d runs)\n",
		d, r, d / r, nd, nr
}
END {
	cm = (prog == "dat_cm_rate")
	pp = (prog == "dat_pingpong")
	if (cm)
		printf "%-8s %14s %14s %9s %9s %9s\n", "bytes", "DAT conn/s",
			"raw conn/s", "DAT/raw", "slow DAT", "slow raw"
	else if (pp)
		printf "%-8s %12s %12s %9s %9s %9s\n", "bytes", "DAT usec",
			"raw usec", "DAT/raw", "slow DAT", "slow raw"
	else
		printf "%-8s %11s %11s %8s %11s %11s %9s %9s\n", "bytes",
			"DAT MB/s", "raw MB/s", "DAT/raw", "DAT Mmsg/s",
			"raw Mmsg/s", "slow DAT", "slow raw"
	for (k = 1; k <= ns; k++) {
		s = sizes[k]
		if (!((("dat", s) in lat) && (("raw", s) in lat))) {
			printf "%-8d missing results\n", s
			continue
		}
		# Slow: over slowx times the fastest run's time, either mode.
		best = lowest(lat["dat", s] " " lat["raw", s])
		lim = slowx * best
		pick("lat", "dat", s, lim, 0)
		sd = nsel "/" nrun["dat", s]
		pick("lat", "raw", s, lim, 0)
		sr = nsel "/" nrun["raw", s]
		if (cm) {
			d = median(rate["dat", s]) * 1e6
			r = median(rate["raw", s]) * 1e6
			printf "%-8s %14.0f %14.0f %9.3f %9s %9s\n", "-", d, r,
				d / r, sd, sr
			fastrow(s, lim, "rate", 1e6, "%.0f conn/s")
			target("connection rate", d / r, ">=", 0.80)
			printf "%s %s\n", d, r >cmout
		} else if (pp) {
			d = median(lat["dat", s])
			r = median(lat["raw", s])
			printf "%-8d %12.3f %12.3f %9.3f %9s %9s\n", s, d, r,
				d / r, sd, sr
			fastrow(s, lim, "lat", 1, "%.3f usec")
			if (s == 8 && test == "send")
				target("8-byte ping-pong latency", d / r, "<=", 1.05)
			if (s == 8 && test == "send" && ia == "ofi-shm")
				target_add("8-byte ping-pong, shm", d - r, 0.2)
			else if (s == 8 && (test == "writeimm" || test == "atomic"))
				target("8-byte " test " ping-pong latency",
					d / r, "<=", 1.05)
		} else {
			db = median(bw["dat", s])
			rb = median(bw["raw", s])
			dm = median(rate["dat", s])
			rm = median(rate["raw", s])
			printf "%-8d %11.2f %11.2f %8.3f %11.4f %11.4f %9s %9s\n",
				s, db, rb, db / rb, dm, rm, sd, sr
			if (s >= 65536 && !brief)
				printf "  runs, MB/s: DAT%s; raw%s\n",
					runs(bw["dat", s]), runs(bw["raw", s])
			fastrow(s, lim, "bw", 1, "%.0f MB/s")
			if (s >= 65536)
				target(sprintf("%s bandwidth at %d bytes", test, s),
					db / rb, ">=", 0.97)
			if (s == 8 && test == "send")
				target("8-byte message rate", dm / rm, ">=", 0.90)
			else if (s == 8 && (test == "writeimm" || test == "atomic"))
				target("8-byte " test " message rate", dm / rm,
					">=", 0.90)
		}
		# The chart's data: size, then median, lowest, highest of DAT
		# and of raw (usec per transfer, or MB/s).
		if (plot != "" && !cm) {
			printf "%d %s %s %s %s %s %s\n", s,
				median(pp ? lat["dat", s] : bw["dat", s]),
				lowest(pp ? lat["dat", s] : bw["dat", s]),
				highest(pp ? lat["dat", s] : bw["dat", s]),
				median(pp ? lat["raw", s] : bw["raw", s]),
				lowest(pp ? lat["raw", s] : bw["raw", s]),
				highest(pp ? lat["raw", s] : bw["raw", s]) >plot
		}
	}
	if (!brief)
		printf "(slow: a run over %.1fx the time per transfer of the fastest run of its size, DAT or raw)\n", slowx
}
EOF
	[ -n "$pdata" ] && [ -s "$pdata" ] && chart "$pdata" "$ia" "$n" "$prog" "$test"
	return 0
}

# chart DATA IA PAIRS PROGRAM TEST: DATA's PNG beside it (.png for .data).
chart() {
	local data=$1 ia=$2 n=$3 prog=$4 test=$5 png what ylabel xlo xhi
	png=${data%.data}.png
	case $prog/$test in
	dat_pingpong/send) what="send/recv ping-pong" ;;
	dat_pingpong/write) what="RDMA-write ping-pong" ;;
	dat_bw/write) what="RDMA-write bandwidth" ;;
	dat_bw/read) what="RDMA-read bandwidth" ;;
	*) what="$test bandwidth" ;;
	esac
	if [ "$prog" = dat_pingpong ]; then
		ylabel="usec per transfer (half a round trip)"
	else
		ylabel="MB/s (10^6 bytes)"
	fi
	if [ "$(wc -l <"$data")" -lt 2 ]; then
		echo "(no chart: one size only)"
		return 0
	fi
	# The x range: the sizes, with room for the bars on either side.
	read -r xlo xhi < <(awk 'NR == 1 { lo = $1 } { hi = $1 }
		END { print lo / 1.6, hi * 1.6 }' "$data")
	"$gnuplot" <<EOF || { echo "bench-compare: gnuplot failed on $data" >&2; failed=1; return 1; }
set terminal pngcairo size 720,440 font "sans,10"
set output "$png"
set title "$what over $ia: DAT and raw libfabric\\nmedian of $n runs each, bars from the fastest run to the slowest"
set xlabel "message size (bytes; ki = 1024)"
set ylabel "$ylabel"
set logscale xy
set xrange [$xlo:$xhi]
set format x "%.0b%B"
set xtics 1, 4
set grid
set key top left
set bars small
plot "$data" using (\$1 / 1.04):2:3:4 with yerrorlines lw 2 pt 7 ps 0.6 title "DAT (dapl-ofi)", \\
     "$data" using (\$1 * 1.04):5:6:7 with yerrorlines lw 2 pt 5 ps 0.6 title "raw libfabric"
EOF
	echo "chart: $png"
}

# The runs of an earlier -k, from its index: a line a comparison, NAME|IA|
# PAIRS|INFO|RAW ARGS|PROGRAM ARGS, its runs' '#detail' lines in
# NAME.dat and NAME.raw (DAT's first run's stderr in NAME.dat.0.err).
from_index() {
	local name ia n info rawx cmd argv
	while IFS='|' read -r name ia n info rawx cmd; do
		read -r -a argv <<<"$cmd"
		report "$from" "$name" "$ia" "$n" "$info" "$rawx" "${argv[@]}"
	done <"$from/index"
}

if [ -n "$from" ]; then
	from_index
elif [ $# -gt 0 ]; then
	prog=$1
	shift
	case $prog in
	dat_pingpong | dat_bw) name=${prog#dat_}-$(test_of "$@") ;;
	dat_cm_rate) name=cm_rate ;;
	*) echo "bench-compare: unknown program '$prog'" >&2; exit 2 ;;
	esac
	compare "$name" "$prog" "$@"
elif [ -n "$plotdir" ]; then
	# Size sweeps, powers of 4: ping-pongs 2000 round trips a size,
	# bandwidth fabtests' counts (20000 messages, 2000 from 64 KiB, 200
	# from 1 MiB).
	sweep=1,4,16,64,256,1k,4k,16k,64k,256k,1m
	compare pingpong-send dat_pingpong -t send -S "$sweep" -I 2000
	compare pingpong-write dat_pingpong -t write -S "$sweep" -I 2000
	compare bw-write dat_bw -t write -S "$sweep,4m"
	compare bw-send dat_bw -t send -S "$sweep,4m"
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
	# An RDM connection costs an endpoint of the provider's own (rxm:
	# tens of MiB of bounce buffers, 0.1-0.3 s here): fewer of them.
	all_ias=("${ias[@]}")
	msg_ias=()
	rdm_ias=()
	for ia in "${all_ias[@]}"; do
		case $ia in
		ofi-rxm | ofi-shm | ofi-rxd | ofi-efa) rdm_ias+=("$ia") ;;
		*) msg_ias+=("$ia") ;;
		esac
	done
	if [ ${#msg_ias[@]} -gt 0 ]; then
		ias=("${msg_ias[@]}")
		compare cm dat_cm_rate -I 3000 -w 50
	fi
	if [ ${#rdm_ias[@]} -gt 0 ]; then
		ias=("${rdm_ias[@]}")
		compare cm dat_cm_rate -I 50 -w 5
	fi
	ias=("${all_ias[@]}")
fi

# Connection rates against ofi-tcp's, where both ran (not with --from):
# the medians the tables printed, DAT against DAT and raw against raw.
if [ -z "$from" ]; then
	for kind in cm cm_rate; do
		tcp=$work/$kind.ofi-tcp.cm
		[ -s "$tcp" ] || continue
		for f in "$work/$kind".*.cm; do
			[ "$f" = "$tcp" ] && continue
			other=${f##*/"$kind".}
			other=${other%.cm}
			read -r d r <"$f"
			read -r td tr <"$tcp"
			awk -v o="$other" -v d="$d" -v r="$r" -v td="$td" \
				-v tr="$tr" 'BEGIN {
				printf "\nconnection rate, %s against ofi-tcp: DAT %.1f / %.0f conn/s = %.3g, raw %.1f / %.0f conn/s = %.3g\n",
					o, d, td, d / td, r, tr, r / tr }'
		done
	done
fi

if [ "$failed" -ne 0 ]; then
	echo
	echo "bench-compare: a run failed"
	exit 1
fi
exit 0
