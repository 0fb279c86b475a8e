#!/usr/bin/env python3
"""Report of one bench/offload-bench boot: the guest's RESULT lines in,
the table and the ratios against issue targets out.

Input lines (from bench/guest/offload.sh):
  RESULT NAME SECTOR KEYBITS WRITE_CS READ_CS MIB DRIVER CIPHER_NS_PER_B REQUESTS ASYNC READS
WRITE_CS: guest CPU busy time of the timed write, centiseconds; READ_CS: of
READS timed reads of the same data (reported per read).
"""
import sys

SECTORS = (512, 1024, 2048, 4096)


def main():
	rows = {}
	order = []
	bad = False
	for line in sys.stdin:
		w = line.split()
		if 'CIPHER-ERROR' in line:
			print('offload-bench: cipher-call trace incomplete: ' + line.strip(), file=sys.stderr)
			bad = True
		if not w or w[0] != 'RESULT' or len(w) != 12:
			continue
		name, sector, bits = w[1], int(w[2]), int(w[3])
		r = dict(wcs=int(w[4]), rcs=int(w[5]) / int(w[11]), mib=int(w[6]), driver=w[7],
			 cipher=None if w[8] == '-' else float(w[8]),
			 req=int(w[9]), asy=int(w[10]))
		rows[(name, sector, bits)] = r
		order.append((name, sector, bits))
	if not rows:
		print('offload-bench: no results', file=sys.stderr)
		return 1
	mib = next(iter(rows.values()))['mib']
	nbytes = mib * 1048576

	def nspb(cs):
		return cs * 1e7 / nbytes

	print(f'{"run/sector/key":<22} {"driver":<16} {"write s":>8} {"read s":>7}'
	      f' {"write ns/B":>10} {"read ns/B":>9} {"cipher ns/B":>11} {"async":>6}')
	for k in order:
		r = rows[k]
		name, sector, bits = k
		label = f'{name}/{sector}' + (f'/{bits}' if bits else '')
		asy = f'{100 * r["asy"] / r["req"]:.0f}%' if r['req'] else '-'
		cip = f'{r["cipher"]:.3f}' if r['cipher'] is not None else '-'
		print(f'{label:<22} {r["driver"]:<16} {r["wcs"] / 100:>8.2f} {r["rcs"] / 100:>7.2f}'
		      f' {nspb(r["wcs"]):>10.3f} {nspb(r["rcs"]):>9.3f} {cip:>11} {asy:>6}')

	def get(name, sector, bits=0):
		return rows.get((name, sector, bits))

	verdicts = []

	def check(what, value, ok):
		verdicts.append((what, value, ok))

	print()
	print('ratios (guest CPU time, same boot):')
	for bits in sorted({k[2] for k in rows if k[2]}):
		print(f'  AES-{bits // 2}-XTS ({bits}-bit key):')
		for s in SECTORS:
			a, e, n = get('aesni', s, bits), get('engine', s, bits), get('null', s)
			if not (a and e):
				continue
			line = (f'    engine/aesni   {s:4d}-byte sectors: write {e["wcs"] / a["wcs"]:.3f},'
				f' read {e["rcs"] / a["rcs"]:.3f}')
			if n and n['cipher'] is not None:
				# Free cipher: dm-crypt with cipher_null, minus its cipher
				# call on writes (a copy), as is on reads (in place).
				free_w = n['wcs'] - n['cipher'] * nbytes / 1e7
				sw = (a['wcs'] - e['wcs']) / (a['wcs'] - free_w)
				sr = (a['rcs'] - e['rcs']) / (a['rcs'] - n['rcs'])
				line += f'; share of the cipher\'s cost removed: write {sw:.2f}, read {sr:.2f}'
				if s == 4096:
					check(f'{bits}-bit, 4096 B: write share >= 0.80', sw, sw >= 0.80)
					check(f'{bits}-bit, 4096 B: read share >= 0.80', sr, sr >= 0.80)
			print(line)
			if s == 512:
				check(f'{bits}-bit, 512 B, threshold 0: engine/aesni write <= 1.0',
				      e['wcs'] / a['wcs'], e['wcs'] <= a['wcs'])
				check(f'{bits}-bit, 512 B, threshold 0: engine/aesni read <= 1.0',
				      e['rcs'] / a['rcs'], e['rcs'] <= a['rcs'])
		# Software only (no engine), and the default threshold: within 3%.
		for run in ('fallback', 'default'):
			for s in SECTORS:
				a, r = get('aesni', s, bits), get(run, s, bits)
				if not (a and r):
					continue
				print(f'    {run + "/aesni":<14} {s:4d}-byte sectors: write {r["wcs"] / a["wcs"]:.3f},'
				      f' read {r["rcs"] / a["rcs"]:.3f}')
				for d, key in (('write', 'wcs'), ('read', 'rcs')):
					check(f'{bits}-bit, {s} B: {run}/aesni {d} <= 1.03',
					      r[key] / a[key], r[key] <= 1.03 * a[key])
	a, n = get('aesni', 4096, 512), get('null', 4096)
	if a and n and a['cipher'] and n['cipher'] is not None:
		print(f'  copy weight, 4096-byte sectors: {n["cipher"] / a["cipher"]:.3f} (cipher_null call / aesni call, 512-bit key)')
		print(f'  free cipher, 4096-byte sectors: write {(nspb(n["wcs"]) - n["cipher"]) / nspb(a["wcs"]):.3f},'
		      f' read {n["rcs"] / a["rcs"]:.3f} of aesni (512-bit key)')
	print()
	print('targets:')
	for what, value, ok in verdicts:
		print(f'  {"met " if ok else "MISS"}  {what}: {value:.3f}')
	return 1 if bad else 0


if __name__ == '__main__':
	sys.exit(main())
