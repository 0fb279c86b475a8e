// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim security protocol interface: IF-SEND / IF-RECV for protocol 0
 * (supported protocols), 1 (Level 0 Discovery and ComPackets) and 2 (ComID
 * management). The in-process opal_dev transport on them is in hostdev.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sedsim-internal.h"

static uint8_t *feature(uint8_t *p, uint16_t code, uint8_t version, uint8_t len)
{
	be16(p, code);
	p[2] = (uint8_t)(version << 4);
	p[3] = len;
	return p + 4;
}

size_t sim_discovery(const struct sedsim *sim, uint8_t *out, size_t cap)
{
	const struct sim_state *st = &sim->st;
	bool active = st->lsp_lifecycle == OPAL_LIFECYCLE_MANUFACTURED;
	bool locked = false;
	uint8_t *p = out + 48, *f;
	size_t total;

	if (cap < 256)
		return 0;
	memset(out, 0, 256);
	for (unsigned i = 0; i <= SEDSIM_RANGES; i++) {
		const struct sim_range *r = &st->range[i];

		if ((i == 0 || r->length) && ((r->rle && r->rl) || (r->wle && r->wl)))
			locked = true;
	}
	be32(out + 4, 1);	/* data structure revision */

	f = feature(p, OPAL_FC_TPER, 1, 12);
	f[0] = 0x01 | 0x10;	/* Sync, Streaming */
	p = f + 12;

	/*
	 * Version 3 (Opal SSC 2.02 on): bit 7, HW Reset for LOR/DOR
	 * Supported; bit 6, MBR Shadowing Not Supported, stays 0.
	 */
	f = feature(p, OPAL_FC_LOCKING, 3, 12);
	f[0] = OPAL_LF_SUPPORTED | OPAL_LF_MEDIA_ENCRYPTION | (sim->hw_reset ? 0x80 : 0) |
	       (active ? OPAL_LF_ENABLED : 0) | (active && locked ? OPAL_LF_LOCKED : 0) |
	       (active && st->mbr_enable ? OPAL_LF_MBR_ENABLED : 0) |
	       (active && st->mbr_done ? OPAL_LF_MBR_DONE : 0);
	p = f + 12;

	f = feature(p, OPAL_FC_GEOMETRY, 1, 28);
	f[0] = 1;		/* ALIGN: ranges must be aligned (tper.c enforces it) */
	be32(f + 8, SEDSIM_BLOCK);
	be64(f + 12, SIM_ALIGN_GRANULARITY);
	be64(f + 20, SIM_LOWEST_ALIGNED_LBA);
	p = f + 28;

	/*
	 * Single User Mode (0x0201): the number of Locking objects that may
	 * be in SUM, then ANY (bit 0: some range is), ALL (bit 1: every range
	 * is) and Policy (bit 2: RangeStartRangeLengthPolicy, Admins).
	 */
	f = feature(p, OPAL_FC_SUM, 1, 12);
	be32(f, 1 + SEDSIM_RANGES);
	f[4] = (uint8_t)((active && st->sum_ranges ? 0x01 : 0) |
			 (active && st->sum_ranges == (1u << (1 + SEDSIM_RANGES)) - 1 ? 0x02 : 0) |
			 (active && st->sum_policy ? 0x04 : 0));
	p = f + 12;

	f = feature(p, OPAL_FC_DATASTORE, 1, 12);
	be16(f + 2, 1);		/* max tables */
	be32(f + 4, SEDSIM_DATASTORE_SIZE);
	be32(f + 8, 1);		/* alignment */
	p = f + 12;

	f = feature(p, OPAL_FC_OPAL2, 2, 16);
	be16(f, SEDSIM_BASE_COMID);
	be16(f + 2, 1);		/* number of ComIDs */
	f[4] = 0;		/* range crossing allowed */
	be16(f + 5, SEDSIM_ADMINS);
	be16(f + 7, SEDSIM_USERS);
	f[9] = 0;		/* initial C_PIN_SID = C_PIN_MSID */
	f[10] = 0;		/* after revert: C_PIN_SID = C_PIN_MSID */
	p = f + 16;

	total = (size_t)(p - out);
	be32(out, (uint32_t)(total - 4));
	return total;
}

int sedsim_if_send(struct sedsim *sim, uint8_t protocol, uint16_t sp_specific,
		   const void *buf, size_t len)
{
	if (protocol == 2)
		return sim_comid_request(sim, sp_specific, buf, len);
	if (protocol != 1 || sp_specific != SEDSIM_BASE_COMID)
		return -EINVAL;
	if (len > sim->max_compacket)
		return -EINVAL;	/* more than our buffer: the command fails */
	sim_handle_packet(sim, buf, len);
	return 0;
}

int sedsim_set_max_compacket(struct sedsim *sim, size_t bytes)
{
	if (bytes < SEDSIM_MIN_COMPACKET || bytes > OPAL_IO_BUFFER)
		return -EINVAL;
	sim->max_compacket = bytes;
	return 0;
}

int sedsim_if_recv(struct sedsim *sim, uint8_t protocol, uint16_t sp_specific,
		   void *buf, size_t len)
{
	uint8_t *out = buf;

	memset(buf, 0, len);
	if (protocol == 0 && sp_specific == 0) {
		/* Supported security protocols: 0, 1, 2. */
		static const uint8_t list[] = { 0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 2 };

		memcpy(buf, list, len < sizeof(list) ? len : sizeof(list));
		return 0;
	}
	if (protocol == 1 && sp_specific == 1) {
		uint8_t l0[512];
		size_t n = sim_discovery(sim, l0, sizeof(l0));

		memcpy(buf, l0, len < n ? len : n);
		return 0;
	}
	if (protocol == 2) {
		sim_comid_response(sim, sp_specific, buf, len);
		return 0;
	}
	if (protocol != 1 || sp_specific != SEDSIM_BASE_COMID)
		return -EINVAL;
	if (!sim->resp_len) {
		/* No response pending: an empty ComPacket for this ComID. */
		if (len >= OPAL_COMPACKET_HDR)
			be16(out + 4, sp_specific);
		return 0;
	}
	if (len < sim->resp_len)
		return -ENOSPC;
	memcpy(buf, sim->resp, sim->resp_len);
	sim->resp_len = 0;
	return 0;
}
