#!/usr/bin/env python3
"""The dracut module with systemd-networkd instead of network-legacy, one QEMU boot.

The same host side as tests/boot/boot-test.py (imported, not copied): a
sedsim drive whose locking range 1 holds the root file system, served over
NVMe/TCP on the guest's storage NIC (which the test's dracut module
configures statically), Tang behind socat, a key slot made by `opalctl
bind`. The image is made by the host's dracut with systemd in it and
dracut's systemd-networkd module as its network module: no network-legacy,
so no ifup, and no rd.neednet, no ip= and no BOOTIF= on the command line.
The fdekit-opal module must bring the Tang NIC up itself (a .network file
of its own, networkd reloaded or started), unlock from Tang with no prompt,
and afterwards remove its .network and take the NIC down: the booted root
sees it without an address and down, while the storage NIC, which carries
the drive, keeps its own.

Output is TAP. Exit status: 0 every test passed, 1 a test failed, 2 setup
error.
"""

import importlib.util
import os
import re
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
_spec = importlib.util.spec_from_file_location("boot_test", os.path.join(HERE, "boot-test.py"))
bt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bt)

NET_STEP = r"fdekit: bringing (\S+) up for Tang \(systemd-networkd\)"
TRY = r"fdekit: unlocking Opal drives \(try (\d+): ([^;]*); bound (\d+)s\)"
# No shell, a failure ends the boot; the journal on the console, where
# systemd runs the initqueue and the module's info() lines go to it.
DRACUT_ARGS = ("rd.shell=0 rd.emergency=reboot rd.retry=120 "
               "systemd.journald.forward_to_console=1")
MODULES = ("base rootfs-block kernel-modules udev-rules systemd systemd-initrd dracut-systemd "
           "systemd-networkd network fdekit-opal fdekit-test-nvmf")


def dracut(env, kver, table, tag):
    """Env.dracut's image, with systemd and systemd-networkd instead of
    network-legacy: (image, its file list)."""
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
            "--modules", MODULES, "--add-drivers", "virtio_pci virtio_net ext4",
            "--compress", "zstd", "--kver", kver, out], env=denv, timeout=600)
    files = set()
    for line in bt.run(["lsinitrd", out]).stdout.decode(errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 9 and parts[0][:1] in "-dlcb":
            files.add(parts[8])
    conf = bt.run(["lsinitrd", "-f", "etc/fdekit/initramfs.conf", out]).stdout.decode()
    return out, files, conf


def main():
    ap = bt.harness_args(__doc__.splitlines()[0],
                         "guest kernel release (default: the first of /boot, as boot-test.py)")
    ap.add_argument("--module-dir", default=os.path.join(bt.BOOT, "dracut", "90fdekit-opal"),
                    help="the fdekit-opal module to test (default: the source tree's)")
    args = ap.parse_args()
    args.module_dir = os.path.abspath(args.module_dir)
    args.unlock_timeout = 120
    args.extra_hook = []
    kvers = bt.guest_kernels(args.kver)
    if not kvers:
        return 2
    k = kvers[0]
    desc = (f"{k}: dracut with systemd and systemd-networkd (no network-legacy, no rd.neednet, "
            "no ip=), Tang answering: the module brings the Tang NIC up through networkd, unlocks "
            "with no prompt, then removes its .network and takes the NIC down: in the booted root "
            "it has no address and is down, the storage NIC keeps its own; root within 180 s")
    if os.path.exists(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    env = bt.Env(args)
    tap = bt.Tap(2)
    t = {}
    try:
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
        bt.step(tap, ["host: a sedsim drive whose partition 1 = locking range 1 holds the ext4 "
                      "root, locked; Tang on a loopback port; a key slot bound to it"], host)
        if "jwe" not in t:
            tap.bail_rest("host setup failed", [desc])
            return 1

        def networkd():
            entry = (f"root serial={bt.SERIAL} 1 clevis:{t['jwe']} "
                     f"{bt.opal_options(k, 8)},user={t['user']},retry=1,fallback=fail")
            table = env.write_table("dr-networkd", [entry])
            initrd, files, conf = dracut(env, k, table, "dr-networkd")
            legacy = [f for f in files if f.endswith(("sbin/ifup", "sbin/dhclient"))]
            neednet = [f for f in files if f.startswith("etc/cmdline.d/")]
            told = 'FDEKIT_NET="systemd-networkd"' in conf
            _, diag, text, recs = bt.boot_expect_root(
                env, k, initrd, [t["a"]], DRACUT_ARGS, drive_net="storage", net_args="",
                watch={"net": NET_STEP, "try": TRY, "root": f"^{bt.ROOT_MARK} "})
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
            step = re.search(NET_STEP, text)
            tries = re.findall(TRY, text)
            down, what = bt.tang_nic_down(text)
            said = re.search(r"fdekit: \S+ taken down \(brought up for Tang only\)", text) is not None
            tap.diag(f"networkd boot: network step {m.get('net')}, try {m.get('try')}, "
                     f"root {m.get('root')}, end {m['end']} (s from QEMU's start)")
            ok = (good and told and not legacy and step is not None and len(tries) == 1
                  and tries[0][1] == "the network is up" and down and said
                  and m.get("root", 1e9) <= 180)
            return [(ok, f"locked at boot: {locked}, root reached: {reached}, data intact: "
                         f"{intact}, unlocked with the clevis key: {clevis}, prompt: "
                         f"{asked.group(0) if asked else None}; "
                         f"image: FDEKIT_NET systemd-networkd: {told}, network-legacy files: "
                         f"{legacy}, cmdline.d: {neednet}; boot: network step "
                         f"{step.group(0) if step else None}, tries {tries}, {what}, fdekit said "
                         f"it took the NIC down: {said}, Tang requests: {recs}\n{diag}")]
        started = time.monotonic()
        bt.step(tap, [desc], networkd)
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
