#!/usr/bin/env python3
"""Every opalctl command's --json output against Documentation/opalctl.schema.json.

    test_opalctl_json.py OPALCTL-SIM SEDSIM SCHEMA

Runs each command of the command table (as `opalctl --help` lists them) on
an in-process sedsim drive, and some of their failures, and validates what
each prints: success against $defs/COMMAND, failure against $defs/error.
The schema's objects forbid members they do not name, so a key renamed or
added in one command and not the schema fails here. bind, unbind, slots
and regen run against a Tang server on the loopback (tangd behind socat).
TAP output.
"""
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from jsonschema import Draft202012Validator

results = []


def tap(ok, desc, diag=""):
    results.append((ok, desc, diag))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_tang(d):
    keys = os.path.join(d, "tang")
    os.makedirs(keys)
    subprocess.run(["/usr/libexec/tangd-keygen", keys], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = free_port()
    proc = subprocess.Popen(["socat", f"TCP-LISTEN:{port},bind=127.0.0.1,fork,reuseaddr",
                             f"SYSTEM:/usr/libexec/tangd {keys}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    thp = None
    for k in glob.glob(os.path.join(keys, "*.jwk")):
        with open(k) as f:
            if '"verify"' in f.read():
                thp = subprocess.run(["jose", "jwk", "thp", "-i", k], check=True,
                                     capture_output=True, text=True).stdout.strip()
    for _ in range(50):
        if subprocess.run(["curl", "-sf", "-m", "2", f"http://127.0.0.1:{port}/adv"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0:
            break
        time.sleep(0.1)
    return proc, port, thp


def main():
    oc, sedsim, schema_path = sys.argv[1:4]
    with open(schema_path) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    defs = schema["$defs"]

    def validator(name):
        return Draft202012Validator({"$schema": schema["$schema"], "$defs": defs,
                                     "$ref": f"#/$defs/{name}"})

    help_out = subprocess.run([oc, "--help"], capture_output=True, text=True).stdout
    commands = re.findall(r"^  ([a-z][a-z-]*) ", help_out, re.M)
    tap(len(commands) > 20, f"--help lists the commands ({len(commands)})")
    missing = [c for c in commands if c not in defs]
    tap(not missing, "the schema has a definition for every command",
        f"missing: {missing}")
    validated = set()

    tmp = tempfile.mkdtemp(prefix="opalctl-json.")
    os.chmod(tmp, 0o700)
    tang = None
    try:
        os.umask(0o077)
        drive = os.path.join(tmp, "drive")
        os.mkdir(drive)
        subprocess.run([sedsim, "create", drive, "--blocks", "8192"], check=True,
                       stdout=subprocess.DEVNULL)
        k, k2, pp = (os.path.join(tmp, n) for n in ("admin.key", "k2.key", "pp.key"))
        psid = os.path.join(tmp, "psid")
        with open(psid, "w") as f:
            f.write(subprocess.run([sedsim, "psid", drive], check=True, capture_output=True,
                                   text=True).stdout)
        tang, port, thp = start_tang(tmp)
        tab = os.path.join(tmp, "opaltab")
        with open(tab, "w") as f:
            f.write(f"root {drive} 0 keyfile:{k} transport=sedsim,fallback=fail\n"
                    f"wrong {drive} 0 keyfile:{k2} transport=sedsim,fallback=fail,noauto\n")

        def run(want_rc, *args, name=None):
            cmd = args[0]
            p = subprocess.run([oc, "--json", *args], capture_output=True, text=True,
                               stdin=subprocess.DEVNULL)
            desc = f"opalctl --json {' '.join(args)}"
            desc = desc.replace(tmp + "/", "")
            if p.returncode != want_rc:
                tap(False, f"{desc}: exit {want_rc}", f"exit {p.returncode}: {p.stderr.strip()}")
                return None
            try:
                out = json.loads(p.stdout)
            except ValueError as e:
                tap(False, f"{desc}: one JSON object on stdout", f"{e}: {p.stdout[:300]!r}")
                return None
            if "\\/" in p.stdout:
                tap(False, f"{desc}: no escaped slashes", p.stdout[:300])
                return None
            d = name or (cmd if want_rc == 0 or (cmd in ("unlock-all", "lock-all") and
                                                 want_rc == 11) else "error")
            errs = sorted(validator(d).iter_errors(out), key=lambda e: list(e.path))
            tap(not errs, f"{desc}: exit {want_rc}, valid {d}",
                "; ".join(f"{list(e.path)}: {e.message}" for e in errs[:3]))
            if not errs and d != "error":
                validated.add(cmd)
            if d == "error" and not errs and out["exit_code"] != want_rc:
                tap(False, f"{desc}: exit_code says {want_rc}", str(out))
            return out

        d = drive
        run(0, "keygen", k)
        run(0, "keygen", k2)
        run(0, "keygen", "--passphrase", pp)
        run(0, "scan")
        run(0, "discover", d)
        run(0, "msid", d)
        run(0, "status", d)
        run(1, "setup", d, "-k", k)          # the global range only when named
        run(0, "setup", d, "-k", k, "--global")
        run(0, "status", d, "-k", k)
        run(0, "lock", d, "-k", k)
        run(0, "unlock", d, "-k", k)
        run(0, "lock", d, "-k", k, "--all")
        run(0, "unlock", d, "-k", k, "--all", "--read-only")
        run(4, "unlock", d, "-k", k2)
        run(1, "lock", d, "-k", k, "--read-only")
        run(0, "change-key", d, "-k", k, "--new-keyfile", k2, "--who", "admin1")
        run(0, "change-key", d, "-k", k2, "--new-keyfile", k, "--who", "admin1")
        run(0, "user-enable", d, "-k", k, "--user", "3")
        run(0, "user-key", d, "-k", k, "--user", "3", "--new-keyfile", k2)
        run(0, "grant", d, "-k", k, "--user", "3", "--range", "0", "--read-only")
        run(0, "access", d, "-k", k)
        run(0, "revoke", d, "-k", k, "--user", "3", "--range", "0")
        run(0, "user-disable", d, "-k", k, "--user", "3")
        run(0, "mbr", d, "-k", k, "--enable", "--done")
        run(0, "mbr", d, "-k", k, "--disable")
        run(10, "setup", d, "-k", k, "--range", "1", "--start", "1024", "--length", "1024")
        run(0, "setup", d, "-k", k, "--range", "1", "--start", "1024", "--length", "1024",
            "--yes-destroy-data")
        run(0, "range-disable", d, "-k", k, "--range", "1")
        run(10, "erase-range", d, "-k", k, "--range", "1")
        run(0, "erase-range", d, "-k", k, "--range", "1", "--yes-destroy-data")
        jwe = os.path.join(tmp, "slot.jwe")
        cfg = json.dumps({"url": f"http://127.0.0.1:{port}", "thp": thp})
        run(0, "bind", d, "-k", k, "--range", "0", "--pin", "tang", "--config", cfg,
            "--jwe", jwe)
        run(0, "slots", d, "-k", k)
        # Tang key rotation: the report and regen, before and after the
        # server rotates (an initramfs image holding the JWE, made here).
        img = os.path.join(tmp, "initrd.img")
        root = os.path.join(tmp, "imgroot")
        os.makedirs(root + os.path.dirname(jwe))
        shutil.copy(jwe, root + jwe)
        cpio = subprocess.run("find . | cpio -o -H newc --quiet | gzip", shell=True, cwd=root,
                              check=True, capture_output=True).stdout
        with open(img, "wb") as f:
            f.write(cpio)
        run(0, "slots", "--report", "--jwe", jwe, "--initramfs", img, name="slots-report")
        run(0, "regen", "--jwe", jwe)
        subprocess.run(["/usr/libexec/tangd-rotate-keys", "-d", os.path.join(tmp, "tang")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        run(15, "slots", "--report", "--jwe", jwe, "--initramfs", img, name="slots-report")
        run(0, "regen", "--jwe", jwe)
        run(1, "regen", "--all", "--jwe", jwe)
        run(0, "unbind", d, "-k", k, "--slot", "1", "--jwe", jwe)
        run(7, "regen", "--jwe", os.path.join(tmp, "none.jwe"), name="regen")
        run(0, "check-table", "--table", tab)
        run(0, "check-table", "--table", tab, "--boot")
        run(12, "check-table", "--table", os.path.join(tmp, "none"))
        run(0, "lock", d, "-k", k)
        run(0, "unlock-all", "--table", tab, "--no-prompt")
        run(0, "lock-all", "--table", tab)
        run(11, "unlock-all", "--table", tab, "--name", "wrong", "--no-prompt")
        run(11, "lock-all", "--table", tab, "--name", "wrong")
        run(0, "revert", d, "-k", k, "--keep-data", "--yes-destroy-data")
        run(0, "setup", d, "-k", k, "--global")
        run(0, "revert", d, "-k", k, "--yes-destroy-data")
        run(0, "setup", d, "-k", k, "--global")
        run(0, "psid-revert", d, "--psid-file", psid, "--yes-destroy-data")
        run(2, "status", os.path.join(tmp, "nonexistent"))
        left = [c for c in commands if c not in validated]
        tap(not left, "every command's success output was validated", f"not run: {left}")
    finally:
        if tang:
            tang.terminate()
            tang.wait()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"1..{len(results)}")
    for i, (ok, desc, diag) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {desc}")
        if not ok and diag:
            for line in diag.splitlines():
                print(f"# {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
