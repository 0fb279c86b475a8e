#!/bin/sh
# Build kmod/ through DKMS, in private source and DKMS trees, for each kernel
# given: proves dkms.conf and that kmod/ needs nothing outside itself.
#   dkms-check.sh SRCDIR WORKDIR KVER...
set -eu
src=$1 work=$2
shift 2
command -v dkms >/dev/null || { echo "FAIL: dkms not installed: run scripts/bootstrap"; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
rm -rf "$work/dkms-src" "$work/dkms-tree"
mkdir -p "$work/dkms-src/xts_offload-$ver" "$work/dkms-tree"
# Only what DKMS would get: the files of kmod/, nothing from the repository.
cp "$src"/*.c "$src"/*.h "$src"/Kbuild "$src"/dkms.conf "$work/dkms-src/xts_offload-$ver/"
for kver in "$@"; do
	dkms build --sourcetree "$work/dkms-src" --dkmstree "$work/dkms-tree" \
		-m xts_offload -v "$ver" -k "$kver" >"$work/dkms-$kver.log" 2>&1 || {
		cat "$work/dkms-$kver.log"
		echo "FAIL: dkms build for $kver"
		exit 1
	}
	for m in xts_offload xts_offload_virtio; do
		ko=$(find "$work/dkms-tree" -path "*/$kver/*" -name "$m.ko*" | head -n1)
		[ -n "$ko" ] || { echo "FAIL: dkms built no $m module for $kver"; exit 1; }
		echo "ok: dkms build for $kver: ${ko#"$work"/}"
	done
done
