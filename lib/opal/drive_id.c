// SPDX-License-Identifier: GPL-2.0-only
/*
 * Drive identity from sysfs (NVMe Identify data, SCSI VPD pages as the
 * kernel keeps them), and the whole disk that has a given identity now.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <scsi/sg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "opal-drive-id.h"

#define VPD_MAX 1024		/* more than any page 0x80 or 0x83 we take */
#define SG_TIMEOUT_MS 10000

/* ------------------------------------------------------------ strings */

/* Bytes udev keeps in an exported identifier (allow_listed_char_for_devnode). */
static bool udev_allowed(unsigned char c)
{
	return isalnum(c) || strchr("#+-.:=@_", c);
}

void opal_drive_udev_string(const char *in, size_t len, char *out, size_t cap)
{
	size_t i = 0, n = 0;
	bool blank = false;

	if (!cap)
		return;
	while (i < len && in[i] && isspace((unsigned char)in[i]))
		i++;
	for (; i < len && in[i] && n + 1 < cap; i++) {
		unsigned char c = (unsigned char)in[i];

		if (isspace(c)) {
			blank = true;
			continue;
		}
		if (blank) {
			if (n + 2 >= cap)
				break;
			out[n++] = '_';
			blank = false;
		}
		/* udev keeps valid UTF-8 too; serial numbers are ASCII by every spec. */
		out[n++] = c < 0x80 && udev_allowed(c) ? (char)c : '_';
	}
	out[n] = 0;
}

/* The part of a WWN after its "naa."-style prefix or udev's "0x". */
static const char *wwn_body(const char *w)
{
	const char *dot = strchr(w, '.');

	if (dot)
		return dot + 1;
	if (w[0] == '0' && (w[1] == 'x' || w[1] == 'X') && w[2])
		return w + 2;
	return w;
}

bool opal_drive_wwn_equal(const char *a, const char *b)
{
	return *a && *b && !strcasecmp(wwn_body(a), wwn_body(b));
}

/* What a selector value may hold: opaltab(5) splits on blanks, '#' comments. */
static bool selector_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x80 || !(isalnum(c) || strchr("._:+=@-", c)))
			return false;
	}
	return true;
}

/* The file-name mapping key slot files have always used: blanks dropped. */
static void file_safe(const char *in, char *out, size_t cap)
{
	size_t n = 0;

	for (; *in && n + 1 < cap; in++) {
		unsigned char c = (unsigned char)*in;

		if (isspace(c))
			continue;
		out[n++] = c < 0x80 && (isalnum(c) || c == '-' || c == '.') ? (char)c : '_';
	}
	out[n] = 0;
}

static bool starts_with_ci(const char *s, const char *prefix)
{
	return !strncasecmp(s, prefix, strlen(prefix));
}

/*
 * Selector and file name, once transport, serial and WWN are known. raw is
 * the serial as the drive gives it (the file name mapping works on it so
 * that names match those made from the Opal transport's serial).
 */
static void finish(struct opal_drive_ident *id, const char *raw_serial)
{
	bool scsi = id->transport == OPAL_DRIVE_SCSI || id->transport == OPAL_DRIVE_ATA;
	bool wwn_ok = selector_safe(id->wwn) &&
		      (!scsi || starts_with_ci(id->wwn, "naa.") || starts_with_ci(id->wwn, "eui."));
	bool serial_ok = selector_safe(id->serial);
	const char *sel = NULL, *fid = NULL;

	id->selector[0] = 0;
	if (scsi && wwn_ok)
		sel = "wwn";
	else if (serial_ok && id->transport != OPAL_DRIVE_OTHER)
		sel = "serial";
	else if (wwn_ok && id->transport != OPAL_DRIVE_OTHER)
		sel = "wwn";
	if (sel)
		snprintf(id->selector, sizeof(id->selector), "%s=%s", sel,
			 sel[0] == 'w' ? id->wwn : id->serial);

	/* udev's ID_SERIAL_SHORT: a SCSI disk's is its NAA or EUI, in hex. */
	if (id->transport == OPAL_DRIVE_SCSI && (starts_with_ci(id->wwn, "naa.") ||
						 starts_with_ci(id->wwn, "eui.")))
		fid = wwn_body(id->wwn);
	else if (id->serial[0] && id->transport != OPAL_DRIVE_OTHER)
		fid = raw_serial;
	else if (id->wwn[0] && id->transport != OPAL_DRIVE_OTHER && selector_safe(id->wwn))
		fid = wwn_body(id->wwn);
	if (fid)
		file_safe(fid, id->file_id, sizeof(id->file_id));
	id->stable = fid && id->file_id[0];
	if (!id->stable)
		file_safe(id->name, id->file_id, sizeof(id->file_id));
}

/* ------------------------------------------------------- SCSI VPD pages */

static size_t vpd_len(const uint8_t *p, size_t n, uint8_t page)
{
	size_t len;

	if (n < 4 || p[1] != page)
		return 0;
	len = 4 + ((size_t)p[2] << 8 | p[3]);
	return len < n ? len : n;
}

/* Unit Serial Number (SPC-4 7.8.15): the bytes up to the first NUL. */
static void vpd80_serial(const uint8_t *p, size_t n, char *raw, size_t cap)
{
	size_t len = vpd_len(p, n, 0x80), m = 0;

	for (size_t i = 4; i < len && p[i] && m + 1 < cap; i++)
		raw[m++] = (char)p[i];
	raw[m] = 0;
}

/*
 * The kernel's order of preference among a logical unit's designators
 * (scsi_lib.c designator_prio): longer and registered ones first.
 */
static unsigned designator_prio(const uint8_t *d)
{
	if (d[1] & 0x30)	/* not associated with the logical unit */
		return 0;
	if (!d[3])
		return 0;
	switch (d[1] & 0xf) {
	case 8:			/* SCSI name string */
		return 9;
	case 3:			/* NAA */
		switch (d[4] >> 4) {
		case 6: return 8;	/* IEEE Registered Extended */
		case 5: return 5;	/* IEEE Registered */
		case 4: return 4;	/* IEEE Extended */
		case 3: return 1;	/* locally assigned */
		default: return 0;
		}
	case 2:			/* EUI-64 based */
		return d[3] == 16 ? 7 : d[3] == 12 ? 6 : d[3] == 8 ? 3 : 0;
	case 1:			/* T10 vendor ID */
		return 1;
	default:
		return 0;
	}
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

/*
 * Device Identification (SPC-4 7.8.6) rendered as the kernel's sysfs wwid
 * (scsi_vpd_lun_id): "naa.HEX", "eui.HEX", "t10.TEXT" or a SCSI name string.
 */
static void vpd83_wwid(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t len = vpd_len(p, n, 0x83), cur_size = 0;
	unsigned cur_prio = 0;
	char buf[OPAL_DRIVE_WWN_MAX];

	out[0] = 0;
	for (size_t off = 4; off + 4 <= len && off + 4 + p[off + 3] <= len; off += 4 + p[off + 3]) {
		const uint8_t *d = p + off;
		unsigned prio = designator_prio(d);
		size_t dl = d[3];

		if (!prio || cur_prio > prio)
			continue;
		buf[0] = 0;
		switch (d[1] & 0xf) {
		case 1: {
			size_t m = 4;

			if (cur_size > dl)
				continue;
			memcpy(buf, "t10.", 4);
			/* %pE: non-printable bytes as octal escapes. */
			for (size_t i = 0; i < dl && m + 5 < sizeof(buf); i++) {
				uint8_t c = d[4 + i];

				if (c >= 0x20 && c < 0x7f)
					buf[m++] = (char)c;
				else
					m += (size_t)sprintf(buf + m, "\\%03o", c);
			}
			buf[m] = 0;
			break;
		}
		case 2:
		case 3:
			if (dl != 8 && dl != 16 && !((d[1] & 0xf) == 2 && dl == 12)) {
				/* The kernel takes its priority and prints nothing. */
				cur_prio = prio;
				cur_size = dl;
				continue;
			}
			memcpy(buf, (d[1] & 0xf) == 2 ? "eui." : "naa.", 4);
			hex(d + 4, dl, buf + 4);
			break;
		case 8:
			if (cur_size > dl)
				continue;
			memcpy(buf, d + 4, dl < sizeof(buf) ? dl : sizeof(buf) - 1);
			buf[dl < sizeof(buf) ? dl : sizeof(buf) - 1] = 0;
			break;
		}
		cur_prio = prio;
		cur_size = dl;
		snprintf(out, cap, "%s", buf);
	}
}

/* ----------------------------------------------------------------- sysfs */

struct node {
	char base[PATH_MAX];	/* the class entry: SYSFS/class/block/sda */
	char attrs[PATH_MAX];	/* where the device's attributes are: base/device, or base */
};

static ssize_t read_file(const char *dir, const char *attr, void *buf, size_t cap)
{
	char path[PATH_MAX + 64];
	ssize_t n = 0, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while ((size_t)got < cap && (n = read(fd, (char *)buf + got, cap - (size_t)got)) > 0)
		got += n;
	if (n < 0 && !got)
		got = -errno;
	close(fd);
	return got;
}

/* A text attribute, trailing blanks and newline dropped; "" when unreadable. */
static void read_text(const char *dir, const char *attr, char *out, size_t cap)
{
	ssize_t n = read_file(dir, attr, out, cap - 1);

	if (n < 0)
		n = 0;
	out[n] = 0;
	while (n && isspace((unsigned char)out[n - 1]))
		out[--n] = 0;
}

static bool exists(const char *dir, const char *attr)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	return !access(path, F_OK);
}

static const char *root_sysfs(const struct opal_drive_roots *r)
{
	return r && r->sysfs ? r->sysfs : "/sys";
}

static const char *root_dev(const struct opal_drive_roots *r)
{
	return r && r->dev ? r->dev : "/dev";
}

/* Where name's attributes are: a block device, an NVMe controller, an sg or ng device. */
static int locate(const struct opal_drive_roots *roots, const char *name, struct node *nd)
{
	static const char *const classes[] = { "block", "nvme", "nvme-generic", "scsi_generic" };

	if (!*name || strchr(name, '/') || name[0] == '.')
		return -EINVAL;
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		snprintf(nd->base, sizeof(nd->base), "%s/class/%s/%s", root_sysfs(roots), classes[i],
			 name);
		if (access(nd->base, F_OK))
			continue;
		/* An NVMe controller's own attributes hold its serial. */
		snprintf(nd->attrs, sizeof(nd->attrs), i == 1 ? "%s" : "%s/device", nd->base);
		return 0;
	}
	return -ENOENT;
}

static int identify_node(const struct node *nd, const char *name, struct opal_drive_ident *id)
{
	char raw[OPAL_DRIVE_SERIAL_MAX] = "";

	memset(id, 0, sizeof(*id));
	snprintf(id->name, sizeof(id->name), "%s", name);
	if (exists(nd->base, "partition"))
		return -EINVAL;
	if (exists(nd->attrs, "subsysnqn")) {
		id->transport = OPAL_DRIVE_NVME;
		read_text(nd->attrs, "serial", raw, sizeof(raw));
		read_text(nd->base, "wwid", id->wwn, sizeof(id->wwn));
	} else if (exists(nd->attrs, "scsi_level")) {
		uint8_t vpd[VPD_MAX];
		char vendor[16];
		ssize_t n;

		read_text(nd->attrs, "vendor", vendor, sizeof(vendor));
		id->transport = !strcmp(vendor, "ATA") ? OPAL_DRIVE_ATA : OPAL_DRIVE_SCSI;
		n = read_file(nd->attrs, "vpd_pg80", vpd, sizeof(vpd));
		if (n > 0)
			vpd80_serial(vpd, (size_t)n, raw, sizeof(raw));
		read_text(nd->attrs, "wwid", id->wwn, sizeof(id->wwn));
		if (!id->wwn[0]) {
			n = read_file(nd->attrs, "vpd_pg83", vpd, sizeof(vpd));
			if (n > 0)
				vpd83_wwid(vpd, (size_t)n, id->wwn, sizeof(id->wwn));
		}
	}
	opal_drive_udev_string(raw, strlen(raw), id->serial, sizeof(id->serial));
	finish(id, raw);
	return 0;
}

int opal_drive_identify_name(const struct opal_drive_roots *roots, const char *name,
			     struct opal_drive_ident *id)
{
	struct node nd;
	int rc = locate(roots, name, &nd);

	if (rc) {
		memset(id, 0, sizeof(*id));
		return rc;
	}
	return identify_node(&nd, name, id);
}

int opal_drive_kernel_name(const char *devpath, char *name, size_t cap)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;

	if (stat(devpath, &st))
		return -errno;
	if (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode))
		return -ENODEV;
	snprintf(link, sizeof(link), "/sys/dev/%s/%u:%u", S_ISBLK(st.st_mode) ? "block" : "char",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(link, target))
		return errno == ENOENT ? -ENODEV : -errno;
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) >= cap)
		return -ENAMETOOLONG;
	memcpy(name, base, strlen(base) + 1);
	return 0;
}

int opal_drive_identify(const char *devpath, struct opal_drive_ident *id)
{
	char name[OPAL_DRIVE_NAME_MAX];
	int rc = opal_drive_kernel_name(devpath, name, sizeof(name));

	memset(id, 0, sizeof(*id));
	return rc ? rc : opal_drive_identify_name(NULL, name, id);
}

/* ------------------------------------------------------------------ find */

/*
 * Names in the kernel's order: runs of letters by length then bytes (sdz
 * before sdaa), runs of digits by value (nvme0n2 before nvme0n10).
 */
static int natural_cmp(const void *pa, const void *pb)
{
	const char *a = *(const char *const *)pa, *b = *(const char *const *)pb;

	while (*a && *b) {
		bool digits = isdigit((unsigned char)*a);
		size_t la = 0, lb = 0;
		int c;

		if (digits != !!isdigit((unsigned char)*b))
			return digits ? -1 : 1;
		if (digits) {
			while (*a == '0' && isdigit((unsigned char)a[1]))
				a++;
			while (*b == '0' && isdigit((unsigned char)b[1]))
				b++;
		}
		while (a[la] && !!isdigit((unsigned char)a[la]) == digits)
			la++;
		while (b[lb] && !!isdigit((unsigned char)b[lb]) == digits)
			lb++;
		if (la != lb)
			return la < lb ? -1 : 1;
		c = memcmp(a, b, la);
		if (c)
			return c;
		a += la;
		b += lb;
	}
	return *a ? 1 : *b ? -1 : 0;
}

/* An NVMe per-path disk of native multipath: nvme<ctrl>c<path>n<ns>. */
static bool nvme_path_name(const char *s)
{
	unsigned a, b, c;
	int end = 0;

	return sscanf(s, "nvme%uc%un%u%n", &a, &b, &c, &end) == 3 && !s[end];
}

/* What makes two matching disks one drive: the NVMe subsystem, the SCSI LU. */
static void drive_key(const struct node *nd, const struct opal_drive_ident *id, char *out,
		      size_t cap)
{
	char nqn[256];

	if (id->transport == OPAL_DRIVE_NVME) {
		read_text(nd->attrs, "subsysnqn", nqn, sizeof(nqn));
		if (nqn[0]) {
			snprintf(out, cap, "nvme:%s", nqn);
			return;
		}
	}
	if (id->wwn[0] && !starts_with_ci(id->wwn, "t10.")) {
		snprintf(out, cap, "wwn:%s", wwn_body(id->wwn));
		for (char *p = out; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		return;
	}
	snprintf(out, cap, "name:%s", id->name);
}

/*
 * A disk a drive can be found as: not a partition, not a hidden NVMe path
 * (nvmeXcYnZ, or hidden=1), and with a node in /dev.
 */
static bool whole_disk(const struct opal_drive_roots *roots, const char *name, struct node *nd)
{
	char hidden[8];

	if (locate(roots, name, nd) || exists(nd->base, "partition") || nvme_path_name(name))
		return false;
	read_text(nd->base, "hidden", hidden, sizeof(hidden));
	return strcmp(hidden, "1") && exists(root_dev(roots), name);
}

static int list_disks(const struct opal_drive_roots *roots, char ***out, size_t *count)
{
	char path[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/class/block", root_sysfs(roots));
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **more = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*names));

			if (!more)
				goto nomem;
			names = more;
		}
		if (!(names[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), natural_cmp);
	*out = names;
	*count = n;
	return 0;
nomem:
	closedir(d);
	while (n)
		free(names[--n]);
	free(names);
	return -ENOMEM;
}

int opal_drive_find_in(const struct opal_drive_roots *roots, enum opal_drive_key key,
		       const char *value, char *path, size_t cap)
{
	char want[OPAL_DRIVE_SERIAL_MAX], first_key[OPAL_DRIVE_WWN_MAX + 16] = "";
	char first[PATH_MAX] = "", other[PATH_MAX] = "";
	struct opal_drive_ident *id;
	char **names = NULL;
	size_t n = 0;
	int rc;

	if (cap)
		path[0] = 0;
	if (!value || !*value || (key != OPAL_DRIVE_BY_SERIAL && key != OPAL_DRIVE_BY_WWN))
		return -EINVAL;
	opal_drive_udev_string(value, strlen(value), want, sizeof(want));
	id = malloc(sizeof(*id));
	if (!id)
		return -ENOMEM;
	rc = list_disks(roots, &names, &n);
	if (rc) {
		free(id);
		return rc;
	}
	for (size_t i = 0; i < n && !other[0]; i++) {
		char k[sizeof(first_key)];
		struct node nd;
		bool match;

		if (!whole_disk(roots, names[i], &nd) || identify_node(&nd, names[i], id))
			continue;
		match = key == OPAL_DRIVE_BY_SERIAL ? id->serial[0] && !strcmp(id->serial, want) :
						       opal_drive_wwn_equal(id->wwn, value);
		if (!match)
			continue;
		drive_key(&nd, id, k, sizeof(k));
		if (!first[0]) {
			snprintf(first, sizeof(first), "%s/%s", root_dev(roots), names[i]);
			snprintf(first_key, sizeof(first_key), "%s", k);
		} else if (strcmp(k, first_key)) {
			snprintf(other, sizeof(other), "%s/%s", root_dev(roots), names[i]);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(id);
	if (!first[0])
		return -ENOENT;
	if ((size_t)snprintf(path, cap, "%s%s%s", first, other[0] ? " " : "", other) >= cap) {
		if (cap)
			path[0] = 0;
		return -ENAMETOOLONG;
	}
	return other[0] ? -ENOTUNIQ : 0;
}

int opal_drive_find(enum opal_drive_key key, const char *value, char *path, size_t cap)
{
	return opal_drive_find_in(NULL, key, value, path, cap);
}

int opal_drive_list(const struct opal_drive_roots *roots, char ***paths, size_t *count)
{
	char **names = NULL, **out = NULL;
	size_t n = 0, k = 0;
	int rc = list_disks(roots, &names, &n);

	*paths = NULL;
	*count = 0;
	if (rc)
		return rc;
	out = calloc(n ? n : 1, sizeof(*out));
	rc = out ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		struct opal_drive_ident id;
		struct node nd;
		char p[PATH_MAX];

		/* Drives that speak a storage protocol: NVMe, SCSI, ATA (not loop, dm, md). */
		if (!whole_disk(roots, names[i], &nd) || identify_node(&nd, names[i], &id) ||
		    id.transport == OPAL_DRIVE_OTHER)
			continue;
		snprintf(p, sizeof(p), "%s/%s", root_dev(roots), names[i]);
		if (!(out[k] = strdup(p)))
			rc = -ENOMEM;
		else
			k++;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (rc) {
		opal_drive_list_free(out, k);
		return rc;
	}
	*paths = out;
	*count = k;
	return 0;
}

void opal_drive_list_free(char **paths, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(paths[i]);
	free(paths);
}

/* --------------------------------------------------------------- SG_IO */

/* One INQUIRY; the bytes the device returned, or -errno. */
static ssize_t inquiry(int fd, bool evpd, uint8_t page, uint8_t *buf, size_t len)
{
	uint8_t cdb[6] = { 0x12, evpd ? 1 : 0, page, (uint8_t)(len >> 8), (uint8_t)len, 0 };
	uint8_t sense[32];
	struct sg_io_hdr h;

	memset(buf, 0, len);
	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.cmdp = cdb;
	h.cmd_len = sizeof(cdb);
	h.dxfer_direction = SG_DXFER_FROM_DEV;
	h.dxferp = buf;
	h.dxfer_len = (unsigned int)len;
	h.sbp = sense;
	h.mx_sb_len = sizeof(sense);
	h.timeout = SG_TIMEOUT_MS;
	if (ioctl(fd, SG_IO, &h) < 0)
		return errno == EINVAL || errno == ENOTTY ? -ENOTTY : -errno;
	if (h.status || h.host_status || h.driver_status)
		return -EIO;
	return h.resid > 0 && (size_t)h.resid <= len ? (ssize_t)(len - (size_t)h.resid) : (ssize_t)len;
}

/* A VPD page whole: asked with a one-byte length first, as SPC-2 devices need. */
static ssize_t vpd_page(int fd, uint8_t page, uint8_t *buf, size_t cap)
{
	ssize_t n = inquiry(fd, true, page, buf, 255);
	size_t want;

	if (n < 4)
		return n < 0 ? n : -EIO;
	if (buf[1] != page)
		return -EIO;
	want = 4 + ((size_t)buf[2] << 8 | buf[3]);
	if (want > 255)
		n = inquiry(fd, true, page, buf, want < cap ? want : cap);
	return n;
}

int opal_drive_inquire(const char *devpath, struct opal_drive_ident *id)
{
	uint8_t std[36], list[255], vpd[VPD_MAX];
	char raw[OPAL_DRIVE_SERIAL_MAX] = "";
	ssize_t n, pages;
	int fd;

	memset(id, 0, sizeof(*id));
	fd = open(devpath, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = inquiry(fd, false, 0, std, sizeof(std));
	if (n < 16) {
		close(fd);
		return n < 0 ? (int)n : -EIO;
	}
	id->transport = !memcmp(std + 8, "ATA     ", 8) ? OPAL_DRIVE_ATA : OPAL_DRIVE_SCSI;
	/* Only the pages the device lists, as the kernel asks them. */
	pages = vpd_page(fd, 0x00, list, sizeof(list));
	for (ssize_t i = 4; i < pages; i++) {
		if (list[i] == 0x80 && (n = vpd_page(fd, 0x80, vpd, sizeof(vpd))) > 0)
			vpd80_serial(vpd, (size_t)n, raw, sizeof(raw));
		if (list[i] == 0x83 && (n = vpd_page(fd, 0x83, vpd, sizeof(vpd))) > 0)
			vpd83_wwid(vpd, (size_t)n, id->wwn, sizeof(id->wwn));
	}
	close(fd);
	opal_drive_udev_string(raw, strlen(raw), id->serial, sizeof(id->serial));
	finish(id, raw);
	return 0;
}
