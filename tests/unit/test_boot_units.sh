#!/bin/sh
# The systemd units of tools/boot/systemd: each one rendered (stub
# executables for opalctl, the askpass program and the sleep guard) passes
# systemd-analyze verify with nothing said; the unlock units take opalctl's
# exit 11 (some entries failed, others unlocked) as success, so that their
# follow-up steps (ExecStartPost: the sleep guard; ExecStop: lock-all at
# shutdown) still run for the ranges that did unlock; and the units meson
# rendered for installation say the same.
#   test_boot_units.sh SRCDIR BUILDDIR
# (SRCDIR: tools/boot/systemd; BUILDDIR: where meson rendered the units.)
set -u
SRC=$1
BUILT=$2
T=$(mktemp -d /tmp/test_boot_units.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

echo "1..12"
mkdir -p "$T/bin" "$T/units"
for exe in opalctl ask-password fdekit-opal-sleep-guard; do
	printf '#!/bin/sh\nexit 0\n' >"$T/bin/$exe"
	chmod 0755 "$T/bin/$exe"
done
for f in "$SRC"/*.service.in; do
	u=${f##*/}
	u=${u%.in}
	sed -e "s|@SBINDIR@|$T/bin|g" -e "s|@LIBEXECDIR@|$T/bin|g" \
		-e "s|@ASKPASS@|$T/bin/ask-password|g" "$f" >"$T/units/$u"
done
# A template is verified through one of its instances.
cp "$T/units/fdekit-opal-unlock@.service" "$T/units/fdekit-opal-unlock@data.service"

# verify UNIT: systemd-analyze verify exits 0 and says nothing (it only
# warns, exit 0, about an unknown key or a value it cannot parse).
verify() {
	systemd-analyze verify --man=no "$T/units/$1" >"$T/out" 2>&1 && [ ! -s "$T/out" ]
}

for u in fdekit-opal-unlock.service fdekit-opal-unlock@data.service \
	fdekit-opal-sleep-guard.service fdekit-opal-regen-done.service; do
	if ! command -v systemd-analyze >/dev/null 2>&1; then
		ok "$u: systemd-analyze verify # SKIP no systemd-analyze"
	elif [ ! -d /run/systemd ] && [ "$(id -u)" -ne 0 ]; then
		# It needs /run/systemd, which a user cannot make (a build chroot).
		ok "$u: systemd-analyze verify # SKIP no /run/systemd"
	elif verify "$u"; then
		ok "$u: systemd-analyze verify says nothing"
	else
		not_ok "$u: systemd-analyze verify"
		sed 's/^/# /' "$T/out"
	fi
done

# service_key FILE KEY: the values of KEY in the [Service] section, one a line.
service_key() {
	sed -n '/^\[Service\]/,/^\[/p' "$1" | sed -n "s/^$2=//p"
}

# success_11 FILE: [Service] has SuccessExitStatus= with 11 among its values.
success_11() {
	service_key "$1" SuccessExitStatus | tr ' ' '\n' | grep -qx 11
}

for u in fdekit-opal-unlock.service fdekit-opal-unlock@.service; do
	f=$T/units/$u
	if success_11 "$f"; then
		ok "$u: opalctl's exit 11 (some entries failed) counts as success"
	else
		not_ok "$u: opalctl's exit 11 (some entries failed) counts as success"
		sed -n '/^\[Service\]/,$p' "$f" | sed 's/^/# /'
	fi
	# What exit 11 must not skip: the sleep guard and lock-all at shutdown.
	if service_key "$f" ExecStartPost | grep -q 'restart fdekit-opal-sleep-guard.service' &&
		service_key "$f" ExecStop | grep -q 'opalctl lock-all'; then
		ok "$u: its ExecStartPost restarts the sleep guard, its ExecStop runs lock-all"
	else
		not_ok "$u: its ExecStartPost restarts the sleep guard, its ExecStop runs lock-all"
	fi
	# Only 11: any other failure of unlock-all stays a failed unit.
	if service_key "$f" ExecStart | grep -q 'opalctl unlock-all' &&
		! service_key "$f" ExecStart | grep -q '^-' &&
		[ "$(service_key "$f" SuccessExitStatus | tr ' ' '\n' | grep -c .)" -eq 1 ]; then
		ok "$u: no other exit status of unlock-all is taken as success"
	else
		not_ok "$u: no other exit status of unlock-all is taken as success"
	fi
done

# The units meson renders for installation.
for u in fdekit-opal-unlock.service fdekit-opal-unlock@.service; do
	if [ -r "$BUILT/$u" ] && success_11 "$BUILT/$u" && ! grep -q '@[A-Z]*@' "$BUILT/$u"; then
		ok "the rendered $u: SuccessExitStatus=11, every @VAR@ replaced"
	else
		not_ok "the rendered $u: SuccessExitStatus=11, every @VAR@ replaced (reconfigure the build?)"
	fi
done
[ "$failed" -eq 0 ]
