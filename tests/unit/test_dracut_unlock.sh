#!/bin/sh
# The dracut module's boot script (fdekit-opal-unlock) and its askpass on
# the host, against a root directory of the test's own (FDEKIT_ROOT: /sys,
# /proc/uptime, /run, /tmp, /etc, /lib/dracut-lib.sh) and stubs that only
# record (ip, systemctl, networkctl, NetworkManager, opalctl,
# systemd-ask-password): nothing here touches the host's network or
# services. Under a network namespace of its own where it can have one,
# so that even a stub missed would find only a loopback interface.
#   test_dracut_unlock.sh MODULE-DIR
# What it checks: no stage starts opalctl after rd.fdekit.timeout, each
# try gets what is left as --deadline; rd.fdekit.timeout is read safely
# (leading zeros, bounds, garbage: said, and the default); with
# NetworkManager or systemd-networkd in the image the script brings up the
# wired interfaces without an address for Tang and, after the unlock,
# stops what it started, removes what it wrote and takes those interfaces
# down (only those); the askpass gives systemd-ask-password the prompt's
# remaining time, so that it removes its request before opalctl's bound.
set -u
if [ -z "${FDEKIT_TEST_NETNS:-}" ] && command -v unshare >/dev/null 2>&1 &&
	unshare --net true 2>/dev/null; then
	FDEKIT_TEST_NETNS=1 exec unshare --net sh "$0" "$@"
fi
MODDIR=$(cd "$1" && pwd)
UNLOCK=$MODDIR/fdekit-opal-unlock.sh
ASKPASS=$MODDIR/fdekit-opal-ask-password.sh
T=$(mktemp -d /tmp/test_dracut_unlock.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

echo "1..44"
R=$T/root
B=$T/bin
L=$T/log
mkdir -p "$B" "$L"

# --- stubs: each appends its command line to $L/NAME -----------------------
cat >"$B/ip" <<'EOF'
#!/bin/sh
echo "$*" >>"$FDEKIT_TEST_LOG/ip"
# ip -o [-4] addr show dev IF scope global: the test's addresses, which
# ip addr flush dev IF removes
[ "$1 $2 $3" = "addr flush dev" ] && rm -f "$FDEKIT_TEST_LOG/addr.$4"
case "$*" in
"-o addr show dev "* | "-o -4 addr show dev "*)
	dev=${*#*show dev }
	dev=${dev%% *}
	[ -s "$FDEKIT_TEST_LOG/addr.$dev" ] && cat "$FDEKIT_TEST_LOG/addr.$dev"
	;;
esac
exit 0
EOF
cat >"$B/systemctl" <<'EOF'
#!/bin/sh
echo "$*" >>"$FDEKIT_TEST_LOG/systemctl"
# is-active UNIT: active when the test made $FDEKIT_TEST_LOG/active.UNIT
for a in "$@"; do
	case $a in
	is-active) act=1 ;;
	*.service | *.socket) [ -n "${act:-}" ] && { [ -e "$FDEKIT_TEST_LOG/active.$a" ]; exit; } ;;
	esac
done
exit 0
EOF
cat >"$B/networkctl" <<'EOF'
#!/bin/sh
echo "$*" >>"$FDEKIT_TEST_LOG/networkctl"
exit 0
EOF
cat >"$B/NetworkManager" <<'EOF'
#!/bin/sh
echo "$* NM_CONFIG_ENABLE_TAG=${NM_CONFIG_ENABLE_TAG:-}" >>"$FDEKIT_TEST_LOG/NetworkManager"
echo $$ >"$FDEKIT_TEST_LOG/NetworkManager.pid"
exec sleep 60
EOF
# opalctl: its argv, the prompt's end the script wrote, its exit status
# from $L/opalctl.rc (default 11: an entry stays locked).
cat >"$B/opalctl" <<'EOF'
#!/bin/sh
echo "$*" >>"$FDEKIT_TEST_LOG/opalctl"
pe=$FDEKIT_ROOT/run/fdekit-opal/prompt-end
[ -s "$pe" ] && cp "$pe" "$FDEKIT_TEST_LOG/opalctl.prompt-end"
rc=11
[ -s "$FDEKIT_TEST_LOG/opalctl.rc" ] && read -r rc <"$FDEKIT_TEST_LOG/opalctl.rc"
exit "$rc"
EOF
# systemd-ask-password as the agent protocol has it: a request file while
# it asks, removed when it times out (--timeout=N, 0: never) or gets
# SIGTERM; SIGKILL leaves it. Its pid and argv recorded.
cat >"$B/systemd-ask-password" <<'EOF'
#!/bin/sh
echo "$*" >>"$FDEKIT_TEST_LOG/ask-password"
echo $$ >"$FDEKIT_TEST_LOG/ask-password.pid"
f=$FDEKIT_TEST_LOG/ask/ask.$$
: >"$f"
trap 'rm -f "$f"; exit 1' TERM
to=0
for a in "$@"; do
	case $a in --timeout=*) to=${a#--timeout=} ;; esac
done
[ "$to" -gt 0 ] 2>/dev/null || to=3600
sleep "$to" &
echo $! >>"$FDEKIT_TEST_PIDS"
wait $!
rm -f "$f"
exit 1
EOF
chmod 0755 "$B"/*
mkdir -p "$L/ask"

# --- the fake root ---------------------------------------------------------
# reset PINS NET [systemd]: a fresh root; eth0 (the Tang NIC, no address),
# eth1 (the storage NIC, 10.0.3.15), wlan0, lo; the cmdline empty; time 100.
reset() {
	rm -rf "$R" "$L"/*
	mkdir -p "$R/proc" "$R/run" "$R/tmp" "$R/etc/fdekit" "$R/etc/udev/rules.d" "$R/lib" \
		"$R/sys/class/net" "$L/ask"
	for i in eth0 eth1 wlan0 lo; do
		mkdir -p "$R/sys/class/net/$i"
		echo 1 >"$R/sys/class/net/$i/type"
		[ "$i" = lo ] && echo 772 >"$R/sys/class/net/$i/type"
		[ "$i" = lo ] || mkdir "$R/sys/class/net/$i/device"
	done
	mkdir "$R/sys/class/net/wlan0/wireless"
	echo "inet 10.0.3.15/24 scope global eth1" >"$L/addr.eth1"
	echo "root serial=FDEKITTEST01 1 clevis:/etc/fdekit/root.jwe" >"$R/etc/fdekit/opaltab"
	printf 'FDEKIT_PINS="%s"\nFDEKIT_TIMEOUT=""\nFDEKIT_NET="%s"\n' "$1" "$2" \
		>"$R/etc/fdekit/initramfs.conf"
	[ "${3:-}" = systemd ] && mkdir -p "$R/run/systemd/system"
	: >"$R/cmdline"
	at 100
	cat >"$R/lib/dracut-lib.sh" <<'EOF'
# dracut-lib's functions the script uses, on $FDEKIT_ROOT/cmdline.
getarg() {
	for _a in $(cat "$FDEKIT_ROOT/cmdline"); do
		for _n in "$1" "${3:-}"; do
			[ -n "$_n" ] || continue
			case $_a in
			"$_n="*) echo "${_a#*=}"; return 0 ;;
			"$_n") echo 1; return 0 ;;
			esac
		done
	done
	return 1
}
getargbool() {
	_d=$1
	shift
	_v=$(getarg "$@") || { [ "$_d" = 1 ]; return; }
	case $_v in 0 | no | off) return 1 ;; esac
	return 0
}
info() { echo "INFO: $*" >>"$FDEKIT_ROOT/console"; }
warn() { echo "WARN: $*" >>"$FDEKIT_ROOT/console"; }
EOF
}
at() { echo "$1.00 0.00" >"$R/proc/uptime"; }
# The stubs' sleeps, ended at the end (a SIGKILLed stub leaves its own).
FDEKIT_TEST_PIDS=$T/sleep.pids
export FDEKIT_TEST_PIDS
: >"$FDEKIT_TEST_PIDS"
end_sleeps() { for p in $(cat "$FDEKIT_TEST_PIDS"); do kill "$p" 2>/dev/null; done; }
stage() {
	env FDEKIT_ROOT="$R" FDEKIT_TEST_LOG="$L" FDEKIT_IP="$B/ip" FDEKIT_SYSTEMCTL="$B/systemctl" \
		FDEKIT_NETWORKCTL="$B/networkctl" FDEKIT_NM="$B/NetworkManager" FDEKIT_PLYMOUTH=false \
		FDEKIT_OPALCTL_BIN="$B/opalctl" PATH="$B:$PATH" sh "$UNLOCK" "$@" 2>>"$L/stderr"
}
# gone, or a zombie left to a parent that reaps late
alive() { [ -r "/proc/$1/stat" ] && ! grep -q "^$1 ([^)]*) Z" "/proc/$1/stat"; }
runs() { [ -s "$L/opalctl" ] && wc -l <"$L/opalctl" || echo 0; }
# has LOG PATTERN: the log has a line matching
has() { [ -s "$L/$1" ] && grep -q -- "$2" "$L/$1"; }
result() { if eval "$2"; then ok "$1"; else not_ok "$1"; for f in opalctl ip systemctl networkctl NetworkManager stderr; do [ -s "$L/$f" ] && sed "s/^/# $f: /" "$L/$f"; done; [ -s "$R/console" ] && sed 's/^/# console: /' "$R/console"; fi; }

# === the deadline on every stage (rd.fdekit.timeout=20, from t=100) =======
reset "tang" ""
echo "rd.fdekit.timeout=20" >"$R/cmdline"
mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
stage settled
result "first settled call, no network: no try" '[ "$(runs)" = 0 ]'
at 110
stage online eth0
result "online at 10 s of 20: a try with the 10 s left as --deadline" \
	'[ "$(runs)" = 1 ] && has opalctl "unlock-all .*--deadline 10 "'
at 121
stage online eth0
result "online after the deadline: no try" '[ "$(runs)" = 1 ]'
stage timeout
result "the initqueue timeout after the deadline: no try" '[ "$(runs)" = 1 ]'
stage settled
result "settled after the deadline, a try already made: no try, the unlock over" \
	'[ "$(runs)" = 1 ] && [ -e "$R/run/fdekit-opal/done" ] && grep -q "rd.fdekit.timeout (20s) reached" "$R/console"'

reset "tang" ""
echo "rd.fdekit.timeout=20" >"$R/cmdline"
mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
stage settled
at 105
stage timeout
result "the initqueue timeout before the deadline: a try with the 15 s left" \
	'[ "$(runs)" = 1 ] && has opalctl "--deadline 15 "'
reset "tang" ""
echo "rd.fdekit.timeout=20" >"$R/cmdline"
mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
stage settled
at 120
stage settled
result "no try before the deadline: one at it, 5 s for its key attempts, the fallback said" \
	'[ "$(runs)" = 1 ] && has opalctl "--deadline 5 " && grep -q "try 1: no network after 20s" "$R/console"'
result "a try passes --prompt-timeout and writes when the prompt must end (uptime + deadline + 120 s)" \
	'has opalctl "--prompt-timeout 120 " && [ "$(cat "$L/opalctl.prompt-end")" = $(((120 + 5 + 120) * 100)) ]'

# === rd.fdekit.timeout parsed safely =========================================
# timeout VALUE: the --deadline of a try at the first online call (or none)
timeout_try() {
	reset "tang" ""
	echo "rd.fdekit.timeout=$1" >"$R/cmdline"
	mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
	stage online eth0
	sed -n 's/.*--deadline \([0-9]*\) .*/\1/p' "$L/opalctl" 2>/dev/null
}
d=$(timeout_try 08)
result "rd.fdekit.timeout=08: 8 s (not a bad octal number), no error" \
	'[ "$d" = 8 ] && [ ! -s "$L/stderr" ] && ! grep -q WARN "$R/console" 2>/dev/null'
d=$(timeout_try 030)
result "rd.fdekit.timeout=030: 30 s (not octal 24)" '[ "$d" = 30 ]'
for v in abc 0 86401 99999999999999999999 -5 1e3; do
	d=$(timeout_try "$v")
	result "rd.fdekit.timeout=$v: refused, said, the default 120 s" \
		'[ "$d" = 120 ] && grep -q "WARN: fdekit: rd.fdekit.timeout=$v: use 1 to 86400 seconds; the bound is 120s" "$R/console" && [ ! -s "$L/stderr" ]'
done
d=$(timeout_try 86400)
result "rd.fdekit.timeout=86400: taken" '[ "$d" = 86400 ]'

# === NetworkManager, systemd in the initramfs ================================
reset "tang" "network-manager" systemd
stage settled
nmc=$R/run/NetworkManager/system-connections
result "NetworkManager: a DHCP profile for eth0 only (not the addressed eth1, wlan0, lo), mode 0600" \
	'[ -s "$nmc/fdekit-opal-eth0.nmconnection" ] && grep -q "^interface-name=eth0$" "$nmc/fdekit-opal-eth0.nmconnection" && grep -q "^method=auto$" "$nmc/fdekit-opal-eth0.nmconnection" && [ "$(ls "$nmc")" = fdekit-opal-eth0.nmconnection ] && [ "$(stat -c %a "$nmc/fdekit-opal-eth0.nmconnection")" = 600 ]'
result "every other device left unmanaged, no automatic profiles" \
	'grep -q "^unmanaged-devices=except:interface-name:eth0$" "$R/run/NetworkManager/conf.d/90-fdekit-opal.conf" && grep -q "^no-auto-default=\*$" "$R/run/NetworkManager/conf.d/90-fdekit-opal.conf"'
result "dracut's nm-initrd.service started, without waiting (its condition flag set), said" \
	'has systemctl "^--no-block start nm-initrd.service$" && [ -e "$R/run/NetworkManager/initrd/neednet" ] && grep -q "bringing eth0 up for Tang (network-manager)" "$R/console" && [ "$(runs)" = 0 ]'
at 103
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
result "eth0 has its address: a try" '[ "$(runs)" = 1 ] && grep -q "try 1: the network is up" "$R/console"'
result "after the unlock: nm-initrd.service stopped, the profile, settings and flag removed" \
	'has systemctl "^stop nm-initrd.service$" && [ ! -e "$nmc/fdekit-opal-eth0.nmconnection" ] && [ ! -e "$R/run/NetworkManager/conf.d/90-fdekit-opal.conf" ] && [ ! -e "$R/run/NetworkManager/initrd/neednet" ]'
result "eth0 flushed and down; eth1 (the storage NIC) and wlan0 untouched" \
	'has ip "^addr flush dev eth0$" && has ip "^link set dev eth0 down$" && ! grep -q "flush dev eth1\|eth1 down\|wlan0" "$L/ip"'
stage settled
stage online eth0
result "later hook calls change nothing" \
	'[ "$(runs)" = 1 ] && [ "$(grep -c "flush dev eth0" "$L/ip")" = 1 ] && [ "$(grep -c "nm-initrd" "$L/systemctl")" = 2 ]'

# NetworkManager that dracut starts itself (rd.neednet): left to it, kept after.
reset "tang" "network-manager" systemd
echo "rd.neednet=1" >"$R/cmdline"
stage settled
result "rd.neednet=1: nothing started, said" \
	'[ ! -s "$L/systemctl" ] && [ ! -d "$R/run/NetworkManager/system-connections" ] && grep -q "the network is brought up by others (rd.neednet=1)" "$R/console"'
# rd.fdekit.keepnet=1: what was started stays.
reset "tang" "network-manager" systemd
echo "rd.fdekit.keepnet=1" >"$R/cmdline"
stage settled
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
result "rd.fdekit.keepnet=1: after the unlock NetworkManager and eth0 stay up" \
	'[ "$(runs)" = 1 ] && ! has systemctl "^stop" && ! has ip "flush" && [ -e "$nmc/fdekit-opal-eth0.nmconnection" ]'

# === NetworkManager without systemd: in the background ======================
reset "tang" "network-manager"
stage settled
sleep 0.3
result "no systemd: NetworkManager --configure-and-quit=initrd in the background" \
	'has NetworkManager "^--configure-and-quit=initrd --no-daemon NM_CONFIG_ENABLE_TAG=initrd$" && [ ! -e "$R/run/NetworkManager/initrd/neednet" ] && [ ! -s "$L/systemctl" ]'
nmpid=$(cat "$L/NetworkManager.pid" 2>/dev/null)
PIDS="$PIDS $nmpid"
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
sleep 0.3
result "after the unlock it is ended, eth0 down" \
	'[ -n "$nmpid" ] && ! alive "$nmpid" && has ip "^link set dev eth0 down$" && [ ! -e "$nmc/fdekit-opal-eth0.nmconnection" ]'

# === systemd-networkd ========================================================
nwf=$R/run/systemd/network/90-fdekit-opal.network
reset "tang" "systemd-networkd" systemd
stage settled
result "systemd-networkd not running: a .network for eth0 (DHCP), networkd started" \
	'grep -q "^Name=eth0$" "$nwf" && grep -q "^DHCP=ipv4$" "$nwf" && has systemctl "^--no-block start systemd-networkd.service$"'
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
result "after the unlock: the .network removed, networkd and its socket stopped, eth0 down" \
	'[ ! -e "$nwf" ] && has systemctl "^stop systemd-networkd.socket systemd-networkd.service$" && has ip "^link set dev eth0 down$" && ! grep -q "flush dev eth1\|eth1 down" "$L/ip"'
reset "tang" "systemd-networkd" systemd
: >"$L/active.systemd-networkd.service"
: >"$L/active.systemd-networkd.socket"
stage settled
result "networkd already running (dracut 059 enables it): told to reload, not started" \
	'[ -e "$nwf" ] && has networkctl "^reload$" && ! has systemctl "start"'
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
result "after the unlock: the .network removed, reloaded again, not stopped, eth0 down" \
	'[ ! -e "$nwf" ] && [ "$(grep -c "^reload$" "$L/networkctl")" = 2 ] && ! has systemctl "^stop" && has ip "^link set dev eth0 down$"'
reset "tang" "systemd-networkd" systemd
mkdir -p "$R/etc/systemd/network"
: >"$R/etc/systemd/network/zzzz-dracut-default.network"
stage settled
result "a .network of dracut's own (106's default): nothing written or started, said" \
	'[ ! -e "$nwf" ] && [ ! -s "$L/systemctl" ] && grep -q "systemd-networkd has /etc/systemd/network/zzzz-dracut-default.network" "$R/console"'

# === network-legacy: the udev rule and ifup in the background ===============
reset "tang" ""
mkdir -p "$R/sbin"
printf '#!/bin/sh\necho "$1" >>"%s/ifup"\nexec sleep 60\n' "$L" >"$R/sbin/ifup"
chmod 0755 "$R/sbin/ifup"
stage genrules
result "ifup there: genrules writes the udev rule bringing interfaces up" \
	'grep -q "RUN+=\"/sbin/initqueue --onetime --unique --name fdekit-opal-ifup-\$name /sbin/fdekit-opal-unlock ifup \$name\"" "$R/etc/udev/rules.d/91-fdekit-opal-net.rules"'
stage ifup eth1
stage ifup eth0
sleep 0.3
result "ifup for eth0 in the background; eth1, which has an address, left alone" \
	'[ "$(cat "$L/ifup" 2>/dev/null)" = eth0 ] && grep -q "eth1 already has an address: left as it is" "$R/console" && [ -s "$R/run/fdekit-opal/ifup.eth0" ]'
ifpid=$(cat "$R/run/fdekit-opal/ifup.eth0")
PIDS="$PIDS $ifpid"
: >"$R/tmp/net.eth0.did-setup"
echo "inet 192.0.2.10/24 scope global eth0" >"$L/addr.eth0"
echo 0 >"$L/opalctl.rc"
stage settled
sleep 0.3
result "eth0 set up: a try; after the unlock its ifup ended, eth0 flushed and down, eth1 untouched" \
	'[ "$(runs)" = 1 ] && ! alive "$ifpid" && has ip "^addr flush dev eth0$" && ! grep -q "flush dev eth1\|eth1 down" "$L/ip"'
reset "tang" ""
mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
echo "rd.neednet=1" >"$R/cmdline"
stage genrules
result "rd.neednet=1: no udev rule (dracut brings the network up)" \
	'[ ! -e "$R/etc/udev/rules.d/91-fdekit-opal-net.rules" ]'
reset "tang" "network-manager" systemd
mkdir -p "$R/sbin" && printf '#!/bin/sh\nexit 0\n' >"$R/sbin/ifup" && chmod 0755 "$R/sbin/ifup"
stage settled
result "ifup and NetworkManager both there: ifup's rule does it, NetworkManager is not started" \
	'[ ! -s "$L/systemctl" ] && [ ! -d "$R/run/NetworkManager/system-connections" ]'

# === no tang binding: no network at all ======================================
reset "tpm2" "network-manager systemd-networkd" systemd
stage settled
result "no tang binding: no network brought up, one try with the whole bound" \
	'[ ! -s "$L/systemctl" ] && [ ! -e "$nwf" ] && [ ! -d "$nmc" ] && [ "$(runs)" = 1 ] && has opalctl "--deadline 120 "'

# === the askpass ============================================================
# ask PROMPT: the askpass, killed (SIGKILL, as opalctl does at the prompt's
# end) if it has not ended within 5 s
ask() {
	timeout -s KILL 5 env FDEKIT_ROOT="$R" FDEKIT_TEST_LOG="$L" PATH="$B:$PATH" sh "$ASKPASS" "$@"
}
reset "tang" "" systemd
mkdir -p "$R/run/fdekit-opal"
at 200
echo $(((200 + 30) * 100 + 50)) >"$R/run/fdekit-opal/prompt-end"
env FDEKIT_ROOT="$R" FDEKIT_TEST_LOG="$L" PATH="$B:$PATH" sh "$ASKPASS" "Recovery key for root" &
apid=$!
i=0
while [ ! -s "$L/ask-password.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
result "systemd-ask-password gets the prompt's remaining time less a second (--timeout=29)" \
	'has ask-password "^--id=fdekit-opal:Recovery key for root --timeout=29 --no-tty Recovery key for root$"'
result "the askpass is systemd-ask-password itself (exec): opalctl's SIGTERM reaches it" \
	'[ "$(cat "$L/ask-password.pid" 2>/dev/null)" = "$apid" ]'
kill -TERM "$apid" 2>/dev/null
wait "$apid" 2>/dev/null
result "SIGTERM: its request is removed" '[ -z "$(ls "$L/ask")" ]'
rm -f "$L/ask-password" "$L/ask-password.pid"
at 229
ask "Recovery key for root"
arc=$?
result "less than 2 s left: nothing asked, exit 1" '[ "$arc" = 1 ] && [ ! -e "$L/ask-password" ]'
# The real clock: with 2.5 s left, it ends by itself, its request gone,
# before the prompt's end (where opalctl would kill it, leaving the request
# behind and dracut's initqueue without its timeout).
reset "tang" "" systemd
mkdir -p "$R/run/fdekit-opal"
rm "$R/proc/uptime"
ln -s /proc/uptime "$R/proc/uptime"
read -r up _ </proc/uptime
upc=$(echo "$up" | tr -d .)
upc=${upc#"${upc%%[!0]*}"}
echo $((upc + 250)) >"$R/run/fdekit-opal/prompt-end"
start=$(date +%s%N)
ask "Recovery key for root"
end=$(date +%s%N)
took=$(((end - start) / 1000000))
result "on its own within the prompt's time ($took ms of 2500), no request left" \
	'[ "$took" -lt 2500 ] && [ -z "$(ls "$L/ask")" ] && has ask-password "--timeout=1 "'
end_sleeps
[ "$failed" -eq 0 ]
