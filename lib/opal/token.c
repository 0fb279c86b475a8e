// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TCG token stream (Core Spec 3.2.2): tiny, short, medium and long
 * atoms, and control tokens. Shared by host and device side.
 */
#include <string.h>

#include "opal-wire.h"

void opal_buf_init(struct opal_buf *b, void *mem, size_t cap)
{
	b->data = mem;
	b->len = 0;
	b->cap = cap;
	b->overflow = false;
}

static void put_raw(struct opal_buf *b, const void *p, size_t n)
{
	if (b->overflow || n > b->cap - b->len) {
		b->overflow = true;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void put_byte(struct opal_buf *b, uint8_t v)
{
	put_raw(b, &v, 1);
}

void opal_put_control(struct opal_buf *b, uint8_t token)
{
	put_byte(b, token);
}

/* Short/medium/long atom header for n bytes; is_bytes sets the B bit. */
static void put_atom_header(struct opal_buf *b, size_t n, bool is_bytes, bool sign)
{
	uint8_t hdr[4];

	if (n < 16) {
		put_byte(b, (uint8_t)(0x80 | (is_bytes ? 0x20 : 0) | (sign ? 0x10 : 0) | n));
	} else if (n < 2048) {
		hdr[0] = (uint8_t)(0xc0 | (is_bytes ? 0x10 : 0) | (sign ? 0x08 : 0) | (n >> 8));
		hdr[1] = (uint8_t)n;
		put_raw(b, hdr, 2);
	} else if (n < (1u << 24)) {
		hdr[0] = (uint8_t)(0xe0 | (is_bytes ? 0x02 : 0) | (sign ? 0x01 : 0));
		hdr[1] = (uint8_t)(n >> 16);
		hdr[2] = (uint8_t)(n >> 8);
		hdr[3] = (uint8_t)n;
		put_raw(b, hdr, 4);
	} else {
		b->overflow = true;
	}
}

void opal_put_uint(struct opal_buf *b, uint64_t v)
{
	uint8_t be[8];
	size_t n = 0;

	if (v < 64) {
		put_byte(b, (uint8_t)v);
		return;
	}
	for (uint64_t t = v; t; t >>= 8)
		n++;
	for (size_t i = 0; i < n; i++)
		be[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	put_atom_header(b, n, false, false);
	put_raw(b, be, n);
}

void opal_put_sint(struct opal_buf *b, int64_t v)
{
	uint8_t be[8];

	if (v >= -32 && v < 32) {
		put_byte(b, (uint8_t)(0x40 | ((uint8_t)v & 0x3f)));
		return;
	}
	for (size_t i = 0; i < 8; i++)
		be[i] = (uint8_t)((uint64_t)v >> (8 * (7 - i)));
	put_atom_header(b, 8, false, true);
	put_raw(b, be, 8);
}

void opal_put_bytes(struct opal_buf *b, const void *p, size_t n)
{
	put_atom_header(b, n, true, false);
	put_raw(b, p, n);
}

void opal_put_uid(struct opal_buf *b, const opal_uid *uid)
{
	opal_put_bytes(b, uid->b, sizeof(uid->b));
}

void opal_put_named_uint(struct opal_buf *b, uint64_t name, uint64_t v)
{
	put_byte(b, OPAL_TOK_STARTNAME);
	opal_put_uint(b, name);
	opal_put_uint(b, v);
	put_byte(b, OPAL_TOK_ENDNAME);
}

void opal_put_prop(struct opal_buf *b, const char *name, uint64_t v)
{
	put_byte(b, OPAL_TOK_STARTNAME);
	opal_put_bytes(b, name, strlen(name));
	opal_put_uint(b, v);
	put_byte(b, OPAL_TOK_ENDNAME);
}

void opal_put_prop_list(struct opal_buf *b, const struct opal_prop_out *p, size_t n)
{
	put_byte(b, OPAL_TOK_STARTLIST);
	for (size_t i = 0; i < n; i++)
		opal_put_prop(b, p[i].name, p[i].v);
	put_byte(b, OPAL_TOK_ENDLIST);
}

void opal_put_call_begin(struct opal_buf *b, const opal_uid *invoking, const opal_uid *method)
{
	put_byte(b, OPAL_TOK_CALL);
	opal_put_uid(b, invoking);
	opal_put_uid(b, method);
	put_byte(b, OPAL_TOK_STARTLIST);
}

void opal_put_call_end(struct opal_buf *b, uint8_t status)
{
	put_byte(b, OPAL_TOK_ENDLIST);
	put_byte(b, OPAL_TOK_ENDOFDATA);
	put_byte(b, OPAL_TOK_STARTLIST);
	opal_put_uint(b, status);
	opal_put_uint(b, 0);
	opal_put_uint(b, 0);
	put_byte(b, OPAL_TOK_ENDLIST);
}

/* ------------------------------------------------------------ decoding */

static int push(struct opal_tokens *out, const struct opal_token *t)
{
	if (out->n >= out->cap)
		return OPAL_ERR_PROTOCOL;
	out->tok[out->n++] = *t;
	return 0;
}

static int decode_int(struct opal_token *t, const uint8_t *p, size_t n, bool sign)
{
	uint64_t v = 0;

	if (n == 0 || n > 8)
		return OPAL_ERR_PROTOCOL;
	for (size_t i = 0; i < n; i++)
		v = (v << 8) | p[i];
	if (sign) {
		t->type = OPAL_ATOM_SINT;
		if (n < 8 && (p[0] & 0x80))
			v |= ~(uint64_t)0 << (8 * n);
		t->sint = (int64_t)v;
	} else {
		t->type = OPAL_ATOM_UINT;
		t->uint = v;
	}
	return 0;
}

int opal_tokens_parse(const uint8_t *buf, size_t len, struct opal_tokens *out)
{
	/* Nesting of lists and names, to reject unbalanced streams. */
	uint8_t stack[64];
	size_t depth = 0;
	size_t i = 0;
	int rc;

	out->n = 0;
	while (i < len) {
		struct opal_token t = { 0 };
		uint8_t h = buf[i];
		size_t hdr, n;
		bool is_bytes, sign;

		if (h < 0x80) {
			/* Tiny atom: 0 s dddddd. */
			if (h & 0x40) {
				t.type = OPAL_ATOM_SINT;
				t.sint = (int64_t)(h & 0x3f) - ((h & 0x20) ? 64 : 0);
			} else {
				t.type = OPAL_ATOM_UINT;
				t.uint = h;
			}
			i++;
			rc = push(out, &t);
			if (rc)
				return rc;
			continue;
		}
		if (h < 0xc0) {
			is_bytes = h & 0x20;
			sign = h & 0x10;
			n = h & 0x0f;
			hdr = 1;
		} else if (h < 0xe0) {
			if (len - i < 2)
				return OPAL_ERR_PROTOCOL;
			is_bytes = h & 0x10;
			sign = h & 0x08;
			n = ((size_t)(h & 0x07) << 8) | buf[i + 1];
			hdr = 2;
		} else if (h < 0xe4) {
			if (len - i < 4)
				return OPAL_ERR_PROTOCOL;
			is_bytes = h & 0x02;
			sign = h & 0x01;
			n = ((size_t)buf[i + 1] << 16) | ((size_t)buf[i + 2] << 8) | buf[i + 3];
			hdr = 4;
		} else {
			switch (h) {
			case OPAL_TOK_STARTLIST:
			case OPAL_TOK_STARTNAME:
				if (depth >= sizeof(stack))
					return OPAL_ERR_PROTOCOL;
				stack[depth++] = h;
				break;
			case OPAL_TOK_ENDLIST:
			case OPAL_TOK_ENDNAME:
				if (depth == 0 || stack[depth - 1] != h - 1)
					return OPAL_ERR_PROTOCOL;
				depth--;
				break;
			case OPAL_TOK_CALL:
			case OPAL_TOK_ENDOFDATA:
			case OPAL_TOK_ENDOFSESSION:
			case OPAL_TOK_STARTTRANSACTION:
			case OPAL_TOK_ENDTRANSACTION:
				if (depth)
					return OPAL_ERR_PROTOCOL;
				break;
			case OPAL_TOK_EMPTY:
				i++;
				continue;
			default:
				return OPAL_ERR_PROTOCOL;
			}
			t.type = OPAL_ATOM_CONTROL;
			t.control = h;
			i++;
			rc = push(out, &t);
			if (rc)
				return rc;
			continue;
		}
		/* A byte atom with the S bit set is "continued": not used by Opal. */
		if (is_bytes && sign)
			return OPAL_ERR_PROTOCOL;
		if (len - i - hdr < n)
			return OPAL_ERR_PROTOCOL;
		if (is_bytes) {
			t.type = OPAL_ATOM_BYTES;
			t.bytes = buf + i + hdr;
			t.len = n;
		} else {
			rc = decode_int(&t, buf + i + hdr, n, sign);
			if (rc)
				return rc;
		}
		i += hdr + n;
		rc = push(out, &t);
		if (rc)
			return rc;
	}
	return depth ? OPAL_ERR_PROTOCOL : 0;
}

size_t opal_tok_skip(const struct opal_tokens *t, size_t i)
{
	size_t depth = 0;

	if (i >= t->n)
		return 0;
	if (t->tok[i].type != OPAL_ATOM_CONTROL)
		return i + 1;
	if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTLIST) &&
	    !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME))
		return i + 1;
	for (; i < t->n; i++) {
		const struct opal_token *k = &t->tok[i];

		if (opal_tok_is(k, OPAL_TOK_STARTLIST) || opal_tok_is(k, OPAL_TOK_STARTNAME))
			depth++;
		else if (opal_tok_is(k, OPAL_TOK_ENDLIST) || opal_tok_is(k, OPAL_TOK_ENDNAME))
			if (--depth == 0)
				return i + 1;
	}
	return 0;
}
