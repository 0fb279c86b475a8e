// SPDX-License-Identifier: GPL-2.0-only
/*
 * The in-process transport: an opal_dev of lib/opal's host side that talks
 * to a sedsim drive through IF-SEND/IF-RECV. Kept apart from the drive, which
 * needs only lib/opal's wire layer (tokens, frames, UIDs): tests and the
 * test build of opalctl link it, the sedsim program does not.
 */
#include <string.h>

#include "sedsim.h"

static int tp_send(void *ctx, uint8_t protocol, uint16_t sp_specific, const void *buf,
		   size_t len)
{
	return sedsim_if_send(ctx, protocol, sp_specific, buf, len);
}

static int tp_recv(void *ctx, uint8_t protocol, uint16_t sp_specific, void *buf, size_t len)
{
	return sedsim_if_recv(ctx, protocol, sp_specific, buf, len);
}

static int tp_serial(void *ctx, char serial[OPAL_SERIAL_MAX])
{
	memcpy(serial, sedsim_serial(ctx), OPAL_SERIAL_MAX);
	return 0;
}

static void tp_close(void *ctx)
{
	sedsim_close(ctx);
}

static const struct opal_transport_ops sedsim_ops = {
	.name = "sedsim",
	.if_send = tp_send,
	.if_recv = tp_recv,
	.serial = tp_serial,
	.close = tp_close,
};

struct opal_dev *sedsim_opal_dev(struct sedsim *sim)
{
	return opal_dev_new(&sedsim_ops, sim);
}
