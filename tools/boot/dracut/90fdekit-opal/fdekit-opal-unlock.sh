#!/bin/sh
# fdekit-opal-unlock STAGE [IFACE]: what the fdekit-opal dracut module does
# at boot, called from its hooks:
#
#   genrules    pre-udev: when the image holds a tang binding, nothing else
#               brings the network up and network-legacy's ifup is there, a
#               udev rule that has fdekit bring each interface up (no
#               rd.neednet: nothing in the initqueue waits for a network
#               that may never come)
#   ifup IFACE  the job that rule queues: run dracut's ifup for IFACE in the
#               background, so that a DHCP server that never answers does
#               not hold the initqueue for dhclient's 60 s
#   settled     initqueue/settled: on the first call, with NetworkManager or
#               systemd-networkd instead of ifup, start that for the wired
#               interfaces without an address (DHCP); unlock when no tang
#               binding needs the network; else when an interface is up and
#               nothing has tried yet, when every interface fdekit started
#               has failed, or at the deadline, once
#   online      initqueue/online: an interface came up: try (again)
#   timeout     initqueue/timeout: try again, once
#
# Each try runs `opalctl unlock-all --deadline LEFT`, LEFT being what is left
# of rd.fdekit.timeout (default 120 s, 1 to 86400) counted from the first of
# these calls. No try starts after that deadline, but one: when nothing has
# tried by then, the try at the deadline, with 5 s for its key attempts, so
# that the table's fallback applies. opalctl's prompt waits at most
# --prompt-timeout (120 s) more. Entries already unlocked need no key when a
# try is repeated. The unlock is done when a try unlocks everything, when
# the try at the deadline ends, at the deadline after an earlier try, or
# when opalctl fails for another reason than an entry staying locked (exit
# 11); the initqueue does not finish before that (initqueue/finished).
#
# Then what was brought up for Tang is taken down again: the NetworkManager
# or systemd-networkd that fdekit started is stopped and its configuration
# removed, and the interfaces lose their addresses and go down, unless the
# system needs them: rd.fdekit.keepnet=1 (or fdekit.keepnet=1), a network
# root (netroot), rd.neednet=1 from the command line or another module, or
# an NVMe over Fabrics controller reached through the interface.
#
# Host tests run this against a directory of their own: FDEKIT_ROOT
# prefixes every path (/sys, /proc, /run, /tmp, /etc, /lib/dracut-lib.sh),
# and the commands that change the network or ask something are variables.
# With FDEKIT_ROOT set, a command not given is `false`, never the host's.
FDEKIT_ROOT=${FDEKIT_ROOT:-}
if [ -n "$FDEKIT_ROOT" ]; then
    _cmd_ip=false _cmd_systemctl=false _cmd_networkctl=false _cmd_plymouth=false
    _cmd_opalctl=false _cmd_ifup="$FDEKIT_ROOT/sbin/ifup" _cmd_nm=false
else
    _cmd_ip=ip _cmd_systemctl=systemctl _cmd_networkctl=networkctl _cmd_plymouth=plymouth
    _cmd_opalctl=/usr/sbin/opalctl _cmd_ifup=/sbin/ifup _cmd_nm=/usr/sbin/NetworkManager
fi
FDEKIT_IP=${FDEKIT_IP:-$_cmd_ip}
FDEKIT_SYSTEMCTL=${FDEKIT_SYSTEMCTL:-$_cmd_systemctl}
FDEKIT_NETWORKCTL=${FDEKIT_NETWORKCTL:-$_cmd_networkctl}
FDEKIT_PLYMOUTH=${FDEKIT_PLYMOUTH:-$_cmd_plymouth}
FDEKIT_OPALCTL_BIN=${FDEKIT_OPALCTL_BIN:-$_cmd_opalctl}
FDEKIT_IFUP=${FDEKIT_IFUP:-$_cmd_ifup}
FDEKIT_NM=${FDEKIT_NM:-$_cmd_nm}

type getarg >/dev/null 2>&1 || . "$FDEKIT_ROOT/lib/dracut-lib.sh"

run=$FDEKIT_ROOT/run
state=$run/fdekit-opal
table=$FDEKIT_ROOT/etc/fdekit/opaltab
sysnet=$FDEKIT_ROOT/sys/class/net
tmp=$FDEKIT_ROOT/tmp
min_deadline=5
prompt_timeout=120
default_timeout=120
nm_dir=$run/NetworkManager
networkd_file=$run/systemd/network/90-fdekit-opal.network
FDEKIT_PINS=
FDEKIT_TIMEOUT=
FDEKIT_NET=
[ -r "$FDEKIT_ROOT/etc/fdekit/initramfs.conf" ] && . "$FDEKIT_ROOT/etc/fdekit/initramfs.conf"
mkdir -p "$state"

stage=$1
iface=$2

uses_tang() {
    case " $FDEKIT_PINS " in
        *" tang "*) return 0 ;;
    esac
    return 1
}

enabled() {
    [ -s "$table" ] && getargbool 1 rd.fdekit.opal -d fdekit.opal
}

# Why the network stays up after the unlock, if it does.
keep_reason() {
    if getargbool 0 rd.fdekit.keepnet -d fdekit.keepnet; then
        echo "rd.fdekit.keepnet"
    elif [ -n "$netroot" ]; then
        echo "the root is on the network"
    elif getargbool 0 rd.neednet; then
        echo "rd.neednet=1"
    else
        return 1
    fi
}

# A decimal number without its leading zeros (dash reads "08" as a bad
# octal number and aborts the script).
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

# SEC: a whole number of seconds, 1 to 86400 (opalctl's --deadline range),
# printed without leading zeros; anything else fails.
seconds() {
    case $1 in
        "" | *[!0-9]*) return 1 ;;
    esac
    _s=$(decimal "$1")
    [ "${#_s}" -le 5 ] && [ "$_s" -ge 1 ] && [ "$_s" -le 86400 ] || return 1
    echo "$_s"
}

# Uptime in hundredths of a second.
uptime_cs() {
    read -r _up _ <"$FDEKIT_ROOT/proc/uptime"
    _i=$(decimal "${_up%%.*}")
    _f=0
    case $_up in
        *.*)
            _f=${_up#*.}00
            _f=$(decimal "${_f%"${_f#??}"}")
            ;;
    esac
    echo $((_i * 100 + _f))
}

now() {
    _c=$(uptime_cs)
    echo $((_c / 100))
}

# The bound: the build's FDEKIT_TIMEOUT, the command line's rd.fdekit.timeout
# over it; a value out of range is said (once) and left out.
FDEKIT_TIMEOUT=$(seconds "$FDEKIT_TIMEOUT") || FDEKIT_TIMEOUT=$default_timeout
if _t=$(getarg rd.fdekit.timeout -d fdekit.timeout); then
    if _v=$(seconds "$_t"); then
        FDEKIT_TIMEOUT=$_v
    elif [ ! -e "$state/timeout-refused" ]; then
        : >"$state/timeout-refused"
        warn "fdekit: rd.fdekit.timeout=$_t: use 1 to 86400 seconds; the bound is ${FDEKIT_TIMEOUT}s"
    fi
fi

# Seconds left of the bound, counted from the first call.
time_left() {
    _now=$(now)
    [ -s "$state/start" ] || echo "$_now" >"$state/start"
    read -r _start <"$state/start"
    _start=$(decimal "$_start")
    echo $((_start + FDEKIT_TIMEOUT - _now))
}

# The interface the route to address $1 goes through.
route_dev() {
    # shellcheck disable=SC2046 # one word per field
    set -- $($FDEKIT_IP route get "$1" 2>/dev/null)
    while [ $# -gt 1 ]; do
        [ "$1" = dev ] && echo "$2" && return 0
        shift
    done
    return 1
}

# An NVMe over Fabrics controller is reached through interface $1 (its name
# printed): taking the interface down would cut a drive off.
carries_nvmf() {
    for _c in "$FDEKIT_ROOT"/sys/class/nvme/nvme*; do
        [ -r "$_c/transport" ] && [ -r "$_c/address" ] || continue
        read -r _tr <"$_c/transport"
        case $_tr in
            tcp | rdma) ;;
            *) continue ;;
        esac
        read -r _addr <"$_c/address"
        _tra=
        case ",$_addr," in
            *",host_iface=$1,"*) ;;
            *",traddr="*)
                _tra=${_addr#*traddr=}
                _tra=${_tra%%,*}
                [ "$(route_dev "$_tra")" = "$1" ] || continue
                ;;
            *) continue ;;
        esac
        echo "${_c##*/}"
        return 0
    done
    return 1
}

has_address() {
    [ -n "$($FDEKIT_IP -o -4 addr show dev "$1" scope global 2>/dev/null)" ]
}

# The interfaces dracut's network scripts configured, and those fdekit
# started; one name per line.
brought_up() {
    for _f in "$tmp"/net.*.up "$tmp"/net.*.did-setup "$state"/ifup.* "$state"/net.*; do
        [ -e "$_f" ] || continue
        _n=${_f##*/}
        case $_n in
            ifup.*.end) continue ;;
            ifup.*) _n=${_n#ifup.} ;;
            net.*) _n=${_n#net.} && _n=${_n%.up} && _n=${_n%.did-setup} ;;
        esac
        # (net.MAC.up files name no interface)
        [ -d "$sysnet/$_n" ] && [ "$_n" != lo ] && echo "$_n"
    done | sort -u
}

# Wired interfaces (Ethernet, a device behind them, not wireless) without a
# global IPv4 address: those fdekit may bring up.
bare_interfaces() {
    for _p in "$sysnet"/*; do
        _n=${_p##*/}
        [ "$_n" != lo ] && [ -e "$_p/device" ] && [ ! -e "$_p/wireless" ] &&
            [ ! -e "$_p/phy80211" ] && [ -r "$_p/type" ] || continue
        read -r _ty <"$_p/type"
        [ "$_ty" = 1 ] || continue
        has_address "$_n" || echo "$_n"
    done
}

# NetworkManager for the interfaces $*: a profile each (DHCP), the others
# left unmanaged, no automatic profiles. Where systemd runs the initramfs,
# through dracut's nm-initrd.service (its condition: the neednet flag);
# otherwise in the background, as dracut's nm-run.sh runs it, but without
# holding the initqueue.
nm_start() {
    mkdir -p "$nm_dir/system-connections" "$nm_dir/conf.d"
    _um=
    for _if in "$@"; do
        (
            umask 077
            printf '[connection]\nid=fdekit-opal-%s\ntype=ethernet\ninterface-name=%s\nautoconnect=true\n\n[ipv4]\nmethod=auto\n\n[ipv6]\nmethod=ignore\n' \
                "$_if" "$_if" >"$nm_dir/system-connections/fdekit-opal-$_if.nmconnection"
        )
        _um="$_um${_um:+,}except:interface-name:$_if"
    done
    printf '[main]\nno-auto-default=*\n\n[keyfile]\nunmanaged-devices=%s\n' "$_um" \
        >"$nm_dir/conf.d/90-fdekit-opal.conf"
    if [ -d "$run/systemd/system" ]; then
        mkdir -p "$nm_dir/initrd"
        : >"$nm_dir/initrd/neednet"
        : >"$state/nm-neednet"
        $FDEKIT_SYSTEMCTL --no-block start nm-initrd.service && : >"$state/nm-started"
    else
        # A session of its own: net_stop ends it and its DHCP client together.
        NM_CONFIG_ENABLE_TAG=initrd setsid "$FDEKIT_NM" --configure-and-quit=initrd --no-daemon \
            </dev/null >/dev/null 2>&1 &
        echo $! >"$state/nm-pid"
    fi
}

# systemd-networkd for the interfaces $*: one .network file (DHCP), then
# started, or told to read it when it already runs (dracut enables it).
networkd_start() {
    mkdir -p "${networkd_file%/*}"
    printf '[Match]\nName=%s\n\n[Network]\nDHCP=ipv4\nLinkLocalAddressing=no\nIPv6AcceptRA=no\n' \
        "$*" >"$networkd_file"
    if $FDEKIT_SYSTEMCTL -q is-active systemd-networkd.service; then
        $FDEKIT_NETWORKCTL reload 2>/dev/null ||
            $FDEKIT_SYSTEMCTL --no-block restart systemd-networkd.service
    else
        $FDEKIT_SYSTEMCTL -q is-active systemd-networkd.socket || : >"$state/networkd-socket-started"
        $FDEKIT_SYSTEMCTL --no-block start systemd-networkd.service &&
            : >"$state/networkd-started"
    fi
}

# Who else configures the network: said, nothing started.
network_configured_elsewhere() {
    if [ -n "$netroot" ]; then
        echo "the root is on the network"
    elif getargbool 0 rd.neednet; then
        echo "rd.neednet=1"
    elif [ "$1" = network-manager ] && [ -e "$nm_dir/initrd/neednet" ]; then
        echo "dracut starts NetworkManager"
    elif [ "$1" = systemd-networkd ]; then
        for _f in "$run"/systemd/network/*.network "$FDEKIT_ROOT"/etc/systemd/network/*.network; do
            [ -e "$_f" ] && [ "$_f" != "$networkd_file" ] || continue
            echo "systemd-networkd has ${_f#"$FDEKIT_ROOT"}"
            return 0
        done
        return 1
    else
        return 1
    fi
}

# From the first settled call: with NetworkManager or systemd-networkd in
# the image instead of network-legacy's ifup (whose udev rule genrules
# wrote), bring up the wired interfaces without an address, once.
net_start() {
    [ ! -e "$state/net-step" ] || return 0
    : >"$state/net-step"
    [ -x "$FDEKIT_IFUP" ] && return 0
    case " $FDEKIT_NET " in
        *" network-manager "*) _how=network-manager ;;
        *" systemd-networkd "*) _how=systemd-networkd ;;
        *)
            warn "fdekit: a tang binding needs the network, and the image has no network module fdekit can start (network-legacy, network-manager, systemd-networkd)"
            return 0
            ;;
    esac
    if _why=$(network_configured_elsewhere "$_how"); then
        info "fdekit: the network is brought up by others ($_why)"
        return 0
    fi
    _ifs=$(bare_interfaces)
    if [ -z "$_ifs" ]; then
        info "fdekit: no wired interface without an address to bring up for Tang"
        return 0
    fi
    for _if in $_ifs; do
        : >"$state/net.$_if"
    done
    # shellcheck disable=SC2086 # one interface per word
    info "fdekit: bringing $(echo $_ifs) up for Tang ($_how)"
    echo "$_how" >"$state/net-how"
    # shellcheck disable=SC2086 # one interface per word
    case $_how in
        network-manager) nm_start $_ifs ;;
        systemd-networkd) networkd_start $_ifs ;;
    esac
}

# Stop what net_start started and remove what it wrote.
net_stop() {
    [ -s "$state/net-how" ] && [ ! -e "$state/net-stopped" ] || return 0
    : >"$state/net-stopped"
    read -r _how <"$state/net-how"
    case $_how in
        network-manager)
            if [ -e "$state/nm-started" ]; then
                $FDEKIT_SYSTEMCTL stop nm-initrd.service
            elif [ -s "$state/nm-pid" ]; then
                read -r _pid <"$state/nm-pid" && kill -TERM "-$_pid" 2>/dev/null
            fi
            rm -f "$nm_dir"/system-connections/fdekit-opal-*.nmconnection \
                "$nm_dir/conf.d/90-fdekit-opal.conf"
            [ -e "$state/nm-neednet" ] && rm -f "$nm_dir/initrd/neednet"
            ;;
        systemd-networkd)
            rm -f "$networkd_file"
            if [ -e "$state/networkd-started" ]; then
                if [ -e "$state/networkd-socket-started" ]; then
                    $FDEKIT_SYSTEMCTL stop systemd-networkd.socket systemd-networkd.service
                else
                    $FDEKIT_SYSTEMCTL stop systemd-networkd.service
                fi
            else
                $FDEKIT_NETWORKCTL reload 2>/dev/null ||
                    $FDEKIT_SYSTEMCTL restart systemd-networkd.service
            fi
            ;;
    esac
}

# Take down what was brought up for Tang ($1: only that interface).
take_down() {
    uses_tang || return 0
    if _why=$(keep_reason); then
        [ -e "$state/kept" ] || info "fdekit: the network stays up ($_why)"
        : >"$state/kept"
        return 0
    fi
    for _f in "$state"/ifup.*; do
        case $_f in
            *.end) continue ;;
        esac
        [ -e "$_f" ] && [ ! -e "$_f.end" ] || continue
        read -r _pid <"$_f" && kill -TERM "-$_pid" 2>/dev/null
    done
    net_stop
    for _if in $(brought_up); do
        if [ -n "$1" ]; then
            # It came up (again) after the unlock.
            [ "$1" = "$_if" ] && has_address "$_if" || continue
        else
            [ ! -e "$state/down.$_if" ] || continue
        fi
        if _c=$(carries_nvmf "$_if"); then
            [ -e "$state/kept.$_if" ] ||
                info "fdekit: $_if stays up: the NVMe over Fabrics controller $_c is reached through it"
            : >"$state/kept.$_if"
            continue
        fi
        if [ -s "$tmp/dhclient.$_if.pid" ]; then
            read -r _pid <"$tmp/dhclient.$_if.pid" && kill -TERM "$_pid" 2>/dev/null
        fi
        $FDEKIT_IP addr flush dev "$_if" 2>/dev/null
        $FDEKIT_IP link set dev "$_if" down 2>/dev/null
        : >"$state/down.$_if"
        info "fdekit: $_if taken down (brought up for Tang only)"
    done
}

finish() {
    : >"$state/done"
    take_down
}

# The prompt: through systemd's password agents where systemd runs the
# initramfs (dracut-initqueue.service has no terminal; plymouth answers
# through its agent), else through plymouth when it runs, else opalctl's own
# prompt on the console.
askpass() {
    if [ -d "$run/systemd/system" ] && [ -x "$FDEKIT_ROOT/usr/lib/fdekit/ask-password" ]; then
        echo "$FDEKIT_ROOT/usr/lib/fdekit/ask-password"
    elif $FDEKIT_PLYMOUTH --ping 2>/dev/null; then
        echo "$FDEKIT_ROOT/usr/lib/fdekit/plymouth-askpass"
    fi
}

# One try. $1 = seconds left, $2 = why, $3 = last (no try after this one)
# or deadline (the try at the deadline: it alone starts with nothing left).
try_unlock() {
    if [ "$1" -le 0 ] && [ "$3" != deadline ]; then
        return 0
    fi
    mkdir "$state/busy" 2>/dev/null || return 0
    rm -f "$state/pending"
    _d=$1
    _why=$2
    _last=$3
    # The remaining time; at the deadline, a few seconds for a key attempt.
    [ "$_d" -ge 1 ] || _d=$min_deadline
    [ "$_d" -gt "$min_deadline" ] || _last=1
    _n=0
    [ -s "$state/tries" ] && read -r _n <"$state/tries"
    _n=$(($(decimal "$_n") + 1))
    echo "$_n" >"$state/tries"
    # --state-dir: what was unlocked, for the running system
    # (fdekit-opal-sleep-guard.service); /run is handed over at switch_root.
    set -- unlock-all --table "$table" --deadline "$_d" --prompt-timeout "$prompt_timeout" \
        --state-dir "$run/fdekit"
    _ap=$(askpass)
    [ -n "$_ap" ] && set -- "$@" --askpass "$_ap"
    info "fdekit: unlocking Opal drives (try $_n: $_why; bound ${_d}s)"
    # When the prompts' budget ends (opalctl: its deadline, then
    # --prompt-timeout), in hundredths of a second of uptime, for the
    # askpass, which gets only the prompt text from opalctl (and no
    # environment of ours): it times out before opalctl has to kill it.
    echo $(($(uptime_cs) + (_d + prompt_timeout) * 100)) >"$state/prompt-end"
    # Its lines ("root: /dev/nvme0n1 range 1 unlocked (...)") on the
    # console also where systemd runs the initqueue (stderr: journal+console).
    "$FDEKIT_OPALCTL_BIN" "$@" >&2
    _rc=$?
    rmdir "$state/busy"
    case $_rc in
        0) finish ;;
        11)
            if [ -n "$_last" ]; then
                warn "fdekit: some Opal drives of ${table#"$FDEKIT_ROOT"} stay locked (opalctl unlock-all exit 11)"
                finish
            else
                info "fdekit: some Opal drives are still locked: tried again when an interface comes up, or at the initqueue timeout, until ${FDEKIT_TIMEOUT}s"
            fi
            ;;
        *)
            warn "fdekit: opalctl unlock-all failed (exit $_rc)"
            finish
            ;;
    esac
    # The re-read partitions come back as udev events; the initqueue goes
    # on and finds the root device.
    return 0
}

# A udev rule bringing up the interfaces for Tang, when nobody else does.
genrules() {
    uses_tang && enabled || return 0
    time_left >/dev/null
    # network-legacy's ifup; with NetworkManager or systemd-networkd,
    # net_start at the first settled call.
    [ -x "$FDEKIT_IFUP" ] || return 0
    # The network is needed by others: dracut brings it up and waits for it.
    [ -n "$netroot" ] && return 0
    getargbool 0 rd.neednet && return 0
    # ip= naming interfaces: dracut's rules bring them up.
    [ -s "$FDEKIT_ROOT/etc/udev/rules.d/90-net.rules" ] && return 0
    # shellcheck disable=SC2016 # $name is udev's
    echo 'SUBSYSTEM=="net", ACTION=="add", KERNEL!="lo", ENV{DEVTYPE}!="wlan|wwan", RUN+="/sbin/initqueue --onetime --unique --name fdekit-opal-ifup-$name /sbin/fdekit-opal-unlock ifup $name"' \
        >"$FDEKIT_ROOT/etc/udev/rules.d/91-fdekit-opal-net.rules"
}

# Start ifup IFACE in the background, once.
start_ifup() {
    [ -n "$iface" ] && [ ! -e "$state/ifup.$iface" ] || return 0
    # Configured by someone else (firmware, another module): left alone.
    if has_address "$iface"; then
        info "fdekit: $iface already has an address: left as it is"
        return 0
    fi
    info "fdekit: bringing $iface up for Tang"
    # A session of its own: take_down stops it and dhclient together.
    FDEKIT_OPAL_BACKGROUND=1 setsid sh -c '"$3" "$1"; : >"$2"' fdekit-opal-ifup \
        "$iface" "$state/ifup.$iface.end" "$FDEKIT_IFUP" </dev/null &
    echo $! >"$state/ifup.$iface"
}

# Every interface fdekit started has ended without coming up.
ifups_failed() {
    _any=
    for _f in "$state"/ifup.*; do
        case $_f in
            *.end) continue ;;
        esac
        [ -e "$_f" ] || continue
        [ -e "$_f.end" ] || return 1
        [ -e "$tmp/net.${_f##*/ifup.}.up" ] && return 1
        _any=1
    done
    [ -n "$_any" ]
}

# dracut's ifup configured an interface, or one that NetworkManager or
# systemd-networkd brings up for fdekit has its address.
network_up() {
    for _f in "$tmp"/net.*.did-setup; do
        [ -e "$_f" ] && return 0
    done
    for _f in "$state"/net.*; do
        [ -e "$_f" ] && has_address "${_f##*/net.}" && return 0
    done
    return 1
}

if [ -e "$state/done" ]; then
    # An interface that comes up after the unlock goes down again.
    [ "$stage" = online ] && take_down "$iface"
    exit 0
fi
if ! enabled; then
    [ -s "$table" ] && info "fdekit: Opal unlock skipped (rd.fdekit.opal=0)"
    : >"$state/done"
    exit 0
fi

case $stage in
    genrules)
        genrules
        exit 0
        ;;
    ifup)
        start_ifup
        exit 0
        ;;
esac

left=$(time_left)
tries=0
[ -s "$state/tries" ] && read -r tries <"$state/tries"
tries=$(decimal "$tries")

if ! uses_tang; then
    # No network to wait for: one try, with the whole bound.
    try_unlock "$left" "no network needed" deadline
    exit 0
fi

case $stage in
    online)
        # In ifup's own process (a static ip= in the background): note it;
        # the initqueue's next settled call tries.
        : >"$state/pending"
        [ -n "$FDEKIT_OPAL_BACKGROUND" ] || try_unlock "$left" "${iface:-an interface} is up"
        ;;
    timeout)
        if [ "$left" -gt 0 ] && [ ! -e "$state/timeout-tried" ]; then
            : >"$state/timeout-tried"
            try_unlock "$left" "initqueue timeout"
        fi
        ;;
    settled)
        net_start
        if [ "$left" -le 0 ]; then
            if [ "$tries" -eq 0 ]; then
                if network_up; then
                    try_unlock 0 "the network is up at the deadline (${FDEKIT_TIMEOUT}s)" deadline
                else
                    try_unlock 0 "no network after ${FDEKIT_TIMEOUT}s: the table's fallback applies" deadline
                fi
            else
                warn "fdekit: rd.fdekit.timeout (${FDEKIT_TIMEOUT}s) reached: no more tries"
                finish
            fi
        elif [ -e "$state/pending" ]; then
            try_unlock "$left" "an interface came up"
        elif [ "$tries" -eq 0 ]; then
            if network_up; then
                try_unlock "$left" "the network is up"
            elif ifups_failed; then
                try_unlock "$left" "no interface came up: the table's fallback applies"
            fi
        fi
        ;;
esac
exit 0
