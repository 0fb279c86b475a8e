#!/bin/sh
# From udev: give the storage NIC $1 its static address (no default route).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
storage=$(getarg fdekit.test.storage) || exit 0
cidr=${storage#*,}
if ip link set dev "$1" up && ip addr add "$cidr" dev "$1"; then
    : >/tmp/fdekit-test-storage.up
    echo "fdekit-test: storage NIC $1 configured: $cidr" >/dev/kmsg
else
    echo "fdekit-test: cannot configure the storage NIC $1" >/dev/kmsg
fi
exit 0
