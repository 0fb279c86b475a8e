// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the drive's SCSI face says it is, besides its serial number: the T10
 * vendor identification (standard INQUIRY, the T10 vendor ID designator)
 * and the logical unit's NAA designator (VPD page 0x83), the WWN udev and
 * the kernel name the disk by. Kept in dir/identity, two lines:
 *
 *   vendor FDEKIT
 *   wwn naa.5f3a...
 *   lock-on-reset power-cycle,hardware-reset
 *
 * and which reset types the firmware takes in LockOnReset and DoneOnReset
 * besides Power Cycle: "power-cycle" alone, or with "hardware-reset". A
 * drive created before the file (or its third line) existed gets the
 * defaults: FDEKIT, an NAA 5 from the serial, Hardware Reset supported.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sedsim-internal.h"

#define DEFAULT_VENDOR "FDEKIT"

/* SPC-4 4.4.1: left-aligned ASCII, graphic characters; not blank. */
bool sedsim_valid_vendor(const char *v)
{
	size_t n = strlen(v);

	if (!n || n > 8 || v[0] == ' ')
		return false;
	for (; *v; v++)
		if (*v < 0x20 || *v > 0x7e)
			return false;
	return true;
}

int sedsim_parse_wwn(const char *s, uint8_t naa[16], size_t *len)
{
	size_t n = 0;
	bool nonzero = false;

	if (!strncasecmp(s, "naa.", 4))
		s += 4;
	else if (!strncasecmp(s, "0x", 2))
		s += 2;
	for (; isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && n < 16; s += 2) {
		char b[3] = { s[0], s[1], 0 };

		naa[n++] = (uint8_t)strtoul(b, NULL, 16);
	}
	if (*s)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		nonzero |= i ? naa[i] != 0 : (naa[0] & 0x0f) != 0;
	/*
	 * SPC-4 7.8.6.6: NAA 2 (IEEE Extended), 3 (Locally Assigned) and 5
	 * (IEEE Registered) are 8 bytes, 6 (IEEE Registered Extended) 16; the
	 * other NAA values are reserved.
	 */
	switch (n ? naa[0] >> 4 : 0) {
	case 2:
	case 3:
	case 5:
		if (n != 8)
			return -EINVAL;
		break;
	case 6:
		if (n != 16)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (!nonzero)
		return -EINVAL;
	*len = n;
	return 0;
}

/*
 * NAA 5 from a hash of the serial (FNV-1a, as the NVMe face derives its
 * NGUID), so that drives with different serials have different WWNs.
 */
static void default_wwn(const char serial[OPAL_SERIAL_MAX], uint8_t naa[16], size_t *len)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < OPAL_SERIAL_MAX; i++)
		h = (h ^ (uint8_t)serial[i]) * 1099511628211ull;
	be64(naa, (5ull << 60) | (h >> 4));
	*len = 8;
}

int sim_identity_check(const struct sedsim_config *cfg)
{
	uint8_t naa[16];
	size_t len;

	if (cfg->vendor && !sedsim_valid_vendor(cfg->vendor))
		return -EINVAL;
	if (cfg->wwn && sedsim_parse_wwn(cfg->wwn, naa, &len))
		return -EINVAL;
	return 0;
}

#define RESETS_PC "power-cycle"
#define RESETS_PC_HW "power-cycle,hardware-reset"

static void format(const char *vendor, const uint8_t *naa, size_t len, bool hw_reset,
		   char *out, size_t cap)
{
	int n = snprintf(out, cap, "vendor %s\nwwn naa.", vendor);

	for (size_t i = 0; i < len && n > 0 && (size_t)n + 3 < cap; i++)
		n += snprintf(out + n, cap - (size_t)n, "%02x", naa[i]);
	if (n > 0 && (size_t)n + 1 < cap)
		snprintf(out + n, cap - (size_t)n, "\nlock-on-reset %s\n",
			 hw_reset ? RESETS_PC_HW : RESETS_PC);
}

int sim_identity_create(int dirfd, const struct sedsim_config *cfg,
			const char serial[OPAL_SERIAL_MAX])
{
	uint8_t naa[16];
	size_t len;
	char text[128];
	ssize_t n;
	int fd, rc = 0;

	if (sim_identity_check(cfg))
		return -EINVAL;
	if (cfg->wwn)
		sedsim_parse_wwn(cfg->wwn, naa, &len);
	else
		default_wwn(serial, naa, &len);
	format(cfg->vendor ? cfg->vendor : DEFAULT_VENDOR, naa, len, !cfg->no_hw_reset, text,
	       sizeof(text));
	fd = openat(dirfd, "identity", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n != (ssize_t)strlen(text) || fsync(fd))
		rc = n < 0 || errno ? -errno : -EIO;
	close(fd);
	return rc;
}

int sim_identity_load(struct sedsim *sim)
{
	char text[192], vendor[16], wwn[64], resets[32] = RESETS_PC_HW, extra;
	uint8_t naa[16];
	size_t len;
	ssize_t n;
	int fd = openat(sim->dirfd, "identity", O_RDONLY | O_CLOEXEC), got;

	sim->hw_reset = true;
	if (fd < 0 && errno != ENOENT)
		return -errno;
	if (fd < 0) {
		memcpy(sim->vendor, DEFAULT_VENDOR "        ", 8);
		default_wwn(sim->st.serial, sim->naa, &len);
		sim->naa_len = (uint8_t)len;
		return 0;
	}
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	text[n] = 0;
	/* The vendor may hold blanks inside: it runs to the end of its line. */
	got = sscanf(text, "vendor %15[^\n]\nwwn %63s lock-on-reset %31s %c", vendor, wwn,
		     resets, &extra);
	if (got < 2 || got > 3 || !sedsim_valid_vendor(vendor) ||
	    sedsim_parse_wwn(wwn, naa, &len) ||
	    (strcmp(resets, RESETS_PC) && strcmp(resets, RESETS_PC_HW)))
		return -EINVAL;
	/* A word after the WWN that is not the third line is an error too. */
	if (got == 2 && sscanf(text, "vendor %15[^\n]\nwwn %63s %c", vendor, wwn, &extra) != 2)
		return -EINVAL;
	sim->hw_reset = !strcmp(resets, RESETS_PC_HW);
	memset(sim->vendor, ' ', sizeof(sim->vendor));
	memcpy(sim->vendor, vendor, strlen(vendor));
	memcpy(sim->naa, naa, len);
	sim->naa_len = (uint8_t)len;
	return 0;
}
