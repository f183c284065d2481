#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Copyright (c) 2026 dapl-ofi developers
#
# runfabtests-dat.sh: run the fabtests-dat conformance suite over each IA.
#
# Prints one line per test, "<test> <ia>: Pass|Fail|Notrun|Excluded|Left
# out", then a comment line with the notrun, excluded and left-out counts,
# and last the line "N passed, N failed, N skipped" (skipped: not run,
# excluded and left out with --skip).  Exit status 0 when nothing failed.
#
# An IA named with -D must run every test of the selected groups: a test
# that does not run on it (a missing program or dependency, exit 61, the
# IA cannot be opened, a -t name that is no test of the groups) fails,
# unless the IA's exclude file lists it with a reason.  Without -D, the IAs
# dat_info cannot open are left out and a test that cannot run is Notrun.
#
# Groups:
#   functional  the programs of fabtests-dat/functional (default)
#   interop     OFED's dtest, dtestx, dtestcm, dtestsrq and dapltest
#               (Debian's dapl2-utils),
#               unmodified, on our libdat2 through LD_LIBRARY_PATH and a
#               DAT_OVERRIDE dat.conf, between two processes on 127.0.0.1;
#               dtestcm at several connection counts (interop_dtestcm_cN),
#               each in a network namespace of its own when run as root
#
# The binaries come from a build tree (BUILDDIR, or -b): BUILDDIR/.libs
# holds libdat2.so.2 and libdaplofi.so.2, BUILDDIR/dat_info and
# BUILDDIR/fabtests-dat/functional/ the programs.  The build tree may be a
# VPATH build: nothing is looked for in the source tree but the exclude
# files.  Every child is tracked by its PID and ended by its PID.
#
# The copy make install puts in $(bindir) runs the installed tree instead
# when neither BUILDDIR nor -b is given: make install sets the inst_*
# lines below to the directories it installed into, and the runner finds
# libdat2.so.2, dat_info, the programs and the exclude files there.  When
# the runner sits in DIR/$inst_bindir rather than $inst_bindir (a
# `make install DESTDIR=DIR` tree, a package unpacked into DIR), it looks
# under DIR for all of them.  OFED's programs (interop) come from PATH.

set -u

script_dir=$(cd "$(dirname "$0")" && pwd)

# Set by make install in the installed copy (fabtests-dat/functional.am);
# empty in the source tree.
inst_bindir=
inst_libdir=
inst_progdir=
inst_excludedir=

# The root the installed tree sits under: "" when this script is in
# $inst_bindir itself, DIR when it is in DIR$inst_bindir.
inst_root() {
	local d
	for d in "$script_dir" "$(cd "$script_dir" && pwd -P)"; do
		case $d in
		"$inst_bindir") echo ""; return ;;
		*"$inst_bindir") echo "${d%"$inst_bindir"}"; return ;;
		esac
	done
	echo ""
}

usage() {
	cat <<EOF
Usage: $0 [OPTIONS]
  -b, --builddir DIR   build tree (default: \$BUILDDIR, else the installed
                       tree when this is the runner make install installed,
                       else the build tree this script sits in, else the
                       current directory)
  -p, --bindir DIR     where the functional test programs are (default:
                       BUILDDIR/fabtests-dat/functional, or the installed
                       \$(libexecdir)/fabtests-dat)
  -D, --ia NAME        IA to test; repeat for several (default: each of
                       $default_ias that 'dat_info -v NAME' opens).
                       A named IA must run every selected test: one that
                       does not run fails unless NAME.exclude lists it
  -g, --group LIST     functional, interop or all; comma list (default
                       functional)
  -t, --tests LIST     run only these tests (comma list of names)
  -S, --skip LIST      leave these tests out (comma list of names): each
                       is reported "Left out" and counted as skipped, not
                       run; for a run that goes on while a test is being
                       mended (CI: scripts/ci.sh says which and why)
  -T, --timeout SEC    per-test timeout (default $timeout); dat_soak and
                       dat_soak_kill get at least their duration + 120 s
  -d, --soak-time DUR  how long dat_soak's traffic runs, and the bound of
                       dat_soak_kill's rounds: seconds, or N followed by
                       s, m or h (default $soak_time; CI runs 20 s; for
                       a release check, e.g. -d 30m)
  -E, --oob-port PORT  side channel port of client/server tests (default
                       $oob_port)
  -x, --exclude DIR    directory of <ia>.exclude files (default
                       $exclude_default); a line is "TEST REASON", TEST
                       a name or glob; a line without a reason fails
  -L, --logdir DIR     keep each test's output in DIR (default: a temporary
                       directory, removed at exit)
  -l, --loopback       give the built-in names loopback instance data
                       (ofi-tcp = "tcp lo", ofi-sockets = "sockets lo", ...)
                       through a generated DAT_OVERRIDE dat.conf, so every
                       test stays on 127.0.0.1 (what CI uses)
  -v                   print the output of failed tests (-vv: and not run,
                       -vvv: all)
  -h, --help           this text
The last line is "N passed, N failed, N skipped". Exit status: 0 when
no test failed. On a terminal, a line on stderr shows the test running
once it has run 2 s.
EOF
}

default_ias="ofi-tcp ofi-sockets"
timeout=180
soak_time=60
# The side channels' first port: above the kernel's ephemeral range, where
# no connecting socket (a DAT connection's own, in this or another test)
# can take it between the check (port_free) and the server's bind: inside
# the range, one did, "Address already in use". The tests take the next
# 200 or so.
ephemeral_above() {
	local lo hi
	read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
		{ echo 61100; return; }
	if [ "$hi" -le 65000 ]; then
		echo $((hi + 101))
	elif [ "$lo" -ge 2600 ]; then
		echo $((lo - 500))
	else
		echo 47592 # no room outside it: port_free must do
	fi
}
oob_port=$(ephemeral_above)
verbose=0
groups=functional
loopback=0
only=
skip=
ias=()
bindir=
exclude_dir=
logdir=
keep_logs=0
builddir=${BUILDDIR:-}
# The installed runner uses the installed exclude files and linkloss.sh,
# also for a build tree named with -b; the source tree's those beside it.
if [ -n "$inst_bindir" ]; then
	root=$(inst_root)
	exclude_default="$root$inst_excludedir"
	linkloss_sh="$root$inst_progdir/linkloss.sh"
else
	exclude_default="$script_dir/exclude"
	linkloss_sh="$script_dir/linkloss.sh"
fi

while [ $# -gt 0 ]; do
	case "$1" in
	-b | --builddir) builddir=$2; shift 2 ;;
	-p | --bindir) bindir=$2; shift 2 ;;
	-D | --ia) ias+=("$2"); shift 2 ;;
	-g | --group) groups=$2; shift 2 ;;
	-t | --tests) only=$2; shift 2 ;;
	-S | --skip) skip=$2; shift 2 ;;
	-T | --timeout) timeout=$2; shift 2 ;;
	-d | --soak-time) soak_time=$2; shift 2 ;;
	-E | --oob-port) oob_port=$2; shift 2 ;;
	-x | --exclude) exclude_dir=$2; shift 2 ;;
	-L | --logdir) logdir=$2; keep_logs=1; shift 2 ;;
	-l | --loopback) loopback=1; shift ;;
	-v) verbose=$((verbose + 1)); shift ;;
	-vv) verbose=$((verbose + 2)); shift ;;
	-vvv) verbose=$((verbose + 3)); shift ;;
	-h | --help) usage; exit 0 ;;
	*) echo "$0: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
done
case ",$groups," in
*,all,*) groups=functional,interop ;;
esac
# IAs named with -D must run every selected test.
named_ias=0
[ ${#ias[@]} -eq 0 ] || named_ias=1

# ---- the build tree, or the installed tree ----------------------------------------
# Installed mode: this is the installed runner and no build tree is named.
if [ -n "$inst_bindir" ] && [ -z "$builddir" ]; then
	libdir="$root$inst_libdir"
	dat_info="$root$inst_bindir/dat_info"
	[ -n "$bindir" ] || bindir="$root$inst_progdir"
	where="installed ${root:+under $root }in $inst_bindir"
	if [ ! -e "$libdir/libdat2.so.2" ] || [ ! -x "$dat_info" ] ||
		[ ! -d "$bindir" ]; then
		echo "$0: the installed tree is incomplete (no" \
			"$libdir/libdat2.so.2, $dat_info or $bindir);" \
			"give a build tree with -b DIR or BUILDDIR" >&2
		exit 2
	fi
else
	if [ -z "$builddir" ]; then
		if [ -e "$script_dir/../../.libs/libdat2.so.2" ]; then
			builddir="$script_dir/../.."
		else
			builddir=.
		fi
	fi
	builddir=$(cd "$builddir" && pwd) || exit 2
	libdir="$builddir/.libs"
	dat_info="$builddir/dat_info"
	[ -n "$bindir" ] || bindir="$builddir/fabtests-dat/functional"
	where="build $builddir"
	if [ ! -e "$libdir/libdat2.so.2" ] || [ ! -x "$dat_info" ]; then
		echo "$0: $builddir is not a built dapl-ofi tree (no" \
			".libs/libdat2.so.2 or dat_info); give -b DIR or" \
			"BUILDDIR" >&2
		exit 2
	fi
fi
[ -n "$exclude_dir" ] || exclude_dir=$exclude_default
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FT_EXPECT_LIBDIR="$libdir"

if [ -z "$logdir" ]; then
	logdir=$(mktemp -d "${TMPDIR:-/tmp}/fabtests-dat.XXXXXX") || exit 2
else
	mkdir -p "$logdir" || exit 2
fi

# ---- progress on a terminal ------------------------------------------------------
# While a test runs for 2 s or more, one line on stderr, rewritten
# each second: "# [3/57] running dat_soak ofi-tcp: 12 s (2 passed, 0
# failed)"; report wipes it before the result line. Nothing when stderr
# is not a terminal (CI, a log file).
progress=0
[ -t 2 ] && progress=1
progress_total=0
progress_name=
progress_t0=0
progress_last=0
progress_shown=0

# progress_test NAME IA: the test that runs next.
progress_test() {
	progress_name="$1 $2"
	progress_t0=$SECONDS
	progress_last=0
}

progress_tick() {
	local el=$((SECONDS - progress_t0)) n
	[ "$progress" = 1 ] && [ -n "$progress_name" ] || return 0
	[ "$el" -ge 2 ] && [ "$el" -ne "$progress_last" ] || return 0
	progress_last=$el
	n=$((npass + nfail + nnotrun + nexcluded + 1))
	printf '\r# [%d/%d] running %s: %d s (%d passed, %d failed)\033[K' \
		"$n" "$progress_total" "$progress_name" "$el" "$npass" \
		"$nfail" >&2
	progress_shown=1
}

progress_clear() {
	[ "$progress_shown" = 1 ] || return 0
	printf '\r\033[K' >&2
	progress_shown=0
}

# ---- children, by PID -------------------------------------------------------------
children=()

cleanup() {
	local pid
	progress_clear
	for pid in "${children[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	[ "$keep_logs" -eq 1 ] || rm -rf "$logdir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The libfabric version IA NAME reports (dat_info's vendor_name, e.g.
# "1.17.0"), from the log the runner keeps of it; empty if none.
ia_libfabric_version() {
	awk '$1 == "vendor_name" && $2 == "libfabric" { print $3; exit }' \
		"$logdir/dat_info.$1.log" 2>/dev/null
}

# The libfabric provider IA NAME opens (dat_info's DAT_OFI_PROVIDER, e.g.
# "tcp;ofi_rxm"), from the same log; empty if none.
ia_fabric_provider() {
	awk '$1 == "DAT_OFI_PROVIDER" { print $2; exit }' \
		"$logdir/dat_info.$1.log" 2>/dev/null
}

# libfabric 1.14 to 2.0's rxm spins for good in rxm_close_conn when a
# connection closes while it holds a message partly reassembled from
# segments (SAR): a peer killed mid-message leaves one, and the survivor
# hangs in the fi_cq_read or fi_close that takes the connection down
# (fixed in 2.1, libfabric commit 622a77315). dapl-ofi keeps SAR for
# every message above 16 KiB, for receive order (dapl-ofi(7), Reliable
# datagram fabrics), so there dat_soak_kill runs with rxm's eager
# buffers as large as its largest message (256 KiB), the workaround
# dapl-ofi(7) gives: no message is segmented and the kill tests
# dapl-ofi, not that bug. It applies to any IA whose provider is rxm
# (ofi-rxm, or a dat.conf line naming "tcp;ofi_rxm"). Sets the array
# named $2 to the env command that does so, or leaves it empty
# (libfabric 2.1 and later, or the variable already set). A comment line
# says which.
rxm_whole_messages() { # IA ARRAY
	local v
	local -n cmd=$2
	v=$(ia_libfabric_version "$1")
	case $v in
	1.* | 2.0.*) ;;
	*) return 0 ;;
	esac
	if [ -n "${FI_OFI_RXM_BUFFER_SIZE:-}" ]; then
		echo "# dat_soak_kill $1: FI_OFI_RXM_BUFFER_SIZE=$FI_OFI_RXM_BUFFER_SIZE (set by the caller)"
		return 0
	fi
	echo "# dat_soak_kill $1: FI_OFI_RXM_BUFFER_SIZE=262144: libfabric $v's rxm hangs closing a connection with a segmented message partly received (fixed in 2.1; dapl-ofi(7))"
	# shellcheck disable=SC2034 # cmd is a nameref
	cmd=(env FI_OFI_RXM_BUFFER_SIZE=262144)
}

# libfabric 1.17's rxd mishandles a message that arrives before its
# receive is posted while a larger one of the same peer is still coming
# in: the rest of that one lands in the wrong buffer and rxd then loops
# with the endpoint locked (dapl-ofi(7), Unexpected messages; about one
# dat_soak run in three). dapl-ofi(7) says a consumer that keeps a
# receive posted for every message is not exposed: on an IA whose
# provider is rxd, dat_soak and dat_soak_kill run so (-C, each side's
# Sends within the receives its peer has posted), which checks that.
# Appends -C to the array named $3 and says so in a comment line.
rxd_credit() { # TEST IA ARRAY
	local -n cargs=$3
	echo "# $1 $2: -C (Sends within the peer's posted receives): rxd (libfabric 1.17) mishandles a message that arrives before its receive (dapl-ofi(7), Unexpected messages)"
	cargs+=(-C)
}

# shm guards each endpoint's shared memory region with a process-shared
# spin lock, which a peer holds while it writes into the region (libfabric
# 1.17: smr_generic_sendmsg, smr_generic_rma; the owner too, progressing
# it: smr_progress_cmd). A peer killed inside such a call leaves it held
# for good, and the survivor's next call on that connection spins in
# libfabric before anything can report the death (a run of 8 kills passed
# 1 time in 9). So on an IA whose provider is shm, dat_soak_kill parks its
# peer before each kill (-P): no progress thread, and each of its threads
# stopped between DAT calls; its DTOs and the survivor's stay posted.
# Appends -P to the array named $2 and says so in a comment line.
shm_park() { # IA ARRAY
	local -n pargs=$2
	echo "# dat_soak_kill $1: -P (the peer parked outside libfabric, then killed): shm leaves an endpoint's spin lock held by a peer killed inside libfabric (libfabric 1.17; fabtests-dat(7))"
	pargs+=(-P)
}

# start OUT CMD...: run CMD in the background, output to OUT; sets $started
start() {
	local out=$1
	shift
	"$@" >"$out" 2>&1 </dev/null &
	started=$!
	children+=("$started")
}

forget() {
	local pid=$1 i
	for i in "${!children[@]}"; do
		[ "${children[$i]}" = "$pid" ] && unset "children[$i]"
	done
}

# finish PID SECONDS: wait for PID up to SECONDS, then TERM, then KILL.
# Sets $rc to its exit status (124 when it had to be stopped).
# The limit is in wall-clock seconds ($SECONDS), not in polls: on a busy
# machine a poll takes longer than its 0.1 s sleep.
finish() {
	local pid=$1 limit=$2 deadline
	deadline=$((SECONDS + limit))
	while kill -0 "$pid" 2>/dev/null; do
		progress_tick
		if [ "$SECONDS" -ge "$deadline" ]; then
			kill -TERM "$pid" 2>/dev/null
			sleep 2
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			forget "$pid"
			rc=124
			return
		fi
		sleep 0.1
	done
	wait "$pid"
	rc=$?
	forget "$pid"
}

# ---- shm's regions -----------------------------------------------------------------
# shm names an endpoint's shared memory region /dev/shm/PID_... and removes
# it when the endpoint closes: one whose process is gone was left by a
# process that ended without closing its IA, 16 MiB until the next boot.
# shm_orphans: those regions, a name a line.
shm_orphans() {
	local f pid
	for f in /dev/shm/[0-9]*_*; do
		[ -e "$f" ] || continue
		pid=${f#/dev/shm/}
		pid=${pid%%_*}
		kill -0 "$pid" 2>/dev/null || echo "${f#/dev/shm/}"
	done
}
# Those the machine held before this run, none of its tests' doing.
shm_orphans_before=$(shm_orphans)

# shm_left IA LOG: on an IA whose provider is shm, the regions of gone
# processes that appeared since the run began: named in LOG and in
# shm_why, removed (so that the next test starts clean); false when
# there were any.
shm_left() {
	local f n=0
	shm_why=
	[ "$(ia_fabric_provider "$1")" = shm ] || return 0
	while read -r f; do
		[ -n "$f" ] || continue
		case $'\n'"$shm_orphans_before"$'\n' in
		*$'\n'"$f"$'\n'*) continue ;;
		esac
		echo "runfabtests-dat: /dev/shm/$f: left by a process that" \
			"ended without closing its endpoint" >>"$2"
		rm -f "/dev/shm/$f"
		shm_why+=" $f"
		n=$((n + 1))
	done <<<"$(shm_orphans)"
	[ "$n" -eq 0 ]
}

# ---- results ---------------------------------------------------------------------
npass=0
nfail=0
nnotrun=0
nexcluded=0
nleft=0

excluded_list=()
# "SECONDS NAME IA" of each test that ran, for the slowest list at the end.
times_list=()

# report NAME IA RESULT [LOG...]
# A Notrun on an IA named with -D is a Fail: the test did not run where
# the user asked for it.  Excluded wants the reason in $ex_why.
report() {
	local name=$1 ia=$2 result=$3 show=0 f why=
	shift 3
	progress_clear
	# A test that ran leaves no shm region behind (shm_left).
	shm_why=
	case $result in Pass | Fail)
		shm_left "$ia" "${1:-/dev/null}" || result=Fail
		;;
	esac
	if [ "$result" = Notrun ]; then
		why=$(notrun_why "$@")
		[ "$named_ias" -eq 0 ] || result=Fail
	fi
	case $result in
	Excluded) printf '%s %s: %s (%s)\n' "$name" "$ia" "$result" "$ex_why" ;;
	Left) printf '%s %s: Left out (--skip)\n' "$name" "$ia" ;;
	*) printf '%s %s: %s\n' "$name" "$ia" "$result" ;;
	esac
	[ -z "$shm_why" ] ||
		echo "  left in /dev/shm by a process that ended without" \
			"closing its endpoint (removed):$shm_why"
	if [ -n "$why" ]; then
		echo "  not run: $why"
		[ "$named_ias" -eq 0 ] ||
			echo "  $ia was named with -D: a test that does not run" \
				"there fails unless $exclude_dir/$ia.exclude" \
				"lists it with a reason"
	fi
	case $result in Pass | Fail)
		[ "$progress_name" != "$name $ia" ] ||
			times_list+=("$((SECONDS - progress_t0)) $name $ia")
		;;
	esac
	case $result in
	Pass) npass=$((npass + 1)); [ "$verbose" -ge 3 ] && show=1 ;;
	Fail) nfail=$((nfail + 1)); [ "$verbose" -ge 1 ] && show=1 ;;
	Notrun) nnotrun=$((nnotrun + 1)); [ "$verbose" -ge 2 ] && show=1 ;;
	Excluded)
		nexcluded=$((nexcluded + 1))
		excluded_list+=("$name $ia: $ex_why")
		;;
	Left) nleft=$((nleft + 1)) ;;
	esac
	if [ "$show" -eq 1 ]; then
		for f in "$@"; do
			[ -f "$f" ] || continue
			echo "  --- ${f##*/}"
			sed 's/^/  | /' "$f"
		done
	fi
}

# notrun_why LOG...: why a test did not run, from its NOTRUN: line or the
# first line of its log.
notrun_why() {
	local f line
	for f in "$@"; do
		[ -f "$f" ] || continue
		line=$(grep -m 1 'NOTRUN: ' "$f") && break
	done
	[ -n "${line:-}" ] || { [ -f "${1:-}" ] && line=$(head -n 1 "$1"); }
	echo "${line:-exit code 61}"
}

# verdict RC...: Pass if all 0, Notrun if the rest are 61, else Fail
verdict() {
	local r any61=0
	for r in "$@"; do
		case $r in
		0) ;;
		61) any61=1 ;;
		*) echo Fail; return ;;
		esac
	done
	[ "$any61" -eq 1 ] && echo Notrun || echo Pass
}

# selected NAME: true when NAME runs (-t names it, or there is no -t;
# --skip does not name it).
selected() {
	case ",$skip," in *",$1,"*) return 1 ;; esac
	[ -z "$only" ] && return 0
	case ",$only," in *",$1,"*) return 0 ;; esac
	return 1
}

# The exclude files: a line is "TEST REASON" (TEST a test name or a shell
# glob, REASON the rest of the line, which may start with '#'); blank
# lines and lines starting with '#' are comments.  ex_ia/ex_pat/ex_why
# hold the entries of the IAs under test.
ex_ia=()
ex_pat=()
ex_reason=()

trim() { # STRING: without leading and trailing blanks
	local s=$1
	s=${s#"${s%%[![:space:]]*}"}
	s=${s%"${s##*[![:space:]]}"}
	printf '%s' "$s"
}

# load_excludes IA: read IA's exclude file; a line with no reason is a
# reported failure and excludes nothing.
load_excludes() {
	local ia=$1 file="$exclude_dir/$1.exclude" line n=0 pat why
	[ -f "$file" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		line=$(trim "$line")
		case $line in '' | '#'*) continue ;; esac
		pat=${line%%[[:space:]#]*}
		why=$(trim "${line:${#pat}}")
		why=$(trim "${why#\#}")
		if [ -z "$why" ]; then
			printf '%s %s: Fail\n' "${file##*/}:$n" "$ia"
			echo "  $file:$n: '$pat' has no reason: write" \
				"'$pat <why it cannot pass yet>'; the test is not" \
				"excluded"
			nfail=$((nfail + 1))
			continue
		fi
		ex_ia+=("$ia")
		ex_pat+=("$pat")
		ex_reason+=("$why")
	done <"$file"
}

# excluded NAME IA: true when IA's exclude file lists NAME; sets $ex_why.
excluded() {
	local i
	for i in "${!ex_pat[@]}"; do
		[ "${ex_ia[$i]}" = "$2" ] || continue
		# shellcheck disable=SC2053 # an entry may be a glob pattern
		if [[ $1 == ${ex_pat[$i]} ]]; then
			ex_why=${ex_reason[$i]}
			return 0
		fi
	done
	return 1
}

# group_tests: every test of the selected groups.
group_tests() {
	case ",$groups," in *,functional,*) echo $single_tests $cs_tests ;; esac
	case ",$groups," in *,interop,*) echo $interop_tests ;; esac
}

# fail_unknown NAME IA OPTION: NAME, given with OPTION, is no test of the
# selected groups: a failure.
fail_unknown() {
	echo "$1: no such test in the groups $groups" >"$logdir/$1.$2.log"
	printf '%s %s: Fail\n' "$1" "$2"
	echo "  $1 is no test of the groups $groups ($3)"
	nfail=$((nfail + 1))
}

# run_unknown IA: each -t name that is no test of the selected groups
# fails (or is excluded): it cannot run.
run_unknown() {
	local ia=$1 t all
	all=" $(group_tests | tr '\n' ' ') "
	for t in ${only//,/ }; do
		case $all in *" $t "*) continue ;; esac
		if excluded "$t" "$ia"; then
			report "$t" "$ia" Excluded
			continue
		fi
		fail_unknown "$t" "$ia" -t
	done
}

# run_left_out IA: each --skip name (that -t, if given, selects) is
# reported left out, without running; a name that is no test of the
# selected groups fails, as with -t.
run_left_out() {
	local ia=$1 t all
	all=" $(group_tests | tr '\n' ' ') "
	for t in ${skip//,/ }; do
		if [ -n "$only" ]; then
			case ",$only," in *",$t,"*) ;; *) continue ;; esac
		fi
		case $all in
		*" $t "*) report "$t" "$ia" Left ;;
		*)
			# -t names it too: run_unknown reports it.
			[ -z "$only" ] || continue
			fail_unknown "$t" "$ia" --skip
			;;
		esac
	done
}

# run_unopened IA: IA (named with -D) does not open: each selected test
# fails, or is excluded, without running.
run_unopened() {
	local ia=$1 t why
	why=$(grep -m 1 'cannot open' "$logdir/dat_info.$ia.log" ||
		tail -n 1 "$logdir/dat_info.$ia.log")
	for t in $(group_tests); do
		selected "$t" || continue
		if excluded "$t" "$ia"; then
			report "$t" "$ia" Excluded
			continue
		fi
		printf 'dat_info -v %s cannot open it: %s\n' "$ia" "$why" \
			>"$logdir/$t.$ia.log"
		report "$t" "$ia" Notrun "$logdir/$t.$ia.log"
	done
}

# ---- the functional group ----------------------------------------------------------
single_tests="dat_ia dat_mem dat_evd dat_evd_hot dat_cm dat_dto dat_protect dat_many_eps
	dat_threads dat_unreach dat_soak_kill dat_hostile dat_linkloss
	dat_badhandle dat_ext dat_srq dat_saw dat_rdm_liar"
cs_tests="dat_msg dat_graceful dat_rdma dat_soak"

# Seconds in a duration as dat_soak -d takes it (N, Ns, Nm, Nh).
soak_seconds() {
	case $1 in
	*h) echo $((${1%h} * 3600)) ;;
	*m) echo $((${1%m} * 60)) ;;
	*s) echo "${1%s}" ;;
	*) echo "$1" ;;
	esac
}

# Whether no socket of this network namespace has local port $1. A test's
# side channel binds it with SO_REUSEADDR, which TIME_WAIT does not stop,
# but a socket an earlier test left in FIN_WAIT2 or CLOSE_WAIT (the ports
# lie in the ephemeral range) does: "Address already in use".
port_free() {
	command -v ss >/dev/null || return 0
	[ -z "$(ss -Htan "( sport = :$1 )" 2>/dev/null |
		awk '$1 != "TIME-WAIT"')" ]
}

run_functional() {
	local ia=$1 t bin out spid cpid src crc port=$oob_port
	local wd=$((timeout > 10 ? timeout - 5 : timeout))
	local soak_s limit args wrap

	soak_s=$(soak_seconds "$soak_time")
	case $soak_s in
	'' | *[!0-9]*)
		echo "$0: --soak-time $soak_time: not N, Ns, Nm or Nh" >&2
		exit 2
		;;
	esac
	for t in $single_tests $cs_tests; do
		selected "$t" || continue
		if excluded "$t" "$ia"; then
			report "$t" "$ia" Excluded
			continue
		fi
		progress_test "$t" "$ia"
		# The soak runs for its duration: the limits grow with it.
		limit=$timeout
		args=(-T "$wd")
		case $t in
		dat_soak | dat_soak_kill)
			[ "$limit" -ge $((soak_s + 120)) ] ||
				limit=$((soak_s + 120))
			args=(-T "$((limit - 5))" -d "$soak_time")
			;;
		esac
		# dat_soak_kill: dat_soak -K, its peer killed each round.
		[ "$t" = dat_soak_kill ] &&
			args+=(-K 8 -E "$((oob_port + 100))")
		wrap=()
		if [ "$t" = dat_soak_kill ]; then
			case $(ia_fabric_provider "$ia") in
			*ofi_rxm*) rxm_whole_messages "$ia" wrap ;;
			esac
		fi
		case $t in
		dat_soak | dat_soak_kill)
			case $(ia_fabric_provider "$ia") in
			*ofi_rxd*) rxd_credit "$t" "$ia" args ;;
			shm) [ "$t" = dat_soak_kill ] && shm_park "$ia" args ;;
			esac
			;;
		esac
		# dat_evd_hot: dat_evd with DAPL_OFI_WAIT_HOT=1s, the short
		# naps of a wait after an event on the fabrics with no fd.
		[ "$t" = dat_evd_hot ] && wrap=(env DAPL_OFI_WAIT_HOT=1s)
		bin=$bindir/${t%_kill}
		bin=${bin%_hot}
		out="$logdir/$t.$ia"
		if [ ! -x "$bin" ]; then
			echo "$bin: not built" >"$out.log"
			report "$t" "$ia" Fail "$out.log"
			echo "  not run: $bin: not built"
			continue
		fi
		case " $cs_tests " in
		*" $t "*)
			port=$((port + 1))
			while ! port_free "$port"; do
				echo "# $t $ia: side channel port $port is taken; using $((port + 1))"
				port=$((port + 1))
			done
			start "$out.server.log" "$bin" -D "$ia" -E "$port" \
				"${args[@]}"
			spid=$started
			start "$out.client.log" "$bin" -D "$ia" -E "$port" \
				"${args[@]}" 127.0.0.1
			cpid=$started
			finish "$cpid" "$limit"
			crc=$rc
			# The server gets a little longer to see the end.
			finish "$spid" 30
			src=$rc
			report "$t" "$ia" "$(verdict "$src" "$crc")" \
				"$out.server.log" "$out.client.log"
			;;
		*)
			if [ "$t" = dat_linkloss ]; then
				# Two network namespaces of its own, joined by
				# veth pairs; a short bound (3 s).
				start "$out.log" bash "$linkloss_sh" \
					-l "$libdir" -p "$bindir" -D "$ia" \
					"${args[@]}"
			else
				start "$out.log" "${wrap[@]}" "$bin" -D "$ia" \
					"${args[@]}"
			fi
			finish "$started" "$limit"
			report "$t" "$ia" "$(verdict "$rc")" "$out.log"
			;;
		esac
	done
}

# ---- the interop group ---------------------------------------------------------------
# dapltest's limit test runs before the server starts: the qualifiers it
# listens on may share the server's port (both use the low 16 bits).
# dtestcm runs once per count of dtestcm_counts, as interop_dtestcm_cN:
# round and not, small and large (250 and 256 around a power of two).
dtestcm_counts="1 7 100 250 256 1000 4000 10000"
interop_tests="interop_dtest interop_dtest_W interop_dtest_p interop_dtest_c
	interop_dtestx interop_dtestx_p interop_dtestsrq interop_dtestsrq_c8
	$(for c in $dtestcm_counts; do printf 'interop_dtestcm_c%s ' "$c"; done)
	interop_dapltest_L interop_dapltest_T_SR
	interop_dapltest_T_mix interop_dapltest_T_P interop_dapltest_P_RW
	interop_dapltest_P_RR interop_dapltest_Q"

# The instance data an interop dat.conf gives IA NAME: on loopback.
instance_for() {
	case $1 in
	ofi-tcp) echo "tcp lo" ;;
	ofi-sockets) echo "sockets lo" ;;
	ofi-rxm) echo "tcp;ofi_rxm lo" ;;
	ofi-shm) echo "shm" ;;
	ofi-rxd) echo "udp;ofi_rxd lo" ;;
	*) "$dat_info" 2>/dev/null |
		awk -v n="$1" '$1 == n { sub(/^[^"]*"/, ""); sub(/".*/, ""); print; exit }' ;;
	esac
}

# Milliseconds since the epoch.
now_ms() {
	local t
	t=$(date +%s%N)
	echo $((t / 1000000))
}

# The command run_pair and wait_listen put before theirs: nsenter into
# the network namespace of a test (empty: this one).
pair_prefix=()

# dtest-style pair: NAME IA PROGRAM SERVER_ARGS -- CLIENT_ARGS
# Sets pair_client_ms and pair_ms, how long the client and the whole pair
# took.  The server gets pair_grace seconds to end after the client, 5
# once the client has failed.  pair_swrap and pair_cwrap go before the
# server's and the client's command (after pair_prefix); each ERE of
# pair_good must match a line of both logs; when the client's log matches
# pair_again (a start-up race of the program's own, not a failure), the
# pair runs again, up to 5 times in all.  The client starts once
# something listens on port pair_port.
pair_dtest_bad='FAILED|failed|Error|ERROR'
pair_grace=30
pair_swrap=()
pair_cwrap=()
pair_good=()
pair_again=
pair_port=15828 # the dtest family's side channel
run_pair() {
	local name=$1 ia=$2 prog=$3 sargs=() cargs=() out spid t0 crc src
	local grace tries=0 missing="" g f
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
	shift
	cargs=("$@")
	out="$logdir/$name.$ia"
	while :; do
		grace=$pair_grace
		t0=$(now_ms)
		start "$out.server.log" "${pair_prefix[@]}" "${pair_swrap[@]}" \
			"$prog" "${sargs[@]}"
		spid=$started
		wait_listen "$pair_port"
		start "$out.client.log" "${pair_prefix[@]}" "${pair_cwrap[@]}" \
			"$prog" "${cargs[@]}"
		finish "$started" "$timeout"
		crc=$rc
		pair_client_ms=$(($(now_ms) - t0))
		if [ "$crc" -ne 0 ] ||
			grep -qE "$pair_dtest_bad" "$out.client.log"; then
			grace=5
		fi
		finish "$spid" "$grace"
		src=$rc
		pair_ms=$(($(now_ms) - t0))
		tries=$((tries + 1))
		if [ -n "$pair_again" ] && [ "$tries" -lt 5 ] &&
			grep -qE "$pair_again" "$out.client.log"; then
			echo "# $name $ia: the client lost the program's own" \
				"start-up race ($pair_again); running it again"
			mv "$out.server.log" "$out.server.log.$tries"
			mv "$out.client.log" "$out.client.log.$tries"
			continue
		fi
		break
	done
	for g in "${pair_good[@]}"; do
		for f in "$out.server.log" "$out.client.log"; do
			grep -qE "$g" "$f" || missing="$missing '$g' in ${f##*/};"
		done
	done
	if [ "$src" -eq 0 ] && [ "$crc" -eq 0 ] && [ -z "$missing" ] &&
		! grep -qE "$pair_dtest_bad" "$out.server.log" \
			"$out.client.log"; then
		report "$name" "$ia" Pass "$out.server.log" "$out.client.log"
	else
		echo "server rc $src, client rc $crc${missing:+; missing:$missing}" \
			>"$out.rc.log"
		report "$name" "$ia" Fail "$out.rc.log" "$out.server.log" \
			"$out.client.log"
		echo "  server rc $src, client rc $crc (124: stopped, the" \
			"client after ${timeout} s, the server ${grace} s after" \
			"the client)"
		[ -z "$missing" ] || echo "  missing:$missing"
	fi
}

# dtestx, OFED's IB extension test: write with immediate data each way,
# compare-and-swap and fetch-and-add where the IA names them (dat_info -v:
# the pair must then have run them), and with -p the counters (started by
# DAPL_OFI_COUNTERS, so that they are not all 0).  Its client connects as
# soon as the side channel has run, while its server creates the PSP only
# after that: a client that gets there first is refused (NON_PEER_REJECTED,
# "!conn established: 0x4003"), as over OFED's rdma_cm; OFED's ucm would
# send its request again.  So both run on one CPU with the client under
# SCHED_IDLE (chrt --idle; niced where chrt is missing): a client woken
# by the server's reply cannot hold the CPU while the server, woken by
# its own, goes on to create the PSP (at nice 19 alone, a client that had
# slept could; CI lost 3 tries in 3 twice).  A lost race runs again (5
# tries).
run_dtestx() { # NAME IA
	local name=$1 ia=$2 flags=() cpu
	[ "$name" = interop_dtestx_p ] && flags=(-p)
	pair_good=('immed/atomic test PASSED'
		'RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED')
	if grep -qE 'DAT_IB_FETCH_AND_ADD +TRUE' "$logdir/dat_info.$ia.log"; then
		pair_good+=('FETCH_ADD test - PASSED')
	fi
	if grep -qE 'DAT_IB_CMP_AND_SWAP +TRUE' "$logdir/dat_info.$ia.log"; then
		pair_good+=('CMP_SWAP test - PASSED')
	fi
	[ ${#flags[@]} -eq 0 ] || pair_good+=('EP\[0\] Cntrs:.* [1-9]')
	if command -v taskset >/dev/null; then
		cpu=$(($(nproc) - 1))
		pair_swrap=(taskset -c "$cpu")
		pair_cwrap=(taskset -c "$cpu" nice -n 19)
		if command -v chrt >/dev/null; then
			pair_cwrap=(taskset -c "$cpu" chrt --idle 0 nice -n 19)
		fi
	fi
	pair_again='conn established: 0x4003'
	DAPL_OFI_COUNTERS=${flags[*]:+1} run_pair "$name" "$ia" dtestx -s \
		-P "$ia" "${flags[@]}" -- -h 127.0.0.1 -P "$ia" "${flags[@]}"
	pair_good=()
	pair_swrap=()
	pair_cwrap=()
	pair_again=
}

# OFED's dtestsrq, N EPs a side on one SRQ each: NAME IA ARGS...  It has
# no side channel (its server listens on its PSP's port, 45248) and exits
# 0 whatever happened: a pass is its closing line on both sides.
run_dtestsrq() {
	local name=$1 ia=$2
	shift 2
	pair_port=45248
	pair_good=('DAPL RC SRQ Test Complete')
	run_pair "$name" "$ia" dtestsrq -s -P "$ia" "$@" -- \
		-h 127.0.0.1 -P "$ia" "$@"
	pair_port=15828
	pair_good=()
}

dapltest_bad='fails|failed|error occurs|not ok|bad connection event|DAT_[A-Z_]*(ERROR|INVALID|TIMEOUT|REJECTED)'

# dapltest client run against the running server: NAME IA ARGS...
run_dapltest() {
	local name=$1 ia=$2 out tries=0
	shift 2
	out="$logdir/$name.$ia.log"
	while :; do
		start "$out" "${pair_prefix[@]}" dapltest "$@"
		finish "$started" "$timeout"
		tries=$((tries + 1))
		# Outside the interop namespace (iop_start), a qualifier in
		# use by another socket alone is tried again once.
		if [ "$rc" -eq 0 ] && [ "$tries" -eq 1 ] &&
			[ ${#pair_prefix[@]} -eq 0 ] &&
			grep -qE 'create #[0-9]+ fails: DAT_CONN_QUAL_IN_USE' "$out" &&
			! grep -vE 'create #[0-9]+ fails: DAT_CONN_QUAL_IN_USE' "$out" |
			grep -qiE "$dapltest_bad"; then
			progress_clear
			echo "$name $ia: a qualifier was in use by another" \
				"socket; running it again" >&2
			mv "$out" "$out.first"
			continue
		fi
		break
	done
	if [ "$rc" -eq 0 ] && ! grep -qiE "$dapltest_bad" "$out"; then
		report "$name" "$ia" Pass "$out"
	else
		echo "rc $rc" >>"$out"
		report "$name" "$ia" Fail "$out"
	fi
}

# dapltest -T Q: the client must succeed and the server must then end with 0.
run_dapltest_quit() {
	local name=$1 ia=$2 spid=$3 out crc
	out="$logdir/$name.$ia.log"
	start "$out" "${pair_prefix[@]}" dapltest -T Q -s 127.0.0.1 -D "$ia"
	finish "$started" "$timeout"
	crc=$rc
	finish "$spid" 15
	echo "client rc $crc, server rc $rc" >>"$out"
	if [ "$crc" -eq 0 ] && [ "$rc" -eq 0 ]; then
		report "$name" "$ia" Pass "$out" "$logdir/dapltest_server.$ia.log"
	else
		report "$name" "$ia" Fail "$out" "$logdir/dapltest_server.$ia.log"
	fi
}

# ---- dtestcm at COUNT connections --------------------------------------------------
# Descriptors one dtestcm process holds with COUNT connections on IA,
# measured on loopback (the most either side held): about 27 + COUNT
# on ofi-tcp (one socket per EP), 27 + 4.45 x COUNT on ofi-sockets, and
# on a sockets server 2 more per connection for dapl-ofi's gate (its
# relay's two sockets; see dapl-ofi(7)); 64 plus 1, 6.5 or (any other
# IA) 5 per connection, rounded up.
dtestcm_fds() { # IA COUNT
	local per
	case $1 in
	ofi-tcp) per=10 ;;
	ofi-sockets) per=65 ;;
	*) per=50 ;;
	esac
	echo $((64 + ($2 * per + 9) / 10))
}

# A network namespace of the runner's own, with lo up, held by a child
# (PID in ns_pid) until ns_stop.  Fresh, it has no sockets of earlier
# tests in TIME_WAIT and all the ephemeral ports: 10,000 connections on
# ofi-sockets take some 25,000 of Linux's 28,232.  Root only.
ns_pid=
ns_start() { # LOG
	local mine i
	ns_pid=
	if [ "$(id -u)" -ne 0 ] || ! command -v unshare >/dev/null ||
		! command -v nsenter >/dev/null || ! command -v ip >/dev/null; then
		echo "not root, or no unshare, nsenter or ip" >"$1"
		return 1
	fi
	mine=$(readlink /proc/self/ns/net)
	start "$1" unshare -n sleep 1000000
	ns_pid=$started
	for i in $(seq 50); do
		kill -0 "$ns_pid" 2>/dev/null || break
		[ "$(readlink "/proc/$ns_pid/ns/net")" != "$mine" ] &&
			nsenter -t "$ns_pid" -n ip link set lo up >>"$1" 2>&1 &&
			return 0
		sleep 0.1
	done
	ns_stop
	return 1
}

ns_stop() {
	[ -n "$ns_pid" ] || return 0
	kill -TERM "$ns_pid" 2>/dev/null
	finish "$ns_pid" 5
	ns_pid=
}

# dtestcm's -b for COUNT connections: -c must be <= -b (default 100) or
# a multiple of it, as dtestcm's client connects in whole bursts and
# reads past its EP array otherwise (-c 250 with -b 100 passes
# h_ep[250] == NULL and fails with DAT_INVALID_HANDLE_EP on any
# libdat2).  The largest burst up to 100 that divides COUNT.
dtestcm_burst() { # COUNT
	local b=100
	[ "$1" -le 100 ] && { echo 100; return; }
	while [ $(($1 % b)) -ne 0 ]; do b=$((b - 1)); done
	echo "$b"
}

# run_dtestcm NAME IA COUNT: dtestcm server and client with COUNT
# connections.  The soft RLIMIT_NOFILE goes up to the hard one for it,
# and the hard one up to what COUNT needs where we may (root); a hard
# limit still below that is a failure that says so.  As
# root, the pair runs in a network namespace of its own.  A comment line
# gives the times.
run_dtestcm() {
	local name=$1 ia=$2 count=$3 soft hard need raised where cps burst
	local log="$logdir/$name.$ia"
	soft=$(ulimit -Sn)
	hard=$(ulimit -Hn)
	need=$(dtestcm_fds "$ia" "$count")
	# Root may raise the hard limit itself (up to fs.nr_open).
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ] &&
		ulimit -Hn "$need" 2>/dev/null; then
		hard=$(ulimit -Hn)
	fi
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
		echo "RLIMIT_NOFILE hard limit $hard: $count connections on" \
			"$ia need about $need descriptors in each process" \
			"(see dtestcm_fds)" >"$log.rc.log"
		report "$name" "$ia" Fail "$log.rc.log"
		echo "  not run: the hard RLIMIT_NOFILE ($hard) is below the" \
			"~$need descriptors $count connections need; raise it" \
			"(nofile in limits.conf, LimitNOFILE=, or ulimit -Hn" \
			"as root)"
		return
	fi
	if [ "$hard" = unlimited ]; then
		ulimit -Sn "$need" 2>/dev/null
	else
		ulimit -Sn "$hard"
	fi
	raised=$(ulimit -Sn)
	if ns_start "$log.netns.log"; then
		pair_prefix=(nsenter -t "$ns_pid" -n)
		where="its own network namespace"
	else
		pair_prefix=("${iop_prefix[@]}")
		where="this network namespace ($(tail -n 1 "$log.netns.log"))"
	fi
	burst=$(dtestcm_burst "$count")
	# The server frees its EPs after the client's: 18 s for 10,000 on
	# ofi-tcp on a busy machine.
	pair_grace=$((30 + count / 250))
	run_pair "$name" "$ia" dtestcm -P "$ia" -c "$count" -b "$burst" -- \
		-P "$ia" -c "$count" -b "$burst" -h 127.0.0.1
	pair_grace=30
	pair_prefix=("${iop_prefix[@]}")
	ns_stop
	ulimit -Sn "$soft"
	cps=$(sed -n 's/.*Connections:.*CPS *\([0-9.]*\).*/\1/p' \
		"$log.client.log" | head -n 1)
	printf '# %s %s: %d connections (-b %d): client %d.%03d s, pair %d.%03d s%s;' \
		"$name" "$ia" "$count" "$burst" $((pair_client_ms / 1000)) \
		$((pair_client_ms % 1000)) $((pair_ms / 1000)) \
		$((pair_ms % 1000)) "${cps:+, dtestcm CPS $cps}"
	printf ' RLIMIT_NOFILE %s (hard %s), in %s\n' "$raised" "$hard" \
		"$where"
}

# Wait until something listens on TCP port PORT (up to 10 s).
wait_listen() {
	local port=$1 i
	if ! command -v ss >/dev/null; then
		sleep 1
		return
	fi
	for i in $(seq 100); do
		"${pair_prefix[@]}" ss -ltnH "sport = :$port" 2>/dev/null |
			grep -q . && return
		sleep 0.1
	done
}

# The interop namespace: OFED's programs listen on connection qualifiers
# inside Linux's ephemeral port range (32768-60999): dtest, dtestx and
# dtestsrq on 45248, dapltest's limit test on 43806 to 43905.  There a
# client socket of any process, an earlier test's in TIME_WAIT for a
# minute, may hold the port, and DAT_CONN_QUAL_IN_USE is the right
# answer (dapl-ofi(7), "Qualifiers and ports").  So as root an IA's
# interop tests run in a network namespace of their own with those ports
# reserved (net.ipv4.ip_local_reserved_ports), as a deployment reserves
# the ports it listens on; dtestcm still gets a fresh one per count.  The
# namespace's holder is iop_ns, the prefix that enters it iop_prefix.
iop_ports=43806-43905,45248
iop_ns=
iop_prefix=()
iop_start() { # LOG IA
	local log=$1
	iop_prefix=()
	if ns_start "$log" &&
		nsenter -t "$ns_pid" -n sh -c "echo $iop_ports \
			>/proc/sys/net/ipv4/ip_local_reserved_ports" >>"$log" 2>&1; then
		iop_ns=$ns_pid
		ns_pid=
		iop_prefix=(nsenter -t "$iop_ns" -n)
		echo "# interop on $2: a network namespace of its own, ports" \
			"$iop_ports reserved"
	else
		ns_stop
		echo "# interop on $2: in this network namespace" \
			"($(tail -n 1 "$log")); the ports OFED's programs listen" \
			"on may be taken"
	fi
	pair_prefix=("${iop_prefix[@]}")
}

iop_stop() {
	pair_prefix=()
	iop_prefix=()
	[ -n "$iop_ns" ] || return 0
	kill -TERM "$iop_ns" 2>/dev/null
	finish "$iop_ns" 5
	iop_ns=
}

run_interop() {
	local ia=$1 t conf inst missing=() p dts_pid out

	iop_start "$logdir/interop.$ia.netns.log" "$ia"
	for t in $interop_tests; do
		selected "$t" || continue
		if excluded "$t" "$ia"; then
			report "$t" "$ia" Excluded
			continue
		fi
		progress_test "$t" "$ia"
		missing=()
		for p in dtest dtestx dtestcm dtestsrq dapltest; do
			command -v "$p" >/dev/null || missing+=("$p")
		done
		if [ ${#missing[@]} -gt 0 ]; then
			echo "not installed: ${missing[*]} (Debian: dapl2-utils)" \
				>"$logdir/$t.$ia.log"
			report "$t" "$ia" Notrun "$logdir/$t.$ia.log"
			continue
		fi
		conf="$logdir/dat.conf.$ia"
		[ "$loopback" = 1 ] && conf="$logdir/dat.conf.loopback"
		if [ ! -f "$conf" ]; then
			inst=$(instance_for "$ia")
			printf '# fabtests-dat interop: %s on loopback\n' "$ia" >"$conf"
			printf '%s u2.0 nonthreadsafe default libdaplofi.so.2 dapl.2.0 "%s" ""\n' \
				"$ia" "$inst" >>"$conf"
		fi
		# The OFED programs must resolve libdat2.so.2 to ours.
		if ! ldd "$(command -v dtest)" | grep -q "libdat2.so.2 => $libdir/libdat2.so.2"; then
			ldd "$(command -v dtest)" >"$logdir/$t.$ia.log" 2>&1
			report "$t" "$ia" Fail "$logdir/$t.$ia.log"
			continue
		fi
		export DAT_OVERRIDE="$conf"
		case $t in
		interop_dtest)
			run_pair "$t" "$ia" dtest -P "$ia" -- -P "$ia" -h 127.0.0.1 ;;
		interop_dtest_W)
			run_pair "$t" "$ia" dtest -P "$ia" -W -- -P "$ia" -W \
				-h 127.0.0.1 ;;
		interop_dtest_p)
			run_pair "$t" "$ia" dtest -P "$ia" -p -- -P "$ia" -p \
				-h 127.0.0.1 ;;
		interop_dtest_c)
			run_pair "$t" "$ia" dtest -P "$ia" -c -- -P "$ia" -c \
				-h 127.0.0.1 ;;
		interop_dtestx | interop_dtestx_p)
			run_dtestx "$t" "$ia" ;;
		interop_dtestsrq)
			run_dtestsrq "$t" "$ia" ;;
		interop_dtestsrq_c8)
			run_dtestsrq "$t" "$ia" -c 8 -B 4 -t 5 ;;
		interop_dtestcm_c*)
			run_dtestcm "$t" "$ia" "${t#interop_dtestcm_c}" ;;
		interop_dapltest_*)
			if [ "$t" != interop_dapltest_L ] &&
				[ -z "${dts_pid:-}" ]; then
				out="$logdir/dapltest_server.$ia.log"
				start "$out" "${pair_prefix[@]}" dapltest -T S \
					-D "$ia"
				dts_pid=$started
				sleep 1 # it listens through DAT: nothing to poll
			fi
			case $t in
			interop_dapltest_T_SR)
				run_dapltest "$t" "$ia" -T T -s 127.0.0.1 -D "$ia" \
					-i 1000 -t 1 -w 1 -V \
					client SR 256 server SR 256 ;;
			interop_dapltest_T_mix)
				run_dapltest "$t" "$ia" -T T -s 127.0.0.1 -D "$ia" \
					-i 100 -t 2 -w 2 -V \
					client SR 1024 3 server SR 1024 3 \
					client RR 4096 server RR 4096 \
					client RW 4096 server RW 4096 ;;
			interop_dapltest_T_P)
				run_dapltest "$t" "$ia" -T T -s 127.0.0.1 -D "$ia" \
					-i 250 -t 2 -w 1 -V -P \
					client SR 512 server SR 512 \
					client RW 8192 2 server RR 8192 2 ;;
			interop_dapltest_P_RW)
				run_dapltest "$t" "$ia" -T P -s 127.0.0.1 -D "$ia" \
					-i 1000 -p 8 -m p RW 4096 2 ;;
			interop_dapltest_P_RR)
				run_dapltest "$t" "$ia" -T P -s 127.0.0.1 -D "$ia" \
					-i 1000 -p 8 -m b RR 4096 2 ;;
			interop_dapltest_L)
				run_dapltest "$t" "$ia" -T L -D "$ia" -w 8 -m 100 \
					limit_ia limit_pz limit_cno limit_evd \
					limit_ep limit_rsp limit_psp limit_lmr \
					limit_rpost limit_size_lmr ;;
			interop_dapltest_Q)
				run_dapltest_quit "$t" "$ia" "$dts_pid"
				dts_pid= ;;
			esac
			;;
		esac
		[ "$loopback" = 1 ] || unset DAT_OVERRIDE
	done
	if [ -n "${dts_pid:-}" ]; then
		kill -TERM "$dts_pid" 2>/dev/null
		finish "$dts_pid" 5
	fi
	iop_stop
}

# ---- loopback: the built-in names on lo -----------------------------------------------
if [ "$loopback" = 1 ]; then
	{
		echo "# fabtests-dat --loopback: built-in names on the loopback"
		for n in ofi-tcp ofi-sockets ofi-rxm ofi-shm ofi-rxd; do
			printf '%s u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "%s" ""\n' \
				"$n" "$(instance_for "$n")"
		done
	} >"$logdir/dat.conf.loopback"
	export DAT_OVERRIDE="$logdir/dat.conf.loopback"
fi

# ---- which IAs -----------------------------------------------------------------------
if [ ${#ias[@]} -eq 0 ]; then
	for ia in $default_ias; do
		if "$dat_info" -v "$ia" >"$logdir/dat_info.$ia.log" 2>&1; then
			ias+=("$ia")
		else
			echo "# $ia: dat_info -v cannot open it here; not tested"
		fi
	done
fi
if [ ${#ias[@]} -eq 0 ]; then
	echo "# no IA to test"
fi

echo "# fabtests-dat: $where, groups $groups, IAs ${ias[*]}"
for t in $(group_tests); do
	selected "$t" && progress_total=$((progress_total + ${#ias[@]}))
done
for ia in "${ias[@]}"; do
	load_excludes "$ia"
done
for ia in "${ias[@]}"; do
	[ -z "$only" ] || run_unknown "$ia"
	[ -z "$skip" ] || run_left_out "$ia"
	if [ "$named_ias" -eq 1 ] &&
		! "$dat_info" -v "$ia" >"$logdir/dat_info.$ia.log" 2>&1; then
		echo "# $ia: dat_info -v cannot open it"
		run_unopened "$ia"
		continue
	fi
	case ",$groups," in *,functional,*) run_functional "$ia" ;; esac
	case ",$groups," in *,interop,*) run_interop "$ia" ;; esac
done

for ex in "${excluded_list[@]}"; do
	echo "# excluded: $ex"
done
# Where the run's time went: the slowest tests, seconds each.
if [ ${#times_list[@]} -gt 0 ]; then
	printf '# slowest:'
	printf '%s\n' "${times_list[@]}" | sort -rn | head -n 8 |
		while read -r sec tname tia; do
			printf ' %s %s %ss;' "$tname" "$tia" "$sec"
		done
	echo
fi
echo "# $nnotrun notrun, $nexcluded excluded, $nleft left out; $SECONDS s"
echo "$npass passed, $nfail failed, $((nnotrun + nexcluded + nleft)) skipped"
[ "$nfail" -eq 0 ]
