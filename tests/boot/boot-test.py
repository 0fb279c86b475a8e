#!/usr/bin/env python3
"""Boot a root file system from a locked virtual SED in QEMU, unlocked by Tang.

The host holds everything: a sedsim drive whose locking range 1 is partition 1
and carries an ext4 root file system (LockOnReset, so every start of
`sedsim serve-nvme` is a power-on that locks it), a Tang server behind socat
on a loopback port, and the slot's JWE. The guest boots a Debian kernel with
an initramfs made by Debian's own mkinitramfs (or by dracut) with fdekit's
boot integration from the source tree, a test-only script that connects the
drive over NVMe/TCP, and reaches /sbin/init of the root file system, which
prints a marker, the checksum of a data file and the state of the network,
and powers off. Output is TAP.

The guest has two NICs, both on QEMU user networking (where 10.0.x.2 is the
host's loopback). The drive is served on the second, a storage-only network
(10.0.3.0/24) that the test's init-premount script configures with a static
address, as an nvmf boot's firmware would. The first (10.0.2.0/24) reaches
Tang and is left to the product: ip=dhcp with BOOTIF= naming it makes
initramfs-tools' configure_networking (and dracut) configure that NIC only.

Exit status: 0 every test passed, 1 a test failed, 2 setup error.
"""

import argparse
import hashlib
import json
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
BOOT = os.path.join(SRC, "tools", "boot")

BLOCKS = 20480          # 10 MiB drive of 512-byte blocks
R1_START = 2048         # locking range 1 = partition 1
R1_LENGTH = 16384       # 8 MiB
SERIAL = "FDEKITBOOT01"
NQN = "nqn.2026-11.org.fdekit:boot-test"
ROOT_MARK = "FDEKIT-ROOT-REACHED"
DATA_MARK = "FDEKIT-DATA-SHA256"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
# Anything that asks a human for a secret.
PROMPT = re.compile(r"(?i)(passphrase|password|enter .*key|recovery key \()")
# opalctl's console prompt for the root entry's recovery key.
ASK = r"Recovery key \(Admin1\) for drive \S+, range 1 \(root; \d+ tr(?:y|ies) left this boot\)"
# The boot script's steps, as the console shows them.
NET_STEP = r"fdekit: configuring the network for Tang"
UNLOCK_STEP = r"fdekit: unlocking Opal drives"


class SetupError(Exception):
    pass


# The guest's NICs, found by their MAC addresses.
TANG_MAC = "52:54:00:fd:e0:01"      # fdekit's: DHCP from QEMU's user network
STORAGE_MAC = "52:54:00:fd:e0:02"   # the test's: static, NVMe/TCP only
STORAGE_NET = "10.0.3.0/24"
STORAGE_HOST = "10.0.3.2"
STORAGE_CIDR = "10.0.3.15/24"
NET_MARK = "FDEKIT-NET"
STATE_MARK = "FDEKIT-STATE"
NETLOG_MARK = "FDEKIT-NETLOG"
LEFT_MARK = "FDEKIT-LEFTOVER"
# The shipped mkinitramfs settings (UMASK=0077 when a table exists).
CONF_SNIPPET = os.path.join(BOOT, "initramfs-tools", "conf.d", "fdekit-umask")


class Tap:
    def __init__(self, planned):
        self.n = 0
        self.failed = 0
        self.planned = planned
        print(f"1..{planned}", flush=True)

    def result(self, good, desc, diag=None):
        self.n += 1
        if not good:
            self.failed += 1
        print(f"{'ok' if good else 'not ok'} {self.n} - {desc}", flush=True)
        if not good and diag:
            self.diag(diag)
        return good

    def diag(self, text):
        for line in str(text).rstrip().splitlines()[-60:]:
            print(f"# {line}", flush=True)

    def bail_rest(self, reason, descs):
        for d in descs:
            self.result(False, f"{d} (not run: {reason})")


def run(cmd, **kw):
    """Run a setup command; raise SetupError with its output on failure."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    kw.setdefault("timeout", 300)
    p = subprocess.run(cmd, **kw)
    if p.returncode != 0:
        out = p.stdout.decode(errors="replace") if isinstance(p.stdout, bytes) else (p.stdout or "")
        if isinstance(p.stderr, bytes):
            out += p.stderr.decode(errors="replace")
        raise SetupError(f"{' '.join(map(str, cmd))}: exit {p.returncode}\n{out}")
    return p


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, proc, seconds=15):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.1)
    return False


class Server:
    """A host process listening on a loopback port, stopped by SIGTERM."""

    def __init__(self, name, cmd, port, log):
        self.name, self.cmd, self.port, self.log = name, cmd, port, log
        self.proc = None

    def start(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL,
                                         start_new_session=True)
        if not wait_listening(self.port, self.proc):
            self.stop()
            with open(self.log, errors="replace") as f:
                raise SetupError(f"{self.name} did not listen on 127.0.0.1:{self.port}\n{f.read()[-2000:]}")

    def stop(self):
        """Stop it; returns its exit status (None if it had to be killed)."""
        if not self.proc:
            return 0
        p, self.proc = self.proc, None
        if p.poll() is not None:
            return p.returncode
        os.killpg(p.pid, signal.SIGTERM)
        try:
            return p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            return None


class Env:
    """Everything on the host side of one test run."""

    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.opalctl = args.opalctl          # what goes into the initramfs
        self.opalctl_sim = args.opalctl_sim  # host side: --transport sedsim
        self.sedsim = args.sedsim
        self.servers = []

    def path(self, *p):
        return os.path.join(self.work, *p)

    def cleanup(self):
        for s in self.servers:
            s.stop()

    # --- the root file system ---------------------------------------------
    def make_rootfs(self):
        root = self.path("rootfs")
        for d in ("bin", "sbin", "proc", "sys", "dev", "run", "tmp"):
            os.makedirs(os.path.join(root, d), exist_ok=True)
        shutil.copy2(self.args.busybox, os.path.join(root, "bin", "busybox"))
        os.symlink("busybox", os.path.join(root, "bin", "sh"))
        data = os.urandom(1 << 20)
        with open(os.path.join(root, "data.bin"), "wb") as f:
            f.write(data)
        self.data_sha = hashlib.sha256(data).hexdigest()
        init = os.path.join(root, "sbin", "init")
        with open(init, "w") as f:
            f.write(f"""#!/bin/busybox sh
B=/bin/busybox
[ -r /proc/mounts ] || $B mount -t proc proc /proc
echo
echo "{ROOT_MARK} $($B uname -r)"
echo "{DATA_MARK} $($B sha256sum /data.bin | $B cut -d' ' -f1)"
echo "FDEKIT-ROOT-SOURCE $($B awk '$2 == "/" {{ print $1 }}' /proc/mounts | $B tail -n1)"
# The network as the real system finds it: per interface, its MAC, its
# state and its IPv4 addresses.
[ -d /sys/class/net ] || $B mount -t sysfs sysfs /sys
for d in /sys/class/net/*; do
	n=${{d##*/}}
	[ "$n" = lo ] && continue
	echo "{NET_MARK} $n $($B cat $d/address) $($B cat $d/operstate)" \\
		$($B ip -o -4 addr show dev $n | $B awk '{{ print $4 }}')
done
# What the initramfs recorded of its unlock (opalctl --state-dir /run/fdekit,
# /run handed over to the root): what the sleep guard reads.
for f in /run/fdekit/*; do
	[ -f "$f" ] && echo "{STATE_MARK} ${{f##*/}} $($B tr '\n' ' ' <"$f")"
done
# Nothing of the unlock may outlive the initramfs: no clevis, curl, jose or
# opalctl process, no curl directory of opalctl's.
for c in /proc/[0-9]*/comm; do
	case $($B cat "$c" 2>/dev/null) in
	clevis* | curl | jose | opalctl | tpm2_*) echo "{LEFT_MARK} process $($B cat "$c" 2>/dev/null)" ;;
	esac
done
for d in /run/fdekit-curl.*; do
	[ -e "$d" ] && echo "{LEFT_MARK} $d"
done
# What the initramfs's network setup said (kept off the console, in /run).
[ -f /run/fdekit-network.log ] && $B sed 's/^/{NETLOG_MARK} /' /run/fdekit-network.log
$B sync
$B poweroff -f
""")
        os.chmod(init, 0o755)
        self.root_uuid = str(uuid.uuid4())
        img = self.path("root.img")
        if os.path.exists(img):
            os.unlink(img)
        run(["mkfs.ext4", "-q", "-F", "-U", self.root_uuid, "-L", "fdekitroot",
             "-d", root, img, f"{R1_LENGTH // 2}k"])
        return img

    # --- the drive ----------------------------------------------------------
    def make_drive(self, img):
        d = self.drive = self.path("drive")
        os.makedirs(d)
        # A key one can type at the console prompt: 32 hex digits.
        self.admin_key = self.path("admin.key")
        self.admin_key_text = os.urandom(16).hex()
        with open(self.admin_key, "w") as f:
            f.write(self.admin_key_text)
        os.chmod(self.admin_key, 0o600)
        run([self.sedsim, "create", d, "--blocks", str(BLOCKS), "--serial", SERIAL,
             "--try-limit", "5"])
        # An MBR in the global range (unlocked): partition 1 = range 1.
        disk = self.path("mbr.img")
        with open(disk, "wb") as f:
            f.truncate(BLOCKS * 512)
        run(["sfdisk", "-q", disk],
            input=f"label: dos\nstart={R1_START}, size={R1_LENGTH}, type=83\n".encode())
        with open(disk, "rb") as f:
            mbr = f.read(512)
        run([self.sedsim, "write", d, "0", "1"], input=mbr)
        run([self.opalctl_sim, "setup", d, "--transport", "sedsim", "--keyfile", self.admin_key,
             "--range", "1", "--start", str(R1_START), "--length", str(R1_LENGTH),
             "--yes-destroy-data"])
        with open(img, "rb") as f:
            run([self.sedsim, "write", d, str(R1_START), str(R1_LENGTH)], stdin=f)
        run([self.opalctl_sim, "lock", d, "--transport", "sedsim", "--keyfile", self.admin_key,
             "--range", "1"])

    def write_range1(self, img):
        """Replace what locking range 1 holds (unlocked with the Admin1 key
        for the write, locked again after it)."""
        run([self.opalctl_sim, "unlock", self.drive, "--transport", "sedsim", "--keyfile",
             self.admin_key, "--range", "1"])
        with open(img, "rb") as f:
            run([self.sedsim, "write", self.drive, str(R1_START), str(R1_LENGTH)], stdin=f)
        run([self.opalctl_sim, "lock", self.drive, "--transport", "sedsim", "--keyfile",
             self.admin_key, "--range", "1"])

    def make_lvm_root(self, vg, lv):
        """Partition 1 (range 1) as an LVM physical volume of the volume
        group vg, whose logical volume lv holds the root file system.

        The host may have no device mapper (it has none here), and the LVM
        tools take only block devices, not a regular file: a loop device
        gives them the image, and --driverloaded n makes them write the
        metadata without ever asking for device-mapper (lvcreate -an -Zn:
        no activation, no zeroing through a mapping). The ext4 image is
        then written where the LV's extents are, as `pvs`/`lvs` report
        them. LVM_SYSTEM_DIR points at a configuration of the test's own:
        it sees only that loop device, keeps no metadata backups and no
        devices file, and so reads and writes nothing in the host's
        /etc/lvm. Returns the image."""
        img = self.path("lvm.img")
        with open(img, "wb") as f:
            f.truncate(R1_LENGTH * 512)
        fs = self.path("lvm-root.img")
        lv_mib = 6   # of the range's 8 MiB: 1 MiB before the first extent, metadata
        run(["mkfs.ext4", "-q", "-F", "-U", self.root_uuid, "-d", self.path("rootfs"),
             fs, f"{lv_mib}M"])
        sysdir = self.path("lvm-etc")
        os.makedirs(sysdir, exist_ok=True)
        loop = run(["losetup", "--find", "--show", img],
                   stderr=subprocess.PIPE).stdout.decode().strip()
        try:
            with open(os.path.join(sysdir, "lvm.conf"), "w") as f:
                f.write("# the boot test's own: only its loop device, nothing kept in /etc\n"
                        "devices {\n"
                        f'  filter = [ "a|^{loop}$|", "r|.*|" ]\n'
                        "  use_devicesfile = 0\n"
                        "  obtain_device_list_from_udev = 0\n"
                        "}\n"
                        "activation {\n  udev_sync = 0\n  udev_rules = 0\n  monitoring = 0\n}\n"
                        "backup {\n  backup = 0\n  archive = 0\n}\n")
            lvm_env = dict(os.environ, LVM_SYSTEM_DIR=sysdir, LVM_SUPPRESS_FD_WARNINGS="1")

            def lvm(*a):
                return run(["lvm", a[0], "--driverloaded", "n", *a[1:]], env=lvm_env,
                           stderr=subprocess.PIPE).stdout.decode().strip()
            lvm("pvcreate", "-y", loop)
            lvm("vgcreate", "-s", "1M", vg, loop)
            lvm("lvcreate", "-an", "-Zn", "-Wn", "-y", "-n", lv, "-L", f"{lv_mib}M", vg)
            pe_start = int(lvm("pvs", "--noheadings", "--units", "b", "--nosuffix",
                               "-o", "pe_start", loop))
            extent = int(lvm("vgs", "--noheadings", "--units", "b", "--nosuffix",
                             "-o", "vg_extent_size", vg))
            ranges = lvm("lvs", "--noheadings", "-o", "seg_pe_ranges", f"{vg}/{lv}")
        finally:
            run(["losetup", "-d", loop])
        m = re.fullmatch(rf"{re.escape(loop)}:(\d+)-(\d+)", ranges)
        if not m or (int(m.group(2)) - int(m.group(1)) + 1) * extent != lv_mib << 20:
            raise SetupError(f"{vg}/{lv}: expected one segment of {lv_mib} MiB, lvs says {ranges!r}")
        with open(fs, "rb") as i, open(img, "r+b") as o:
            o.seek(pe_start + int(m.group(1)) * extent)
            shutil.copyfileobj(i, o)
        return img

    def range1_locked(self):
        """True when a host read of range 1 is refused (sedsim exit 3)."""
        p = subprocess.run([self.sedsim, "read", self.drive, str(R1_START), "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
        return p.returncode == 3

    def power_cycle(self):
        run([self.sedsim, "power-cycle", self.drive])

    def start_drive(self):
        self.nvme_port = free_port()
        s = Server("sedsim serve-nvme",
                   [self.sedsim, "serve-nvme", self.drive, "--port", str(self.nvme_port),
                    "--nqn", NQN], self.nvme_port, self.path("serve-nvme.log"))
        s.start()
        self.servers.append(s)
        self.nvme = s

    def stop_drive(self):
        rc = self.nvme.stop()
        self.servers.remove(self.nvme)
        return rc

    # --- Tang ---------------------------------------------------------------
    def start_tang(self, name):
        keys = self.path(f"tang-{name}")
        os.makedirs(keys, exist_ok=True)
        run([self.args.tangd_keygen, keys])
        wrapper = self.path("tangd.sh")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\n# one HTTP request on stdin/stdout; its log to a file\n'
                    f'exec {self.args.tangd} "$1" 2>>"$2"\n')
        os.chmod(wrapper, 0o755)
        port = free_port()
        log = self.path(f"tang-{name}.log")
        open(log, "a").close()
        s = Server(f"tang {name}",
                   ["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr",
                    f"EXEC:{wrapper} {keys} {log}"], port, self.path(f"socat-{name}.log"))
        s.start()
        self.servers.append(s)
        adv = self.path(f"tang-{name}.adv")
        run(["curl", "-sf", "--max-time", "10", "-o", adv, f"http://127.0.0.1:{port}/adv"])
        return {"name": name, "port": port, "log": log, "adv": adv,
                "url": f"http://10.0.2.2:{port}", "server": s}

    def client_view(self, tangs, cmd, timeout=300):
        """Run cmd on the host as a client on the guests' network sees the
        Tang servers (http://10.0.2.2:PORT, the URLs their JWEs name): in a
        network namespace of its own whose loopback holds 10.0.2.2, each
        port relayed to the host's Tang through a Unix socket. Nothing else
        is done for cmd. Returns the CompletedProcess (not checked)."""
        relays, script = [], "ip link set lo up && ip addr add 10.0.2.2/32 dev lo || exit 125\n"
        try:
            for t in tangs:
                sock = self.path(f"relay-{t['name']}.sock")
                if os.path.exists(sock):
                    os.unlink(sock)
                relays.append(subprocess.Popen(
                    ["socat", f"UNIX-LISTEN:{sock},fork", f"TCP:127.0.0.1:{t['port']}"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                script += (f"socat TCP-LISTEN:{t['port']},bind=10.0.2.2,fork,reuseaddr "
                           f"UNIX-CONNECT:{sock} & pids=\"$pids $!\"\n")
            script += ('for i in $(seq 50); do curl -s -o /dev/null -m 1 "$FDEKIT_PROBE" && break; '
                       'sleep 0.1; done\n"$@"; rc=$?; kill $pids; exit $rc\n')
            env = dict(os.environ, FDEKIT_PROBE=tangs[0]["url"] + "/adv")
            return subprocess.run(["unshare", "-n", "sh", "-c", script, "sh", *cmd], env=env,
                                  stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        finally:
            for r in relays:
                r.terminate()
                r.wait()

    def start_swtpm_tcp(self):
        """The software TPM on loopback TCP, for sealing on the host
        (TPM2TOOLS_TCTI=swtpm:...). Its state directory outlives it: the
        guest's TPM is the same TPM afterwards."""
        self.tpm_state = self.path("tpm")
        os.makedirs(self.tpm_state, exist_ok=True)
        # The swtpm TCTI finds the control channel on the next port.
        for _ in range(20):
            port = free_port()
            try:
                with socket.socket() as probe:
                    probe.bind(("127.0.0.1", port + 1))
                break
            except OSError:
                continue
        ctrl = port + 1
        s = Server("swtpm (host)",
                   ["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.tpm_state}",
                    "--server", f"type=tcp,port={port},bindaddr=127.0.0.1",
                    "--ctrl", f"type=tcp,port={ctrl},bindaddr=127.0.0.1",
                    "--flags", "not-need-init,startup-clear"], port, self.path("swtpm.log"))
        s.start()
        self.servers.append(s)
        return s, f"swtpm:host=127.0.0.1,port={port}"

    def start_swtpm_qemu(self):
        """The same TPM for QEMU's tpm-tis device (control channel on a UNIX
        socket, data on a descriptor QEMU passes)."""
        sock = self.path("tpm", "swtpm.sock")
        if os.path.exists(sock):
            os.unlink(sock)
        log = open(self.path("swtpm.log"), "ab")
        p = subprocess.Popen(["swtpm", "socket", "--tpm2", "--tpmstate", f"dir={self.tpm_state}",
                              "--ctrl", f"type=unixio,path={sock}", "--terminate"],
                             stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                             start_new_session=True)
        log.close()
        end = time.monotonic() + 15
        while not os.path.exists(sock):
            if p.poll() is not None or time.monotonic() > end:
                p.kill()
                p.wait()
                raise SetupError("swtpm for QEMU did not start")
            time.sleep(0.1)
        s = Server("swtpm (qemu)", [], 0, "")
        s.proc = p
        self.servers.append(s)
        return s, ["-chardev", f"socket,id=chrtpm,path={sock}",
                   "-tpmdev", "emulator,id=tpm0,chardev=chrtpm",
                   "-device", "tpm-tis,tpmdev=tpm0"]

    def start_silent(self):
        """A server that accepts connections and never answers: a Tang
        server that hangs."""
        port = free_port()
        s = Server("silent server", ["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr",
                                     "EXEC:sleep 3600"], port, self.path("silent.log"))
        s.start()
        self.servers.append(s)
        return {"url": f"http://10.0.2.2:{port}", "server": s}

    @staticmethod
    def tang_requests(tang):
        with open(tang["log"], errors="replace") as f:
            return sum(1 for line in f if "/rec/" in line)

    def bind(self, name, pin, config, env=None):
        """A key slot: opalctl bind makes a user with a random PIN, grants it
        range 1 and seals the PIN into a JWE. Returns (JWE, user number)."""
        jwe = self.path(f"{name}.jwe")
        out = run([self.opalctl_sim, "bind", self.drive, "--transport", "sedsim",
                   "--keyfile", self.admin_key, "--range", "1", "--pin", pin,
                   "--config", config, "--jwe", jwe],
                  env=env).stdout.decode(errors="replace")
        m = re.search(r"clevis:\S+ user=(\d+)", out)
        if not m:
            raise SetupError(f"opalctl bind printed no opaltab line:\n{out}")
        return jwe, int(m.group(1))

    def seal(self, name, pin, config, secret_file):
        jwe = self.path(f"{name}.jwe")
        with open(secret_file, "rb") as i, open(jwe, "wb") as o:
            run(["clevis", "encrypt", pin, config], stdin=i, stdout=o, stderr=subprocess.PIPE)
        return jwe

    # --- initramfs ----------------------------------------------------------
    def write_table(self, name, entries):
        tab = self.path(f"opaltab-{name}")
        with open(tab, "w") as f:
            f.write("# NAME DEVICE RANGES KEY OPTIONS (written by the boot test)\n")
            for e in entries:
                f.write(e + "\n")
        return tab

    def mkinitramfs(self, kver, table, tag, crypttab=None, umask=None):
        """An initramfs made by Debian's mkinitramfs with the test's own
        configuration directory. crypttab: a crypttab(5) for Debian's
        cryptroot hook (cryptsetup-initramfs), which reads /etc/crypttab
        unless its conf-hook, /etc/cryptsetup-initramfs/conf-hook (a fixed
        path, not under the -d directory), sets TABFILE. mkinitramfs then
        runs in a mount namespace of its own where a directory of the
        test's own, holding that conf-hook, is bind-mounted over
        /etc/cryptsetup-initramfs: the host's /etc is not written.
        umask: a UMASK of the test's instead of the shipped conf.d lines.
        mkinitramfs itself runs with umask 022, so that the image's mode
        comes from UMASK alone."""
        conf = self.path(f"initramfs-tools-{tag}")
        if os.path.exists(conf):
            shutil.rmtree(conf)
        for d in ("conf.d", "hooks", "scripts/local-top", "scripts/init-premount"):
            os.makedirs(os.path.join(conf, d))
        with open(os.path.join(conf, "initramfs.conf"), "w") as f:
            f.write("MODULES=list\nBUSYBOX=y\nKEYMAP=n\nCOMPRESS=zstd\nDEVICE=\n"
                    "NFSROOT=auto\nRUNSIZE=10%\nFSTYPE=auto\n")
        with open(os.path.join(conf, "modules"), "w") as f:
            f.write("virtio_pci\nvirtio_net\next4\n")
        # The test's settings (conf.d/fdekit, an admin's file) and, beside
        # them, the shipped conf.d/fdekit-umask as it is (installed, it is
        # in /usr/share/initramfs-tools/conf.d, which mkinitramfs reads
        # too; here it comes after the settings, which name the test's
        # table). umask: a UMASK of the test's instead.
        with open(os.path.join(conf, "conf.d", "fdekit"), "w") as f:
            f.write(f"FDEKIT_OPALCTL={self.opalctl}\nFDEKIT_OPALTAB={table}\n"
                    f"FDEKIT_BOOT_FUNCTIONS={BOOT}/fdekit-boot-functions\n"
                    f"FDEKIT_TIMEOUT={self.args.unlock_timeout}\n")
            if umask is not None:
                f.write(f"UMASK={umask}\n")
        if umask is None:
            shutil.copy2(CONF_SNIPPET, os.path.join(conf, "conf.d", "fdekit-umask"))
        it = os.path.join(BOOT, "initramfs-tools")
        shutil.copy2(os.path.join(it, "hooks", "fdekit-opal"), os.path.join(conf, "hooks"))
        shutil.copy2(os.path.join(it, "scripts", "local-top", "fdekit-opal"),
                     os.path.join(conf, "scripts", "local-top"))
        # Test only: connect the drive over NVMe/TCP before local-top.
        shutil.copy2(os.path.join(HERE, "initramfs-tools", "nvmf-connect"),
                     os.path.join(conf, "scripts", "init-premount", "fdekit-test-nvmf"))
        for hook in self.args.extra_hook:
            shutil.copy2(hook, os.path.join(conf, "hooks"))
        out = self.path(f"initrd-{tag}.img")
        cmd = ["mkinitramfs", "-d", conf, "-o", out, kver]
        if crypttab:
            if not os.path.exists("/usr/share/initramfs-tools/hooks/cryptroot"):
                raise SetupError("no cryptroot hook: install cryptsetup-initramfs (scripts/bootstrap)")
            hookconf = self.path(f"cryptsetup-initramfs-{tag}")
            os.makedirs(hookconf, exist_ok=True)
            with open(os.path.join(hookconf, "conf-hook"), "w") as f:
                f.write(f"# the boot test's crypttab, not the host's\nTABFILE={crypttab}\n")
            cmd = (["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
                   + ["sh", "-ec", 'mount --bind "$1" /etc/cryptsetup-initramfs; shift; exec "$@"',
                      "sh", hookconf] + cmd)
        run(cmd, timeout=600, preexec_fn=lambda: os.umask(0o022))
        listing = run(["lsinitramfs", out]).stdout.decode(errors="replace").split()
        return out, set(listing)

    def dracut(self, kver, table, tag, extra_modules=""):
        """An initramfs made by dracut (dracut-core, no systemd in it) with
        fdekit-opal and the test's nvmf module. Neither is installed: dracut
        runs from a base directory of its own whose modules.d links every
        module of /usr/lib/dracut and adds those two."""
        base = self.path(f"dracut-base-{tag}")
        if os.path.exists(base):
            shutil.rmtree(base)
        os.makedirs(os.path.join(base, "modules.d"))
        sysbase = "/usr/lib/dracut"
        for e in os.listdir(sysbase):
            if e != "modules.d":
                os.symlink(os.path.join(sysbase, e), os.path.join(base, e))
        for m in os.listdir(os.path.join(sysbase, "modules.d")):
            os.symlink(os.path.join(sysbase, "modules.d", m), os.path.join(base, "modules.d", m))
        os.symlink(os.path.join(BOOT, "dracut", "90fdekit-opal"),
                   os.path.join(base, "modules.d", "90fdekit-opal"))
        os.symlink(os.path.join(HERE, "dracut", "91fdekit-test-nvmf"),
                   os.path.join(base, "modules.d", "91fdekit-test-nvmf"))
        out = self.path(f"initrd-{tag}.img")
        env = dict(os.environ, dracutbasedir=base, FDEKIT_OPALCTL=self.opalctl,
                   FDEKIT_OPALTAB=table, FDEKIT_TIMEOUT=str(self.args.unlock_timeout),
                   FDEKIT_BOOT_FUNCTIONS=os.path.join(BOOT, "fdekit-boot-functions"))
        confdir = self.path(f"dracut-conf-{tag}")
        os.makedirs(confdir, exist_ok=True)
        run(["dracut", "--force", "--no-hostonly", "--no-early-microcode",
             "--conf", "/dev/null", "--confdir", confdir, "--tmpdir", self.work,
             "--modules", "base rootfs-block kernel-modules udev-rules network-legacy network "
                          "fdekit-opal fdekit-test-nvmf " + extra_modules,
             "--add-drivers", "virtio_pci virtio_net ext4",
             "--compress", "zstd", "--kver", kver, out], env=env, timeout=600)
        listing = run(["lsinitrd", out]).stdout.decode(errors="replace")
        files = set()
        for line in listing.splitlines():
            parts = line.split()
            if len(parts) >= 9 and parts[0][:1] in "-dlcb":
                files.add(parts[8])
        return out, files

    # --- QEMU ---------------------------------------------------------------
    def boot(self, kver, initrd, append, answers=(), timeout=None, qemu_args=(), root=None,
             splash=False, tang_net="user", drive_net="storage", net_args=None, events=(),
             watch=None):
        """Boot; returns (console text, qemu exit status or None on timeout,
        answers written). answers: (regex, text) pairs typed on the serial
        console the first time the regex matches. root: the root= device
        (default the root file system's UUID). splash: start plymouth;
        otherwise plymouth.enable=0, since every image mkinitramfs makes
        here carries plymouth once the plymouth package is installed (its
        hook is unconditional) and it starts unless told not to.

        Two NICs: the Tang NIC (first, TANG_MAC), configured by the
        product from ip=dhcp BOOTIF=<its MAC>, on QEMU's user network
        (DHCP, the host's loopback at 10.0.2.2) or, with tang_net="none",
        on a hub port with nothing behind it (no DHCP, no Tang); and the
        storage NIC (STORAGE_MAC, 10.0.3.0/24), which the test's
        init-premount script configures statically to reach the drive.
        drive_net="tang": the drive is reached at 10.0.2.2 through the
        Tang NIC instead (a test module that cannot configure the storage
        NIC). net_args: the network part of the command line instead of
        "ip=dhcp BOOTIF=01-<the Tang NIC's MAC>".

        events: (seconds, regex or None, fn): fn() is called once, when
        that many seconds have passed since QEMU started and the regex has
        matched the console. watch: {name: regex}; afterwards
        self.last_marks holds, per name, the seconds from QEMU's start to
        the regex's first match (absent: never), and "end"."""
        timeout = timeout or self.args.boot_timeout
        root = root or f"UUID={self.root_uuid}"
        bootif = "01-" + TANG_MAC.replace(":", "-")
        if drive_net == "storage":
            drive = (f"fdekit.test.storage={STORAGE_MAC},{STORAGE_CIDR} "
                     f"fdekit.test.nvmf={STORAGE_HOST},{self.nvme_port},{NQN}")
        else:
            drive = f"fdekit.test.nvmf=10.0.2.2,{self.nvme_port},{NQN}"
        if net_args is None:
            net_args = f"ip=dhcp BOOTIF={bootif}"
        cmdline = (f"console=ttyS0 panic=-1 root={root} {net_args} "
                   f"{'splash' if splash else 'plymouth.enable=0'} "
                   f"{drive} {append}").strip()
        tang_netdev = {"user": "user,id=n0", "none": "hubport,id=n0,hubid=1"}[tang_net]
        cmd = [self.args.qemu, "-accel", self.args.accel, "-cpu", "max", "-m", "1024",
               "-smp", "1", "-nodefaults", "-display", "none", "-no-reboot",
               "-serial", "stdio", "-monitor", "none",
               "-netdev", tang_netdev, "-device", f"virtio-net-pci,netdev=n0,mac={TANG_MAC}",
               "-netdev", f"user,id=st,net={STORAGE_NET},host={STORAGE_HOST}",
               "-device", f"virtio-net-pci,netdev=st,mac={STORAGE_MAC}",
               "-kernel", f"/boot/vmlinuz-{kver}", "-initrd", initrd, "-append", cmdline,
               *qemu_args]
        log = self.path(f"console-{os.path.basename(initrd)}-{int(time.time())}.log")
        p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
        started = time.monotonic()
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        buf = b""
        text = ""
        pending = list(answers)
        waiting = list(events)
        watch = dict(watch or {})
        marks = self.last_marks = {}
        typed = []
        end = time.monotonic() + timeout
        rc = None
        due = []     # (time, regex, text): answers to type
        while True:
            now = time.monotonic()
            for ev in list(waiting):
                if now - started >= ev[0] and (ev[1] is None or re.search(ev[1], text)):
                    waiting.remove(ev)
                    marks[f"event:{ev[2].__name__}"] = now - started
                    try:
                        ev[2]()
                    except (SetupError, OSError) as e:
                        marks[f"event-failed:{ev[2].__name__}"] = str(e)
            for d in [d for d in due if d[0] <= now]:
                p.stdin.write(d[2].encode() + b"\n")
                p.stdin.flush()
                typed.append(d[1])
                due.remove(d)
            left = end - now
            if left <= 0:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                break
            if not sel.select(timeout=min(left, 0.2)):
                if p.poll() is not None:
                    rc = p.returncode
                    break
                continue
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                rc = p.wait()
                break
            buf += chunk
            text = ANSI.sub("", buf.decode(errors="replace"))
            for name, rx in list(watch.items()):
                if re.search(rx, text, re.M):
                    marks[name] = time.monotonic() - started
                    del watch[name]
            for pair in list(pending):
                if re.search(pair[0], text):
                    # Typed a second after the prompt shows, as a person
                    # would: a program may turn echo off (and flush what
                    # was typed) just after printing its prompt.
                    due.append((time.monotonic() + 1.0, pair[0], pair[1]))
                    pending.remove(pair)
        sel.close()
        marks["end"] = time.monotonic() - started
        text = ANSI.sub("", buf.decode(errors="replace"))
        with open(log, "w") as f:
            f.write(text)
        return text, rc, typed


def root_result(text, want_sha):
    """(reached, data intact) from a console log."""
    reached = re.search(rf"^{ROOT_MARK} ", text, re.M) is not None
    m = re.search(rf"^{DATA_MARK} ([0-9a-f]{{64}})", text, re.M)
    return reached, bool(m and m.group(1) == want_sha)


def locked_at_boot(text):
    """The guest kernel's reads of the locked range failed with Access
    Denied (NVMe status 0x286) before fdekit's script ran."""
    start = text.find("fdekit: unlocking Opal drives")
    head = text if start < 0 else text[:start]
    return re.search(r"nvme\d+n1: I/O Cmd.*sct 0x2 / sc 0x86", head) is not None


def bounded_attempts(text, n):
    """opalctl reported failed attempts 1..n of n to get the key, no more."""
    seen = [int(a) for a in re.findall(rf"attempt (\d+) of {n}\b", text)]
    return sorted(set(seen)) == list(range(1, n + 1))


def tail(text, n=40):
    return "\n".join(text.rstrip().splitlines()[-n:])


def kernel_opal(kver):
    """The kernel's sed-opal attaches to NVMe fabrics controllers from 6.2 on."""
    m = re.match(r"(\d+)\.(\d+)", kver)
    return (int(m.group(1)), int(m.group(2))) >= (6, 2)


def opal_options(kver, timeout=60):
    return f"timeout={timeout}" + ("" if kernel_opal(kver) else ",transport=nvme")


def how(kver):
    return ("kernel sed-opal ioctls on the namespace" if kernel_opal(kver) else
            f"NVMe Security Send/Receive on the controller: {kver} has no sed-opal for fabrics")


def dracut_net():
    """How a dracut boot reaches the drive (keywords of Env.boot): through
    the storage NIC, which the dracut test module configures, and no
    ip=/BOOTIF=, as the fdekit module brings the Tang NIC up itself
    (BOOTIF= would make dracut wait for that NIC's DHCP)."""
    return {"drive_net": "storage", "net_args": ""}


def step(tap, descs, fn):
    """Run one scenario: fn returns one (good, diagnostics) per description;
    a setup error fails all of them."""
    start = time.monotonic()
    try:
        results = fn()
    except (SetupError, OSError, subprocess.TimeoutExpired) as e:
        tap.diag(e)
        results = [(False, "setup failed (above)")] * len(descs)
    for desc, (good, diag) in zip(descs, results):
        tap.result(good, desc, diag)
    tap.diag(f"{fn.__name__}: {time.monotonic() - start:.0f} s")


def net_state(text):
    """{MAC: (interface, operstate, [IPv4 address/prefix])}, as the booted
    root's /sbin/init printed them."""
    return {m.group(2): (m.group(1), m.group(3), m.group(4).split())
            for m in re.finditer(rf"^{NET_MARK} (\S+) (\S+) (\S+)(.*)$", text, re.M)}


def tang_nic_down(text):
    """(good, what): in the booted root the Tang NIC, which had an address
    from DHCP in the initramfs (IP-Config said so, when dhcp is true), has
    none and is down, and the storage NIC still has its own."""
    st = net_state(text)
    tang, storage = st.get(TANG_MAC), st.get(STORAGE_MAC)
    good = (tang is not None and not tang[2] and tang[1] == "down"
            and storage is not None and storage[2] == [STORAGE_CIDR])
    return good, f"booted root's network: Tang NIC {tang}, storage NIC {storage}"


def state_of(text, name):
    """What the booted root printed of /run/fdekit/NAME, as a dict."""
    m = re.search(rf"^{STATE_MARK} {re.escape(name)} (.*)$", text, re.M)
    return dict(kv.split("=", 1) for kv in m.group(1).split() if "=" in kv) if m else {}


def boot_expect_root(env, kver, initrd, tangs, append="", answers=(), qemu_args=(), root=None,
                     splash=False, unanswered_prompt=False, **boot_kw):
    """Serve the drive (a power-on), boot, stop the drive. Good when the
    guest saw range 1 locked, reached root with the data intact, asked for
    nothing (unless answers were given; with unanswered_prompt, asked and
    was given nothing) and Tang answered. boot_kw go to env.boot."""
    env.start_drive()
    before = [env.tang_requests(t) for t in tangs]
    try:
        text, rc, typed = env.boot(kver, initrd, append, answers, qemu_args=qemu_args, root=root,
                                   splash=splash, **boot_kw)
    finally:
        env.stop_drive()
    reached, intact = root_result(text, env.data_sha)
    asked = PROMPT.search(text)
    recs = [env.tang_requests(t) - b for t, b in zip(tangs, before)]
    denied = locked_at_boot(text)
    if unanswered_prompt:
        prompt_ok = asked is not None and not typed
    else:
        prompt_ok = (len(typed) == len(answers)) if answers else not asked
    # Nothing of the unlock outlives the initramfs (the root's init lists it).
    left = re.findall(rf"^{LEFT_MARK} (.*)$", text, re.M)
    good = (reached and intact and prompt_ok and denied and not left
            and (not tangs or sum(recs) >= 1))
    diag = (f"locked at boot: {denied}, root reached: {reached}, data intact: {intact}, "
            f"prompt: {asked.group(0) if asked else None}, answered: {typed}, "
            f"tang requests: {recs}, left after switch_root: {left}, qemu exit: {rc}\n"
            f"{tail(text)}")
    return good, diag, text, recs


def harness_args(description, kver_help):
    """The options of every boot test built on this harness (Env reads them)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--opalctl", required=True, help="the opalctl the initramfs gets")
    ap.add_argument("--opalctl-sim", required=True,
                    help="an opalctl with the sedsim transport, for the host side")
    ap.add_argument("--sedsim", required=True)
    ap.add_argument("--work", required=True, help="scratch directory (emptied first)")
    ap.add_argument("--kver", action="append", default=[], help=kver_help)
    ap.add_argument("--busybox", default="/bin/busybox")
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--accel", default=os.environ.get("FDEKIT_QEMU_ACCEL", "tcg"))
    ap.add_argument("--tangd", default="/usr/libexec/tangd")
    ap.add_argument("--tangd-keygen", default="/usr/libexec/tangd-keygen")
    ap.add_argument("--boot-timeout", type=int, default=300, help="seconds per boot")
    return ap


def guest_kernels(wanted):
    """The kernels to boot (wanted, or every /boot/vmlinuz-* with modules),
    those whose sed-opal reaches NVMe over fabrics first. None found: a
    'Bail out!' line (meson registers the boot tests only when kernels are
    installed, so none here is a broken setup, not a pass) and []."""
    kvers = wanted or [os.path.basename(v)[len("vmlinuz-"):] for v in os.listdir("/boot")
                       if v.startswith("vmlinuz-")]
    kvers = sorted((k for k in kvers if os.path.isdir(f"/lib/modules/{k}")),
                   key=lambda k: (not kernel_opal(k), k))
    if not kvers:
        print("Bail out! no kernel in /boot with modules in /lib/modules: run scripts/bootstrap",
              flush=True)
    return kvers


def main():
    ap = harness_args(__doc__.splitlines()[0],
                      "guest kernel release (repeatable; default every /boot/vmlinuz-*)")
    ap.add_argument("--full", action="store_true",
                    default=os.environ.get("FDEKIT_BOOT_FULL", "") not in ("", "0"),
                    help="also the long scenarios (or FDEKIT_BOOT_FULL=1)")
    ap.add_argument("--unlock-timeout", type=int, default=90,
                    help="FDEKIT_TIMEOUT of the generated initramfs")
    ap.add_argument("--extra-hook", action="append", default=[],
                    help="an additional initramfs-tools hook (debugging)")
    ap.add_argument("--demo", action="store_true",
                    help="plain output: one boot on the newest kernel, showing what happens")
    args = ap.parse_args()

    kvers = guest_kernels(args.kver)
    if not kvers:
        return 2
    first = kvers[0]
    dracut_kvers = kvers if args.full else [first]
    if args.demo:
        return demo(args, first)

    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    env = Env(args)
    t = {}

    per_kernel = lambda k: [
        f"{k}: mkinitramfs -d CONFDIR with the fdekit-opal hook carries opalctl, the table, the JWE, clevis, curl, jose",
        f"{k}: boot: the drive, locked at boot, is unlocked from Tang with no prompt ({how(k)}), root reached, data intact",
        f"{k}: power cycle (serve-nvme stopped, drive power-cycled): range 1 locked again",
        f"{k}: boot after the power cycle: unlocked again from Tang with no prompt, root reached, data intact",
        f"{k}: after the unlock fdekit took down the Tang NIC it had configured (DHCP): in the booted root it has no address and is down, while the storage NIC that carries the drive keeps its own",
        f"{k}: the booted root finds what the initramfs unlocked in /run/fdekit/root: range 1, "
        f"{'saved for S3 but' if kernel_opal(k) else 'not saved for S3 and'} not unlocked again on resume (NVMe over fabrics): what the sleep guard holds suspend off for",
    ]
    dracut_descs = lambda k: [
        f"{k}: dracut with the fdekit-opal module carries opalctl, the table, the JWE, clevis, curl and the udev rule hook that brings the Tang NIC up (no rd.neednet)",
        f"{k}: dracut boot: the drive, locked at boot, is unlocked from Tang with no prompt ({how(k)}), root reached, data intact",
    ]
    off_desc = [f"{first}: fdekit.opal=0: no unlock, no Tang request, range 1 stays locked and the boot ends without root (panic=-1)"]
    warm_desc = [f"{first}: a reboot that does not cut the drive's power (serve-nvme kept running): the range stays unlocked (its LockOnReset holds power cycle and hardware reset, and a guest reboot resets the NVMe/TCP controller only, no TCG reset), as Documentation/nbde.md says; the next boot finds nothing locked and goes on with no key and no Tang request (already unlocked, recorded so)"]
    hook_descs = [
        f"{first}: without an unlock table the hook adds nothing (no opalctl, clevis or fdekit files)",
        f"{first}: a table with an unknown key source makes mkinitramfs fail and say which entry (opalctl check-table)",
        f"{first}: with UMASK=0022 and a JWE to carry, the hook refuses to build the image and says to set UMASK=0077",
    ]
    full_descs = [
        f"{first}: sss t=1 over two Tang servers, the first down: the second unlocks, no prompt",
        f"{first}: both Tang servers down (one refusing, one silent): one bounded attempt (8 s), then the console prompt within 28 s of the unlock's start (Tang retried behind it), answered with the Admin1 key (not echoed), unlocks",
        f"{first}: both Tang servers down, fallback=fail: 3 bounded attempts, then a clear failure, no prompt, the boot ends without root",
        f"{first}: a JWE sealing a wrong key for the slot: the drive's refusal is said with its cost in tries, and not retried (one Tang request)",
        f"{first}: tpm2 pin (swtpm behind QEMU's tpm-tis): the slot sealed to the TPM unlocks with no prompt, and fdekit brings up no network",
        f"{first}: sss t=2 over Tang and the tpm2 pin (swtpm behind QEMU's tpm-tis): both answer, the slot unlocks with no prompt",
        f"{first}: the same sss t=2 slot with its Tang server down: the TPM alone does not unlock: 3 bounded attempts, then fallback=fail, no prompt, the boot ends without root",
        f"{first}: plymouth running (splash): Tang refused, fallback=prompt asks through plymouth ask-for-password, the Admin1 key typed on the serial console (not echoed) unlocks",
        f"{first}: LVM on the SED range (initramfs-tools, Debian's lvm2 hook, root=/dev/VG/LV): Tang unlocks the range with no prompt, udev activates the volume group once the partition reappears, root on the LV, data intact",
        f"{first}: LVM on the SED range (dracut lvm): Tang unlocks the range with no prompt, the volume group is activated, root on the LV, data intact",
        f"{first}: LUKS2 on the SED range (dracut crypt): Tang unlocks the range, then the LUKS header appears and its passphrase opens root",
        f"{first}: LUKS2 on the SED range (initramfs-tools: Debian's cryptroot hook given a crypttab): Tang unlocks the range, then cryptroot asks for the passphrase, which opens root",
    ] if args.full else []
    matrix_descs = failure_descs(first)
    rotation_descs = [
        f"{first}: Tang rotates its keys: opalctl slots --report (no drive, no key; Tang as the guest sees it) says the slot needs regen, exit 15, and finds the JWE in the mkinitramfs image",
        f"{first}: opalctl regen --all seals the slot's PIN again for the new key (no drive, no admin key), keeps the old JWE as .old; with the initramfs rebuilt the report is clean, exit 0",
        f"{first}: the hidden keys deleted on the server: the image rebuilt after regen boots unattended (clevis, no prompt), root reached, data intact; the old JWE no longer opens",
    ]
    planned = (1 + sum(len(per_kernel(k)) for k in kvers) + sum(len(dracut_descs(k)) for k in dracut_kvers)
               + len(off_desc) + len(warm_desc) + len(hook_descs) + len(matrix_descs)
               + len(rotation_descs) + len(full_descs))
    tap = Tap(planned)

    try:
        def host():
            img = env.make_rootfs()
            env.make_drive(img)
            t["a"] = env.start_tang("a")
            t["jwe"], t["user"] = env.bind("root-tang", "tang",
                                           f'{{"url":"{t["a"]["url"]}","adv":"{t["a"]["adv"]}"}}')
            return [(env.range1_locked(), "a host read of range 1 was not refused")]
        host_desc = [f"host: a sedsim drive whose partition 1 = locking range 1 holds the ext4 root, "
                     f"locked (LockOnReset); Tang on a loopback port; a key slot bound to it (opalctl bind)"]
        step(tap, host_desc, host)
        if "jwe" not in t:
            tap.bail_rest("host setup failed", ["-"] * (planned - 1))
            return 1

        def entry(k, jwe, extra="", user=None, timeout=60):
            user = t["user"] if user is None else user
            opts = opal_options(k, timeout) + f",user={user}" + ("," + extra if extra else "")
            return f"root serial={SERIAL} 1 clevis:{jwe} {opts}"

        def it_image(k, table, tag):
            initrd, files = env.mkinitramfs(k, table, tag)
            need = ["usr/sbin/opalctl", "etc/fdekit/opaltab", "etc/fdekit/initramfs.conf",
                    t["jwe"].lstrip("/"), "usr/bin/clevis-decrypt-tang", "usr/bin/curl",
                    "usr/bin/jose", "usr/bin/bash", "scripts/local-top/fdekit-opal"]
            missing = [n for n in need if n not in files]
            return initrd, (not missing, f"missing: {missing}")

        for k in kvers:
            def kernel(k=k):
                table = env.write_table(f"it-{k}", [entry(k, t["jwe"])])
                initrd, image = it_image(k, table, f"it-{k}")
                if k == first:
                    t["initrd"] = initrd
                good, diag, text, _ = boot_expect_root(env, k, initrd, [t["a"]])
                env.power_cycle()
                locked = (env.range1_locked(), "a host read of range 1 was not refused")
                good2, diag2, _, _ = boot_expect_root(env, k, initrd, [t["a"]])
                down, what = tang_nic_down(text)
                dhcp = re.search(rf"^({NETLOG_MARK} )?IP-Config: \S+ complete", text, re.M) is not None
                said = re.search(r"fdekit: network: \S+ taken down", text) is not None
                st = state_of(text, "root")
                want = {"ranges": "1", "already_unlocked": "no", "resume_unlocks": "no",
                        "saved_for_resume": "yes" if kernel_opal(k) else "no"}
                state_ok = st.get("device", "").startswith("/dev/nvme") and all(
                    st.get(key) == v for key, v in want.items())
                return [image, (good, diag), locked, (good2, diag2),
                        (down and dhcp and said,
                         f"{what}, DHCP done in the initramfs: {dhcp}, fdekit said it took "
                         f"the NIC down: {said}\n{tail(text)}"),
                        (state_ok, f"/run/fdekit/root in the booted root: {st}, want {want}")]
            step(tap, per_kernel(k), kernel)

        for k in dracut_kvers:
            def dracut(k=k):
                table = env.write_table(f"dr-{k}", [entry(k, t["jwe"])])
                initrd, files = env.dracut(k, table, f"dr-{k}")
                need = ["usr/sbin/opalctl", "etc/fdekit/opaltab", t["jwe"].lstrip("/"),
                        "usr/bin/clevis-decrypt-tang", "usr/bin/curl", "usr/bin/jose",
                        "usr/lib/dracut/hooks/pre-udev/65-fdekit-opal-genrules.sh",
                        "usr/sbin/fdekit-opal-unlock"]
                missing = [n for n in need if n not in files]
                # With rd.neednet the initqueue would wait for a DHCP lease
                # that may never come: the module brings the network up itself.
                missing += [f"no {n}" for n in ["etc/cmdline.d/90fdekit-opal.conf"] if n in files]
                good, diag, _, _ = boot_expect_root(env, k, initrd, [t["a"]],
                                                    "rd.shell=0 rd.emergency=reboot rd.retry=60",
                                                    **dracut_net())
                return [(not missing, f"missing: {missing}"), (good, diag)]
            step(tap, dracut_descs(k), dracut)

        def opal_off():
            if "initrd" not in t:
                raise SetupError("no initramfs-tools image for the first kernel")
            env.start_drive()
            before = env.tang_requests(t["a"])
            try:
                start = time.monotonic()
                text, rc, _ = env.boot(first, t["initrd"], "fdekit.opal=0 rootdelay=10")
                took = time.monotonic() - start
            finally:
                env.stop_drive()
            reached, _ = root_result(text, env.data_sha)
            recs = env.tang_requests(t["a"]) - before
            said = "Opal unlock skipped (fdekit.opal=0)" in text
            env.power_cycle()
            good = (said and not reached and recs == 0 and rc == 0 and env.range1_locked())
            return [(good, f"message: {said}, root reached: {reached}, tang requests: {recs}, "
                           f"qemu exit: {rc}, {took:.0f} s\n{tail(text)}")]
        step(tap, off_desc, opal_off)

        def warm_reboot():
            """Two boots with the drive kept powered between them: the
            second is a warm reboot as far as the drive can tell."""
            if "initrd" not in t:
                raise SetupError("no initramfs-tools image for the first kernel")
            env.start_drive()
            try:
                first_text, _, _ = env.boot(first, t["initrd"], "")
                before = env.tang_requests(t["a"])
                text, rc, _ = env.boot(first, t["initrd"], "")
                recs = env.tang_requests(t["a"]) - before
            finally:
                env.stop_drive()
            env.power_cycle()
            first_ok = root_result(first_text, env.data_sha) == (True, True)
            reached, intact = root_result(text, env.data_sha)
            already = re.search(r"root: /dev/nvme\d+n1 range 1 already unlocked \(nothing on the "
                                r"drive is locked; no key used\)", text) is not None
            denied = locked_at_boot(text)
            st = state_of(text, "root")
            good = (first_ok and reached and intact and already and not denied and recs == 0
                    and not PROMPT.search(text) and st.get("already_unlocked") == "yes"
                    and env.range1_locked())
            return [(good, f"first boot reached root: {first_ok}, second: root {reached}, data "
                           f"{intact}, 'already unlocked' said: {already}, reads refused at boot: "
                           f"{denied}, tang requests: {recs}, state: {st}, qemu exit: {rc}\n"
                           f"{tail(text)}")]
        step(tap, warm_desc, warm_reboot)

        def hook_edges():
            _, files = env.mkinitramfs(first, env.path("no-such-opaltab"), "notable")
            # What the hook would add. (The local-top script ships in every
            # image and exits when there is no table.)
            extra = sorted(f for f in files if f.startswith(
                ("usr/sbin/opalctl", "etc/fdekit", "usr/lib/fdekit", "usr/bin/clevis", "usr/bin/jose")))
            bad = env.write_table("bad", [f"root serial={SERIAL} 1 vault:/etc/key {opal_options(first)}"])
            try:
                env.mkinitramfs(first, bad, "badtable")
                refused, why = False, "mkinitramfs succeeded"
            except SetupError as e:
                why = str(e)
                refused = "entry 'root'" in why and "vault:/etc/key" in why
            good_table = env.write_table("umask", [f"root serial={SERIAL} 1 clevis:{t['jwe']} "
                                                   f"{opal_options(first)},user={t['user']}"])
            try:
                env.mkinitramfs(first, good_table, "umask", umask="0022")
                umask_refused, umask_why = False, "mkinitramfs succeeded"
            except SetupError as e:
                umask_why = str(e)
                umask_refused = "UMASK=0077" in umask_why and t["jwe"] in umask_why
            return [(not extra, f"added: {extra}"), (refused, why), (umask_refused, umask_why)]
        step(tap, hook_descs, hook_edges)

        failure_matrix(tap, env, t, first, matrix_descs, entry)
        rotation(tap, env, first, rotation_descs, entry)

        if args.full:
            full_scenarios(tap, env, t, first, full_descs, entry)
    finally:
        env.cleanup()
    return 1 if tap.failed or tap.n != planned else 0


def image_file(env, initrd, name, tag):
    """The text of one file of an image made by mkinitramfs (in DIR/main
    when early archives precede the main one)."""
    out = env.path(f"unpacked-{tag}")
    if os.path.exists(out):
        shutil.rmtree(out)
    run(["unmkinitramfs", initrd, out])
    for p in (os.path.join(out, name), os.path.join(out, "main", name)):
        if os.path.exists(p):
            with open(p, errors="replace") as f:
                return f.read()
    raise SetupError(f"{initrd}: no {name} in it")


def fmt(seconds):
    return "-" if seconds is None else f"{seconds:.1f}"


def failure_descs(k):
    return [
        f"{k}: no DHCP on the Tang NIC (fdekit.timeout=40, fallback=prompt): the network gets at most half, the console prompt shows within 35 s of fdekit's network step, the Admin1 key typed over the serial line (not echoed) unlocks, root reached; the Tang NIC is down in the booted root",
        f"{k}: fdekit.timeout=08 (decimal 8 s), Tang down until 20 s after QEMU started and the prompt showed: Tang is retried while the prompt waits and unlocks with nothing typed, root reached within 30 s of Tang's start, and no clevis, curl or curl directory of the unlock left after switch_root",
        f"{k}: stale JWE (its slot unbound with opalctl unbind after the image was made): the drive refuses the key Tang gave, the prompt shows within 30 s of the unlock's start, the Admin1 key typed (not echoed) unlocks, root reached",
        f"{k}: a typo in a noauto entry (timout=5): mkinitramfs fails and its output names the entry and the option",
        f"{k}: the typo fixed: the image carries only the automatic entry and its JWE (neither the noauto entry nor its key file), and is readable by root only (mode 0600: the shipped conf.d/fdekit-umask's UMASK=0077)",
        f"{k}: the typo fixed: that image boots to root, the noauto entry left alone",
        f"{k}: two drives in the table, the first missing (serial=NOSUCHDRIVE01, timeout=10): it fails alone, the present one is unlocked from Tang, exit 11 said, root reached within 35 s of the unlock's start; with fdekit.keepnet the Tang NIC keeps its DHCP address in the booted root",
    ]


def failure_matrix(tap, env, t, k, descs, entry):
    """Issue 19: every failure ends in a working fallback within a bound.
    On the first kernel, each with an image of its own; what unlocks is
    the product (the network, the key attempts, the prompt), never the
    harness, which only breaks things and types the recovery key."""
    a = t["a"]

    def since(marks, a_name, b_name):
        """Seconds from mark a_name to b_name, None if either is missing."""
        if a_name in marks and b_name in marks:
            return marks[b_name] - marks[a_name]
        return None

    def no_dhcp():
        # The Tang NIC on a hub port with nothing behind it: no DHCP, no
        # Tang. The prompt must not wait for configure_networking (180 s
        # for a device, minutes of DHCP rounds): at most half of
        # fdekit.timeout (20 s), then the key attempt fails at once.
        table = env.write_table("nodhcp", [entry(k, t["jwe"], "fallback=prompt", timeout=8)])
        initrd, _ = env.mkinitramfs(k, table, "nodhcp")
        good, diag, text, _ = boot_expect_root(
            env, k, initrd, [], "fdekit.timeout=40", answers=[(ASK, env.admin_key_text)],
            tang_net="none", watch={"net": NET_STEP, "prompt": ASK, "root": ROOT_MARK})
        took = since(env.last_marks, "net", "prompt")
        admin = re.search(r"range 1 unlocked \(passphrase, Admin1", text) is not None
        echoed = env.admin_key_text in text
        down, what = tang_nic_down(text)
        tap.diag(f"no DHCP: prompt {fmt(took)} s after the network step (bound 35), "
                 f"root at {fmt(env.last_marks.get('root'))} s")
        return [(good and took is not None and took <= 35 and admin and not echoed and down,
                 f"prompt {took} s after the network step (bound 35), unlocked with Admin1: "
                 f"{admin}, key echoed: {echoed}, {what}\n{diag}")]
    step(tap, descs[0:1], no_dhcp)

    def late_tang():
        # The same slot as the main boots, its Tang server stopped: the
        # first key attempt fails, the prompt shows, and a timer starts
        # Tang again 20 s after QEMU started (or once the prompt shows, if
        # later: the scenario is about Tang coming while the prompt
        # waits). Nothing is typed.
        table = env.write_table("late", [entry(k, t["jwe"], "fallback=prompt", timeout=8)])
        initrd, _ = env.mkinitramfs(k, table, "late")
        server = a["server"]
        server.stop()

        def start_tang():
            server.start()
        try:
            good, diag, text, recs = boot_expect_root(
                env, k, initrd, [a], "fdekit.timeout=08", unanswered_prompt=True,
                events=[(20, ASK, start_tang)], watch={"prompt": ASK, "root": ROOT_MARK})
        finally:
            if not server.proc:
                server.start()
        m = env.last_marks
        took = since(m, "event:start_tang", "root")
        failed = m.get("event-failed:start_tang")
        first_failed = "prompt" in m and "event:start_tang" in m and m["prompt"] <= m["event:start_tang"]
        clevis = re.search(r"range 1 unlocked \(clevis, User", text) is not None
        tap.diag(f"late Tang: prompt at {fmt(m.get('prompt'))} s, Tang started at "
                 f"{fmt(m.get('event:start_tang'))} s, root {fmt(took)} s after (bound 30)")
        return [(good and first_failed and clevis and not failed and took is not None and took <= 30,
                 f"prompt at {m.get('prompt')} s, Tang started at {m.get('event:start_tang')} s "
                 f"({failed or 'ok'}), root {took} s after (bound 30), unlocked from clevis: {clevis}, "
                 f"Tang requests: {recs}\n{diag}")]
    step(tap, descs[1:2], late_tang)

    def stale():
        jwe, user = env.bind("stale", "tang", f'{{"url":"{a["url"]}","adv":"{a["adv"]}"}}')
        table = env.write_table("stale", [entry(k, jwe, "fallback=prompt", user=user, timeout=8)])
        initrd, _ = env.mkinitramfs(k, table, "stale")
        # The slot goes after the image was made (its JWE on the host with it).
        run([env.opalctl_sim, "unbind", env.drive, "--transport", "sedsim", "--keyfile",
             env.admin_key, "--slot", str(user), "--jwe", jwe])
        good, diag, text, recs = boot_expect_root(
            env, k, initrd, [a], "fdekit.timeout=30", answers=[(ASK, env.admin_key_text)],
            watch={"unlock": UNLOCK_STEP, "prompt": ASK, "root": ROOT_MARK})
        took = since(env.last_marks, "unlock", "prompt")
        admin = re.search(r"range 1 unlocked \(passphrase, Admin1", text) is not None
        echoed = env.admin_key_text in text
        tap.diag(f"stale JWE: prompt {fmt(took)} s after the unlock started (bound 30), "
                 f"root at {fmt(env.last_marks.get('root'))} s")
        return [(good and took is not None and took <= 30 and admin and not echoed,
                 f"prompt {took} s after the unlock started (bound 30), unlocked with Admin1: "
                 f"{admin}, key echoed: {echoed}, Tang requests: {recs}\n{diag}")]
    step(tap, descs[2:3], stale)

    def typo():
        data_key = env.path("data.key")
        with open(data_key, "w") as f:
            f.write(os.urandom(16).hex())
        os.chmod(data_key, 0o600)
        rows = [entry(k, t["jwe"]),
                f"data serial=FDEKITDATA01 1 keyfile:{data_key} noauto,timout=5"]
        try:
            env.mkinitramfs(k, env.write_table("typo", rows), "typo")
            refused, why = False, "mkinitramfs succeeded"
        except SetupError as e:
            why = str(e)
            refused = "'data'" in why and "timout" in why
        rows[1] = rows[1].replace("timout=", "timeout=")
        initrd, files = env.mkinitramfs(k, env.write_table("typo-fixed", rows), "typo-fixed")
        carried = image_file(env, initrd, "etc/fdekit/opaltab", "typo-fixed")
        lines = [ln for ln in carried.splitlines() if ln.strip() and not ln.startswith("#")]
        only_root = len(lines) == 1 and lines[0].startswith("root serial=")
        jwe_in = t["jwe"].lstrip("/") in files
        key_in = data_key.lstrip("/") in files
        mode = os.stat(initrd).st_mode & 0o777
        contents = (only_root and jwe_in and not key_in and mode & 0o077 == 0,
                    f"entries carried: {lines}, JWE carried: {jwe_in}, noauto key file carried: "
                    f"{key_in}, image mode {mode:04o}")
        good, diag, text, _ = boot_expect_root(env, k, initrd, [a])
        untouched = re.search(r"\bdata: (?:failed|/dev/)", text) is None
        return [(refused, why), contents,
                (good and untouched, f"noauto entry left alone: {untouched}\n{diag}")]
    step(tap, descs[3:6], typo)

    def two_drives():
        rows = [f"spare serial=NOSUCHDRIVE01 1 clevis:{t['jwe']} {opal_options(k, 10)},user={t['user']}",
                entry(k, t["jwe"])]
        initrd, _ = env.mkinitramfs(k, env.write_table("two", rows), "two")
        good, diag, text, _ = boot_expect_root(env, k, initrd, [a], "fdekit.timeout=60 fdekit.keepnet",
                                               watch={"unlock": UNLOCK_STEP, "root": ROOT_MARK})
        took = since(env.last_marks, "unlock", "root")
        tang_nic = net_state(text).get(TANG_MAC)
        kept = tang_nic is not None and tang_nic[1] == "up" and tang_nic[2] == ["10.0.2.15/24"]
        spare = re.search(r"spare: failed: [^\n]*NOSUCHDRIVE01", text) is not None
        root_ok = re.search(r"root: /dev/nvme\d+n1 range 1 unlocked \(clevis", text) is not None
        said = "stay locked (opalctl unlock-all exit 11)" in text
        tap.diag(f"two drives: root {fmt(took)} s after the unlock started (bound 35)")
        return [(good and spare and root_ok and said and kept and took is not None and took <= 35,
                 f"missing drive's failure said: {spare}, root unlocked: {root_ok}, exit 11 said: "
                 f"{said}, root {took} s after the unlock started (bound 35), "
                 f"fdekit.keepnet: Tang NIC {tang_nic}\n{diag}")]
    step(tap, descs[6:7], two_drives)


def rotation(tap, env, k, descs, entry):
    """Issue 23: Tang key rotation across a fleet without the drives. A
    server of its own (the other scenarios keep their keys); what the
    harness does is the server admin's part (rotate, delete the hidden
    keys) and the image builds; report and regen are the product's."""
    def report(r, table, initrd):
        p = env.client_view([r], [env.opalctl_sim, "slots", "--report", "--table", table,
                                  "--initramfs", initrd, "--json"])
        try:
            return p.returncode, json.loads(p.stdout), p.stderr.decode(errors="replace")
        except ValueError:
            return p.returncode, {}, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")

    def rotate():
        r = env.start_tang("rot")
        keys = env.path("tang-rot")
        jwe, user = env.bind("rot", "tang", f'{{"url":"{r["url"]}","adv":"{r["adv"]}"}}')
        table = env.write_table("rot", [entry(k, jwe, "fallback=fail", user=user, timeout=15)])
        initrd, _ = env.mkinitramfs(k, table, "rot")
        run([os.path.join(os.path.dirname(env.args.tangd_keygen), "tangd-rotate-keys"), "-d", keys])
        rc1, j1, e1 = report(r, table, initrd)
        s1 = (j1.get("slots") or [{}])[0]
        first = (rc1 == 15 and s1.get("action") == "regen" and s1.get("initramfs") == "same"
                 and [v.get("state") for v in s1.get("servers", [])] == ["rotated"],
                 f"exit {rc1}: {json.dumps(j1)[:1500]}\n{e1[-1500:]}")
        p = env.client_view([r], [env.opalctl_sim, "regen", "--all", "--table", table, "--json"])
        try:
            j2 = json.loads(p.stdout)
        except ValueError:
            j2 = {}
        regen_ok = (p.returncode == 0 and j2.get("regenerated") == 1
                    and os.path.exists(jwe + ".old") and j2.get("initramfs_command"))
        initrd2, _ = env.mkinitramfs(k, table, "rot2")
        rc3, j3, e3 = report(r, table, initrd2)
        s3 = (j3.get("slots") or [{}])[0]
        second = (regen_ok and rc3 == 0 and s3.get("initramfs") == "same" and s3.get("action") == "none",
                  f"regen exit {p.returncode}: {p.stdout.decode(errors='replace')[:1500]}"
                  f"{p.stderr.decode(errors='replace')[-800:]}\nreport exit {rc3}: "
                  f"{json.dumps(j3)[:1500]}\n{e3[-800:]}")
        for f in os.listdir(keys):
            if f.startswith(".") and f.endswith(".jwk"):
                os.unlink(os.path.join(keys, f))
        good, diag, text, _ = boot_expect_root(env, k, initrd2, [r], "fdekit.timeout=60")
        clevis = re.search(r"range 1 unlocked \(clevis, User", text) is not None
        old_rc = env.client_view([r], ["sh", "-c", f"clevis decrypt <'{jwe}.old' >/dev/null"]).returncode
        tap.diag(f"rotation: report {rc1} -> regen {j2.get('regenerated')} -> report {rc3}; "
                 f"boot with the hidden keys deleted: root {good}")
        return [first, second, (good and clevis and old_rc != 0,
                                f"unlocked from clevis: {clevis}, old JWE decrypt exit {old_rc}\n{diag}")]
    step(tap, descs, rotate)


def full_scenarios(tap, env, t, k, descs, entry):
    """The long scenarios, on the first kernel, each with an initramfs of
    its own (the table and JWEs differ)."""
    refused = free_port()            # nothing listens there
    silent = env.start_silent()      # accepts, never answers
    b = env.start_tang("b")
    down = {"url": f"http://10.0.2.2:{refused}"}

    def sss(name, servers):
        """A key slot sealed with sss t=1 over Tang servers (the down ones
        with the first server's advertisement: their keys never matter)."""
        pins = ",".join(f'{{"url":"{s["url"]}","adv":"{s.get("adv", t["a"]["adv"])}"}}'
                        for s in servers)
        return env.bind(name, "sss", f'{{"t":1,"pins":{{"tang":[{pins}]}}}}')

    def first_down():
        jwe, user = sss("sss-first-down", [down, b])
        table = env.write_table("sss1", [entry(k, jwe, user=user)])
        initrd, _ = env.mkinitramfs(k, table, "sss1")
        good, diag, _, recs = boot_expect_root(env, k, initrd, [b])
        return [(good and recs[0] >= 1, diag)]
    step(tap, descs[0:1], first_down)

    both = [down, silent]

    def prompt():
        jwe, user = sss("sss-both-down", both)
        table = env.write_table("prompt", [entry(k, jwe, "retry=2,fallback=prompt", user, timeout=8)])
        initrd, _ = env.mkinitramfs(k, table, "prompt")
        good, diag, text, _ = boot_expect_root(env, k, initrd, [], "fdekit.timeout=90",
                                               answers=[(ASK, env.admin_key_text)],
                                               watch={"unlock": UNLOCK_STEP, "prompt": ASK})
        # With a prompt to fall back on, one attempt in the foreground; the
        # others run behind the prompt, silently.
        attempts = bounded_attempts(text, 1)
        m = env.last_marks
        took = m["prompt"] - m["unlock"] if "prompt" in m and "unlock" in m else None
        echoed = env.admin_key_text in text
        return [(good and attempts and took is not None and took <= 28 and not echoed,
                 f"one attempt before the prompt: {attempts}, prompt {took} s after the "
                 f"unlock started (bound 28), key echoed: {echoed}\n{diag}")]
    step(tap, descs[1:2], prompt)

    def fail():
        jwe, user = sss("sss-both-down-fail", both)
        table = env.write_table("fail", [entry(k, jwe, "retry=2,fallback=fail", user, timeout=8)])
        initrd, _ = env.mkinitramfs(k, table, "fail")
        env.start_drive()
        try:
            start = time.monotonic()
            text, rc, _ = env.boot(k, initrd, "fdekit.timeout=90 rootdelay=10")
            took = time.monotonic() - start
        finally:
            env.stop_drive()
        reached, _ = root_result(text, env.data_sha)
        asked = PROMPT.search(text)
        said = re.search(r"stay locked|unlock-all failed", text) is not None
        env.power_cycle()
        attempts = bounded_attempts(text, 3)
        good = said and attempts and not reached and not asked and rc == 0 and env.range1_locked()
        return [(good, f"failure said: {said}, 3 attempts then stop: {attempts}, "
                       f"root reached: {reached}, prompt: {bool(asked)}, "
                       f"qemu exit: {rc}, {took:.0f} s\n{tail(text)}")]
    step(tap, descs[2:3], fail)

    def wrong_key():
        bad = env.path("wrong.key")
        with open(bad, "w") as f:
            f.write(os.urandom(16).hex())
        # User1's slot, with a key that is not its PIN.
        jwe = env.seal("wrong", "tang", f'{{"url":"{b["url"]}","adv":"{b["adv"]}"}}', bad)
        table = env.write_table("wrong", [entry(k, jwe, "retry=3,fallback=fail")])
        initrd, _ = env.mkinitramfs(k, table, "wrong")
        env.start_drive()
        before = env.tang_requests(b)
        try:
            text, rc, _ = env.boot(k, initrd, "rootdelay=10")
        finally:
            env.stop_drive()
        recs = env.tang_requests(b) - before
        reached, _ = root_result(text, env.data_sha)
        # The count itself only where the drive lets a non-admin read it
        # (the Opal SSC lets only admins read C_PIN Tries).
        tries = re.search(r"\d+ of \d+ tries left|uses up one of the authority's tries",
                          text) is not None
        said = "not retried" in text
        env.power_cycle()
        good = tries and said and recs == 1 and not reached and env.range1_locked()
        return [(good, f"tries said: {tries}, 'not retried' said: {said}, "
                       f"tang requests: {recs} (want 1), "
                       f"root reached: {reached}, qemu exit: {rc}\n{tail(text)}")]
    step(tap, descs[3:4], wrong_key)

    def tpm2():
        host_tpm, tcti = env.start_swtpm_tcp()
        try:
            jwe, user = env.bind("tpm2", "tpm2", "{}", env=dict(os.environ, TPM2TOOLS_TCTI=tcti))
        finally:
            host_tpm.stop()
            env.servers.remove(host_tpm)
        table = env.write_table("tpm2", [entry(k, jwe, user=user)])
        initrd, files = env.mkinitramfs(k, table, "tpm2")
        need = ["usr/bin/clevis-decrypt-tpm2", "usr/bin/tpm2_unseal"]
        missing = [n for n in need if n not in files]
        tcti_lib = any("libtss2-tcti-device.so" in f for f in files)
        guest_tpm, qargs = env.start_swtpm_qemu()
        try:
            good, diag, text, _ = boot_expect_root(env, k, initrd, [], qemu_args=qargs)
        finally:
            guest_tpm.stop()
            env.servers.remove(guest_tpm)
        no_net = "fdekit: configuring the network" not in text
        return [(good and no_net and not missing and tcti_lib,
                 f"missing: {missing}, tcti-device: {tcti_lib}, fdekit network: {not no_net}\n{diag}")]
    step(tap, descs[4:5], tpm2)

    def sss_tang_tpm2():
        # A Tang server of its own: it is stopped for the second boot.
        c = env.start_tang("c")
        host_tpm, tcti = env.start_swtpm_tcp()
        try:
            jwe, user = env.bind(
                "sss-tang-tpm2", "sss",
                f'{{"t":2,"pins":{{"tang":[{{"url":"{c["url"]}","adv":"{c["adv"]}"}}],"tpm2":{{}}}}}}',
                env=dict(os.environ, TPM2TOOLS_TCTI=tcti))
        finally:
            host_tpm.stop()
            env.servers.remove(host_tpm)
        # Attempts of up to 30 s (the TPM under TCG is slow), retried twice:
        # with Tang down each one fails on the refused connection.
        table = env.write_table("sss-tpm2", [entry(k, jwe, "retry=2,fallback=fail", user, timeout=30)])
        initrd, files = env.mkinitramfs(k, table, "sss-tpm2")
        need = ["usr/bin/clevis-decrypt-sss", "usr/bin/clevis-decrypt-tang",
                "usr/bin/clevis-decrypt-tpm2", "usr/bin/tpm2_unseal", "usr/bin/curl"]
        missing = [n for n in need if n not in files]
        tcti_lib = any("libtss2-tcti-device.so" in f for f in files)
        guest_tpm, qargs = env.start_swtpm_qemu()
        try:
            good, diag, _, recs = boot_expect_root(env, k, initrd, [c], "fdekit.timeout=150",
                                                   qemu_args=qargs)
        finally:
            guest_tpm.stop()
            env.servers.remove(guest_tpm)
        both = (good and recs[0] >= 1 and not missing and tcti_lib,
                f"missing: {missing}, tcti-device: {tcti_lib}\n{diag}")
        env.power_cycle()

        c["server"].stop()
        env.servers.remove(c["server"])
        guest_tpm, qargs = env.start_swtpm_qemu()
        env.start_drive()
        try:
            start = time.monotonic()
            text, rc, _ = env.boot(k, initrd, "fdekit.timeout=150 rootdelay=10", qemu_args=qargs)
            took = time.monotonic() - start
        finally:
            env.stop_drive()
            guest_tpm.stop()
            env.servers.remove(guest_tpm)
        reached, _ = root_result(text, env.data_sha)
        asked = PROMPT.search(text)
        said = re.search(r"stay locked|unlock-all failed", text) is not None
        attempts = bounded_attempts(text, 3)
        tpm = re.search(r"tpm_tis \S+: 2\.0 TPM", text) is not None
        env.power_cycle()
        alone = (said and attempts and tpm and not reached and not asked and rc == 0
                 and env.range1_locked(),
                 f"failure said: {said}, 3 attempts then stop: {attempts}, TPM present: {tpm}, "
                 f"root reached: {reached}, prompt: {bool(asked)}, qemu exit: {rc}, "
                 f"{took:.0f} s\n{tail(text)}")
        return [both, alone]
    step(tap, descs[5:7], sss_tang_tpm2)

    def plymouth():
        """The prompt through plymouth: Debian's plymouth hook puts plymouthd
        into the image, `splash` starts it (init-premount), and the local-top
        script then hands opalctl the plymouth askpass. With the serial
        line the only console, plymouthd draws the details splash on it
        and reads the keys typed there; the details plugin answers each
        key with a bullet ('*'), where opalctl's own prompt echoes
        nothing, so the bullets tell which of the two asked. plymouthd's
        trace goes to a second serial port, a file on the host
        (plymouth.debug=stream:/dev/ttyS1): it must show plymouthd on the
        serial console, the password request coming from `plymouth
        ask-for-password` whose parent is `opalctl unlock-all --askpass
        /usr/lib/fdekit/plymouth-askpass`, its answer, and not the key."""
        # The only Tang server refuses connections: each attempt fails at once.
        jwe, user = env.bind("plymouth", "tang",
                             f'{{"url":"{down["url"]}","adv":"{t["a"]["adv"]}"}}')
        table = env.write_table("plymouth", [entry(k, jwe, "retry=1,fallback=prompt", user,
                                                   timeout=8)])
        initrd, files = env.mkinitramfs(k, table, "plymouth")
        need = ["usr/sbin/plymouthd", "usr/bin/plymouth", "scripts/init-premount/plymouth",
                "usr/lib/fdekit/plymouth-askpass", "usr/lib/x86_64-linux-gnu/plymouth/details.so"]
        missing = [n for n in need if n not in files]
        trace = env.path("plymouth-debug.log")
        if os.path.exists(trace):
            os.unlink(trace)
        ask = r"Recovery key \(Admin1\) for drive \S+, range 1 \(root; \d+ tr(?:y|ies) left this boot\)"
        good, diag, text, _ = boot_expect_root(
            env, k, initrd, [], "fdekit.timeout=90 plymouth.debug=stream:/dev/ttyS1",
            answers=[(ask, env.admin_key_text)], splash=True,
            qemu_args=["-serial", f"file:{trace}"])
        with open(trace, errors="replace") as f:
            log = f.read()
        bullets = re.search(ask + r":?\s*\*{%d}" % len(env.admin_key_text), text) is not None
        serial = "serial consoles detected, managing them with details forced" in log
        # plymouthd names who asked: the askpass, child of opalctl unlock-all.
        asker = re.search(r"connection is from pid \d+ \(plymouth ask-for-password --prompt "
                          + ask + r"\) with parent pid \d+ \(/usr/sbin/opalctl unlock-all "
                          r"[^)]*--askpass /usr/lib/fdekit/plymouth-askpass\)", log) is not None
        answered = re.search(r"got password request(?s:.*)got password answer", log) is not None
        echoed = env.admin_key_text in text
        in_trace = env.admin_key_text in log
        return [(good and not missing and bullets and serial and asker and answered
                 and not echoed and not in_trace,
                 f"missing: {missing}, a bullet per key typed (plymouth's details plugin): "
                 f"{bullets}, plymouthd on the serial console: {serial}, "
                 f"asked by opalctl's plymouth askpass: {asker}, request answered: {answered}, "
                 f"key echoed: {echoed}, key in plymouth's trace: {in_trace}\n{diag}")]
    step(tap, descs[7:8], plymouth)

    vg, lv = "fdekitvg", "root"

    def lvm_root():
        """Range 1 becomes an LVM physical volume (once, for both LVM
        scenarios; the LUKS scenarios after them write their own)."""
        if "lvm" not in t:
            env.write_range1(env.make_lvm_root(vg, lv))
            t["lvm"] = True
        return f"/dev/{vg}/{lv}"

    dm_root = re.compile(rf"^FDEKIT-ROOT-SOURCE /dev/(?:{vg}/{lv}|mapper/{vg}-{lv}|dm-\d+)$", re.M)

    def unlocked_before_lv(text):
        """The range was unlocked before a file system on a mapping was
        mounted: the volume group could only be found afterwards."""
        sed = text.find("range 1 unlocked")
        mounted = re.search(r"EXT4-fs \(dm-\d+\): mounted", text)
        return 0 <= sed and mounted is not None and sed < mounted.start()

    def lvm_initramfs_tools():
        root = lvm_root()
        table = env.write_table("lvm", [entry(k, t["jwe"])])
        initrd, files = env.mkinitramfs(k, table, "lvm")
        need = ["usr/sbin/lvm", "usr/lib/udev/rules.d/69-lvm.rules",
                "usr/lib/udev/rules.d/56-lvm.rules", "scripts/local-top/fdekit-opal"]
        missing = [n for n in need if n not in files]
        dm = any(re.search(r"/dm-mod\.ko", f) for f in files)
        good, diag, text, _ = boot_expect_root(env, k, initrd, [t["a"]], root=root)
        on_lv = dm_root.search(text) is not None
        ordered = unlocked_before_lv(text)
        return [(good and on_lv and ordered and dm and not missing,
                 f"missing: {missing}, dm-mod: {dm}, root on the LV: {on_lv}, "
                 f"unlocked before the LV was mounted: {ordered}\n{diag}")]
    step(tap, descs[8:9], lvm_initramfs_tools)

    def lvm_dracut():
        root = lvm_root()
        table = env.write_table("lvm-dracut", [entry(k, t["jwe"])])
        initrd, files = env.dracut(k, table, "lvm-dracut", "dm lvm")
        need = ["usr/sbin/lvm", "usr/sbin/opalctl"]
        missing = [n for n in need if n not in files]
        good, diag, text, _ = boot_expect_root(
            env, k, initrd, [t["a"]],
            f"rd.lvm.lv={vg}/{lv} rd.shell=0 rd.emergency=reboot rd.retry=60", root=root,
            **dracut_net())
        on_lv = dm_root.search(text) is not None
        ordered = unlocked_before_lv(text)
        return [(good and on_lv and ordered and not missing,
                 f"missing: {missing}, root on the LV: {on_lv}, "
                 f"unlocked before the LV was mounted: {ordered}\n{diag}")]
    step(tap, descs[9:10], lvm_dracut)

    def luks_root():
        """The same root file system, in a LUKS2 container (encrypted
        offline by cryptsetup, no device mapper needed), written into range
        1 once: it replaces the plain root for the LUKS scenarios, the last
        ones. Returns (LUKS UUID, passphrase)."""
        if "luks" in t:
            return t["luks"]
        img = env.path("luks.img")
        with open(img, "wb") as f:
            f.truncate(R1_LENGTH * 512)
        run(["mkfs.ext4", "-q", "-F", "-U", env.root_uuid, "-d", env.path("rootfs"),
             img, f"{R1_LENGTH // 2 - 2048}k"])
        passphrase = os.urandom(8).hex()
        pf = env.path("luks.pass")
        with open(pf, "w") as f:
            f.write(passphrase)
        run(["cryptsetup", "reencrypt", "--encrypt", "--type", "luks2", "--reduce-device-size", "2M",
             "--key-file", pf, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000",
             "--batch-mode", img])
        luks_uuid = run(["cryptsetup", "luksUUID", img]).stdout.decode().strip()
        env.write_range1(img)
        t["luks"] = (luks_uuid, passphrase)
        return t["luks"]

    def luks():
        luks_uuid, passphrase = luks_root()
        table = env.write_table("luks", [entry(k, t["jwe"])])
        initrd, _ = env.dracut(k, table, "luks", "dm crypt")
        good, diag, text, _ = boot_expect_root(
            env, k, initrd, [t["a"]],
            f"rd.luks.uuid={luks_uuid} rd.shell=0 rd.emergency=reboot rd.retry=60",
            answers=[(r"Enter passphrase for /dev/nvme", passphrase)], **dracut_net())
        sed = text.find("range 1 unlocked")
        ask = text.find("Enter passphrase for /dev/nvme")
        ordered = 0 <= sed < ask
        return [(good and ordered, f"SED unlock before the LUKS prompt: {ordered}\n{diag}")]
    step(tap, descs[10:11], luks)

    def cryptroot():
        # The crypttab a LUKS-on-SED machine would have. The "initramfs"
        # option makes the hook carry the entry although the host's root is
        # elsewhere; on the machine itself the root entry is found anyway.
        luks_uuid, passphrase = luks_root()
        crypttab = env.path("crypttab")
        with open(crypttab, "w") as f:
            f.write(f"fdekitroot UUID={luks_uuid} none luks,initramfs\n")
        table = env.write_table("cryptroot", [entry(k, t["jwe"])])
        initrd, files = env.mkinitramfs(k, table, "cryptroot", crypttab=crypttab)
        need = ["cryptroot/crypttab", "usr/sbin/cryptsetup", "usr/lib/cryptsetup/askpass",
                "scripts/local-top/cryptroot", "scripts/local-top/fdekit-opal"]
        missing = [n for n in need if n not in files]
        # (The main archive is in DIR/main when early archives precede it.)
        carried = run(["sh", "-c", 'unmkinitramfs "$1" "$2" >/dev/null && '
                       'cat "$2/cryptroot/crypttab" 2>/dev/null || cat "$2/main/cryptroot/crypttab"',
                       "sh", initrd, env.path("cryptroot-unpacked")]).stdout.decode(errors="replace")
        entry_in = re.search(rf"^fdekitroot UUID={luks_uuid} none luks,initramfs$", carried, re.M)
        ask = "Please unlock disk fdekitroot"
        good, diag, text, _ = boot_expect_root(env, k, initrd, [t["a"]], answers=[(ask, passphrase)])
        sed = text.find("range 1 unlocked")
        asked = text.find(ask)
        ordered = 0 <= sed < asked
        opened = "fdekitroot: set up successfully" in text
        dm_root = re.search(r"^FDEKIT-ROOT-SOURCE /dev/mapper/fdekitroot$", text, re.M) is not None
        echoed = passphrase in text
        return [(good and ordered and opened and dm_root and not missing and entry_in
                 and not echoed,
                 f"missing: {missing}, crypttab carried: {carried.strip()!r}, "
                 f"SED unlock before the LUKS prompt: {ordered}, cryptroot said set up: {opened}, "
                 f"root on /dev/mapper/fdekitroot: {dm_root}, passphrase echoed: {echoed}\n{diag}")]
    step(tap, descs[11:12], cryptroot)


DEMO_LINES = re.compile(r"fdekit|IP-Config: \S+ complete|unlocked|FDEKIT-|"
                        r"nvme\d+n1: I/O Cmd.*sc 0x86|EXT4-fs \(nvme")


def demo(args, kver):
    """Set the drive and Tang up, boot once, show the lines that tell the
    story; power-cycle and boot again. Exit status 1 if a boot fails."""
    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    env = Env(args)
    say = lambda m: print(f"boot-demo: {m}", flush=True)
    try:
        img = env.make_rootfs()
        env.make_drive(img)
        tang = env.start_tang("a")
        jwe, user = env.bind("root", "tang", f'{{"url":"{tang["url"]}","adv":"{tang["adv"]}"}}')
        say(f"a virtual SED (sedsim), partition 1 = locking range 1 = the root file system, "
            f"locked: {env.range1_locked()}; its /data.bin has SHA-256 {env.data_sha}")
        say(f"Tang on 127.0.0.1:{tang['port']} (the guest's {tang['url']}); "
            f"key slot User{user} bound to it with opalctl bind")
        table = env.write_table("demo", [f"root serial={SERIAL} 1 clevis:{jwe} "
                                         f"{opal_options(kver)},user={user}"])
        with open(table) as f:
            say("opaltab: " + f.read().strip().splitlines()[-1])
        initrd, _ = env.mkinitramfs(kver, table, "demo")
        say(f"initramfs by mkinitramfs with the fdekit-opal hook: {initrd}")
        ok = True
        for n in (1, 2):
            say(f"boot {n} of {kver} under QEMU (drive served over NVMe/TCP, a power-on: locked)")
            good, diag, text, recs = boot_expect_root(env, kver, initrd, [tang])
            for line in text.splitlines():
                if DEMO_LINES.search(line) and "command line:" not in line.lower():
                    print("    " + line.strip(), flush=True)
            say(f"boot {n}: {'root reached, data intact, no prompt' if good else 'FAILED'}; "
                f"Tang answered {recs[0]} request(s)")
            if not good:
                print(diag)
                ok = False
                break
            env.power_cycle()
            say(f"power cycle: range 1 locked again: {env.range1_locked()}")
        return 0 if ok else 1
    except (SetupError, OSError, subprocess.TimeoutExpired) as e:
        say(f"setup failed: {e}")
        return 1
    finally:
        env.cleanup()


if __name__ == "__main__":
    sys.exit(main())
