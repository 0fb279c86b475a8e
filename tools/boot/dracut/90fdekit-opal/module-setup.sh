#!/bin/bash
# fdekit-opal (dracut): unlock the Opal self-encrypting drives of the unlock
# table /etc/fdekit/opaltab in the initqueue, before the root device is
# waited for: opalctl, the table's automatic entries (checked by `opalctl
# check-table`, which fails the build naming each bad entry), every JWE and
# key file they name, Clevis with the pins those JWEs use. When one uses
# tang, the module brings the network up itself (no rd.neednet: nothing
# waits for a network that may never come) and takes it down after the
# unlock; see fdekit-opal-unlock.sh.
#
# The image holds the JWEs: it is made mode 0600 whatever made the file
# before, or the build fails. A key file goes into it only for an entry
# with the option cleartext-key-on-boot; otherwise the build fails naming
# the entry.
#
# Build-time settings (environment or a dracut.conf.d file):
#   FDEKIT_OPALTAB   the table (default /etc/fdekit/opaltab; in the
#                    initramfs always /etc/fdekit/opaltab)
#   FDEKIT_OPALCTL   the opalctl binary (default: opalctl in PATH)
#   FDEKIT_TIMEOUT   default bound in seconds on the whole unlock at boot
#   FDEKIT_BOOT_FUNCTIONS  the shared shell functions
#                    (default /usr/share/fdekit/boot-functions)
# Kernel command line: rd.fdekit.opal=0 skips the unlock,
# rd.fdekit.timeout=SEC bounds it, rd.fdekit.keepnet=1 keeps the network
# up after it (fdekit.opal=, fdekit.timeout= and fdekit.keepnet= too).

fdekit_opalctl() {
    echo "${FDEKIT_OPALCTL:-$(PATH="$PATH:/usr/local/sbin" find_binary opalctl)}"
}

# The table the image carries: the automatic entries of FDEKIT_OPALTAB, as
# `opalctl check-table --boot` prints them after checking every entry with
# the parser the boot uses. Its JWEs, key files and pins: FDEKIT_JWES,
# FDEKIT_KEYFILES, FDEKIT_PINS.
fdekit_scan() {
    [[ $fdekit_scanned ]] && return "$fdekit_scanned"
    fdekit_scanned=1
    [[ -s ${FDEKIT_OPALTAB:=/etc/fdekit/opaltab} ]] || return 1
    fdekit_boot_table="$DRACUT_TMPDIR/fdekit-opaltab"
    if ! "$(fdekit_opalctl)" check-table --table "$FDEKIT_OPALTAB" --boot > "$fdekit_boot_table"; then
        derror "fdekit-opal: $FDEKIT_OPALTAB has bad entries (above): fix them, or the boot cannot unlock them"
        return 1
    fi
    # shellcheck disable=SC1090
    . "${FDEKIT_BOOT_FUNCTIONS:-/usr/share/fdekit/boot-functions}" || return 1
    fdekit_table_scan "$fdekit_boot_table" || return 1
    fdekit_cleartext_keys "$fdekit_boot_table" || return 1
    fdekit_scanned=0
}

# A key file in the image is the drive's key in clear for anyone who reads
# the image (a backup, a copied /boot, a stolen unencrypted boot
# partition): only for an entry that says so, cleartext-key-on-boot.
fdekit_cleartext_keys() {
    local name dev ranges key opts refused=
    while read -r name dev ranges key opts; do
        [[ $name && $name != \#* && $key == keyfile:* ]] || continue
        [[ ,$opts, == *,cleartext-key-on-boot,* ]] && continue
        derror "fdekit-opal: $FDEKIT_OPALTAB: entry '$name' would put its key file ${key#keyfile:} into the initramfs in clear, where anyone who reads the image has the drive's key: seal the key with Clevis (opalctl bind), make the entry noauto, or accept it with the option cleartext-key-on-boot"
        refused=1
    done < "$1"
    [[ ! $refused ]]
}

# The image holds the JWEs (and any accepted key file): root only. dracut
# creates it under umask 077, but copies onto an existing file, which keeps
# its mode: an image that initramfs-tools left 0644 stays 0644. So the
# existing file is made 0600 before dracut writes into it, and checked
# again when dracut exits (after it wrote the image). A file system that
# cannot keep the mode (vfat mounted without umask=0077) fails the build.
fdekit_image_mode_bad() {
    local mode
    mode=$(stat -L -c %a -- "$1") || return 0
    (((8#$mode & 8#077) != 0))
}

fdekit_image_private() {
    [[ $outfile ]] || return 0
    if [[ -e $outfile ]]; then
        chmod 0600 -- "$outfile" 2> /dev/null
        if fdekit_image_mode_bad "$outfile"; then
            dfatal "fdekit-opal: $outfile is mode $(stat -L -c %a -- "$outfile") and cannot be made 0600: the image would let others read the JWEs; make its file system keep modes (a vfat /boot or ESP: mount it with umask=0077)"
            return 1
        fi
    fi
    fdekit_arm_exit_check
}

# After dracut wrote the image: still 0600? Chained before dracut's own
# EXIT trap, whose exit status it sets (1 when the image is not private).
fdekit_exit_check() {
    local rc=$?
    [[ $rc == 0 && $outfile && -e $outfile ]] || return "$rc"
    fdekit_image_mode_bad "$outfile" || return 0
    chmod 0600 -- "$outfile" 2> /dev/null
    fdekit_image_mode_bad "$outfile" || return 0
    dfatal "fdekit-opal: $outfile was written mode $(stat -L -c %a -- "$outfile") and cannot be made 0600: the image lets others read the JWEs; remove it, make its file system keep modes (a vfat /boot or ESP: mount it with umask=0077) and build it again"
    return 1
}

fdekit_arm_exit_check() {
    local prev
    prev=$(trap -p EXIT)
    [[ $prev == *fdekit_exit_check* ]] && return 0
    if [[ $prev ]]; then
        # "trap -- 'COMMAND' EXIT", quoted by bash itself
        eval "set -- $prev"
        # shellcheck disable=SC2064 # the command as it is now
        trap "fdekit_exit_check; $3" EXIT
    else
        trap 'fdekit_exit_check; exit $?' EXIT
    fi
}

fdekit_uses() {
    [[ " $FDEKIT_PINS " == *" $1 "* ]]
}

# called by dracut
check() {
    [[ -s ${FDEKIT_OPALTAB:-/etc/fdekit/opaltab} ]] || return 1
    if [[ $FDEKIT_OPALCTL ]]; then
        [[ -x $FDEKIT_OPALCTL ]] || return 1
    else
        PATH="$PATH:/usr/local/sbin" require_binaries opalctl || return 1
    fi
    # A bad table does not leave the module out (the image would boot
    # without it): installkernel fails the build, naming the bad entries.
    fdekit_scan || return 0
    if [[ $FDEKIT_PINS ]]; then
        require_binaries clevis clevis-decrypt jose bash || return 1
    fi
    return 0
}

# called by dracut
depends() {
    fdekit_scan || return 1
    fdekit_uses tang && echo network
    # The prompt, where systemd runs the initramfs: its password agents.
    dracut_module_included systemd && echo systemd-ask-password
    return 0
}

# called by dracut
installkernel() {
    fdekit_scan || return 1
    hostonly='' instmods nvme nvme_tcp
    if fdekit_uses tpm2; then
        hostonly='' instmods =drivers/char/tpm
    fi
    return 0
}

# called by dracut
install() {
    local f pin net=
    if ! fdekit_scan; then
        # installkernel fails the build (dracut ignores what install
        # returns); without it (--no-kernel), fail here.
        if [[ $no_kernel == yes ]]; then
            dfatal "fdekit-opal: $FDEKIT_OPALTAB cannot go into the initramfs (above)"
            exit 1
        fi
        return 1
    fi
    # Before anything secret goes in (dracut ignores install's status).
    fdekit_image_private || exit 1
    # The boot would say it and use 120 s: fail here instead.
    if [[ ${FDEKIT_TIMEOUT:-} && ! ($FDEKIT_TIMEOUT =~ ^[0-9]{1,5}$ && 10#$FDEKIT_TIMEOUT -ge 1 && 10#$FDEKIT_TIMEOUT -le 86400) ]]; then
        dfatal "fdekit-opal: FDEKIT_TIMEOUT=$FDEKIT_TIMEOUT: use 1 to 86400 seconds"
        exit 1
    fi

    inst_binary "$(fdekit_opalctl)" /usr/sbin/opalctl
    inst_simple "$fdekit_boot_table" /etc/fdekit/opaltab
    for f in $FDEKIT_JWES $FDEKIT_KEYFILES; do
        inst_simple "$f"
    done
    [[ $FDEKIT_KEYFILES ]] &&
        dwarn "fdekit-opal: the initramfs holds the key file(s) $FDEKIT_KEYFILES in clear (cleartext-key-on-boot)"

    if [[ $FDEKIT_PINS ]]; then
        inst_multiple clevis clevis-decrypt jose bash cat
        for pin in $FDEKIT_PINS; do
            inst_multiple "clevis-decrypt-$pin" || return 1
            case $pin in
                tang)
                    # http:// by IP address: no CA bundle, no resolver.
                    inst_multiple curl
                    ;;
                tpm2)
                    # shellcheck disable=SC2154 # from fdekit-boot-functions
                    inst_multiple $fdekit_tpm2_tools mktemp || return 1
                    inst_multiple -o tpm2_pcrread
                    inst_libdir_file "libtss2-tcti-device.so*"
                    ;;
            esac
        done
    fi

    # The network modules that can bring the network up for Tang, when
    # network-legacy's ifup is not there: fdekit-opal-unlock starts them.
    if fdekit_uses tang; then
        for f in network-manager systemd-networkd; do
            dracut_module_included "$f" && net="$net $f"
        done
    fi
    mkdir -p "${initdir}/etc/fdekit"
    {
        echo "FDEKIT_PINS=\"$FDEKIT_PINS\""
        echo "FDEKIT_TIMEOUT=\"${FDEKIT_TIMEOUT:-}\""
        echo "FDEKIT_NET=\"${net# }\""
    } > "${initdir}/etc/fdekit/initramfs.conf"

    inst_script "$moddir/fdekit-opal-unlock.sh" /sbin/fdekit-opal-unlock
    inst_script "$moddir/fdekit-opal-plymouth-askpass.sh" /usr/lib/fdekit/plymouth-askpass
    if dracut_module_included systemd; then
        inst_multiple systemd-ask-password
        inst_script "$moddir/fdekit-opal-ask-password.sh" /usr/lib/fdekit/ask-password
    fi
    if fdekit_uses tang; then
        # Before udev starts, after network-legacy's net-genrules (60).
        inst_hook pre-udev 65 "$moddir/fdekit-opal-genrules.sh"
        inst_multiple ip setsid sort
        [[ $net == *systemd-networkd* ]] && inst_multiple -o networkctl
    fi
    inst_hook initqueue/settled 40 "$moddir/fdekit-opal-settled.sh"
    inst_hook initqueue/online 40 "$moddir/fdekit-opal-online.sh"
    inst_hook initqueue/timeout 40 "$moddir/fdekit-opal-timeout.sh"
    inst_hook initqueue/finished 40 "$moddir/fdekit-opal-finished.sh"
    inst_multiple mkdir rm rmdir sleep
    dracut_need_initqueue
}
