#!/bin/sh
# fdekit-opal-unlock STAGE: run `opalctl unlock-all` once, from the
# initqueue. STAGE is settled (udev idle) or online (an interface is up).
# When a JWE uses the tang pin, the settled calls wait for the network, but
# only until the deadline (rd.fdekit.timeout, counted from the first call):
# then the unlock runs anyway and the table's fallback applies.
type getarg >/dev/null 2>&1 || . /lib/dracut-lib.sh

done_flag=/tmp/fdekit-opal.done
start_file=/tmp/fdekit-opal.start
table=/etc/fdekit/opaltab
FDEKIT_PINS=
FDEKIT_TIMEOUT=
[ -r /etc/fdekit/initramfs.conf ] && . /etc/fdekit/initramfs.conf
[ -e "$done_flag" ] && exit 0
[ -s "$table" ] || { : >"$done_flag"; exit 0; }

if ! getargbool 1 rd.fdekit.opal -d fdekit.opal; then
    info "fdekit: Opal unlock skipped (rd.fdekit.opal=0)"
    : >"$done_flag"
    exit 0
fi
t=$(getarg rd.fdekit.timeout -d fdekit.timeout) && FDEKIT_TIMEOUT=$t
case $FDEKIT_TIMEOUT in
    "" | *[!0-9]*) FDEKIT_TIMEOUT=120 ;;
esac

read -r now _ </proc/uptime
now=${now%%.*}
[ -e "$start_file" ] || echo "$now" >"$start_file"
read -r start <"$start_file"
left=$((start + FDEKIT_TIMEOUT - now))

case " $FDEKIT_PINS " in
    *" tang "*)
        if [ "$1" != online ] && [ "$left" -gt 0 ]; then
            up=
            for f in /tmp/net.*.did-setup; do
                [ -e "$f" ] && up=1
            done
            [ -n "$up" ] || exit 0
        fi
        ;;
esac

# At least a few seconds for a prompt fallback when the network never came.
[ "$left" -ge 5 ] || left=5
: >"$done_flag"

set -- unlock-all --table "$table" --deadline "$left"
if [ -x /bin/plymouth ] && plymouth --ping 2>/dev/null; then
    set -- "$@" --askpass /usr/lib/fdekit/plymouth-askpass
fi
info "fdekit: unlocking Opal drives (bound ${left}s)"
/usr/sbin/opalctl "$@"
rc=$?
case $rc in
    0) ;;
    11) warn "fdekit: some Opal drives of $table stay locked (opalctl unlock-all exit 11)" ;;
    *) warn "fdekit: opalctl unlock-all failed (exit $rc)" ;;
esac
# The re-read partitions come back as udev events; the initqueue goes on
# and finds the root device.
exit 0
