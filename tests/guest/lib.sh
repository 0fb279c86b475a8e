# lib.sh: TAP helpers for guest test scripts (POSIX sh, busybox).
# A script does:  . "$(dirname "$0")/lib.sh"; plan N; ...; done_testing
# Results go to stdout (the harness's TAP channel), diagnostics to stdout
# as "# ..." lines, command output worth keeping to stderr (the console).

# Key files the scripts write are the owner's alone, as opalctl insists.
umask 077

_tap_n=0
_tap_plan=0
_tap_failed=0

plan() {
	_tap_plan=$1
	echo "1..$1"
}

ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $*"
}

not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $*"
}

# skip DESCRIPTION REASON: a TAP skip (counted as skipped, never as passed).
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

diag() {
	echo "# $*"
}

# check DESCRIPTION CMD [ARGS...]: one result, ok when CMD exits 0.
# CMD's output goes to the console so a failure can be diagnosed.
check() {
	_desc=$1
	shift
	if "$@" >&2; then
		ok "$_desc"
	else
		not_ok "$_desc (exit $?: $*)"
	fi
}

# result DESCRIPTION STATUS: ok when STATUS is 0.
result() {
	if [ "$2" -eq 0 ]; then ok "$1"; else not_ok "$1"; fi
}

# expect_eq DESCRIPTION EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1"
		diag "expected '$2', got '$3'"
	fi
}

# expect_ge DESCRIPTION ACTUAL MIN: ok when ACTUAL >= MIN (integers).
expect_ge() {
	if [ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null; then
		ok "$1"
	else
		not_ok "$1"
		diag "expected at least $3, got '$2'"
	fi
}

# postcheck DESCRIPTION TOOL [ARGS...]: a result the harness fills in after
# the guest powered off, by running the host tool TOOL (a --host-tool) with
# ARGS; "@disk:NAME" in ARGS is the host path of the disk image NAME.
postcheck() {
	_tap_n=$((_tap_n + 1))
	_desc=$1
	shift
	printf '#@postcheck\t%s\t%s\n' "$_desc" "$*"
}

# start_server LOG CMD [ARGS...]: run CMD in the background, its stderr
# appended to LOG (emptied first), and wait up to 5 s until LOG says
# "serving". SERVER_PID is CMD's pid.
start_server() {
	_log=$1
	shift
	: >"$_log"
	"$@" 2>>"$_log" &
	SERVER_PID=$!
	for _i in $(seq 1 50); do
		grep -q serving "$_log" && return 0
		sleep 0.1
	done
	return 1
}

# host_hotplug del|add: ask the harness to hot-unplug (QMP device_del: an
# ACPI eject request the guest's kernel completes) or hot-plug (device_add)
# the virtio-crypto device. Returns at once; the caller waits for the
# device to go or come.
host_hotplug() {
	echo "#@host hotplug $1"
}

# host_wakeup: ask the harness to wake the guest (QMP system_wakeup) once it
# has entered ACPI S3; call it just before writing "mem" to /sys/power/state.
host_wakeup() {
	echo "#@host wakeup"
}

# skip_rest REASON: report every result still planned as failed, and exit.
# Used when a precondition broke: the remaining tests cannot pass.
bail() {
	diag "cannot continue: $*"
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		not_ok "not run: $*"
	done
	exit 1
}

done_testing() {
	if [ "$_tap_n" -ne "$_tap_plan" ]; then
		diag "planned $_tap_plan results, printed $_tap_n"
		exit 1
	fi
	exit 0
}

# disk_by_serial NAME: /dev/vdX of the virtio-blk disk whose serial is NAME
# (declared in the script with "# harness: disk NAME SIZE").
disk_by_serial() {
	for _s in /sys/block/vd*/serial; do
		[ -r "$_s" ] || continue
		if [ "$(cat "$_s")" = "$1" ]; then
			_d=${_s%/serial}
			echo "/dev/${_d##*/}"
			return 0
		fi
	done
	return 1
}

# Kernel modules: busybox modprobe resolves dependencies from modules.dep.
load() {
	# -a: every argument is a module name.
	modprobe -a "$@" >&2
}
