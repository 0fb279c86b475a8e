#!/bin/sh
# emergency and shutdown-emergency hook (sourced; also with rd.shell=0):
# when dracut gives up, list the systemd password requests still open. A
# request left behind (/run/systemd/ask-password/ask.*) stops
# dracut-initqueue's timeout counter: the boot test wants none here.
fdekit_test_asks=
for fdekit_test_a in /run/systemd/ask-password/ask.*; do
    [ -e "$fdekit_test_a" ] && fdekit_test_asks="$fdekit_test_asks ${fdekit_test_a##*/}"
done
echo "fdekit-test: emergency hook (${hook:-?}): ask-password requests:${fdekit_test_asks:- none}" >/dev/console
unset fdekit_test_a fdekit_test_asks
