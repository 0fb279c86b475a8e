/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared between the files of lib/opal; not part of the public API. */
#ifndef FDEKIT_OPAL_INTERNAL_H
#define FDEKIT_OPAL_INTERNAL_H

#include <stdio.h>

#include "opal-wire.h"

struct opal_dev {
	const struct opal_transport_ops *ops;
	void *ctx;
	int err_no;
	unsigned int timeout_ms;
	uint16_t comid;
	bool have_disc;
	struct opal_discovery disc;
	uint32_t next_hsn;
	/* Communication limits: the Opal SSC minimum until Properties says more. */
	bool have_props;	/* Properties exchanged, or refused by the TPer */
	size_t send_max;	/* largest ComPacket (IF-SEND transfer) we send */
	size_t reply_max;	/* largest ComPacket the TPer will answer with */
	size_t token_max;	/* largest single token (header included) we send */
	bool reset_on_busy;	/* Stack Reset once when StartSession gets SP_BUSY */
	FILE *trace;		/* method calls (UIDs and status, never arguments) */
};

/* Opal SSC minimum sizes (4.1.1.1): every Opal TPer takes them. */
#define OPAL_MIN_COMPACKET OPAL_IO_BUFFER
#define OPAL_MIN_IND_TOKEN (OPAL_IO_BUFFER - OPAL_FRAME_HDRS)
/* What the Core Spec lets a host assume of any TPer before Properties. */
#define OPAL_CORE_INITIAL_COMPACKET 1024

/* TCG protocol 1: Level 0 Discovery and the ComPackets of sessions. */
#define TCG_PROTOCOL_1 0x01

int opal_ensure_comid(struct opal_dev *dev);
/* IF-SEND, IF-RECV through the transport (device.c); errors kept in dev. */
int opal_tp_send(struct opal_dev *dev, uint8_t proto, uint16_t comid, const void *buf, size_t len);
int opal_tp_recv(struct opal_dev *dev, uint8_t proto, uint16_t comid, void *buf, size_t len);
/* Properties once per device (exchange.c); a TPer that refuses them keeps the minimums. */
int opal_ensure_props(struct opal_dev *dev);
/*
 * Send one payload in a ComPacket (an IF-SEND transfer of xfer bytes, at
 * most OPAL_IO_BUFFER) and wait for the reply's payload.
 */
int opal_exchange(struct opal_dev *dev, size_t xfer, uint32_t tsn, uint32_t hsn,
		  const uint8_t *payload, size_t len, struct opal_resp *r);
/* Adopt the limits of a Properties reply (properties.c). */
void opal_dev_apply_props(struct opal_dev *dev, const struct opal_props *p);
/*
 * Largest byte atom (data bytes) that fits in a call of s, or in its reply,
 * next to overhead bytes of other tokens; 0 when nothing fits.
 */
size_t opal_session_call_room(const struct opal_session *s, size_t overhead);
size_t opal_session_reply_room(const struct opal_session *s, size_t overhead);

/* Parse r->raw into tokens, find the results list and the method status. */
int opal_resp_parse(struct opal_resp *r);
/* The value token of column col inside a Get result, or 0 if absent. */
size_t opal_resp_column(const struct opal_resp *r, unsigned col);
void opal_put_get_cols(struct opal_buf *b, const opal_uid *obj, unsigned first,
		       unsigned last);
int opal_get_columns(struct opal_session *s, const opal_uid *obj, unsigned first,
		     unsigned last, struct opal_resp *r);
void opal_put_set_begin(struct opal_buf *b, const opal_uid *obj);
void opal_put_set_end(struct opal_buf *b);
int opal_call_simple(struct opal_session *s, struct opal_buf *b);
/* A reply of one result, a byte string of exactly n bytes, copied to out; else OPAL_ERR_PROTOCOL. */
int opal_resp_take_bytes(const struct opal_resp *r, void *out, size_t n);
/* Admin1 for who 0, else User who. */
opal_uid opal_authority_uid(unsigned who);
/* End the session, keeping the first error. */
int opal_finish(struct opal_session *s, int rc);

#endif
