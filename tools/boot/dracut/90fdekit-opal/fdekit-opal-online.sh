#!/bin/sh
# initqueue/online: interface $1 came up; Tang may be reachable now (and
# after the unlock, an interface brought up for Tang goes down again).
/sbin/fdekit-opal-unlock online "$1"
