#!/bin/bash
# Build the libFuzzer targets with clang directly (no configure needed) and
# run one or all of them.
#
#   fuzz/run.sh [cm_hdr|dat_conf|instance|rdm_wire|all] [libFuzzer options...]
#   fuzz/run.sh cm_hdr -runs=10000000
#   fuzz/run.sh dat_conf -max_total_time=300
#   fuzz/run.sh all                        (60 s each when no limit is given)
#   fuzz/run.sh dat_conf path/to/crash-... (replay one input)
#
# Builds go to $FUZZ_BUILD (default fuzz/build/, which git ignores),
# with a working corpus there seeded from fuzz/corpus/<target>; a crash is
# written there as crash-<target>-<hash>. Exits non-zero on a crash.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD:-$top/fuzz/build}
cc=${CC:-clang}
target=${1:-all}
[ $# -gt 0 ] && shift

case "$target" in
cm_hdr | dat_conf | instance | rdm_wire | all) ;;
*)
	echo "usage: $0 [cm_hdr|dat_conf|instance|rdm_wire|all]" \
		"[libFuzzer options...]" >&2
	exit 2
	;;
esac
command -v "$cc" >/dev/null || {
	echo "$0: $cc not found (libFuzzer needs clang)" >&2
	exit 77
}

mkdir -p "$out"
# What configure's config.h gives the sources that include it.
printf '#define _GNU_SOURCE 1\n#define DOF_LOG_MAX_LEVEL 4\n' >"$out/config.h"
cflags=(-std=c11 -g -O1 -Wall -Wextra -Werror
	"-fsanitize=fuzzer,address,undefined" -fno-sanitize-recover=all
	-I"$out" -I"$top/include")

build() { # target
	case "$1" in
	cm_hdr)
		"$cc" "${cflags[@]}" -I"$top/prov/ofi" \
			"$top/fuzz/fuzz_cm_hdr.c" "$top/prov/ofi/dofi_cm_hdr.c" \
			-o "$out/fuzz_cm_hdr"
		;;
	instance)
		"$cc" "${cflags[@]}" -I"$top/prov/ofi" \
			"$top/fuzz/fuzz_instance.c" "$top/prov/ofi/dofi_instance.c" \
			-o "$out/fuzz_instance"
		;;
	rdm_wire)
		"$cc" "${cflags[@]}" -I"$top/prov/ofi" \
			"$top/fuzz/fuzz_rdm_wire.c" "$top/prov/ofi/dofi_rdm_wire.c" \
			-o "$out/fuzz_rdm_wire"
		;;
	dat_conf)
		"$cc" "${cflags[@]}" -I"$top/dat" \
			-DDAT_SYSCONF_PATH='"/nonexistent/dat.conf"' \
			-DDAPL_OFI_PROVIDER_LIB='"libdaplofi.so.2"' \
			-DDATR_CONF_SIZE_MAX=3000 -DDATR_LINE_MAX=300 \
			"$top/fuzz/fuzz_dat_conf.c" "$top/dat/dat_conf.c" \
			-o "$out/fuzz_dat_conf"
		;;
	esac
}

run() { # target, libFuzzer options...
	local t=$1 extra=()
	shift
	local opts=("$@")
	[ -f "$top/fuzz/$t.dict" ] && extra+=(-dict="$top/fuzz/$t.dict")
	# A single input file replays it; otherwise fuzz from the corpus.
	if [ ${#opts[@]} -eq 1 ] && [ -f "${opts[0]}" ]; then
		"$out/fuzz_$t" "${opts[0]}"
		return
	fi
	case " ${opts[*]:-} " in
	*" -runs="* | *" -max_total_time="*) ;;
	*) opts+=(-max_total_time=60) ;;
	esac
	mkdir -p "$out/corpus/$t"
	"$out/fuzz_$t" -artifact_prefix="$out/crash-$t-" -print_final_stats=1 \
		"${extra[@]}" "${opts[@]}" "$out/corpus/$t" "$top/fuzz/corpus/$t"
}

targets=("$target")
[ "$target" = all ] && targets=(cm_hdr dat_conf instance rdm_wire)
for t in "${targets[@]}"; do
	build "$t"
done
for t in "${targets[@]}"; do
	echo "=== fuzz_$t $*"
	run "$t" "$@"
done
