#!/bin/sh
# pre-udev: the storage NIC, found by its MAC, is configured from the udev
# event that adds it (before any initqueue job sees it); then the
# connection is queued.
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
if fdekit_test_storage=$(getarg fdekit.test.storage); then
    echo "SUBSYSTEM==\"net\", ACTION==\"add\", ATTR{address}==\"${fdekit_test_storage%%,*}\", RUN+=\"/sbin/fdekit-test-storage-nic \$name\", RUN+=\"/sbin/initqueue --onetime --unique --name fdekit-test-nvmf /sbin/fdekit-test-nvmf-connect\"" \
        >/etc/udev/rules.d/85-fdekit-test-storage.rules
fi
unset fdekit_test_storage
