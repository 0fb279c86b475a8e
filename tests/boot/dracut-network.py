#!/usr/bin/env python3
"""The dracut module with systemd-networkd or NetworkManager instead of network-legacy, one QEMU boot.

The same host side as tests/boot/boot-test.py (imported, not copied): a
sedsim drive whose locking range 1 holds the root file system, served over
NVMe/TCP on the guest's storage NIC (which the test's dracut module
configures statically), Tang behind socat, a key slot made by `opalctl
bind`. The image is made by dracut with systemd in it and, as its network
module, dracut's systemd-networkd (--network systemd-networkd, the
default) or network-manager (--network network-manager): no
network-legacy, so no ifup, and no rd.neednet, no ip= and no BOOTIF= on
the command line. The fdekit-opal module must bring the Tang NIC up itself
(networkd: a .network file of its own, networkd reloaded or started;
NetworkManager: a profile of its own, dracut's nm-initrd.service started),
unlock from Tang with no prompt, and afterwards remove what it wrote, stop
what it started and take the NIC down: the booted root sees it without an
address and down, while the storage NIC, which carries the drive, keeps its
own.

dracut is the host's (Debian 12: dracut 059, systemd-networkd), or, with
--sysroot DIR, the one of a Debian tree (e.g. trixie made by mmdebstrap
with dracut-core, dracut-network, network-manager, systemd, clevis, curl,
jose, dbus), run there by chroot with the guest kernel's modules, the work
directory and the module under test bound or copied in (the host has no
NetworkManager, and must not get one).

--make-sysroot DIST makes that tree first (mmdebstrap --variant=apt from
Debian's archive, FDEKIT_DEBIAN_MIRROR / FDEKIT_DEBIAN_SECURITY, into the
work directory, 33 s with a near mirror) and uses it. --only-if-full: every result
a TAP SKIP unless FDEKIT_BOOT_FULL=1 (meson runs the NetworkManager boot so:
it needs Debian's archive).

Output is TAP. Exit status: 0 every test passed, 1 a test failed, 2 setup
error.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
_spec = importlib.util.spec_from_file_location("boot_test", os.path.join(HERE, "boot-test.py"))
bt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bt)

TRY = r"fdekit: unlocking Opal drives \(try (\d+): ([^;]*); bound (\d+)s\)"
# No shell, a failure ends the boot; the journal on the console, where
# systemd runs the initqueue and the module's info() lines go to it.
DRACUT_ARGS = ("rd.shell=0 rd.emergency=reboot rd.retry=120 "
               "systemd.journald.forward_to_console=1")
MODULES = ("base rootfs-block kernel-modules udev-rules systemd systemd-initrd dracut-systemd "
           "{net} network fdekit-opal fdekit-test-nvmf")
# The Debian tree --make-sysroot makes: its dracut, network modules, systemd,
# what the fdekit-opal module installs (clevis, curl, jose, ip; zstd for
# the image), and opalctl's libraries (nvme-cli brings libnvme, whatever
# its package is called in that release).
SYSROOT_PACKAGES = ["dracut-core", "dracut-network", "network-manager", "systemd", "udev",
                    "kmod", "clevis", "curl", "jose", "dbus", "iproute2", "zstd", "cpio",
                    "nvme-cli"]
DPKG_EXCLUDE = ["path-exclude=/usr/share/doc/*", "path-exclude=/usr/share/man/*",
                "path-exclude=/usr/share/locale/*", "path-exclude=/usr/share/info/*"]


def make_sysroot(dist, root, log):
    """A DIST tree at root, made by mmdebstrap from Debian's archive."""
    mirror = os.environ.get("FDEKIT_DEBIAN_MIRROR", "http://deb.debian.org/debian")
    security = os.environ.get("FDEKIT_DEBIAN_SECURITY", "http://deb.debian.org/debian-security")
    cmd = ["nice", "-n", "10", "mmdebstrap", "--variant=apt", "--format=directory",
           "--include=" + ",".join(SYSROOT_PACKAGES)]
    cmd += [f"--dpkgopt={x}" for x in DPKG_EXCLUDE]
    cmd += [dist, root, f"deb {mirror} {dist} main", f"deb {mirror} {dist}-updates main",
            f"deb {security} {dist}-security main"]
    with open(log, "wb") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=3600)
    if p.returncode:
        with open(log, errors="replace") as f:
            raise bt.SetupError("mmdebstrap failed:\n" + f.read()[-3000:])


def dracut_sysroot(env, kver, table, tag):
    """The image made by the dracut of the Debian tree env.args.sysroot,
    run there by chroot (its own mount namespace): the guest kernel's
    modules and the work directory bound at their paths, the module under
    test, the test's module, opalctl and the boot functions copied in."""
    root = env.args.sysroot
    mods = os.path.join(root, "usr", "lib", "dracut", "modules.d")
    for name, src in (("90fdekit-opal", env.args.module_dir),
                      ("91fdekit-test-nvmf", os.path.join(HERE, "dracut", "91fdekit-test-nvmf"))):
        dst = os.path.join(mods, name)
        if os.path.exists(dst):
            shutil.rmtree(dst)
        shutil.copytree(src, dst, symlinks=False)
    shutil.copy2(env.opalctl, os.path.join(root, "usr", "local", "sbin", "opalctl"))
    os.makedirs(os.path.join(root, "usr", "share", "fdekit"), exist_ok=True)
    shutil.copy2(os.path.join(bt.BOOT, "fdekit-boot-functions"),
                 os.path.join(root, "usr", "share", "fdekit", "boot-functions"))
    for d in (f"/lib/modules/{kver}", env.work):
        os.makedirs(root + d, exist_ok=True)
    out = env.path(f"initrd-{tag}.img")
    script = ('mount --bind "/lib/modules/$1" "$0/lib/modules/$1" && mount --bind "$2" "$0$2" '
              '&& mount -t proc proc "$0/proc" && mount -t sysfs sysfs "$0/sys" '
              '&& mount --rbind /dev "$0/dev" && shift 3 && exec chroot "$R" "$@"')
    cmd = ["env", "-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C.UTF-8",
           f"FDEKIT_OPALTAB={table}", "FDEKIT_OPALCTL=/usr/local/sbin/opalctl", "FDEKIT_TIMEOUT=120",
           "dracut", "--force", "--no-hostonly", "--no-early-microcode", "--tmpdir", "/tmp",
           "--modules", MODULES.format(net=env.args.network),
           "--add-drivers", "virtio_pci virtio_net ext4", "--compress", "zstd", "--kver", kver, out]
    bt.run(["unshare", "--mount", "--fork", "env", f"R={root}", "sh", "-c", script, root, kver,
            env.work, "-"] + cmd, timeout=900)
    return out


def dracut(env, kver, table, tag):
    """Env.dracut's image, with systemd and systemd-networkd or
    network-manager instead of network-legacy: (image, its file list, its
    /etc/fdekit/initramfs.conf)."""
    if env.args.sysroot:
        out = dracut_sysroot(env, kver, table, tag)
        return out, *listing(out)
    base = env.path(f"dracut-base-{tag}")
    os.makedirs(os.path.join(base, "modules.d"))
    sysbase = "/usr/lib/dracut"
    for e in os.listdir(sysbase):
        if e != "modules.d":
            os.symlink(os.path.join(sysbase, e), os.path.join(base, e))
    for m in os.listdir(os.path.join(sysbase, "modules.d")):
        os.symlink(os.path.join(sysbase, "modules.d", m), os.path.join(base, "modules.d", m))
    os.symlink(env.args.module_dir, os.path.join(base, "modules.d", "90fdekit-opal"))
    os.symlink(os.path.join(HERE, "dracut", "91fdekit-test-nvmf"),
               os.path.join(base, "modules.d", "91fdekit-test-nvmf"))
    out = env.path(f"initrd-{tag}.img")
    denv = dict(os.environ, dracutbasedir=base, FDEKIT_OPALCTL=env.opalctl, FDEKIT_OPALTAB=table,
                FDEKIT_TIMEOUT="120",
                FDEKIT_BOOT_FUNCTIONS=os.path.join(bt.BOOT, "fdekit-boot-functions"))
    confdir = env.path(f"dracut-conf-{tag}")
    os.makedirs(confdir, exist_ok=True)
    bt.run(["dracut", "--force", "--no-hostonly", "--no-early-microcode",
            "--conf", "/dev/null", "--confdir", confdir, "--tmpdir", env.work,
            "--modules", MODULES.format(net=env.args.network),
            "--add-drivers", "virtio_pci virtio_net ext4",
            "--compress", "zstd", "--kver", kver, out], env=denv, timeout=600)
    return out, *listing(out)


def listing(out):
    """The image's files, and its /etc/fdekit/initramfs.conf."""
    files = set()
    for line in bt.run(["lsinitrd", out]).stdout.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[0][:1] in "-dlcb":
            files.add(parts[8])
    conf = bt.run(["lsinitrd", "-f", "etc/fdekit/initramfs.conf", out]).stdout.decode()
    return files, conf


def main():
    ap = bt.harness_args(__doc__.splitlines()[0],
                         "guest kernel release (default: the first of /boot, as boot-test.py)")
    ap.add_argument("--module-dir", default=os.path.join(bt.BOOT, "dracut", "90fdekit-opal"),
                    help="the fdekit-opal module to test (default: the source tree's)")
    ap.add_argument("--network", default="systemd-networkd",
                    choices=["systemd-networkd", "network-manager"],
                    help="dracut's network module in the image")
    ap.add_argument("--sysroot", help="run dracut in this Debian tree (chroot)")
    ap.add_argument("--make-sysroot", metavar="DIST",
                    help="make a DIST tree with mmdebstrap in the work directory and use it")
    ap.add_argument("--only-if-full", action="store_true",
                    help="skip (TAP) unless FDEKIT_BOOT_FULL=1")
    args = ap.parse_args()
    if args.make_sysroot:
        if args.sysroot:
            ap.error("--sysroot and --make-sysroot: one of them")
        args.sysroot = os.path.join(args.work, f"sysroot-{args.make_sysroot}")
    args.module_dir = os.path.abspath(args.module_dir)
    if args.sysroot:
        args.sysroot = os.path.abspath(args.sysroot)
    net = args.network
    net_step = rf"fdekit: bringing (\S+) up for Tang \({net}\)"
    args.unlock_timeout = 120
    args.extra_hook = []
    kvers = bt.guest_kernels(args.kver)
    if not kvers:
        return 2
    k = kvers[0]
    of = (f" of a {args.make_sysroot} tree made by mmdebstrap" if args.make_sysroot else
          f" of {args.sysroot}" if args.sysroot else "")
    desc = (f"{k}: dracut{of} with systemd and {net} "
            "(no network-legacy, no rd.neednet, no ip=), Tang answering: the module brings the "
            f"Tang NIC up through {net}, unlocks with no prompt, then removes what it wrote, stops "
            "what it started and takes the NIC down: in the booted root it has no address and is "
            "down, the storage NIC keeps its own; root within 180 s")
    host_desc = ("host: a sedsim drive whose partition 1 = locking range 1 holds the ext4 "
                 "root, locked; Tang on a loopback port; a key slot bound to it")
    if args.only_if_full and os.environ.get("FDEKIT_BOOT_FULL", "") in ("", "0"):
        tap = bt.Tap(2)
        for d in (host_desc, desc):
            tap.result(True, f"{d} # SKIP FDEKIT_BOOT_FULL=1 runs it")
        return 0
    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    env = bt.Env(args)
    tap = bt.Tap(2)
    t = {}
    try:
        if args.make_sysroot:
            started = time.monotonic()
            make_sysroot(args.make_sysroot, args.sysroot, env.path("mmdebstrap.log"))
            tap.diag(f"{args.make_sysroot} tree made by mmdebstrap: "
                     f"{time.monotonic() - started:.0f} s")

        def host():
            img = env.make_rootfs()
            osr = env.path("os-release")
            with open(osr, "w") as f:
                f.write("ID=fdekit-test\nNAME=\"fdekit boot test root\"\n")
            bt.run(["debugfs", "-w", "-R", "mkdir etc", img])
            bt.run(["debugfs", "-w", "-R", f"write {osr} etc/os-release", img])
            env.make_drive(img)
            t["a"] = env.start_tang("a")
            t["jwe"], t["user"] = env.bind("root-tang", "tang",
                                           f'{{"url":"{t["a"]["url"]}","adv":"{t["a"]["adv"]}"}}')
            return [(env.range1_locked(), "a host read of range 1 was not refused")]
        bt.step(tap, [host_desc], host)
        if "jwe" not in t:
            tap.bail_rest("host setup failed", [desc])
            return 1

        def boot():
            entry = (f"root serial={bt.SERIAL} 1 clevis:{t['jwe']} "
                     f"{bt.opal_options(k, 8)},user={t['user']},retry=1,fallback=fail")
            table = env.write_table("dr-net", [entry])
            initrd, files, conf = dracut(env, k, table, "dr-net")
            legacy = [f for f in files if f.endswith(("sbin/ifup", "sbin/dhclient"))]
            neednet = [f for f in files if f.startswith("etc/cmdline.d/")]
            told = f'FDEKIT_NET="{net}"' in conf
            _, diag, text, recs = bt.boot_expect_root(
                env, k, initrd, [t["a"]], DRACUT_ARGS, drive_net="storage", net_args="",
                watch={"net": net_step, "try": TRY, "root": f"^{bt.ROOT_MARK} "})
            m = env.last_marks
            # boot_expect_root's own verdict also counts any "password" on
            # the console as a prompt, and systemd's status lines name its
            # password agents' units: the parts checked one by one instead.
            reached, intact = bt.root_result(text, env.data_sha)
            locked = bt.locked_at_boot(text)
            clevis = re.search(r"range 1 unlocked \(clevis, User", text) is not None
            asked = re.search(r"Recovery key \(Admin1\)|Passphrase for root", text)
            good = (reached and intact and locked and clevis and not asked
                    and sum(recs) >= 1)
            step = re.search(net_step, text)
            tries = re.findall(TRY, text)
            down, what = bt.tang_nic_down(text)
            said = re.search(r"fdekit: \S+ taken down \(brought up for Tang only\)", text) is not None
            tap.diag(f"{net} boot: network step {m.get('net')}, try {m.get('try')}, "
                     f"root {m.get('root')}, end {m['end']} (s from QEMU's start)")
            # What the module said and did, and the booted root's NICs,
            # also when all is well.
            said_lines = [ln.strip() for ln in text.splitlines()
                          if re.search(r"fdekit: |nm-initrd|systemd-networkd\.service|"
                                       rf"{bt.NET_MARK} |range 1 unlocked", ln)]
            tap.diag("\n".join(said_lines[:40]))
            ok = (good and told and not legacy and step is not None and len(tries) == 1
                  and tries[0][1] == "the network is up" and down and said
                  and m.get("root", 1e9) <= 180)
            return [(ok, f"locked at boot: {locked}, root reached: {reached}, data intact: "
                         f"{intact}, unlocked with the clevis key: {clevis}, prompt: "
                         f"{asked.group(0) if asked else None}; "
                         f"image: FDEKIT_NET {net}: {told}, network-legacy files: "
                         f"{legacy}, cmdline.d: {neednet}; boot: network step "
                         f"{step.group(0) if step else None}, tries {tries}, {what}, fdekit said "
                         f"it took the NIC down: {said}, Tang requests: {recs}\n{diag}")]
        started = time.monotonic()
        bt.step(tap, [desc], boot)
        tap.diag(f"scenario took {time.monotonic() - started:.0f} s")
    finally:
        env.cleanup()
    return 1 if tap.failed or tap.n != 2 else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except bt.SetupError as e:
        print(f"Bail out! {e}", flush=True)
        sys.exit(2)
