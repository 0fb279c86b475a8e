/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which drive a block device is, and which block device a drive is now.
 *
 * A drive is named by what survives renumbering and reboots: its serial
 * number or its WWN, read as udev and the kernel read them, so that an
 * unlock table line written in one boot finds the same drive in the next,
 * on NVMe, SAS and SATA alike:
 *
 *   NVMe  serial: the controller's (sysfs device/serial, Identify SN);
 *         WWN: the namespace's wwid (uuid./eui./nvme.), as udev's ID_WWN.
 *   SCSI  serial: the Unit Serial Number, VPD page 0x80 (udev's
 *         ID_SCSI_SERIAL; for an ATA disk behind a SATL the ATA serial,
 *         udev's ID_SERIAL_SHORT); WWN: the kernel's choice among the
 *         logical unit designators of VPD page 0x83 (sysfs device/wwid:
 *         naa.HEX, eui.HEX, ...), ID_WWN_WITH_EXTENSION without its "0x".
 *
 * Serial numbers are compared as udev exports them: leading and trailing
 * blanks dropped, each inner run of blanks one '_', any byte outside
 * [A-Za-z0-9#+-.:=@_] a '_'. WWNs compare in any case, with or without a
 * "naa."/"eui."/"uuid."/"nvme." style prefix or udev's "0x".
 *
 * Everything comes from sysfs, the kernel's copies of NVMe Identify data
 * and of the SCSI VPD pages it reads when it finds a disk: finding a drive
 * sends no command to any disk (some USB bridges fail on VPD requests,
 * which is why the kernel does not send them one), and a drive is found by
 * exactly what identifying it read. opal_drive_inquire() asks a SCSI device
 * itself, through SG_IO.
 *
 * Functions return 0 or -errno. No process-global state.
 */
#ifndef FDEKIT_OPAL_DRIVE_ID_H
#define FDEKIT_OPAL_DRIVE_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum opal_drive_transport {
	OPAL_DRIVE_OTHER = 0,	/* no serial or WWN the kernel knows of (loop, dm, ...) */
	OPAL_DRIVE_NVME,	/* an NVMe namespace, or an NVMe controller's char device */
	OPAL_DRIVE_ATA,		/* an ATA disk behind a SCSI/ATA translation layer */
	OPAL_DRIVE_SCSI,	/* any other SCSI disk (SAS, FC, iSCSI, tcm_loop) */
};

enum opal_drive_key {
	OPAL_DRIVE_BY_SERIAL,	/* opaltab(5) serial=S */
	OPAL_DRIVE_BY_WWN,	/* opaltab(5) wwn=W */
};

#define OPAL_DRIVE_NAME_MAX 64
#define OPAL_DRIVE_SERIAL_MAX 256
#define OPAL_DRIVE_WWN_MAX 256
#define OPAL_DRIVE_SELECTOR_MAX (OPAL_DRIVE_WWN_MAX + 8)
#define OPAL_DRIVE_FILE_ID_MAX 128

struct opal_drive_ident {
	enum opal_drive_transport transport;
	char name[OPAL_DRIVE_NAME_MAX];		/* the kernel's name: sda, nvme0n1, nvme0 */
	char serial[OPAL_DRIVE_SERIAL_MAX];	/* as udev exports it; "" if none */
	char wwn[OPAL_DRIVE_WWN_MAX];		/* as the kernel's wwid; "" if none */
	/*
	 * The opaltab(5) DEVICE field that finds this drive again, whatever
	 * its name next boot. NVMe: "serial=S", the controller's serial (a
	 * namespace's WWN is derived by the kernel when the drive gives no
	 * usable NGUID or EUI-64). SCSI and ATA: "wwn=naa.HEX" or
	 * "wwn=eui.HEX", what udev's by-id/wwn- link names, unique by
	 * assignment. Else the other one; "" when neither is known or fits
	 * a table field (a blank or '#' inside): name the drive by path then.
	 */
	char selector[OPAL_DRIVE_SELECTOR_MAX];
	/*
	 * A name for files about this drive (key slot JWEs), made of
	 * [A-Za-z0-9._-], different for every drive: udev's ID_SERIAL_SHORT
	 * with blanks dropped and other bytes '_' (NVMe and ATA: the serial,
	 * so the same name as the Opal transport's serial gave; other SCSI:
	 * the WWN's hex digits, or the serial when there is no WWN). With
	 * neither, the kernel's name and stable is false.
	 */
	char file_id[OPAL_DRIVE_FILE_ID_MAX];
	bool stable;				/* file_id survives renumbering */
};

/*
 * Identify the drive of devpath: a whole-disk block device (a symlink such
 * as /dev/disk/by-id/... is followed), or an NVMe controller or generic
 * namespace char device (/dev/nvme0, /dev/ng0n1). -EINVAL for a partition,
 * -ENODEV for anything that is not a device (a sedsim directory), -ENOENT
 * when sysfs has no entry for it.
 */
int opal_drive_identify(const char *devpath, struct opal_drive_ident *id);

/*
 * The kernel's name of the block or char device devpath is (a symlink is
 * followed): "sda", "nvme0n1p2", "nvme0", "sg1". -ENODEV for anything
 * that is not a device node (a sedsim directory) or that sysfs does not
 * know.
 */
int opal_drive_kernel_name(const char *devpath, char *name, size_t cap);

/*
 * The whole disk, now, whose serial or WWN is value: its path, "/dev/NAME",
 * in path. Partitions, disks without a /dev node, and NVMe's hidden
 * per-path disks (nvmeXcYnZ under native multipath) are never returned:
 * the multipath head (nvmeXnY) is. Disks that are one drive (the
 * namespaces of one NVMe subsystem, the paths of one SCSI logical unit)
 * give the first by name (nvme0n1 before nvme0n2, sda before sdb).
 * -ENOENT: no such disk (yet); -ENOTUNIQ: value names two different drives
 * (two disks with one serial and different WWNs): path holds the first two,
 * "/dev/A /dev/B", and nothing should be unlocked; -ENAMETOOLONG: path is
 * too small.
 */
int opal_drive_find(enum opal_drive_key key, const char *value, char *path, size_t cap);

/*
 * Ask a SCSI device itself (INQUIRY: the standard data, VPD pages 0x80 and
 * 0x83 through SG_IO) instead of the kernel's copy: id as
 * opal_drive_identify() fills it from sysfs (name left empty). -ENOTTY: not
 * a SCSI device; -EIO: the device refused.
 */
int opal_drive_inquire(const char *devpath, struct opal_drive_ident *id);

/*
 * The same against another sysfs and /dev (a test's fake tree, a chroot's
 * view): name is the kernel's name of a block device (sda, nvme0n1) or of
 * an NVMe char device (nvme0, ng0n1); the path found is dev/NAME.
 * NULL members mean /sys and /dev.
 */
struct opal_drive_roots {
	const char *sysfs;
	const char *dev;
	const char *mountinfo;	/* NULL: /proc/self/mountinfo */
};

int opal_drive_identify_name(const struct opal_drive_roots *roots, const char *name,
			     struct opal_drive_ident *id);
int opal_drive_find_in(const struct opal_drive_roots *roots, enum opal_drive_key key,
		       const char *value, char *path, size_t cap);

/*
 * The drives there are now, as opal_drive_find sees them (whole disks with
 * a /dev node, hidden NVMe paths left out) that speak a storage protocol
 * (NVMe, SCSI, ATA; not loop, dm or md): "/dev/NAME" paths in the kernel's
 * order, freed with opal_drive_list_free. roots NULL: /sys and /dev.
 */
int opal_drive_list(const struct opal_drive_roots *roots, char ***paths, size_t *count);
void opal_drive_list_free(char **paths, size_t count);

/* Whether two WWNs name the same drive (prefixes and case ignored). */
bool opal_drive_wwn_equal(const char *a, const char *b);

/* A serial number as udev exports it (see above), from len bytes of in. */
void opal_drive_udev_string(const char *in, size_t len, char *out, size_t cap);

/*
 * Whether anything uses logical blocks [first, first + count) of the drive
 * of devpath (count 0: the whole drive), so that locking them or making
 * them unreadable would pull the data from under it: a partition (or the
 * disk) there that is mounted, held by another block device (dm, md,
 * bcache: sysfs holders/), or open exclusively (swap, another program).
 * devpath as opal_drive_identify() takes it (for an NVMe controller: every
 * namespace). 1 with what in why ("sda2 is mounted on /srv"), 0 when
 * nothing does, -ENODEV when devpath is no device (nothing to check),
 * -ENOENT when sysfs does not know it, or -errno.
 */
int opal_drive_in_use(const char *devpath, uint64_t first, uint64_t count, char *why, size_t cap);
/* The same by kernel name, against roots (a test's fake sysfs and mount table). */
int opal_drive_in_use_name(const struct opal_drive_roots *roots, const char *name, uint64_t first,
			   uint64_t count, char *why, size_t cap);

#endif
