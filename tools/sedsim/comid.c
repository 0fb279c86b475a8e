// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim ComID management: security protocol 0x02 (TCG Core Spec 2.01,
 * 3.3.4.7 HANDLE_COMID_REQUEST). A host sends a request with IF-SEND
 * protocol 2, the ComID in the SP-specific field:
 *
 *   0  ComID (2)   2  ComID extension (2)   4  request code (4)
 *
 * and fetches the answer with IF-RECV protocol 2 on the same ComID:
 *
 *   0  ComID (2)   2  ComID extension (2)   4  request code (4)
 *   8  reserved (2)   10  available data length (2)   12  data
 *
 * The layout is checked against an outside client, go-tcg-storage
 * (pkg/core/core.go, HandleComIDRequest: request code at bytes 4-7, data
 * length at 10-11, data from 12), which opens every control session with
 * a STACK_RESET. Two requests are answered:
 *
 *   VERIFY_COMID_VALID (1): ComID state (4: 0 Invalid, 2 Issued,
 *     3 Associated) and three 10-byte times (allocation, expiry, current),
 *     zero for a static ComID: 34 bytes of data.
 *   STACK_RESET (2): 4 bytes, 0 Success or 1 Failure. It aborts the
 *     ComID's open session and its pending response, and the ComID's host
 *     properties return to their initial values, as after a power cycle.
 *
 * With no request pending, IF-RECV answers NO_RESPONSE_AVAILABLE: the
 * ComID, request code 0 and no data. Any other request code, a request
 * shorter than 8 bytes, or one whose ComID differs from the SP-specific
 * field fails the IF-SEND itself (the transport's "invalid field").
 */
#include <errno.h>
#include <string.h>

#include "sedsim-internal.h"

#define COMID_VERIFY_VALID 1u
#define COMID_STACK_RESET 2u

enum comid_state {
	COMID_INVALID = 0,
	COMID_ISSUED = 2,
	COMID_ASSOCIATED = 3,
};

static uint32_t get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* What a STACK_RESET does to the one ComID this TPer has. */
static void stack_reset(struct sedsim *sim)
{
	memset(&sim->sess, 0, sizeof(sim->sess));
	sim->resp_len = 0;
	sim->host_max_compacket = SIM_HOST_INITIAL_COMPACKET;
}

int sim_comid_request(struct sedsim *sim, uint16_t comid, const uint8_t *buf, size_t len)
{
	uint16_t ext;
	uint32_t code;
	bool ours;
	uint8_t *r = sim->comid_resp;

	if (len < 8 || ((buf[0] << 8) | buf[1]) != comid)
		return -EINVAL;
	ext = (uint16_t)((buf[2] << 8) | buf[3]);
	code = get_be32(buf + 4);
	ours = comid == SEDSIM_BASE_COMID && ext == 0;
	memset(r, 0, sizeof(sim->comid_resp));
	be16(r, comid);
	be16(r + 2, ext);
	be32(r + 4, code);
	switch (code) {
	case COMID_VERIFY_VALID:
		be16(r + 10, 34);
		be32(r + 12, !ours ? COMID_INVALID : sim->sess.open ? COMID_ASSOCIATED :
			     COMID_ISSUED);
		sim->comid_resp_len = 12 + 34;
		break;
	case COMID_STACK_RESET:
		if (ours)
			stack_reset(sim);
		be16(r + 10, 4);
		be32(r + 12, ours ? 0 : 1);
		sim->comid_resp_len = 12 + 4;
		break;
	default:
		return -EINVAL;
	}
	sim->comid_resp_comid = comid;
	return 0;
}

void sim_comid_response(struct sedsim *sim, uint16_t comid, uint8_t *out, size_t len)
{
	size_t n;

	memset(out, 0, len);
	if (!sim->comid_resp_len || sim->comid_resp_comid != comid) {
		/* NO_RESPONSE_AVAILABLE: the ComID, request code 0, no data. */
		if (len >= 2)
			be16(out, comid);
		return;
	}
	n = len < sim->comid_resp_len ? len : sim->comid_resp_len;
	memcpy(out, sim->comid_resp, n);
	sim->comid_resp_len = 0;
}
