#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# bench-scale.sh: what connections cost at scale, DAT against raw
# libfabric, from dat_cm_rate -N (see fabtests-dat/benchmarks/README.md):
#
#   a) usec per new connection (connect + disconnect, one at a time) while
#      N connections are held open, established and idle
#   b) memory (VmRSS) and file descriptors per connected idle EP, default
#      EP attributes, each side; DAT minus raw (target: <= 4 KiB); TCP
#      sockets on the connection port (dapl-ofi on RDM fabrics, ofi-rxm
#      and ofi-shm: its control channel, which grows with peers, not
#      connections) and other TCP sockets per connection (rxm's own)
#   c) ns per empty dequeue on one DTO EVD (raw: fi_cq_read on one CQ) and
#      usec per EP of a round of one message to every EP and back, with a
#      DTO EVD shared by all EPs and with one per EP
#   d) seconds to disconnect and free the N held connections one at a time
#      (DAT: dat_ep_disconnect, its DISCONNECTED event, dat_ep_free; raw:
#      fi_shutdown, fi_close), until the server has freed its side too
#
# a), b) and d) come from the same runs, one per N and mode; c) from runs
# of their own. Every run is a server and a client of dat_cm_rate in a
# network namespace of its own (unshare -n, lo up), so no TIME_WAIT socket
# or other test's port is in the way, each under timeout(1), tracked by
# PID. Unless DAT_OVERRIDE is set, DAT runs use a dat.conf written in the
# work directory that gives the built-in IA names loopback instance data
# ("tcp lo", "sockets lo", ...). DAT and raw alternate; each figure is
# the median of the runs. A run that hits the time cap (-T) counts with
# what it printed before (setup and memory come first, teardown last) and
# is marked in the table.
# Exit status: 0 when every run finished, 1 when a run failed or hit the
# cap, 2 on bad usage.
#
# Usage: bench-scale.sh [options]
#
# Options:
#   -q          quick: N = 0 200 1000, c) at 500 both ways, 3 rounds,
#               200 cycles, one run each (unless -n)
#   -n RUNS     runs per mode and N (default 3)
#   -N LIST     held connections for a), b), d) (default "0 500 2000 10000")
#   -c N        held connections for c) with a shared DTO EVD (default 4000)
#   -e N        held connections for c) with a DTO EVD per EP (default 4000,
#               lowered to what RLIMIT_NOFILE's hard limit takes at 7 fds
#               per connection; 0: skip)
#   -r ROUNDS   message rounds in c) (default 10)
#   -I ITERS    timed connect + disconnect cycles per run (default 500)
#   -w ITERS    warm-up cycles (default 20)
#   -m MODES    "dat raw" (default), "dat" or "raw"
#   -T SECONDS  cap on each run (default 1800)
#   -D IA       IA name (default ofi-tcp; --raw maps it to the provider)
#   -B DIR      directory holding dat_cm_rate (default: $BENCH_BINDIR, else
#               ./fabtests-dat/benchmarks, else the build tree next to
#               this script)
#   -U          leave the processes unpinned (default: with two or more
#               CPUs the server on CPU 1, the client on CPU 0)
#   -k          keep the per-run logs and say where
#   -h          this text
#
# Examples:
#   fabtests-dat/scripts/bench-scale.sh -q
#   fabtests-dat/scripts/bench-scale.sh -n 5 -N "0 2000" -c 0 -e 0

set -u

runs=
nlist="0 500 2000 10000"
cshared=4000
cown=4000
rounds=10
iters=500
warm=20
modes="dat raw"
tmo=1800
ia=ofi-tcp
bindir=${BENCH_BINDIR:-}
pin=1
keep=0
quick=0

usage() {
	sed -n '/^# Usage:/,/^$/p' "$0" | sed 's/^# \{0,1\}//'
}

num() {
	case $2 in
	'' | *[!0-9]*)
		echo "bench-scale: $1 wants a number" >&2
		exit 2
		;;
	esac
}

while getopts "qn:N:c:e:r:I:w:m:T:D:B:Ukh" opt; do
	case $opt in
	q) quick=1 ;;
	n) num -n "$OPTARG"; runs=$OPTARG ;;
	N) nlist=$OPTARG; N_set=1 ;;
	c) num -c "$OPTARG"; cshared=$OPTARG; c_set=1 ;;
	e) num -e "$OPTARG"; cown=$OPTARG; e_set=1 ;;
	r) num -r "$OPTARG"; rounds=$OPTARG; r_set=1 ;;
	I) num -I "$OPTARG"; iters=$OPTARG; i_set=1 ;;
	w) num -w "$OPTARG"; warm=$OPTARG ;;
	m) modes=$OPTARG ;;
	T) num -T "$OPTARG"; tmo=$OPTARG ;;
	D) ia=$OPTARG ;;
	B) bindir=$OPTARG ;;
	U) pin=0 ;;
	k) keep=1 ;;
	h) usage; exit 0 ;;
	*) usage >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { usage >&2; exit 2; }
if [ "$quick" = 1 ]; then
	[ -n "${N_set:-}" ] || nlist="0 200 1000"
	[ -n "${c_set:-}" ] || cshared=500
	[ -n "${e_set:-}" ] || cown=500
	[ -n "${r_set:-}" ] || rounds=3
	[ -n "${i_set:-}" ] || iters=200
	runs=${runs:-1}
fi
runs=${runs:-3}
[ "$runs" -ge 1 ] || { echo "bench-scale: -n 1 or more" >&2; exit 2; }
for n in $nlist; do num -N "$n"; done
for m in $modes; do
	case $m in
	dat | raw) ;;
	*) echo "bench-scale: unknown mode '$m'" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" != 0 ] || ! unshare -n true 2>/dev/null; then
	echo "bench-scale: needs 'unshare -n' (root): every run gets a network namespace" >&2
	exit 2
fi

# shellcheck source=fabtests-dat/scripts/bench-lib.sh
. "$(cd "$(dirname "$0")" && pwd)/bench-lib.sh" || exit 2
bench_find_bindir bench-scale dat_cm_rate || exit 2

# Each side raises its descriptor limit to the hard one; an EP with its own
# DTO EVD takes 6 descriptors on DAT (5 raw) against 1 with a shared one,
# and a server more while requests wait for their accept: room for 7 (at
# 6, the DAT server ran out at 3,316 of a limit of 20,000).
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$cown" -gt 0 ] &&
	[ $((cown * 7 + 100)) -gt "$hard" ]; then
	echo "bench-scale: RLIMIT_NOFILE hard limit $hard: c) with an EVD per EP at $(((hard - 100) / 7)) connections, not $cown"
	cown=$(((hard - 100) / 7))
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-scale.XXXXXX") || exit 1
# DAT's IA names on lo, unless DAT_OVERRIDE says otherwise: the namespaces
# have only lo, but an IA named for another interface would not open.
bench_loopback_conf bench-scale "$work" || exit 1
declare -a live_pids=()
failed=0

# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local p
	for p in "${live_pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	if [ "$keep" = 1 ]; then
		echo "bench-scale: logs in $work"
	else
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'echo "bench-scale: interrupted" >&2; exit 1' INT TERM

# What runs in each namespace: the server and the client, each under
# timeout, the client's output in OUT.out (its -v in OUT.err).
# shellcheck disable=SC2016
inner='
bindir=$1 tmo=$2 out=$3 pin=$4
shift 4
ip link set lo up || exit 90
spin=() cpin=()
if [ "$pin" = 1 ]; then
	spin=(taskset -c 1)
	cpin=(taskset -c 0)
fi
timeout -k 5 "$tmo" "${spin[@]}" "$bindir/dat_cm_rate" -p 24000 -v "$@" \
	>"$out.srv" 2>&1 &
spid=$!
timeout -k 5 "$tmo" "${cpin[@]}" "$bindir/dat_cm_rate" -p 24000 --detail -v \
	"$@" 127.0.0.1 >"$out.out" 2>"$out.err"
crc=$?
[ "$crc" -ne 0 ] && kill "$spid" 2>/dev/null
wait "$spid"
src=$?
[ "$crc" -eq 124 ] || [ "$crc" -eq 137 ] && exit 124
[ "$crc" -eq 0 ] && [ "$src" -eq 0 ] && exit 0
exit 1
'

if [ "$pin" = 1 ] && { [ "$(nproc)" -lt 2 ] || ! command -v taskset >/dev/null 2>&1; }; then
	pin=0
fi
# A wait inside a run (and DAT's connect timeout) gives up after this.
ptmo=$((tmo < 600 ? tmo : 600))

# run KIND N MODE REP ARGS...: one run; a line in $work/runs.
run() {
	local kind=$1 n=$2 mode=$3 rep=$4 tag rc pid t0 t1
	shift 4
	tag="$kind.$n.$mode.$rep"
	local extra=()
	[ "$mode" = raw ] && extra=(--raw)
	t0=$(date +%s)
	timeout -k 10 $((tmo + 30)) unshare -n -- bash -c "$inner" inner \
		"$bindir" "$tmo" "$work/$tag" "$pin" -D "$ia" -T "$ptmo" \
		"${extra[@]}" "$@" &
	pid=$!
	live_pids=("$pid")
	wait "$pid"
	rc=$?
	live_pids=()
	t1=$(date +%s)
	case $rc in
	0) st=ok ;;
	124) st=timeout; failed=1 ;;
	*) st=failed; failed=1 ;;
	esac
	printf '  %-7s N=%-6s %-3s run %d: %s, %d s\n' "$kind" "$n" "$mode" \
		"$rep" "$st" $((t1 - t0))
	if [ "$st" = failed ]; then
		tail -n 4 "$work/$tag.err" 2>/dev/null | sed 's/^/    client: /'
		tail -n 4 "$work/$tag.srv" 2>/dev/null | sed 's/^/    server: /'
	fi
	echo "$tag $kind $n $mode $st" >>"$work/runs"
}

echo "bench-scale: $bindir/dat_cm_rate, $ia, $runs run(s) each, cap ${tmo} s per run"
echo "  a) b) d): N = $nlist, -I $iters -w $warm; c): shared EVD at N=$cshared, EVD per EP at N=$cown, $rounds rounds"
: >"$work/runs"
for ((rep = 1; rep <= runs; rep++)); do
	# Alternate which mode goes first, so drift hits both alike.
	if ((rep % 2)); then order=$modes; else
		order=$(echo "$modes" | awk '{for (i = NF; i; i--) printf "%s ", $i}')
	fi
	for n in $nlist; do
		for mode in $order; do
			run scale "$n" "$mode" "$rep" -N "$n" -I "$iters" -w "$warm"
		done
	done
	if [ "$cshared" -gt 0 ]; then
		for mode in $order; do
			run shared "$cshared" "$mode" "$rep" -N "$cshared" \
				--rounds "$rounds" -I 20 -w 2
		done
	fi
	if [ "$cown" -gt 0 ]; then
		for mode in $order; do
			run own "$cown" "$mode" "$rep" -N "$cown" --evd-per-ep \
				--rounds "$rounds" -I 20 -w 2
		done
	fi
done

for f in "$work"/*.err; do
	grep -h '^# lib ' "$f" 2>/dev/null
done | sort -u | sed 's/^# lib /  using /'

# The table: every run's '#scale' and '#detail' lines, by kind, N, mode.
while read -r tag kind n mode st; do
	awk -v kind="$kind" -v n="$n" -v mode="$mode" -v st="$st" '
	BEGIN { printf "run %s %s %s %s\n", kind, n, mode, st }
	/^#detail / || /^#scale / {
		delete v
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			v[kv[1]] = kv[2]
		}
		if ($1 == "#detail")
			printf "val %s %s %s rate %s\n", kind, n, mode, v["usec_per_xfer"]
		else if (v["phase"] == "setup")
			printf "val %s %s %s setup %s\n", kind, n, mode, v["usec_per_conn"]
		else if (v["phase"] == "memory") {
			printf "val %s %s %s mem_%s %s\n", kind, n, mode, v["side"], v["kib_per_ep"]
			printf "val %s %s %s fds_%s %s\n", kind, n, mode, v["side"], v["fds_per_conn"]
		} else if (v["phase"] == "sockets") {
			printf "val %s %s %s ctl_%s %s\n", kind, n, mode, v["side"], v["port_tcp"]
			printf "val %s %s %s tcp_%s %s\n", kind, n, mode, v["side"], v["other_per_conn"]
		} else if (v["phase"] == "dequeue")
			printf "val %s %s %s deq %s\n", kind, n, mode, v["ns"]
		else if (v["phase"] == "round")
			printf "val %s %s %s round %s\n", kind, n, mode, v["usec_per_ep"]
		else if (v["phase"] == "teardown")
			printf "val %s %s %s teardown %s\n", kind, n, mode, v["usec"] / 1e6
	}' "$work/$tag.out"
done <"$work/runs" >"$work/values"

echo
awk -v nlist="$nlist" -v cshared="$cshared" -v cown="$cown" -v tmo="$tmo" \
	-v rounds="$rounds" '
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
		return ""
	if (n % 2)
		return a[(n + 1) / 2]
	return (a[n / 2] + a[n / 2 + 1]) / 2
}
function count(list,    a) {
	return split(list, a, " ")
}
# A cell: the median, or what the runs came to without a figure.
function cell(kind, n, mode, fig, fmt,    m) {
	m = median(val[kind, n, mode, fig])
	if (m != "")
		return sprintf(fmt, m)
	if ((kind, n, mode) in bad)
		return bad[kind, n, mode]
	if (!((kind, n, mode) in ran))
		return "-"
	return "n/a"
}
# A row: DAT and raw medians, their ratio or difference, runs with a
# figure per mode (and how many of them hit the cap).
function row(label, kind, n, fig, fmt, how,    d, r, dm, rm, cmp, note) {
	d = cell(kind, n, "dat", fig, fmt)
	r = cell(kind, n, "raw", fig, fmt)
	dm = median(val[kind, n, "dat", fig])
	rm = median(val[kind, n, "raw", fig])
	cmp = ""
	if (dm != "" && rm != "") {
		if (how == "ratio" && rm + 0 > 0)
			cmp = sprintf("x%.2f", dm / rm)
		else if (how == "diff")
			cmp = sprintf("%+.2f", dm - rm)
	}
	note = sprintf("%d/%d", count(val[kind, n, "dat", fig]),
		count(val[kind, n, "raw", fig]))
	if (tout[kind, n, "dat"] || tout[kind, n, "raw"])
		note = note sprintf(", capped %d/%d", tout[kind, n, "dat"],
			tout[kind, n, "raw"])
	if (nfail[kind, n, "dat"] || nfail[kind, n, "raw"])
		note = note sprintf(", failed %d/%d", nfail[kind, n, "dat"],
			nfail[kind, n, "raw"])
	printf "%-40s %6s %12s %12s %9s  %s\n", label, n, d, r, cmp, note
}
$1 == "run" {
	ran[$2, $3, $4] = 1
	if ($5 == "timeout") {
		tout[$2, $3, $4]++
		bad[$2, $3, $4] = sprintf(">%ds", tmo)
	} else if ($5 == "failed") {
		nfail[$2, $3, $4]++
		bad[$2, $3, $4] = "failed"
	}
}
$1 == "val" { val[$2, $3, $4, $5] = val[$2, $3, $4, $5] " " $6 }
END {
	k = split(nlist, ns, " ")
	printf "%-40s %6s %12s %12s %9s  %s\n", "figure (medians)", "N", "DAT",
		"raw", "DAT/raw", "runs with a figure, DAT/raw"
	for (i = 1; i <= k; i++)
		row("a) usec per new connection", "scale", ns[i], "rate", "%.2f", "ratio")
	for (i = 1; i <= k; i++) {
		if (ns[i] == 0)
			continue
		row("b) KiB per idle EP, client", "scale", ns[i], "mem_client", "%.2f", "diff")
		row("b) KiB per idle EP, server", "scale", ns[i], "mem_server", "%.2f", "diff")
	}
	for (i = 1; i <= k; i++) {
		if (ns[i] == 0)
			continue
		row("b) fds per connection, client", "scale", ns[i], "fds_client", "%.2f", "diff")
		row("b) fds per connection, server", "scale", ns[i], "fds_server", "%.2f", "diff")
	}
	for (i = 1; i <= k; i++) {
		if (ns[i] == 0)
			continue
		row("b) TCP sockets on the port, client", "scale", ns[i], "ctl_client", "%.0f", "diff")
		row("b) TCP sockets on the port, server", "scale", ns[i], "ctl_server", "%.0f", "diff")
		row("b) other TCP sockets/connection, client", "scale", ns[i], "tcp_client", "%.2f", "diff")
		row("b) other TCP sockets/connection, server", "scale", ns[i], "tcp_server", "%.2f", "diff")
	}
	if (cshared > 0) {
		row("c) ns per empty dequeue, shared EVD", "shared", cshared, "deq", "%.1f", "ratio")
		row("c) usec/EP, message round, shared EVD", "shared", cshared, "round", "%.3f", "ratio")
	}
	if (cown > 0) {
		row("c) ns per empty dequeue, EVD per EP", "own", cown, "deq", "%.1f", "ratio")
		row("c) usec/EP, message round, EVD per EP", "own", cown, "round", "%.3f", "ratio")
		row("c) KiB per idle EP+EVD, client", "own", cown, "mem_client", "%.2f", "diff")
		row("c) fds per connection+EVD, client", "own", cown, "fds_client", "%.2f", "diff")
	}
	for (i = 1; i <= k; i++) {
		if (ns[i] == 0)
			continue
		row("d) s to disconnect + free all held", "scale", ns[i], "teardown", "%.3f", "ratio")
	}
	for (i = 1; i <= k; i++) {
		if (ns[i] == 0)
			continue
		row("   usec per connection, setting up N", "scale", ns[i], "setup", "%.1f", "ratio")
	}
	print ""
	print "DAT/raw: xRATIO of the medians; for memory and fds the difference."
	print "b) target: DAT at most 4 KiB per EP above raw."
	print "b) TCP sockets on the port: the connection port (-P, 24001); dapl-ofi"
	print "   on RDM fabrics: its control channel; on tcp the connections."
}' "$work/values"

if [ "$failed" -ne 0 ]; then
	echo
	echo "bench-scale: a run failed or hit the cap (-T $tmo); see above"
	exit 1
fi
exit 0
