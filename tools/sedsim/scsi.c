// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim as a SCSI disk (SBC-3/SPC-4 subset): every CDB the Linux sd
 * driver and the kernel's sed-opal send, with SECURITY PROTOCOL IN/OUT
 * reported as supported so sd enables sed-opal on the disk. Reads and
 * writes to locked ranges fail with DATA PROTECT, as on a real drive.
 */
#include <string.h>

#include "sedsim-internal.h"

void sim_scsi_serial(const struct sedsim *sim, char out[OPAL_SERIAL_MAX])
{
	size_t n = OPAL_SERIAL_MAX;

	while (n && (sim->st.serial[n - 1] == ' ' || !sim->st.serial[n - 1]))
		n--;
	memset(out, ' ', OPAL_SERIAL_MAX);
	memcpy(out + OPAL_SERIAL_MAX - n, sim->st.serial, n);
}

#define SAM_GOOD 0x00
#define SAM_CHECK_CONDITION 0x02

enum {
	KEY_NOT_READY = 0x02,
	KEY_MEDIUM_ERROR = 0x03,
	KEY_ILLEGAL_REQUEST = 0x05,
	KEY_DATA_PROTECT = 0x07,
};

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t get_be64(const uint8_t *p)
{
	return ((uint64_t)get_be32(p) << 32) | get_be32(p + 4);
}

static int check(struct sedsim_scsi_cmd *c, uint8_t key, uint8_t asc, uint8_t ascq)
{
	memset(c->sense, 0, sizeof(c->sense));
	c->sense[0] = 0x70;	/* fixed format, current */
	c->sense[2] = key;
	c->sense[7] = 10;	/* additional length */
	c->sense[12] = asc;
	c->sense[13] = ascq;
	c->status = SAM_CHECK_CONDITION;
	c->data_len = 0;
	return 0;
}

static int good(struct sedsim_scsi_cmd *c, size_t data_len)
{
	c->status = SAM_GOOD;
	c->data_len = data_len < c->len ? data_len : c->len;
	return 0;
}

/* Copy a response of n bytes into the data-in buffer, truncated to it. */
static int reply(struct sedsim_scsi_cmd *c, const uint8_t *p, size_t n)
{
	size_t m = n < c->len ? n : c->len;

	memcpy(c->buf, p, m);
	return good(c, m);
}

#define PRODUCT "sedsim Opal 2   "	/* 16 bytes, left-aligned */

/*
 * INQUIRY (SPC-4 6.6): the standard data, and the VPD pages a SAS drive
 * gives and the kernel keeps (scsi_attach_vpd): the list (0x00), the Unit
 * Serial Number (0x80) and Device Identification (0x83). Reserved CDB
 * bits, a page code without EVPD and pages it lacks are refused as
 * firmware refuses them: ILLEGAL REQUEST, INVALID FIELD IN CDB. The answer
 * is cut to the ALLOCATION LENGTH; page lengths never are.
 */
static int inquiry(struct sedsim *sim, struct sedsim_scsi_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	size_t alloc = (size_t)cdb[3] << 8 | cdb[4];
	uint8_t r[128] = { 0 };
	size_t n;

	if ((cdb[1] & 0xfe) || (!(cdb[1] & 1) && cdb[2]))
		return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
	if (!(cdb[1] & 1)) {
		r[0] = 0x00;	/* direct access block device */
		r[2] = 0x06;	/* SPC-4: sd then asks REPORT SUPPORTED OPCODES */
		r[3] = 0x02;	/* response data format 2 */
		r[4] = 91;
		r[7] = 0x02;	/* CmdQue */
		memcpy(r + 8, sim->vendor, 8);
		memcpy(r + 16, PRODUCT, 16);
		memcpy(r + 32, "0001", 4);
		n = 96;
	} else {
		r[1] = cdb[2];
		switch (cdb[2]) {
		case 0x00:	/* supported VPD pages, ascending */
			r[4] = 0x00;
			r[5] = 0x80;
			r[6] = 0x83;
			n = 7;
			break;
		case 0x80:	/* unit serial number: right-aligned ASCII (4.4.1) */
			sim_scsi_serial(sim, (char *)r + 4);
			n = 4 + OPAL_SERIAL_MAX;
			break;
		case 0x83: {	/* device identification */
			uint8_t *d = r + 4;

			/* The logical unit's NAA: binary, LU association, NAA type. */
			d[0] = 0x01;
			d[1] = 0x03;
			d[3] = sim->naa_len;
			memcpy(d + 4, sim->naa, sim->naa_len);
			d += 4 + sim->naa_len;
			/* T10 vendor ID based: vendor, product, serial, in ASCII. */
			d[0] = 0x02;
			d[1] = 0x01;
			d[3] = 8 + 16 + OPAL_SERIAL_MAX;
			memcpy(d + 4, sim->vendor, 8);
			memcpy(d + 12, PRODUCT, 16);
			sim_scsi_serial(sim, (char *)d + 28);
			d += 4 + d[3];
			n = (size_t)(d - r);
			break;
		}
		default:
			return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
		}
		be16(r + 2, (uint16_t)(n - 4));
	}
	return reply(c, r, n < alloc ? n : alloc);
}

static int report_opcodes(struct sedsim_scsi_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	static const uint8_t supported[] = {
		0x00, 0x03, 0x08, 0x0a, 0x12, 0x1a, 0x1b, 0x1e, 0x25, 0x28, 0x2a,
		0x35, 0x5a, 0x88, 0x8a, 0x91, 0x9e, 0xa2, 0xb5,
	};
	uint8_t r[8] = { 0 };

	/* Reporting option 1: one command, by opcode without service action. */
	if ((cdb[2] & 0x07) != 1)
		return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
	r[1] = 0x01;	/* not supported */
	for (size_t i = 0; i < sizeof(supported); i++) {
		if (supported[i] == cdb[3]) {
			r[1] = 0x03;	/* supported, conforming to the standard */
			be16(r + 2, 12);
			break;
		}
	}
	return reply(c, r, 4);
}

static int rw(struct sedsim *sim, struct sedsim_scsi_cmd *c, uint64_t lba, uint32_t count,
	      bool write)
{
	enum sedsim_io_status st;

	if ((size_t)count * SEDSIM_BLOCK > c->len)
		return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
	st = write ? sedsim_write(sim, lba, count, c->buf) : sedsim_read(sim, lba, count, c->buf);
	switch (st) {
	case SEDSIM_IO_OK:
		return good(c, write ? 0 : (size_t)count * SEDSIM_BLOCK);
	case SEDSIM_IO_LOCKED:
		/* DATA PROTECT, ACCESS DENIED - NO ACCESS RIGHTS. */
		return check(c, KEY_DATA_PROTECT, 0x20, 0x02);
	case SEDSIM_IO_RANGE:
		return check(c, KEY_ILLEGAL_REQUEST, 0x21, 0x00);
	default:
		return check(c, KEY_MEDIUM_ERROR, write ? 0x0c : 0x11, 0);
	}
}

static int security(struct sedsim *sim, struct sedsim_scsi_cmd *c, bool in)
{
	const uint8_t *cdb = c->cdb;
	uint32_t len = get_be32(cdb + 6);
	uint16_t spsp = (uint16_t)((cdb[2] << 8) | cdb[3]);
	int rc;

	if (cdb[4] & 0x80)
		len *= 512;	/* INC_512 */
	if (len > c->len)
		return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
	rc = in ? sedsim_if_recv(sim, cdb[1], spsp, c->buf, len) :
		  sedsim_if_send(sim, cdb[1], spsp, c->buf, len);
	if (rc)
		return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);	/* invalid field in CDB */
	return good(c, in ? len : 0);
}

int sedsim_scsi_exec(struct sedsim *sim, struct sedsim_scsi_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint8_t r[32] = { 0 };
	uint64_t blocks = sim->st.blocks;

	c->status = SAM_GOOD;
	c->data_len = 0;
	if (c->cdb_len < 6)
		return check(c, KEY_ILLEGAL_REQUEST, 0x20, 0);
	switch (cdb[0]) {
	case 0x00:	/* TEST UNIT READY */
	case 0x1b:	/* START STOP UNIT */
	case 0x1e:	/* PREVENT ALLOW MEDIUM REMOVAL */
	case 0x35:	/* SYNCHRONIZE CACHE (10) */
	case 0x91:	/* SYNCHRONIZE CACHE (16) */
		return good(c, 0);
	case 0x03:	/* REQUEST SENSE: nothing pending */
		r[0] = 0x70;
		r[7] = 10;
		return reply(c, r, 18);
	case 0x12:
		return inquiry(sim, c);
	case 0x1a:	/* MODE SENSE (6): header only, no block descriptors */
		r[0] = 3;
		return reply(c, r, 4);
	case 0x5a:	/* MODE SENSE (10) */
		r[1] = 6;
		return reply(c, r, 8);
	case 0x25:	/* READ CAPACITY (10) */
		be32(r, blocks - 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(blocks - 1));
		be32(r + 4, SEDSIM_BLOCK);
		return reply(c, r, 8);
	case 0x9e:	/* SERVICE ACTION IN (16) */
		if ((cdb[1] & 0x1f) != 0x10)
			return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
		be64(r, blocks - 1);	/* READ CAPACITY (16) */
		be32(r + 8, SEDSIM_BLOCK);
		return reply(c, r, 32);
	case 0xa3:	/* MAINTENANCE IN */
		if ((cdb[1] & 0x1f) != 0x0c)
			return check(c, KEY_ILLEGAL_REQUEST, 0x24, 0);
		return report_opcodes(c);
	case 0x08:	/* READ (6) */
	case 0x0a: {	/* WRITE (6) */
		uint32_t n = cdb[4] ? cdb[4] : 256;

		return rw(sim, c, ((uint64_t)(cdb[1] & 0x1f) << 16) | (cdb[2] << 8) | cdb[3], n,
			  cdb[0] == 0x0a);
	}
	case 0x28:	/* READ (10) */
	case 0x2a:	/* WRITE (10) */
		if (c->cdb_len < 10)
			break;
		return rw(sim, c, get_be32(cdb + 2), (uint32_t)((cdb[7] << 8) | cdb[8]),
			  cdb[0] == 0x2a);
	case 0x88:	/* READ (16) */
	case 0x8a:	/* WRITE (16) */
		if (c->cdb_len < 16)
			break;
		return rw(sim, c, get_be64(cdb + 2), get_be32(cdb + 10), cdb[0] == 0x8a);
	case 0xa2:	/* SECURITY PROTOCOL IN */
	case 0xb5:	/* SECURITY PROTOCOL OUT */
		if (c->cdb_len < 12)
			break;
		return security(sim, c, cdb[0] == 0xa2);
	default:
		break;
	}
	return check(c, KEY_ILLEGAL_REQUEST, 0x20, 0);	/* invalid command operation code */
}
