#!/bin/sh
# The provider's files are layered (dofi.h, "dofi_ctl_ops"): each calls
# only into files of a lower layer, or of its own layer where that layer is
# the data path (dofi_dto.c, dofi_defer.c, dofi_evd.c: the one circle
# allowed). Calls upward go through ia->ctl or ia->cm_ops. This reads the
# built objects (nm): every symbol a file uses that another file defines
# must come from a lower layer. A new file must be given a layer here.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
objdir="$top_builddir/prov/ofi/.libs"

# file:layer, lowest first
layers='
dofi_util:0
dofi_status:1 dofi_traits:1 dofi_map:1 dofi_timer:1 dofi_cm_hdr:1
dofi_instance:1 dofi_ext_attr:1 dofi_rdm_wire:1
dofi_gate:2
dofi_dto:3 dofi_defer:3 dofi_evd:3 dofi_ext_dto:3
dofi_progress:4
dofi_mem:5
dofi_srq:6
dofi_ep:7
dofi_cm:8
dofi_cm_msg:9 dofi_cm_rdm:9
dofi_ia:10
dofi_ext:11
dofi_prov:12
'
datapath=3

[ -d "$objdir" ] || { echo "FAIL: $objdir not built"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

n=0
for o in "$objdir"/libdaplofi_la-*.o; do
	f=$(basename "$o" .o)
	f=${f#libdaplofi_la-}
	# "D file sym" for what f defines, "U file sym" for what it uses
	nm "$o" | awk -v f="$f" '
		NF == 3 && $2 ~ /^[TDBR]$/ { print "D", f, $3 }
		NF == 2 && $1 == "U" { print "U", f, $2 }'
	n=$((n + 1))
done >"$tmp/syms"
[ "$n" -gt 0 ] || { echo "FAIL: no objects in $objdir"; exit 1; }

echo "$layers" | tr ' ' '\n' | awk -F: 'NF == 2' >"$tmp/layers"
awk -v lf="$tmp/layers" -v dp="$datapath" '
	BEGIN { while ((getline l < lf) > 0) { split(l, a, ":"); lay[a[1]] = a[2] } }
	$1 == "D" { def[$3] = $2; files[$2] = 1; next }
	$1 == "U" { use[++nu] = $2 " " $3 }
	END {
		bad = 0
		for (f in files)
			if (!(f in lay)) {
				printf "FAIL: %s.c has no layer in test/layers.sh\n", f
				bad = 1
			}
		for (i = 1; i <= nu; i++) {
			split(use[i], u, " ")
			from = u[1]; sym = u[2]
			if (!(sym in def) || def[sym] == from) continue
			to = def[sym]
			if (!(from in lay) || !(to in lay)) continue
			if (lay[to] < lay[from]) continue
			if (lay[to] == lay[from] && lay[to] == dp) continue
			printf "FAIL: %s.c (layer %d) calls %s of %s.c (layer %d)\n",
			       from, lay[from], sym, to, lay[to]
			bad = 1
		}
		if (!bad) {
			nf = 0; for (f in files) nf++
			printf "ok: %d provider files, every call goes down a layer " \
			       "(or within the data path)\n", nf
		}
		exit bad
	}' "$tmp/syms"
