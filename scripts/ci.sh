#!/bin/bash
# The two commands README.md gives, and what CI runs:
#   scripts/ci.sh main   install dependencies, build, run the main job
#   scripts/ci.sh test   install dependencies, build, run the whole suite
# Both work on a fresh Debian 12 machine as root (or with sudo).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
jobs=$(nproc 2>/dev/null || echo 2)

# Debian packages: toolchain, libfabric, hwloc, Check, rdma-core, the
# OFED reference (headers, libdat2, test programs) used only by tests, and
# what builds and checks our own .debs (debhelper, dpkg-dev, lintian).
packages=(
	build-essential autoconf automake libtool pkg-config
	debhelper dpkg-dev lintian
	libfabric-dev libfabric-bin libhwloc-dev check
	rdma-core libibverbs-dev
	libdapl-dev libdapl2 dapl2-utils
	clang python3 groff-base iproute2 valgrind
)

# Each section's heading carries the seconds since the script started,
# so a run's log shows where its time goes.
log() { printf '\n=== [%ds] %s\n' "$SECONDS" "$*"; }

deps() {
	local sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	local missing=()
	for p in "${packages[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		log "dependencies: all ${#packages[@]} packages installed"
		return
	fi
	log "dependencies: installing ${missing[*]}"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q \
		--no-install-recommends "${missing[@]}"
}

build() { # build dir, configure args...
	local dir=$1; shift
	log "build in $dir: configure $*"
	(cd "$top" && [ -x configure ] && [ configure -nt configure.ac ] ||
		./autogen.sh)
	mkdir -p "$dir"
	(cd "$dir" && "$top/configure" -q --enable-werror "$@" &&
		make -s -j"$jobs")
}

# A dat.conf that gives the built-in names loopback instance data, so
# every run stays on 127.0.0.1.
loopback_conf() {
	local conf="$build/dat.conf.loopback"
	{
		echo "# dapl-ofi CI: built-in names on the loopback"
		echo 'ofi-tcp u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "tcp lo" ""'
		echo 'ofi-sockets u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "sockets lo" ""'
	} >"$conf"
	echo "$conf"
}

# The main job: each pattern in DAT and on raw libfabric (the benchmark's
# --raw twin), alternately, 5 runs of each; per size the medians, DAT/raw
# and how many runs were slow (bench-compare.sh; README, "The main job").
main_job() {
	local rc=0 cmp=(bash "$top/fabtests-dat/scripts/bench-compare.sh" -s
		-n 5 -B "$build/fabtests-dat/benchmarks")
	export DAT_OVERRIDE
	DAT_OVERRIDE=$(loopback_conf)
	export LD_LIBRARY_PATH="$build/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	log "main job: the registry (dat_info, DAT_OVERRIDE=$DAT_OVERRIDE)"
	"$build/dat_info"
	log "main job: DAT against raw libfabric over ofi-tcp (loopback)"
	echo "Each figure is the median of 5 runs, DAT and raw alternately."
	echo "slow DAT, slow raw: runs over 1.3x the time of the fastest run"
	echo "of that size in either mode, TCP loopback's slow state."
	log "send/recv ping-pong, usec per transfer (half a round trip)"
	"${cmp[@]}" dat_pingpong -t send -S 8,64,1k,4k,64k -I 2000 || rc=1
	# DAT's writes on tcp complete once the target has them (dapl-ofi(7)):
	# raw asks for the same guarantee (FI_DELIVERY_COMPLETE).
	log "RDMA-write ping-pong, usec per transfer (both: delivery-complete writes)"
	"${cmp[@]}" -R --raw-write=delivery dat_pingpong -t write -S 8,4k,64k \
		-I 2000 || rc=1
	log "RDMA-write bandwidth (both: delivery-complete writes)"
	"${cmp[@]}" -R --raw-write=delivery dat_bw -t write -S 4k,64k,1m || rc=1
	return $rc
}

# flag WHAT: report a failed stage, and keep it for the list printed
# above the last line (CI may show only the tail of a run).
failed_list=()
flag() {
	echo "FAIL: $*"
	failed_list+=("$*")
}

# The end of a run is what a reader sees first: each failed runner test
# is listed there with the lines of its logs that say why.
why_list=()

# why_lines LOGDIR TEST IA: the FAIL lines of TEST's logs on IA, and a
# sanitizer's first lines of a report, each with what follows it (a
# backtrace), or the logs' last lines when none has one; at most 40
# lines, each cut at 300 characters.
why_lines() {
	local f out='' logs=()
	local what='^(FAIL|NOTRUN): |^WARNING: ThreadSanitizer|^==[0-9]+==ERROR: |runtime error: '
	for f in "$1/$2.$3".*log; do
		[ -f "$f" ] && logs+=("$f")
	done
	for f in "${logs[@]}"; do
		out+=$(grep -h -A 24 -m 3 -E "$what" "$f" |
			sed "s|^|${f##*/}: |")$'\n'
	done
	[ -n "${out//$'\n'/}" ] || for f in "${logs[@]}"; do
		out+=$(tail -n 6 "$f" | sed "s|^|${f##*/}: |")$'\n'
	done
	# Nothing to say is not a failure: the caller runs under set -e.
	printf '%s' "$out" | grep -v '^$' | head -n 40 | cut -c 1-300 || true
}

# failed_in OUT: the runner's failed tests in OUT, "<test> <ia>" a line.
failed_in() {
	sed -n -E 's/^([^ ]+ [^ ]+): Fail$/\1/p' "$1" 2>/dev/null || true
}

# why_runner OUT LOGDIR [STAGE]: keep, for each failed test in OUT, the
# lines of its logs in LOGDIR that say why (named after STAGE, if given).
why_runner() {
	local t
	while IFS= read -r t; do
		why_list+=("== ${3:+$3: }$t" "$(why_lines "$2" "${t% *}" "${t#* }")")
	done < <(failed_in "$1")
}

# flag_runner OUT [LOGDIR]: keep the runner's failed tests ("<test> <ia>:
# Fail"), and from LOGDIR the lines that say why.
flag_runner() {
	local t
	while IFS= read -r t; do
		failed_list+=("$t")
	done < <(failed_in "$1")
	[ -z "${2:-}" ] || why_runner "$1" "$2"
}

# count_runner OUT WHAT [LOGDIR]: add a conformance run's counts (its last
# line, in OUT) to test_job's pass, fail and skip, and keep its failed
# tests; no summary line is a failure of WHAT.
count_runner() {
	local r_pass='' r_fail='' r_skip=''
	read -r r_pass r_fail r_skip < <(runner_summary "$1") || true
	flag_runner "$1" "${3:-}"
	if [ -z "${r_pass:-}" ]; then
		flag "$2 printed no summary"
		fail=$((fail + 1))
	else
		pass=$((pass + r_pass)); fail=$((fail + r_fail))
		skip=$((skip + r_skip))
	fi
}

summary() { # test-suite.log -> counts
	awk '/^# (PASS|FAIL|XPASS|ERROR|SKIP):/ {n[$2]=$3}
	     END {printf "%d %d %d\n", n["PASS:"], n["FAIL:"]+n["XPASS:"]+n["ERROR:"], n["SKIP:"]}' "$1"
}

# The runner's last line: "N passed, N failed" or "N passed, N failed,
# N skipped" -> "pass fail skip" (skip 0 when absent); nothing if neither.
runner_summary() {
	tail -n 1 "$1" | sed -n -E \
		-e 's/^([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped$/\1 \2 \3/p' \
		-e 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2 0/p'
}

# What the RDM runs cover (issue 14), per IA: the tests that pass there
# every time; the exclude files (ofi-rxm.exclude, ofi-shm.exclude,
# ofi-rxd.exclude) give the fabric's reasons for the ones its own limits
# keep from passing.
# ofi-shm: the whole suite and OFED's interop group; dat_soak_kill parks
# its peer outside libfabric before each kill (runfabtests-dat.sh,
# shm_park): a peer killed while it holds the process-shared spin lock
# of a survivor's shm region leaves it held for good, and the survivor
# spins in libfabric, then faults when the endpoint closes (libfabric
# 1.17, not a dapl-ofi race; it was excluded for that).
# ofi-rxm: the functional tests (ofi-rxm.exclude gives rxm's reasons for
# two; dat_linkloss runs: the control channel sees the lost link), dtest
# (-c too), dtestsrq, dtestcm up to 256 connections
# (ofi-rxm.exclude: rxm's memory per endpoint keeps 1,000 and more off a
# 24 GiB machine), dapltest, and dat_soak_kill with whole messages
# where libfabric's rxm hangs on a peer killed mid-message
# (runfabtests-dat.sh, rxm_whole_messages). dtestx runs: rxm grants no
# send after write to a consumer that asks for atomics, so a write with
# immediate data waits for its Write's delivery before its message
# (dapl-ofi(7)).
# ofi-rxd: the functional tests (ofi-rxd.exclude gives rxd's reasons for
# three; dat_linkloss runs, as on ofi-rxm; dat_soak and dat_soak_kill
# run with -C, each side's Sends within the receives its peer has
# posted, as rxd mishandles a message that
# arrives before its receive: runfabtests-dat.sh, rxd_credit; dat_soak
# had been excluded for it), dtest (-W, -p and -c too), dtestx,
# dtestsrq (one connection and -c 8), dtestcm up to 1,000 connections
# (ofi-rxd.exclude: rxd's memory per endpoint) and dapltest. dtestsrq
# with one connection hung in about one run in five until rxd's
# endpoints got a transmit queue of twice its window (dapl-ofi(7), Queue
# sizes). dtest -p was left out while it failed now and then: 2 runs of
# 38 moved its 2,000 RDMA Writes of 4 MiB each way at under 50 MB/s and
# passed the time limit, while the progress thread read the receive EVD
# beside the consumer polling the request EVD of the same endpoint; 70
# of 70 passed once the thread left that EVD to the consumer's polling
# (dapl-ofi(7), DAPL_OFI_PROGRESS). One other failure, in CI: the
# server's first RDMA Write completed DAT_DTO_ERR_TRANSPORT, which is
# rxd's FI_ECONNREFUSED after 50 unanswered retransmissions (forcing one
# gives the same output), with the client stuck until the limit.
# Each run takes 2 to 4 minutes on two shared cores.

# The tests an IA's run leaves out while they fail (the comment above
# says why), a comma list for the runner's --skip, which reports each as
# left out and counts it as skipped. None at present.
rdm_left_out_of() { # IA
	case $1 in
	*) ;; # e.g. ofi-rxd) echo "interop_dtest_p,interop_dtest_c" ;;
	esac
}

test_job() {
	local rc=0 pass fail mc_skip skip=0
	build "$build"
	log "make check (gcc)"
	(cd "$build" && make -s -j"$jobs" check) || rc=1
	log "unit tests (Check)"
	cat "$build/test/check_dat.log" 2>/dev/null | grep -E '^[0-9]+%|:[FE]:' || true
	for t in "$build"/test/*.log "$build"/test/abi/*.log; do
		case "$t" in *check_dat.log) continue ;; esac
		[ -f "$t" ] && { echo "--- ${t#$build/}"; cat "$t"; }
	done
	read -r pass fail mc_skip < <(summary "$build/test-suite.log")
	local t_fail
	while read -r t_fail; do
		failed_list+=("make check: $t_fail")
	done < <(sed -n -E 's/^(FAIL|ERROR|XPASS): //p' "$build/test-suite.log")
	if [ "$mc_skip" -ne 0 ]; then
		flag "$mc_skip test(s) skipped although every dependency is installed"
		fail=$((fail + mc_skip))
	fi

	log "install: libdat.so links with -ldat; a DAT 1.2 program builds and runs"
	local dest="$build/destdir" prefix=/usr/local
	rm -rf "$dest"
	if (cd "$build" && make -s install DESTDIR="$dest" >/dev/null 2>&1) &&
		printf '#include <dat2/udat.h>\nint main(void){const char *a, *b;\nreturn dat_strerror(DAT_SUCCESS, &a, &b) != DAT_SUCCESS;}\n' >"$build/ldat.c" &&
		cc -I"$dest$prefix/include" "$build/ldat.c" -L"$dest$prefix/lib" -ldat -o "$build/ldat" &&
		LD_LIBRARY_PATH="$dest$prefix/lib" "$build/ldat" &&
		readelf -d "$build/ldat" | grep -q 'NEEDED.*\[libdat2.so.2\]'; then
		pass=$((pass + 1)); echo "ok: -ldat links to libdat2.so.2"
	else
		fail=$((fail + 1)); flag "-ldat"
	fi
	# A whole DAT 1.2 program, as its man pages build one: <dat/udat.h>
	# and cc -ldat from the installed tree, then run over ofi-tcp.
	if cc -I"$dest$prefix/include" "$top/test/dat12/dat12_app.c" \
		-L"$dest$prefix/lib" -ldat -o "$build/dat12_app" &&
		DAT_OVERRIDE=$(loopback_conf) LD_LIBRARY_PATH="$dest$prefix/lib" \
			timeout 120 "$build/dat12_app" ofi-tcp; then
		pass=$((pass + 1)); echo "ok: a DAT 1.2 program built with cc -ldat passes over ofi-tcp"
	else
		fail=$((fail + 1)); flag "the DAT 1.2 program (test/dat12/dat12_app.c)"
	fi

	log "install: pkg-config dat2 and dat build an OFED dtest-style program"
	if bash "$top/test/install/pkg-config.sh" "$dest" "$prefix" \
		"$prefix/lib" "$(loopback_conf)"; then
		pass=$((pass + 1)); echo "ok: pkg-config dat2 and dat"
	else
		fail=$((fail + 1)); flag "pkg-config dat2 and dat"
	fi

	# The runner make install put in bindir, run from / with no BUILDDIR:
	# it must find dat_info, the libraries, the programs (libexecdir),
	# linkloss.sh and the exclude files in the DESTDIR tree, and OFED's
	# dtest in PATH; the programs check that libdat2 is the installed one.
	log "install: the installed conformance suite, with no build tree"
	local inst_run="$dest$prefix/bin/runfabtests-dat.sh"
	local inst_out="$build/installed-suite.out"
	if (cd / && env -u BUILDDIR "$inst_run" -h) >"$inst_out.usage" 2>&1 &&
		grep -q '^Usage: ' "$inst_out.usage" &&
		(cd / && env -u BUILDDIR LD_LIBRARY_PATH="$dest$prefix/lib" \
			"$inst_run" --loopback -D ofi-tcp -g all -T 120 -v \
			-t dat_ia,dat_evd,dat_dto,dat_msg,dat_rdma,dat_linkloss,interop_dtest) |
		tee "$inst_out" &&
		grep -q "^# fabtests-dat: installed under $dest in $prefix/bin," "$inst_out" &&
		runner_summary "$inst_out" | grep -qE '^7 0 0$'; then
		pass=$((pass + 1)); echo "ok: the installed suite ran 7 tests"
	else
		fail=$((fail + 1)); cat "$inst_out.usage"
		flag "the installed conformance suite"
	fi

	# The .debs, built from a make dist tarball in build/deb (not in the
	# source tree), installed with dpkg --root into build/deb/root: the
	# host keeps Debian's libdapl2 as the reference (debian/README.Debian).
	log "Debian packages: build, lintian, dpkg --root, dat_info, runner and OFED dtest"
	local tarball
	rm -f "$build"/dapl-ofi-*.tar.gz
	if (cd "$build" && make -s dist >/dev/null 2>&1) &&
		tarball=$(ls "$build"/dapl-ofi-*.tar.gz) &&
		bash "$top/test/install/deb.sh" "$tarball" "$build/deb"; then
		pass=$((pass + 1)); echo "ok: Debian packages"
	else
		fail=$((fail + 1)); flag "Debian packages"
	fi

	log "conformance and interop (fabtests-dat, ofi-tcp and ofi-sockets on loopback)"
	local ft_out="$build/fabtests-dat.out"
	# The soaks run 20 s, as on the RDM fabrics: CI's time; the runner's
	# default is 60 s, and a release check runs -d 30m.
	BUILDDIR="$build" bash "$top/fabtests-dat/scripts/runfabtests-dat.sh" \
		--loopback -D ofi-tcp -D ofi-sockets -g all -d 20 -T 180 -v \
		-L "$build/fabtests-dat.logs" | tee "$ft_out" || true
	# Its skipped count is the excluded tests: with -D, a test that does
	# not run fails unless an exclude file lists it with a reason.
	count_runner "$ft_out" "the conformance runner" \
		"$build/fabtests-dat.logs"

	# RDM fabrics through dapl-ofi's own connection backend: tcp;ofi_rxm,
	# shm and udp;ofi_rxd, each with every test but the ones
	# rdm_left_out_of names. The soaks run 20 s, as above.
	local rdm_ia rdm_out
	for rdm_ia in ofi-rxm ofi-shm ofi-rxd; do
		log "conformance on an RDM fabric (fabtests-dat and OFED's interop programs, $rdm_ia on loopback)"
		rdm_out="$build/fabtests-dat-$rdm_ia.out"
		BUILDDIR="$build" bash "$top/fabtests-dat/scripts/runfabtests-dat.sh" \
			--loopback -D "$rdm_ia" -g all -d 20 -T 180 -v \
			-S "$(rdm_left_out_of "$rdm_ia")" \
			-L "$build/fabtests-dat-$rdm_ia.logs" | tee "$rdm_out" || true
		count_runner "$rdm_out" "the $rdm_ia conformance runner" \
			"$build/fabtests-dat-$rdm_ia.logs"
	done

	# The soaks run 20 s under ASan: the MSG run has the longer ones.
	log "sanitizers: unit and functional tests under ASan+UBSan"
	rm -rf "$build/asan.logs"
	if build "$top/build-asan" \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" &&
		(cd "$top/build-asan" && ASAN_OPTIONS=detect_leaks=0 \
			make -s -j"$jobs" check TESTS="test/check_dat test/check_prov" >/dev/null 2>&1;
		 grep -E '^[0-9]+%: Checks' test/check_dat.log test/check_prov.log &&
		 grep -q '^PASS test/check_dat' test/check_dat.log &&
		 grep -q '^PASS test/check_prov' test/check_prov.log) &&
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
		BUILDDIR="$top/build-asan" bash "$top/fabtests-dat/scripts/runfabtests-dat.sh" \
			--loopback -D ofi-tcp -d 20 -T 300 -v -L "$build/asan.logs" |
		tee "$build/asan.out" &&
		runner_summary "$build/asan.out" | grep -qE '^[0-9]+ 0 [0-9]+$'; then
		pass=$((pass + 1)); echo "ok: ASan+UBSan unit and functional runs"
	else
		fail=$((fail + 1)); flag "ASan+UBSan runs"
		why_runner "$build/asan.out" "$build/asan.logs" ASan
	fi

	# The threaded paths under ThreadSanitizer: T threads posting on shared
	# EPs and EVDs (dat_threads), the progress thread's send/receive and
	# RDMA in one process and between two (dat_dto, dat_msg, dat_rdma), a
	# waiter woken from another thread (dat_evd), and CM load (dat_cm,
	# dat_many_eps). A report fails its test (exitcode) and the stage (the
	# logs are searched as well). test/tsan.supp holds libfabric's own,
	# and the link watch's scan of every descriptor (see there).
	log "sanitizers: threaded tests under ThreadSanitizer (ofi-tcp and ofi-sockets)"
	local tsan_logs="$build/tsan.logs"
	rm -rf "$tsan_logs"
	if build "$top/build-tsan" CC=clang \
		CFLAGS="-O1 -g -fsanitize=thread -fno-omit-frame-pointer" \
		LDFLAGS="-fsanitize=thread" &&
		TSAN_OPTIONS="exitcode=66 print_suppressions=1 suppressions=$top/test/tsan.supp" \
		BUILDDIR="$top/build-tsan" bash "$top/fabtests-dat/scripts/runfabtests-dat.sh" \
			--loopback -D ofi-tcp -D ofi-sockets -T 120 -v -L "$tsan_logs" \
			-t dat_threads,dat_dto,dat_msg,dat_rdma,dat_evd,dat_cm,dat_many_eps |
		tee "$build/tsan.out" &&
		runner_summary "$build/tsan.out" | grep -qE '^[1-9][0-9]* 0 0$' &&
		! grep -q 'WARNING: ThreadSanitizer' "$tsan_logs"/*.log; then
		pass=$((pass + 1)); echo "ok: ThreadSanitizer runs (no report)"
	else
		fail=$((fail + 1))
		grep -h '^SUMMARY: ThreadSanitizer' "$tsan_logs"/*.log 2>/dev/null |
			sort | uniq -c || true
		flag "ThreadSanitizer runs (reports in $tsan_logs)"
		why_runner "$build/tsan.out" "$tsan_logs" TSan
	fi

	# 50 whole IA lifecycles (test/ia_cycles: PZ, EVDs, EP and LMR made
	# and freed each time) under valgrind's leak check: a block of ours
	# still allocated at exit fails the stage. test/valgrind.supp holds
	# what libfabric and the libraries it links allocate once per load
	# (each last close unloads them); --keep-debuginfo keeps their frames
	# named after the unload, which those entries match on.
	# The leak check runs beside the fuzzers, one CPU each: neither
	# depends on timing, and the stage takes as long as the longer.
	log "leak check (50 IA lifecycles on ofi-tcp under valgrind) beside the fuzzers (the CM header, dat.conf, instance-data and RDM wire parsers, 20 s each, libFuzzer)"
	local vg_pid vg_rc=0
	(cd "$build" && make -s test/ia_cycles) &&
		{ DAT_OVERRIDE=$(loopback_conf) LD_LIBRARY_PATH="$build/.libs" \
			timeout 900 valgrind --leak-check=full --keep-debuginfo=yes \
			--num-callers=40 --error-exitcode=1 \
			--suppressions="$top/test/valgrind.supp" \
			"$build/test/ia_cycles" -D ofi-tcp -n 50 \
			>"$build/valgrind.out" 2>&1 &
		vg_pid=$!; } || vg_pid=
	if FUZZ_BUILD="$top/build-fuzz" bash "$top/fuzz/run.sh" all \
		-max_total_time=20 >"$build/fuzz.out" 2>&1; then
		pass=$((pass + 1))
		grep -E '^#[0-9]+.*DONE|stat::number_of_executed_units' "$build/fuzz.out" || true
		echo "ok: fuzzers found no crash"
	else
		fail=$((fail + 1)); tail -40 "$build/fuzz.out"
		flag "a fuzzer crashed (see above)"
	fi
	# A leak check that did not build or start fails too.
	if [ -n "$vg_pid" ]; then wait "$vg_pid" || vg_rc=$?; else vg_rc=1; fi
	log "leak check: done"
	if [ "$vg_rc" -eq 0 ]; then
		pass=$((pass + 1))
		grep -E 'ia_cycles:|ERROR SUMMARY|definitely lost' "$build/valgrind.out" || true
		echo "ok: no leak in 50 IA lifecycles"
	else
		fail=$((fail + 1)); tail -60 "$build/valgrind.out" 2>/dev/null || true
		flag "valgrind leak check of 50 IA lifecycles (exit $vg_rc)"
	fi

	log "clang build (-Wall -Wextra -Werror)"
	if build "$top/build-clang" CC=clang &&
		(cd "$top/build-clang" && make -s -j"$jobs" check TESTS=); then
		pass=$((pass + 1)); echo "ok: clang build"
	else
		fail=$((fail + 1)); flag "clang build"
	fi

	log "make distcheck"
	if (cd "$build" && make -s -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >distcheck.out 2>&1); then
		pass=$((pass + 1)); tail -4 "$build/distcheck.out"
	else
		fail=$((fail + 1)); tail -40 "$build/distcheck.out"
		flag "make distcheck"
	fi
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1; flag "make check exited non-zero"
	fi
	echo
	local f
	if [ ${#why_list[@]} -gt 0 ]; then
		echo "# why the runners' failed tests failed (from their logs):"
		for f in "${why_list[@]}"; do
			printf '%s\n' "$f" | sed 's/^/#   /'
		done
	fi
	for f in "${failed_list[@]}"; do
		echo "# failed: $f"
	done
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
}

case "${1:-}" in
main) deps; build "$build"; main_job ;;
bench) main_job ;;
test) deps; test_job ;;
deps) deps ;;
*) echo "usage: $0 main|test" >&2; exit 2 ;;
esac
