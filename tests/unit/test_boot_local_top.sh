#!/bin/sh
# The initramfs-tools local-top script (scripts/local-top/fdekit-opal), run
# on the host under dash and under busybox sh against a directory standing
# for the initramfs' root (FDEKIT_ROOT): /scripts/functions holds stubs of
# initramfs-tools' functions (configure_networking, log_*, ip) and
# /usr/sbin/opalctl a stub; each records what it was asked. No interface
# of the host is looked at or touched (the root's /sys/class/net is empty,
# and ip is a stub function).
#   test_boot_local_top.sh SCRIPT BOOT-FUNCTIONS
# Checks:
#   - fdekit.timeout= and FDEKIT_TIMEOUT: decimal whatever the leading
#     zeros (08 stopped dash and busybox, 010 was octal), 1 to 86400
#     (opalctl's --deadline), anything else said on the console and the
#     default used; fdekit_seconds itself under both shells;
#   - the Begin line of the unlock ends in "failed" when opalctl failed;
#   - configure_networking's output goes to /run/fdekit-network.log; every
#     process it started, one that left its process tree and one that
#     ignores SIGTERM included, is gone when the script returns; no
#     /run/fdekit-curl.* is left;
#   - no wait for the network when no entry needs Tang for its key
#     (FDEKIT_TANG_ENTRIES empty), or with fdekit.tang-wait=no or
#     FDEKIT_TANG_WAIT=no; the wait when one does, or with yes.
set -u
SCRIPT=$1
FUNCS=$2
T=$(mktemp -d /tmp/test_boot_local_top.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

need busybox dash timeout
R=$T/root
mkdir -p "$R/scripts" "$R/etc/fdekit" "$R/usr/sbin" "$R/usr/share/fdekit" "$R/proc" \
	"$R/sys/class/net" "$R/sys/class/nvme" "$R/run" "$R/tmp"
cp "$FUNCS" "$R/usr/share/fdekit/boot-functions"
echo "root serial=FDEKITTEST01 1 clevis:/etc/fdekit/root.jwe" >"$R/etc/fdekit/opaltab"

# initramfs-tools' functions as the script uses them; log_end_msg says
# "done." whatever it is given, as Debian 12's does.
cat >"$R/scripts/functions" <<EOF
quiet=n
_log_msg() { [ "\$quiet" = y ] && return 0; printf "\$@"; }
log_success_msg() { _log_msg "Success: %s\\\\n" "\$*"; }
log_failure_msg() { _log_msg "Failure: %s\\\\n" "\$*"; }
log_warning_msg() { _log_msg "Warning: %s\\\\n" "\$*"; }
log_begin_msg() { _log_msg "Begin: %s ... " "\$*"; }
log_end_msg() { _log_msg "done.\\\\n"; }
wait_for_udev() { :; }
ip() { echo "ip \$*" >>"$T/ip.log"; }
configure_networking() {
	echo "Waiting up to 180 secs for any network device to become available"
	case \$(cat "$T/net.mode" 2>/dev/null) in
	up)
		sleep 0.3
		echo "IP-Config: eth0 complete"
		;;
	never)
		# As a DHCP client may: a child that leaves the process tree
		# (its parent exits), and one that ignores SIGTERM.
		(sleep 300 </dev/null >/dev/null 2>&1 & echo \$! >"$T/orphan.pid")
		sh -c 'trap "" TERM; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &
		echo \$! >"$T/stubborn.pid"
		sleep 300
		;;
	*)
		sleep 300
		;;
	esac
}
EOF
# opalctl: its arguments, when it was called, and a Tang pin's curl
# directory left behind as by an opalctl that was killed.
cat >"$R/usr/sbin/opalctl" <<EOF
#!/bin/sh
read -r up _ </proc/uptime
echo "\$up" >"$T/opalctl.at"
printf '%s\n' "\$@" >"$T/opalctl.args"
mkdir -p "$R/run/fdekit-curl.Ab12Cd" && : >"$R/run/fdekit-curl.Ab12Cd/.curlrc"
exit \$(cat "$T/opalctl.rc")
EOF
chmod 0755 "$R/usr/sbin/opalctl"

# setup CMDLINE CONF [OPALCTL-RC [NET-MODE]]: the kernel command line, the
# image's /etc/fdekit/initramfs.conf, opalctl's exit status.
setup() {
	echo "$1" >"$R/proc/cmdline"
	printf '%s\n' "$2" >"$R/etc/fdekit/initramfs.conf"
	echo "${3:-0}" >"$T/opalctl.rc"
	echo "${4:-}" >"$T/net.mode"
	rm -rf "$T/opalctl.args" "$T/opalctl.at" "$T/orphan.pid" "$T/stubborn.pid" "$T/ip.log" \
		"$R/run/"* "$R/tmp/"*
}

# run SHELL: the script, bounded; $T/console its output, $T/rc its status,
# $T/started the uptime it started at.
run() {
	read -r _up _ </proc/uptime
	echo "$_up" >"$T/started"
	# shellcheck disable=SC2086 # "busybox sh": two words
	FDEKIT_ROOT=$R timeout 60 $1 "$SCRIPT" >"$T/console" 2>&1
	echo $? >"$T/rc"
}

# deadline: the --deadline opalctl was given (empty when it was not called).
deadline() {
	[ -r "$T/opalctl.args" ] && sed -n '/^--deadline$/{n;p;}' "$T/opalctl.args"
}

# called_after: centiseconds from the script's start to opalctl's.
called_after() {
	awk -v a="$(cat "$T/started")" -v b="$(cat "$T/opalctl.at")" 'BEGIN { printf "%d\n", (b - a) * 100 }'
}

# expect_deadline DESC LOW HIGH: the script exited 0 and opalctl got a
# --deadline from LOW to HIGH (a second may tick between them).
expect_deadline() {
	_d=$(deadline)
	if [ "$(cat "$T/rc")" = 0 ] && [ -n "$_d" ] && [ "$_d" -ge "$2" ] && [ "$_d" -le "$3" ]; then
		ok "$1"
	else
		not_ok "$1 (exit $(cat "$T/rc"), --deadline '${_d}', want $2 to $3)"
		sed 's/^/# /' "$T/console"
	fi
}

# console_says DESC PATTERN
console_says() {
	if grep -q -- "$2" "$T/console"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$T/console"; fi
}

# gone PID: no such process, or a zombie (nothing runs).
gone() {
	[ -r "/proc/$1/stat" ] || return 0
	read -r _l 2>/dev/null <"/proc/$1/stat" || return 0
	_l=${_l##*") "}
	[ "${_l%% *}" = Z ]
}

# reap: what a failing script left running does not outlive the test.
reap() {
	for _f in "$T/orphan.pid" "$T/stubborn.pid"; do
		[ -s "$_f" ] && kill -KILL "$(cat "$_f")" 2>/dev/null
	done
	return 0
}

echo "1..64"

for sh in dash "busybox sh"; do
	# --- fdekit_seconds, as both generators' scripts call it ---
	# shellcheck disable=SC2016 # expanded by the shell under test
	$sh -c '. "$1" || exit 1
		for v in 08 010 0 1 86400 86401 0086400 100000 99999999999999999999 "" abc 5s -5 +5 " 7" 0x10; do
			printf "%s=%s\n" "$v" "$(fdekit_seconds "$v" 1 86400 || echo NO)"
		done' fdekit "$FUNCS" >"$T/out" 2>&1
	printf '%s\n' 08=8 010=10 0=NO 1=1 86400=86400 86401=NO 0086400=86400 100000=NO \
		99999999999999999999=NO =NO abc=NO 5s=NO -5=NO +5=NO " 7=NO" 0x10=NO >"$T/want"
	if cmp -s "$T/out" "$T/want"; then
		ok "$sh: fdekit_seconds: decimal, leading zeros dropped, 1 to 86400, anything else refused"
	else
		not_ok "$sh: fdekit_seconds: decimal, leading zeros dropped, 1 to 86400, anything else refused"
		diff "$T/want" "$T/out" | sed 's/^/# /'
	fi

	# --- fdekit.timeout ---
	setup "quiet fdekit.timeout=08" 'FDEKIT_PINS=""'
	run "$sh"
	expect_deadline "$sh: fdekit.timeout=08 is 8 seconds, not an abort" 7 8
	setup "fdekit.timeout=010" 'FDEKIT_PINS=""'
	run "$sh"
	expect_deadline "$sh: fdekit.timeout=010 is 10 seconds, not octal 8" 9 10
	setup "fdekit.timeout=100000" 'FDEKIT_PINS=""'
	run "$sh"
	expect_deadline "$sh: fdekit.timeout=100000 (over opalctl's 86400): the default, 120" 119 120
	console_says "$sh: and the console says why" "fdekit.timeout=100000 is not .*1 to 86400.*120"
	setup "fdekit.timeout=0" 'FDEKIT_PINS=""'
	run "$sh"
	expect_deadline "$sh: fdekit.timeout=0: the default" 119 120
	setup "fdekit.timeout=2m" 'FDEKIT_PINS=""'
	run "$sh"
	expect_deadline "$sh: fdekit.timeout=2m: the default" 119 120
	console_says "$sh: and the console says why" "fdekit.timeout=2m is not"
	setup "ro" 'FDEKIT_PINS=""
FDEKIT_TIMEOUT="030"'
	run "$sh"
	expect_deadline "$sh: FDEKIT_TIMEOUT=030 from the image: 30 seconds" 29 30
	setup "fdekit.timeout=later" 'FDEKIT_PINS=""
FDEKIT_TIMEOUT="030"'
	run "$sh"
	expect_deadline "$sh: a bad fdekit.timeout falls back to the image's FDEKIT_TIMEOUT" 29 30
	setup "fdekit.timeout=3600" 'FDEKIT_PINS=""
FDEKIT_TIMEOUT="x"'
	run "$sh"
	expect_deadline "$sh: a bad FDEKIT_TIMEOUT in the image: fdekit.timeout= still applies" 3599 3600

	# --- the end of the unlock's Begin line ---
	setup "" 'FDEKIT_PINS=""' 0
	run "$sh"
	console_says "$sh: opalctl exit 0: done." "Begin: fdekit: unlocking Opal drives.* \.\.\. done\.$"
	setup "" 'FDEKIT_PINS=""' 11
	run "$sh"
	if grep -q "Begin: fdekit: unlocking Opal drives.* \.\.\. failed" "$T/console" &&
		! grep -q "Begin: fdekit: unlocking Opal drives.* \.\.\. done\." "$T/console" &&
		grep -q "some Opal drives .* stay locked" "$T/console"; then
		ok "$sh: opalctl exit 11: the Begin line ends in failed, not done."
	else
		not_ok "$sh: opalctl exit 11: the Begin line ends in failed, not done."
		sed 's/^/# /' "$T/console"
	fi
	setup "" 'FDEKIT_PINS=""' 1
	run "$sh"
	if grep -q "Begin: fdekit: unlocking Opal drives.* \.\.\. failed" "$T/console" &&
		! grep -q "\.\.\. done\." "$T/console"; then
		ok "$sh: opalctl exit 1: failed, not done."
	else
		not_ok "$sh: opalctl exit 1: failed, not done."
		sed 's/^/# /' "$T/console"
	fi
	[ "$(cat "$T/rc")" = 0 ] && ok "$sh: the script itself exits 0 (the boot goes on)" ||
		not_ok "$sh: the script itself exits 0 (the boot goes on)"

	# --- the background network setup ---
	setup "fdekit.timeout=2" 'FDEKIT_PINS="sss tang"
FDEKIT_TANG_ENTRIES="root"' 0 never
	run "$sh"
	expect_deadline "$sh: no network: the unlock runs" 1 2
	if ! grep -q "Waiting up to 180 secs" "$T/console"; then
		ok "$sh: configure_networking's messages are not on the console"
	else
		not_ok "$sh: configure_networking's messages are not on the console"
		sed 's/^/# /' "$T/console"
	fi
	if grep -q "Waiting up to 180 secs" "$R/run/fdekit-network.log" 2>/dev/null; then
		ok "$sh: they are in /run/fdekit-network.log"
	else
		not_ok "$sh: they are in /run/fdekit-network.log"
	fi
	if [ -s "$T/orphan.pid" ] && gone "$(cat "$T/orphan.pid")"; then
		ok "$sh: a process of the setup that left its process tree is gone when the script returns"
	else
		not_ok "$sh: a process of the setup that left its process tree is gone when the script returns"
	fi
	if [ -s "$T/stubborn.pid" ] && gone "$(cat "$T/stubborn.pid")"; then
		ok "$sh: one that ignores SIGTERM is gone too"
	else
		not_ok "$sh: one that ignores SIGTERM is gone too"
	fi
	if [ -z "$(ls -d "$R"/run/fdekit-curl.* 2>/dev/null)" ]; then
		ok "$sh: no /run/fdekit-curl.* directory is left"
	else
		not_ok "$sh: no /run/fdekit-curl.* directory is left"
	fi
	if [ ! -e "$T/ip.log" ]; then
		ok "$sh: no interface touched (none in the test's /sys/class/net)"
	else
		not_ok "$sh: no interface touched"
		sed 's/^/# /' "$T/ip.log"
	fi
	reap

	setup "fdekit.timeout=20" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES="root"' 0 up
	run "$sh"
	expect_deadline "$sh: a network that comes up: the unlock gets the rest of the bound" 17 20
	console_says "$sh: its Begin line ends in done." "Begin: fdekit: configuring the network for Tang.* \.\.\. done\."

	# --- whether to wait for the network before the first key attempt ---
	# "the wait": up to half of fdekit.timeout (here 5 s) for a network
	# that never comes (the setup runs until it is stopped).
	setup "fdekit.timeout=10" 'FDEKIT_PINS="sss tang tpm2"
FDEKIT_TANG_ENTRIES=""' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -lt 300 ]; then
		ok "$sh: every entry's key can be had without Tang: no wait (opalctl after ${_cs}0 ms)"
	else
		not_ok "$sh: every entry's key can be had without Tang: no wait (opalctl after ${_cs}0 ms)"
		sed 's/^/# /' "$T/console"
	fi
	expect_deadline "$sh: and the unlock gets the whole bound" 9 10
	console_says "$sh: the network still comes up behind the unlock" "fdekit: configuring the network for Tang"

	setup "fdekit.timeout=10 fdekit.tang-wait=no" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES="root"' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -lt 300 ]; then
		ok "$sh: fdekit.tang-wait=no: no wait although root needs Tang (${_cs}0 ms)"
	else
		not_ok "$sh: fdekit.tang-wait=no: no wait although root needs Tang (${_cs}0 ms)"
		sed 's/^/# /' "$T/console"
	fi

	setup "fdekit.timeout=10" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES="root"
FDEKIT_TANG_WAIT="no"' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -lt 300 ]; then
		ok "$sh: FDEKIT_TANG_WAIT=no in the image: no wait (${_cs}0 ms)"
	else
		not_ok "$sh: FDEKIT_TANG_WAIT=no in the image: no wait (${_cs}0 ms)"
		sed 's/^/# /' "$T/console"
	fi

	# The script counts whole seconds of /proc/uptime: a share of 2 s is
	# more than 1 s and at most 2 s of real time.
	setup "fdekit.timeout=4" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES="root"' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -ge 95 ]; then
		ok "$sh: an entry needs Tang: the network gets its share first (${_cs}0 ms)"
	else
		not_ok "$sh: an entry needs Tang: the network gets its share first (${_cs}0 ms)"
		sed 's/^/# /' "$T/console"
	fi

	setup "fdekit.timeout=4 fdekit.tang-wait=yes" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES=""' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -ge 95 ]; then
		ok "$sh: fdekit.tang-wait=yes: the wait, whatever the entries (${_cs}0 ms)"
	else
		not_ok "$sh: fdekit.tang-wait=yes: the wait, whatever the entries (${_cs}0 ms)"
		sed 's/^/# /' "$T/console"
	fi

	setup "fdekit.timeout=10 fdekit.tang-wait=maybe" 'FDEKIT_PINS="tang"
FDEKIT_TANG_ENTRIES=""' 0 slow
	run "$sh"
	_cs=$(called_after)
	if [ -n "$(deadline)" ] && [ "$_cs" -lt 300 ] &&
		grep -q "fdekit.tang-wait=maybe" "$T/console"; then
		ok "$sh: fdekit.tang-wait=maybe: said on the console, the entries decide"
	else
		not_ok "$sh: fdekit.tang-wait=maybe: said on the console, the entries decide"
		sed 's/^/# /' "$T/console"
	fi
done
[ "$failed" -eq 0 ]
