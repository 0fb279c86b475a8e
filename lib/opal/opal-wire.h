/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lib/opal's wire layer: method UIDs, table columns, the token encoder and
 * decoder, ComPacket framing, and raw method calls in a session. The device
 * side (sedsim), the tests and the fuzz targets use it; tools use opal.h,
 * whose operations speak for them.
 */
#ifndef FDEKIT_OPAL_WIRE_H
#define FDEKIT_OPAL_WIRE_H

#include "opal.h"

/* Method UIDs. */
extern const opal_uid OPAL_M_PROPERTIES, OPAL_M_STARTSESSION,
	OPAL_M_SYNCSESSION, OPAL_M_CLOSESESSION, OPAL_M_NEXT, OPAL_M_GENKEY, OPAL_M_REVERTSP,
	OPAL_M_GET, OPAL_M_SET, OPAL_M_AUTHENTICATE, OPAL_M_RANDOM,
	OPAL_M_REVERT, OPAL_M_ACTIVATE, OPAL_M_ERASE, OPAL_M_GETACL;

/* Locking table columns (Opal SSC 4.3.5.2). */
enum opal_locking_col {
	OPAL_COL_RANGE_START = 3,
	OPAL_COL_RANGE_LENGTH = 4,
	OPAL_COL_READ_LOCK_ENABLED = 5,
	OPAL_COL_WRITE_LOCK_ENABLED = 6,
	OPAL_COL_READ_LOCKED = 7,
	OPAL_COL_WRITE_LOCKED = 8,
	OPAL_COL_LOCK_ON_RESET = 9,
	OPAL_COL_ACTIVE_KEY = 10,
};

enum opal_cpin_col {
	OPAL_COL_PIN = 3,
	OPAL_COL_TRY_LIMIT = 5,
	OPAL_COL_TRIES = 6,
};

enum opal_mbrctl_col {
	OPAL_COL_MBR_ENABLE = 1,
	OPAL_COL_MBR_DONE = 2,
	OPAL_COL_MBR_DONE_ON_RESET = 3,
};

#define OPAL_COL_AUTHORITY_ENABLED 5
#define OPAL_COL_SP_LIFECYCLE 6
#define OPAL_COL_TABLE_ROWS 7
#define OPAL_COL_TABLE_MANDATORY_WRITE_GRANULARITY 13
#define OPAL_COL_ACE_BOOLEAN_EXPR 3

/* ---------------------------------------------------------------- tokens */

enum opal_control_token {
	OPAL_TOK_STARTLIST = 0xf0,
	OPAL_TOK_ENDLIST = 0xf1,
	OPAL_TOK_STARTNAME = 0xf2,
	OPAL_TOK_ENDNAME = 0xf3,
	OPAL_TOK_CALL = 0xf8,
	OPAL_TOK_ENDOFDATA = 0xf9,
	OPAL_TOK_ENDOFSESSION = 0xfa,
	OPAL_TOK_STARTTRANSACTION = 0xfb,
	OPAL_TOK_ENDTRANSACTION = 0xfc,
	OPAL_TOK_EMPTY = 0xff,
};

/* Encoder: appends to a caller-owned fixed buffer; overflow is sticky. */
struct opal_buf {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool overflow;
};

void opal_buf_init(struct opal_buf *b, void *mem, size_t cap);
void opal_put_control(struct opal_buf *b, uint8_t token);
void opal_put_uint(struct opal_buf *b, uint64_t v);
void opal_put_sint(struct opal_buf *b, int64_t v);
void opal_put_bytes(struct opal_buf *b, const void *p, size_t n);
void opal_put_uid(struct opal_buf *b, const opal_uid *uid);
/* STARTNAME uint(name) uint(value) ENDNAME */
void opal_put_named_uint(struct opal_buf *b, uint64_t name, uint64_t v);
/* STARTNAME bytes(name) uint(value) ENDNAME: one pair of a Properties list */
void opal_put_prop(struct opal_buf *b, const char *name, uint64_t v);
/* A property to encode; the name may be of any length. */
struct opal_prop_out {
	const char *name;
	uint64_t v;
};

/* STARTLIST, a pair per property, ENDLIST */
void opal_put_prop_list(struct opal_buf *b, const struct opal_prop_out *p, size_t n);
/* F8 invoking method F0 ; the caller adds parameters, then opal_put_call_end */
void opal_put_call_begin(struct opal_buf *b, const opal_uid *invoking,
			 const opal_uid *method);
/* F1 F9 F0 status 0 0 F1 */
void opal_put_call_end(struct opal_buf *b, uint8_t status);

enum opal_atom_type {
	OPAL_ATOM_CONTROL,	/* control token: .control */
	OPAL_ATOM_UINT,		/* .uint */
	OPAL_ATOM_SINT,		/* .sint */
	OPAL_ATOM_BYTES,	/* .bytes, .len (points into the parsed buffer) */
};

struct opal_token {
	enum opal_atom_type type;
	uint8_t control;
	uint64_t uint;
	int64_t sint;
	const uint8_t *bytes;
	size_t len;
};

#define OPAL_MAX_TOKENS 4096

struct opal_tokens {
	struct opal_token *tok;
	size_t n;
	size_t cap;
};

/*
 * Decode a token stream. Empty atoms (0xff) are dropped. Rejects reserved
 * token values, truncated atoms, integers wider than 64 bits, continued
 * atoms and unbalanced lists/names. out->tok must point to out->cap slots.
 */
int opal_tokens_parse(const uint8_t *buf, size_t len, struct opal_tokens *out);

static inline bool opal_tok_is(const struct opal_token *t, uint8_t control)
{
	return t->type == OPAL_ATOM_CONTROL && t->control == control;
}

/* Index just past the list/name starting at i, or 0 if malformed. */
size_t opal_tok_skip(const struct opal_tokens *t, size_t i);

/* ------------------------------------------------------------ framing */

#define OPAL_COMPACKET_HDR 20
#define OPAL_PACKET_HDR 24
#define OPAL_SUBPACKET_HDR 12
#define OPAL_FRAME_HDRS (OPAL_COMPACKET_HDR + OPAL_PACKET_HDR + OPAL_SUBPACKET_HDR)
#define OPAL_IO_BUFFER 2048

struct opal_frame {
	uint16_t comid;
	uint16_t comid_ext;
	uint32_t outstanding;
	uint32_t min_transfer;
	uint32_t tsn;
	uint32_t hsn;
	uint32_t seq;
	const uint8_t *payload;	/* data subpacket */
	size_t payload_len;
};

/* Wrap payload into one ComPacket/Packet/SubPacket; returns total bytes or 0. */
size_t opal_frame_build(uint8_t *out, size_t cap, const struct opal_frame *f,
			const uint8_t *payload, size_t len);
/* Parse a ComPacket holding one Packet with one data SubPacket. */
int opal_frame_parse(const uint8_t *buf, size_t len, struct opal_frame *f);

/* Parse the token payload of a Properties reply (also the fuzz target). */
int opal_properties_parse(const uint8_t *buf, size_t len, struct opal_props *out);

struct opal_resp {
	uint8_t raw[OPAL_IO_BUFFER];
	size_t raw_len;
	struct opal_token tok[512];
	struct opal_tokens t;
	size_t results;		/* index of the results list (F0) */
	int status;
	bool call;		/* call form: F8 SMUID method F0 ... (from the session manager) */
	opal_uid method;	/* its method, when call */
};


/* Send the call in b (built with opal_put_call_begin/end), parse the reply. */
int opal_session_call(struct opal_session *s, struct opal_buf *b, struct opal_resp *r);

/* Generic table access. */
int opal_get_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col,
			 uint64_t *v);
int opal_get_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  uint8_t *out, size_t cap, size_t *len);
int opal_set_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col,
			 uint64_t v);
int opal_set_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  const void *p, size_t n);

/*
 * The results list of a parsed reply, typed: result k (0-based) at the
 * list's own level, an atom or a whole list. opal_resp_result gives its
 * token index (0: no such result), opal_resp_count how many there are;
 * the typed getters return OPAL_ERR_PROTOCOL for a missing result or one
 * of another type.
 */
size_t opal_resp_result(const struct opal_resp *r, size_t k);
size_t opal_resp_count(const struct opal_resp *r);
int opal_resp_uint(const struct opal_resp *r, size_t k, uint64_t *v);
int opal_resp_bytes(const struct opal_resp *r, size_t k, const uint8_t **p, size_t *n);

/* In a parsed Get response, find column col (uint). */
int opal_resp_column_uint(const struct opal_resp *r, unsigned col, uint64_t *v);
int opal_resp_column_bytes(const struct opal_resp *r, unsigned col,
			   const uint8_t **p, size_t *n);


/* Encode Set[BooleanExpr] in postfix (a1 a2 OR a3 OR ...). */
void opal_put_ace_set(struct opal_buf *b, const opal_uid *ace, const struct opal_ace *a);
/*
 * Decode a BooleanExpr list at token v. OPAL_ERR_UNSUPPORTED for an AND
 * (not "any of"), OPAL_ERR_PROTOCOL when not a postfix expression.
 */
int opal_ace_parse(const struct opal_tokens *t, size_t v, struct opal_ace *out);

#endif
