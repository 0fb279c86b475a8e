// SPDX-License-Identifier: GPL-2.0-only
/* ComPacket / Packet / SubPacket framing (Core Spec 3.2.3). */
#include <string.h>

#include "opal-wire.h"

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint16_t get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

size_t opal_frame_build(uint8_t *out, size_t cap, const struct opal_frame *f,
			const uint8_t *payload, size_t len)
{
	size_t padded = (len + 3) & ~(size_t)3;
	size_t total = OPAL_FRAME_HDRS + padded;
	uint8_t *cp = out, *pk = out + OPAL_COMPACKET_HDR, *sp = pk + OPAL_PACKET_HDR;

	if (len > UINT32_MAX - OPAL_FRAME_HDRS - 3 || total > cap)
		return 0;
	memset(out, 0, total);
	put_be16(cp + 4, f->comid);
	put_be16(cp + 6, f->comid_ext);
	put_be32(cp + 8, f->outstanding);
	put_be32(cp + 12, f->min_transfer);
	put_be32(cp + 16, (uint32_t)(total - OPAL_COMPACKET_HDR));
	put_be32(pk + 0, f->tsn);
	put_be32(pk + 4, f->hsn);
	put_be32(pk + 8, f->seq);
	put_be32(pk + 20, (uint32_t)(OPAL_SUBPACKET_HDR + padded));
	put_be16(sp + 6, 0);	/* kind: data */
	put_be32(sp + 8, (uint32_t)len);
	if (len)
		memcpy(sp + OPAL_SUBPACKET_HDR, payload, len);
	return total;
}

int opal_frame_parse(const uint8_t *buf, size_t len, struct opal_frame *f)
{
	uint32_t cp_len, pk_len, sp_len;
	const uint8_t *pk, *sp;

	memset(f, 0, sizeof(*f));
	if (len < OPAL_COMPACKET_HDR)
		return OPAL_ERR_PROTOCOL;
	f->comid = get_be16(buf + 4);
	f->comid_ext = get_be16(buf + 6);
	f->outstanding = get_be32(buf + 8);
	f->min_transfer = get_be32(buf + 12);
	cp_len = get_be32(buf + 16);
	if (cp_len > len - OPAL_COMPACKET_HDR)
		return OPAL_ERR_PROTOCOL;
	if (cp_len == 0)
		return 0;	/* nothing (yet): see outstanding */
	if (cp_len < OPAL_PACKET_HDR)
		return OPAL_ERR_PROTOCOL;
	pk = buf + OPAL_COMPACKET_HDR;
	f->tsn = get_be32(pk + 0);
	f->hsn = get_be32(pk + 4);
	f->seq = get_be32(pk + 8);
	pk_len = get_be32(pk + 20);
	if (pk_len > cp_len - OPAL_PACKET_HDR || pk_len < OPAL_SUBPACKET_HDR)
		return OPAL_ERR_PROTOCOL;
	sp = pk + OPAL_PACKET_HDR;
	if (get_be16(sp + 6) != 0)
		return OPAL_ERR_PROTOCOL;	/* credit control: never sent by us */
	sp_len = get_be32(sp + 8);
	if (sp_len > pk_len - OPAL_SUBPACKET_HDR)
		return OPAL_ERR_PROTOCOL;
	f->payload = sp + OPAL_SUBPACKET_HDR;
	f->payload_len = sp_len;
	return 0;
}
