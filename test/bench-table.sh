#!/bin/bash
# bench-compare.sh's tables from canned runs (--from): medians of odd and
# even counts, DAT/raw, the slow-run counts (over 1.3x the fastest run of
# the size, either mode: just under the limit is fast), the fast-run
# medians, the chart data, and what --plot says without gnuplot.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cmp="$top_srcdir/fabtests-dat/scripts/bench-compare.sh"
fail=0
check() { # description, then a command that must succeed
	local d=$1
	shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-table.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
runs="$tmp/runs"
mkdir "$runs"

# detail SIZE XFERS_PER_ITER USEC...: a '#detail' line a run, as the
# benchmarks print them (MB/s = size / usec per transfer).
detail() {
	local size=$1 u
	shift
	for u in "$@"; do
		awk -v s="$size" -v u="$u" 'BEGIN {
			printf "#detail size=%d iters=1000 usec=%.3f mb_per_sec=%.4f usec_per_xfer=%.5f mxfers_per_sec=%.6f empty_polls=0\n",
				s, u * 1000, s / u, u, 1 / u }'
	done
}

# Ping-pong, 3 runs a mode, sizes in the order the runs print them:
#   8:     DAT 4.5 6.5 4.6, raw 4.4 4.5 4.7: limit 1.3 x 4.4 = 5.72
#   4096:  DAT 5.0 6.49 5.2, raw 5.1 6.51 5.3: limit 6.5
#   65536: DAT 10 24 25, raw 9.8 10.2 23: limit 12.74
# One run of each size after the other, as a benchmark prints them.
pp_mode() { # USEC of run 1 at each size, then of run 2, then run 3
	while [ $# -ge 3 ]; do
		detail 8 "$1"
		detail 4096 "$2"
		detail 65536 "$3"
		shift 3
	done
}
pp_mode 4.5 5.0 10 6.5 6.49 24 4.6 5.2 25 >"$runs/pingpong-send.ofi-tcp.dat"
pp_mode 4.4 5.1 9.8 4.5 6.51 10.2 4.7 5.3 23 >"$runs/pingpong-send.ofi-tcp.raw"
echo '# lib /canned/libdaplofi.so.2' >"$runs/pingpong-send.ofi-tcp.dat.0.err"

# Bandwidth, 4 runs a mode at 65536 bytes (MB/s: DAT 5000 3900 2500 4800,
# raw 5200 3000 5100 5000): medians of an even count; limit 1.3 x the
# time of 5200 MB/s, so 3900 and 2500 are slow, and 3000.
bw_runs() {
	local mb
	for mb in "$@"; do
		detail 65536 "$(awk -v m="$mb" 'BEGIN { printf "%.6f", 65536 / m }')"
	done
}
bw_runs 5000 3900 2500 4800 >"$runs/bw-write.ofi-tcp.dat"
bw_runs 5200 3000 5100 5000 >"$runs/bw-write.ofi-tcp.raw"
{
	echo 'pingpong-send.ofi-tcp|ofi-tcp|3|0||dat_pingpong -t send -S 8,4k,64k'
	echo 'bw-write.ofi-tcp|ofi-tcp|4|0||dat_bw -t write -S 64k'
} >"$runs/index"

bash "$cmp" --from "$runs" >"$tmp/out" 2>"$tmp/err"
check "--from exits 0" test $? -eq 0
check "nothing on stderr" test ! -s "$tmp/err"
cat >"$tmp/want" <<'EOF'

== dat_pingpong -t send -S 8,4k,64k (ofi-tcp, 3 pairs) ==
  using /canned/libdaplofi.so.2
bytes        DAT usec     raw usec   DAT/raw  slow DAT  slow raw
8               4.600        4.500     1.022       1/3       0/3
  fast runs only: DAT 4.550 usec, raw 4.500 usec, DAT/raw 1.011 (2 and 3 runs)
target  8-byte ping-pong latency           DAT/raw  1.022 <= 1.05  PASS
4096            5.200        5.300     0.981       0/3       1/3
  fast runs only: DAT 5.200 usec, raw 5.200 usec, DAT/raw 1.000 (3 and 2 runs)
65536          24.000       10.200     2.353       2/3       1/3
  fast runs only: DAT 10.000 usec, raw 10.000 usec, DAT/raw 1.000 (1 and 2 runs)
(slow: a run over 1.3x the time per transfer of the fastest run of its size, DAT or raw)

== dat_bw -t write -S 64k (ofi-tcp, 4 pairs) ==
bytes       DAT MB/s    raw MB/s  DAT/raw  DAT Mmsg/s  raw Mmsg/s  slow DAT  slow raw
65536        4350.00     5050.00    0.861      0.0664      0.0771       2/4       1/4
  runs, MB/s: DAT 2500 3900 4800 5000; raw 3000 5000 5100 5200
  fast runs only: DAT 4900 MB/s, raw 5100 MB/s, DAT/raw 0.961 (2 and 3 runs)
target  write bandwidth at 65536 bytes     DAT/raw  0.861 >= 0.97  MISS
(slow: a run over 1.3x the time per transfer of the fastest run of its size, DAT or raw)
EOF
check "the tables: medians, DAT/raw, slow counts, fast runs, targets" \
	diff -u "$tmp/want" "$tmp/out"

# -s: the table rows alone.
bash "$cmp" --from "$runs" -s >"$tmp/out" 2>&1
check "-s: rows only" diff -u - "$tmp/out" <<'EOF'

== dat_pingpong -t send -S 8,4k,64k (ofi-tcp, 3 pairs) ==
  using /canned/libdaplofi.so.2
bytes        DAT usec     raw usec   DAT/raw  slow DAT  slow raw
8               4.600        4.500     1.022       1/3       0/3
4096            5.200        5.300     0.981       0/3       1/3
65536          24.000       10.200     2.353       2/3       1/3

== dat_bw -t write -S 64k (ofi-tcp, 4 pairs) ==
bytes       DAT MB/s    raw MB/s  DAT/raw  DAT Mmsg/s  raw Mmsg/s  slow DAT  slow raw
65536        4350.00     5050.00    0.861      0.0664      0.0771       2/4       1/4
EOF

# The chart's data (median, fastest, slowest of each mode), whatever
# draws it: here a gnuplot that reads its script and draws nothing.
GNUPLOT=true bash "$cmp" --from "$runs" -s --plot "$tmp/plots" >"$tmp/out" 2>&1
check "--plot with a gnuplot exits 0" test $? -eq 0
check "chart data per size: median, lowest, highest, DAT then raw" \
	diff -u - "$tmp/plots/ofi-tcp-pingpong-send.data" <<'EOF'
8 4.60000 4.50000 6.50000 4.50000 4.40000 4.70000
4096 5.20000 5.00000 6.49000 5.30000 5.10000 6.51000
65536 24.00000 10.00000 25.00000 10.20000 9.80000 23.00000
EOF
check "a one-size pattern gets no chart" \
	grep -qx '(no chart: one size only)' "$tmp/out"

# No gnuplot: a clear message, before any run.
GNUPLOT=/nonexistent/gnuplot bash "$cmp" --from "$runs" --plot "$tmp/p2" \
	>"$tmp/out" 2>"$tmp/err"
check "--plot without gnuplot exits 2" test $? -eq 2
check "... and names the Debian package" grep -q 'gnuplot-nox' "$tmp/err"
check "... and prints no table" test ! -s "$tmp/out"

bash "$cmp" -n 2 dat_pingpong >/dev/null 2>"$tmp/err"
check "-n 2: refused" test $? -eq 2
check "... at least 3 pairs" grep -q 'at least 3 pairs' "$tmp/err"

exit $fail
