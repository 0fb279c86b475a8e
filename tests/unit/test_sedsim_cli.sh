#!/bin/sh
# sedsim's command line: --help and --version succeed on stdout; every
# mistake is one line on stderr saying what is wrong, exit 1; --try-limit 0
# (no limit, as the Core Spec defines TryLimit 0) is taken, not replaced.
#   test_sedsim_cli.sh SEDSIM VERSION
set -u
SEDSIM=$1
VERSION=$2
T=$(mktemp -d /tmp/test_sedsim_cli.XXXXXX)
trap 'rm -rf "$T"' EXIT
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }

echo "1..19"
for h in --help -h; do
	if "$SEDSIM" "$h" >"$T/out" 2>"$T/err" && grep -q "^Usage: sedsim create" "$T/out" && [ ! -s "$T/err" ]; then
		ok "$h: usage on stdout, exit 0"
	else
		not_ok "$h: usage on stdout, exit 0"
	fi
done
if "$SEDSIM" --version >"$T/out" 2>&1 && [ "$(cat "$T/out")" = "sedsim $VERSION" ]; then
	ok "--version: sedsim $VERSION"
else
	not_ok "--version: $(cat "$T/out")"
fi

# expect_usage WANT ARGS...: exit 1, one line on stderr holding WANT.
expect_usage() {
	_want=$1
	shift
	"$SEDSIM" "$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ "$_rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF -- "$_want" "$T/err"; then
		ok "sedsim $*: $_want"
	else
		not_ok "sedsim $* (exit $_rc): want '$_want' in one line, got: $(cat "$T/err")"
	fi
}
mkdir "$T/d"
expect_usage "no command given"
expect_usage "unknown command 'frobnicate'" frobnicate "$T/d"
expect_usage "create: needs the drive's directory" create
expect_usage "create: --try-limit '101': give 1 to 100, or 0 for no limit" create "$T/d" --try-limit 101
expect_usage "create: --blocks needs a value" create "$T/d" --blocks
expect_usage "create: --blocks '0': give a positive number" create "$T/d" --blocks 0
expect_usage "create: unknown option '--colour'" create "$T/d" --colour blue
expect_usage "read: LBA 'x' is not a block number" read "$T/d" x 1
expect_usage "serve-nvme: --port '70000': give 1 to 65535" serve-nvme "$T/d" --port 70000
expect_usage "create: --lock-on-reset 'hardware-reset': give power-cycle,hardware-reset or power-cycle" \
	create "$T/d" --lock-on-reset hardware-reset
expect_usage "hw-reset: give DIR alone" hw-reset "$T/d" now
if [ -z "$(ls -A "$T/d")" ]; then ok "nothing created on a bad command line"; else not_ok "nothing created on a bad command line"; fi
if "$SEDSIM" create "$T/d" --try-limit 0 >"$T/out" 2>&1; then
	ok "--try-limit 0 is taken (no limit)"
else
	not_ok "--try-limit 0 is taken (no limit): $(cat "$T/out")"
fi
# hw-reset: a drive that is not there is exit 2; one that is, 0. What the
# firmware takes in LockOnReset is kept with the drive.
"$SEDSIM" hw-reset "$T/none" >"$T/out" 2>&1
if [ $? -eq 2 ] && grep -q "hw-reset $T/none: .*create it with" "$T/out"; then
	ok "hw-reset of no drive: exit 2"
else
	not_ok "hw-reset of no drive: $(cat "$T/out")"
fi
mkdir "$T/pc"
if "$SEDSIM" create "$T/pc" --lock-on-reset power-cycle >"$T/out" 2>&1 &&
	grep -qx "lock-on-reset power-cycle" "$T/pc/identity" &&
	grep -qx "lock-on-reset power-cycle,hardware-reset" "$T/d/identity"; then
	ok "create --lock-on-reset power-cycle is kept with the drive (default: with hardware-reset)"
else
	not_ok "create --lock-on-reset power-cycle: $(cat "$T/out")"
fi
if "$SEDSIM" hw-reset "$T/pc" >"$T/out" 2>&1 && [ ! -s "$T/out" ]; then
	ok "hw-reset DIR: exit 0, nothing printed"
else
	not_ok "hw-reset DIR: $(cat "$T/out")"
fi
[ "$failed" -eq 0 ]
