// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opal stream layer: token encoding against the byte layouts of the
 * TCG Core Spec (3.2.2.3), decoding and its rejections, ComPacket framing,
 * Level 0 Discovery parsing, response parsing and the sedutil PIN hash.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "opal-wire.h"
#include "opal-internal.h"

static size_t enc_uint(uint64_t v, uint8_t *out)
{
	struct opal_buf b;

	opal_buf_init(&b, out, 16);
	opal_put_uint(&b, v);
	assert_false(b.overflow);
	return b.len;
}

static void test_encode_uint(void **state)
{
	uint8_t o[16];

	(void)state;
	/* Tiny atom: 0b00xxxxxx for 0..63. */
	assert_int_equal(enc_uint(0, o), 1);
	assert_int_equal(o[0], 0x00);
	assert_int_equal(enc_uint(63, o), 1);
	assert_int_equal(o[0], 0x3f);
	/* Short atom: 0b1000llll + big-endian bytes. */
	assert_int_equal(enc_uint(64, o), 2);
	assert_memory_equal(o, ((uint8_t[]){ 0x81, 0x40 }), 2);
	assert_int_equal(enc_uint(0x1000, o), 3);
	assert_memory_equal(o, ((uint8_t[]){ 0x82, 0x10, 0x00 }), 3);
	assert_int_equal(enc_uint(UINT64_MAX, o), 9);
	assert_memory_equal(o, ((uint8_t[]){ 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff }), 9);
}

static void test_encode_sint(void **state)
{
	uint8_t o[16];
	struct opal_buf b;

	(void)state;
	opal_buf_init(&b, o, sizeof(o));
	opal_put_sint(&b, -1);
	assert_int_equal(b.len, 1);
	assert_int_equal(o[0], 0x7f);	/* 0b01 111111 */
	opal_buf_init(&b, o, sizeof(o));
	opal_put_sint(&b, -100);
	assert_int_equal(b.len, 9);
	assert_int_equal(o[0], 0x98);	/* short, signed, 8 bytes */
}

static void test_encode_bytes(void **state)
{
	uint8_t o[5000], in[4000];
	struct opal_buf b;

	(void)state;
	memset(in, 0xa5, sizeof(in));
	opal_buf_init(&b, o, sizeof(o));
	opal_put_bytes(&b, in, 8);	/* short byte atom: 0b1010llll */
	assert_int_equal(o[0], 0xa8);
	assert_int_equal(b.len, 9);
	opal_buf_init(&b, o, sizeof(o));
	opal_put_bytes(&b, in, 16);	/* medium: 0b11010lll llllllll */
	assert_memory_equal(o, ((uint8_t[]){ 0xd0, 0x10 }), 2);
	assert_int_equal(b.len, 18);
	opal_buf_init(&b, o, sizeof(o));
	opal_put_bytes(&b, in, 2047);
	assert_memory_equal(o, ((uint8_t[]){ 0xd7, 0xff }), 2);
	opal_buf_init(&b, o, sizeof(o));
	opal_put_bytes(&b, in, 2048);	/* long: 0b111000 1 0 + 3 length bytes */
	assert_memory_equal(o, ((uint8_t[]){ 0xe2, 0x00, 0x08, 0x00 }), 4);
	assert_int_equal(b.len, 2052);
	/* Overflow is sticky and never writes past the buffer. */
	opal_buf_init(&b, o, 100);
	opal_put_bytes(&b, in, 200);
	assert_true(b.overflow);
	opal_put_uint(&b, 1);
	assert_true(b.overflow);
	assert_true(b.len <= 100);
}

static void test_decode_roundtrip(void **state)
{
	uint8_t mem[4096], blob[3000];
	struct opal_token tok[64];
	struct opal_tokens t = { tok, 0, 64 };
	struct opal_buf b;

	(void)state;
	memset(blob, 0x5a, sizeof(blob));
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_LOCKINGSP, &OPAL_M_GET);
	opal_put_uint(&b, 5);
	opal_put_uint(&b, 1u << 20);
	opal_put_sint(&b, -5);
	opal_put_sint(&b, -1000);
	opal_put_bytes(&b, blob, 20);
	opal_put_bytes(&b, blob, 300);
	opal_put_bytes(&b, blob, 3000);
	opal_put_named_uint(&b, 3, 7);
	opal_put_control(&b, OPAL_TOK_EMPTY);
	opal_put_call_end(&b, 0);
	assert_false(b.overflow);
	assert_int_equal(opal_tokens_parse(b.data, b.len, &t), 0);
	assert_true(opal_tok_is(&tok[0], OPAL_TOK_CALL));
	assert_int_equal(tok[1].type, OPAL_ATOM_BYTES);
	assert_memory_equal(tok[1].bytes, OPAL_UID_LOCKINGSP.b, 8);
	assert_memory_equal(tok[2].bytes, OPAL_M_GET.b, 8);
	assert_true(opal_tok_is(&tok[3], OPAL_TOK_STARTLIST));
	assert_int_equal(tok[4].uint, 5);
	assert_int_equal(tok[5].uint, 1u << 20);
	assert_int_equal(tok[6].type, OPAL_ATOM_SINT);
	assert_int_equal(tok[6].sint, -5);
	assert_int_equal(tok[7].sint, -1000);
	assert_int_equal(tok[8].len, 20);
	assert_int_equal(tok[9].len, 300);
	assert_int_equal(tok[10].len, 3000);
	assert_memory_equal(tok[10].bytes, blob, 3000);
	assert_true(opal_tok_is(&tok[11], OPAL_TOK_STARTNAME));
	assert_int_equal(tok[12].uint, 3);
	assert_int_equal(tok[13].uint, 7);
	assert_true(opal_tok_is(&tok[14], OPAL_TOK_ENDNAME));
	/* The empty atom is dropped: next is ENDLIST. */
	assert_true(opal_tok_is(&tok[15], OPAL_TOK_ENDLIST));
	assert_true(opal_tok_is(&tok[16], OPAL_TOK_ENDOFDATA));
	assert_int_equal(t.n, 22);
	assert_int_equal(opal_tok_skip(&t, 3), 16);
	assert_int_equal(opal_tok_skip(&t, 11), 15);
}

static void test_decode_rejects(void **state)
{
	struct opal_token tok[8];
	struct opal_tokens t = { tok, 0, 8 };
	static const struct {
		uint8_t b[8];
		size_t n;
	} bad[] = {
		{ { 0x82, 0x01 }, 2 },			/* short atom truncated */
		{ { 0xd0 }, 1 },			/* medium header truncated */
		{ { 0xd0, 0x05, 1, 2 }, 4 },		/* medium data truncated */
		{ { 0xe2, 0x00, 0x01 }, 3 },		/* long header truncated */
		{ { 0xe2, 0xff, 0xff, 0xff, 0 }, 5 },	/* long length beyond buffer */
		{ { 0x89, 1, 2, 3, 4, 5, 6, 7 }, 8 },	/* 9-byte integer (and truncated) */
		{ { 0xb1, 0x00 }, 2 },			/* continued byte atom */
		{ { 0xe4 }, 1 },			/* reserved */
		{ { 0xf4 }, 1 },			/* reserved */
		{ { 0xfd }, 1 },			/* reserved */
		{ { 0xf0 }, 1 },			/* unclosed list */
		{ { 0xf1 }, 1 },			/* unopened list */
		{ { 0xf0, 0xf3 }, 2 },			/* mismatched close */
		{ { 0xf2, 0xf8, 0xf3 }, 3 },		/* call inside a name */
		{ { 0x80 }, 1 },			/* zero-length integer */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(opal_tokens_parse(bad[i].b, bad[i].n, &t), OPAL_ERR_PROTOCOL);
	/* Too many tokens for the caller's array. */
	{
		uint8_t many[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

		assert_int_equal(opal_tokens_parse(many, sizeof(many), &t), OPAL_ERR_PROTOCOL);
	}
}

static void test_frame(void **state)
{
	uint8_t out[256], payload[5] = { 1, 2, 3, 4, 5 };
	struct opal_frame f = { .comid = 0x1000, .tsn = 7, .hsn = 9 }, g;
	size_t n;

	(void)state;
	n = opal_frame_build(out, sizeof(out), &f, payload, sizeof(payload));
	assert_int_equal(n, OPAL_FRAME_HDRS + 8);	/* padded to 4 */
	assert_memory_equal(out + 4, ((uint8_t[]){ 0x10, 0x00 }), 2);
	assert_memory_equal(out + 16, ((uint8_t[]){ 0, 0, 0, 44 }), 4);	/* ComPacket length */
	assert_memory_equal(out + 20, ((uint8_t[]){ 0, 0, 0, 7, 0, 0, 0, 9 }), 8);
	assert_memory_equal(out + 20 + 20, ((uint8_t[]){ 0, 0, 0, 20 }), 4);	/* Packet length */
	assert_memory_equal(out + 44 + 8, ((uint8_t[]){ 0, 0, 0, 5 }), 4);	/* SubPacket length */
	assert_int_equal(opal_frame_parse(out, n, &g), 0);
	assert_int_equal(g.comid, 0x1000);
	assert_int_equal(g.tsn, 7);
	assert_int_equal(g.hsn, 9);
	assert_int_equal(g.payload_len, 5);
	assert_memory_equal(g.payload, payload, 5);
	/* Too small a buffer to build into. */
	assert_int_equal(opal_frame_build(out, 50, &f, payload, 5), 0);
	/* Truncations and inconsistent lengths. */
	assert_int_equal(opal_frame_parse(out, 10, &g), OPAL_ERR_PROTOCOL);
	assert_int_equal(opal_frame_parse(out, n - 1, &g), OPAL_ERR_PROTOCOL);
	out[44 + 11] = 0x40;	/* SubPacket longer than the Packet */
	assert_int_equal(opal_frame_parse(out, n, &g), OPAL_ERR_PROTOCOL);
	out[44 + 11] = 5;
	out[44 + 7] = 0x80;	/* credit-control SubPacket */
	assert_int_equal(opal_frame_parse(out, n, &g), OPAL_ERR_PROTOCOL);
	/* An empty ComPacket says "nothing yet". */
	memset(out, 0, sizeof(out));
	out[11] = 1;
	assert_int_equal(opal_frame_parse(out, 20, &g), 0);
	assert_int_equal(g.payload_len, 0);
	assert_int_equal(g.outstanding, 1);
}

/* A Level 0 response laid out by hand from the Opal SSC tables. */
static size_t l0_sample(uint8_t *b)
{
	size_t n = 48;

	memset(b, 0, 512);
	b[7] = 1;
	/* TPer */
	memcpy(b + n, ((uint8_t[]){ 0x00, 0x01, 0x10, 0x0c, 0x11 }), 5);
	n += 16;
	/* Locking: supported, enabled, locked, media encryption */
	memcpy(b + n, ((uint8_t[]){ 0x00, 0x02, 0x10, 0x0c, 0x0f }), 5);
	n += 16;
	/* Geometry: align, LBS 4096, granularity 8, lowest 0 */
	memcpy(b + n, ((uint8_t[]){ 0x00, 0x03, 0x10, 0x1c, 0x01 }), 5);
	b[n + 14] = 0x10;
	b[n + 23] = 8;
	n += 32;
	/* An unknown feature with a body: skipped by its length. */
	memcpy(b + n, ((uint8_t[]){ 0xc0, 0x01, 0x10, 0x04, 0xde, 0xad, 0xbe, 0xef }), 8);
	n += 8;
	/* Opal 2: base ComID 0x07fe, 1 ComID, 4 admins, 8 users */
	memcpy(b + n, ((uint8_t[]){ 0x02, 0x03, 0x20, 0x10, 0x07, 0xfe, 0x00, 0x01, 0x00,
				    0x00, 0x04, 0x00, 0x08, 0x00, 0x00 }), 15);
	n += 20;
	/* Block SID: SID Value State (owned), not blocked, Hardware Reset. */
	memcpy(b + n, ((uint8_t[]){ 0x04, 0x02, 0x10, 0x0c, 0x01, 0x01 }), 6);
	n += 16;
	b[0] = (uint8_t)((n - 4) >> 24);
	b[1] = (uint8_t)((n - 4) >> 16);
	b[2] = (uint8_t)((n - 4) >> 8);
	b[3] = (uint8_t)(n - 4);
	return n;
}

static void test_discovery(void **state)
{
	uint8_t b[512];
	struct opal_discovery d;
	size_t n = l0_sample(b);

	(void)state;
	assert_int_equal(opal_discovery_parse(b, n, &d), 0);
	assert_true(d.tper && d.locking && d.geometry && d.opal2);
	assert_false(d.opal1 || d.pyrite1 || d.datastore);
	assert_int_equal(d.locking_flags, 0x0f);
	assert_int_equal(d.logical_block_size, 4096);
	assert_int_equal(d.alignment_granularity, 8);
	assert_int_equal(d.base_comid, 0x07fe);
	assert_int_equal(d.num_comids, 1);
	assert_int_equal(d.admin_auths, 4);
	assert_int_equal(d.user_auths, 8);
	assert_string_equal(opal_discovery_ssc(&d), "Opal 2");
	assert_true(d.block_sid && d.sid_value_state && d.sid_block_hw_reset);
	assert_false(d.sid_blocked);
	/* Truncated: header only, or header claiming more than given. */
	assert_int_equal(opal_discovery_parse(b, 40, &d), OPAL_ERR_PROTOCOL);
	assert_int_equal(opal_discovery_parse(b, n - 1, &d), OPAL_ERR_PROTOCOL);
	/* A feature whose length runs past the end. */
	b[48 + 3] = 0xf0;
	assert_int_equal(opal_discovery_parse(b, n, &d), OPAL_ERR_PROTOCOL);
	/* A short Geometry descriptor is malformed. */
	n = l0_sample(b);
	b[48 + 32 + 3] = 4;
	assert_int_equal(opal_discovery_parse(b, n, &d), OPAL_ERR_PROTOCOL);
}

/* Results read as typed values at the results list's own level. */
static void test_resp_results(void **state)
{
	struct opal_resp *r = test_calloc(1, sizeof(*r));
	struct opal_buf b;
	const uint8_t *p;
	size_t n;
	uint64_t v;

	(void)state;
	/* [ 7 "ab" [ 1 2 ] {1: 9} ] EOD [ 0 0 0 ] */
	opal_buf_init(&b, r->raw, sizeof(r->raw));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_uint(&b, 7);
	opal_put_bytes(&b, "ab", 2);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_uint(&b, 1);
	opal_put_uint(&b, 2);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_named_uint(&b, 1, 9);
	opal_put_call_end(&b, 0);
	r->raw_len = b.len;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(opal_resp_count(r), 4);
	assert_int_equal(opal_resp_uint(r, 0, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(opal_resp_bytes(r, 1, &p, &n), 0);
	assert_int_equal(n, 2);
	assert_memory_equal(p, "ab", 2);
	/* A list is one result, of no atom type; nothing inside it is result 3. */
	assert_int_equal(opal_resp_uint(r, 2, &v), OPAL_ERR_PROTOCOL);
	assert_true(opal_tok_is(&r->t.tok[opal_resp_result(r, 2)], OPAL_TOK_STARTLIST));
	assert_true(opal_tok_is(&r->t.tok[opal_resp_result(r, 3)], OPAL_TOK_STARTNAME));
	assert_int_equal(opal_resp_uint(r, 0 + 1, &v), OPAL_ERR_PROTOCOL);	/* bytes, not uint */
	assert_int_equal(opal_resp_result(r, 4), 0);
	assert_int_equal(opal_resp_uint(r, 4, &v), OPAL_ERR_PROTOCOL);
	/* An empty results list has no results. */
	opal_buf_init(&b, r->raw, sizeof(r->raw));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_call_end(&b, 0);
	r->raw_len = b.len;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(opal_resp_count(r), 0);
	assert_int_equal(opal_resp_bytes(r, 0, &p, &n), OPAL_ERR_PROTOCOL);
	test_free(r);
}

static void test_resp_parse(void **state)
{
	struct opal_resp *r = test_calloc(1, sizeof(*r));
	struct opal_buf b;
	uint64_t v;

	(void)state;
	/* [ [ {3: 42} ] ] EOD [ 0 0 0 ] */
	opal_buf_init(&b, r->raw, sizeof(r->raw));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_named_uint(&b, 3, 42);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_call_end(&b, 0);
	r->raw_len = b.len;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(r->status, 0);
	assert_int_equal(opal_resp_column_uint(r, 3, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(opal_resp_column_uint(r, 4, &v), OPAL_ERR_PROTOCOL);
	/* Status list carries NOT_AUTHORIZED. */
	r->raw[b.len - 4] = OPAL_ST_NOT_AUTHORIZED;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(r->status, OPAL_ST_NOT_AUTHORIZED);
	/* Missing status list. */
	r->raw_len = b.len - 5;
	assert_int_equal(opal_resp_parse(r), OPAL_ERR_PROTOCOL);
	/* A column is found only at the row's own level, never inside a value. */
	opal_buf_init(&b, r->raw, sizeof(r->raw));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 9);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_named_uint(&b, 5, 77);		/* nested: not column 5 */
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_named_uint(&b, 6, 1);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_call_end(&b, 0);
	r->raw_len = b.len;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(opal_resp_column_uint(r, 5, &v), OPAL_ERR_PROTOCOL);
	assert_int_equal(opal_resp_column_uint(r, 6, &v), 0);
	assert_int_equal(v, 1);
	/* A row that is not a list of names has no columns. */
	opal_buf_init(&b, r->raw, sizeof(r->raw));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_uint(&b, 3);
	opal_put_named_uint(&b, 3, 42);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_call_end(&b, 0);
	r->raw_len = b.len;
	assert_int_equal(opal_resp_parse(r), 0);
	assert_int_equal(opal_resp_column_uint(r, 3, &v), OPAL_ERR_PROTOCOL);
	/* End of session instead of a reply. */
	r->raw[0] = OPAL_TOK_ENDOFSESSION;
	r->raw_len = 1;
	assert_int_equal(opal_resp_parse(r), OPAL_ERR_PROTOCOL);
	test_free(r);
}

/* ------------------------------------------------- Properties replies */

static const struct opal_prop_out TPER_PROPS[] = {
	{ "MaxComPacketSize", 65536 }, { "MaxResponseComPacketSize", 16384 },
	{ "MaxPacketSize", 65516 }, { "MaxIndTokenSize", 65480 }, { "MaxPackets", 1 },
	{ "MaxSubpackets", 1 }, { "MaxMethods", 1 }, { "MaxSessions", 4 },
	{ "MaxReadSessions", 2 }, { "MaxAuthentications", 8 }, { "MaxTransactionLimit", 1 },
	{ "DefSessionTimeout", 0 }, { "MaxSessionTimeout", 3600000 },
	{ "MinSessionTimeout", 1000 }, { "VendorQuirk", 7 },
};

/* F8 SMUID Properties F0 [tper] (host_name [host])? F1 EOD [status] */
static size_t props_reply(uint8_t *mem, size_t cap, const struct opal_prop_out *t, size_t nt,
			  const char *host_name, const struct opal_prop_out *h, size_t nh)
{
	struct opal_buf b;

	opal_buf_init(&b, mem, cap);
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_prop_list(&b, t, nt);
	if (h) {
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		if (host_name)
			opal_put_bytes(&b, host_name, strlen(host_name));
		else
			opal_put_uint(&b, 0);
		opal_put_prop_list(&b, h, nh);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_call_end(&b, 0);
	assert_false(b.overflow);
	return b.len;
}

static void test_properties_parse(void **state)
{
	static const struct opal_prop_out host[] = { { "MaxComPacketSize", 2048 }, { "MaxPackets", 1 } };
	const size_t nt = sizeof(TPER_PROPS) / sizeof(TPER_PROPS[0]);
	struct opal_props *p = test_calloc(1, sizeof(*p));
	uint8_t mem[2048];
	uint64_t v;
	size_t n;

	(void)state;
	assert_string_equal(opal_prop_name(OPAL_PROP_MAX_IND_TOKEN_SIZE), "MaxIndTokenSize");
	assert_null(opal_prop_name(OPAL_PROP_KNOWN));
	/* TPer list and the HostProperties echo (Core encoding: name 0). */
	n = props_reply(mem, sizeof(mem), TPER_PROPS, nt, NULL, host, 2);
	assert_int_equal(opal_properties_parse(mem, n, p), 0);
	assert_int_equal(p->tper.n, nt);
	assert_true(opal_prop_get(&p->tper, OPAL_PROP_MAX_COMPACKET_SIZE, &v));
	assert_int_equal(v, 65536);
	assert_true(opal_prop_get(&p->tper, OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE, &v));
	assert_int_equal(v, 16384);
	assert_true(opal_prop_get(&p->tper, OPAL_PROP_MAX_SESSION_TIMEOUT, &v));
	assert_int_equal(v, 3600000);
	assert_true(opal_prop_get(&p->tper, OPAL_PROP_DEF_SESSION_TIMEOUT, &v));
	assert_int_equal(v, 0);
	assert_false(opal_prop_get(&p->tper, OPAL_PROP_MAX_COMID_TIME, &v));
	/* An unknown name is kept as a pair, in order, and is no error. */
	assert_string_equal(p->tper.pair[nt - 1].name, "VendorQuirk");
	assert_int_equal(p->tper.pair[nt - 1].value, 7);
	assert_true(p->have_host);
	assert_int_equal(p->host.n, 2);
	assert_true(opal_prop_get(&p->host, OPAL_PROP_MAX_COMPACKET_SIZE, &v));
	assert_int_equal(v, 2048);
	assert_false(opal_prop_get(&p->host, OPAL_PROP_MAX_METHODS, &v));
	/* The string name older TPers use for the optional parameter. */
	n = props_reply(mem, sizeof(mem), TPER_PROPS, nt, "HostProperties", host, 2);
	assert_int_equal(opal_properties_parse(mem, n, p), 0);
	assert_true(p->have_host);
	/* No HostProperties at all. */
	n = props_reply(mem, sizeof(mem), TPER_PROPS, nt, NULL, NULL, 0);
	assert_int_equal(opal_properties_parse(mem, n, p), 0);
	assert_false(p->have_host);
	assert_int_equal(p->host.n, 0);
	assert_int_equal(p->tper.n, nt);
	/* A refusal comes back as the method status. */
	{
		struct opal_buf b;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_control(&b, OPAL_TOK_STARTLIST);	/* [ ] EOD [ 0x0c 0 0 ] */
		opal_put_call_end(&b, OPAL_ST_INVALID_PARAMETER);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ST_INVALID_PARAMETER);
	}
	test_free(p);
}

static void test_properties_malformed(void **state)
{
	const size_t nt = sizeof(TPER_PROPS) / sizeof(TPER_PROPS[0]);
	static const struct opal_prop_out host[] = { { "MaxComPacketSize", 2048 } };
	struct opal_props *p = test_calloc(1, sizeof(*p));
	struct opal_prop_out many[OPAL_PROPS_MAX + 1];
	char names[OPAL_PROPS_MAX + 1][8];
	uint8_t mem[2048];
	size_t n, i;

	(void)state;
	n = props_reply(mem, sizeof(mem), TPER_PROPS, nt, NULL, host, 1);
	assert_int_equal(opal_properties_parse(mem, n, p), 0);
	/* Truncated anywhere: malformed, and nothing is left half-filled. */
	for (i = 0; i < n; i++) {
		assert_int_equal(opal_properties_parse(mem, i, p), OPAL_ERR_PROTOCOL);
		assert_int_equal(p->tper.n, 0);
	}
	/* A value that is not an unsigned integer (bytes "2048"). */
	{
		struct opal_buf b;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_bytes(&b, "MaxComPacketSize", 16);
		opal_put_bytes(&b, "2048", 4);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
		/* A name that is an integer instead of a string. */
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		opal_put_named_uint(&b, 1, 2048);
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
		/* A bare value in the list, not a name/value pair. */
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		opal_put_uint(&b, 2048);
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
		/* The reply of another method. */
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_SYNCSESSION);
		opal_put_prop_list(&b, TPER_PROPS, nt);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
		/* No TPer list, and a results list without the call header. */
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		opal_put_prop_list(&b, TPER_PROPS, nt);
		opal_put_call_end(&b, 0);
		assert_int_equal(opal_properties_parse(mem, b.len, p), OPAL_ERR_PROTOCOL);
	}
	/* HostProperties under another name, and a trailing extra parameter. */
	n = props_reply(mem, sizeof(mem), TPER_PROPS, nt, "Hostproperties", host, 1);
	assert_int_equal(opal_properties_parse(mem, n, p), OPAL_ERR_PROTOCOL);
	n = props_reply(mem, sizeof(mem), TPER_PROPS, 2, NULL, host, 1);
	memmove(mem + n - 6, mem + n - 7, 7);	/* a 0 before the results' ENDLIST */
	mem[n - 7] = 0;
	assert_int_equal(opal_properties_parse(mem, n + 1, p), OPAL_ERR_PROTOCOL);
	/* Oversized: a name longer than OPAL_PROP_NAME_MAX, one that is empty
	 * or unprintable, more pairs than OPAL_PROPS_MAX, more than a ComPacket. */
	{
		char longname[OPAL_PROP_NAME_MAX + 2];
		struct opal_prop_out bad[1] = { { longname, 1 } };

		memset(longname, 'N', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = 0;
		n = props_reply(mem, sizeof(mem), bad, 1, NULL, NULL, 0);
		assert_int_equal(opal_properties_parse(mem, n, p), OPAL_ERR_PROTOCOL);
		longname[OPAL_PROP_NAME_MAX] = 0;	/* exactly the limit: fine */
		n = props_reply(mem, sizeof(mem), bad, 1, NULL, NULL, 0);
		assert_int_equal(opal_properties_parse(mem, n, p), 0);
		assert_int_equal(strlen(p->tper.pair[0].name), OPAL_PROP_NAME_MAX);
		bad[0].name = "";
		n = props_reply(mem, sizeof(mem), bad, 1, NULL, NULL, 0);
		assert_int_equal(opal_properties_parse(mem, n, p), OPAL_ERR_PROTOCOL);
		bad[0].name = "Max\nPackets";
		n = props_reply(mem, sizeof(mem), bad, 1, NULL, NULL, 0);
		assert_int_equal(opal_properties_parse(mem, n, p), OPAL_ERR_PROTOCOL);
	}
	for (i = 0; i <= OPAL_PROPS_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "P%zu", i);
		many[i].name = names[i];
		many[i].v = i;
	}
	n = props_reply(mem, sizeof(mem), many, OPAL_PROPS_MAX, NULL, NULL, 0);
	assert_int_equal(opal_properties_parse(mem, n, p), 0);
	assert_int_equal(p->tper.n, OPAL_PROPS_MAX);
	n = props_reply(mem, sizeof(mem), many, OPAL_PROPS_MAX + 1, NULL, NULL, 0);
	assert_int_equal(opal_properties_parse(mem, n, p), OPAL_ERR_PROTOCOL);
	assert_int_equal(opal_properties_parse(mem, OPAL_IO_BUFFER + 1, p), OPAL_ERR_PROTOCOL);
	test_free(p);
}

static void test_sedutil_hash(void **state)
{
	/* References computed with Python's hashlib.pbkdf2_hmac('sha1', ...). */
	static const uint8_t want1[32] = {
		0xd3, 0xe2, 0x6c, 0xc2, 0x46, 0xdf, 0xb9, 0x6f, 0xe5, 0x36, 0xa9, 0x64, 0x03, 0x8a, 0x71, 0xa5,
		0xbc, 0x87, 0x17, 0x91, 0xc6, 0x32, 0x84, 0xdb, 0x23, 0xec, 0x63, 0x29, 0x8a, 0x58, 0x92, 0x8e,
	};
	static const uint8_t want2[32] = {
		0x7d, 0x72, 0x23, 0xd9, 0x91, 0xcf, 0x32, 0x9a, 0xb0, 0x7a, 0x4c, 0xfa, 0x47, 0xa9, 0x84, 0x27,
		0x11, 0xc1, 0x1b, 0x77, 0x86, 0x46, 0x87, 0x67, 0x60, 0xd6, 0xa3, 0xa9, 0xa8, 0x8f, 0xd7, 0x03,
	};
	uint8_t out[32];

	(void)state;
	assert_int_equal(opal_hash_sedutil((const uint8_t *)"correct horse", 13,
					   "SEDSIM0001          ", out), 0);
	assert_memory_equal(out, want1, 32);
	assert_int_equal(opal_hash_sedutil((const uint8_t *)"", 0, "S3R1AL-NVME-0000001 ", out), 0);
	assert_memory_equal(out, want2, 32);
	/* hashlib.pbkdf2_hmac('sha512', b'correct horse', b'SEDSIM0001' padded, 500000, 32) */
	{
		static const uint8_t want512[32] = {
			0xc2, 0x8a, 0x1a, 0xf5, 0x27, 0x43, 0x0d, 0x85, 0xbd, 0xe0, 0xd8, 0x42, 0x4f, 0xd7,
			0x9b, 0x9b, 0x9c, 0xec, 0x66, 0xd0, 0xbe, 0xaf, 0xd0, 0x21, 0x1c, 0x68, 0x66, 0x51,
			0xee, 0xea, 0x38, 0x59,
		};

		assert_int_equal(opal_hash_sedutil512((const uint8_t *)"correct horse", 13,
						      "SEDSIM0001          ", out), 0);
		assert_memory_equal(out, want512, 32);
	}
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(opal_strerror(OPAL_ERR_AUTH), "authentication failed");
	assert_non_null(strstr(opal_strerror(OPAL_ST_AUTHORITY_LOCKED_OUT), "locked out"));
	assert_string_equal(opal_strerror(0x3e), "unknown status");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_uint),
		cmocka_unit_test(test_encode_sint),
		cmocka_unit_test(test_encode_bytes),
		cmocka_unit_test(test_decode_roundtrip),
		cmocka_unit_test(test_decode_rejects),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_discovery),
		cmocka_unit_test(test_resp_parse),
		cmocka_unit_test(test_resp_results),
		cmocka_unit_test(test_properties_parse),
		cmocka_unit_test(test_properties_malformed),
		cmocka_unit_test(test_sedutil_hash),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
