#!/bin/sh
# initqueue/online: an interface came up; Tang may be reachable now.
[ -e /tmp/fdekit-opal.done ] || /sbin/fdekit-opal-unlock online
