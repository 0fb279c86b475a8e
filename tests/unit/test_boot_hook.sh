#!/bin/sh
# The initramfs-tools hook (hooks/fdekit-opal) and the shipped conf.d
# snippet (conf.d/fdekit-umask), run on the host as mkinitramfs would run
# them, with a hook-functions whose copy_exec and friends record what they
# were asked (FDEKIT_HOOK_FUNCTIONS), the real opalctl's check-table, and
# JWEs made by the real clevis offline (tang from an advertisement that
# tangd printed, null, sss). Nothing is installed; no image is built.
#   test_boot_hook.sh HOOK UMASK-SNIPPET BOOT-FUNCTIONS OPALCTL
# Checks:
#   - a keyfile: entry the image would carry fails the build, naming the
#     entry, unless it carries the option cleartext-key-on-boot;
#   - an image file that exists with mode 0644 ends up 0600 (the snippet,
#     which mkinitramfs sources with its -o file in $outfile, and the hook,
#     whatever the table);
#   - a warning when the image has no keymap (KEYMAP=n) and an entry may
#     ask for the recovery key;
#   - FDEKIT_TIMEOUT checked and written in decimal; FDEKIT_TANG_WAIT
#     checked and passed on; the entries whose key needs Tang
#     (FDEKIT_TANG_ENTRIES) as an sss threshold says; the boot functions
#     and setsid in the image.
set -u
HOOK=$1
SNIPPET=$2
FUNCS=$3
OPALCTL=$4
T=$(mktemp -d /tmp/test_boot_hook.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

need clevis jose setsid /usr/libexec/tangd /usr/libexec/tangd-keygen
echo "1..32"

mkdir -p "$T/conf/conf.d" "$T/keys"
cat >"$T/hook-functions" <<EOF
copy_exec() { echo "copy_exec \$*" >>"$T/copied"; }
copy_file() {
	echo "copy_file \$*" >>"$T/copied"
	_dst=\$DESTDIR/\${3:-\$2}
	[ -e "\$_dst" ] && return 1
	mkdir -p "\${_dst%/*}" && cp "\$2" "\$_dst"
}
manual_add_modules() { echo "manual_add_modules \$*" >>"$T/copied"; }
auto_add_modules() { echo "auto_add_modules \$*" >>"$T/copied"; }
EOF

# The JWEs, sealed offline: Tang's advertisement as tangd answers GET /adv.
mkdir -p "$T/tang" && /usr/libexec/tangd-keygen "$T/tang" >/dev/null 2>&1
printf 'GET /adv HTTP/1.1\r\nHost: tang\r\n\r\n' | /usr/libexec/tangd "$T/tang" 2>/dev/null |
	sed '1,/^\r$/d' >"$T/adv.json"
TANG="{\"url\":\"http://192.0.2.1\",\"adv\":\"$T/adv.json\"}"
seal() {
	printf 'key' | clevis encrypt "$1" "$2" >"$T/keys/$3.jwe" 2>"$T/err" ||
		{ echo "Bail out! clevis encrypt $1 failed: $(cat "$T/err")"; exit 1; }
}
seal tang "$TANG" tang
seal null '{}' null
seal sss "{\"t\":1,\"pins\":{\"tang\":[$TANG],\"null\":[{}]}}" sss-either
seal sss "{\"t\":2,\"pins\":{\"tang\":[$TANG],\"null\":[{}]}}" sss-both
printf 'a key file' >"$T/keys/data.key"
chmod 0600 "$T/keys/data.key"

# hook TABLE-LINES [SETTINGS [KEYMAP]]: the hook, as mkinitramfs runs it
# (umask 0077 as the snippet sets it, its environment), on a table of these
# lines with these lines in conf.d/fdekit; $T/out, $T/err, $T/rc.
hook() {
	printf '%s\n' "$1" >"$T/opaltab"
	{
		echo "FDEKIT_OPALTAB=$T/opaltab"
		echo "FDEKIT_OPALCTL=$OPALCTL"
		echo "FDEKIT_BOOT_FUNCTIONS=$FUNCS"
		printf '%s\n' "${2:-}"
	} >"$T/conf/conf.d/fdekit"
	rm -rf "$T/dest" "$T/copied"
	mkdir -p "$T/dest"
	(
		umask 0077
		env DESTDIR="$T/dest" CONFDIR="$T/conf" KEYMAP="${3:-n}" MODULES=most \
			FDEKIT_HOOK_FUNCTIONS="$T/hook-functions" ${IMAGE:+FDEKIT_INITRAMFS_IMAGE="$IMAGE"} \
			sh "$HOOK" >"$T/out" 2>"$T/err"
	)
	echo $? >"$T/rc"
}
IMAGE=

# conf VAR: VAR's value in the image's /etc/fdekit/initramfs.conf, as the
# boot script reads it.
conf() {
	# shellcheck disable=SC2016 # expanded by the shell that sources it
	sh -c '. "$1" && eval "printf \"%s\\n\" \"\${$2-UNSET}\""' conf "$T/dest/etc/fdekit/initramfs.conf" "$1"
}

# built DESC / refused DESC PATTERN: the hook succeeded / failed saying it.
built() {
	if [ "$(cat "$T/rc")" = 0 ]; then ok "$1"; else not_ok "$1 (exit $(cat "$T/rc"))"; sed 's/^/# /' "$T/err"; fi
}
refused() {
	if [ "$(cat "$T/rc")" != 0 ] && grep -q -- "$2" "$T/err"; then
		ok "$1"
	else
		not_ok "$1 (exit $(cat "$T/rc"))"
		sed 's/^/# /' "$T/err"
	fi
}
mode() {
	stat -c %a "$1"
}

# --- key files in plain form on /boot ---
hook "data serial=FDEKITDATA01 1 keyfile:$T/keys/data.key fallback=fail"
refused "a keyfile: entry without cleartext-key-on-boot fails the build" "cleartext-key-on-boot"
refused "the message names the entry" "'data'"
if [ ! -e "$T/dest/etc/fdekit/opaltab" ] && ! grep -q "data.key" "$T/copied" 2>/dev/null; then
	ok "and the key file is not copied"
else
	not_ok "and the key file is not copied"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe
data serial=FDEKITDATA01 1 keyfile:$T/keys/data.key fallback=fail,cleartext-key-on-boot"
built "with cleartext-key-on-boot it is accepted"
if grep -q "copy_file keyfile $T/keys/data.key" "$T/copied"; then ok "and the key file copied"; else not_ok "and the key file copied"; fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe
data serial=FDEKITDATA01 1 keyfile:$T/keys/data.key noauto"
built "a noauto keyfile: entry (not in the image) needs no such option"
if ! grep -q "data.key" "$T/copied"; then ok "and its key file is not copied"; else not_ok "and its key file is not copied"; fi

# --- the image's mode ---
# The snippet, as mkinitramfs sources it: after its options ($outfile) and
# before it writes the image, which keeps the mode of a file that exists.
printf 'old image' >"$T/initrd.img"
chmod 0644 "$T/initrd.img"
(
	umask 0022
	outfile=$T/initrd.img
	FDEKIT_OPALTAB=$T/opaltab
	. "$SNIPPET"
	echo "UMASK=${UMASK:-} image=${FDEKIT_INITRAMFS_IMAGE:-}" >"$T/snippet.out"
)
if [ "$(mode "$T/initrd.img")" = 600 ]; then
	ok "conf.d/fdekit-umask: an existing 0644 image file becomes 0600"
else
	not_ok "conf.d/fdekit-umask: an existing 0644 image file becomes 0600 (mode $(mode "$T/initrd.img"))"
fi
if grep -q "^UMASK=0077 image=$T/initrd.img$" "$T/snippet.out"; then
	ok "conf.d/fdekit-umask: UMASK=0077, and the image's name for the hook"
else
	not_ok "conf.d/fdekit-umask: UMASK=0077, and the image's name for the hook"
	sed 's/^/# /' "$T/snippet.out"
fi
rm -f "$T/opaltab" "$T/initrd.img"
printf 'old image' >"$T/initrd.img"
chmod 0644 "$T/initrd.img"
(outfile=$T/initrd.img FDEKIT_OPALTAB=$T/opaltab . "$SNIPPET")
if [ "$(mode "$T/initrd.img")" = 644 ]; then
	ok "conf.d/fdekit-umask: without a table, the image's mode is left alone"
else
	not_ok "conf.d/fdekit-umask: without a table, the image's mode is left alone"
fi
# The hook: whatever set the mode before (a table elsewhere, another snippet).
IMAGE=$T/initrd.img
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe"
built "the hook builds with FDEKIT_INITRAMFS_IMAGE given"
if [ "$(mode "$T/initrd.img")" = 600 ]; then
	ok "the hook: an image holding a JWE ends up 0600"
else
	not_ok "the hook: an image holding a JWE ends up 0600 (mode $(mode "$T/initrd.img"))"
fi
IMAGE=

# --- the recovery prompt and the keymap ---
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "" n
built "KEYMAP=n: the image is built"
if grep -q "^W: fdekit-opal: .*root.*KEYMAP=y" "$T/err"; then
	ok "KEYMAP=n and an entry that may prompt: a warning naming it and KEYMAP=y"
else
	not_ok "KEYMAP=n and an entry that may prompt: a warning naming it and KEYMAP=y"
	sed 's/^/# /' "$T/err"
fi
hook "root serial=FDEKITROOT01 1 prompt" "" n
if grep -q "^W: fdekit-opal: .*root.*KEYMAP=y" "$T/err"; then
	ok "KEYMAP=n and a prompt entry: the warning"
else
	not_ok "KEYMAP=n and a prompt entry: the warning"
	sed 's/^/# /' "$T/err"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe fallback=fail" "" n
if ! grep -q "KEYMAP" "$T/err"; then
	ok "every entry fallback=fail: no keymap warning"
else
	not_ok "every entry fallback=fail: no keymap warning"
	sed 's/^/# /' "$T/err"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "" y
if [ -x /bin/setupcon ]; then
	if ! grep -q "KEYMAP" "$T/err"; then ok "KEYMAP=y: no warning"; else not_ok "KEYMAP=y: no warning"; sed 's/^/# /' "$T/err"; fi
else
	if grep -q "^W: fdekit-opal: .*console-setup" "$T/err"; then
		ok "KEYMAP=y without setupcon (no keymap after all): the warning says console-setup"
	else
		not_ok "KEYMAP=y without setupcon (no keymap after all): the warning says console-setup"
		sed 's/^/# /' "$T/err"
	fi
fi

# --- the settings, and what the boot script needs ---
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "FDEKIT_TIMEOUT=090"
built "FDEKIT_TIMEOUT=090 is accepted"
if [ "$(conf FDEKIT_TIMEOUT)" = 90 ]; then
	ok "and written as 90, not the octal-looking 090"
else
	not_ok "and written as 90 ($(conf FDEKIT_TIMEOUT))"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "FDEKIT_TIMEOUT=2min"
refused "FDEKIT_TIMEOUT=2min fails the build, saying what it takes" "FDEKIT_TIMEOUT=2min.*1 to 86400"
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "FDEKIT_TIMEOUT=100000"
refused "FDEKIT_TIMEOUT=100000 (over opalctl's 86400) fails the build" "FDEKIT_TIMEOUT=100000"

hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe"
if [ -r "$T/dest/usr/share/fdekit/boot-functions" ] &&
	cmp -s "$T/dest/usr/share/fdekit/boot-functions" "$FUNCS"; then
	ok "the image carries the boot functions (fdekit_seconds for the boot script)"
else
	not_ok "the image carries the boot functions (fdekit_seconds for the boot script)"
fi
if grep -q "^copy_exec $(command -v setsid)" "$T/copied"; then
	ok "a tang binding: setsid in the image (the network setup's own session)"
else
	not_ok "a tang binding: setsid in the image (the network setup's own session)"
fi
if [ "$(conf FDEKIT_TANG_ENTRIES)" = root ]; then
	ok "a tang JWE: its entry needs Tang (FDEKIT_TANG_ENTRIES=root)"
else
	not_ok "a tang JWE: its entry needs Tang ($(conf FDEKIT_TANG_ENTRIES))"
fi
if [ "$(conf FDEKIT_TANG_WAIT)" = auto ]; then
	ok "FDEKIT_TANG_WAIT unset: auto"
else
	not_ok "FDEKIT_TANG_WAIT unset: auto ($(conf FDEKIT_TANG_WAIT))"
fi

hook "root serial=FDEKITROOT01 1 clevis:$T/keys/sss-either.jwe
data serial=FDEKITDATA01 1 clevis:$T/keys/null.jwe
spare serial=FDEKITDATA02 2 keyfile:$T/keys/data.key cleartext-key-on-boot
asked serial=FDEKITDATA03 3 prompt"
built "sss of tang or null, null, a key file, a prompt"
if [ "$(conf FDEKIT_PINS)" = "null sss tang" ] && [ -z "$(conf FDEKIT_TANG_ENTRIES)" ]; then
	ok "each key can be had without Tang: FDEKIT_TANG_ENTRIES empty (the pins still say tang)"
else
	not_ok "each key can be had without Tang: FDEKIT_TANG_ENTRIES empty ('$(conf FDEKIT_TANG_ENTRIES)', pins '$(conf FDEKIT_PINS)')"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/sss-both.jwe
data serial=FDEKITDATA01 1 clevis:$T/keys/sss-either.jwe"
if [ "$(conf FDEKIT_TANG_ENTRIES)" = root ]; then
	ok "sss of tang and null (t=2): that entry needs Tang, the t=1 one does not"
else
	not_ok "sss of tang and null (t=2): that entry needs Tang ('$(conf FDEKIT_TANG_ENTRIES)')"
fi

hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "FDEKIT_TANG_WAIT=no"
built "FDEKIT_TANG_WAIT=no is accepted"
if [ "$(conf FDEKIT_TANG_WAIT)" = no ]; then
	ok "and passed on to the boot script"
else
	not_ok "and passed on to the boot script ($(conf FDEKIT_TANG_WAIT))"
fi
hook "root serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe" "FDEKIT_TANG_WAIT=sometimes"
refused "FDEKIT_TANG_WAIT=sometimes fails the build, saying what it takes" "FDEKIT_TANG_WAIT=sometimes.*yes, no or auto"

# An entry name is data, never code, in the image's initramfs.conf.
hook "r\$(touch\${IFS}$T/pwned) serial=FDEKITROOT01 1 clevis:$T/keys/tang.jwe"
conf FDEKIT_TANG_ENTRIES >/dev/null 2>&1
if [ ! -e "$T/pwned" ]; then
	ok "an entry name with \$(...) is not run when the boot script reads initramfs.conf"
else
	not_ok "an entry name with \$(...) is not run when the boot script reads initramfs.conf"
fi
[ "$failed" -eq 0 ]
