#!/bin/sh
# Interoperability with the kernel's sed-opal: sedsim as an NVMe/TCP target
# on 127.0.0.1 (as in 41-opal-nvme.sh), driven by the kernel's own ioctls
# for every operation the kernel offers on users and ranges
# (IOC_OPAL_ACTIVATE_USR, SET_PW, ADD_USR_TO_LR, LOCK_UNLOCK as a user,
# GET_LR_STATUS, GET_GEOMETRY, GET_STATUS, SAVE, REVERT_LSP) through
# sedopal-ioctl, one ioctl per call. The results are checked with opalctl
# through NVMe Security Send/Receive on the controller (--transport nvme),
# and the other way round: what opalctl sets up, the kernel uses.
#
# The kernel is the reference: a step fails when sedsim answers the kernel
# differently from what a drive following the Opal SSC would.
#
# Before 6.2 the kernel has no sed-opal for a fabrics namespace (see
# 41-opal-nvme.sh): every step that needs the kernel's ioctls, or checks what
# they did, is a TAP skip there; the opalctl-only steps still run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/opal-nvme-lib.sh"
plan 83

umask 077
D=/tmp/opal-kusers
BLOCKS=32768
PORT=4421
NQN=nqn.2026-11.org.fdekit:sedsim-kusers
HOSTNQN=nqn.2026-11.org.fdekit:guest-host-kusers
HOSTID=5e5e5e5e-0042-4e56-8d65-000000000042
# Locking range 1: LBA 2048 (1 MiB) for 4096 blocks (2 MiB), aligned to the
# 8-block granularity sedsim's Geometry feature announces.
START=2048
LENGTH=4096
SI=sedopal-ioctl
mkdir -p "$D/drive"

NOK="$(uname -r) has no sed-opal for NVMe over fabrics (init_opal_dev only in drivers/nvme/host/pci.c before 6.2)"

# run DESC CMD...: one result, ok when CMD exits 0; on failure its stderr
# becomes a diagnostic (sedopal-ioctl prints the errno or TCG status there).
run() {
	_desc=$1
	shift
	if "$@" >"$D/out" 2>"$D/err"; then
		ok "$_desc"
	else
		_rc=$?
		not_ok "$_desc (exit $_rc)"
		diag "$*: $(tr '\n' ' ' <"$D/err")"
	fi
	cat "$D/out" "$D/err" >&2
}

# krun DESC CMD...: run, or a skip where the kernel has no sed-opal here.
krun() {
	if [ -n "$KERNEL_OPAL" ]; then run "$@"; else skip "$1" "$NOK"; fi
}

kskip() {
	skip "$1" "$NOK"
}

# refused DESC WANT_EXIT WANT_STDERR CMD...: CMD must fail with exit status
# WANT_EXIT and a stderr matching the grep pattern WANT_STDERR.
refused() {
	_desc=$1 _want=$2 _pat=$3
	shift 3
	"$@" >"$D/out" 2>"$D/err"
	_rc=$?
	cat "$D/out" "$D/err" >&2
	if [ "$_rc" -eq "$_want" ] && grep -q -- "$_pat" "$D/err"; then
		ok "$_desc"
	else
		not_ok "$_desc"
		diag "expected exit $_want and '$_pat' on stderr, got exit $_rc: $(tr '\n' ' ' <"$D/err")"
	fi
}

krefused() {
	if [ -n "$KERNEL_OPAL" ]; then refused "$@"; else kskip "$1"; fi
}

# Golden vectors: what the kernel's sed-opal sent (and sedsim answered) for
# one ioctl, from sedsim's --trace (PINs masked as "x"), copied to the
# console as "@golden NAME LINE" lines; tests/unit/golden/README.md says how
# they become tests/unit/golden/kernel-RELEASE/NAME.hex.
tmark() {
	TMARK=$(wc -l <"$D/trace" 2>/dev/null) || TMARK=0
}

# tdump NAME CMD...: the trace lines since tmark, under NAME.
tdump() {
	[ -n "$KERNEL_OPAL" ] || return 0
	_name=$1
	shift
	echo "@golden $_name # $(uname -r): $*" >&2
	tail -n +$((TMARK + 1)) "$D/trace" | sed "s/^/@golden $_name /" >&2
}

# gkrun NAME DESC CMD...: krun, and the trace of CMD under NAME.
gkrun() {
	_g=$1
	shift
	tmark
	krun "$@"
	shift
	tdump "$_g" "$@"
}

check "nvme-tcp host modules load" load nvme_tcp
check "loopback interface up" ip link set lo up

SERVE_ARGS="--trace $D/trace"

# A keep-alive timeout that outlasts the frozen target during the suspend
# test below (pm_test waits 5 s with user space, sedsim included, frozen),
# and reconnects every second when the target goes away.
CONNECT_OPTS=",keep_alive_tmo=60,reconnect_delay=1"

klocked() {
	if [ -n "$KERNEL_OPAL" ]; then locked "$1"; else kskip "$1"; fi
}

intact() {
	expect_eq "$1" "$WANT" "$(read_sum)"
}

kintact() {
	if [ -n "$KERNEL_OPAL" ]; then intact "$1"; else kskip "$1"; fi
}

write_range1() {
	dd if="$D/data" of="$DEV" bs=65536 seek=16 oflag=direct conv=fsync 2>/dev/null
}

# Range 1 was reverted: readable (no range, no lock) but not our data.
gone() {
	_got=$(read_sum)
	if [ -n "$_got" ] && [ "$_got" != "$WANT" ]; then
		ok "$1"
	else
		not_ok "$1"
		diag "read_sum: '$_got'"
	fi
}

# lr_status WHO: IOC_OPAL_GET_LR_STATUS of range 1 as WHO, on one line.
lr_status() {
	_k=$D/admin
	[ "$1" = admin1 ] || _k=$D/u${1#user}
	$SI "$DEV" get-lr-status --who "$1" --range 1 --key-file "$_k" | tr '\n' ' '
}

klr_status() {
	if [ -n "$KERNEL_OPAL" ]; then
		expect_eq "$1" "range_start=$START range_length=$LENGTH RLE=1 WLE=1 l_state=$3 " \
			"$(lr_status "$2")"
	else
		kskip "$1"
	fi
}

# The access listing, opalctl access --json: {"ranges":[{"range":N,
# "read_lock":[AUTH...],"write_lock":[AUTH...]},...],"enabled_users":[N...]}
# with AUTH "Admins", "Admin1", "User1", ... (the Set_RdLocked/Set_WrLocked
# ACEs). Prints it without blanks.
access_json() {
	opalctl access "$CTRL" --keyfile "$D/admin" --transport nvme --json >"$D/access.json"
	_rc=$?
	cat "$D/access.json" >&2
	tr -d ' \n\t' <"$D/access.json"
	return $_rc
}

# range1_aces: range 1's two ACEs from the listing, as
# "read_lock":[...],"write_lock":[...] (split at each "range" key: range 1's
# part is the line that starts with "1,").
range1_aces() {
	access_json | sed 's/"range":/@/g' | tr '@' '\n' | grep '^1,' |
		grep -o '"read_lock":\[[^]]*\],"write_lock":\[[^]]*\]'
}

# lists DESC AUTH: both ACEs of range 1 name AUTH.
lists() {
	_r=$(range1_aces)
	_rd=$(echo "$_r" | grep -o '"read_lock":\[[^]]*\]')
	_wr=$(echo "$_r" | grep -o '"write_lock":\[[^]]*\]')
	case "$_rd/$_wr" in
	*"\"$2\""*/*"\"$2\""*) ok "$1" ;;
	*) not_ok "$1"; diag "range 1 in opalctl access: '$_r'" ;;
	esac
}

# suspend_resume: suspend to the "devices" pm_test level (devices' suspend
# and resume callbacks run, the platform does not sleep) and come back.
suspend_resume() {
	echo devices >/sys/power/pm_test && echo mem >/sys/power/state
}

status_json() {
	opalctl --json status "$CTRL" --transport nvme >"$D/status.json"
	_rc=$?
	cat "$D/status.json" >&2
	tr -d ' \n\t' <"$D/status.json"
	return $_rc
}

sedsim create "$D/drive" --blocks $BLOCKS --serial GUESTKUSR1 --try-limit 5 ||
	bail "sedsim create failed"
serve || bail "sedsim serve-nvme did not start: $(cat "$D/serve.log")"
ok "sedsim listens for NVMe/TCP on 127.0.0.1:$PORT"
if connect; then
	ok "nvme-tcp host connects: $CTRL, namespace $DEV"
else
	dmesg | tail -20 >&2
	cat "$D/serve.log" >&2
	bail "no NVMe/TCP controller or namespace for $NQN"
fi

head -c 32 /dev/urandom >"$D/admin"
head -c 32 /dev/urandom >"$D/u1"
head -c 32 /dev/urandom >"$D/u2"
head -c 32 /dev/urandom >"$D/u3"
head -c 32 /dev/urandom >"$D/u1b"
head -c 32 /dev/urandom >"$D/bad"
head -c 1048576 /dev/urandom >"$D/data"
WANT=$(sha256sum <"$D/data" | cut -d' ' -f1)

# ---- Setup through opalctl on the kernel's ioctls (nvme transport on 6.1).
if [ -n "$KERNEL_OPAL" ]; then
	# No golden vector here: opalctl adds calls of its own (lib/opal's).
	run "opalctl setup range 1 through the kernel's sed-opal" \
		opalctl setup "$DEV" --keyfile "$D/admin" --range 1 --start $START --length $LENGTH \
		--yes-destroy-data --transport ioctl
else
	run "opalctl setup range 1 (nvme transport: no kernel sed-opal in $(uname -r))" \
		opalctl setup "$CTRL" --keyfile "$D/admin" --range 1 --start $START --length $LENGTH \
		--yes-destroy-data --transport nvme
fi
run "write 1 MiB into range 1" write_range1
intact "data in range 1 reads back"
HEAD=$(head_sum)
if [ -n "$KERNEL_OPAL" ]; then
	run "IOC_OPAL_GET_STATUS: supported, locking enabled" sh -c \
		"$SI $DEV get-status | grep -x supported=1 && $SI $DEV get-status | grep -x locking_enabled=1"
else
	refused "IOC_OPAL_GET_STATUS on a fabrics namespace in $(uname -r): ENOTSUPP" 3 \
		'errno \(524\|95\) ' $SI "$DEV" get-status
fi

# ---- User1 through the kernel: enable, PIN, grant, lock and unlock as User1.
gkrun activate-user1 "IOC_OPAL_ACTIVATE_USR User1" $SI "$DEV" activate-user --user 1 --key-file "$D/admin"
gkrun set-pw-user1 "IOC_OPAL_SET_PW User1 (Admin1 session)" \
	$SI "$DEV" set-pw --user 1 --key-file "$D/admin" --new-key-file "$D/u1"
# The kernel writes one ACE per call: ro -> Set_RdLocked (E0 <lr>), rw ->
# Set_WrLocked (E8 <lr>), then Get_RangeStartToActiveKey (D0 <lr>) = Admin1
# OR User1. Both calls are needed for User1 to lock and unlock reads and
# writes (cryptsetup does the same).
gkrun add-user1-lr1-ro "IOC_OPAL_ADD_USR_TO_LR User1 range 1 ro (Set_RdLocked ACE)" \
	$SI "$DEV" add-user-to-lr --user 1 --range 1 --state ro --key-file "$D/admin"
gkrun add-user1-lr1-rw "IOC_OPAL_ADD_USR_TO_LR User1 range 1 rw (Set_WrLocked ACE)" \
	$SI "$DEV" add-user-to-lr --user 1 --range 1 --state rw --key-file "$D/admin"
gkrun lock-unlock-user1-lr1-lk "IOC_OPAL_LOCK_UNLOCK as User1: lock range 1" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state lk --key-file "$D/u1"
klocked "reads of range 1 fail after User1 locked it"
tmark
klr_status "IOC_OPAL_GET_LR_STATUS as User1: range 1 geometry, locking enabled, locked" user1 lk
tdump get-lr-status-user1-lr1 $SI DEV get-lr-status --who user1 --range 1 --key-file U1
tmark
krefused "IOC_OPAL_LOCK_UNLOCK as User1 with a wrong key: TCG status 1 (Not Authorized)" \
	4 'TCG status 1 ' $SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/bad"
tdump lock-unlock-user1-lr1-wrong-key $SI DEV lock-unlock --who user1 --range 1 --state rw \
	--key-file WRONG
klocked "range 1 still locked after the refused unlock"
gkrun lock-unlock-user1-lr1-rw "IOC_OPAL_LOCK_UNLOCK as User1: unlock range 1 (rw)" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1"
kintact "data intact after User1's unlock"
klr_status "IOC_OPAL_GET_LR_STATUS as User1: unlocked (rw)" user1 rw
tmark
klr_status "IOC_OPAL_GET_LR_STATUS as Admin1: the D0 ACE names Admin1 too" admin1 rw
tdump get-lr-status-admin1-lr1 $SI DEV get-lr-status --who admin1 --range 1 --key-file ADMIN

# A user changes its own PIN (C_PIN_User1's PIN: Admins OR User1).
gkrun set-pw-user1-by-user1 "IOC_OPAL_SET_PW: User1 changes its own PIN" \
	$SI "$DEV" set-pw --who user1 --user 1 --key-file "$D/u1" --new-key-file "$D/u1b"
krefused "IOC_OPAL_LOCK_UNLOCK as User1 with the old PIN: TCG status 1" \
	4 'TCG status 1 ' $SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1"
krun "IOC_OPAL_LOCK_UNLOCK as User1 with the new PIN" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1b"
krun "IOC_OPAL_SET_PW: User1 sets its first PIN back" \
	$SI "$DEV" set-pw --who user1 --user 1 --key-file "$D/u1b" --new-key-file "$D/u1"

# ---- What the kernel did, seen through NVMe Security Send/Receive.
if [ -n "$KERNEL_OPAL" ]; then
	# The kernel sets each ACE's BooleanExpr to the user alone: the Admins
	# class is no longer in range 1's Set_RdLocked/Set_WrLocked ACEs.
	expect_eq "opalctl access (nvme): range 1's ACEs are User1 alone (the kernel replaced Admins)" \
		'"read_lock":["User1"],"write_lock":["User1"]' "$(range1_aces)"
	if access_json | grep -q '"enabled_users":\[1\]'; then
		ok "opalctl access (nvme): User1 enabled (IOC_OPAL_ACTIVATE_USR)"
	else
		not_ok "opalctl access (nvme): User1 enabled (IOC_OPAL_ACTIVATE_USR)"
	fi
	if opalctl lock "$CTRL" --keyfile "$D/admin" --range 1 --transport nvme >&2 2>"$D/err"; then
		not_ok "Admin1 may no longer lock range 1 (not in its ACEs): refused"
		diag "opalctl lock as Admin1 succeeded"
	else
		ok "Admin1 may no longer lock range 1 (not in its ACEs): refused"
		cat "$D/err" >&2
	fi
else
	kskip "opalctl access (nvme): range 1's ACEs are User1 alone (the kernel replaced Admins)"
	kskip "opalctl access (nvme): User1 enabled (IOC_OPAL_ACTIVATE_USR)"
	kskip "Admin1 may no longer lock range 1 (not in its ACEs): refused"
fi
if [ -n "$KERNEL_OPAL" ]; then
	run "opalctl lock --user 1 (nvme) with User1's key" \
		opalctl lock "$CTRL" --user 1 --keyfile "$D/u1" --range 1 --transport nvme
	locked "reads of range 1 fail after opalctl lock --user 1"
	refused "opalctl unlock --user 1 (nvme) with a wrong key: exit 4" 4 '' \
		opalctl unlock "$CTRL" --user 1 --keyfile "$D/bad" --range 1 --transport nvme
	run "opalctl unlock --user 1 (nvme) with User1's key" \
		opalctl unlock "$CTRL" --user 1 --keyfile "$D/u1" --range 1 --transport nvme
	intact "data intact after opalctl unlock --user 1"
else
	kskip "opalctl lock --user 1 (nvme) with User1's key"
	kskip "reads of range 1 fail after opalctl lock --user 1"
	kskip "opalctl unlock --user 1 (nvme) with a wrong key: exit 4"
	kskip "opalctl unlock --user 1 (nvme) with User1's key"
	kskip "data intact after opalctl unlock --user 1"
fi

# ---- The reverse: opalctl sets User2 up, the kernel uses it.
run "opalctl user-enable --user 2 (nvme)" \
	opalctl user-enable "$CTRL" --user 2 --keyfile "$D/admin" --transport nvme
run "opalctl user-key --user 2 (nvme)" \
	opalctl user-key "$CTRL" --user 2 --keyfile "$D/admin" --new-keyfile "$D/u2" --transport nvme
run "opalctl grant --user 2 --range 1 (nvme)" \
	opalctl grant "$CTRL" --user 2 --range 1 --keyfile "$D/admin" --transport nvme
lists "opalctl access (nvme): both ACEs of range 1 name User2" User2
run "opalctl lock --user 2 (nvme)" \
	opalctl lock "$CTRL" --user 2 --keyfile "$D/u2" --range 1 --transport nvme
locked "reads of range 1 fail after opalctl lock --user 2"
run "opalctl unlock --user 2 (nvme)" \
	opalctl unlock "$CTRL" --user 2 --keyfile "$D/u2" --range 1 --transport nvme
intact "data intact after opalctl unlock --user 2"
gkrun lock-unlock-user2-lr1-lk "IOC_OPAL_LOCK_UNLOCK as User2 (set up by opalctl): lock range 1" \
	$SI "$DEV" lock-unlock --who user2 --range 1 --state lk --key-file "$D/u2"
klocked "reads of range 1 fail after User2 locked it through the kernel"
krefused "IOC_OPAL_LOCK_UNLOCK as User2 with User1's key: TCG status 1" \
	4 'TCG status 1 ' $SI "$DEV" lock-unlock --who user2 --range 1 --state rw --key-file "$D/u1"
krun "IOC_OPAL_LOCK_UNLOCK as User2: unlock range 1" \
	$SI "$DEV" lock-unlock --who user2 --range 1 --state rw --key-file "$D/u2"
kintact "data intact after User2's unlock through the kernel"
# opalctl grant also names the user in Get_RangeStartToActiveKey (D0), as
# the kernel's ADD_USR_TO_LR does, so the kernel can read the range as User2.
tmark
klr_status "IOC_OPAL_GET_LR_STATUS as User2 (granted by opalctl): unlocked (rw)" user2 rw
tdump get-lr-status-user2-lr1 $SI DEV get-lr-status --who user2 --range 1 --key-file U2
# A user that is enabled and keyed but named in no ACE of range 1.
krun "IOC_OPAL_ACTIVATE_USR User3" $SI "$DEV" activate-user --user 3 --key-file "$D/admin"
krun "IOC_OPAL_SET_PW User3" \
	$SI "$DEV" set-pw --user 3 --key-file "$D/admin" --new-key-file "$D/u3"
krefused "IOC_OPAL_LOCK_UNLOCK as User3 (not granted): TCG status 1" \
	4 'TCG status 1 ' $SI "$DEV" lock-unlock --who user3 --range 1 --state lk --key-file "$D/u3"
krefused "IOC_OPAL_GET_LR_STATUS as User3 (not in the D0 ACE): TCG status 1" \
	4 'TCG status 1 ' $SI "$DEV" get-lr-status --who user3 --range 1 --key-file "$D/u3"
# opalctl grant adds User2 to the ACEs; it does not take User1 out.
krun "IOC_OPAL_LOCK_UNLOCK as User1 still allowed after the grant to User2" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1"

# ---- IOC_OPAL_SAVE and suspend/resume. The kernel replays saved entries
# only from opal_unlock_from_suspend(), which NVMe calls when a controller
# comes back from a suspend with was_suspended set: nvme-pci after its own
# shutdown. nvme-tcp has no suspend/resume callbacks and reconnects with
# was_suspended false, so for a fabrics namespace nothing is replayed.
gkrun lock-unlock-save-user1-lr1-rw "IOC_OPAL_LOCK_UNLOCK + IOC_OPAL_SAVE as User1 (rw)" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1" --save
if [ -n "$KERNEL_OPAL" ]; then
	run "opalctl lock --user 1 (nvme) behind the saved unlock" \
		opalctl lock "$CTRL" --user 1 --keyfile "$D/u1" --range 1 --transport nvme
else
	kskip "opalctl lock --user 1 (nvme) behind the saved unlock"
fi
klocked "range 1 locked before suspend"
gkrun resume-after-save-rw "suspend and resume (pm_test devices)" suspend_resume
[ -n "$KERNEL_OPAL" ] && dmesg | grep -i -E 'PM:|nvme|opal' | tail -n 25 >&2
klocked "after resume range 1 is still locked: no replay of the saved rw for nvme-tcp"
krun "IOC_OPAL_LOCK_UNLOCK as User1: unlock again" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1"
gkrun save-user1-lr1-lk "IOC_OPAL_SAVE as User1 with OPAL_LK (replaces the saved rw)" \
	$SI "$DEV" save --who user1 --range 1 --state lk --key-file "$D/u1"
gkrun resume-after-save-lk "suspend and resume again" suspend_resume
[ -n "$KERNEL_OPAL" ] && dmesg | grep -i -E 'PM:|nvme|opal' | tail -n 10 >&2
kintact "after resume range 1 is still readable: no replay of the saved lk either"
[ -w /sys/power/pm_test ] && echo none >/sys/power/pm_test

# ---- The target loses power: sedsim stops, power-cycles (LockOnReset locks
# range 1) and serves again; the host's nvme-tcp notices, reconnects by
# itself and re-initializes the controller with was_suspended false, so the
# saved unlock is not replayed there either.
ctrl_state() {
	cat "/sys/class/nvme/$1/state" 2>/dev/null
}

power_cycle_target() {
	_c=${CTRL#/dev/}
	kill "$SERVE_PID"
	wait "$SERVE_PID"
	for _i in $(seq 1 100); do
		[ "$(ctrl_state "$_c")" != live ] && break
		sleep 0.1
	done
	diag "controller $_c after the target stopped: $(ctrl_state "$_c")"
	sedsim power-cycle "$D/drive" >&2 || return 1
	serve || return 1
	for _i in $(seq 1 300); do
		[ "$(ctrl_state "$_c")" = live ] && return 0
		sleep 0.1
	done
	diag "controller $_c: $(ctrl_state "$_c")"
	return 1
}

krun "IOC_OPAL_LOCK_UNLOCK + IOC_OPAL_SAVE as User1 (rw) before the target's power cycle" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1" --save
if [ -n "$KERNEL_OPAL" ]; then
	tmark
	if power_cycle_target; then
		ok "target power-cycled and serving again: the host reconnected $CTRL by itself"
	else
		not_ok "target power-cycled and serving again: the host reconnected $CTRL by itself"
		cat "$D/serve.log" >&2
	fi
	dmesg | grep -i nvme | tail -n 8 >&2
	locked "after the reconnect range 1 is locked (LockOnReset): the saved unlock was not replayed"
	tdump reconnect-after-power-cycle "sedsim power-cycle; nvme-tcp reconnect"
else
	kskip "target power-cycled and serving again: the host reconnected $CTRL by itself"
	kskip "after the reconnect range 1 is locked (LockOnReset): the saved unlock was not replayed"
fi
krun "IOC_OPAL_LOCK_UNLOCK as User1 after the reconnect: unlock" \
	$SI "$DEV" lock-unlock --who user1 --range 1 --state rw --key-file "$D/u1"

# ---- The global range's ACEs through the kernel (golden vectors for lr 0).
gkrun add-user1-lr0-ro "IOC_OPAL_ADD_USR_TO_LR User1 global range ro" \
	$SI "$DEV" add-user-to-lr --user 1 --range 0 --state ro --key-file "$D/admin"
gkrun add-user1-lr0-rw "IOC_OPAL_ADD_USR_TO_LR User1 global range rw" \
	$SI "$DEV" add-user-to-lr --user 1 --range 0 --state rw --key-file "$D/admin"

# ---- GET_GEOMETRY against Level 0 Discovery read through NVMe.
if [ -n "$KERNEL_OPAL" ]; then
	$SI "$DEV" get-geometry >"$D/geo"
	cat "$D/geo" >&2
	opalctl discover "$CTRL" --transport nvme --json >"$D/disc.json"
	cat "$D/disc.json" >&2
	_dj=$(tr -d ' \n\t' <"$D/disc.json")
	_want=
	for _f in logical_block_size alignment_granularity lowest_aligned_lba; do
		_want="$_want$_f=$(echo "$_dj" | grep -o "\"$_f\":[0-9]*" | cut -d: -f2) "
	done
	expect_eq "IOC_OPAL_GET_GEOMETRY matches opalctl discover (nvme)" "$_want" \
		"$(grep -v '^align=' "$D/geo" | tr '\n' ' ')"
	expect_eq "IOC_OPAL_GET_GEOMETRY: ALIGN required (sedsim sets the bit)" "align=1" \
		"$(grep '^align=' "$D/geo")"
else
	kskip "IOC_OPAL_GET_GEOMETRY matches opalctl discover (nvme)"
	kskip "IOC_OPAL_GET_GEOMETRY: ALIGN required (sedsim sets the bit)"
fi

# ---- IOC_OPAL_REVERT_LSP with OPAL_PRESERVE (KeepGlobalRangeKey = True).
krefused "IOC_OPAL_REVERT_LSP with a wrong key: TCG status 1" \
	4 'TCG status 1 ' $SI "$DEV" revert-lsp --keep-global-range-key --key-file "$D/bad"
gkrun revert-lsp-keep "IOC_OPAL_REVERT_LSP keeping the global range key" \
	$SI "$DEV" revert-lsp --keep-global-range-key --key-file "$D/admin"
if [ -n "$KERNEL_OPAL" ]; then
	_s=$(status_json)
	if echo "$_s" | grep -q '"locking_enabled":false'; then
		ok "after REVERT_LSP (keep): opalctl status (nvme) shows locking disabled"
	else
		not_ok "after REVERT_LSP (keep): opalctl status (nvme) shows locking disabled"
		diag "status: $_s"
	fi
	expect_eq "after REVERT_LSP (keep): global range data kept" "$HEAD" "$(head_sum)"
	gone "after REVERT_LSP (keep): range 1's data is gone (its key was not kept)"
else
	kskip "after REVERT_LSP (keep): opalctl status (nvme) shows locking disabled"
	kskip "after REVERT_LSP (keep): global range data kept"
	kskip "after REVERT_LSP (keep): range 1's data is gone (its key was not kept)"
fi

# ---- Set up again (the SID kept its PIN: RevertSP leaves the Admin SP),
# then IOC_OPAL_REVERT_LSP without OPAL_PRESERVE.
run "opalctl setup range 1 again (nvme; SID still owned)" \
	opalctl setup "$CTRL" --keyfile "$D/admin" --range 1 --start $START --length $LENGTH \
	--yes-destroy-data --transport nvme
run "write 1 MiB into the new range 1" write_range1
intact "data in the new range 1 reads back"
HEAD=$(head_sum)
gkrun revert-lsp "IOC_OPAL_REVERT_LSP without keeping the global range key" \
	$SI "$DEV" revert-lsp --key-file "$D/admin"
if [ -n "$KERNEL_OPAL" ]; then
	_s=$(status_json)
	if echo "$_s" | grep -q '"locking_enabled":false'; then
		ok "after REVERT_LSP: opalctl status (nvme) shows locking disabled"
	else
		not_ok "after REVERT_LSP: opalctl status (nvme) shows locking disabled"
		diag "status: $_s"
	fi
	_h=$(head_sum)
	if [ -n "$_h" ] && [ "$_h" != "$HEAD" ]; then
		ok "after REVERT_LSP: global range data erased (new key)"
	else
		not_ok "after REVERT_LSP: global range data erased (new key)"
	fi
	gone "after REVERT_LSP: range 1's data is gone"
else
	kskip "after REVERT_LSP: opalctl status (nvme) shows locking disabled"
	kskip "after REVERT_LSP: global range data erased (new key)"
	kskip "after REVERT_LSP: range 1's data is gone"
fi
run "opalctl revert (nvme) with the SID's key: back to factory" \
	opalctl revert "$CTRL" --keyfile "$D/admin" --yes-destroy-data --transport nvme
run "after revert: Locking SP inactive (discover, nvme)" sh -c \
	"opalctl --json discover $CTRL --transport nvme | tr -d ' \n' | grep -q '\"locking_enabled\":false'"

disconnect
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID"
done_testing
