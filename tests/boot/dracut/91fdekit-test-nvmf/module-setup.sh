#!/bin/bash
# Test only: connect the boot test's NVMe/TCP drive once the network is up,
# before fdekit-opal's online hook (priority 20 < 40).

# called by dracut
check() {
    return 255
}

# called by dracut
depends() {
    echo network
    return 0
}

# called by dracut
installkernel() {
    hostonly='' instmods nvme_tcp
}

# called by dracut
install() {
    inst_script "$moddir/nvmf-connect.sh" /sbin/fdekit-test-nvmf-connect
    inst_hook initqueue/online 20 "$moddir/nvmf-online.sh"
    inst_multiple modprobe
}
