// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opal's drive identity in a guest (44-opal-scsi-naming.sh):
 *   drive-id ident DEV      what sysfs says the drive is
 *   drive-id inquire DEV    what the SCSI device itself says (SG_IO INQUIRY)
 *   drive-id find KEY=VALUE the whole disk with serial=S or wwn=W
 * ident and inquire print transport=, serial=, wwn=, selector=, file_id=
 * and stable= lines; find prints the path. Exit status: 0, 1 usage,
 * 2 failed (not found), 3 the value names two drives (both printed).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "opal-drive-id.h"

static const char *const transports[] = {
	[OPAL_DRIVE_OTHER] = "other",
	[OPAL_DRIVE_NVME] = "nvme",
	[OPAL_DRIVE_ATA] = "ata",
	[OPAL_DRIVE_SCSI] = "scsi",
};

static int usage(void)
{
	fputs("Usage: drive-id ident DEV | inquire DEV | find serial=S|wwn=W\n", stderr);
	return 1;
}

int main(int argc, char **argv)
{
	struct opal_drive_ident id;
	int rc;

	if (argc != 3)
		return usage();
	if (!strcmp(argv[1], "ident") || !strcmp(argv[1], "inquire")) {
		rc = !strcmp(argv[1], "ident") ? opal_drive_identify(argv[2], &id) :
						 opal_drive_inquire(argv[2], &id);
		if (rc) {
			fprintf(stderr, "drive-id: %s %s: %s\n", argv[1], argv[2], strerror(-rc));
			return 2;
		}
		printf("transport=%s\nserial=%s\nwwn=%s\nselector=%s\nfile_id=%s\nstable=%s\n",
		       transports[id.transport], id.serial, id.wwn, id.selector, id.file_id,
		       id.stable ? "yes" : "no");
		return 0;
	}
	if (!strcmp(argv[1], "find")) {
		char path[2 * PATH_MAX + 2];
		enum opal_drive_key key;
		const char *value;

		if (!strncmp(argv[2], "serial=", 7)) {
			key = OPAL_DRIVE_BY_SERIAL;
			value = argv[2] + 7;
		} else if (!strncmp(argv[2], "wwn=", 4)) {
			key = OPAL_DRIVE_BY_WWN;
			value = argv[2] + 4;
		} else {
			return usage();
		}
		rc = opal_drive_find(key, value, path, sizeof(path));
		if (rc && rc != -ENOTUNIQ) {
			fprintf(stderr, "drive-id: find %s: %s\n", argv[2], strerror(-rc));
			return 2;
		}
		printf("%s\n", path);
		return rc ? 3 : 0;
	}
	return usage();
}
