#!/bin/bash
# xts-offload (dracut): a root file system on dm-crypt (aes-xts-plain64)
# that runs on the crypto engine from its first block. When
# /etc/fdekit/xts-offload.conf says INITRAMFS=yes, the image carries
# xts_offload and its virtio-crypto engine xts_offload_virtio (as DKMS built
# them for the image's kernel), loads them in the pre-udev hook (before udev
# finds the disks, so before any crypt mapping is opened), and blacklists
# the in-kernel virtio_crypto driver, which matches the same device.
# Without the file or with INITRAMFS=no the module is left out; with
# INITRAMFS=yes and no xts_offload_virtio for the kernel, the build fails.
# XTS_OFFLOAD_CONF names another settings file (tests).

xts_offload_wanted() {
    local INITRAMFS=
    local conf=${XTS_OFFLOAD_CONF:-/etc/fdekit/xts-offload.conf}
    # shellcheck disable=SC1090 # the admin's settings
    [[ -r $conf ]] && . "$conf"
    case $INITRAMFS in
        yes) return 0 ;;
        "" | no) return 1 ;;
        *)
            derror "xts-offload: $conf: INITRAMFS=$INITRAMFS: yes or no"
            return 2
            ;;
    esac
}

# called by dracut
check() {
    xts_offload_wanted
    case $? in
        0) return 0 ;;
        1) return 255 ;;
        *) return 1 ;;
    esac
}

# called by dracut
depends() {
    return 0
}

# called by dracut
installkernel() {
    local m
    for m in xts_offload xts_offload_virtio; do
        if ! modinfo -k "$kernel" -n "$m" > /dev/null 2>&1; then
            derror "xts-offload: INITRAMFS=yes, but $m is not built for $kernel: install linux-headers-$kernel and run 'dkms autoinstall -k $kernel'"
            return 1
        fi
    done
    # The kernel's own xts(aes), the core's fallback, loaded before the
    # core (see install).
    hostonly='' instmods virtio_pci xts_offload xts_offload_virtio aesni_intel xts aes
}

# called by dracut
install() {
    # The core's self-test asks for its fallback; with no xts(aes) yet the
    # crypto API runs modprobe crypto-xts(aes), which names xts_offload
    # itself while it loads (a hang on 6.1): the softdep loads the kernel's
    # own first.
    local m fallback=""
    for m in aesni_intel xts; do
        modinfo -k "$kernel" -n "$m" > /dev/null 2>&1 && fallback+=" $m"
    done
    mkdir -p "$initdir/etc/modprobe.d"
    {
        echo "# xts-offload (initramfs): xts_offload_virtio owns the virtio-crypto device,"
        echo "# and the kernel's own xts(aes) is there before xts_offload."
        echo "blacklist virtio_crypto"
        [[ $fallback ]] && echo "softdep xts_offload pre:$fallback"
    } > "$initdir/etc/modprobe.d/xts-offload-initramfs.conf"
    inst_hook pre-udev 30 "$moddir/xts-offload-load.sh"
}
