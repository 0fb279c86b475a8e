#!/bin/sh
# Crashes the kernel mid-script: the harness must report the dead guest.
. /usr/share/fdekit/guest/lib.sh
plan 2
ok "before the crash"
echo c >/proc/sysrq-trigger
ok "after the crash"
done_testing
