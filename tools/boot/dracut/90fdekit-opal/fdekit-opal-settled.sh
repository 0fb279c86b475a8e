#!/bin/sh
# initqueue/settled: udev is idle; unlock unless the network is still needed.
[ -e /tmp/fdekit-opal.done ] || /sbin/fdekit-opal-unlock settled
