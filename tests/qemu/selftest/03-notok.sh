#!/bin/sh
. /usr/share/fdekit/guest/lib.sh
plan 1
not_ok "deliberate failure"
done_testing
