#!/usr/bin/env python3
"""test-tcgprof-plugin.py PLUGIN QEMU: the tcgprof plugin counts what
-icount counts, at the right PCs, between two markers.

The guest is a 64 KiB firmware image of a few real-mode instructions: a
reset marker, `rep stosb` over 4096 bytes, a 100-iteration `loop`, a stop
and a start marker around three NOPs, a dump marker, then an I/O write to
isa-debug-exit, which ends QEMU. Expected: the rep instruction counts 4097
(one per iteration, plus the final check that finds CX zero), the loop
body 100 each, the markers and the NOPs while stopped nothing; under
-icount shift=0 the TSC, which is then the instruction count, moves by
exactly what was counted plus what was not. Runs per block and per
instruction, with and without -icount.
TAP output.
"""

import os
import subprocess
import sys
import tempfile

from tap import Tap

BASE = 0xFFFF0000		# real-mode CS base right after reset
TAG = (0x46, 0x50)


def marker(cmd, arg):
	# 67 0f 1f 80 disp32: nopl disp32(%eax) in 16-bit code
	return bytes([0x67, 0x0F, 0x1F, 0x80, arg, cmd]) + bytes(TAG)


def firmware():
	code = b''
	pcs = {}

	def put(name, b):
		nonlocal code
		pcs[name] = BASE + len(code)
		code += b

	# Under -icount shift=0 the TSC is the instruction count: read it
	# before and after, to compare with what the plugin counted.
	put('rdtsc1', bytes([0x0F, 0x31]))
	put('st_eax1', bytes([0x66, 0xA3, 0x00, 0x05]))		# mov [0x500], eax
	put('st_edx1', bytes([0x66, 0x89, 0x16, 0x04, 0x05]))	# mov [0x504], edx
	put('reset', marker(1, 0))
	put('xor', bytes([0x31, 0xC0]))		# xor ax, ax
	put('mov_es', bytes([0x8E, 0xC0]))		# mov es, ax
	put('mov_di', bytes([0xBF, 0x00, 0x10]))	# mov di, 0x1000
	put('mov_cx', bytes([0xB9, 0x00, 0x10]))	# mov cx, 4096
	put('cld', bytes([0xFC]))
	put('rep', bytes([0xF3, 0xAA]))		# rep stosb
	put('mov_cx2', bytes([0xB9, 0x64, 0x00]))	# mov cx, 100
	put('nop', bytes([0x90]))
	put('loop', bytes([0xE2, 0xFD]))		# loop nop
	put('stop', marker(3, 0))
	put('stopped', bytes([0x90, 0x90, 0x90]))	# not counted
	put('start', marker(2, 0))
	put('inc', bytes([0x40]))			# inc ax
	put('dump', marker(4, 7))
	put('rdtsc2', bytes([0x0F, 0x31]))
	put('st_eax2', bytes([0x66, 0xA3, 0x08, 0x05]))		# mov [0x508], eax
	put('st_edx2', bytes([0x66, 0x89, 0x16, 0x0C, 0x05]))	# mov [0x50c], edx
	# the two TSC values to isa-debugcon (port 0xe9), a byte at a time
	put('mov_si', bytes([0xBE, 0x00, 0x05]))	# mov si, 0x500
	put('mov_cx3', bytes([0xB9, 0x10, 0x00]))	# mov cx, 16
	put('lodsb', bytes([0xAC]))
	put('out_e9', bytes([0xE6, 0xE9]))		# out 0xe9, al
	put('loop2', bytes([0xE2, 0xFB]))		# loop lodsb
	put('mov_al', bytes([0xB0, 0x00]))		# mov al, 0
	put('out', bytes([0xE6, 0xF4]))		# out 0xf4, al
	put('hlt', bytes([0xF4, 0xEB, 0xFD]))	# hlt; jmp hlt
	img = bytearray(b'\xf4' * 65536)
	img[:len(code)] = code
	# reset vector at 0xfff0: jmp near 0x0000
	rel = (0x0000 - 0xFFF3) & 0xFFFF
	img[0xFFF0:0xFFF3] = bytes([0xE9, rel & 0xFF, rel >> 8])
	return bytes(img), pcs


EXPECT = {'xor': 1, 'mov_es': 1, 'mov_di': 1, 'mov_cx': 1, 'cld': 1,
	  'rep': 4097, 'mov_cx2': 1, 'nop': 100, 'loop': 100, 'inc': 1}


def read_profile(path):
	head, counts = {}, {}
	with open(path) as fh:
		for line in fh:
			if line.startswith('#'):
				f = line[1:].split()
				if len(f) == 2:
					head[f[0]] = f[1]
				continue
			pc, n = line.split()
			counts[int(pc, 16)] = int(n)
	return head, counts


def main():
	plugin, qemu = sys.argv[1], sys.argv[2]
	img, pcs = firmware()
	tap = Tap()
	ok = tap.ok

	with tempfile.TemporaryDirectory() as tmp:
		bios = os.path.join(tmp, 'fw.bin')
		with open(bios, 'wb') as fh:
			fh.write(img)
		for mode in ('tb', 'insn'):
			for icount in (False, True):
				what = f'mode={mode}{" -icount" if icount else ""}'
				prefix = os.path.join(tmp, f'p-{mode}-{int(icount)}')
				cmd = [qemu, '-accel', 'tcg', '-M', 'pc', '-nodefaults',
				       '-display', 'none', '-m', '16M', '-bios', bios,
				       '-device', 'isa-debug-exit,iobase=0xf4,iosize=4',
				       '-plugin', f'{plugin},out={prefix},mode={mode},user=on']
				con = prefix + '.con'
				cmd += ['-chardev', f'file,id=con,path={con}',
					'-device', 'isa-debugcon,iobase=0xe9,chardev=con']
				if icount:
					cmd += ['-icount', 'shift=0,sleep=off']
				try:
					r = subprocess.run(cmd, capture_output=True, text=True,
							   timeout=60, stdin=subprocess.DEVNULL)
				except subprocess.TimeoutExpired:
					ok(False, f'{what}: qemu ended by the guest')
					continue
				# isa-debug-exit: exit status (0 << 1) | 1
				ok(r.returncode == 1, f'{what}: qemu ended by the guest '
				   f'(status {r.returncode}) {r.stderr.strip()[-300:]}')
				path = prefix + '.7'
				if not os.path.exists(path):
					ok(False, f'{what}: dump 7 written')
					continue
				head, counts = read_profile(path)
				got = {name: counts.get(pc, 0) for name, pc in pcs.items()}
				want = dict(EXPECT, reset=0, dump=0, stop=0, start=0, stopped=0)
				bad = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
				ok(not bad, f'{what}: per-PC counts between the markers '
				   f'(rep stosb {got["rep"]}){" wrong: " + str(bad) if bad else ""}')
				total = sum(EXPECT.values())
				ok(head.get('total') == str(total) and head.get('kernel') == '0'
				   and len(counts) == len(EXPECT),
				   f'{what}: totals {head.get("total")} of {total}, '
				   f'{len(counts)} PCs')
				if icount:
					# Between the two TSC reads the guest executes the
					# two stores after the first, four markers, three
					# NOPs while stopped, the counted instructions and
					# the second rdtsc.
					raw = open(con, 'rb').read()
					t1, t2 = (int.from_bytes(raw[i:i + 8], 'little') for i in (0, 8))
					delta = t2 - t1 if len(raw) == 16 else None
					ok(delta == total + 10, f'{what}: icount between the TSC reads '
					   f'{delta}, counted {total} + 10 not counted')
				ok(head.get('mode') == mode, f'{what}: header says mode {head.get("mode")}')
				final = prefix + '.final'
				if os.path.exists(final):
					fh_, fc = read_profile(final)
					ok(fc.get(pcs['mov_al'], 0) == 1 and fc.get(pcs['rep']) == 4097,
					   f'{what}: the final dump at exit goes on past the dump marker')
				else:
					ok(False, f'{what}: final dump written at exit')
	return tap.done()


if __name__ == '__main__':
	sys.exit(main())
