#!/bin/sh
# fdekit-opal-sleep-guard: a sleep inhibitor exactly when a range unlocked
# at boot would come back locked after resume (what opalctl unlock-all
# --state-dir recorded), naming it; none otherwise. systemd-inhibit is a
# stand-in here that records how it was called.
#   test_sleep_guard.sh GUARD
set -u
GUARD=$1
T=$(mktemp -d /tmp/test_sleep_guard.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

echo "1..6"
mkdir -p "$T/bin" "$T/run"
printf '#!/bin/sh\nfor a in "$@"; do printf "%%s\\n" "$a"; done >"%s"\n' "$T/inhibit.args" >"$T/bin/systemd-inhibit"
chmod 0755 "$T/bin/systemd-inhibit"

guard() {
	rm -f "$T/inhibit.args"
	PATH="$T/bin:$PATH" sh "$GUARD" "$T/run" >"$T/out" 2>&1
}

guard
if [ $? -eq 0 ] && [ ! -e "$T/inhibit.args" ] && grep -q "suspend allowed" "$T/out"; then
	ok "nothing unlocked: no inhibitor"
else
	not_ok "nothing unlocked: no inhibitor"; sed 's/^/# /' "$T/out"
fi

printf 'device=/dev/nvme0n1\nranges=1\nalready_unlocked=no\nsaved_for_resume=yes\nresume_unlocks=yes\n' >"$T/run/root"
guard
if [ $? -eq 0 ] && [ ! -e "$T/inhibit.args" ]; then
	ok "a range the kernel unlocks on resume: no inhibitor"
else
	not_ok "a range the kernel unlocks on resume: no inhibitor"; sed 's/^/# /' "$T/out"
fi

printf 'device=/dev/nvme1n1\nranges=1,2\nalready_unlocked=no\nsaved_for_resume=yes\nresume_unlocks=no\n' >"$T/run/data"
printf 'device=/dev/sdb\nranges=0\nalready_unlocked=yes\nsaved_for_resume=no\nresume_unlocks=no\n' >"$T/run/spare"
printf 'half written\nresume_unlocks=no\n' >"$T/run/other.new"
guard
if [ $? -eq 0 ] && [ -e "$T/inhibit.args" ]; then
	ok "ranges that come back locked: an inhibitor is taken"
else
	not_ok "ranges that come back locked: an inhibitor is taken"; sed 's/^/# /' "$T/out"
fi
if grep -qx -- "--what=sleep" "$T/inhibit.args" && grep -qx -- "--mode=block" "$T/inhibit.args" &&
	grep -qx "sleep" "$T/inhibit.args" && grep -qx "infinity" "$T/inhibit.args"; then
	ok "it blocks sleep until stopped"
else
	not_ok "it blocks sleep until stopped"; sed 's/^/# /' "$T/inhibit.args"
fi
why=$(grep -- "^--why=" "$T/inhibit.args")
case $why in
*"data: /dev/nvme1n1 range 1,2 (key saved, but this kernel does not replay it"*"spare: /dev/sdb range 0 (no key saved for resume)"*)
	ok "the reason names each range and why" ;;
*) not_ok "the reason names each range and why: $why" ;;
esac
case $why in
*root*|*other*) not_ok "and only those: $why" ;;
*) ok "and only those (not the one the kernel unlocks, not a file being written)" ;;
esac
[ "$failed" -eq 0 ]
