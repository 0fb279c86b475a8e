#!/bin/sh
# initqueue/settled: udev is idle; unlock when the network is not needed,
# is up, cannot come up, or at the deadline.
[ -e /run/fdekit-opal/done ] || /sbin/fdekit-opal-unlock settled
