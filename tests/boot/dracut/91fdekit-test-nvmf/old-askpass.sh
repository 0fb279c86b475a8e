#!/bin/sh
# pre-udev: fdekit.test.old-askpass=1 puts the old askpass
# (old-ask-password.sh) in the place of fdekit's.
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh
if getargbool 0 fdekit.test.old-askpass && [ -e /usr/lib/fdekit/ask-password ]; then
    cat /usr/lib/fdekit-test/old-ask-password >/usr/lib/fdekit/ask-password
    echo "fdekit-test: the askpass as before its fix (no timeout, SIGKILL at the prompt's end)" >/dev/console
fi
