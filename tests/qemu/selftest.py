#!/usr/bin/env python3
"""Self-test of run-guest.py: boots guests running deliberately broken
scripts (tests/qemu/selftest/) and checks that the harness reports each
breakage as a failure. Prints TAP.

  selftest.py --kver KVER --module DIR --cache-dir DIR
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, 'selftest')

RETRY = r'^# the kernel oopsed before any script ran, untainted .*booting once more$'

# (scripts, timeout, [(description, regex that must match a line of stdout
# [, exactly how many lines])], extra run-guest.py arguments)
RUNS = [
	(['01-pass.sh', '02-short.sh', '03-notok.sh', '04-exit.sh',
	  '05-postcheck.sh', '06-panic.sh', '07-after.sh'], 300, [
		('passing results stay ok', r'^ok \d+ - 01-pass\.sh: second passes$'),
		('missing results fail', r'^not ok \d+ - 02-short\.sh: planned 3 results, printed 2$'),
		('a not ok result fails', r'^not ok \d+ - 03-notok\.sh: deliberate failure$'),
		('a non-zero exit fails', r'^not ok \d+ - 04-exit\.sh: exited with status 3$'),
		('a declared disk is attached', r'^ok \d+ - 05-postcheck\.sh: declared disk is attached$'),
		('a passing host post-check is ok', r'^ok \d+ - 05-postcheck\.sh: host check that passes \(host\)$'),
		('a failing host post-check fails', r'^not ok \d+ - 05-postcheck\.sh: host check that fails \(host\)$'),
		('a guest that dies fails', r'^not ok \d+ - 06-panic\.sh: guest died while it ran$'),
		('scripts after the crash are reported', r'^not ok \d+ - 07-after\.sh: did not run$'),
		('a kernel panic fails the kernel-log check', r'^not ok \d+ - kernel log shows no panic, oops or warning$'),
		('the plan covers every result', r'^1\.\.\d+$'),
		('a crash once scripts have run is not booted again', RETRY, 0),
	]),
	(['01-pass.sh', '08-hang.sh'], 25, [
		('a hung guest fails', r'^not ok \d+ - 08-hang\.sh: guest timed out while it ran$'),
		('the timeout is reported', r'^not ok \d+ - guest finished within 25 s$'),
	]),
	# An untainted kernel crash before the first script: booted once
	# more, and a second one fails the run.
	(['01-pass.sh'], 120, [
		('an untainted crash before any script boots once more, once only', RETRY, 1),
		('then the script is reported as not run', r'^not ok \d+ - 01-pass\.sh: did not run$'),
		('and the kernel-log check fails', r'^not ok \d+ - kernel log shows no panic, oops or warning$'),
		('the first boot reports no result of its own', r'^not ok 1 - 01-pass\.sh: did not run$'),
	], ['--append', 'fdekit.selftest_crash']),
]


def main():
	p = argparse.ArgumentParser()
	p.add_argument('--kver', required=True)
	p.add_argument('--module', required=True)
	p.add_argument('--cache-dir', required=True)
	args = p.parse_args()
	n = failed = 0
	for run in RUNS:
		scripts, timeout, expects = run[:3]
		extra = run[3] if len(run) > 3 else []
		cmd = [sys.executable, os.path.join(HERE, 'run-guest.py'),
		       '--kver', args.kver, '--module', args.module,
		       '--cache-dir', args.cache_dir, '--timeout', str(timeout),
		       '--host-tool', 'pass=/bin/true', '--host-tool', 'fail=/bin/false']
		cmd += extra + [os.path.join(FIX, s) for s in scripts]
		r = subprocess.run(cmd, capture_output=True, text=True)
		lines = r.stdout.splitlines()
		for l in lines:
			print(f'# | {l}')
		n += 1
		if r.returncode == 1:
			print(f'ok {n} - run of {scripts[-1]} exits 1')
		else:
			failed += 1
			print(f'not ok {n} - run of {scripts[-1]} exits 1 (got {r.returncode})')
			for l in r.stderr.splitlines():
				print(f'# stderr: {l}')
		for desc, rx, *count in expects:
			n += 1
			got = sum(1 for l in lines if re.match(rx, l))
			if (got == count[0]) if count else got > 0:
				print(f'ok {n} - {desc}')
			else:
				failed += 1
				want = f'exactly {count[0]}' if count else 'at least 1'
				print(f'not ok {n} - {desc} ({got} lines match {rx}, want {want})')
	print(f'1..{n}')
	return 1 if failed else 0


if __name__ == '__main__':
	sys.exit(main())
