#!/bin/sh
. /usr/share/fdekit/guest/lib.sh
plan 2
ok "first passes"
ok "second passes"
done_testing
