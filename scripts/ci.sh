#!/bin/bash
# The two commands README.md gives, and what CI runs:
#   scripts/ci.sh main   install dependencies, build, run the main job
#   scripts/ci.sh test   install dependencies, build, run the whole suite
# Both work on a fresh Debian 12 machine as root (or with sudo).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
jobs=$(nproc 2>/dev/null || echo 2)

# Debian packages: toolchain, libfabric, hwloc, Check, rdma-core, and the
# OFED reference (headers, libdat2, test programs) used only by tests.
packages=(
	build-essential autoconf automake libtool pkg-config
	libfabric-dev libfabric-bin libhwloc-dev check
	rdma-core libibverbs-dev
	libdapl-dev libdapl2 dapl2-utils
	clang python3 groff-base iproute2
)

log() { printf '\n=== %s\n' "$*"; }

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

main_job() {
	log "main job: dat_info over the registry"
	"$build/dat_info"
	log "main job: dat_info -v ofi-tcp"
	LD_LIBRARY_PATH="$build/.libs" "$build/dat_info" -v ofi-tcp ||
		echo "(ofi-tcp cannot open until the provider, libdaplofi.so.2, is built)"
}

summary() { # test-suite.log -> counts
	awk '/^# (PASS|FAIL|XPASS|ERROR|SKIP):/ {n[$2]=$3}
	     END {printf "%d %d %d\n", n["PASS:"], n["FAIL:"]+n["XPASS:"]+n["ERROR:"], n["SKIP:"]}' "$1"
}

test_job() {
	local rc=0 pass fail skip
	build "$build"
	log "make check (gcc)"
	(cd "$build" && make -s -j"$jobs" check) || rc=1
	log "unit tests (Check)"
	cat "$build/test/check_dat.log" 2>/dev/null | grep -E '^[0-9]+%|:[FE]:' || true
	for t in "$build"/test/*.log "$build"/test/abi/*.log; do
		case "$t" in *check_dat.log) continue ;; esac
		[ -f "$t" ] && { echo "--- ${t#$build/}"; cat "$t"; }
	done
	read -r pass fail skip < <(summary "$build/test-suite.log")
	if [ "$skip" -ne 0 ]; then
		echo "FAIL: $skip test(s) skipped although every dependency is installed"
		fail=$((fail + skip))
	fi

	log "install: libdat.so links with -ldat"
	local dest="$build/destdir" prefix=/usr/local
	rm -rf "$dest"
	if (cd "$build" && make -s install DESTDIR="$dest" >/dev/null 2>&1) &&
		printf '#include <dat2/udat.h>\nint main(void){const char *a, *b;\nreturn dat_strerror(DAT_SUCCESS, &a, &b) != DAT_SUCCESS;}\n' >"$build/ldat.c" &&
		cc -I"$dest$prefix/include" "$build/ldat.c" -L"$dest$prefix/lib" -ldat -o "$build/ldat" &&
		LD_LIBRARY_PATH="$dest$prefix/lib" "$build/ldat" &&
		readelf -d "$build/ldat" | grep -q 'NEEDED.*\[libdat2.so.2\]'; then
		pass=$((pass + 1)); echo "ok: -ldat links to libdat2.so.2"
	else
		fail=$((fail + 1)); echo "FAIL: -ldat"
	fi

	log "clang build (-Wall -Wextra -Werror)"
	if build "$top/build-clang" CC=clang &&
		(cd "$top/build-clang" && make -s -j"$jobs" check TESTS=); then
		pass=$((pass + 1)); echo "ok: clang build"
	else
		fail=$((fail + 1)); echo "FAIL: clang build"
	fi

	log "make distcheck"
	if (cd "$build" && make -s distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >distcheck.out 2>&1); then
		pass=$((pass + 1)); tail -4 "$build/distcheck.out"
	else
		fail=$((fail + 1)); tail -40 "$build/distcheck.out"
	fi
	[ "$rc" -eq 0 ] || [ "$fail" -gt 0 ] || fail=1
	echo
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

case "${1:-}" in
main) deps; build "$build"; main_job ;;
test) deps; test_job ;;
deps) deps ;;
*) echo "usage: $0 main|test" >&2; exit 2 ;;
esac
