#!/bin/sh
# opalctl unlock-all --askpass: ask through systemd's password agents
# (plymouth, the console agent, systemd-tty-ask-password-agent). The prompt
# is the argument; the passphrase goes to standard output. No timeout of its
# own (opalctl bounds the prompt with --prompt-timeout and ends this with
# SIGTERM when it no longer needs an answer), never a cached passphrase (a
# wrong key costs one of the drive's tries), never the terminal.
exec systemd-ask-password --id="fdekit-opal:$1" --timeout=0 --no-tty "$1"
