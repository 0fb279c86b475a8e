#!/bin/sh
# initqueue/finished: the initqueue does not end before the unlock is done
# (bounded: rd.fdekit.timeout, then the prompt's own bound).
[ -e /run/fdekit-opal/done ]
