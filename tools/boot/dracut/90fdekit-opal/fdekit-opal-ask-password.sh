#!/bin/sh
# opalctl unlock-all --askpass: ask through systemd's password agents
# (plymouth, the console agent, systemd-tty-ask-password-agent). The prompt
# is the argument; the passphrase goes to standard output. Never a cached
# passphrase (a wrong key costs one of the drive's tries), never the
# terminal.
#
# Its timeout is what is left of the prompt's budget, less a second:
# fdekit-opal-unlock writes when that budget ends (hundredths of a second of
# /proc/uptime) to /run/fdekit-opal/prompt-end before it runs opalctl. So
# systemd-ask-password gives up and removes its request
# (/run/systemd/ask-password/ask.*) before opalctl has to kill it: a request
# left behind stops dracut-initqueue's timeout counter, and the boot hangs.
# exec: opalctl's SIGTERM (Tang answered meanwhile) reaches
# systemd-ask-password itself, which removes its request too.

# A decimal number without leading zeros (dash reads "08" as octal).
decimal() {
    _v=$1
    while :; do
        case $_v in
            0?*) _v=${_v#0} ;;
            *) break ;;
        esac
    done
    echo "$_v"
}

# opalctl's own prompt budget, when not told.
left=120
_end=
[ -r "${FDEKIT_ROOT:-}/run/fdekit-opal/prompt-end" ] &&
    read -r _end <"${FDEKIT_ROOT:-}/run/fdekit-opal/prompt-end"
case ${_end:-x} in
    *[!0-9]*) ;;
    *)
        read -r _up _ <"${FDEKIT_ROOT:-}/proc/uptime"
        _f=${_up#*.}00
        case $_up in
            *.*) _f=$(decimal "${_f%"${_f#??}"}") ;;
            *) _f=0 ;;
        esac
        _now=$(($(decimal "${_up%%.*}") * 100 + _f))
        left=$((($(decimal "$_end") - _now) / 100 - 1))
        ;;
esac
# No time left to ask: nothing asked, no request left behind.
[ "$left" -ge 1 ] || exit 1
exec systemd-ask-password --id="fdekit-opal:$1" --timeout="$left" --no-tty "$1"
