"""Build the guest initramfs for one kernel release.

The image is two concatenated newc cpio archives (the kernel unpacks both):
a cached base (busybox, kernel modules, host binaries and guest executables
with their libraries) rebuilt only when one of its inputs changes, and a small
per-run overlay (the init script, the guest test scripts, the run list).
Both are uncompressed: decompressing under TCG costs more than loading.
"""

import hashlib
import lzma
import os
import re
import shutil
import stat
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
LIBDIRS_CONF = 'etc/ld.so.conf'


class BuildError(Exception):
	pass


# --- cpio (newc) writer -------------------------------------------------

class Cpio:
	def __init__(self, path):
		self.f = open(path, 'wb')
		self.ino = 1

	def _header(self, name, mode, size, nlink=1, rdev=(0, 0)):
		name_b = name.encode() + b'\0'
		fields = [self.ino, mode, 0, 0, nlink, 0, size, 0, 0,
			  rdev[0], rdev[1], len(name_b), 0]
		self.ino += 1
		hdr = b'070701' + b''.join(b'%08X' % v for v in fields)
		self.f.write(hdr + name_b)
		self._pad(len(hdr) + len(name_b))

	def _pad(self, n):
		if n % 4:
			self.f.write(b'\0' * (4 - n % 4))

	def add_dir(self, name, perm=0o755):
		self._header(name, stat.S_IFDIR | perm, 0, nlink=2)

	def add_file(self, name, data, perm=0o644):
		self._header(name, stat.S_IFREG | perm, len(data))
		self.f.write(data)
		self._pad(len(data))

	def add_symlink(self, name, target):
		data = target.encode()
		self._header(name, stat.S_IFLNK | 0o777, len(data))
		self.f.write(data)
		self._pad(len(data))

	def add_chardev(self, name, major, minor, perm=0o600):
		self._header(name, stat.S_IFCHR | perm, 0, rdev=(major, minor))

	def add_tree(self, root):
		"""Add every entry under root, parents first, in a stable order."""
		for dirpath, dirnames, filenames in os.walk(root):
			dirnames.sort()
			rel = os.path.relpath(dirpath, root)
			if rel != '.':
				self.add_dir(rel, stat.S_IMODE(os.lstat(dirpath).st_mode))
			for name in sorted(filenames + [d for d in dirnames
						if os.path.islink(os.path.join(dirpath, d))]):
				path = os.path.join(dirpath, name)
				relname = os.path.normpath(os.path.join(rel, name))
				st = os.lstat(path)
				if stat.S_ISLNK(st.st_mode):
					self.add_symlink(relname, os.readlink(path))
				elif stat.S_ISREG(st.st_mode):
					with open(path, 'rb') as fh:
						self.add_file(relname, fh.read(),
							      stat.S_IMODE(st.st_mode))
			dirnames[:] = [d for d in dirnames
				       if not os.path.islink(os.path.join(dirpath, d))]

	def close(self):
		self._header('TRAILER!!!', 0, 0, nlink=1)
		self.f.close()


# --- inputs ---------------------------------------------------------------

def read_list(path):
	with open(path) as fh:
		return [l.split('#', 1)[0].strip() for l in fh
			if l.split('#', 1)[0].strip()]


def which(name):
	found = shutil.which(name, path='/usr/sbin:/usr/bin:/sbin:/bin')
	if not found:
		raise BuildError(f'{name} not found on the host: run scripts/bootstrap')
	return found


def file_digest(h, path):
	h.update(path.encode() + b'\0')
	with open(path, 'rb') as fh:
		for chunk in iter(lambda: fh.read(1 << 20), b''):
			h.update(chunk)


def module_plan(kver, names, modroot='/'):
	"""Map of relative module path (as installed) for names and their deps."""
	paths = []
	for name in names:
		r = subprocess.run(['modprobe', '-d', modroot, '-S', kver,
				    '--show-depends', name],
				   capture_output=True, text=True)
		if r.returncode != 0:
			raise BuildError(f'module {name} not found for {kver}: '
					 f'install linux-image-{kver} ({r.stderr.strip()})')
		for line in r.stdout.splitlines():
			parts = line.split()
			if parts and parts[0] == 'insmod' and parts[1] not in paths:
				paths.append(parts[1])
	return paths


def ldd_closure(binaries):
	"""Every shared library (and the loader) the binaries need."""
	libs = set()
	for b in binaries:
		r = subprocess.run(['ldd', b], capture_output=True, text=True)
		if r.returncode != 0:
			if 'not a dynamic executable' in (r.stdout + r.stderr):
				continue
			raise BuildError(f'ldd {b} failed: {r.stderr.strip()}')
		for line in r.stdout.splitlines():
			if 'not found' in line:
				raise BuildError(f'{b}: library missing on the host: {line.strip()}')
			m = re.search(r'(/\S+) \(0x', line)
			if m:
				libs.add(m.group(1))
	return sorted(libs)


def engine_modules(module_ko):
	"""Engine modules built beside xts_offload.ko (xts_offload_*.ko:
	xts_offload_virtio, xts_offload_loopback). All are installed and
	depmod'ed, so modprobe of one loads the core first."""
	d = os.path.dirname(os.path.abspath(module_ko))
	return sorted(os.path.join(d, f) for f in os.listdir(d)
		      if f.startswith('xts_offload_') and f.endswith('.ko'))


def inputs_key(kver, module_ko, guest_exes, host_bins, modroot='/'):
	h = hashlib.sha256()
	for f in ('initramfs.py', 'modules.txt', 'host-binaries.txt'):
		file_digest(h, os.path.join(HERE, f))
	h.update(kver.encode())
	for f in ([module_ko] + engine_modules(module_ko) + list(guest_exes) + list(host_bins) +
		  [which('busybox')]):
		file_digest(h, f)
	st = os.stat(os.path.join(modroot, f'lib/modules/{kver}/modules.dep'))
	h.update(b'%d %d %s' % (st.st_mtime_ns, st.st_size, modroot.encode()))
	return h.hexdigest()


# --- the base image -------------------------------------------------------

def copy_into(root, src, dest=None):
	"""Copy src (following symlinks) into root at dest (default: same path)."""
	dest = os.path.join(root, (dest or src).lstrip('/'))
	os.makedirs(os.path.dirname(dest), exist_ok=True)
	if os.path.lexists(dest):
		os.unlink(dest)
	shutil.copy2(os.path.realpath(src), dest)
	return dest


def install_modules(root, kver, module_ko, modroot='/'):
	"""modroot: where lib/modules/KVER is (a kernel installed aside with
	make modules_install INSTALL_MOD_PATH=modroot; default the host's)."""
	mdir = f'/lib/modules/{kver}'
	hostmdir = os.path.join(modroot, mdir.lstrip('/'))
	names = read_list(os.path.join(HERE, 'modules.txt'))
	# What the core and the engine modules need of the kernel's own; the
	# engines' dependency on the core is ours.
	ours = {os.path.basename(k)[:-len('.ko')] for k in [module_ko] + engine_modules(module_ko)}
	for ko in [module_ko] + engine_modules(module_ko):
		r = subprocess.run(['modinfo', '-F', 'depends', ko],
				   capture_output=True, text=True, check=True)
		names += [d for d in r.stdout.strip().split(',') if d and d not in ours and d not in names]
	for path in module_plan(kver, names, modroot):
		rel = os.path.relpath(path, hostmdir)
		for ext, unpack in (('.xz', lzma.decompress), ('.zst', None)):
			if rel.endswith(ext):
				rel = rel[:-len(ext)]
				if unpack:
					with open(path, 'rb') as fh:
						data = unpack(fh.read())
				else:
					data = subprocess.run(['zstd', '-dcq', path],
							      capture_output=True,
							      check=True).stdout
				break
		else:
			with open(path, 'rb') as fh:
				data = fh.read()
		dest = os.path.join(root, mdir.lstrip('/'), rel)
		os.makedirs(os.path.dirname(dest), exist_ok=True)
		with open(dest, 'wb') as fh:
			fh.write(data)
	copy_into(root, module_ko, f'{mdir}/extra/xts_offload.ko')
	for ko in engine_modules(module_ko):
		copy_into(root, ko, f'{mdir}/extra/{os.path.basename(ko)}')
	for f in ('modules.order', 'modules.builtin', 'modules.builtin.modinfo'):
		if os.path.exists(f'{hostmdir}/{f}'):
			copy_into(root, f'{hostmdir}/{f}', f'{mdir}/{f}')
	# The host's modules.order names .ko.xz files; ours are unpacked.
	order = os.path.join(root, mdir.lstrip('/'), 'modules.order')
	if os.path.exists(order):
		with open(order) as fh:
			text = re.sub(r'\.ko\.(xz|zst)$', '.ko', fh.read(), flags=re.M)
		with open(order, 'w') as fh:
			fh.write(text)
	subprocess.run(['depmod', '-b', root, kver], check=True)


def install_busybox(root):
	bb = which('busybox')
	copy_into(root, bb, '/bin/busybox')
	r = subprocess.run([bb, '--list-full'], capture_output=True, text=True, check=True)
	for applet in r.stdout.split():
		dest = os.path.join(root, applet)
		if os.path.lexists(dest) or applet == 'bin/busybox':
			continue
		os.makedirs(os.path.dirname(dest), exist_ok=True)
		os.symlink('/bin/busybox', dest)


def build_base(out, kver, module_ko, guest_exes, modroot='/'):
	host_bins = [which(n) for n in read_list(os.path.join(HERE, 'host-binaries.txt'))]
	key = inputs_key(kver, module_ko, guest_exes, host_bins, modroot)
	stamp = out + '.key'
	if os.path.exists(out) and os.path.exists(stamp):
		with open(stamp) as fh:
			if fh.read().strip() == key:
				return False
	root = out + '.root'
	shutil.rmtree(root, ignore_errors=True)
	for d in ('dev', 'proc', 'sys', 'tmp', 'run', 'etc', 'mnt', 'root',
		  'usr/bin', 'usr/sbin', 'bin', 'sbin', 'var/lock'):
		os.makedirs(os.path.join(root, d), exist_ok=True)
	install_busybox(root)
	install_modules(root, kver, module_ko, modroot)
	for b in host_bins:
		copy_into(root, b)
	for exe in guest_exes:
		copy_into(root, exe, '/usr/bin/' + os.path.basename(exe))
	libdirs = set()
	for lib in ldd_closure(host_bins + list(guest_exes)):
		copy_into(root, lib)
		libdirs.add(os.path.dirname(lib))
	with open(os.path.join(root, LIBDIRS_CONF), 'w') as fh:
		fh.write('\n'.join(sorted(libdirs)) + '\n')
	subprocess.run(['ldconfig', '-r', root], check=True)
	with open(os.path.join(root, 'etc/passwd'), 'w') as fh:
		fh.write('root:x:0:0:root:/root:/bin/sh\n')
	with open(os.path.join(root, 'etc/group'), 'w') as fh:
		fh.write('root:x:0:\ndisk:x:6:\n')
	tmp = out + '.tmp'
	cpio = Cpio(tmp)
	cpio.add_chardev('dev/console', 5, 1)
	cpio.add_chardev('dev/null', 1, 3, 0o666)
	cpio.add_tree(root)
	cpio.close()
	os.replace(tmp, out)
	shutil.rmtree(root)
	with open(stamp, 'w') as fh:
		fh.write(key + '\n')
	return True


def build_overlay(out, init_text, files, run_list):
	"""files: {guest path: host path}; run_list: guest script names in order."""
	cpio = Cpio(out)
	cpio.add_file('init', init_text.encode(), 0o755)
	made = set()
	for gpath in sorted(files):
		parts = gpath.strip('/').split('/')
		for i in range(1, len(parts)):
			d = '/'.join(parts[:i])
			if d not in made:
				cpio.add_dir(d)
				made.add(d)
		with open(files[gpath], 'rb') as fh:
			cpio.add_file(gpath.strip('/'), fh.read(), 0o755)
	if 'etc' not in made:
		cpio.add_dir('etc')
	cpio.add_file('etc/fdekit-run.list', ('\n'.join(run_list) + '\n').encode())
	cpio.close()
