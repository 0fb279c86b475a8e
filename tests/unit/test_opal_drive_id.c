// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opal/drive_id.c against fake sysfs trees laid out as the kernel lays
 * them out: NVMe under native multipath (hidden per-path disks, a head),
 * several namespaces of one controller, SAS drives of one vendor (VPD
 * pages 0x80 and 0x83 as files, with and without the kernel's wwid), the
 * paths of one SCSI logical unit, ATA disks behind libata's SATL.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal-drive-id.h"

struct fx {
	char root[64];
	char sys[96], dev[96];
	struct opal_drive_roots roots;
};

static void mkdir_p(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(tmp, 0755);
		*p = '/';
	}
	mkdir(tmp, 0755);
}

/* Write len bytes to ROOT/rel, making its directories. */
static void put(const char *root, const char *rel, const void *data, size_t len)
{
	char path[PATH_MAX], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	mkdir_p(path);
	*slash = '/';
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

static void puts_at(const char *root, const char *rel, const char *text)
{
	put(root, rel, text, strlen(text));
}

static void putf(const char *root, const char *text, const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	puts_at(root, rel, text);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	strcpy(f->root, "/tmp/test_opal_drive_id.XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	snprintf(f->sys, sizeof(f->sys), "%s/sys", f->root);
	snprintf(f->dev, sizeof(f->dev), "%s/dev", f->root);
	mkdir_p(f->sys);
	mkdir_p(f->dev);
	mkdir_p(f->sys);
	{
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/class/block", f->sys);
		mkdir_p(p);
	}
	f->roots.sysfs = f->sys;
	f->roots.dev = f->dev;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->root);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

/* A /dev node (a plain file stands for it). */
static void devnode(struct fx *f, const char *name)
{
	puts_at(f->dev, name, "");
}

/* ------------------------------------------------------------ NVMe trees */

/* A namespace disk whose device is a controller or subsystem with these attributes. */
static void nvme_disk(struct fx *f, const char *name, const char *serial, const char *nqn,
		      const char *wwid, const char *hidden)
{
	putf(f->sys, serial, "class/block/%s/device/serial", name);
	putf(f->sys, nqn, "class/block/%s/device/subsysnqn", name);
	if (wwid)
		putf(f->sys, wwid, "class/block/%s/wwid", name);
	if (hidden)
		putf(f->sys, hidden, "class/block/%s/hidden", name);
}

/* ------------------------------------------------------------ SCSI trees */

/* VPD page 0x80 with a 20-byte right-aligned serial, as SPC-4 4.4.1 has it. */
static size_t vpd80(uint8_t *p, const char *serial)
{
	size_t n = strlen(serial);

	memset(p, 0, 4);
	p[1] = 0x80;
	p[3] = 20;
	memset(p + 4, ' ', 20);
	memcpy(p + 4 + 20 - n, serial, n);
	return 24;
}

/* Append one designation descriptor to a page 0x83 being built. */
static size_t desig(uint8_t *p, size_t off, uint8_t code_set, uint8_t assoc_type,
		    const void *d, size_t len)
{
	p[off] = code_set;
	p[off + 1] = assoc_type;
	p[off + 2] = 0;
	p[off + 3] = (uint8_t)len;
	memcpy(p + off + 4, d, len);
	off += 4 + len;
	p[2] = (uint8_t)((off - 4) >> 8);
	p[3] = (uint8_t)(off - 4);
	return off;
}

static size_t vpd83_begin(uint8_t *p)
{
	memset(p, 0, 4);
	p[1] = 0x83;
	return 4;
}

static void be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A SAS disk: VPD 0x83 with an NAA 5 and a T10 vendor ID designator. */
static void sas_disk(struct fx *f, const char *name, const char *vendor, const char *serial,
		     uint64_t naa, bool kernel_wwid)
{
	uint8_t pg[512], naa_b[8];
	char rel[128], t10[64], wwid[64];
	size_t n;

	putf(f->sys, vendor, "class/block/%s/device/vendor", name);
	putf(f->sys, "7\n", "class/block/%s/device/scsi_level", name);
	putf(f->sys, "0\n", "class/block/%s/device/type", name);
	n = vpd80(pg, serial);
	snprintf(rel, sizeof(rel), "class/block/%s/device/vpd_pg80", name);
	put(f->sys, rel, pg, n);
	be64(naa_b, naa);
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x01, 0x03, naa_b, 8);
	snprintf(t10, sizeof(t10), "%-8.8s%-20s", vendor, serial);
	n = desig(pg, n, 0x02, 0x01, t10, strlen(t10));
	snprintf(rel, sizeof(rel), "class/block/%s/device/vpd_pg83", name);
	put(f->sys, rel, pg, n);
	if (kernel_wwid) {
		snprintf(wwid, sizeof(wwid), "naa.%016llx\n", (unsigned long long)naa);
		putf(f->sys, wwid, "class/block/%s/device/wwid", name);
	}
}

/* An ATA disk as libata's SATL shows it (ata_scsiop_inq_80/83). */
static void ata_disk(struct fx *f, const char *name, const char *serial, uint64_t naa)
{
	uint8_t pg[512], naa_b[8];
	char rel[128], sn[21], t10[96];
	size_t n;

	putf(f->sys, "ATA     \n", "class/block/%s/device/vendor", name);
	putf(f->sys, "6\n", "class/block/%s/device/scsi_level", name);
	n = vpd80(pg, serial);
	snprintf(rel, sizeof(rel), "class/block/%s/device/vpd_pg80", name);
	put(f->sys, rel, pg, n);
	snprintf(sn, sizeof(sn), "%20s", serial);
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x02, 0x00, sn, 20);
	snprintf(t10, sizeof(t10), "ATA     %-40s%s", "WDC WD40EFRX-68N32N0", sn);
	n = desig(pg, n, 0x02, 0x01, t10, 68);
	if (naa) {
		be64(naa_b, naa);
		n = desig(pg, n, 0x01, 0x03, naa_b, 8);
	}
	snprintf(rel, sizeof(rel), "class/block/%s/device/vpd_pg83", name);
	put(f->sys, rel, pg, n);
}

static void expect_find(struct fx *f, enum opal_drive_key key, const char *value,
			const char *name)
{
	char path[PATH_MAX], want[PATH_MAX];

	assert_int_equal(opal_drive_find_in(&f->roots, key, value, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/%s", f->dev, name);
	assert_string_equal(path, want);
}

/* The selector of a drive finds that drive again. */
static void expect_selector_finds(struct fx *f, const struct opal_drive_ident *id,
				  const char *name)
{
	const char *eq = strchr(id->selector, '=');

	assert_non_null(eq);
	expect_find(f, !strncmp(id->selector, "wwn=", 4) ? OPAL_DRIVE_BY_WWN : OPAL_DRIVE_BY_SERIAL,
		    eq + 1, name);
}

/* ------------------------------------------------------------------ tests */

static void test_udev_string(void **state)
{
	char out[64];

	(void)state;
	opal_drive_udev_string("  AB  CD\t \n", 11, out, sizeof(out));
	assert_string_equal(out, "AB_CD");
	opal_drive_udev_string("x/y z", 5, out, sizeof(out));
	assert_string_equal(out, "x_y_z");
	opal_drive_udev_string("A#+-.:=@_b", 10, out, sizeof(out));
	assert_string_equal(out, "A#+-.:=@_b");
	opal_drive_udev_string("SER\0junk", 8, out, sizeof(out));
	assert_string_equal(out, "SER");
	opal_drive_udev_string("    ", 4, out, sizeof(out));
	assert_string_equal(out, "");
	opal_drive_udev_string("ABCDEFGH", 8, out, 5);
	assert_string_equal(out, "ABCD");
}

static void test_wwn_equal(void **state)
{
	(void)state;
	assert_true(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", "naa.5000c500a1b2c3d4"));
	assert_true(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", "5000C500A1B2C3D4"));
	assert_true(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", "0x5000c500a1b2c3d4"));
	assert_true(opal_drive_wwn_equal("NAA.5000c500a1b2c3d4", "naa.5000C500a1b2c3d4"));
	assert_true(opal_drive_wwn_equal("eui.0025388b91c1d2e3", "0025388b91c1d2e3"));
	assert_false(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", "naa.5000c500a1b2c3d5"));
	assert_false(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", "5000c500a1b2c3"));
	assert_false(opal_drive_wwn_equal("", ""));
	assert_false(opal_drive_wwn_equal("naa.5000c500a1b2c3d4", ""));
}

/*
 * Native multipath: the per-path disks come first by name, are hidden and
 * have no /dev node; the head is returned. Namespaces of one subsystem are
 * one drive: the first namespace, never "not unique".
 */
static void test_nvme_multipath(void **state)
{
	struct fx *f = *state;
	const char *nqn = "nqn.2014.08.org.nvmexpress:144d144dS4EWNX0R123456      Samsung SSD\n";
	struct opal_drive_ident id;
	char path[PATH_MAX];

	nvme_disk(f, "nvme0c0n1", "S4EWNX0R123456      \n", nqn, "eui.0025388b91c1d2e3\n", "1\n");
	nvme_disk(f, "nvme0c1n1", "S4EWNX0R123456      \n", nqn, "eui.0025388b91c1d2e3\n", "1\n");
	nvme_disk(f, "nvme0n1", "S4EWNX0R123456      \n", nqn, "eui.0025388b91c1d2e3\n", "0\n");
	nvme_disk(f, "nvme0n10", "S4EWNX0R123456      \n", nqn, "eui.0025388b91c1d2ea\n", "0\n");
	nvme_disk(f, "nvme0n2", "S4EWNX0R123456      \n", nqn, "eui.0025388b91c1d2e4\n", "0\n");
	putf(f->sys, "1\n", "class/block/nvme0n1p1/partition");
	devnode(f, "nvme0n1");
	devnode(f, "nvme0n1p1");
	devnode(f, "nvme0n2");
	devnode(f, "nvme0n10");

	/* The drives scan lists: the heads, in the kernel's order; no path, partition or node-less disk. */
	{
		char **paths;
		size_t n;

		assert_int_equal(opal_drive_list(&f->roots, &paths, &n), 0);
		assert_int_equal(n, 3);
		assert_true(strstr(paths[0], "/dev/nvme0n1") && !strcmp(strrchr(paths[0], '/'), "/nvme0n1"));
		assert_string_equal(strrchr(paths[1], '/'), "/nvme0n2");
		assert_string_equal(strrchr(paths[2], '/'), "/nvme0n10");
		opal_drive_list_free(paths, n);
	}
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "S4EWNX0R123456", "nvme0n1");
	expect_find(f, OPAL_DRIVE_BY_WWN, "eui.0025388b91c1d2e3", "nvme0n1");
	expect_find(f, OPAL_DRIVE_BY_WWN, "0025388B91C1D2E4", "nvme0n2");
	expect_find(f, OPAL_DRIVE_BY_WWN, "eui.0025388b91c1d2ea", "nvme0n10");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_SERIAL, "S4EWNX0R12345", path,
					    sizeof(path)), -ENOENT);

	assert_int_equal(opal_drive_identify_name(&f->roots, "nvme0n1", &id), 0);
	assert_int_equal(id.transport, OPAL_DRIVE_NVME);
	assert_string_equal(id.serial, "S4EWNX0R123456");
	assert_string_equal(id.wwn, "eui.0025388b91c1d2e3");
	assert_string_equal(id.selector, "serial=S4EWNX0R123456");
	assert_string_equal(id.file_id, "S4EWNX0R123456");
	assert_true(id.stable);
	expect_selector_finds(f, &id, "nvme0n1");

	assert_int_equal(opal_drive_identify_name(&f->roots, "nvme0n1p1", &id), -EINVAL);
	assert_int_equal(opal_drive_identify_name(&f->roots, "nvme9n9", &id), -ENOENT);
}

/* Without a hidden attribute (older kernels) the nvmeXcYnZ name alone keeps a path out. */
static void test_nvme_path_by_name(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX];

	nvme_disk(f, "nvme1c1n1", "PATHONLY\n", "nqn.test:p\n", "eui.1111111111111111\n", NULL);
	devnode(f, "nvme1c1n1");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_SERIAL, "PATHONLY", path,
					    sizeof(path)), -ENOENT);
	/* Nor is a disk without a /dev node ever returned. */
	nvme_disk(f, "nvme2n1", "NONODE\n", "nqn.test:n\n", "eui.2222222222222222\n", "0\n");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_SERIAL, "NONODE", path,
					    sizeof(path)), -ENOENT);
	devnode(f, "nvme2n1");
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "NONODE", "nvme2n1");
	/* Nor a hidden one, whatever its name. */
	nvme_disk(f, "nvme5n1", "HIDDEN\n", "nqn.test:h\n", "eui.5555555555555555\n", "1\n");
	devnode(f, "nvme5n1");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_SERIAL, "HIDDEN", path,
					    sizeof(path)), -ENOENT);
	/* Namespaces by number, not by byte: nvme6n2 before nvme6n10. */
	nvme_disk(f, "nvme6n10", "TWONS\n", "nqn.test:t\n", "eui.6666666666666610\n", "0\n");
	nvme_disk(f, "nvme6n2", "TWONS\n", "nqn.test:t\n", "eui.6666666666666602\n", "0\n");
	devnode(f, "nvme6n10");
	devnode(f, "nvme6n2");
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "TWONS", "nvme6n2");
}

/* The controller's char device, and a serial a table line cannot hold. */
static void test_nvme_controller_and_unsafe_serial(void **state)
{
	struct fx *f = *state;
	struct opal_drive_ident id;

	putf(f->sys, "  CTRL 01 \n", "class/nvme/nvme3/serial");
	putf(f->sys, "nqn.test:c\n", "class/nvme/nvme3/subsysnqn");
	assert_int_equal(opal_drive_identify_name(&f->roots, "nvme3", &id), 0);
	assert_int_equal(id.transport, OPAL_DRIVE_NVME);
	assert_string_equal(id.serial, "CTRL_01");
	assert_string_equal(id.selector, "serial=CTRL_01");
	assert_string_equal(id.file_id, "CTRL01");	/* blanks dropped, as key files were named */

	nvme_disk(f, "nvme4n1", "AB#12\n", "nqn.test:h\n", "eui.4444444444444444\n", "0\n");
	devnode(f, "nvme4n1");
	assert_int_equal(opal_drive_identify_name(&f->roots, "nvme4n1", &id), 0);
	assert_string_equal(id.serial, "AB#12");
	assert_string_equal(id.selector, "wwn=eui.4444444444444444");
	assert_string_equal(id.file_id, "AB_12");
	expect_selector_finds(f, &id, "nvme4n1");
}

/*
 * Two SAS drives of one vendor: the Opal transport's "serial" (the T10
 * vendor identification, as sedutil takes it) is the same for both; the
 * selectors and file names are not, and each finds its own drive.
 */
static void test_sas_same_vendor(void **state)
{
	struct fx *f = *state;
	struct opal_drive_ident a, b;

	sas_disk(f, "sda", "SEAGATE ", "ZA1234560000C1234ABC", 0x5000c500a1b2c3d4ull, true);
	sas_disk(f, "sdb", "SEAGATE ", "ZA6543210000C4321CBA", 0x5000c500a1b2c3e8ull, false);
	devnode(f, "sda");
	devnode(f, "sdb");

	assert_int_equal(opal_drive_identify_name(&f->roots, "sda", &a), 0);
	assert_int_equal(opal_drive_identify_name(&f->roots, "sdb", &b), 0);
	assert_int_equal(a.transport, OPAL_DRIVE_SCSI);
	assert_string_equal(a.serial, "ZA1234560000C1234ABC");
	assert_string_equal(a.wwn, "naa.5000c500a1b2c3d4");
	assert_string_equal(a.selector, "wwn=naa.5000c500a1b2c3d4");
	assert_string_equal(a.file_id, "5000c500a1b2c3d4");
	/* Without the kernel's wwid, page 0x83 read as the kernel reads it. */
	assert_string_equal(b.wwn, "naa.5000c500a1b2c3e8");
	assert_string_equal(b.selector, "wwn=naa.5000c500a1b2c3e8");
	assert_string_equal(b.file_id, "5000c500a1b2c3e8");
	assert_true(a.stable && b.stable);
	assert_string_not_equal(a.file_id, b.file_id);

	expect_selector_finds(f, &a, "sda");
	expect_selector_finds(f, &b, "sdb");
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "ZA1234560000C1234ABC", "sda");
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "ZA6543210000C4321CBA", "sdb");
	expect_find(f, OPAL_DRIVE_BY_WWN, "0x5000C500A1B2C3E8", "sdb");	/* udev's ID_WWN */
	expect_find(f, OPAL_DRIVE_BY_WWN, "5000c500a1b2c3d4", "sda");
}

/* Two paths of one logical unit are one drive; one serial on two drives is refused. */
static void test_scsi_paths_and_clash(void **state)
{
	struct fx *f = *state;
	char path[PATH_MAX], want[2 * PATH_MAX];

	sas_disk(f, "sdz", "HGST    ", "0XH1234A", 0x5000cca012345678ull, true);
	sas_disk(f, "sdaa", "HGST    ", "0XH1234A", 0x5000cca012345678ull, true);
	devnode(f, "sdz");
	devnode(f, "sdaa");
	/* sdz before sdaa, as the kernel names them. */
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "0XH1234A", "sdz");
	expect_find(f, OPAL_DRIVE_BY_WWN, "naa.5000cca012345678", "sdz");

	sas_disk(f, "sdc", "HGST    ", "0XH1234A", 0x5000cca087654321ull, true);
	devnode(f, "sdc");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_SERIAL, "0XH1234A", path,
					    sizeof(path)), -ENOTUNIQ);
	snprintf(want, sizeof(want), "%s/sdc %s/sdz", f->dev, f->dev);
	assert_string_equal(path, want);
	/* Its WWN still names it alone. */
	expect_find(f, OPAL_DRIVE_BY_WWN, "naa.5000cca087654321", "sdc");
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_WWN, "naa.5000cca087654321",
					    path, 8), -ENAMETOOLONG);
	assert_int_equal(opal_drive_find_in(&f->roots, OPAL_DRIVE_BY_WWN, "", path, sizeof(path)),
			 -EINVAL);
}

/* SATA behind libata: the ATA serial (leading blanks dropped), the ATA WWN. */
static void test_ata(void **state)
{
	struct fx *f = *state;
	struct opal_drive_ident id;

	ata_disk(f, "sdd", "WD-WCC4E1234567", 0x50014ee2b1c2d3e4ull);
	ata_disk(f, "sde", "WD-WCC4E7654321", 0);
	devnode(f, "sdd");
	devnode(f, "sde");

	assert_int_equal(opal_drive_identify_name(&f->roots, "sdd", &id), 0);
	assert_int_equal(id.transport, OPAL_DRIVE_ATA);
	assert_string_equal(id.serial, "WD-WCC4E1234567");
	assert_string_equal(id.wwn, "naa.50014ee2b1c2d3e4");
	assert_string_equal(id.selector, "wwn=naa.50014ee2b1c2d3e4");
	assert_string_equal(id.file_id, "WD-WCC4E1234567");
	expect_selector_finds(f, &id, "sdd");
	expect_find(f, OPAL_DRIVE_BY_SERIAL, "WD-WCC4E1234567", "sdd");

	/* No WWN: the kernel's wwid is the T10 designator, blanks and all. */
	assert_int_equal(opal_drive_identify_name(&f->roots, "sde", &id), 0);
	assert_true(!strncmp(id.wwn, "t10.ATA     WDC WD40EFRX", 24));
	assert_string_equal(id.selector, "serial=WD-WCC4E7654321");
	assert_string_equal(id.file_id, "WD-WCC4E7654321");
	expect_selector_finds(f, &id, "sde");
}

/* The kernel's choice among designators (scsi_vpd_lun_id), through vpd_pg83 files. */
static void test_designator_choice(void **state)
{
	struct fx *f = *state;
	static const uint8_t naa6[16] = { 0x60, 0x01, 0x40, 0x5f, 0xde, 0, 0, 1, 0xaa, 0xbb,
					  0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11 };
	static const uint8_t naa5[8] = { 0x50, 0x01, 0x40, 0x5f, 0xde, 0, 0, 2 };
	static const uint8_t port[16] = { 0x60, 0x01, 0x40, 0x5f, 0xde, 0, 0, 9 };
	static const uint8_t eui12[12] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					   0x88, 0x99, 0xaa, 0xbb };
	struct opal_drive_ident id;
	uint8_t pg[512];
	size_t n;

	/* NAA 6 (registered extended) beats NAA 5 and EUI-64 12 bytes, in any order. */
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x01, 0x03, naa5, 8);
	n = desig(pg, n, 0x01, 0x03, naa6, 16);
	n = desig(pg, n, 0x01, 0x02, eui12, 12);
	put(f->sys, "class/block/sdf/device/vpd_pg83", pg, n);
	puts_at(f->sys, "class/block/sdf/device/scsi_level", "7\n");
	assert_int_equal(opal_drive_identify_name(&f->roots, "sdf", &id), 0);
	assert_string_equal(id.wwn, "naa.6001405fde000001aabbccddeeff0011");
	assert_string_equal(id.file_id, "6001405fde000001aabbccddeeff0011");

	/* A target port's NAA (association 1) is not the logical unit's. */
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x61, 0x93, port, 16);
	n = desig(pg, n, 0x01, 0x02, eui12, 12);
	put(f->sys, "class/block/sdg/device/vpd_pg83", pg, n);
	puts_at(f->sys, "class/block/sdg/device/scsi_level", "7\n");
	assert_int_equal(opal_drive_identify_name(&f->roots, "sdg", &id), 0);
	assert_string_equal(id.wwn, "eui.00112233445566778899aabb");
	assert_string_equal(id.selector, "wwn=eui.00112233445566778899aabb");

	/* Only a T10 vendor ID: no WWN selector; no serial either: no selector. */
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x02, 0x01, "FDEKIT  SEDSIM0001", 18);
	put(f->sys, "class/block/sdh/device/vpd_pg83", pg, n);
	puts_at(f->sys, "class/block/sdh/device/scsi_level", "7\n");
	assert_int_equal(opal_drive_identify_name(&f->roots, "sdh", &id), 0);
	assert_string_equal(id.wwn, "t10.FDEKIT  SEDSIM0001");
	assert_string_equal(id.selector, "");
	assert_false(id.stable);
	assert_string_equal(id.file_id, "sdh");

	/* A truncated descriptor is not read past the page. */
	n = vpd83_begin(pg);
	n = desig(pg, n, 0x01, 0x03, naa5, 8);
	pg[3] = 6;
	put(f->sys, "class/block/sdi/device/vpd_pg83", pg, n);
	puts_at(f->sys, "class/block/sdi/device/scsi_level", "7\n");
	assert_int_equal(opal_drive_identify_name(&f->roots, "sdi", &id), 0);
	assert_string_equal(id.wwn, "");
}

/* A disk with no identity the kernel knows: named by its kernel name, unstably. */
static void test_other(void **state)
{
	struct fx *f = *state;
	struct opal_drive_ident id;

	puts_at(f->sys, "class/block/loop0/size", "0\n");
	assert_int_equal(opal_drive_identify_name(&f->roots, "loop0", &id), 0);
	assert_int_equal(id.transport, OPAL_DRIVE_OTHER);
	assert_string_equal(id.selector, "");
	assert_string_equal(id.file_id, "loop0");
	assert_false(id.stable);
	assert_int_equal(opal_drive_identify_name(&f->roots, "../sda", &id), -EINVAL);
}

/* ------------------------------------------------------------ in use */

static void partition(struct fx *f, const char *disk, const char *part, const char *dev,
		      const char *start, const char *size)
{
	putf(f->sys, "1\n", "class/block/%s/%s/partition", disk, part);
	putf(f->sys, start, "class/block/%s/%s/start", disk, part);
	putf(f->sys, size, "class/block/%s/%s/size", disk, part);
	putf(f->sys, dev, "class/block/%s/%s/dev", disk, part);
	putf(f->sys, "", "class/block/%s/%s/holders/.keep", disk, part);
}

/* What uses a span: mounted, held, by partition and LBA (512-byte and 4K blocks). */
static void test_in_use(void **state)
{
	struct fx *f = *state;
	char why[256], mi[PATH_MAX];

	snprintf(mi, sizeof(mi), "%s/mountinfo", f->root);
	puts_at(f->root, "mountinfo",
		"22 1 8:1 / /boot rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"23 1 8:17 / /data rw,relatime shared:2 - xfs /dev/sdb1 rw\n"
		"24 1 8:32 / /srv rw,relatime shared:3 - ext4 /dev/sdc rw\n");
	f->roots.mountinfo = mi;
	/* sda, 512-byte blocks: sda1 mounted, sda2 under dm-0, sda3 unused. */
	putf(f->sys, "8:0\n", "class/block/sda/dev");
	putf(f->sys, "512\n", "class/block/sda/queue/logical_block_size");
	partition(f, "sda", "sda1", "8:1\n", "2048\n", "2048\n");
	partition(f, "sda", "sda2", "8:2\n", "4096\n", "8192\n");
	putf(f->sys, "", "class/block/sda/sda2/holders/dm-0/.keep");
	partition(f, "sda", "sda3", "8:3\n", "12288\n", "4096\n");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 0, 0, why, sizeof(why)), 1);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 12288, 4096, why, sizeof(why)), 0);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 0, 2048, why, sizeof(why)), 0);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 16384, 100, why, sizeof(why)), 0);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 2047, 2, why, sizeof(why)), 1);
	assert_string_equal(why, "sda1 is mounted on /boot");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sda", 12287, 10, why, sizeof(why)), 1);
	assert_string_equal(why, "sda2 is held by dm-0");
	/* sdb, 4096-byte blocks: sdb1 is sectors 80-159, LBAs 10-19. */
	putf(f->sys, "8:16\n", "class/block/sdb/dev");
	putf(f->sys, "4096\n", "class/block/sdb/queue/logical_block_size");
	partition(f, "sdb", "sdb1", "8:17\n", "80\n", "80\n");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sdb", 9, 1, why, sizeof(why)), 0);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sdb", 19, 5, why, sizeof(why)), 1);
	assert_string_equal(why, "sdb1 is mounted on /data");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sdb", 20, 5, why, sizeof(why)), 0);
	/* A file system on the whole disk, no partition table. */
	putf(f->sys, "8:32\n", "class/block/sdc/dev");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sdc", 100, 1, why, sizeof(why)), 1);
	assert_string_equal(why, "sdc is mounted on /srv");
	/* An NVMe controller: its namespaces (a hidden path as its head), a generic namespace. */
	putf(f->sys, "259:0\n", "class/block/nvme0n1/dev");
	putf(f->sys, "", "class/block/nvme0n1/holders/dm-1/.keep");
	putf(f->sys, "", "class/nvme/nvme0/nvme0c0n1/.keep");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "nvme0", 0, 0, why, sizeof(why)), 1);
	assert_string_equal(why, "nvme0n1 is held by dm-1");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "ng0n1", 0, 0, why, sizeof(why)), 1);
	putf(f->sys, "259:1\n", "class/block/nvme1n1/dev");
	putf(f->sys, "", "class/nvme/nvme1/nvme1n1/.keep");
	assert_int_equal(opal_drive_in_use_name(&f->roots, "nvme1", 0, 0, why, sizeof(why)), 0);
	assert_int_equal(opal_drive_in_use_name(&f->roots, "sdz", 0, 0, why, sizeof(why)), -ENOENT);
	/* Not a device (a sedsim directory): nothing to check. */
	assert_int_equal(opal_drive_in_use(f->root, 0, 0, why, sizeof(why)), -ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udev_string),
		cmocka_unit_test(test_wwn_equal),
		cmocka_unit_test_setup_teardown(test_nvme_multipath, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_path_by_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_controller_and_unsafe_serial, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_sas_same_vendor, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scsi_paths_and_clash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ata, setup, teardown),
		cmocka_unit_test_setup_teardown(test_designator_choice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other, setup, teardown),
		cmocka_unit_test_setup_teardown(test_in_use, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
