// SPDX-License-Identifier: GPL-2.0-only
/*
 * Session Manager Properties (Core Spec 5.2.2.1): tell the TPer what this
 * host can receive, learn what the TPer can, and size later ComPackets to
 * fit both.
 *
 *   call:  SMUID.Properties[ HostProperties = [ "Name" = uint ... ] ]
 *   reply: SMUID.Properties[ [ "Name" = uint ... ], HostProperties = [ ... ] ]
 *
 * HostProperties is optional parameter 0 (a string name on Enterprise-era
 * TPers); the reply may leave it out.
 */
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opal-internal.h"

#define HOST_PROPERTIES_NAME 0	/* optional parameter number */
#define HOST_PROPERTIES_STR "HostProperties"

/* ATA counts IF-SEND transfers in 512-byte blocks. */
#define XFER_BLOCK 512

static const char *const prop_names[OPAL_PROP_KNOWN] = {
	[OPAL_PROP_MAX_COMPACKET_SIZE] = "MaxComPacketSize",
	[OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE] = "MaxResponseComPacketSize",
	[OPAL_PROP_MAX_PACKET_SIZE] = "MaxPacketSize",
	[OPAL_PROP_MAX_IND_TOKEN_SIZE] = "MaxIndTokenSize",
	[OPAL_PROP_MAX_AGG_TOKEN_SIZE] = "MaxAggTokenSize",
	[OPAL_PROP_MAX_PACKETS] = "MaxPackets",
	[OPAL_PROP_MAX_SUBPACKETS] = "MaxSubpackets",
	[OPAL_PROP_MAX_METHODS] = "MaxMethods",
	[OPAL_PROP_MAX_SESSIONS] = "MaxSessions",
	[OPAL_PROP_MAX_READ_SESSIONS] = "MaxReadSessions",
	[OPAL_PROP_MAX_AUTHENTICATIONS] = "MaxAuthentications",
	[OPAL_PROP_MAX_TRANSACTION_LIMIT] = "MaxTransactionLimit",
	[OPAL_PROP_DEF_SESSION_TIMEOUT] = "DefSessionTimeout",
	[OPAL_PROP_MAX_SESSION_TIMEOUT] = "MaxSessionTimeout",
	[OPAL_PROP_MIN_SESSION_TIMEOUT] = "MinSessionTimeout",
	[OPAL_PROP_DEF_TRANS_TIMEOUT] = "DefTransTimeout",
	[OPAL_PROP_MAX_TRANS_TIMEOUT] = "MaxTransTimeout",
	[OPAL_PROP_MIN_TRANS_TIMEOUT] = "MinTransTimeout",
	[OPAL_PROP_MAX_COMID_TIME] = "MaxComIDTime",
	[OPAL_PROP_CONTINUED_TOKENS] = "ContinuedTokens",
	[OPAL_PROP_SEQUENCE_NUMBERS] = "SequenceNumbers",
	[OPAL_PROP_ACK_NAK] = "AckNak",
	[OPAL_PROP_ASYNCHRONOUS] = "Asynchronous",
};

_Static_assert(OPAL_PROP_KNOWN <= 32, "present is a 32-bit mask");

/* One ComPacket each way, one Packet, one SubPacket, one method: what we parse. */
const struct opal_host_props OPAL_HOST_PROPS_DEFAULT = {
	.max_compacket_size = OPAL_IO_BUFFER,
	.max_response_compacket_size = OPAL_IO_BUFFER,
	.max_packet_size = OPAL_IO_BUFFER - OPAL_COMPACKET_HDR,
	.max_ind_token_size = OPAL_IO_BUFFER - OPAL_FRAME_HDRS,
	.max_packets = 1,
	.max_subpackets = 1,
	.max_methods = 1,
};

const char *opal_prop_name(enum opal_prop p)
{
	return (unsigned)p < OPAL_PROP_KNOWN ? prop_names[p] : NULL;
}

bool opal_prop_get(const struct opal_prop_list *l, enum opal_prop p, uint64_t *v)
{
	if ((unsigned)p >= OPAL_PROP_KNOWN || !(l->present & (1u << p)))
		return false;
	*v = l->value[p];
	return true;
}

/* Names are shown to users and used as JSON keys: printable ASCII only. */
static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x21 || p[i] > 0x7e)
			return false;
	return true;
}

/*
 * Parse [ STARTNAME "Name" uint ENDNAME ... ] at token i into l.
 * Returns the index just past the list, or 0 when malformed.
 */
static size_t parse_list(const struct opal_tokens *t, size_t i, struct opal_prop_list *l)
{
	size_t end;

	memset(l, 0, sizeof(*l));
	if (i >= t->n || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTLIST))
		return 0;
	end = opal_tok_skip(t, i);
	if (!end)
		return 0;
	/* Each pair is exactly four tokens; end - 1 is the ENDLIST. */
	for (size_t j = i + 1; j < end - 1; j += 4) {
		const struct opal_token *name, *val;
		struct opal_prop_pair *pp;

		if (j + 4 > end - 1 || !opal_tok_is(&t->tok[j], OPAL_TOK_STARTNAME) ||
		    !opal_tok_is(&t->tok[j + 3], OPAL_TOK_ENDNAME))
			return 0;
		name = &t->tok[j + 1];
		val = &t->tok[j + 2];
		if (name->type != OPAL_ATOM_BYTES || val->type != OPAL_ATOM_UINT ||
		    name->len == 0 || name->len > OPAL_PROP_NAME_MAX ||
		    !printable(name->bytes, name->len) || l->n >= OPAL_PROPS_MAX)
			return 0;
		pp = &l->pair[l->n++];
		memcpy(pp->name, name->bytes, name->len);
		pp->name[name->len] = 0;
		pp->value = val->uint;
		for (unsigned p = 0; p < OPAL_PROP_KNOWN; p++) {
			if (!strcmp(pp->name, prop_names[p])) {
				l->value[p] = pp->value;
				l->present |= 1u << p;
				break;
			}
		}
	}
	return end;
}

static bool is_host_properties_name(const struct opal_token *k)
{
	if (k->type == OPAL_ATOM_UINT)
		return k->uint == HOST_PROPERTIES_NAME;
	return k->type == OPAL_ATOM_BYTES && k->len == strlen(HOST_PROPERTIES_STR) &&
	       !memcmp(k->bytes, HOST_PROPERTIES_STR, k->len);
}

static int parse_reply(const struct opal_resp *r, struct opal_props *out)
{
	const struct opal_tokens *t = &r->t;
	size_t i, end;

	/* F8 SMUID Properties F0 ... F1: opal_resp_parse checked the shape. */
	if (r->results != 3 || memcmp(t->tok[1].bytes, OPAL_UID_SMUID.b, 8) ||
	    memcmp(t->tok[2].bytes, OPAL_M_PROPERTIES.b, 8))
		return OPAL_ERR_PROTOCOL;
	end = opal_tok_skip(t, r->results) - 1;	/* the results' ENDLIST */
	i = parse_list(t, r->results + 1, &out->tper);
	if (!i)
		return OPAL_ERR_PROTOCOL;
	if (i < end) {
		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || i + 2 >= end ||
		    !is_host_properties_name(&t->tok[i + 1]))
			return OPAL_ERR_PROTOCOL;
		i = parse_list(t, i + 2, &out->host);
		if (!i || i >= end || !opal_tok_is(&t->tok[i], OPAL_TOK_ENDNAME))
			return OPAL_ERR_PROTOCOL;
		out->have_host = true;
		i++;
	}
	return i == end ? 0 : OPAL_ERR_PROTOCOL;
}

int opal_properties_parse(const uint8_t *buf, size_t len, struct opal_props *out)
{
	struct opal_resp *r;
	int rc;

	memset(out, 0, sizeof(*out));
	if (len > sizeof(r->raw))
		return OPAL_ERR_PROTOCOL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	memcpy(r->raw, buf, len);
	r->raw_len = len;
	rc = opal_resp_parse(r);
	if (!rc && r->status)
		rc = r->status;
	if (!rc)
		rc = parse_reply(r, out);
	if (rc)
		memset(out, 0, sizeof(*out));
	free(r);
	return rc;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Lower *limit to the property p of l when l reports a usable value. */
static void clamp(size_t *limit, const struct opal_prop_list *l, enum opal_prop p, size_t plus)
{
	uint64_t v;

	/* 0 says nothing about a size: ignore it rather than stop talking. */
	if (opal_prop_get(l, p, &v) && v && v <= SIZE_MAX - plus)
		*limit = min_size(*limit, (size_t)v + plus);
}

void opal_dev_apply_props(struct opal_dev *dev, const struct opal_props *p)
{
	size_t send = OPAL_IO_BUFFER, reply = OPAL_IO_BUFFER, token;

	clamp(&send, &p->tper, OPAL_PROP_MAX_COMPACKET_SIZE, 0);
	clamp(&send, &p->tper, OPAL_PROP_MAX_PACKET_SIZE, OPAL_COMPACKET_HDR);
	if (send >= XFER_BLOCK)
		send &= ~(size_t)(XFER_BLOCK - 1);
	token = send > OPAL_FRAME_HDRS ? send - OPAL_FRAME_HDRS : 0;
	clamp(&token, &p->tper, OPAL_PROP_MAX_IND_TOKEN_SIZE, 0);
	clamp(&reply, &p->tper, OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE, 0);
	if (p->have_host) {
		clamp(&reply, &p->host, OPAL_PROP_MAX_COMPACKET_SIZE, 0);
		clamp(&reply, &p->host, OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE, 0);
	}
	dev->send_max = send;
	dev->reply_max = reply;
	dev->token_max = token;
	dev->have_props = true;
}

static void put_host_prop(struct opal_buf *b, enum opal_prop p, uint32_t v)
{
	if (v)
		opal_put_prop(b, prop_names[p], v);
}

/* A proposal above what this library can receive would invite replies it cannot read. */
static bool host_props_fit(const struct opal_host_props *h)
{
	const struct opal_host_props *d = &OPAL_HOST_PROPS_DEFAULT;

	return h->max_compacket_size <= d->max_compacket_size &&
	       h->max_response_compacket_size <= d->max_response_compacket_size &&
	       h->max_packet_size <= d->max_packet_size &&
	       h->max_ind_token_size <= d->max_ind_token_size &&
	       h->max_packets <= d->max_packets && h->max_subpackets <= d->max_subpackets &&
	       h->max_methods <= d->max_methods;
}

int opal_properties(struct opal_dev *dev, const struct opal_host_props *host,
		    struct opal_props *out)
{
	static const struct opal_host_props none;
	uint8_t mem[512];
	struct opal_buf b;
	struct opal_resp *r;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!host)
		host = &OPAL_HOST_PROPS_DEFAULT;
	if (!host_props_fit(host))
		return OPAL_ERR_INVAL;
	rc = opal_ensure_comid(dev);
	if (rc)
		return rc;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	if (memcmp(host, &none, sizeof(none))) {
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, HOST_PROPERTIES_NAME);
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		put_host_prop(&b, OPAL_PROP_MAX_COMPACKET_SIZE, host->max_compacket_size);
		put_host_prop(&b, OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE,
			      host->max_response_compacket_size);
		put_host_prop(&b, OPAL_PROP_MAX_PACKET_SIZE, host->max_packet_size);
		put_host_prop(&b, OPAL_PROP_MAX_IND_TOKEN_SIZE, host->max_ind_token_size);
		put_host_prop(&b, OPAL_PROP_MAX_PACKETS, host->max_packets);
		put_host_prop(&b, OPAL_PROP_MAX_SUBPACKETS, host->max_subpackets);
		put_host_prop(&b, OPAL_PROP_MAX_METHODS, host->max_methods);
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_call_end(&b, 0);
	if (b.overflow)
		return OPAL_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	/* Small enough for any TPer, whatever it will turn out to take. */
	rc = opal_exchange(dev, OPAL_CORE_INITIAL_COMPACKET, 0, 0, b.data, b.len, r);
	if (!rc)
		rc = opal_properties_parse(r->raw, r->raw_len, out);
	if (!rc)
		opal_dev_apply_props(dev, out);
	free(r);
	return rc;
}
