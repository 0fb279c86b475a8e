// SPDX-License-Identifier: GPL-2.0-only
/* Level 0 Discovery (Core Spec 3.3.6, Opal SSC 3.1.1). */
#include <string.h>

#include "opal.h"

#define L0_HEADER 48

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return ((uint64_t)be32(p) << 32) | be32(p + 4);
}

/* SSC features share the layout: base ComID, number of ComIDs, ... */
static void parse_ssc(struct opal_discovery *d, const uint8_t *f, size_t flen, bool v2)
{
	if (flen >= 8) {
		d->base_comid = be16(f + 4);
		d->num_comids = be16(f + 6);
	}
	if (v2 && flen >= 15) {
		d->range_crossing = f[8] & 0x01;
		d->admin_auths = be16(f + 9);
		d->user_auths = be16(f + 11);
		d->initial_pin = f[13];
		d->revert_pin = f[14];
	}
}

int opal_discovery_parse(const uint8_t *buf, size_t len, struct opal_discovery *d)
{
	size_t total, off;
	bool have_v2 = false;

	memset(d, 0, sizeof(*d));
	if (len < L0_HEADER)
		return OPAL_ERR_PROTOCOL;
	/* Length of parameter data excludes the length field itself. */
	total = (size_t)be32(buf) + 4;
	if (total < L0_HEADER || total > len)
		return OPAL_ERR_PROTOCOL;
	d->revision = be32(buf + 4);
	for (off = L0_HEADER; off < total;) {
		const uint8_t *f = buf + off;
		uint16_t code;
		size_t flen;

		if (total - off < 4)
			return OPAL_ERR_PROTOCOL;
		code = be16(f);
		flen = (size_t)f[3] + 4;
		if (flen > total - off)
			return OPAL_ERR_PROTOCOL;
		switch (code) {
		case OPAL_FC_TPER:
			d->tper = true;
			if (flen > 4)
				d->tper_flags = f[4];
			break;
		case OPAL_FC_LOCKING:
			d->locking = true;
			if (flen > 4)
				d->locking_flags = f[4];
			/* Bit 7 is defined from descriptor version 3 on (Opal SSC 2.02). */
			d->lock_on_reset_hw = flen > 4 && (f[2] >> 4) >= 3 && (f[4] & 0x80);
			break;
		case OPAL_FC_GEOMETRY:
			if (flen < 32)
				return OPAL_ERR_PROTOCOL;
			d->geometry = true;
			d->geo_align = f[4] & 1;
			d->logical_block_size = be32(f + 12);
			d->alignment_granularity = be64(f + 16);
			d->lowest_aligned_lba = be64(f + 24);
			break;
		case OPAL_FC_ENTERPRISE:
			d->enterprise = true;
			if (!have_v2)
				parse_ssc(d, f, flen, false);
			break;
		case OPAL_FC_OPAL1:
			d->opal1 = true;
			if (!have_v2)
				parse_ssc(d, f, flen, false);
			break;
		case OPAL_FC_SUM:
			d->sum = true;
			if (flen >= 8)
				d->sum_locking_objects = be32(f + 4);
			break;
		case OPAL_FC_DATASTORE:
			d->datastore = true;
			if (flen >= 16) {
				d->ds_max_tables = be16(f + 6);
				d->ds_max_size = be32(f + 8);
				d->ds_alignment = be32(f + 12);
			}
			break;
		case OPAL_FC_OPAL2:
			d->opal2 = true;
			have_v2 = true;
			parse_ssc(d, f, flen, true);
			break;
		case OPAL_FC_OPALITE:
		case OPAL_FC_PYRITE1:
		case OPAL_FC_PYRITE2:
		case OPAL_FC_RUBY:
			if (code == OPAL_FC_OPALITE)
				d->opalite = true;
			else if (code == OPAL_FC_PYRITE1)
				d->pyrite1 = true;
			else if (code == OPAL_FC_PYRITE2)
				d->pyrite2 = true;
			else
				d->ruby = true;
			if (!have_v2) {
				have_v2 = code == OPAL_FC_RUBY;
				parse_ssc(d, f, flen, have_v2);
			}
			break;
		case OPAL_FC_BLOCK_SID:
			/*
			 * Block SID Authentication 1.00: byte 4 bit 0 SID Value
			 * State (the SID PIN is no longer the MSID), bit 1 SID
			 * Authentication Blocked; byte 5 bit 0 Hardware Reset.
			 */
			d->block_sid = true;
			if (flen > 5) {
				d->sid_value_state = f[4] & 0x01;
				d->sid_blocked = f[4] & 0x02;
				d->sid_block_hw_reset = f[5] & 0x01;
			}
			break;
		default:
			break;	/* unknown features are skipped by their length */
		}
		off += flen;
	}
	return 0;
}

const char *opal_discovery_ssc(const struct opal_discovery *d)
{
	if (d->opal2)
		return "Opal 2";
	if (d->ruby)
		return "Ruby";
	if (d->opal1)
		return "Opal 1";
	if (d->pyrite2)
		return "Pyrite 2";
	if (d->pyrite1)
		return "Pyrite 1";
	if (d->opalite)
		return "Opalite";
	if (d->enterprise)
		return "Enterprise";
	return NULL;
}
