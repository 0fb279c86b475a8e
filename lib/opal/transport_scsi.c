// SPDX-License-Identifier: GPL-2.0-only
/* SCSI transport: SECURITY PROTOCOL IN/OUT (SPC-4) through SG_IO. */
#include <errno.h>
#include <fcntl.h>
#include <linux/hdreg.h>
#include <scsi/sg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "opal.h"
#include "opal-internal.h"

#define SCSI_SECURITY_IN 0xa2
#define SCSI_SECURITY_OUT 0xb5
#define SCSI_INQUIRY 0x12
#define SG_TIMEOUT_MS 10000

struct sg_ctx {
	int fd;
};

static int sg_cmd(int fd, uint8_t *cdb, uint8_t cdb_len, int dir, void *buf, size_t len)
{
	uint8_t sense[32];
	struct sg_io_hdr h;

	if (len > UINT32_MAX)
		return -EINVAL;
	memset(&h, 0, sizeof(h));
	h.interface_id = 'S';
	h.cmdp = cdb;
	h.cmd_len = cdb_len;
	h.dxfer_direction = dir;
	h.dxferp = buf;
	h.dxfer_len = (unsigned int)len;
	h.sbp = sense;
	h.mx_sb_len = sizeof(sense);
	h.timeout = SG_TIMEOUT_MS;
	if (ioctl(fd, SG_IO, &h) < 0)
		return -errno;
	if (h.status || h.host_status || h.driver_status)
		return -EIO;
	return 0;
}

static void security_cdb(uint8_t *cdb, uint8_t op, uint8_t proto, uint16_t spsp, size_t len)
{
	memset(cdb, 0, 12);
	cdb[0] = op;
	cdb[1] = proto;
	cdb[2] = (uint8_t)(spsp >> 8);
	cdb[3] = (uint8_t)spsp;
	cdb[6] = (uint8_t)(len >> 24);
	cdb[7] = (uint8_t)(len >> 16);
	cdb[8] = (uint8_t)(len >> 8);
	cdb[9] = (uint8_t)len;
}

static int sg_send(void *p, uint8_t proto, uint16_t spsp, const void *buf, size_t len)
{
	struct sg_ctx *ctx = p;
	uint8_t cdb[12];

	security_cdb(cdb, SCSI_SECURITY_OUT, proto, spsp, len);
	return sg_cmd(ctx->fd, cdb, sizeof(cdb), SG_DXFER_TO_DEV, (void *)buf, len);
}

static int sg_recv(void *p, uint8_t proto, uint16_t spsp, void *buf, size_t len)
{
	struct sg_ctx *ctx = p;
	uint8_t cdb[12];

	security_cdb(cdb, SCSI_SECURITY_IN, proto, spsp, len);
	return sg_cmd(ctx->fd, cdb, sizeof(cdb), SG_DXFER_FROM_DEV, buf, len);
}

/*
 * The serial number sedutil-cli hashes passwords with, so that drives it set
 * up can be managed: for an ATA disk (the kernel answers HDIO_GET_IDENTITY)
 * the ATA serial, which libata also returns in the Unit Serial Number VPD
 * page (0x80); for any other SCSI disk (SAS) sedutil takes the standard
 * INQUIRY's 8-byte T10 vendor identification padded with NULs, not the
 * serial number, and so must we.
 */
static int sg_serial(void *p, char serial[OPAL_SERIAL_MAX])
{
	struct sg_ctx *ctx = p;
	uint8_t id[512];
	int rc;

	if (!ioctl(ctx->fd, HDIO_GET_IDENTITY, id)) {
		uint8_t cdb[6] = { SCSI_INQUIRY, 0x01, 0x80, 0, 252, 0 };
		uint8_t vpd[252] = { 0 };
		size_t n;

		rc = sg_cmd(ctx->fd, cdb, sizeof(cdb), SG_DXFER_FROM_DEV, vpd, sizeof(vpd));
		if (rc)
			return rc;
		if (vpd[1] != 0x80)
			return -EIO;
		n = vpd[3];
		if (n > sizeof(vpd) - 4)
			return -EIO;
		memset(serial, ' ', OPAL_SERIAL_MAX);
		memcpy(serial, vpd + 4, n < OPAL_SERIAL_MAX ? n : OPAL_SERIAL_MAX);
		return 0;
	} else {
		uint8_t cdb[6] = { SCSI_INQUIRY, 0, 0, 0, 36, 0 };
		uint8_t std[36] = { 0 };

		rc = sg_cmd(ctx->fd, cdb, sizeof(cdb), SG_DXFER_FROM_DEV, std, sizeof(std));
		if (rc)
			return rc;
		memset(serial, 0, OPAL_SERIAL_MAX);
		memcpy(serial, std + 8, 8);	/* T10 VENDOR IDENTIFICATION */
		return 0;
	}
}

static void sg_close(void *p)
{
	struct sg_ctx *ctx = p;

	close(ctx->fd);
	free(ctx);
}

static const struct opal_transport_ops scsi_ops = {
	.name = "scsi",
	.if_send = sg_send,
	.if_recv = sg_recv,
	.serial = sg_serial,
	.close = sg_close,
};

int opal_open_sg(const char *path, struct opal_dev **out, int *err_no)
{
	struct sg_ctx *ctx;
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);

	*out = NULL;
	if (fd < 0) {
		*err_no = errno;
		return OPAL_ERR_TRANSPORT;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx) {
		close(fd);
		return OPAL_ERR_NOMEM;
	}
	ctx->fd = fd;
	*out = opal_dev_new(&scsi_ops, ctx);
	return *out ? 0 : OPAL_ERR_NOMEM;
}
