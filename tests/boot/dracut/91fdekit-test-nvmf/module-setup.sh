#!/bin/bash
# Test only: the boot test's drive, a sedsim NVMe/TCP target on the host,
# served on a NIC of its own (a storage-only network). A udev rule gives that
# NIC, found by its MAC address, a static address as soon as it appears (so
# that it is configured before anything else looks at it, fdekit's own
# network setup included), then queues the connection. No other interface is
# touched: the NIC that reaches Tang is left to fdekit. Kernel command line:
#   fdekit.test.storage=MAC,ADDR/PREFIX  the storage NIC and its address
#   fdekit.test.nvmf=ADDR,PORT,NQN       the target, reached through it
# Without fdekit.test.storage the drive is connected from initqueue/online,
# through the network fdekit brought up.
#
# When dracut gives up (emergency_shell, also with rd.shell=0, sources the
# emergency hooks; systemd's emergency.service the shutdown-emergency ones
# then), a line lists the systemd password requests still open:
#   fdekit-test: emergency hook (HOOK): ask-password requests: none|ask.*...
# fdekit.test.old-askpass=1 replaces fdekit's askpass by one that behaves as
# before its fix (old-ask-password.sh), to show what the boot test catches.

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    return 0
}

# called by dracut
installkernel() {
    hostonly='' instmods nvme_tcp
}

# called by dracut
install() {
    inst_script "$moddir/nvmf-connect.sh" /sbin/fdekit-test-nvmf-connect
    inst_script "$moddir/storage-nic.sh" /sbin/fdekit-test-storage-nic
    inst_hook pre-udev 30 "$moddir/storage-rules.sh"
    inst_hook initqueue/online 20 "$moddir/nvmf-online.sh"
    inst_hook emergency 99 "$moddir/emergency-asks.sh"
    inst_hook shutdown-emergency 99 "$moddir/emergency-asks.sh"
    inst_script "$moddir/old-ask-password.sh" /usr/lib/fdekit-test/old-ask-password
    inst_hook pre-udev 31 "$moddir/old-askpass.sh"
    inst_multiple modprobe ip setsid cat
    dracut_need_initqueue
}
