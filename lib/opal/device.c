// SPDX-License-Identifier: GPL-2.0-only
/*
 * The device handle: the transport under it, its serial, Level 0
 * Discovery and the ComID it gives; IF-SEND and IF-RECV with the
 * transport's errors kept.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal.h"
#include "opal-internal.h"

#define L0_COMID 0x0001
#define DEFAULT_TIMEOUT_MS 10000
#define FIRST_HSN 0x66647301u	/* any nonzero value: ours, echoed back */

struct opal_dev *opal_dev_new(const struct opal_transport_ops *ops, void *ctx)
{
	struct opal_dev *dev = calloc(1, sizeof(*dev));

	if (!dev) {
		if (ops->close)
			ops->close(ctx);
		return NULL;
	}
	dev->ops = ops;
	dev->ctx = ctx;
	dev->timeout_ms = DEFAULT_TIMEOUT_MS;
	dev->next_hsn = FIRST_HSN;
	dev->send_max = OPAL_MIN_COMPACKET;
	dev->reply_max = OPAL_MIN_COMPACKET;
	dev->token_max = OPAL_MIN_IND_TOKEN;
	return dev;
}

void opal_dev_free(struct opal_dev *dev)
{
	if (!dev)
		return;
	if (dev->ops->close)
		dev->ops->close(dev->ctx);
	explicit_bzero(dev, sizeof(*dev));
	free(dev);
}

int opal_dev_errno(const struct opal_dev *dev)
{
	return dev->err_no;
}

void opal_dev_set_timeout(struct opal_dev *dev, unsigned int ms)
{
	dev->timeout_ms = ms;
}

const char *opal_dev_transport(const struct opal_dev *dev)
{
	return dev->ops->name;
}

int opal_dev_serial(struct opal_dev *dev, char serial[OPAL_SERIAL_MAX])
{
	int rc;

	if (!dev->ops->serial)
		return OPAL_ERR_UNSUPPORTED;
	rc = dev->ops->serial(dev->ctx, serial);
	if (rc) {
		dev->err_no = rc < 0 ? -rc : rc;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

int opal_tp_send(struct opal_dev *dev, uint8_t proto, uint16_t comid, const void *buf,
		   size_t len)
{
	int rc = dev->ops->if_send(dev->ctx, proto, comid, buf, len);

	if (rc) {
		dev->err_no = rc < 0 ? -rc : EIO;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

int opal_tp_recv(struct opal_dev *dev, uint8_t proto, uint16_t comid, void *buf,
		   size_t len)
{
	int rc = dev->ops->if_recv(dev->ctx, proto, comid, buf, len);

	if (rc) {
		dev->err_no = rc < 0 ? -rc : EIO;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

int opal_discovery0_raw(struct opal_dev *dev, uint8_t *buf, size_t cap, size_t *len)
{
	int rc;

	if (cap < OPAL_IO_BUFFER)
		return OPAL_ERR_INVAL;
	memset(buf, 0, OPAL_IO_BUFFER);
	rc = opal_tp_recv(dev, TCG_PROTOCOL_1, L0_COMID, buf, OPAL_IO_BUFFER);
	if (rc)
		return rc;
	*len = OPAL_IO_BUFFER;
	return 0;
}

int opal_discovery0(struct opal_dev *dev, struct opal_discovery *d)
{
	uint8_t buf[OPAL_IO_BUFFER];
	size_t len;
	int rc;

	rc = opal_discovery0_raw(dev, buf, sizeof(buf), &len);
	if (rc)
		return rc;
	rc = opal_discovery_parse(buf, len, d);
	if (rc)
		return rc;
	if (!d->opal2 && !d->opal1 && !d->ruby && !d->pyrite1 && !d->pyrite2)
		return OPAL_ERR_NOT_OPAL;
	if (!d->base_comid)
		return OPAL_ERR_PROTOCOL;
	dev->comid = d->base_comid;
	dev->disc = *d;
	dev->have_disc = true;
	return 0;
}

int opal_ensure_comid(struct opal_dev *dev)
{
	struct opal_discovery d;

	if (dev->have_disc)
		return 0;
	return opal_discovery0(dev, &d);
}
