// SPDX-License-Identifier: GPL-2.0-only
/*
 * ComPackets: one payload sent and its reply received, with timeout and
 * the TPer's limits (Properties); the reply's tokens parsed; the Stack
 * Reset of ComID management.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal.h"
#include "opal-internal.h"

/* ComID management (Core Spec 3.3.4.7): Verify ComID Valid, Stack Reset. */
#define TCG_PROTOCOL_2 0x02
#define COMID_REQ_STACK_RESET 2
/* IF-RECV length for a ComID management response: the header and a 4-byte status, padded. */
#define COMID_RESP_LEN 512

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int opal_resp_parse(struct opal_resp *r)
{
	const struct opal_tokens *t = &r->t;
	size_t i, end;
	int rc;

	r->t.tok = r->tok;
	r->t.cap = sizeof(r->tok) / sizeof(r->tok[0]);
	r->status = OPAL_ST_FAIL;
	rc = opal_tokens_parse(r->raw, r->raw_len, &r->t);
	if (rc)
		return rc;
	if (t->n == 0)
		return OPAL_ERR_PROTOCOL;
	i = 0;
	if (opal_tok_is(&t->tok[0], OPAL_TOK_ENDOFSESSION))
		return OPAL_ERR_PROTOCOL;	/* the drive closed the session */
	r->call = false;
	if (opal_tok_is(&t->tok[0], OPAL_TOK_CALL)) {
		/*
		 * A call from the session manager (SyncSession, Properties,
		 * CloseSession): only the SMUID invokes methods on the host.
		 */
		if (t->n < 4 || t->tok[1].type != OPAL_ATOM_BYTES || t->tok[1].len != 8 ||
		    t->tok[2].type != OPAL_ATOM_BYTES || t->tok[2].len != 8 ||
		    memcmp(t->tok[1].bytes, OPAL_UID_SMUID.b, 8))
			return OPAL_ERR_PROTOCOL;
		r->call = true;
		memcpy(r->method.b, t->tok[2].bytes, 8);
		i = 3;
	}
	if (i >= t->n || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTLIST))
		return OPAL_ERR_PROTOCOL;
	r->results = i;
	end = opal_tok_skip(t, i);
	if (end == 0 || end + 6 > t->n)
		return OPAL_ERR_PROTOCOL;
	if (!opal_tok_is(&t->tok[end], OPAL_TOK_ENDOFDATA) ||
	    !opal_tok_is(&t->tok[end + 1], OPAL_TOK_STARTLIST) ||
	    t->tok[end + 2].type != OPAL_ATOM_UINT ||
	    !opal_tok_is(&t->tok[end + 5], OPAL_TOK_ENDLIST))
		return OPAL_ERR_PROTOCOL;
	if (t->tok[end + 2].uint > 0x3f)
		return OPAL_ERR_PROTOCOL;
	r->status = (int)t->tok[end + 2].uint;
	return 0;
}

/*
 * The largest token in a token stream, header included. Our own encoder
 * wrote the stream, so a malformed atom is not expected: it counts as the
 * whole rest of the stream.
 */
static size_t largest_token(const uint8_t *p, size_t len)
{
	size_t i = 0, max = 0;

	while (i < len) {
		uint8_t h = p[i];
		size_t n;

		if (h < 0x80 || h >= 0xe4)
			n = 1;				/* tiny atom or control token */
		else if (h < 0xc0)
			n = 1 + (h & 0x0f);		/* short atom */
		else if (h < 0xe0)
			n = len - i < 2 ? len - i : 2 + (((size_t)(h & 0x07) << 8) | p[i + 1]);
		else
			n = len - i < 4 ? len - i :
			    4 + (((size_t)p[i + 1] << 16) | ((size_t)p[i + 2] << 8) | p[i + 3]);
		if (n > len - i)
			n = len - i;
		if (n > max)
			max = n;
		i += n;
	}
	return max;
}

int opal_exchange(struct opal_dev *dev, size_t xfer, uint32_t tsn, uint32_t hsn,
		  const uint8_t *payload, size_t len, struct opal_resp *r)
{
	uint8_t io[OPAL_IO_BUFFER];
	struct opal_frame f = { 0 };
	uint64_t deadline;
	unsigned int nap_us = 100;
	int rc;

	if (xfer > sizeof(io))
		return OPAL_ERR_INVAL;
	/* Never hand the TPer more than it said it can take. */
	if (len > xfer || OPAL_FRAME_HDRS + ((len + 3) & ~(size_t)3) > xfer ||
	    largest_token(payload, len) > dev->token_max)
		return OPAL_ERR_TOO_LARGE;
	f.comid = dev->comid;
	f.tsn = tsn;
	f.hsn = hsn;
	memset(io, 0, xfer);	/* the transfer's padding carries no stale stack */
	if (!opal_frame_build(io, xfer, &f, payload, len))
		return OPAL_ERR_INVAL;
	rc = opal_tp_send(dev, TCG_PROTOCOL_1, dev->comid, io, xfer);
	/* The frame may hold a PIN: gone from the stack whatever happened. */
	explicit_bzero(io, sizeof(io));
	if (rc)
		return rc;
	deadline = now_ms() + dev->timeout_ms;
	for (;;) {
		struct opal_frame in;

		memset(io, 0, sizeof(io));
		rc = opal_tp_recv(dev, TCG_PROTOCOL_1, dev->comid, io, sizeof(io));
		if (rc)
			return rc;
		rc = opal_frame_parse(io, sizeof(io), &in);
		if (rc)
			return rc;
		if (in.payload_len) {
			if (in.comid != dev->comid || in.tsn != tsn || in.hsn != hsn)
				return OPAL_ERR_PROTOCOL;
			if (in.payload_len > sizeof(r->raw))
				return OPAL_ERR_PROTOCOL;
			memcpy(r->raw, in.payload, in.payload_len);
			r->raw_len = in.payload_len;
			explicit_bzero(io, sizeof(io));
			return 0;
		}
		if (in.outstanding == 0)
			return OPAL_ERR_PROTOCOL;	/* nothing pending: no reply */
		if (now_ms() >= deadline)
			return OPAL_ERR_TIMEOUT;
		nanosleep(&(struct timespec){ .tv_nsec = nap_us * 1000L }, NULL);
		if (nap_us < 20000)
			nap_us *= 2;
	}
}

/*
 * Properties once per device. A TPer that refuses them, or answers out of
 * spec, keeps the Opal minimum sizes; a device that does not answer at all
 * fails here as it would at StartSession.
 */
int opal_ensure_props(struct opal_dev *dev)
{
	struct opal_props *p;
	int rc;

	if (dev->have_props)
		return 0;
	p = malloc(sizeof(*p));
	if (!p)
		return OPAL_ERR_NOMEM;
	rc = opal_properties(dev, NULL, p);
	free(p);
	if (rc && rc != OPAL_ERR_PROTOCOL && !(rc > 0 && rc <= OPAL_ST_FAIL))
		return rc;
	dev->have_props = true;
	return 0;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * STACK_RESET on our ComID (protocol 2): ComID, extension, request code 2;
 * the answer (fetched by IF-RECV on protocol 2) repeats the three, then a
 * reserved word, the available data length (0: not ready yet, ask again)
 * and a 4-byte status, 0 for success. The TPer aborts every session and
 * pending response on the ComID and forgets the host's Properties.
 */
int opal_stack_reset(struct opal_dev *dev)
{
	uint8_t req[COMID_RESP_LEN] = { 0 }, resp[COMID_RESP_LEN];
	uint64_t deadline;
	int rc = opal_ensure_comid(dev);

	if (rc)
		return rc;
	put_be16(req, dev->comid);
	req[7] = COMID_REQ_STACK_RESET;
	rc = opal_tp_send(dev, TCG_PROTOCOL_2, dev->comid, req, sizeof(req));
	if (rc)
		return rc;
	deadline = now_ms() + dev->timeout_ms;
	for (;;) {
		memset(resp, 0, sizeof(resp));
		rc = opal_tp_recv(dev, TCG_PROTOCOL_2, dev->comid, resp, sizeof(resp));
		if (rc)
			return rc;
		if (get_be16(resp) != dev->comid || get_be16(resp + 2) ||
		    get_be32(resp + 4) != COMID_REQ_STACK_RESET)
			return OPAL_ERR_PROTOCOL;
		if (get_be16(resp + 10) >= 4)
			break;
		if (get_be16(resp + 10))
			return OPAL_ERR_PROTOCOL;
		if (now_ms() >= deadline)
			return OPAL_ERR_TIMEOUT;
		nanosleep(&(struct timespec){ .tv_nsec = 1000000L }, NULL);
	}
	if (get_be32(resp + 12))
		return OPAL_ST_FAIL;	/* the TPer says the reset failed */
	/* Properties go back to the TPer's initial assumptions: exchange them anew. */
	dev->have_props = false;
	dev->send_max = OPAL_MIN_COMPACKET;
	dev->reply_max = OPAL_MIN_COMPACKET;
	dev->token_max = OPAL_MIN_IND_TOKEN;
	return 0;
}

void opal_dev_set_reset_on_busy(struct opal_dev *dev, bool on)
{
	dev->reset_on_busy = on;
}
