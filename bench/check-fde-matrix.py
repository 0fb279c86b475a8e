#!/usr/bin/env python3
"""check-fde-matrix: the structure and sanity of a bench/fde-matrix run
directory, as TAP. Not speed: every cell present, plain's loss against
itself 0, dm-crypt's loss above 0 wherever the cipher runs on the CPU, the
engine doing work in the offload rows and none in the fallback rows, valid
PNG plots, and the CSV, the JSON and the Markdown report agreeing. Runs of
either workload (fio, sysbench) and of --repeat N (the spread columns and
the report's Repeatability table).

  bench/check-fde-matrix.py RUNDIR [--mode icount|wallclock]

With --run ARGS..., runs bench/fde-matrix ARGS --out RUNDIR first (RUNDIR
is emptied) and checks its exit status too. Exit 0 when every check
passed, 1 otherwise.
"""

import csv
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Tap:
	def __init__(self):
		self.n = 0
		self.failed = 0

	def ok(self, cond, desc, why=''):
		self.n += 1
		if not cond:
			self.failed += 1
		print(f'{"ok" if cond else "not ok"} {self.n} - {desc}', flush=True)
		if not cond and why:
			for line in str(why).splitlines()[:20]:
				print(f'# {line}', flush=True)
		return cond

	def diag(self, text):
		print(f'# {text}', flush=True)


def png_problem(path):
	"""None when PATH is a valid PNG (signature, chunk CRCs, IHDR first and
	IEND last, image data that inflates to the size IHDR gives)."""
	try:
		with open(path, 'rb') as fh:
			data = fh.read()
	except OSError as e:
		return str(e)
	if not data.startswith(b'\x89PNG\r\n\x1a\n'):
		return 'no PNG signature'
	pos, kinds, idat, hdr = 8, [], b'', None
	while pos + 12 <= len(data):
		n, kind = struct.unpack('>I4s', data[pos:pos + 8])
		body = data[pos + 8:pos + 8 + n]
		if len(body) != n or zlib.crc32(kind + body) != struct.unpack('>I', data[pos + 8 + n:pos + 12 + n])[0]:
			return f'chunk {kind!r} truncated or with a bad CRC'
		kinds.append(kind)
		if kind == b'IHDR':
			hdr = struct.unpack('>IIBB', body[:10])
		elif kind == b'IDAT':
			idat += body
		pos += 12 + n
	if not kinds or kinds[0] != b'IHDR' or kinds[-1] != b'IEND' or hdr is None:
		return 'IHDR or IEND missing'
	w, h, depth, ctype = hdr
	chans = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(ctype)
	if not chans or w < 100 or h < 100:
		return f'odd image: {w}x{h}, colour type {ctype}'
	try:
		raw = zlib.decompress(idat)
	except zlib.error as e:
		return f'image data: {e}'
	if len(raw) != h * (1 + (w * chans * depth + 7) // 8):
		return 'image data size does not match the header'
	return None


def md_tables(path):
	"""{(heading, row label): [cells]} for every table under a #### heading."""
	tables = {}
	heading = None
	with open(path) as fh:
		for line in fh:
			line = line.rstrip('\n')
			if line.startswith('#### '):
				heading = line[5:].strip()
			elif line.startswith('| ') and heading and not line.startswith('|---'):
				cells = [c.strip() for c in line.strip('|').split('|')]
				tables.setdefault(heading, {})[cells[0]] = cells[1:]
			elif not line.strip():
				pass
			elif not line.startswith('|'):
				heading = heading if line.startswith('#### ') else None
	return tables


def check(rundir, mode, tap):
	paths = {n: os.path.join(rundir, n) for n in ('report.md', 'results.csv', 'results.json')}
	for n, p in paths.items():
		if not tap.ok(os.path.isfile(p), f'{n} exists'):
			return
	try:
		with open(paths['results.json']) as fh:
			js = json.load(fh)
		jerr = None
	except ValueError as e:
		js, jerr = None, e
	tap.ok(js is not None, 'results.json parses', jerr)
	try:
		with open(paths['results.csv'], newline='') as fh:
			rows = list(csv.DictReader(fh))
		cerr = None
	except (csv.Error, UnicodeDecodeError) as e:
		rows, cerr = None, e
	tap.ok(rows is not None and len(rows) > 0, f'results.csv parses ({len(rows or [])} rows)', cerr)
	if js is None or not rows:
		return
	meta = js['meta']
	tap.ok(meta['mode'] == mode and all(r['mode'] == mode for r in rows),
	       f'mode is {mode} in the JSON and every CSV row')
	with open(paths['report.md']) as fh:
		md = fh.read()
	label = 'deterministic (icount)' if mode == 'icount' else 'WALL-CLOCK'
	tap.ok(md.splitlines()[0].endswith(f'{label} mode'), f'the report\'s title says "{label} mode"')
	check_repeat(meta, rows, js, md, tap)
	if meta.get('workload', 'fio') == 'sysbench':
		check_sysbench(rundir, meta, rows, js, md, tap)
		return

	# Every cell, once, in the CSV and the JSON.
	want = {(r.split('/')[0], r.split('/')[1], p, bs, str(qd))
		for r in meta['rows'] for p in meta['patterns'] for bs in meta['block_sizes']
		for qd in meta['iodepths']}
	got_csv = [(r['target'], r['device'], r['pattern'], r['bs'], r['iodepth']) for r in rows]
	got_js = [(c['target'], c['device'], c['pattern'], c['bs'], str(c['iodepth'])) for c in js['cells']]
	tap.ok(sorted(got_csv) == sorted(want) and len(set(got_csv)) == len(got_csv),
	       f'every cell present once in the CSV ({len(want)} = {len(meta["rows"])} rows x '
	       f'{len(meta["patterns"])} patterns x {len(meta["block_sizes"])} block sizes x '
	       f'{len(meta["iodepths"])} iodepths)', f'missing {sorted(want - set(got_csv))[:5]}')
	tap.ok(sorted(got_js) == sorted(want) and len(set(got_js)) == len(got_js),
	       'every cell present once in the JSON')

	# The CSV and the JSON carry the same numbers.
	jindex = {(c['target'], c['device'], c['pattern'], c['bs'], str(c['iodepth'])): c for c in js['cells']}
	bad = []
	for r in rows:
		c = jindex.get((r['target'], r['device'], r['pattern'], r['bs'], r['iodepth']))
		for k in ('ios', 'bytes', 'bw_bytes', 'iops', 'bw_loss_pct', 'iops_loss_pct',
			  'busy_s', 'cpu_us_per_io', 'lat_p50_us', 'lat_p99_us', 'engine_share'):
			a, b = r.get(k, ''), None if c is None else c.get(k)
			if a == '' and b is None:
				continue
			if b is None or a == '' or abs(float(a) - float(b)) > 1e-5 * max(1.0, abs(float(b))):
				bad.append(f'{r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]} {k}: csv {a} json {b}')
	tap.ok(not bad, 'the CSV and the JSON agree on every cell', '\n'.join(bad))

	# The Markdown loss tables show the CSV's figures.
	tables = md_tables(paths['report.md'])
	bad = []
	seen = 0
	for metric, key in (('bandwidth', 'bw_loss_pct'), ('IOPS', 'iops_loss_pct')):
		for p in meta['patterns']:
			t = tables.get(f'{metric} loss (%), {p}')
			if t is None:
				bad.append(f'no Markdown table "{metric} loss (%), {p}"')
				continue
			head = t.get('target / device')
			for r in rows:
				if r['pattern'] != p:
					continue
				col = f'{r["bs"]} qd{r["iodepth"]}'
				line = t.get(f'{r["target"]} / {r["device"]}')
				if head is None or line is None or col not in head:
					bad.append(f'{metric} {p}: no cell {r["target"]}/{r["device"]} {col}')
					continue
				shown = line[head.index(col)]
				seen += 1
				jv = jindex[(r['target'], r['device'], r['pattern'], r['bs'], r['iodepth'])][key]
				if shown != f'{jv:.1f}':
					bad.append(f'{metric} {p} {r["target"]}/{r["device"]} {col}: report {shown}, CSV {r[key]}')
			for sys_label in ('SCS study, 1x', 'SCS study, MD RAID-0'):
				if not any(k.startswith(sys_label) and k.endswith('(their hardware)') for k in t):
					bad.append(f'{metric} {p}: no "{sys_label}... (their hardware)" row')
	tap.ok(not bad and seen == 2 * len(rows),
	       f'the report\'s loss tables show the CSV\'s figures ({seen} cells) beside the SCS study\'s rows',
	       '\n'.join(bad[:20]))

	# Sanity, not speed.
	targets = js['targets']
	plain = [r for r in rows if r['target'] == 'plain']
	tap.ok(plain and all(float(r['bw_loss_pct']) == 0 and float(r['iops_loss_pct']) == 0 for r in plain),
	       f'loss of plain against plain is 0 in every cell ({len(plain)})')
	cpu = [r for r in rows if targets[r['target']]['cpu_cipher']]
	neg = [f'{r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]}: {r["bw_loss_pct"]}'
	       for r in cpu if not float(r['bw_loss_pct']) > 0 or not float(r['iops_loss_pct']) > 0]
	tap.ok(cpu and not neg, f'dm-crypt loss > 0 in every cell where the cipher runs on the CPU ({len(cpu)})',
	       '\n'.join(neg))
	eng = [r for r in rows if targets[r['target']]['engine']]
	if eng:
		bad = [f'{r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]}: '
		       f'requests {r["engine_requests"]} share {r["engine_share"]}'
		       for r in eng if not (int(r['engine_requests'] or 0) > 0 and float(r['engine_share'] or 0) > 0)]
		tap.ok(not bad, f'the engine\'s requests counter moved in every offload cell ({len(eng)})',
		       '\n'.join(bad))
		tap.ok(all(r['driver'] == 'xts-aes-offload' for r in eng), 'offload rows use xts-aes-offload')
	fb = [r for r in rows if r['target'] == 'fallback']
	if fb:
		bad = [f'{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]}' for r in fb
		       if int(r['engine_requests']) != 0 or int(r['fallback_noengine']) <= 0]
		tap.ok(not bad, f'fallback rows: no engine request, every cell on the fallback ({len(fb)})',
		       '\n'.join(bad))
	aes = [r for r in rows if r['target'].startswith('aesni')]
	if aes:
		tap.ok(all(r['driver'].startswith('xts-aes-aesni') for r in aes),
		       'aesni rows use the kernel\'s AES-NI xts driver',
		       sorted({r['driver'] for r in aes}))
	bad = [f'{r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]}'
	       for r in rows if not (int(r['ios']) > 0 and float(r['busy_s']) > 0
				     and float(r['cpu_us_per_io']) > 0 and float(r['lat_p99_us']) >= float(r['lat_p50_us']) > 0)]
	tap.ok(not bad, 'every cell did I/O, cost CPU time and has latency percentiles (p99 >= p50 > 0)',
	       '\n'.join(bad[:20]))
	# The fine-grained busy time against /proc/stat's ticks (USER_HZ=100,
	# sampled at the 250 Hz tick): within 3 ticks and 10 %.
	bad = [f'{r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]} qd{r["iodepth"]}: busy {r["busy_s"]} s, '
	       f'/proc/stat {r["stat_busy_ticks"]} ticks'
	       for r in rows if abs(float(r['busy_s']) * 100 - int(r['stat_busy_ticks']))
	       > 3 + 0.1 * float(r['busy_s']) * 100]
	tap.ok(not bad, 'CPU busy time agrees with /proc/stat\'s busy ticks in every cell', '\n'.join(bad[:20]))

	# Plots: one per device and pattern, listed in the JSON, linked from the
	# report, valid PNGs.
	devices = sorted({r.split('/')[1] for r in meta['rows'] if not r.startswith('plain/')})
	expect = sorted(f'plots/loss-{d}-{p}.png' for d in devices for p in meta['patterns'])
	check_plots(rundir, js, md, expect, tap, 'plot', 'one plot per device and pattern')


def check_plots(rundir, js, md, expect, tap, what, one_per):
	"""The run lists exactly the plots expected, each a valid PNG linked
	from the report."""
	tap.ok(sorted(js['plots']) == expect, f'{one_per} ({len(expect)})', f'got {js["plots"]}')
	bad = []
	for p in expect:
		prob = png_problem(os.path.join(rundir, p))
		if prob:
			bad.append(f'{p}: {prob}')
		if f']({p})' not in md:
			bad.append(f'{p}: not linked from report.md')
	tap.ok(not bad, f'every {what} is a valid PNG and linked from the report', '\n'.join(bad))


def check_repeat(meta, rows, js, md, tap):
	"""With --repeat N: every cell says N runs and has its spread; the report
	has the Repeatability table, a row per target/device."""
	n = meta.get('repeat', 1)
	if n == 1:
		return
	bad = [f'{c["target"]}/{c["device"]} {c["pattern"]} {c["bs"]}' for c in js['cells']
	       if c.get('repeats') != n or len(c.get('bw_runs', [])) != n
	       or not (c.get('bw_spread_pct') is not None and c['bw_spread_pct'] >= 0)
	       or not min(c['bw_runs']) <= c['bw_bytes'] <= max(c['bw_runs'])]
	bad += [f'CSV {r["target"]}/{r["device"]} {r["pattern"]} {r["bs"]}: repeats {r.get("repeats")!r}'
		for r in rows if r.get('repeats') != str(n)]
	tap.ok(not bad, f'--repeat {n}: every cell has its {n} runs, its median run and its spread',
	       '\n'.join(bad[:20]))
	lines = md.split('## Repeatability', 1)[1].split('\n## ', 1)[0].splitlines() if '## Repeatability' in md else []
	want = {f'| {r.replace("/", " / ")} |' for r in meta['rows']}
	got = {l.split('|')[1].strip() for l in lines if l.startswith('| ') and '/' in l.split('|')[1]}
	tap.ok({w.strip('| ').strip() for w in want} <= got,
	       'the report\'s Repeatability table has a row per target/device', f'got {sorted(got)}')


def check_sysbench(rundir, meta, rows, js, md, tap):
	"""The sysbench workload's run directory: one table of cells (mode and
	block size) per figure, the Rubin study's rows beside the loss."""
	key = lambda r: (r['target'], r['device'], r['pattern'], r['bs'])
	want = {(r.split('/')[0], r.split('/')[1], p, bs)
		for r in meta['rows'] for p in meta['patterns'] for bs in meta['block_sizes']}
	got_csv = [key(r) for r in rows]
	got_js = [key(c) for c in js['cells']]
	tap.ok(sorted(got_csv) == sorted(want) and len(set(got_csv)) == len(got_csv),
	       f'every sysbench cell present once in the CSV ({len(want)} = {len(meta["rows"])} rows x '
	       f'{len(meta["patterns"])} modes x {len(meta["block_sizes"])} block sizes)',
	       f'missing {sorted(want - set(got_csv))[:5]}')
	tap.ok(sorted(got_js) == sorted(want) and len(set(got_js)) == len(got_js),
	       'every sysbench cell present once in the JSON')
	tap.ok(all(r['workload'] == 'sysbench' for r in rows) and meta['sysbench'].startswith('sysbench '),
	       'the CSV says workload sysbench in every row, the JSON names sysbench\'s version',
	       meta.get('sysbench'))
	jindex = {key(c): c for c in js['cells']}
	bad = []
	for r in rows:
		c = jindex.get(key(r))
		for k in ('events', 'ios', 'bytes', 'bw_bytes', 'iops', 'bw_loss_pct', 'iops_loss_pct',
			  'busy_s', 'cpu_us_per_io', 'lat_avg_us', 'dev_bytes', 'engine_share'):
			a, b = r.get(k, ''), None if c is None else c.get(k)
			if a == '' and b is None:
				continue
			if b is None or a == '' or abs(float(a) - float(b)) > 1e-5 * max(1.0, abs(float(b))):
				bad.append(f'{"/".join(key(r))} {k}: csv {a} json {b}')
	tap.ok(not bad, 'the CSV and the JSON agree on every sysbench cell', '\n'.join(bad[:20]))

	# The loss tables: each cell's figure, the overall mean, the Rubin rows.
	tables = md_tables(os.path.join(rundir, 'report.md'))
	with open(os.path.join(TOP, 'bench', 'data', 'rubin-sysbench-loss.csv')) as fh:
		rubin = list(csv.DictReader(fh))
	bad = []
	seen = 0
	for metric, k in (('bandwidth', 'bw_loss_pct'), ('IOPS', 'iops_loss_pct')):
		t = tables.get(f'{metric} loss (%), sysbench fileio')
		if t is None:
			bad.append(f'no Markdown table "{metric} loss (%), sysbench fileio"')
			continue
		head = t.get('target / device', [])
		for row in meta['rows']:
			tg, dv = row.split('/')
			line = t.get(f'{tg} / {dv}')
			if line is None or 'overall' not in head:
				bad.append(f'{metric}: no row {row} or no overall column')
				continue
			vals = []
			for p in meta['patterns']:
				for bs in meta['block_sizes']:
					col = f'{p} {bs}'
					jv = jindex[(tg, dv, p, bs)][k]
					vals.append(jv)
					shown = line[head.index(col)] if col in head else None
					seen += 1
					if shown != f'{jv:.1f}':
						bad.append(f'{metric} {row} {col}: report {shown}, JSON {jv}')
			if line[head.index('overall')] != f'{sum(vals) / len(vals):.1f}':
				bad.append(f'{metric} {row}: overall {line[head.index("overall")]}, mean {sum(vals) / len(vals):.1f}')
		if metric == 'bandwidth':
			for r in rubin:
				label = f'Rubin study, {r["system"]} (their hardware)'
				line = t.get(label)
				v = f'{"~" if r["approximate"] == "yes" else ""}{float(r["loss_percent"]):g}'
				if line is None or 'overall' not in head or line[head.index('overall')] != v:
					bad.append(f'no row "{label}" with {v} in the overall column')
	tap.ok(not bad and seen == 2 * len(rows),
	       f'the report\'s loss tables show the CSV\'s figures ({seen} cells) beside the Rubin study\'s rows',
	       '\n'.join(bad[:20]))
	ref = js.get('reference', {})
	tap.ok(ref.get('source', '').startswith('Rubin study') and len(ref.get('systems', [])) == len(rubin),
	       'the JSON carries the Rubin study\'s figures as the reference', ref)

	# Sanity, not speed.
	targets = js['targets']
	plain = [r for r in rows if r['target'] == 'plain']
	tap.ok(plain and all(float(r['bw_loss_pct']) == 0 and float(r['iops_loss_pct']) == 0 for r in plain),
	       f'loss of plain against plain is 0 in every sysbench cell ({len(plain)})')
	cpu = [r for r in rows if targets[r['target']]['cpu_cipher']]
	neg = [f'{"/".join(key(r))}: {r["bw_loss_pct"]}' for r in cpu
	       if not float(r['bw_loss_pct']) > 0 or not float(r['iops_loss_pct']) > 0]
	tap.ok(cpu and not neg, f'dm-crypt loss > 0 in every sysbench cell where the cipher runs on the CPU ({len(cpu)})',
	       '\n'.join(neg))
	eng = [r for r in rows if targets[r['target']]['engine']]
	if eng:
		bad = [f'{"/".join(key(r))}: requests {r["engine_requests"]} share {r["engine_share"]}'
		       for r in eng if not (int(r['engine_requests'] or 0) > 0 and float(r['engine_share'] or 0) > 0)]
		tap.ok(not bad, f'the engine\'s requests counter moved in every offload cell ({len(eng)})',
		       '\n'.join(bad))
	fb = [r for r in rows if r['target'] == 'fallback']
	if fb:
		bad = ['/'.join(key(r)) for r in fb
		       if int(r['engine_requests']) != 0 or int(r['fallback_noengine']) <= 0]
		tap.ok(not bad, f'fallback rows: no engine request, every cell on the fallback ({len(fb)})',
		       '\n'.join(bad))
	bad = ['/'.join(key(r)) for r in rows
	       if not (int(r['ios']) > 0 and int(r['events']) >= int(r['ios']) and float(r['busy_s']) > 0
		       and float(r['cpu_us_per_io']) > 0 and float(r['lat_avg_us']) > 0
		       and float(r['start_busy_s']) > 0)]
	tap.ok(not bad, 'every sysbench cell did I/O, cost CPU time beyond sysbench\'s own start, '
	       'and has a latency', '\n'.join(bad[:20]))
	bad = ['/'.join(key(r)) for r in rows
	       if not (r['target'] == 'plain' and r['device'] == 'brd') and not int(r['dev_bytes'] or 0) > 0]
	tap.ok(not bad, 'the block device under the file system moved bytes in every cell where it counts them',
	       '\n'.join(bad[:20]))
	bad = [f'{"/".join(key(r))}: busy {r["busy_s"]} s, /proc/stat {r["stat_busy_ticks"]} ticks'
	       for r in rows if abs(float(r['busy_s']) * 100 - int(r['stat_busy_ticks']))
	       > 3 + 0.1 * float(r['busy_s']) * 100]
	tap.ok(not bad, 'CPU busy time agrees with /proc/stat\'s busy ticks in every sysbench cell',
	       '\n'.join(bad[:20]))

	devices = sorted({r.split('/')[1] for r in meta['rows'] if not r.startswith('plain/')})
	expect = sorted(f'plots/sysbench-loss-{d}.png' for d in devices)
	check_plots(rundir, js, md, expect, tap, 'sysbench plot', 'one sysbench plot per device')


def main(argv):
	mode = 'icount'
	run = None
	if '--run' in argv:
		i = argv.index('--run')
		argv, run = argv[:i], argv[i + 1:]
	if '--mode' in argv:
		i = argv.index('--mode')
		mode = argv[i + 1]
		del argv[i:i + 2]
	if len(argv) != 1:
		print(__doc__, file=sys.stderr)
		return 2
	rundir = argv[0]
	tap = Tap()
	if run is not None:
		shutil.rmtree(rundir, ignore_errors=True)
		cmd = [os.path.join(TOP, 'bench', 'fde-matrix')] + run + ['--out', rundir]
		tap.diag(' '.join(cmd))
		r = subprocess.run(cmd, capture_output=True, text=True)
		for line in (r.stdout + r.stderr).splitlines():
			tap.diag(line)
		if not tap.ok(r.returncode == 0, 'fde-matrix ran (exit 0)', f'exit {r.returncode}'):
			logs = sorted(f for f in os.listdir(rundir) if f.startswith('guest')) if os.path.isdir(rundir) else []
			log = os.path.join(rundir, logs[-1] if logs else 'guest.log')
			if os.path.exists(log):
				with open(log, errors='replace') as fh:
					for line in fh.read().splitlines()[-30:]:
						tap.diag(line)
			print(f'1..{tap.n}')
			return 1
	check(rundir, mode, tap)
	print(f'1..{tap.n}')
	return 1 if tap.failed else 0


if __name__ == '__main__':
	sys.exit(main(sys.argv[1:]))
