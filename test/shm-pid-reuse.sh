#!/bin/sh
# ofi-shm after a killed process whose id comes back: a process killed
# with SIGKILL leaves its shm regions in /dev/shm, and shm (libfabric
# 1.17) refuses with FI_EBUSY to open a region of the same name while a
# process with the creator's id lives. A later process given the same id
# must still connect: dapl-ofi's endpoint names carry the IA's
# incarnation as well as the process id. Each run is pid 1 of a PID
# namespace of its own, on a /dev/shm of its own (a private tmpfs in a
# mount namespace), with a network namespace of its own.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
libs="$top_builddir/.libs"
prog="$top_builddir/fabtests-dat/functional/dat_dto"
if [ -z "${SHM_PID_REUSE_INNER:-}" ]; then
	if [ ! -x "$prog" ]; then
		echo "SKIP: $prog not built"
		exit 77
	fi
	if ! command -v unshare >/dev/null ||
		! unshare -m -n -p -f true 2>/dev/null; then
		echo "SKIP: cannot make mount, network and PID namespaces" \
			"(unshare needs CAP_SYS_ADMIN)"
		exit 77
	fi
	conf=$(mktemp) || exit 1
	printf '%s\n' 'ofi-shm u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "shm" ""' >"$conf"
	LD_LIBRARY_PATH="$libs" "$top_builddir/dat_info" -f "$conf" \
		-v ofi-shm >/dev/null 2>&1
	rc=$?
	rm -f "$conf"
	if [ $rc -ne 0 ]; then
		echo "SKIP: libfabric has no shm provider here (dat_info ofi-shm)"
		exit 77
	fi
	SHM_PID_REUSE_INNER=1 exec unshare -m -n sh "$0"
fi

# In the mount and network namespaces: a /dev/shm of our own.
fail=0
check() {
	d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fail=1; fi
}
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
mount --make-rprivate / 2>/dev/null
mount -t tmpfs -o size=512m tmpfs /dev/shm || {
	echo "FAIL: cannot mount a tmpfs on /dev/shm"
	exit 1
}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' 'ofi-shm u2.0 threadsafe default libdaplofi.so.2 dapl.2.0 "shm" ""' \
	>"$tmp/dat.conf"
export DAT_OVERRIDE="$tmp/dat.conf" LD_LIBRARY_PATH="$libs"
export FT_EXPECT_LIBDIR="$libs"

# The first run: killed as soon as its first region exists.
unshare -p -f --mount-proc "$prog" -D ofi-shm >"$tmp/first.log" 2>&1 &
outer=$!
i=0
while [ -z "$(ls /dev/shm)" ] && [ $i -lt 500 ]; do
	sleep 0.02
	i=$((i + 1))
done
inner=$(pgrep -P "$outer")
[ -n "$inner" ] && kill -KILL "$inner"
wait "$outer"
left=$(ls /dev/shm | tr '\n' ' ')
echo "left behind by the killed run: $left"
check "the killed run left a region of pid 1 behind" \
	sh -c "ls /dev/shm | grep -q '^1_'"

# The second run: pid 1 again.
timeout 120 unshare -p -f --mount-proc "$prog" -D ofi-shm \
	>"$tmp/second.log" 2>&1
rc=$?
grep -v '^ *ok:' "$tmp/second.log" | sed 's/^/  second| /'
check "a run with the killed run's pid passes (rc $rc)" test $rc -eq 0
check "no endpoint is refused as busy" \
	sh -c "! grep -q 'resource busy' '$tmp/second.log'"
umount /dev/shm
exit $fail
