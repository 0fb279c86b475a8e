#!/bin/sh
# Test only (fdekit.test.old-askpass=1): fdekit's askpass as it behaved
# before its fix, to show what the boot test catches: systemd-ask-password
# with no timeout of its own, and the prompt's end (opalctl's SIGTERM)
# reaching it as SIGKILL, as opalctl once ended a timed-out prompt. Its
# request (/run/systemd/ask-password/ask.*) stays behind.
setsid systemd-ask-password --id="fdekit-opal:$1" --timeout=0 --no-tty "$1" &
pid=$!
trap 'kill -KILL "$pid"; exit 1' TERM
wait "$pid"
