#!/bin/sh
# fdekit.test.nvmf=ADDR,PORT,NQN on the kernel command line: connect it
# through /dev/nvme-fabrics and wait (10 s at most) for the namespace.
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
spec=$(getarg fdekit.test.nvmf) || exit 0
: >/tmp/fdekit-test-nvmf.done
addr=${spec%%,*}
rest=${spec#*,}
port=${rest%%,*}
nqn=${rest#*,}
modprobe nvme_tcp
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
