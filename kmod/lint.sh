#!/bin/sh
# Lint the module the way kernel review would: for each kernel release given,
# a W=1 build with sparse (C=1) must print no warning; and checkpatch --strict
# must be clean. compat.h exists to hold LINUX_VERSION_CODE tests, so that
# one checkpatch warning is ignored there and only there.
#   lint.sh SRCDIR WORKDIR KVER...
set -u
src=$1 work=$2
shift 2
status=0
checkpatch=$(ls /usr/src/linux-source-*/scripts/checkpatch.pl 2>/dev/null | sort -V | tail -n1)

for kver in "$@"; do
	out=$work/lint-$kver
	rm -rf "$out"
	log=$(sh "$src/kbuild.sh" "$kver" "$src" "$out" W=1 C=1 2>&1)
	rc=$?
	# The only line Kbuild prints for a clean out-of-tree build.
	log=$(printf '%s\n' "$log" | grep -v '^Skipping BTF generation' | grep -v '^$')
	if [ $rc -ne 0 ] || [ -n "$log" ]; then
		echo "FAIL: W=1 C=1 build for $kver (exit $rc):"
		printf '%s\n' "$log"
		status=1
	else
		echo "ok: W=1 C=1 build for $kver"
	fi
done

if [ -z "$checkpatch" ]; then
	echo "FAIL: checkpatch.pl not found: run scripts/bootstrap (linux-source)"
	exit 1
fi
files=$(ls "$src"/*.c "$src"/*.h | grep -v '/compat\.h$')
if ! perl "$checkpatch" --strict --no-tree --terse --show-types -f $files ||
   ! perl "$checkpatch" --strict --no-tree --terse --show-types \
	--ignore LINUX_VERSION_CODE -f "$src/compat.h"; then
	echo "FAIL: checkpatch --strict"
	status=1
fi
exit $status
