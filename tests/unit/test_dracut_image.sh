#!/bin/sh
# The dracut module at build time, with the host's dracut (no boot): the
# image holds the JWEs, so it is mode 0600 whatever file was there before
# (an initramfs-tools image is 0644, and dracut copies onto an existing
# file, keeping its mode), and a file system that cannot keep that mode
# fails the build; a key file goes into the image in clear only for an
# entry with the option cleartext-key-on-boot, otherwise the build fails
# naming the entry.
#   test_dracut_image.sh MODULE-DIR OPALCTL BOOT-FUNCTIONS
# dracut runs from a base directory of the test's own (every module of
# /usr/lib/dracut linked, plus MODULE-DIR as 90fdekit-opal and a test
# module), with --no-kernel (no kernel modules needed) unless said.
set -u
MODDIR=$(cd "$1" && pwd)
OPALCTL=$2
FUNCS=$3
T=$(mktemp -d /tmp/test_dracut_image.XXXXXX)
. "$(dirname "$0")/tap-lib.sh"

need dracut lsinitrd stat base64 clevis
[ -d /usr/lib/dracut/modules.d/99base ] || { echo "1..0 # SKIP /usr/lib/dracut/modules.d/99base is missing: install dracut-core (scripts/bootstrap)"; exit 0; }
echo "1..22"

mkdir -p "$T/base/modules.d" "$T/conf" "$T/tmp" "$T/bin"
for e in /usr/lib/dracut/*; do
	[ "${e##*/}" = modules.d ] || ln -s "$e" "$T/base/"
done
for m in /usr/lib/dracut/modules.d/*; do ln -s "$m" "$T/base/modules.d/"; done
ln -s "$MODDIR" "$T/base/modules.d/90fdekit-opal"
# A module that runs after fdekit-opal's install() and leaves a new 0644
# file where the image goes (what another hook or tool could do).
mkdir "$T/base/modules.d/99fdekit-test-late"
cat >"$T/base/modules.d/99fdekit-test-late/module-setup.sh" <<'EOF'
#!/bin/bash
check() { return 255; }
install() { rm -f -- "$outfile" && command install -m 0644 /dev/null "$outfile"; }
EOF
# chmod refusing the image (a file system that keeps no modes); dracut's
# other chmods go through. DRACUT_PATH puts it first in dracut's PATH.
cat >"$T/bin/chmod" <<'EOF'
#!/bin/sh
for a in "$@"; do
	[ "$a" = "${FDEKIT_TEST_NOCHMOD:-}" ] && exit 1
done
exec /bin/chmod "$@"
EOF
chmod 0755 "$T/bin/chmod"

head -c 32 /dev/urandom >"$T/data.key"
chmod 0600 "$T/data.key"
printf 'root serial=FDEKITTEST01 1 prompt timeout=5\n' >"$T/prompt.tab"
printf 'root serial=FDEKITTEST01 1 prompt timeout=5\ndata serial=FDEKITTEST02 1 keyfile:%s timeout=5\n' \
	"$T/data.key" >"$T/keyfile.tab"
printf 'root serial=FDEKITTEST01 1 prompt timeout=5\ndata serial=FDEKITTEST02 1 keyfile:%s timeout=5,cleartext-key-on-boot\n' \
	"$T/data.key" >"$T/cleartext.tab"
printf 'root serial=FDEKITTEST01 1 prompt timeout=5\ndata serial=FDEKITTEST02 1 keyfile:%s noauto\n' \
	"$T/data.key" >"$T/noauto.tab"

# build TABLE IMAGE [MODULES [DRACUT-ARGS...]]: dracut's output in $T/out and $T/err
build() {
	_tab=$1
	_img=$2
	_mods=${3:-}
	[ $# -ge 3 ] && shift 3 || shift 2
	[ $# -gt 0 ] || set -- --no-kernel --kver 0.0.0-fdekit-test
	env dracutbasedir="$T/base" FDEKIT_OPALCTL="$OPALCTL" FDEKIT_OPALTAB="$_tab" \
		FDEKIT_BOOT_FUNCTIONS="$FUNCS" \
		dracut --force --no-hostonly --no-early-microcode --conf /dev/null --confdir "$T/conf" \
		--tmpdir "$T/tmp" --modules "base fdekit-opal $_mods" --compress cat "$@" "$_img"
}
mode() { stat -c %a "$1"; }
# carries IMAGE PATH: the image lists PATH (no leading slash)
carries() { lsinitrd "$1" 2>/dev/null | awk '{print $9}' | grep -qx "${2#/}"; }

# 1-2: over an existing 0644 image (as initramfs-tools leaves it).
install -m 0644 /dev/null "$T/over.img"
expect_rc "an image made over an existing 0644 file: dracut succeeds" 0 build "$T/prompt.tab" "$T/over.img"
if [ "$(mode "$T/over.img")" = 600 ] && carries "$T/over.img" etc/fdekit/opaltab; then
	ok "and the image is mode 0600"
else
	not_ok "and the image is mode 0600 (mode $(mode "$T/over.img"))"
fi
# 3: a new image.
check "a new image: dracut succeeds" build "$T/prompt.tab" "$T/new.img"
if [ "$(mode "$T/new.img")" = 600 ]; then ok "a new image is mode 0600"; else not_ok "a new image is mode 0600 (mode $(mode "$T/new.img"))"; fi
# 5: a 0644 file put there after the module's install(): checked at dracut's exit.
expect_rc "a 0644 file left after fdekit-opal's install(): dracut succeeds" 0 \
	build "$T/prompt.tab" "$T/late.img" fdekit-test-late
if [ "$(mode "$T/late.img")" = 600 ] && carries "$T/late.img" etc/fdekit/opaltab; then
	ok "and the image it wrote there is mode 0600"
else
	not_ok "and the image it wrote there is mode 0600 (mode $(mode "$T/late.img"))"
fi
# 7: a file system that keeps no modes: the build fails, saying why.
install -m 0644 /dev/null "$T/vfat.img"
export FDEKIT_TEST_NOCHMOD="$T/vfat.img" DRACUT_PATH="$T/bin /sbin /bin /usr/sbin /usr/bin"
expect_rc "an existing 0644 image that cannot be made 0600: dracut fails" 1 build "$T/prompt.tab" "$T/vfat.img"
if grep -q "fdekit-opal: $T/vfat.img is mode 644 and cannot be made 0600" "$T/err"; then
	ok "naming the image and its mode"
else
	not_ok "naming the image and its mode"; sed 's/^/# /' "$T/err" | tail -5
fi
# 9: the same when the image was written 0644 after install() and cannot be fixed.
FDEKIT_TEST_NOCHMOD="$T/late2.img"
expect_rc "an image written 0644 that cannot be made 0600: dracut fails at its exit" 1 \
	build "$T/prompt.tab" "$T/late2.img" fdekit-test-late
unset FDEKIT_TEST_NOCHMOD DRACUT_PATH
grep_out_err() { if grep -q -- "$2" "$T/err"; then ok "$1"; else not_ok "$1"; sed 's/^/# /' "$T/err" | tail -5; fi; }
grep_out_err "saying the image was written 0644" "fdekit-opal: $T/late2.img was written mode 644 and cannot be made 0600"

# 11-12: a key file in clear only with cleartext-key-on-boot.
expect_rc "a keyfile: entry without cleartext-key-on-boot: dracut fails" 1 build "$T/keyfile.tab" "$T/keyfile.img"
if grep -q "entry 'data' would put its key file $T/data.key into the initramfs in clear" "$T/err" &&
	grep -q "cleartext-key-on-boot" "$T/err" && [ ! -e "$T/keyfile.img" ]; then
	ok "naming the entry, its key file and the option, and no image written"
else
	not_ok "naming the entry, its key file and the option, and no image written"; sed 's/^/# /' "$T/err" | tail -5
fi
# 13: with the option, the image carries it.
expect_rc "with cleartext-key-on-boot: dracut succeeds" 0 build "$T/cleartext.tab" "$T/cleartext.img"
if carries "$T/cleartext.img" "$T/data.key" && [ "$(mode "$T/cleartext.img")" = 600 ]; then
	ok "the image carries the key file, mode 0600"
else
	not_ok "the image carries the key file, mode 0600"
fi
# 15: a noauto entry's key file needs no option (it is not carried).
expect_rc "a noauto keyfile: entry: dracut succeeds" 0 build "$T/noauto.tab" "$T/noauto.img"
if ! carries "$T/noauto.img" "$T/data.key" && carries "$T/noauto.img" etc/fdekit/opaltab; then
	ok "and the image does not carry its key file"
else
	not_ok "and the image does not carry its key file"
fi

# 17-18: a tang binding, systemd-networkd as the image's network module
# (no network-legacy ifup): the boot script is told to start it. The JWE
# needs only its protected header here (the pins are read from it).
hdr=$(printf '{"alg":"ECDH-ES","enc":"A256GCM","clevis":{"pin":"tang","tang":{"url":"http://192.0.2.1"}}}' |
	base64 -w0 | tr '+/' '-_' | tr -d '=')
echo "$hdr..iv.ct.tag" >"$T/tang.jwe"
printf 'root serial=FDEKITTEST01 1 clevis:%s\n' "$T/tang.jwe" >"$T/tang.tab"
expect_rc "a tang binding, systemd-networkd in the image: dracut succeeds" 0 \
	build "$T/tang.tab" "$T/networkd.img" "systemd systemd-networkd"
if lsinitrd -f etc/fdekit/initramfs.conf "$T/networkd.img" 2>/dev/null | grep -qx 'FDEKIT_NET="systemd-networkd"' &&
	carries "$T/networkd.img" usr/bin/networkctl && ! carries "$T/networkd.img" sbin/ifup &&
	carries "$T/networkd.img" "$T/tang.jwe"; then
	ok "the image's settings name systemd-networkd for the boot script, networkctl carried"
else
	not_ok "the image's settings name systemd-networkd for the boot script, networkctl carried"
	lsinitrd -f etc/fdekit/initramfs.conf "$T/networkd.img" 2>&1 | sed 's/^/# /'
fi

# 19-22: the build's default bound is checked where the boot would only
# say it and fall back to 120 s.
FDEKIT_TIMEOUT=08
export FDEKIT_TIMEOUT
expect_rc "FDEKIT_TIMEOUT=08: dracut succeeds" 0 build "$T/prompt.tab" "$T/t08.img"
if lsinitrd -f etc/fdekit/initramfs.conf "$T/t08.img" 2>/dev/null | grep -qx 'FDEKIT_TIMEOUT="08"'; then
	ok "and the image carries it (the boot reads it as 8 s)"
else
	not_ok "and the image carries it (the boot reads it as 8 s)"
fi
FDEKIT_TIMEOUT=90000
expect_rc "FDEKIT_TIMEOUT=90000: dracut fails, saying the range" 1 build "$T/prompt.tab" "$T/t90000.img"
if grep -q "FDEKIT_TIMEOUT=90000: use 1 to 86400 seconds" "$T/err" && [ ! -e "$T/t90000.img" ]; then
	ok "naming FDEKIT_TIMEOUT, no image written"
else
	not_ok "naming FDEKIT_TIMEOUT, no image written"; sed 's/^/# /' "$T/err" | tail -3
fi
unset FDEKIT_TIMEOUT
[ "$failed" -eq 0 ]
