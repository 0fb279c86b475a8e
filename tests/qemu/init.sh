#!/bin/sh
# /init of the test guest: mount the pseudo file systems, run the guest
# scripts listed in /etc/fdekit-run.list in order, power off.
# Script stdout (TAP) goes to the harness channel on /dev/ttyS1, stderr and
# the kernel log to the console on /dev/ttyS0. Markers starting with "#@"
# tell the harness where each script begins and ends.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TMPDIR=/tmp
# No udev in the guest: libdevmapper creates /dev/mapper nodes itself.
export DM_DISABLE_UDEV=1

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /dev/mapper
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /run/cryptsetup /run/lock
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
modprobe configfs 2>/dev/null
# virtio transport and disks (modules on 6.1); nothing binds virtio-crypto.
modprobe -a virtio_pci virtio_blk 2>/dev/null
mount -t configfs configfs /sys/kernel/config 2>/dev/null

# The first console line shares a line with the firmware's last words.
echo >/dev/console
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1

echo "#@guest $(uname -r)" >&3
# The harness's self-test only: an untainted kernel crash before any script.
if grep -qw fdekit.selftest_crash /proc/cmdline; then
	echo c >/proc/sysrq-trigger
fi
while read -r name; do
	[ -n "$name" ] || continue
	echo "#@begin $name" >&3
	(cd /tmp && exec sh "/usr/share/fdekit/guest/$name") </dev/null >&3 2>/dev/console
	echo "#@end $name $?" >&3
done </etc/fdekit-run.list
echo "#@alldone" >&3
sync
poweroff -f
