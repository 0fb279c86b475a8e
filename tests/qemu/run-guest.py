#!/usr/bin/env python3
"""Boot a Debian kernel in QEMU with a generated initramfs and run guest
test scripts (tests/guest/NN-name.sh) in one boot.

TAP mode (default): every script's TAP is renumbered into one stream on
stdout, with the plan at the end. The run fails (a `not ok` line, exit 1)
when a script fails a test, prints fewer results than it planned, exits
non-zero, when the guest panics, dies or outlives --timeout, when the kernel
log shows an oops or a warning, or when a host-side post-check fails.
A kernel that oopses or panics before the first script begins, untainted
(no out-of-tree module loaded, so not this project's code: multi-threaded
TCG has been seen to fault so while the kernel patches its own code at
boot), is booted once more, saying so; a second such boot fails the run.

Plain mode (--plain): the scripts' output is passed through unchanged
(for the demo); exit 1 if a script exited non-zero or the guest died.

Guest scripts may declare, in comment lines:
  # harness: disk NAME SIZE   attach a zeroed raw virtio-blk disk whose
                              serial is NAME (e.g. 64M); lib.sh's
                              disk_by_serial finds it in the guest.
and request, at run time through lib.sh's `postcheck`, a host command
(a --host-tool) run after the guest powered off; `@disk:NAME` in its
arguments is replaced by the disk image's path; and, through lib.sh's
`host_hotplug`, a hot-unplug (QMP device_del, an ACPI eject the guest
completes) or hot-plug (device_add) of the virtio-crypto device, id
crypt0, while the script runs; through `host_wakeup`, a QMP system_wakeup
once the guest has entered ACPI S3.

--crypto-queues N gives the virtio-crypto device N data queues (default 1).

Without script arguments, every tests/guest/[0-9][0-9]-*.sh runs, or only
those matching one of the glob patterns in FDEKIT_GUEST_SCRIPTS.

Exit codes: 0 all passed, 1 a test failed, 2 usage or setup error.
"""

import argparse
import fcntl
import fnmatch
import glob
import os
import re
import select
import shlex
import shutil
import signal
import threading
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import initramfs  # noqa: E402
import json  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRCROOT = os.path.dirname(os.path.dirname(HERE))
GUEST_DIR = os.path.join(SRCROOT, 'tests', 'guest')
GUEST_PATH = '/usr/share/fdekit/guest'

ANSI = re.compile(r'\x1b(\[[0-9;?]*[A-Za-z]|[()][A-Za-z0-9]|[A-Za-z=>])')
FIRMWARE = re.compile(r'^(SeaBIOS|iPXE|Booting from|Machine UUID|Press Ctrl-B|'
		      r'\s*$)')
KERNEL_TROUBLE = re.compile(r'(Kernel panic|BUG:|Oops|WARNING:|'
			    r'general protection fault|Call Trace:|'
			    r'blocked for more than|UBSAN:|KASAN:|'
			    r'kernel tried to execute|watchdog: BUG|'
			    # the debug kernel's checks (scripts/debug-kernel)
			    r'sleeping function called|INFO: trying to register|'
			    r'new suspected memory leak|ODEBUG:)')
KERNEL_LINE = re.compile(r'^\[\s*\d+\.\d+\]')
TAP_RESULT = re.compile(r'^(not ok|ok)\b\s*(\d+)?\s*(?:-\s*)?(.*)$')
TAP_PLAN = re.compile(r'^1\.\.(\d+)')
DISK_DECL = re.compile(r'^#\s*harness:\s*disk\s+(\S+)\s+(\d+)([KMG]?)\s*$')


CRYPTO_DEVICE = {'driver': 'virtio-crypto-pci', 'id': 'crypt0',
		 'cryptodev': 'c0'}


class Qmp:
	"""A minimal QMP client: one command at a time (from any thread),
	events logged."""

	def __init__(self, path):
		self.path = path
		self.sock = None
		self.buf = b''
		self.events = []
		self.lock = threading.Lock()

	def _msg(self, deadline):
		while b'\n' not in self.buf:
			left = deadline - time.monotonic()
			if left <= 0:
				raise TimeoutError('no answer from QMP')
			self.sock.settimeout(left)
			data = self.sock.recv(65536)
			if not data:
				raise ConnectionError('QMP connection closed')
			self.buf += data
		line, self.buf = self.buf.split(b'\n', 1)
		return json.loads(line)

	def _call(self, execute, arguments, deadline):
		cmd = {'execute': execute}
		if arguments:
			cmd['arguments'] = arguments
		self.sock.sendall(json.dumps(cmd).encode() + b'\n')
		while True:
			msg = self._msg(deadline)
			if 'event' in msg:
				self.events.append(msg['event'])
				continue
			if 'error' in msg:
				raise RuntimeError(msg['error'].get('desc', str(msg)))
			return msg.get('return')

	def command(self, execute, arguments=None, timeout=10):
		with self.lock:
			return self._command(execute, arguments, timeout)

	def _command(self, execute, arguments, timeout):
		deadline = time.monotonic() + timeout
		if self.sock is None:
			self._connect(deadline)
			self._msg(deadline)		# greeting
			self._call('qmp_capabilities', None, deadline)
		return self._call(execute, arguments, deadline)

	def _connect(self, deadline):
		# QEMU creates the socket file at bind() and accepts only after
		# listen(): a connect in between is refused. Retry until the
		# deadline rather than fail on that window.
		while True:
			sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
			try:
				sock.connect(self.path)
				self.sock = sock
				return
			except (ConnectionRefusedError, FileNotFoundError):
				sock.close()
				if time.monotonic() >= deadline:
					raise
				time.sleep(0.05)

	def close(self):
		if self.sock is not None:
			self.sock.close()


def die(msg):
	print(f'run-guest: {msg}', file=sys.stderr)
	sys.exit(2)


def parse_size(num, unit):
	return int(num) * {'': 1, 'K': 1 << 10, 'M': 1 << 20, 'G': 1 << 30}[unit]


class Tap:
	"""Turns the guest's per-script TAP into one renumbered stream."""

	def __init__(self, plain):
		self.plain = plain
		self.n = 0
		self.failed = 0
		self.script = None
		self.scripts = {}	# name -> {'plan', 'seen', 'rc'}
		self.postchecks = []	# (script, description, argv)
		self.alldone = False
		self.kver = None
		self.qmp = None		# Qmp, for host requests

	def emit(self, ok, desc, directive=''):
		self.n += 1
		if not ok and '# TODO' not in directive.upper():
			self.failed += 1
		if not self.plain:
			line = f'{"ok" if ok else "not ok"} {self.n} - {desc}{directive}'
			print(line, flush=True)
		elif not ok:
			print(f'FAILED: {desc}', file=sys.stderr, flush=True)

	def diag(self, text):
		if not self.plain:
			print(f'# {text}', flush=True)

	def line(self, line):
		if line.startswith('#@'):
			return self.marker(line[2:])
		if self.plain:
			print(line, flush=True)
			return
		cur = self.scripts.get(self.script)
		m = TAP_PLAN.match(line)
		if m and cur is not None:
			cur['plan'] = int(m.group(1))
			return
		m = TAP_RESULT.match(line)
		if m and cur is not None:
			cur['seen'] += 1
			desc = m.group(3)
			directive = ''
			if ' # ' in desc:
				desc, directive = desc.split(' # ', 1)
				directive = ' # ' + directive
			self.emit(m.group(1) == 'ok', f'{self.script}: {desc}', directive)
			return
		if line.startswith('Bail out!'):
			self.emit(False, f'{self.script}: {line}')
			return
		self.diag(line[1:].strip() if line.startswith('#') else line)

	def marker(self, text):
		parts = text.split(None, 1)
		kind = parts[0] if parts else ''
		if kind == 'guest':
			self.kver = parts[1].strip()
			self.diag(f'guest kernel {self.kver}')
		elif kind == 'begin':
			self.script = parts[1].strip()
			self.scripts[self.script] = {'plan': None, 'seen': 0, 'rc': None}
			self.diag(f'--- {self.script}')
		elif kind == 'end':
			name, rc = parts[1].rsplit(None, 1)
			self.scripts[name]['rc'] = int(rc)
			self.finish_script(name)
			self.script = None
		elif kind.startswith('postcheck'):
			fields = text.split('\t')
			cur = self.scripts.get(self.script)
			if cur is not None:
				cur['seen'] += 1
			self.postchecks.append((self.script, fields[1],
						shlex.split(fields[2])))
		elif kind == 'host':
			self.host_request(parts[1].split() if len(parts) > 1 else [])
		elif kind == 'alldone':
			self.alldone = True

	def wake_when_suspended(self, limit=120):
		"""Poll QMP until the guest is suspended (ACPI S3), then wake it
		(system_wakeup); give up after limit seconds."""
		end = time.monotonic() + limit
		try:
			while time.monotonic() < end:
				if self.qmp.command('query-status').get('status') == 'suspended':
					self.qmp.command('system_wakeup')
					return
				time.sleep(0.5)
		except (OSError, ValueError, RuntimeError, TimeoutError):
			pass

	def device_add(self, limit=30):
		"""device_add of crypt0. The guest sees the device go before QEMU
		has finished deleting it (the ACPI eject comes last): while the
		old one still holds the id, try again, for at most limit seconds."""
		end = time.monotonic() + limit
		while True:
			try:
				self.qmp.command('device_add', dict(CRYPTO_DEVICE))
				return
			except RuntimeError as e:
				if 'Duplicate' not in str(e) or time.monotonic() > end:
					raise
			time.sleep(0.2)

	def host_request(self, words):
		"""#@host hotplug del|add: QMP device_del/device_add of crypt0.
		#@host wakeup: wake the guest (system_wakeup) once it has entered
		S3, which it is about to do."""
		what = ' '.join(words)
		if words == ['wakeup'] and self.qmp is not None:
			threading.Thread(target=self.wake_when_suspended, daemon=True).start()
			self.diag(f'host: {what}: waiting for the guest to suspend')
			return
		if words not in (['hotplug', 'del'], ['hotplug', 'add']):
			self.emit(False, f'{self.script}: unknown host request {what!r}')
			return
		if self.qmp is None:
			self.emit(False, f'{self.script}: host request {what!r}: no QMP')
			return
		try:
			if words[1] == 'del':
				self.qmp.command('device_del', {'id': CRYPTO_DEVICE['id']})
			else:
				self.device_add()
			self.diag(f'host: {what}: done (QMP events so far: '
				  f'{", ".join(self.qmp.events) or "none"})')
		except (OSError, ValueError, RuntimeError) as e:
			self.emit(False, f'{self.script}: host {what}: {e}')

	def finish_script(self, name):
		s = self.scripts[name]
		if self.plain:
			if s['rc'] != 0:
				self.emit(False, f'{name} exited with status {s["rc"]}')
			return
		if s['plan'] is None:
			self.emit(False, f'{name}: printed no TAP plan')
		elif s['seen'] < s['plan']:
			self.emit(False, f'{name}: planned {s["plan"]} results, '
				  f'printed {s["seen"]}')
		elif s['seen'] > s['plan']:
			self.emit(False, f'{name}: planned {s["plan"]} results, '
				  f'printed {s["seen"]}')
		if s['rc'] != 0:
			self.emit(False, f'{name}: exited with status {s["rc"]}')


def script_disks(path):
	disks = []
	with open(path) as fh:
		for line in fh:
			m = DISK_DECL.match(line.strip())
			if m:
				disks.append((m.group(1), parse_size(m.group(2), m.group(3))))
	return disks


def resolve_scripts(names):
	if not names:
		found = sorted(glob.glob(os.path.join(GUEST_DIR, '[0-9][0-9]-*.sh')))
		# FDEKIT_GUEST_SCRIPTS="1?-* 30-*": run only the matching ones.
		only = os.environ.get('FDEKIT_GUEST_SCRIPTS', '').split()
		if only:
			found = [f for f in found
				 if any(fnmatch.fnmatch(os.path.basename(f), o) for o in only)]
		if not found:
			die(f'no guest scripts in {GUEST_DIR}'
			    + (f' match FDEKIT_GUEST_SCRIPTS={" ".join(only)}' if only else ''))
		return found
	paths = []
	for n in names:
		p = n if os.path.sep in n else os.path.join(GUEST_DIR, n)
		if not os.path.isfile(p):
			die(f'guest script {n} not found: give a file in {GUEST_DIR}')
		paths.append(os.path.abspath(p))
	return paths


def find_module(path):
	if os.path.isdir(path):
		path = os.path.join(path, 'xts_offload.ko')
	if not os.path.isfile(path):
		die(f'module {path} not found: build it first (ninja -C BUILDDIR)')
	return path


def qemu_command(args, kernel, initrd, sock, disks, qmp):
	accel = os.environ.get('FDEKIT_QEMU_ACCEL', 'tcg')
	cmd = ['qemu-system-x86_64', '-accel', accel, '-cpu', args.cpu,
	       '-m', args.mem, '-smp', str(args.smp),
	       '-nographic', '-no-reboot', '-nodefaults',
	       '-kernel', kernel, '-initrd', initrd,
	       # fdekit.icount tells guest scripts that guest time is
	       # deterministic (tight bounds on measured ratios apply).
	       '-append', 'console=ttyS0 panic=-1 quiet ' +
	       ('fdekit.icount ' if args.icount else '') +
	       (f'fdekit.crypto_queues={args.crypto_queues} '
		if args.crypto_queues > 1 else '') + args.append,
	       '-serial', 'stdio',
	       '-chardev', f'socket,id=tap,path={sock}',
	       '-serial', 'chardev:tap',
	       '-qmp', f'unix:{qmp},server=on,wait=off',
	       '-object', 'cryptodev-backend-builtin,id=c0',
	       '-device', ','.join(f'{k}={v}' if k != 'driver' else v
				   for k, v in CRYPTO_DEVICE.items())]
	if args.icount:
		# Guest time = instruction count. The device's notify is handled
		# in the vCPU thread (no ioeventfd). The device then processes
		# its data queue in a bottom half of QEMU's main loop thread, so
		# how many requests are done when the guest looks still depends
		# on host scheduling: figures that involve the virtio-crypto
		# engine vary with host load, the others repeat.
		cmd += ['-icount', 'shift=0,sleep=off',
			'-global', 'virtio-crypto-pci.ioeventfd=off']
	if args.crypto_queues > 1:
		cmd += ['--preconfig']		# see set_crypto_queues
	for i, (name, image) in enumerate(disks):
		cmd += ['-drive', f'file={image},if=none,id=d{i},format=raw,cache=unsafe',
			'-device', f'virtio-blk-pci,drive=d{i},serial={name}']
	return cmd + args.qemu_arg


def set_crypto_queues(qmp, queues, qemu):
	"""QEMU's builtin back end refuses more than one queue when it is
	created, yet works with any number: the device processes every data
	queue in QEMU's main loop, and a session serves them all. So QEMU starts
	paused before the machine exists (--preconfig), the back end's queues
	are raised, and then the machine (the device, with that many data
	queues) is created."""
	# QEMU opens the QMP socket after the serial ports' chardevs.
	deadline = time.monotonic() + 30
	while not os.path.exists(qmp.path) and qemu.poll() is None \
	      and time.monotonic() < deadline:
		time.sleep(0.05)
	try:
		qmp.command('qom-set', {'path': '/objects/c0', 'property': 'queues',
					'value': queues})
		qmp.command('x-exit-preconfig')
	except (OSError, ValueError, RuntimeError) as e:
		os.killpg(qemu.pid, signal.SIGKILL)
		die(f'cannot give the virtio-crypto device {queues} queues: {e}')


def run(args):
	kver = args.kver
	kernel = args.kernel or f'/boot/vmlinuz-{kver}'
	if not os.path.isfile(kernel):
		die(f'{kernel} not found: run scripts/bootstrap')
	module = find_module(args.module)
	scripts = resolve_scripts(args.scripts)
	for exe in args.guest_exe:
		if not os.path.isfile(exe):
			die(f'guest executable {exe} not found: build it first')
	tools = {}
	for t in args.host_tool:
		name, _, path = t.partition('=')
		tools[name] = path

	os.makedirs(args.cache_dir, exist_ok=True)
	base = os.path.join(args.cache_dir, f'initramfs-{kver}.cpio')
	with open(base + '.lock', 'w') as lock:
		fcntl.flock(lock, fcntl.LOCK_EX)
		t0 = time.monotonic()
		try:
			rebuilt = initramfs.build_base(base, kver, module, args.guest_exe,
						       args.modules_root)
		except (initramfs.BuildError, subprocess.CalledProcessError) as e:
			die(f'initramfs for {kver}: {e}')
		built = time.monotonic() - t0
		workdir = tempfile.mkdtemp(prefix=f'run-{kver}-', dir=args.cache_dir)
		initrd = os.path.join(workdir, 'initrd.cpio')
		shutil.copyfile(base, initrd)
	# boot() appends the scripts' overlay: a second boot starts from here.
	base_size = os.path.getsize(initrd)

	try:
		for attempt in (1, 2):
			rc = boot(args, kver, kernel, initrd, workdir, scripts, tools,
				  rebuilt, built, may_retry=attempt == 1)
			if rc != RETRY:
				return rc
			msg = ('the kernel oopsed before any script ran, untainted (no '
			       'module of this project loaded): not these tests\' doing; '
			       'booting once more')
			if args.plain:
				print(f'run-guest: {msg}', file=sys.stderr, flush=True)
			else:
				print(f'# {msg}', flush=True)
			os.truncate(initrd, base_size)
			for f in glob.glob(os.path.join(workdir, 'disk-*.img')) + [
					os.path.join(workdir, 'tap.sock'),
					os.path.join(workdir, 'qmp.sock')]:
				if os.path.exists(f):
					os.unlink(f)
		return 1
	finally:
		if not args.keep:
			shutil.rmtree(workdir, ignore_errors=True)


# boot()'s answer when the guest should be booted again: see may_retry.
RETRY = 'retry'
# The taint flags the kernel prints with an oops ("CPU: 0 PID: 1 Comm: ...").
OOPS_CPU_LINE = re.compile(r'\bCPU: \d+ .*\bComm: .*\b(Not tainted|Tainted:)')


def boot(args, kver, kernel, initrd, workdir, scripts, tools, rebuilt, built,
	 may_retry=False):
	"""One boot, reported as TAP. With may_retry, a kernel that oopses or
	panics before the first script began, with no taint (so no module
	outside the kernel's own loaded: not this project's code; seen as a
	rare emulator fault of multi-threaded TCG during boot), reports nothing
	and returns RETRY instead. Once only: a second such boot fails."""
	with open(os.path.join(HERE, 'init.sh')) as fh:
		init_text = fh.read()
	files = {f'{GUEST_PATH}/{os.path.basename(p)}': p
		 for p in glob.glob(os.path.join(GUEST_DIR, '*')) if os.path.isfile(p)}
	for p in scripts:
		files[f'{GUEST_PATH}/{os.path.basename(p)}'] = p
	overlay = os.path.join(workdir, 'overlay.cpio')
	initramfs.build_overlay(overlay, init_text, files,
				[os.path.basename(p) for p in scripts])
	with open(initrd, 'ab') as out, open(overlay, 'rb') as fh:
		shutil.copyfileobj(fh, out)

	disks = {}
	for p in scripts:
		for name, size in script_disks(p):
			if name in disks:
				continue
			image = os.path.join(workdir, f'disk-{name}.img')
			with open(image, 'wb') as fh:
				fh.truncate(size)
			disks[name] = image

	tap = Tap(args.plain)
	tap.diag(f'initramfs for {kver}: {"rebuilt" if rebuilt else "cached"} '
		 f'in {built:.1f} s')
	sock_path = os.path.join(workdir, 'tap.sock')
	srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
	srv.bind(sock_path)
	srv.listen(1)
	qmp_path = os.path.join(workdir, 'qmp.sock')
	cmd = qemu_command(args, kernel, initrd, sock_path, list(disks.items()),
			   qmp_path)
	tap.qmp = Qmp(qmp_path)
	console_log = open(os.path.join(args.cache_dir, f'console-{kver}.log'), 'w')
	console_log.write(' '.join(shlex.quote(c) for c in cmd) + '\n')
	t0 = time.monotonic()
	qemu = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
				stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
				start_new_session=True)
	srv.settimeout(30)
	try:
		conn, _ = srv.accept()
	except socket.timeout:
		qemu.kill()
		out = qemu.communicate()[0].decode(errors='replace')
		die(f'qemu did not start: {out.strip()[-500:]}')
	srv.close()
	if args.crypto_queues > 1:
		set_crypto_queues(tap.qmp, args.crypto_queues, qemu)

	trouble = []
	# Kernel trouble before the first script began, and the taint
	# states its oopses reported.
	early = {'trouble': False, 'untainted': False, 'tainted': False}
	bufs = {qemu.stdout.fileno(): b'', conn.fileno(): b''}
	open_fds = set(bufs)
	timed_out = False
	deadline = t0 + args.timeout

	last = {'text': None, 'repeats': 0}

	def show(text):
		if args.plain:
			print(text, file=sys.stderr, flush=True)
		else:
			tap.diag('| ' + text)

	def flush_repeats():
		if last['repeats']:
			show(f'(last line repeated {last["repeats"]} more times)')
		last['repeats'] = 0

	def console_line(text):
		text = ANSI.sub('', text).replace('\r', '')
		console_log.write(text + '\n')
		if FIRMWARE.match(text):
			return
		# Only kernel messages (timestamped): scripts' stderr shares the
		# console and may well say "WARNING:" itself.
		if KERNEL_LINE.match(text) and KERNEL_TROUBLE.search(text):
			trouble.append(text.strip())
			if tap.script is None and not tap.scripts:
				early['trouble'] = True
		m = OOPS_CPU_LINE.search(text) if KERNEL_LINE.match(text) else None
		if m and early['trouble']:
			early['untainted' if m.group(1) == 'Not tainted' else 'tainted'] = True
		# Collapse runs of one line (a device model complaining per request).
		if text == last['text']:
			last['repeats'] += 1
			return
		flush_repeats()
		last['text'] = text
		show(text)

	def tap_line(text):
		tap.line(ANSI.sub('', text).replace('\r', ''))

	handlers = {qemu.stdout.fileno(): console_line, conn.fileno(): tap_line}
	while open_fds:
		left = deadline - time.monotonic()
		if left <= 0:
			timed_out = True
			break
		ready, _, _ = select.select(list(open_fds), [], [], min(left, 5))
		for fd in ready:
			data = os.read(fd, 65536)
			if not data:
				open_fds.discard(fd)
				data = b'\n' if bufs[fd] else b''
			bufs[fd] += data
			while b'\n' in bufs[fd]:
				raw, bufs[fd] = bufs[fd].split(b'\n', 1)
				handlers[fd](raw.decode(errors='replace'))
	flush_repeats()
	if timed_out:
		os.killpg(qemu.pid, signal.SIGKILL)
	rc = qemu.wait()
	conn.close()
	tap.qmp.close()
	elapsed = time.monotonic() - t0
	console_log.close()

	if (may_retry and early['trouble'] and early['untainted'] and
	    not early['tainted'] and tap.n == 0 and not tap.scripts):
		for t in trouble[:10]:
			tap.diag(f'kernel: {t}')
		return RETRY

	if tap.script is not None:
		tap.emit(False, f'{tap.script}: guest '
			 f'{"timed out" if timed_out else "died"} while it ran')
	ran = set(tap.scripts)
	for p in scripts:
		name = os.path.basename(p)
		if name not in ran:
			tap.emit(False, f'{name}: did not run')
	if timed_out:
		tap.emit(False, f'guest finished within {args.timeout} s')
	elif not tap.alldone:
		tap.emit(False, f'guest powered off cleanly (qemu exit status {rc})')
	if not args.plain:
		tap.emit(not trouble, 'kernel log shows no panic, oops or warning')
		for t in trouble[:10]:
			tap.diag(f'kernel: {t}')

	for script, desc, argv in tap.postchecks:
		name = argv[0] if argv else ''
		if name not in tools:
			tap.emit(False, f'{script}: {desc} (unknown host tool {name!r})')
			continue
		argv = [tools[name]] + [resolve_arg(a, disks) for a in argv[1:]]
		r = subprocess.run(argv, capture_output=True, text=True)
		for l in (r.stdout + r.stderr).splitlines():
			tap.diag(f'{name}: {l}')
		tap.emit(r.returncode == 0, f'{script}: {desc} (host)')

	tap.diag(f'boot of {kver} took {elapsed:.1f} s wall time')
	if not args.plain:
		print(f'1..{tap.n}', flush=True)
	return 1 if tap.failed else 0


def resolve_arg(arg, disks):
	return re.sub(r'@disk:(\w+)', lambda m: disks.get(m.group(1), m.group(0)), arg)


def main():
	p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
	p.add_argument('--kver', required=True, help='kernel release to boot')
	p.add_argument('--kernel', help='kernel image (default /boot/vmlinuz-KVER)')
	p.add_argument('--modules-root', default='/',
		       help='where lib/modules/KVER is, for a kernel installed '
		       'aside (scripts/debug-kernel; default /)')
	p.add_argument('--module', required=True,
		       help='xts_offload.ko, or the directory that holds it')
	p.add_argument('--cache-dir', required=True,
		       help='where the initramfs is cached (a build directory)')
	p.add_argument('--guest-exe', action='append', default=[],
		       help='executable to copy into the guest (repeatable)')
	p.add_argument('--host-tool', action='append', default=[],
		       help='NAME=PATH: host program a post-check may run')
	p.add_argument('--icount', action='store_true',
		       help='deterministic guest time (-icount shift=0,sleep=off, device notify in the vCPU thread)')
	p.add_argument('--cpu', default='max',
		       help='QEMU CPU model and features (default max)')
	p.add_argument('--mem', default='2G')
	p.add_argument('--smp', type=int, default=1)
	p.add_argument('--timeout', type=int, default=900,
		       help='seconds before the guest counts as hung')
	p.add_argument('--append', default='', help='extra kernel command line')
	p.add_argument('--qemu-arg', action='append', default=[],
		       help='extra qemu argument (repeatable)')
	p.add_argument('--crypto-queues', type=int, default=1,
		       help='data queues of the virtio-crypto device (default 1); '
		       'the guest sees the number as fdekit.crypto_queues=N')
	p.add_argument('--crypto-vectors', type=int, default=None,
		       help='MSI-X vectors of the virtio-crypto device (QEMU\'s '
		       'default 2: one interrupt for all queues; data queues + 2 '
		       'gives each queue its own)')
	p.add_argument('--plain', action='store_true',
		       help='pass the scripts\' output through, no TAP')
	p.add_argument('--keep', action='store_true',
		       help='keep the run directory (initrd, disk images)')
	p.add_argument('scripts', nargs='*',
		       help='guest scripts (default: tests/guest/[0-9][0-9]-*.sh)')
	args = p.parse_args()
	if not 1 <= args.crypto_queues <= 64:
		die('--crypto-queues takes 1 to 64')
	if args.crypto_vectors is not None:
		if not 2 <= args.crypto_vectors <= 2048:
			die('--crypto-vectors takes 2 to 2048')
		# The device as first created and as plugged again.
		CRYPTO_DEVICE['vectors'] = str(args.crypto_vectors)
	sys.exit(run(args))


if __name__ == '__main__':
	main()
