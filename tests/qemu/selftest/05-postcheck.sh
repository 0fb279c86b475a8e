#!/bin/sh
# harness: disk probe 1M
. /usr/share/fdekit/guest/lib.sh
plan 3
dev=$(disk_by_serial probe)
result "declared disk is attached" $?
postcheck "host check that passes" pass @disk:probe
postcheck "host check that fails" fail @disk:probe
done_testing
