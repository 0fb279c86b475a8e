#!/usr/bin/env python3
"""test-fde-matrix-errors: bench/fde-matrix's answers to bad input, as TAP.
Each must be one line on stderr, nothing on stdout, and its own exit code
(see `bench/fde-matrix --help`). These need no guest.

With --guest KVER --build DIR, also the one that needs a guest: fio missing
in the guest (fde-matrix --guest-fio NAME looks for NAME instead of fio);
with --missing sysbench, sysbench missing in the guest instead (--workload
sysbench --guest-sysbench NAME).
"""

import os
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(TOP, 'bench', 'fde-matrix')

# (name, arguments, exit code, text the line must hold)
HOST_CASES = [
	('unknown target', ['--targets', 'plain,aes-gcm'], 3, "unknown target 'aes-gcm'"),
	('unknown device', ['--devices', 'nvme0n1'], 3, "unknown device 'nvme0n1'"),
	('unknown pattern', ['--patterns', 'trim'], 3, "unknown pattern 'trim'"),
	('unknown block size', ['--bs', '3k'], 3, "unknown block size '3k'"),
	('unknown iodepth', ['--iodepth', '0'], 3, "unknown iodepth '0'"),
	('block size larger than the device', ['--devices', 'brd', '--bs', '64m', '--dev-mib', '64'], 4,
	 'block size 64M is larger than device brd'),
	('malformed number', ['--runtime-ms', 'soon'], 2, 'invalid int value'),
	('unknown option', ['--no-such-option'], 2, 'unrecognized arguments'),
	('--quick and --full together', ['--quick', '--full'], 2, 'not allowed with'),
	('--render of a directory that holds no run', ['--render', '/nonexistent-fde-matrix-run'], 2,
	 'is not an fde-matrix run directory'),
	('--repeat 0', ['--repeat', '0'], 2, '--repeat must be at least 1'),
	('unknown workload', ['--workload', 'bonnie'], 2, 'invalid choice'),
	('sysbench: a fio pattern', ['--workload', 'sysbench', '--patterns', 'read'], 3,
	 "unknown pattern 'read'"),
	('sysbench: null_blk, which holds no file system', ['--workload', 'sysbench', '--devices', 'null_blk'], 3,
	 'device null_blk keeps no data'),
	('sysbench: --iodepth', ['--workload', 'sysbench', '--iodepth', '32'], 2,
	 '--iodepth applies to the fio workload only'),
	('sysbench: --runtime-ms', ['--workload', 'sysbench', '--runtime-ms', '50'], 2,
	 '--runtime-ms applies to the fio workload only'),
	('fio: --sysbench-direct', ['--sysbench-direct'], 2, '--sysbench-direct applies to --workload sysbench only'),
	('sysbench: a block size larger than its files', ['--workload', 'sysbench', '--quick', '--bs', '1m'], 4,
	 "block size 1M is larger than sysbench's files"),
]


def run(args, env=None, timeout=60):
	return subprocess.run([sys.executable, TOOL] + args, capture_output=True, text=True,
			      env=env, timeout=timeout)


def one_line_error(r, code, text):
	lines = r.stderr.splitlines()
	problems = []
	if r.returncode != code:
		problems.append(f'exit {r.returncode}, expected {code}')
	if len(lines) != 1 or not lines[0].startswith('fde-matrix: ') or text not in lines[0]:
		problems.append(f'stderr is not one line "fde-matrix: ...{text}...": {r.stderr!r}')
	if r.stdout:
		problems.append(f'stdout not empty: {r.stdout[:200]!r}')
	return problems


def main(argv):
	guest = build = None
	missing = 'fio'
	if '--guest' in argv:
		guest = argv[argv.index('--guest') + 1]
		build = argv[argv.index('--build') + 1]
	if '--missing' in argv:
		missing = argv[argv.index('--missing') + 1]
	n = failed = 0

	def result(ok, desc, problems=()):
		nonlocal n, failed
		n += 1
		failed += not ok
		print(f'{"ok" if ok else "not ok"} {n} - {desc}', flush=True)
		for p in problems:
			print(f'# {p}', flush=True)

	if guest is None:
		for name, args, code, text in HOST_CASES:
			problems = one_line_error(run(args), code, text)
			result(not problems, f'{name}: one line, exit {code}', problems)
		# fio absent on the host (the guest gets the host's fio): PATH
		# without it, python still found by its full path.
		with tempfile.TemporaryDirectory() as empty:
			env = dict(os.environ, PATH=empty)
			problems = one_line_error(run(['--quick'], env=env), 5, 'fio not found on the host')
			result(not problems, 'no fio on the host: one line, exit 5', problems)
			problems = one_line_error(run(['--workload', 'sysbench', '--quick'], env=env), 7,
						  'sysbench not found on the host')
			result(not problems, 'no sysbench on the host (--workload sysbench): one line, exit 7', problems)
		# --help: exit 0, every option and every exit code listed.
		r = run(['--help'])
		want = ['--workload', '--quick', '--full', '--targets', '--devices', '--patterns', '--bs',
			'--iodepth', '--runtime-ms', '--dev-mib', '--sector-size', '--wallclock', '--kver',
			'--build', '--out', '--guest-fio', '--guest-sysbench', '--sysbench-direct', '--qemu-arg',
			'--repeat',
			'--timeout', '--render', 'Exit codes']
		missing = [w for w in want if w not in r.stdout]
		missing += [f'exit code {c}' for c in range(8) if f'\n  {c}  ' not in r.stdout]
		result(r.returncode == 0 and not missing, '--help lists every option and exit code',
		       [f'exit {r.returncode}, missing {missing}'] if missing or r.returncode else [])
	elif missing == 'sysbench':
		with tempfile.TemporaryDirectory() as out:
			r = run(['--workload', 'sysbench', '--kver', guest, '--build', build,
				 '--guest-sysbench', 'no-such-sysbench', '--targets', 'plain', '--devices', 'brd',
				 '--patterns', 'rndrd', '--out', os.path.join(out, 'run')], timeout=900)
		problems = one_line_error(r, 7, 'sysbench not found in the guest')
		result(not problems, f'no sysbench in the guest ({guest}): one line, exit 7', problems)
	else:
		with tempfile.TemporaryDirectory() as out:
			r = run(['--kver', guest, '--build', build, '--guest-fio', 'no-such-fio',
				 '--targets', 'plain', '--devices', 'brd', '--patterns', 'read', '--bs', '4k',
				 '--iodepth', '1', '--runtime-ms', '10', '--out', os.path.join(out, 'run')],
				timeout=900)
		problems = one_line_error(r, 5, 'fio not found in the guest')
		result(not problems, f'no fio in the guest ({guest}): one line, exit 5', problems)
	print(f'1..{n}')
	return 1 if failed else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
