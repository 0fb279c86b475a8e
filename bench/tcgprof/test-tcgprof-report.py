#!/usr/bin/env python3
"""test-tcgprof-report.py REPORT: tcgprof-report on synthetic symbols and
profiles: attribution to the nearest symbol below, module bounds, PCs past
the kernel's text, __pfx_ padding, user-mode totals, per-unit division,
the side-by-side difference, and its refusals. TAP output."""

import os
import re
import subprocess
import sys
import tempfile

from tap import Tap

KALLSYMS = """\
ffffffff81000000 T _stext
ffffffff81000000 T startup_64
ffffffff81001000 t __pfx_f_b
ffffffff81001010 T f_b
ffffffff81002000 T f_a
ffffffff81003000 D some_data
ffffffff81004000 T _etext
ffffffffc0001000 t mod_x\t[m1]
ffffffffc0001100 t mod_y\t[m1]
ffffffffc0003000 t other_z\t[m2]
"""

MODULES = """\
m1 8192 0 - Live 0xffffffffc0001000
m2 4096 0 - Live 0xffffffffc0003000 (OE)
"""


def profile(counts, user=0):
	kern = sum(n for pc, n in counts if pc >> 63)
	lines = ['# tcgprof 1', '# label 1', '# mode tb', f'# total {kern + user}',
		 f'# kernel {kern}', f'# user {user}']
	lines += [f'{pc:016x} {n}' for pc, n in counts]
	return '\n'.join(lines) + '\n'


A = [(0xffffffff81002000, 300), (0xffffffff81002010, 100),	# f_a: 400
     (0xffffffff81001008, 8), (0xffffffff81001020, 92),		# f_b (pfx): 100
     (0xffffffffc0001104, 200),					# mod_y [m1]
     (0xffffffffc0004000, 50),					# past m2: unknown
     (0xffffffff81004100, 50)]					# past _etext: unknown
B = [(0xffffffff81002000, 100),					# f_a: 100
     (0xffffffffc0001000, 500),					# mod_x [m1]
     (0xffffffffc0003004, 100)]					# other_z [m2]


def main():
	report = sys.argv[1]
	tap = Tap()
	ok = tap.ok

	with tempfile.TemporaryDirectory() as tmp:
		def write(name, text):
			path = os.path.join(tmp, name)
			with open(path, 'w') as fh:
				fh.write(text)
			return path

		ks = write('kallsyms', KALLSYMS)
		mods = write('modules', MODULES)
		pa = write('prof.a', profile(A, user=100))
		pb = write('prof.b', profile(B, user=100))

		def run(*args):
			return subprocess.run([sys.executable, report, *args],
					      capture_output=True, text=True)

		r = run('--kallsyms', ks, '--modules', mods, '--per', '10', '--unit', 'sector',
			'--top', '0', pa + '=alpha')
		out = r.stdout
		rows = {}
		for line in out.splitlines():
			m = re.match(r'^\s*([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S.*)$', line)
			if m:
				rows[m.group(4)] = float(m.group(1))
		ok(r.returncode == 0, 'single profile: exit 0', r.stderr)
		ok(rows.get('f_a') == 40.0, 'two PCs of one function add up, divided by --per', out)
		ok(rows.get('f_b') == 10.0, '__pfx_ padding is credited to its function', out)
		ok(rows.get('mod_y [m1]') == 20.0, 'a module PC goes to the module symbol below it', out)
		ok(rows.get('[unknown] [?]') == 10.0,
		   'PCs past _etext and past a module\'s end are unknown', out)
		ok(rows.get('[user]') == 10.0, 'user-mode instructions appear as [user]', out)
		mod_rows = dict((l.split()[-1], float(l.split()[0])) for l in out.splitlines()
				if re.match(r'^\s*[\d.]+\s+[\d.]+\s+\S+$', l))
		ok(mod_rows.get('vmlinux') == 50.0 and mod_rows.get('m1') == 20.0
		   and mod_rows.get('user') == 10.0, 'totals per module', out)
		ok('total' in out and re.search(r'^\s*90\.0\s+100\.00\s+total$', out, re.M),
		   'total per unit over kernel and user', out)

		r = run('--kallsyms', ks, '--modules', mods, '--top', '2', pa + '=A', pb + '=B')
		out = r.stdout
		ok(r.returncode == 0, 'two profiles: exit 0', r.stderr)
		m = re.search(r'^\s*400\.0\s+100\.0\s+-300\.0\s+f_a$', out, re.M)
		ok(bool(m), 'side by side: A, B and B-A per function', out)
		m = re.search(r'^\s*0\.0\s+500\.0\s+500\.0\s+mod_x \[m1\]$', out, re.M)
		ok(bool(m), 'a function only B ran shows 0 for A', out)
		ok('more functions)' in out, '--top cuts the list and sums the rest', out)
		m = re.search(r'^\s*900\.0\s+800\.0\s+-100\.0\s+total$', out, re.M)
		ok(bool(m), 'totals and their difference', out)
		first = [l for l in out.splitlines() if l.strip().endswith(('f_a', 'mod_x [m1]'))]
		ok(len(first) == 2 and first[0].endswith('mod_x [m1]'),
		   'sorted by the larger of the two counts', out)

		# A kernel relocated against a real System.map is refused; Debian's
		# one-line stand-in is ignored with a note.
		sm = write('System.map', 'ffffffff80000000 T _stext\nffffffff80004000 T _etext\n'
			   'ffffffff80002000 T f_a\n')
		r = run('--system-map', sm, '--kallsyms', ks, pa)
		ok(r.returncode != 0 and 'nokaslr' in r.stderr,
		   'a guest not at System.map\'s addresses is refused', r.stdout + r.stderr)
		stub = write('stub.map', 'ffffffffffffffff B The real System.map is in the '
			     'linux-image-<version>-dbg package\n')
		r = run('--system-map', stub, '--kallsyms', ks, '--modules', mods, pa)
		ok(r.returncode == 0 and 'ignored' in r.stderr and 'f_a' in r.stdout,
		   'a stand-in System.map is ignored', r.stdout + r.stderr)
		good = write('good.map', 'ffffffff81000000 T _stext\nffffffff81004000 T _etext\n'
			     'ffffffff81002000 T f_a\nffffffff81003000 D some_data\n')
		r = run('--system-map', good, pa)
		ok(r.returncode == 0 and re.search(r'\sf_a$', r.stdout, re.M) is not None,
		   'System.map alone symbolizes the kernel', r.stdout + r.stderr)
		zero = write('zero', 'ffffffffc0001000 t mod_x\t[m1]\n0000000000000000 T f\n')
		r = run('--kallsyms', zero, pa)
		ok(r.returncode != 0 and 'zero addresses' in r.stderr,
		   'kallsyms read without the right to see addresses is refused', r.stderr)
		bad = write('bad', 'ffffffff81002000 3\n')
		r = run('--kallsyms', ks, bad)
		ok(r.returncode != 0 and 'not a tcgprof profile' in r.stderr,
		   'a file without the tcgprof header is refused', r.stderr)
	return tap.done()


if __name__ == '__main__':
	sys.exit(main())
