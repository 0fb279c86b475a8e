#!/bin/sh
# Build kmod/ out of tree for one kernel release into OUTDIR, leaving the
# source tree clean. Used by meson; also usable by hand.
#   kbuild.sh KVER SRCDIR OUTDIR [extra make args, e.g. W=1 C=1]
set -eu
kver=$1 src=$2 out=$3
shift 3
kdir=${KDIR:-/lib/modules/$kver/build}
if [ ! -f "$kdir/Makefile" ]; then
	echo "kbuild: no headers for $kver in $kdir: run scripts/bootstrap" >&2
	exit 1
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Kbuild writes objects next to the sources: build from a private copy.
for f in "$src"/*.c "$src"/*.h "$src"/Kbuild; do
	cmp -s "$f" "$out/${f##*/}" 2>/dev/null || cp "$f" "$out/"
done
exec make -s -C "$kdir" M="$out" "$@" modules
