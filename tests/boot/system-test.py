#!/usr/bin/env python3
"""The whole-system test: a Debian system installed from fdekit's .debs boots
unattended from a locked Opal drive, its root on dm-crypt offloaded to
virtio-crypto; then apt purge leaves nothing behind.

1. chroot: a DIST system made with mmdebstrap from Debian's archive (systemd,
   DIST's own linux-image-amd64 and headers, initramfs-tools,
   cryptsetup-initramfs, clevis, and what fdekit's packages depend on).
2. install: fdekit's DIST packages (scripts/build-debs DIST, run first:
   build/debs/DIST/) installed in it with apt: opalctl,
   fdekit-opal-initramfs, xts-offload-dkms. DKMS builds the modules for the
   image's kernel, the packages' triggers build its initramfs. The admin's
   files are written as an admin would: /etc/crypttab (LUKS2 root, its key
   file carried in the initramfs, KEYFILE_PATTERN), /etc/fstab,
   /etc/fdekit/xts-offload.conf (INITRAMFS=yes), /etc/modprobe.d (virtio_crypto
   blacklisted).
3. bind: a sedsim drive whose locking range 1 (partition 1) will hold the
   root; a setup boot of the image's own kernel with the plain tree as root
   runs the image's opalctl bind against the drive over NVMe/TCP, sealing the
   new slot's PIN to a Tang server on the host; the table entry and JWE go to
   /etc/fdekit; update-initramfs -u in the image (chroot) builds the boot
   image with the hook.
4. image: the tree as an ext4 file system, encrypted as LUKS2
   (aes-xts-plain64) and written into range 1 (unlocked for the write with the
   Admin1 key on the host, locked after it).
5. boot: QEMU with the image's own kernel and initramfs, a virtio-crypto
   device, the drive over NVMe/TCP (power-on: locked). A unit of the test
   inside the booted system reports over the serial line: multi-user.target,
   is-system-running, root on the LUKS mapping over the Opal range,
   xts-aes-offload in /proc/crypto with the engine's counters rising during a
   write, then `apt purge` of the packages with what is left afterwards.
   The host checks that no password was asked and, after a power cycle, that
   range 1 is locked again.

--initramfs dracut (trixie): the system has dracut instead of
initramfs-tools, fdekit-opal-dracut instead of fdekit-opal-initramfs (no
xts-offload-dkms), NetworkManager as a trixie desktop or server has it (so
dracut's network-manager module brings the network up for Tang), the LUKS
root opened by systemd-cryptsetup in the initramfs (rd.luks.* on the
kernel command line, its key file added by a dracut.conf.d file). Two
boots: Tang up (unattended, key=clevis in /run/fdekit/root, nothing of the
unlock left), then Tang down (the recovery-key prompt through systemd's
password agent on the serial console, the Admin1 key typed there unlocks,
key=passphrase, saved_for_resume=no, no password request left).

Test-only pieces, each saying so: the init-premount script that connects the
drive over NVMe/TCP (tests/boot/initramfs-tools/nvmf-connect, what firmware
or an nvmf boot does on a real machine), the setup boot's init script, and
the report unit; with dracut the test's module 91fdekit-test-nvmf (the same
job) and the NetworkManager file leaving the storage NIC alone. Everything
else comes from the packages and Debian.

Output is TAP, with the time of each step.
"""

import argparse
import hashlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))

# No byte-code cache written next to the harnesses, in the source tree.
sys.dont_write_bytecode = True


def _load(name, file):
    sp = importlib.util.spec_from_file_location(name, os.path.join(HERE, file))
    mod = importlib.util.module_from_spec(sp)
    sp.loader.exec_module(mod)
    return mod


bt = _load("boot_test", "boot-test.py")
dn = _load("dracut_network", "dracut-network.py")     # listing(): an image's files
df = _load("dracut_failures", "dracut-failures.py")   # DRACUT_ARGS
SetupError, run, Server, free_port = bt.SetupError, bt.run, bt.Server, bt.free_port

SERIAL = "FDEKITSYS001"
NQN = "nqn.2026-11.org.fdekit:system-test"
R1_START = 2048                  # partition 1 = locking range 1
MARK = "FDEKIT-SYS"
ETC_MARK = {"before": "FDEKIT-ETC-BOOTED", "after": "FDEKIT-ETC-PURGED"}
MAPPING = "fdekitroot"
PACKAGES = ["opalctl", "fdekit-opal-initramfs", "xts-offload-dkms"]
# What asks a human for a secret at boot: cryptroot's askpass, opalctl's
# prompt, systemd's password agents on the console, a login prompt's
# password.
ASKED = re.compile(r"Please unlock disk|Enter passphrase|Passphrase for|Password:")
WARNED = re.compile(r"^.*(WARNING: CPU|Call Trace:|BUG:|Oops).*$", re.M)
KMSG = re.compile(r"^\[\s*(\d+)\.\d+\] (.*)$")
# The image's documentation, manual pages and translations are left out (as
# in container images): a smaller range to write and to boot from.
DPKG_EXCLUDE = ["path-exclude=/usr/share/doc/*", "path-include=/usr/share/doc/*/copyright",
                "path-exclude=/usr/share/man/*", "path-exclude=/usr/share/locale/*",
                "path-exclude=/usr/share/info/*"]
BASE = ["systemd", "systemd-sysv", "udev", "linux-image-amd64", "linux-headers-amd64",
        "initramfs-tools", "busybox", "cryptsetup-initramfs", "clevis", "kmod", "iproute2",
        "e2fsprogs", "dmsetup", "zstd",
        # systemd recommends it (mmdebstrap installs no recommends): logind,
        # which the sleep guard's inhibitor asks, needs the bus.
        "dbus"]
# --initramfs dracut: dracut and fdekit's dracut module instead; the LUKS
# root opened by systemd-cryptsetup (its own package since trixie);
# NetworkManager; no headers (no DKMS). dracut first: it conflicts with
# initramfs-tools, the kernel's first choice of an initramfs tool.
PACKAGES_DRACUT = ["opalctl", "fdekit-opal-dracut"]
BASE_DRACUT = ["dracut", "dracut-network", "network-manager", "systemd-cryptsetup"] + [
    p for p in BASE if p not in ("initramfs-tools", "busybox", "cryptsetup-initramfs",
                                 "linux-headers-amd64")]
# A password asked at boot where systemd runs the initramfs: fdekit's
# recovery-key prompt, systemd-cryptsetup's.
ASKED_DRACUT = re.compile(ASKED.pattern + "|" + bt.ASK + "|Please enter passphrase")
DEBIAN_NUM = {"bookworm": 12, "trixie": 13}
TANG_MAC = bt.TANG_MAC
STORAGE_MAC = bt.STORAGE_MAC


class Timer:
    def __init__(self):
        self.steps = []

    def __call__(self, name, fn, *a, **kw):
        start = time.monotonic()
        try:
            return fn(*a, **kw)
        finally:
            took = time.monotonic() - start
            self.steps.append((name, took))
            print(f"# step {name}: {took:.0f} s", flush=True)


def chroot(root, script, *args, timeout=1800, env=None):
    """Run a shell script in the image (a private mount and PID namespace:
    /dev bound, /proc its own), as check-debs does."""
    path = os.path.join(root, "tmp", "fdekit-step.sh")
    with open(path, "w") as f:
        f.write("#!/bin/sh\nset -eu\n" + script)
    os.chmod(path, 0o755)
    e = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root", "LC_ALL=C.UTF-8",
         "DEBIAN_FRONTEND=noninteractive"] + [f"{k}={v}" for k, v in (env or {}).items()]
    try:
        return run(["unshare", "--mount", "--pid", "--fork", f"--mount-proc={root}/proc",
                    "sh", "-c", 'mount --rbind /dev "$0/dev" && mount -t sysfs sysfs "$0/sys" '
                    '&& exec chroot "$0" "$@"', root] + e + ["/tmp/fdekit-step.sh", *args],
                   timeout=timeout).stdout.decode(errors="replace")
    finally:
        os.unlink(path)


def etc_state(root):
    """{path: description} of /etc: type, mode, link target, contents' hash."""
    out = {}
    etc = os.path.join(root, "etc")
    for d, dirs, files in os.walk(etc):
        for n in dirs + files:
            p = os.path.join(d, n)
            rel = "/" + os.path.relpath(p, root)
            st = os.lstat(p)
            if os.path.islink(p):
                out[rel] = f"l -> {os.readlink(p)}"
            elif os.path.isdir(p):
                out[rel] = f"d {st.st_mode & 0o7777:o}"
            else:
                with open(p, "rb") as f:
                    out[rel] = f"f {st.st_mode & 0o7777:o} {hashlib.sha256(f.read()).hexdigest()}"
    return out


# The booted system's /etc, printed by the report unit in the same form.
GUEST_ETC = r"""
etc_state() {
	find /etc -xdev -mindepth 1 -type d -printf "$1 %p d %m\n"
	find /etc -xdev -mindepth 1 -type l -printf "$1 %p l -> %l\n"
	find /etc -xdev -mindepth 1 -type f -printf "%m %p\n" | while read -r mode p; do
		echo "$1 $p f $mode $(sha256sum "$p" | cut -d' ' -f1)"
	done
}
"""

REPORT_SCRIPT = r"""#!/bin/sh
# Test only (fdekit's whole-system test): report from the booted system over
# the serial line; with initramfs-tools, then purge fdekit's packages and
# report what is left.
# Started by fdekit-system-test.service; the system powers off afterwards.
M=FDEKIT-SYS
say() { echo "$M $*"; }
@ETC@
dmesg -n 1
say start
say running "$(timeout 900 systemctl is-system-running --wait 2>&1)"
systemctl --failed --plain --no-legend | while read -r u rest; do
	say failed "$u"
	journalctl -b -u "$u" --no-pager -o cat | tail -n 15 | sed "s/^/FDEKIT-FAILED $u: /"
done
say multi-user "$(systemctl is-active multi-user.target)"
say root-source "$(findmnt -n -o SOURCE /)"
dm=$(basename "$(readlink -f /dev/mapper/@MAPPING@)")
say root-slaves "$(ls /sys/block/"$dm"/slaves 2>/dev/null | tr '\n' ' ')"
say root-table "$(dmsetup table @MAPPING@ | awk '{print $1, $2, $3, $4}')"
say dm-type "$(dmsetup info -c --noheadings -o uuid @MAPPING@)"
@UNLOCK@@OFFLOAD_PURGE@sync
systemctl poweroff --no-block
"""

# What the initramfs recorded of its unlock (opalctl --state-dir /run/fdekit),
# and what of it is left: processes, opalctl's curl directories, systemd
# password requests; the unlock's journal lines.
UNLOCK_REPORT = r"""for f in /run/fdekit/*; do
	[ -f "$f" ] && say "state-${f##*/}" "$(tr '\n' ' ' <"$f")"
done
say left-processes "$(cat /proc/[0-9]*/comm 2>/dev/null | grep -E '^(clevis|curl|jose|opalctl)' | sort -u | tr '\n' ' ')"
say left-curl "$(ls -d /run/fdekit-curl.* 2>/dev/null | tr '\n' ' ')"
say left-asks "$(ls -d /run/systemd/ask-password/ask.* 2>/dev/null | tr '\n' ' ')"
journalctl -b --no-pager -o short-monotonic 2>/dev/null |
	grep -E 'fdekit|opalctl|systemd-cryptsetup|nm-initrd' | head -n 80 | sed 's/^/FDEKIT-JOURNAL /'
"""

# initramfs-tools mode: the offload engine, then apt purge and what is left.
REPORT_OFFLOAD_PURGE = r"""awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^refcnt/ { r = $3 } /^selftest/ { s = $3 }
     /^$/ { if (d == "xts-aes-offload") print "FDEKIT-SYS crypto", n, d, "refcnt=" r, "selftest=" s; n = d = r = s = "" }' /proc/crypto
say modules "$(lsmod | awk 'NR > 1 { print $1 }' | grep -E '^(xts_offload|xts_offload_virtio|virtio_crypto)$' | sort | tr '\n' ' ')"
say engines "$(ls -d /sys/bus/virtio/drivers/xts_offload/virtio* 2>/dev/null | tr '\n' ' ')"
counters() {
	for d in /sys/bus/virtio/devices/virtio*/xts_offload; do
		[ -d "$d" ] && echo "requests=$(cat "$d/requests") bytes=$(cat "$d/bytes")"
	done
}
say counters-before "$(counters)"
dd if=/dev/urandom of=/var/tmp/fdekit-write bs=1M count=16 oflag=direct conv=fsync 2>/dev/null
say write "$?"
say counters-after "$(counters)"
rm -f /var/tmp/fdekit-write
kver=$(uname -r)
# The packages' files in an initramfs (not the admin's: the LUKS key file,
# /etc/modprobe.d/xts-offload.conf, the test's own script).
theirs='(^|/)(opalctl|fdekit-opal|fdekit-umask|boot-functions|xts_offload(_virtio)?\.ko(\.[a-z]+)?|xts-offload-initramfs\.conf)$|^etc/fdekit|^usr/lib/fdekit'
say initramfs-before "$(lsinitramfs /boot/initrd.img-"$kver" | grep -c -E "$theirs")"
say dkms-before "$(dkms status 2>&1 | tr '\n' ' ')"
say units-before "$(systemctl list-unit-files --no-legend 'fdekit-opal*' | awk '{print $1 ":" $2}' | tr '\n' ' ')"
etc_state FDEKIT-ETC-BOOTED
say purge-start
purge_start=$(date +%s)
# Its output as it comes (a slow purge shows where it is).
{ apt-get purge -y -q @PACKAGES@ 2>&1; echo "rc=$?" >/var/tmp/purge.rc; } |
	sed -u 's/^/FDEKIT-PURGE /'
rc=$(sed -n 's/^rc=//p' /var/tmp/purge.rc)
rm -f /var/tmp/purge.rc
say purge "$rc"
systemctl daemon-reload
say initramfs-after "$(lsinitramfs /boot/initrd.img-"$kver" | grep -E "$theirs" | tr '\n' ' ')"
say initramfs-rebuilt "$(stat -c %Y /boot/initrd.img-"$kver")" "$purge_start"
say dkms-after "$(dkms status 2>&1 | tr '\n' ' ')"
say modules-after "$(find /lib/modules /usr/lib/modules -name 'xts_offload*' 2>/dev/null | tr '\n' ' ')"
say units-after "$(systemctl list-unit-files --no-legend 'fdekit-opal*' | awk '{print $1}' | tr '\n' ' ')"
say files-after "$(find /usr/src /var/lib/dkms /usr/lib/fdekit /usr/share/fdekit /usr/lib/dracut/modules.d /usr/share/initramfs-tools /lib/systemd/system /usr/lib/systemd/system /var/lib/systemd/deb-systemd-helper-enabled /usr/sbin \( -iname '*fdekit*' -o -iname '*xts_offload*' -o -iname '*xts-offload*' -o -iname '*opalctl*' \) 2>/dev/null | tr '\n' ' ')"
say packages-after "$(dpkg-query -W -f '${Package}:${db:Status-Abbrev} ' @PACKAGES@ 2>/dev/null)"
etc_state FDEKIT-ETC-PURGED
say done
"""

REPORT_UNIT = """# Test only (fdekit's whole-system test): the report over the serial line.
[Unit]
Description=fdekit whole-system test report (test only)
After=multi-user.target

[Service]
Type=exec
ExecStart=/usr/local/sbin/fdekit-system-test
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no

[Install]
WantedBy=multi-user.target
"""

SETUP_INIT = r"""#!/bin/sh
# Test only (fdekit's whole-system test): the setup boot's init. The plain
# tree is the root; this connects the drive over NVMe/TCP, brings up the NIC
# that reaches Tang, runs the image's own opalctl bind with the Admin1 key
# from /root (this setup tree only), and powers off.
PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -o remount,rw /
mkdir -p /run && mount -t tmpfs tmpfs /run
echo
echo "FDEKIT-SETUP start"
mkdir -p /etc/fdekit
modprobe nvme_tcp
modprobe virtio_net
for i in $(seq 100); do
	[ -n "$(grep -l -i @STORAGE_MAC@ /sys/class/net/*/address 2>/dev/null)" ] &&
	[ -n "$(grep -l -i @TANG_MAC@ /sys/class/net/*/address 2>/dev/null)" ] && break
	sleep 0.1
done
st=$(basename "$(dirname "$(grep -l -i @STORAGE_MAC@ /sys/class/net/*/address)")")
tg=$(basename "$(dirname "$(grep -l -i @TANG_MAC@ /sys/class/net/*/address)")")
ip link set lo up
ip link set "$st" up && ip addr add 10.0.3.15/24 dev "$st"
ip link set "$tg" up && ip addr add 10.0.2.15/24 dev "$tg"
sleep 1
echo "transport=tcp,traddr=10.0.3.2,trsvcid=@PORT@,nqn=@NQN@,nr_io_queues=1" >/dev/nvme-fabrics ||
	echo "FDEKIT-SETUP nvme connect failed"
for i in $(seq 100); do [ -b /dev/nvme0n1 ] && break; sleep 0.1; done
echo "FDEKIT-SETUP drive $(ls /dev/nvme0n1* 2>/dev/null | tr '\n' ' ')"
opalctl bind /dev/nvme0n1 @TRANSPORT@--range 1 --keyfile /root/admin.key --pin tang \
	--config '{"url":"@TANG_URL@","adv":"/root/tang.adv"}' --jwe /etc/fdekit/root.jwe 2>&1 |
	sed 's/^/FDEKIT-SETUP bind: /'
echo "FDEKIT-SETUP jwe $(test -s /etc/fdekit/root.jwe && echo present || echo missing)"
rm -f /root/admin.key /root/tang.adv
sync
mount -o remount,ro /
echo "FDEKIT-SETUP done"
echo o >/proc/sysrq-trigger
sleep 10
"""


class System:
    def __init__(self, args):
        self.args = args
        self.dist = args.dist
        self.dracut = args.initramfs == "dracut"
        self.packages = PACKAGES_DRACUT if self.dracut else PACKAGES
        self.base = BASE_DRACUT if self.dracut else BASE
        self.work = os.path.abspath(args.work)
        self.root = self.path("root")
        self.servers = []
        self.timer = Timer()
        self.mirror = os.environ.get("FDEKIT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
        self.security = os.environ.get("FDEKIT_DEBIAN_SECURITY",
                                       "http://deb.debian.org/debian-security")

    def path(self, *p):
        return os.path.join(self.work, *p)

    def cleanup(self):
        for s in self.servers:
            s.stop()

    # --- 1. the packages and the chroot ---------------------------------
    def build_debs(self):
        if self.args.debs:
            self.debs = os.path.abspath(self.args.debs)
            return
        run(["nice", "-n", "10", os.path.join(SRC, "scripts", "build-debs"), self.dist],
            timeout=3600, cwd=SRC)
        self.debs = os.path.join(SRC, "build", "debs", self.dist)

    def deb(self, name):
        found = [f for f in os.listdir(self.debs) if f.startswith(name + "_") and f.endswith(".deb")]
        if len(found) != 1:
            raise SetupError(f"{self.debs}: {len(found)} {name} packages, want 1")
        return os.path.join(self.debs, found[0])

    def make_chroot(self):
        deps = set()
        for p in self.packages:
            out = run(["dpkg-deb", "-f", self.deb(p), "Depends"]).stdout.decode()
            for d in out.split(","):
                d = re.sub(r"\(.*?\)", "", d.split("|")[0]).strip()
                if d and d not in self.packages:
                    deps.add(d)
        include = ",".join(self.base + sorted(deps))
        if os.path.exists(self.root):
            shutil.rmtree(self.root)
        sources = [f"deb {self.mirror} {self.dist} main",
                   f"deb {self.mirror} {self.dist}-updates main",
                   f"deb {self.security} {self.dist}-security main"]
        cmd = ["nice", "-n", "10", "mmdebstrap", "--variant=apt", "--format=directory",
               f"--include={include}"]
        for x in DPKG_EXCLUDE:
            cmd.append(f"--dpkgopt={x}")
        with open(self.path("mmdebstrap.log"), "wb") as log:
            p = subprocess.run(cmd + [self.dist, self.root] + sources, stdout=log,
                               stderr=subprocess.STDOUT, timeout=3600)
        if p.returncode:
            with open(self.path("mmdebstrap.log"), errors="replace") as f:
                raise SetupError("mmdebstrap failed:\n" + f.read()[-3000:])
        self.kver = sorted(os.listdir(os.path.join(self.root, "lib", "modules")))[-1]

    # --- 2. fdekit's packages, and the admin's files ------------------------
    def install(self):
        self.etc_before = etc_state(self.root)
        d = os.path.join(self.root, "tmp", "debs")
        os.makedirs(d, exist_ok=True)
        for p in self.packages:
            shutil.copy2(self.deb(p), d)
        # dracut: an image for the setup boot, if the kernel's and the
        # packages' hooks left none.
        initrd = f"/boot/initrd.img-{self.kver}"
        out = chroot(self.root, "apt-get install -y -q --no-install-recommends "
                     + " ".join(f"/tmp/debs/{os.path.basename(self.deb(p))}" for p in self.packages)
                     + "\nrm -rf /tmp/debs\napt-get clean\n"
                     + (f"[ -s {initrd} ] || dracut --force {initrd} {self.kver}\n"
                        f"dpkg-query -W -f '${{Package}}:${{db:Status-Abbrev}}\\n' "
                        + " ".join(self.packages) + " dracut initramfs-tools 2>&1 || true\n"
                        if self.dracut else ""))
        with open(self.path("install.log"), "w") as f:
            f.write(out)
        self.install_log = out
        self.etc_installed = etc_state(self.root)

    def admin_files(self):
        """What the admin writes. Returns the /etc paths written."""
        r = self.root
        self.luks_uuid = str(uuid.uuid4())
        self.key = os.urandom(32)
        written = []

        def put(rel, text, mode=0o644):
            p = os.path.join(r, rel.lstrip("/"))
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb" if isinstance(text, bytes) else "w") as f:
                f.write(text)
            os.chmod(p, mode)
            written.append(rel)
        put("/etc/hostname", "fdekit-system\n")
        put("/etc/fstab", f"/dev/mapper/{MAPPING} / ext4 errors=remount-ro 0 1\n")
        if self.dracut:
            self.dracut_admin_files(put)
        else:
            self.initramfs_tools_admin_files(put)
        # The serial line carries the report: no getty on it (its vhangup
        # would cut the report's output off).
        os.symlink("/dev/null", os.path.join(r, "etc/systemd/system/serial-getty@ttyS0.service"))
        written.append("/etc/systemd/system/serial-getty@ttyS0.service")
        wants = os.path.join(r, "etc/systemd/system/multi-user.target.wants")
        os.makedirs(wants, exist_ok=True)
        os.symlink("/etc/systemd/system/fdekit-system-test.service",
                   os.path.join(wants, "fdekit-system-test.service"))
        written += ["/etc/systemd/system/multi-user.target.wants",
                    "/etc/systemd/system/multi-user.target.wants/fdekit-system-test.service",
                    "/etc/fdekit/opaltab", "/etc/fdekit/root.jwe"]
        self.user_written = set(written)
        # The directories those files made.
        for w in list(self.user_written):
            d = os.path.dirname(w)
            while d not in ("/", "/etc"):
                self.user_written.add(d)
                d = os.path.dirname(d)

    def report(self, put):
        put("/usr/local/sbin/fdekit-system-test",
            REPORT_SCRIPT.replace("@UNLOCK@", UNLOCK_REPORT)
            .replace("@OFFLOAD_PURGE@", "" if self.dracut else REPORT_OFFLOAD_PURGE)
            .replace("@ETC@", GUEST_ETC).replace("@MAPPING@", MAPPING)
            .replace("@PACKAGES@", " ".join(self.packages)), 0o755)
        put("/etc/systemd/system/fdekit-system-test.service", REPORT_UNIT)

    def dracut_admin_files(self, put):
        """dracut's admin: the LUKS key file, found by systemd-cryptsetup
        by the mapping's name (/etc/cryptsetup-keys.d/NAME.key, in the
        initramfs and in the root), carried by a dracut.conf.d file; Debian's
        dracut makes generic images, which carry no crypttab: the boot
        loader's command line names the LUKS device (rd.luks.*)."""
        put("/etc/cryptsetup-keys.d/fdekitroot.key", self.key, 0o600)
        put("/etc/crypttab", f"{MAPPING} UUID={self.luks_uuid} none luks,discard\n")
        put("/etc/dracut.conf.d/10-fdekitroot-key.conf",
            "# The root's LUKS key in the initramfs (the image is root's alone)\n"
            'install_items+=" /etc/cryptsetup-keys.d/fdekitroot.key "\n')
        # Test only: the drive over NVMe/TCP (firmware's job on a real
        # machine), its NIC left alone by NetworkManager in the root (as an
        # admin does for an NVMe/TCP or iSCSI NIC), and the report unit.
        mods = os.path.join(self.root, "usr/lib/dracut/modules.d/91fdekit-test-nvmf")
        if os.path.exists(mods):
            shutil.rmtree(mods)
        shutil.copytree(os.path.join(HERE, "dracut", "91fdekit-test-nvmf"), mods)
        put("/etc/dracut.conf.d/90-fdekit-test-nvmf.conf",
            "# Test only: the drive over NVMe/TCP\n"
            'add_dracutmodules+=" fdekit-test-nvmf "\n')
        put("/etc/NetworkManager/conf.d/90-fdekit-test-storage.conf",
            "# Test only: the NIC that carries the root's NVMe/TCP drive\n"
            f"[keyfile]\nunmanaged-devices=mac:{STORAGE_MAC}\n")
        self.report(put)

    def initramfs_tools_admin_files(self, put):
        # The LUKS key in the initramfs (root's alone: UMASK=0077), as for a
        # root whose passphrase nobody types: the Opal range below is what
        # Tang unlocks.
        put("/etc/cryptsetup-keys.d/fdekitroot.key", self.key, 0o600)
        put("/etc/crypttab", f"{MAPPING} UUID={self.luks_uuid} "
            f"/etc/cryptsetup-keys.d/fdekitroot.key luks,discard,initramfs\n")
        put("/etc/cryptsetup-initramfs/conf-hook",
            'KEYFILE_PATTERN="/etc/cryptsetup-keys.d/*.key"\n')
        # The image carries a key file: root's alone (cryptsetup-initramfs
        # warns otherwise; fdekit-umask does the same only while the
        # package is installed).
        put("/etc/initramfs-tools/conf.d/umask", "UMASK=0077\n")
        put("/etc/fdekit/xts-offload.conf",
            "# xts_offload and its virtio-crypto engine in the initramfs\nINITRAMFS=yes\n")
        put("/etc/modprobe.d/xts-offload.conf", "blacklist virtio_crypto\n")
        # Test only: the drive over NVMe/TCP (firmware's job on a real
        # machine) and the report unit.
        with open(os.path.join(HERE, "initramfs-tools", "nvmf-connect")) as f:
            put("/etc/initramfs-tools/scripts/init-premount/fdekit-test-nvmf", f.read(), 0o755)
        self.report(put)

    # --- 3. the drive, Tang, and the bind in the image ------------------------
    def make_drive(self, blocks):
        d = self.drive = self.path("drive")
        os.makedirs(d)
        self.blocks = blocks
        self.r1_length = blocks - R1_START - 2048
        self.admin_key = self.path("admin.key")
        with open(self.admin_key, "w") as f:
            f.write(os.urandom(16).hex())
        os.chmod(self.admin_key, 0o600)
        a = self.args
        run([a.sedsim, "create", d, "--blocks", str(blocks), "--serial", SERIAL])
        mbr = self.path("mbr.img")
        with open(mbr, "wb") as f:
            f.truncate(blocks * 512)
        run(["sfdisk", "-q", mbr],
            input=f"label: dos\nstart={R1_START}, size={self.r1_length}, type=83\n".encode())
        with open(mbr, "rb") as f:
            run([a.sedsim, "write", d, "0", "1"], input=f.read(512))
        run([a.opalctl_sim, "setup", d, "--transport", "sedsim", "--keyfile", self.admin_key,
             "--range", "1", "--start", str(R1_START), "--length", str(self.r1_length),
             "--yes-destroy-data"])

    def start_drive(self):
        self.nvme_port = free_port()
        s = Server("sedsim serve-nvme", [self.args.sedsim, "serve-nvme", self.drive, "--port",
                                         str(self.nvme_port), "--nqn", NQN],
                   self.nvme_port, self.path("serve-nvme.log"))
        s.start()
        self.servers.append(s)
        self.nvme = s

    def stop_drive(self):
        self.nvme.stop()
        self.servers.remove(self.nvme)

    def start_tang(self):
        env = bt.Env(argparse.Namespace(work=self.work, opalctl=None, opalctl_sim=None,
                                        sedsim=None, tangd=self.args.tangd,
                                        tangd_keygen=self.args.tangd_keygen))
        self.tang = env.start_tang("sys")
        self.servers += env.servers

    def range1_locked(self):
        p = subprocess.run([self.args.sedsim, "read", self.drive, str(R1_START), "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        return p.returncode == 3

    def qemu(self, kernel, initrd, append, drives=(), timeout=900, tag="boot", crypto=False,
             answers=()):
        """Returns (console text, QEMU's exit status or None on timeout,
        seconds). answers: (regex, text) pairs, each typed on the serial
        console a second after the regex first matches it (after a program
        turned echo off); self.typed lists the regexes answered."""
        cmdline = f"console=ttyS0 panic=-1 {append}"
        cmd = [self.args.qemu, "-accel", self.args.accel, "-cpu", "max", "-m", "1536",
               "-smp", "1", "-nodefaults", "-display", "none", "-no-reboot",
               "-serial", "stdio", "-monitor", "none",
               "-netdev", "user,id=n0", "-device", f"virtio-net-pci,netdev=n0,mac={TANG_MAC}",
               "-netdev", f"user,id=st,net={bt.STORAGE_NET},host={bt.STORAGE_HOST}",
               "-device", f"virtio-net-pci,netdev=st,mac={STORAGE_MAC}",
               "-kernel", kernel, "-initrd", initrd, "-append", cmdline]
        for d in drives:
            cmd += ["-drive", f"file={d},format=raw,if=virtio"]
        if crypto:
            cmd += ["-object", "cryptodev-backend-builtin,id=cryptodev0",
                    "-device", "virtio-crypto-pci,id=crypto0,cryptodev=cryptodev0"]
        log = self.path(f"console-{tag}.log")
        start = time.monotonic()
        pending, self.typed = list(answers), []

        def console():
            with open(log, "rb") as f:
                return bt.ANSI.sub("", f.read().decode(errors="replace"))
        with open(log, "wb") as f:
            p = subprocess.Popen(cmd, stdin=subprocess.PIPE if answers else subprocess.DEVNULL,
                                 stdout=f, stderr=subprocess.STDOUT)
            rc = None
            while True:
                try:
                    rc = p.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    pass
                if time.monotonic() - start > timeout:
                    p.kill()
                    p.wait()
                    break
                for rx, answer in [a for a in pending if re.search(a[0], console())]:
                    time.sleep(1.0)
                    p.stdin.write(answer.encode() + b"\n")
                    p.stdin.flush()
                    pending.remove((rx, answer))
                    self.typed.append(rx)
            if p.stdin:
                p.stdin.close()
        return console(), rc, time.monotonic() - start

    def boot_system(self, append, tag, answers=()):
        """Serve the drive (a power-on), boot the image's kernel and
        initramfs with root on the mapping, stop the drive. Returns (console
        text, QEMU's exit status, seconds, Tang requests during the boot)."""
        self.start_drive()
        before = bt.Env.tang_requests(self.tang)
        try:
            nvmf = (f"fdekit.test.storage={STORAGE_MAC},{bt.STORAGE_CIDR} "
                    f"fdekit.test.nvmf={bt.STORAGE_HOST},{self.nvme_port},{NQN}")
            text, rc, took = self.timer(
                tag, self.qemu, os.path.join(self.root, "boot", f"vmlinuz-{self.kver}"),
                os.path.join(self.root, "boot", f"initrd.img-{self.kver}"),
                f"root=/dev/mapper/{MAPPING} {append} {nvmf}", timeout=self.args.boot_timeout,
                tag=tag, crypto=not self.dracut, answers=answers)
        finally:
            self.stop_drive()
        return text, rc, took, bt.Env.tang_requests(self.tang) - before

    def build_initramfs(self):
        """The admin rebuilds the initramfs: (its files, the output)."""
        initrd = f"/boot/initrd.img-{self.kver}"
        if self.dracut:
            out = chroot(self.root, f"dracut --force {initrd} {self.kver}\n")
            files, self.initramfs_conf = dn.listing(self.root + initrd)
            return files, out
        out = chroot(self.root, f"update-initramfs -u -k {self.kver}\nlsinitramfs {initrd}\n")
        return set(out.split()), out

    def bind(self):
        """The setup boot: the image's kernel and the initramfs its triggers
        built, the plain tree as root on a virtio disk, the setup init."""
        setup = self.path("setup-root")
        if os.path.exists(setup):
            shutil.rmtree(setup)
        # The same tree plus the setup's own files (the Admin1 key, Tang's
        # advertisement): a copy, so they never reach the image.
        run(["cp", "-a", "--reflink=auto", self.root, setup], timeout=900)
        shutil.copy2(self.admin_key, os.path.join(setup, "root", "admin.key"))
        shutil.copy2(self.tang["adv"], os.path.join(setup, "root", "tang.adv"))
        init = os.path.join(setup, "usr", "local", "sbin", "fdekit-test-setup")
        with open(init, "w") as f:
            f.write(SETUP_INIT.replace("@STORAGE_MAC@", STORAGE_MAC).replace("@TANG_MAC@", TANG_MAC)
                    .replace("@PORT@", str(self.nvme_port)).replace("@NQN@", NQN)
                    .replace("@TANG_URL@", self.tang["url"])
                    .replace("@TRANSPORT@", "" if bt.kernel_opal(self.kver) else "--transport nvme "))
        os.chmod(init, 0o755)
        img = self.path("setup.img")
        if os.path.exists(img):
            os.unlink(img)
        size = du(setup) + (256 << 20)
        run(["mkfs.ext4", "-q", "-F", "-L", "fdekitsetup", "-d", setup, img, f"{size >> 10}k"],
            timeout=900)
        shutil.rmtree(setup)
        text, rc, took = self.qemu(
            os.path.join(self.root, "boot", f"vmlinuz-{self.kver}"),
            os.path.join(self.root, "boot", f"initrd.img-{self.kver}"),
            "root=/dev/vda rw init=/usr/local/sbin/fdekit-test-setup", drives=[img], tag="setup")
        self.setup_text = text
        m = re.search(r"^FDEKIT-SETUP bind: opaltab line \(name it\): NAME (.*)$", text, re.M)
        if "FDEKIT-SETUP jwe present" not in text or not m:
            raise SetupError(f"setup boot: no bind (qemu exit {rc}, {took:.0f} s)\n{bt.tail(text, 60)}")
        jwe = run(["debugfs", "-R", "cat /etc/fdekit/root.jwe", img],
                  stderr=subprocess.DEVNULL).stdout
        os.unlink(img)
        entry = f"root {m.group(1).strip()}"
        if not bt.kernel_opal(self.kver) and "transport=" not in entry:
            # No sed-opal for NVMe over fabrics before 6.2: opalctl's own
            # protocol code on the controller.
            entry += ",transport=nvme"
        self.table_entry = entry
        fd = os.path.join(self.root, "etc", "fdekit")
        os.makedirs(fd, exist_ok=True)
        with open(os.path.join(fd, "root.jwe"), "wb") as f:
            f.write(jwe)
        os.chmod(os.path.join(fd, "root.jwe"), 0o600)
        with open(os.path.join(fd, "opaltab"), "w") as f:
            f.write("# NAME DEVICE RANGES KEY OPTIONS\n" + entry + "\n")
        # The admin rebuilds the initramfs, now that there is a table.
        self.initramfs_files, self.update_log = self.build_initramfs()
        return took

    # --- 4. the image -------------------------------------------------------
    def make_image(self):
        """The tree as ext4, encrypted as LUKS2 offline, written into range
        1 (unlocked for the write with the Admin1 key, locked again)."""
        img = self.path("root.img")
        if os.path.exists(img):
            os.unlink(img)
        with open(img, "wb") as f:
            f.truncate(self.r1_length * 512)
        fs_bytes = self.r1_length * 512 - (32 << 20)
        run(["mkfs.ext4", "-q", "-F", "-L", "fdekitroot", "-d", self.root, img,
             f"{fs_bytes >> 10}k"], timeout=1800)
        kf = self.path("luks.key")
        with open(kf, "wb") as f:
            f.write(self.key)
        os.chmod(kf, 0o600)
        run(["cryptsetup", "reencrypt", "--encrypt", "--type", "luks2", "--cipher", "aes-xts-plain64",
             "--key-size", "512", "--sector-size", "4096", "--reduce-device-size", "32M", "--uuid", self.luks_uuid,
             "--key-file", kf, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000",
             "--batch-mode", img], timeout=3600)
        os.unlink(kf)
        a = self.args
        run([a.opalctl_sim, "unlock", self.drive, "--transport", "sedsim", "--keyfile",
             self.admin_key, "--range", "1"])
        with open(img, "rb") as f:
            run([a.sedsim, "write", self.drive, str(R1_START), str(self.r1_length)], stdin=f,
                timeout=3600)
        os.unlink(img)
        run([a.opalctl_sim, "lock", self.drive, "--transport", "sedsim", "--keyfile",
             self.admin_key, "--range", "1"])


def du(path):
    return int(run(["du", "-s", "-B1", "--apparent-size", path]).stdout.split()[0])


def starved_rcu_reports(text):
    """The console without RCU stall reports that say only that the
    grace-period kthread got no CPU while every CPU passed a quiescent state
    ("All QSes seen", "kthread starved"): the host did not run the guest's
    vCPU (TCG on a loaded machine), not a kernel problem. A stall with a CPU
    holding up the grace period stays, as does every other warning. Returns
    (text without those reports, how many were taken out)."""
    lines, out, i, n = text.split("\n"), [], 0, 0
    while i < len(lines):
        m = KMSG.match(lines[i])
        if m and "detected stalls on CPUs/tasks" in m.group(2):
            # The report: kernel lines of the same second or the next.
            j, sec = i + 1, int(m.group(1))
            while j < len(lines) and (k := KMSG.match(lines[j])) and int(k.group(1)) <= sec + 1:
                j += 1
            report = "\n".join(lines[i:j])
            if "All QSes seen" in report and "kthread starved" in report:
                n += 1
                i = j
                continue
        out.append(lines[i])
        i += 1
    return "\n".join(out), n


def sys_marks(text):
    """{name: value} of the report's 'FDEKIT-SYS name value' lines (first)."""
    out = {}
    for m in re.finditer(rf"^{MARK} (\S+) ?(.*)$", text, re.M):
        out.setdefault(m.group(1), m.group(2).strip())
    return out


def guest_etc(text, mark):
    out = {}
    for m in re.finditer(rf"^{mark} (\S+) (.*)$", text, re.M):
        out[m.group(1)] = m.group(2).strip()
    return out


def counters(s):
    return [(int(a), int(b)) for a, b in re.findall(r"requests=(\d+) bytes=(\d+)", s or "")]


def kernel_warning(tap, text):
    """The first kernel warning on the console (starved RCU reports left
    out, and said so), or None."""
    kernel, starved = starved_rcu_reports(text)
    if starved:
        tap.diag(f"{starved} RCU stall report(s) of a starved grace-period kthread "
                 "(the host did not run the vCPU) not counted as kernel warnings")
    warned = WARNED.search(kernel)
    return warned.group(0) if warned else None


def root_on_range(s, mk):
    """Root on the LUKS2 mapping over partition 1 of the NVMe/TCP drive:
    (good, what the report said)."""
    slaves = mk.get("root-slaves", "").split()
    table = mk.get("root-table", "")
    good = (mk.get("root-source") == f"/dev/mapper/{MAPPING}"
            and re.fullmatch(r"nvme\d+n\d+p1|nvme\d+c\d+n\d+p1", slaves[0] if len(slaves) == 1 else "")
            is not None
            and re.fullmatch(r"0 \d+ crypt aes-xts-plain64", table) is not None
            and mk.get("dm-type", "").startswith("CRYPT-LUKS2-" + s.luks_uuid.replace("-", "")))
    return good, (f"root: {mk.get('root-source')}, slaves: {slaves}, table: {table!r}, "
                  f"dm uuid: {mk.get('dm-type')}")


def unlock_state(mk, name="root"):
    """/run/fdekit/NAME as the report printed it, as a dict."""
    return dict(kv.split("=", 1) for kv in mk.get(f"state-{name}", "").split() if "=" in kv)


def descriptions(d, dracut):
    if dracut:
        return [
            f"{d}: opalctl and fdekit-opal-dracut installed with apt in a {d} system with dracut (no initramfs-tools) and NetworkManager made by mmdebstrap",
            f"{d}: opalctl bind in the image's own userland (setup boot of its kernel) sealed range 1's new slot to Tang; dracut in the image carried opalctl, the table, the JWE, clevis, curl, the password agents' askpass, NetworkManager (FDEKIT_NET=network-manager), systemd-cryptsetup and the LUKS key file",
            f"{d}: Tang up: range 1 locked at power-on, unlocked from Tang through dracut's NetworkManager, nobody asked, no kernel warning, multi-user.target reached, is-system-running: running, root on /dev/mapper/{MAPPING} (LUKS2 over range 1 of the NVMe/TCP drive)",
            f"{d}: Tang up: /run/fdekit/root says key=clevis; no clevis, curl or jose process and no /run/fdekit-curl.* left in the booted system",
            f"{d}: Tang down: the prompt 'Recovery key (Admin1) for drive {SERIAL}, range 1 (root; N tries left this boot)' shows through systemd's password agent on the serial console, the Admin1 key typed there (not echoed) unlocks, multi-user.target reached, root on /dev/mapper/{MAPPING}",
            f"{d}: Tang down: /run/fdekit/root says key=passphrase, saved_for_resume=no (Admin1's key is never saved for S3); no /run/systemd/ask-password/ask.* left",
            f"{d}: power cycle: range 1 locked again",
        ]
    return [
        f"{d}: fdekit's {d} packages installed with apt in a {d} system made by mmdebstrap; DKMS built xts_offload and xts_offload_virtio for its kernel; the triggers built the initramfs",
        f"{d}: opalctl bind in the image's own userland (setup boot of its kernel) sealed range 1's new slot to Tang; update-initramfs in the image carried opalctl, the table, the JWE, clevis, cryptroot, the LUKS key file and xts_offload/xts_offload_virtio",
        f"{d}: boot of the image's own kernel and initramfs: range 1 locked at power-on, unlocked from Tang, no password asked, no kernel warning, multi-user.target reached",
        f"{d}: systemctl is-system-running: running",
        f"{d}: root on /dev/mapper/{MAPPING}, LUKS2 aes-xts-plain64 over partition 1 = Opal locking range 1 of the NVMe/TCP drive",
        f"{d}: the root mapping runs on xts-aes-offload (refcnt > 1, self-test passed), the virtio-crypto engine bound (virtio_crypto not loaded), its counters rising during a 16 MiB direct write",
        f"{d}: apt purge of {', '.join(PACKAGES)} in the booted system: the rebuilt initramfs has no fdekit or xts_offload file, no DKMS module, no unit, no file of theirs left",
        f"{d}: after the purge /etc holds nothing of the packages: as before the install but for what the admin wrote and the boot changed",
        f"{d}: power cycle: range 1 locked again",
    ]


def installed(s, tap, desc):
    """The install's result."""
    kv = s.kver
    if s.dracut:
        status = dict(re.findall(r"^([a-z0-9.+-]+):(\S+)\s*$", s.install_log, re.M))
        bad = {p: status.get(p) for p in s.packages + ["dracut"] if status.get(p) != "ii"}
        itools = status.get("initramfs-tools", "").startswith("i")
        initrd = os.path.exists(os.path.join(s.root, "boot", f"initrd.img-{kv}"))
        module = os.path.isdir(os.path.join(s.root, "usr/lib/dracut/modules.d/90fdekit-opal"))
        tap.result(not bad and not itools and initrd and module, desc,
                   f"not installed: {bad}, initramfs-tools installed: {itools}, initramfs: "
                   f"{initrd}, fdekit-opal module: {module}\n" + bt.tail(s.install_log))
        return
    dkms_dir = os.path.join(s.root, "lib/modules", kv, "updates/dkms")
    built = os.listdir(dkms_dir) if os.path.isdir(dkms_dir) else []
    mods = [f for f in ("xts_offload", "xts_offload_virtio")
            if not any(n.startswith(f + ".ko") for n in built)]
    initrd_built = re.search(r"update-initramfs: Generating /boot/initrd.img-" + re.escape(kv),
                             s.install_log) is not None
    tap.result(not mods and initrd_built,
               desc, f"modules missing: {mods}, initramfs built at install: {initrd_built}\n"
               + bt.tail(s.install_log))


def carried(s, tap, desc):
    """What the rebuilt initramfs carries."""
    files = s.initramfs_files
    if s.dracut:
        base = {f.rsplit("/", 1)[-1] for f in files}
        need = ["etc/fdekit/opaltab", "etc/fdekit/root.jwe", "usr/lib/fdekit/ask-password",
                "etc/cryptsetup-keys.d/fdekitroot.key"]
        bins = ["opalctl", "clevis-decrypt-tang", "curl", "fdekit-opal-unlock", "NetworkManager",
                "systemd-cryptsetup", "systemd-tty-ask-password-agent", "fdekit-test-nvmf-connect"]
        missing = [n for n in need if n not in files] + [b for b in bins if b not in base]
        net = 'FDEKIT_NET="network-manager"' in s.initramfs_conf
        tap.result(not missing and net, desc,
                   f"table entry: {s.table_entry}\nmissing: {missing}, FDEKIT_NET network-manager: "
                   f"{net}\n{s.initramfs_conf}\n" + bt.tail(s.update_log))
        return
    need = ["usr/sbin/opalctl", "etc/fdekit/opaltab", "etc/fdekit/root.jwe", "usr/bin/clevis-decrypt-tang",
            "usr/bin/curl", "cryptroot/crypttab", "scripts/local-top/cryptroot",
            "scripts/local-top/fdekit-opal", "cryptroot/keyfiles/fdekitroot.key",
            "etc/modprobe.d/xts-offload-initramfs.conf"]
    missing = [n for n in need if n not in files]
    kmods = [m for m in ("xts_offload", "xts_offload_virtio")
             if not any(re.search(rf"/{m}\.ko", f) for f in files)]
    tap.result(not missing and not kmods, desc,
               f"table entry: {s.table_entry}\nmissing: {missing}, modules missing: {kmods}\n"
               + bt.tail(s.update_log))


def initramfs_tools_boot(s, tap, descs, locked_before):
    """One boot: Tang unlocks, the report, the offload engine, apt purge."""
    bootif = "01-" + TANG_MAC.replace(":", "-")
    text, rc, took, recs = s.boot_system(f"ip=dhcp BOOTIF={bootif}", "boot")
    mk = sys_marks(text)
    asked = ASKED.search(text)
    denied = bt.locked_at_boot(text)
    warned = kernel_warning(tap, text)
    tap.result(locked_before and denied and recs >= 1 and not asked and not warned
               and mk.get("multi-user") == "active", descs[2],
               f"range locked before: {locked_before}, access denied at boot: {denied}, "
               f"Tang requests: {recs}, asked: {asked.group(0) if asked else None}, "
               f"kernel warning: {warned}, "
               f"multi-user: {mk.get('multi-user')}, qemu exit {rc}, {took:.0f} s\n"
               + bt.tail(text, 80))
    failed = re.findall(rf"^{MARK} failed (\S+)", text, re.M)
    tap.result(mk.get("running") == "running", descs[3],
               f"is-system-running: {mk.get('running')}, failed units: {failed}")
    good, what = root_on_range(s, mk)
    tap.result(good, descs[4], what)
    cr = re.search(rf"^{MARK} crypto xts\(aes\) xts-aes-offload refcnt=(\d+) selftest=(\S+)",
                   text, re.M)
    b, a = counters(mk.get("counters-before")), counters(mk.get("counters-after"))
    rising = len(b) == 1 and len(a) == 1 and a[0][0] > b[0][0] and a[0][1] - b[0][1] >= 16 << 20
    mods_loaded = mk.get("modules", "").split()
    tap.result(cr is not None and int(cr.group(1)) > 1 and cr.group(2) == "passed" and rising
               and "virtio_crypto" not in mods_loaded and "xts_offload_virtio" in mods_loaded
               and mk.get("write") == "0", descs[5],
               f"/proc/crypto: {cr.group(0) if cr else None}, counters {b} -> {a}, "
               f"modules: {mods_loaded}, engines: {mk.get('engines')}, write: {mk.get('write')}")
    rebuilt = mk.get("initramfs-rebuilt", "").split()
    purge_ok = (mk.get("purge") == "0" and mk.get("initramfs-after") == ""
                and len(rebuilt) == 2 and int(rebuilt[0]) >= int(rebuilt[1])
                and mk.get("modules-after") == "" and mk.get("units-after") == ""
                and mk.get("files-after") == "" and mk.get("packages-after", "x").strip() == ""
                and "xts_offload" not in mk.get("dkms-after", "x")
                and int(mk.get("initramfs-before", "0")) > 0
                and "update-initramfs: Generating" in "\n".join(
                    re.findall(r"^FDEKIT-PURGE (.*)$", text, re.M)))
    tap.result(purge_ok, descs[6], "\n".join(f"{k}: {mk.get(k)!r}" for k in (
        "purge", "initramfs-before", "initramfs-after", "initramfs-rebuilt", "dkms-before",
        "dkms-after", "modules-after", "units-before", "units-after", "files-after",
        "packages-after")) + "\n" + "\n".join(re.findall(r"^FDEKIT-PURGE (.*)$", text, re.M)[-30:]))
    booted = guest_etc(text, ETC_MARK["before"])
    purged = guest_etc(text, ETC_MARK["after"])
    # What booting changed: the booted /etc against the image's.
    image = s.etc_final = etc_state(s.root)
    boot_changed = {p for p in set(booted) | set(image) if booted.get(p) != image.get(p)}
    left = sorted(p for p in set(purged) | set(s.etc_before)
                  if purged.get(p) != s.etc_before.get(p)
                  and p not in s.user_written and p not in boot_changed)
    tap.result(bool(booted) and bool(purged) and not left, descs[7],
               f"/etc entries: before install {len(s.etc_before)}, booted {len(booted)}, "
               f"after purge {len(purged)}; changed by the boot: {sorted(boot_changed)}; "
               f"admin's: {sorted(s.user_written)}\nleft or changed by the packages: "
               + "\n".join(f"{p}: {s.etc_before.get(p)} -> {purged.get(p)}" for p in left))


def dracut_boots(s, tap, descs, locked_before):
    """Two boots: Tang up (unattended), Tang down (the recovery key typed
    through systemd's password agent on the serial console)."""
    # No ip=, no BOOTIF=, no rd.neednet: fdekit's module brings the Tang NIC
    # up through NetworkManager itself. The LUKS root by the boot loader's
    # command line (a generic image carries no crypttab).
    append = (f"rd.luks.uuid={s.luks_uuid} rd.luks.name={s.luks_uuid}={MAPPING} "
              f"rd.luks.options=discard {df.DRACUT_ARGS}")
    text, rc, took, recs = s.boot_system(append, "tang-up")
    mk = sys_marks(text)
    asked = ASKED_DRACUT.search(text)
    denied = bt.locked_at_boot(text)
    warned = kernel_warning(tap, text)
    failed = re.findall(rf"^{MARK} failed (\S+)", text, re.M)
    on_range, where = root_on_range(s, mk)
    journal = "\n".join(re.findall(r"^FDEKIT-JOURNAL (.*)$", text, re.M)[-40:])
    tap.result(locked_before and denied and recs >= 1 and not asked and not warned
               and mk.get("multi-user") == "active" and mk.get("running") == "running"
               and on_range, descs[2],
               f"range locked before: {locked_before}, access denied at boot: {denied}, "
               f"Tang requests: {recs}, asked: {asked.group(0) if asked else None}, "
               f"kernel warning: {warned}, multi-user: {mk.get('multi-user')}, "
               f"is-system-running: {mk.get('running')}, failed units: {failed}, {where}, "
               f"qemu exit {rc}, {took:.0f} s\n{journal}\n" + bt.tail(text, 80))
    st = unlock_state(mk)
    tap.result(st.get("key") == "clevis" and mk.get("left-processes", "x") == ""
               and mk.get("left-curl", "x") == "", descs[3],
               f"/run/fdekit/root: {st}, processes left: {mk.get('left-processes')!r}, "
               f"curl directories left: {mk.get('left-curl')!r}")

    # Tang down: nothing listens on its port any more.
    s.tang["server"].stop()
    run([s.args.sedsim, "power-cycle", s.drive])
    locked_before = s.range1_locked()
    with open(s.admin_key) as f:
        key = f.read().strip()
    text, rc, took, recs = s.boot_system(append, "tang-down", answers=[(bt.ASK, key)])
    mk = sys_marks(text)
    prompt = re.search(bt.ASK, text)
    echoed = key in text
    on_range, where = root_on_range(s, mk)
    journal = "\n".join(re.findall(r"^FDEKIT-JOURNAL (.*)$", text, re.M)[-40:])
    tap.result(locked_before and bt.locked_at_boot(text) and prompt is not None
               and s.typed == [bt.ASK] and not echoed and mk.get("multi-user") == "active"
               and on_range, descs[4],
               f"range locked before: {locked_before}, prompt: {prompt.group(0) if prompt else None}, "
               f"answered: {len(s.typed)}, key echoed: {echoed}, multi-user: "
               f"{mk.get('multi-user')}, is-system-running: {mk.get('running')}, {where}, "
               f"Tang requests: {recs}, qemu exit {rc}, {took:.0f} s\n{journal}\n"
               + bt.tail(text, 80).replace(key, "<the Admin1 key>"))
    st = unlock_state(mk)
    tap.result(st.get("key") == "passphrase" and st.get("saved_for_resume") == "no"
               and mk.get("left-asks", "x") == "", descs[5],
               f"/run/fdekit/root: {st}, password requests left: {mk.get('left-asks')!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", default="trixie", choices=sorted(DEBIAN_NUM))
    ap.add_argument("--initramfs", default="initramfs-tools", choices=["initramfs-tools", "dracut"],
                    help="what builds the system's initramfs (dracut: trixie only)")
    ap.add_argument("--opalctl-sim", required=True,
                    help="an opalctl with the sedsim transport, for the host side")
    ap.add_argument("--sedsim", required=True)
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--debs", help="the packages' directory (default: scripts/build-debs DIST)")
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--accel", default=os.environ.get("FDEKIT_QEMU_ACCEL", "tcg"))
    ap.add_argument("--tangd", default="/usr/libexec/tangd")
    ap.add_argument("--tangd-keygen", default="/usr/libexec/tangd-keygen")
    ap.add_argument("--boot-timeout", type=int, default=2400,
                    help="seconds for the boot, the report and the purge")
    ap.add_argument("--only-if-full", action="store_true",
                    help="skip (TAP) unless FDEKIT_BOOT_FULL=1")
    args = ap.parse_args()
    d = args.dist
    dracut = args.initramfs == "dracut"
    if dracut and d != "trixie":
        ap.error("--initramfs dracut: trixie only (its dracut, NetworkManager and systemd-cryptsetup)")

    descs = descriptions(d, dracut)
    tap = bt.Tap(len(descs))
    if args.only_if_full and os.environ.get("FDEKIT_BOOT_FULL", "") in ("", "0"):
        for desc in descs:
            print(f"ok {tap.n + 1} - {desc} # SKIP FDEKIT_BOOT_FULL=1 runs it", flush=True)
            tap.n += 1
        return 0
    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    s = System(args)
    t = s.timer
    try:
        t("debs", s.build_debs)
        t("chroot", s.make_chroot)
        t("install", s.install)
        installed(s, tap, descs[0])
        s.admin_files()
        size = du(s.root)
        # Room for what the boot and the purge write (a new initramfs
        # beside the old one while update-initramfs makes it).
        blocks = ((size * 3 // 2 + (512 << 20)) // 512 + 4095) // 4096 * 4096
        t("drive", s.make_drive, blocks)
        s.start_tang()
        s.start_drive()
        try:
            t("bind", s.bind)
        finally:
            s.stop_drive()
        carried(s, tap, descs[1])
        t("image", s.make_image)
        locked_before = s.range1_locked()
        if dracut:
            dracut_boots(s, tap, descs, locked_before)
        else:
            initramfs_tools_boot(s, tap, descs, locked_before)
        s.power_cycled = run([args.sedsim, "power-cycle", s.drive])
        tap.result(s.range1_locked(), descs[-1])
    except (SetupError, OSError, subprocess.TimeoutExpired) as e:
        tap.diag(e)
        tap.bail_rest("setup failed (above)", descs[tap.n:])
    finally:
        s.cleanup()
        tap.diag("times: " + ", ".join(f"{n} {v:.0f} s" for n, v in t.steps)
                 + f", total {sum(v for _, v in t.steps):.0f} s")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
