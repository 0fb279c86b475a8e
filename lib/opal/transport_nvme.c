// SPDX-License-Identifier: GPL-2.0-only
/* NVMe transport: Security Send / Security Receive through libnvme. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libnvme.h>

#include "opal.h"
#include "opal-internal.h"

#define NVME_TIMEOUT_MS 10000

struct nvme_ctx {
	int fd;
	struct opal_nvme_seam seam;
};

static int identify_ctrl(int fd, struct nvme_id_ctrl *id)
{
	return nvme_identify_ctrl(fd, id);
}

static const struct opal_nvme_seam libnvme_seam = {
	.security_send = nvme_security_send,
	.security_receive = nvme_security_receive,
	.identify_ctrl = identify_ctrl,
};

/* libnvme: -1/errno for ioctl failure, > 0 for an NVMe status. */
static int nvme_rc(int rc)
{
	if (rc < 0)
		return errno ? -errno : -EIO;
	return rc > 0 ? -EIO : 0;
}

static int nv_send(void *p, uint8_t proto, uint16_t spsp, const void *buf, size_t len)
{
	struct nvme_ctx *ctx = p;
	struct nvme_security_send_args a = {
		.args_size = sizeof(a),
		.fd = ctx->fd,
		.timeout = NVME_TIMEOUT_MS,
		.nsid = 0,
		.secp = proto,
		.spsp0 = (uint8_t)spsp,
		.spsp1 = (uint8_t)(spsp >> 8),
		.data = (void *)buf,
		.data_len = (uint32_t)len,
		.tl = (uint32_t)len,
	};

	if (len > UINT32_MAX)
		return -EINVAL;
	return nvme_rc(ctx->seam.security_send(&a));
}

static int nv_recv(void *p, uint8_t proto, uint16_t spsp, void *buf, size_t len)
{
	struct nvme_ctx *ctx = p;
	struct nvme_security_receive_args a = {
		.args_size = sizeof(a),
		.fd = ctx->fd,
		.timeout = NVME_TIMEOUT_MS,
		.nsid = 0,
		.secp = proto,
		.spsp0 = (uint8_t)spsp,
		.spsp1 = (uint8_t)(spsp >> 8),
		.data = buf,
		.data_len = (uint32_t)len,
		.al = (uint32_t)len,
	};

	if (len > UINT32_MAX)
		return -EINVAL;
	return nvme_rc(ctx->seam.security_receive(&a));
}

static int nv_serial(void *p, char serial[OPAL_SERIAL_MAX])
{
	struct nvme_ctx *ctx = p;
	struct nvme_id_ctrl *id = calloc(1, sizeof(*id));
	int rc;

	if (!id)
		return -ENOMEM;
	rc = nvme_rc(ctx->seam.identify_ctrl(ctx->fd, id));
	if (!rc)
		memcpy(serial, id->sn, OPAL_SERIAL_MAX);	/* space padded, as sedutil reads it */
	free(id);
	return rc;
}

static void nv_close(void *p)
{
	struct nvme_ctx *ctx = p;

	if (ctx->fd >= 0)
		close(ctx->fd);
	free(ctx);
}

static const struct opal_transport_ops nvme_ops = {
	.name = "nvme",
	.if_send = nv_send,
	.if_recv = nv_recv,
	.serial = nv_serial,
	.close = nv_close,
};

int opal_nvme_from_fd(int fd, const struct opal_nvme_seam *seam, struct opal_dev **out)
{
	struct nvme_ctx *ctx = calloc(1, sizeof(*ctx));

	*out = NULL;
	if (!ctx) {
		if (fd >= 0)
			close(fd);
		return OPAL_ERR_NOMEM;
	}
	ctx->fd = fd;
	ctx->seam = seam ? *seam : libnvme_seam;
	*out = opal_dev_new(&nvme_ops, ctx);
	return *out ? 0 : OPAL_ERR_NOMEM;
}

int opal_open_nvme(const char *path, struct opal_dev **out, int *err_no)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	*out = NULL;
	if (fd < 0) {
		*err_no = errno;
		return OPAL_ERR_TRANSPORT;
	}
	return opal_nvme_from_fd(fd, NULL, out);
}
