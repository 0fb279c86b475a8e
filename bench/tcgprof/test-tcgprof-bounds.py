#!/usr/bin/env python3
"""test-tcgprof-bounds.py BOUNDS: tcgprof-bounds on a synthetic profile
directory whose figures are worked out by hand here: per-sector totals,
this project's modules, the virtio transport as a module and as built-in
functions, the software cipher, the shares and ratios with each part
taken out, the write floor (the null run less its copy), and its refusals. TAP output."""

import os
import re
import subprocess
import sys
import tempfile

from tap import Tap

KALLSYMS = """\
ffffffff81000000 T _stext
ffffffff81001000 T memset_x
ffffffff81002000 T virtqueue_add_split
ffffffff81003000 T vring_map_one_sg
ffffffff81004000 T crypt_y
ffffffff81004800 T memcpy_erms
ffffffff81005000 T _etext
ffffffffc0001000 t xo_offload\t[xts_offload]
ffffffffc0002000 t xov_submit\t[xts_offload_virtio]
ffffffffc0003000 t detach_buf_split\t[virtio_ring]
ffffffffc0004000 t aes_xts_x\t[aesni_intel]
ffffffffc0005000 t null_skcipher_crypt\t[crypto_null]
"""

MODULES = """\
xts_offload 4096 0 - Live 0xffffffffc0001000 (OE)
xts_offload_virtio 4096 0 - Live 0xffffffffc0002000 (OE)
virtio_ring 4096 0 - Live 0xffffffffc0003000
aesni_intel 4096 0 - Live 0xffffffffc0004000
crypto_null 4096 0 - Live 0xffffffffc0005000
"""

MEMSET, VQ_ADD, VRING_MAP, CRYPT = 0xffffffff81001000, 0xffffffff81002000, 0xffffffff81003000, 0xffffffff81004000
XO, XOV, DETACH, AES = 0xffffffffc0001000, 0xffffffffc0002000, 0xffffffffc0003000, 0xffffffffc0004000
MEMCPY, NULLC = 0xffffffff81004800, 0xffffffffc0005000

# 2 MiB in 4096-byte sectors: 512 sectors. Counts are per-sector figures
# times 512.
SECTORS = 512
READS = {
	# name: per-sector counts by PC
	'aesni': {CRYPT: 1000, AES: 9000},		# 10,000
	'null': {CRYPT: 1000, MEMSET: 1000},		# 2,000
	# 4,000: ours 300 + 200, ring 400 (built in) + 100 (module),
	# software 100, the rest 2,900
	'engine': {CRYPT: 1000, MEMSET: 1900, XO: 300, XOV: 200,
		   VQ_ADD: 300, VRING_MAP: 100, DETACH: 100, AES: 100},
}
# Writes: cipher_null copies (4,100 in memcpy against aesni's 100) and
# runs its own code (50): free cipher 6,000 - 4,000 - 50 = 1,950.
WRITES = {
	'aesni': {CRYPT: 1000, AES: 9000, MEMCPY: 100},			# 10,100
	'null': {CRYPT: 1000, MEMCPY: 4100, NULLC: 50, MEMSET: 850},	# 6,000
	'engine': {CRYPT: 1000, MEMSET: 1900, XO: 300, XOV: 200,	# 3,900
		   VQ_ADD: 300, VRING_MAP: 100, DETACH: 100},
}


def profile(counts):
	kern = sum(counts.values()) * SECTORS
	lines = ['# tcgprof 1', '# label 1', '# mode tb', f'# total {kern}',
		 f'# kernel {kern}', '# user 0']
	lines += [f'{pc:016x} {n * SECTORS}' for pc, n in counts.items()]
	return '\n'.join(lines) + '\n'


ROWS = ('measured', "without this project's modules", 'without them and the virtio ring')


def rows(ok, text, op, *expected):
	"""The three rows' engine/aesni and share, as worked out by hand."""
	for label, (ratio, share) in zip(ROWS, expected):
		pat = rf'{re.escape(label)}\s+{ratio:.3f}\s+{share:.2f}\b'
		ok(re.search(pat, text) is not None,
		   f'{op} {label}: engine/aesni {ratio:.3f}, share {share:.2f}', text)


def main():
	bounds = sys.argv[1]
	tap = Tap()
	ok = tap.ok

	def run(*args):
		return subprocess.run([sys.executable, bounds, *args], capture_output=True, text=True)

	with tempfile.TemporaryDirectory() as tmp:
		def write(name, text):
			with open(os.path.join(tmp, name), 'w') as fh:
				fh.write(text)

		write('kallsyms', KALLSYMS)
		write('modules', MODULES)
		runs = []
		i = 0
		for op, table in (('write', WRITES), ('read', READS)):
			for name in ('aesni', 'null', 'engine'):
				i += 1
				write(f'prof.{i}', profile(table[name]))
				runs.append(f'PROFILE {i} {name} {op} 2 4096 drv-{name} 1')
		write('runs', '\n'.join(runs[3:]) + '\n')

		r = run(tmp)
		out = r.stdout
		ok(r.returncode == 0, 'reads a profile directory', r.stderr)
		ok('read, 4096-byte sectors' in out and 'write,' not in out,
		   'reports the operation profiled, only that', out)
		ok(re.search(r'aesni 10,000\s+null 2,000\s+engine 4,000', out) is not None,
		   'per-sector totals', out)
		ok("this project's modules 500," in out, "this project's modules: both of them", out)
		ok('virtio ring 500,' in out,
		   'virtio transport: built-in functions and the module together', out)
		ok('did not take) 100' in out, 'software cipher in the engine run', out)
		# share = (10,000 - x) / 8,000
		rows(ok, out, 'read', (0.400, 0.75), (0.350, 0.81), (0.300, 0.88))

		write('runs', '\n'.join(runs) + '\n')
		r = run(tmp)
		out = r.stdout
		w = out.split('read,')[0]
		ok(r.returncode == 0 and w.startswith('write, 4096-byte sectors'),
		   'writes first, then reads', out + r.stderr)
		ok(re.search(r'aesni 10,100\s+null 6,000\s+engine 3,900\s+free cipher 1,950', w) is not None,
		   "write floor: null less its copy beyond aesni's and cipher_null's code", w)
		# share = (10,100 - x) / 8,150
		rows(ok, w, 'write', (0.386, 0.76), (0.337, 0.82), (0.287, 0.88))

		write('runs', '\n'.join(runs[3:4] + runs[5:]) + '\n')
		r = run(tmp)
		ok(r.returncode == 1 and 'PROF_RUNS="aesni null engine"' in r.stderr,
		   'refuses a directory without the null run', r.stdout + r.stderr)
		r = run(os.path.join(tmp, 'missing'))
		ok(r.returncode == 1 and 'tcgprof-bounds:' in r.stderr,
		   'says so when the directory is not there', r.stderr)
		r = run()
		ok(r.returncode == 2 and 'PROFILE_DIR' in r.stdout, 'usage without an argument', r.stdout)

	return tap.done()


if __name__ == '__main__':
	sys.exit(main())
