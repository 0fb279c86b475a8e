#!/bin/sh
# initqueue job, queued once the storage NIC is configured: connect
# fdekit.test.nvmf=ADDR,PORT,NQN through /dev/nvme-fabrics and wait (10 s at
# most) for the namespace.
# Without fdekit.test.storage (a harness that serves the drive on the one
# NIC): from initqueue/online, through the network fdekit brought up.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
[ -e /tmp/fdekit-test-nvmf.done ] && exit 0
spec=$(getarg fdekit.test.nvmf) || exit 0
addr=${spec%%,*}
rest=${spec#*,}
port=${rest%%,*}
nqn=${rest#*,}
modprobe nvme_tcp
if getarg fdekit.test.storage >/dev/null && [ ! -e /tmp/fdekit-test-storage.up ]; then
    warn "fdekit-test: the storage NIC is not configured: not connecting"
    exit 0
fi
: >/tmp/fdekit-test-nvmf.done
echo "transport=tcp,traddr=$addr,trsvcid=$port,nqn=$nqn,nr_io_queues=1" >/dev/nvme-fabrics ||
    { warn "fdekit-test: NVMe/TCP connect to $addr:$port failed"; exit 0; }
i=0
while [ $i -lt 100 ]; do
    for n in /sys/class/nvme/nvme*/nvme*n1; do
        if [ -e "$n" ] && [ -b "/dev/${n##*/}" ]; then
            echo "fdekit-test: NVMe/TCP drive connected: /dev/${n##*/}" >/dev/console
            exit 0
        fi
    done
    sleep 0.1
    i=$((i + 1))
done
warn "fdekit-test: no NVMe/TCP namespace after 10 s"
