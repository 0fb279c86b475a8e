#!/bin/bash
# fdekit-opal (dracut): unlock the Opal self-encrypting drives of the unlock
# table /etc/fdekit/opaltab in the initqueue, before the root device is
# waited for: opalctl, the table, every JWE and key file it names, Clevis
# with the pins those JWEs use, and rd.neednet=1 when one uses tang.
#
# Build-time settings (environment or a dracut.conf.d file):
#   FDEKIT_OPALTAB   the table (default /etc/fdekit/opaltab; in the
#                    initramfs always /etc/fdekit/opaltab)
#   FDEKIT_OPALCTL   the opalctl binary (default: opalctl in PATH)
#   FDEKIT_TIMEOUT   default bound in seconds on the whole unlock at boot
#   FDEKIT_BOOT_FUNCTIONS  the shared shell functions
#                    (default /usr/share/fdekit/boot-functions)
# Kernel command line: rd.fdekit.opal=0 skips the unlock,
# rd.fdekit.timeout=SEC bounds it (fdekit.opal= and fdekit.timeout= too).

fdekit_scan() {
    [[ $fdekit_scanned ]] && return "$fdekit_scanned"
    fdekit_scanned=1
    [[ -s ${FDEKIT_OPALTAB:=/etc/fdekit/opaltab} ]] || return 1
    # shellcheck disable=SC1090
    . "${FDEKIT_BOOT_FUNCTIONS:-/usr/share/fdekit/boot-functions}" || return 1
    fdekit_table_scan "$FDEKIT_OPALTAB" || return 1
    fdekit_scanned=0
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
    fdekit_scan || return 1
    if [[ $FDEKIT_PINS ]]; then
        require_binaries clevis clevis-decrypt jose bash || return 1
    fi
    return 0
}

# called by dracut
depends() {
    fdekit_scan || return 1
    fdekit_uses tang && echo network
    return 0
}

# called by dracut
installkernel() {
    hostonly='' instmods nvme nvme_tcp
    fdekit_scan || return 1
    if fdekit_uses tpm2; then
        hostonly='' instmods =drivers/char/tpm
    fi
    return 0
}

# called by dracut
install() {
    fdekit_scan || return 1
    local f pin

    inst_binary "${FDEKIT_OPALCTL:-$(PATH="$PATH:/usr/local/sbin" find_binary opalctl)}" /usr/sbin/opalctl
    inst_simple "$FDEKIT_OPALTAB" /etc/fdekit/opaltab
    for f in $FDEKIT_JWES $FDEKIT_KEYFILES; do
        inst_simple "$f"
    done
    [[ $FDEKIT_KEYFILES ]] &&
        dwarn "fdekit-opal: the initramfs holds the key file(s) $FDEKIT_KEYFILES: keep it readable by root only"

    if [[ $FDEKIT_PINS ]]; then
        inst_multiple clevis clevis-decrypt jose bash cat
        for pin in $FDEKIT_PINS; do
            inst_multiple "clevis-decrypt-$pin" || return 1
            case $pin in
                tang)
                    # http:// by IP address: no CA bundle, no resolver.
                    inst_multiple curl
                    echo "rd.neednet=1" > "${initdir}/etc/cmdline.d/90fdekit-opal.conf"
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

    mkdir -p "${initdir}/etc/fdekit"
    {
        echo "FDEKIT_PINS=\"$FDEKIT_PINS\""
        echo "FDEKIT_TIMEOUT=\"${FDEKIT_TIMEOUT:-}\""
    } > "${initdir}/etc/fdekit/initramfs.conf"

    inst_script "$moddir/fdekit-opal-unlock.sh" /sbin/fdekit-opal-unlock
    inst_script "$moddir/fdekit-opal-plymouth-askpass.sh" /usr/lib/fdekit/plymouth-askpass
    inst_hook initqueue/settled 40 "$moddir/fdekit-opal-settled.sh"
    inst_hook initqueue/online 40 "$moddir/fdekit-opal-online.sh"
    inst_multiple mkdir rm sleep
    dracut_need_initqueue
}
