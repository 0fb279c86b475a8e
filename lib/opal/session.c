// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host side of the session layer: device handle, IF-SEND/IF-RECV exchange
 * with timeout, Level 0 Discovery, StartSession/SyncSession, method calls,
 * end of session.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal.h"
#include "opal-internal.h"

#define TCG_PROTOCOL_1 0x01
/* ComID management (Core Spec 3.3.4.7): Verify ComID Valid, Stack Reset. */
#define TCG_PROTOCOL_2 0x02
#define COMID_REQ_STACK_RESET 2
/* IF-RECV length for a ComID management response: the header and a 4-byte status, padded. */
#define COMID_RESP_LEN 512
#define L0_COMID 0x0001
#define DEFAULT_TIMEOUT_MS 10000
#define FIRST_HSN 0x66647301u	/* any nonzero value: ours, echoed back */

struct opal_session {
	struct opal_dev *dev;
	uint32_t hsn;
	uint32_t tsn;
	bool closed;		/* the TPer ended it: nothing more to send */
};

struct opal_dev *opal_dev_new(const struct opal_transport_ops *ops, void *ctx)
{
	struct opal_dev *dev = calloc(1, sizeof(*dev));

	if (!dev) {
		if (ops->close)
			ops->close(ctx);
		return NULL;
	}
	dev->ops = ops;
	dev->ctx = ctx;
	dev->timeout_ms = DEFAULT_TIMEOUT_MS;
	dev->next_hsn = FIRST_HSN;
	dev->send_max = OPAL_MIN_COMPACKET;
	dev->reply_max = OPAL_MIN_COMPACKET;
	dev->token_max = OPAL_MIN_IND_TOKEN;
	return dev;
}

void opal_dev_free(struct opal_dev *dev)
{
	if (!dev)
		return;
	if (dev->ops->close)
		dev->ops->close(dev->ctx);
	explicit_bzero(dev, sizeof(*dev));
	free(dev);
}

int opal_dev_errno(const struct opal_dev *dev)
{
	return dev->err_no;
}

void opal_dev_set_timeout(struct opal_dev *dev, unsigned int ms)
{
	dev->timeout_ms = ms;
}

const char *opal_dev_transport(const struct opal_dev *dev)
{
	return dev->ops->name;
}

int opal_dev_serial(struct opal_dev *dev, char serial[OPAL_SERIAL_MAX])
{
	int rc;

	if (!dev->ops->serial)
		return OPAL_ERR_UNSUPPORTED;
	rc = dev->ops->serial(dev->ctx, serial);
	if (rc) {
		dev->err_no = rc < 0 ? -rc : rc;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

static int tp_send(struct opal_dev *dev, uint8_t proto, uint16_t comid, const void *buf,
		   size_t len)
{
	int rc = dev->ops->if_send(dev->ctx, proto, comid, buf, len);

	if (rc) {
		dev->err_no = rc < 0 ? -rc : EIO;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

static int tp_recv(struct opal_dev *dev, uint8_t proto, uint16_t comid, void *buf,
		   size_t len)
{
	int rc = dev->ops->if_recv(dev->ctx, proto, comid, buf, len);

	if (rc) {
		dev->err_no = rc < 0 ? -rc : EIO;
		return OPAL_ERR_TRANSPORT;
	}
	return 0;
}

int opal_discovery0_raw(struct opal_dev *dev, uint8_t *buf, size_t cap, size_t *len)
{
	int rc;

	if (cap < OPAL_IO_BUFFER)
		return OPAL_ERR_INVAL;
	memset(buf, 0, OPAL_IO_BUFFER);
	rc = tp_recv(dev, TCG_PROTOCOL_1, L0_COMID, buf, OPAL_IO_BUFFER);
	if (rc)
		return rc;
	*len = OPAL_IO_BUFFER;
	return 0;
}

int opal_discovery0(struct opal_dev *dev, struct opal_discovery *d)
{
	uint8_t buf[OPAL_IO_BUFFER];
	size_t len;
	int rc;

	rc = opal_discovery0_raw(dev, buf, sizeof(buf), &len);
	if (rc)
		return rc;
	rc = opal_discovery_parse(buf, len, d);
	if (rc)
		return rc;
	if (!d->opal2 && !d->opal1 && !d->ruby && !d->pyrite1 && !d->pyrite2)
		return OPAL_ERR_NOT_OPAL;
	if (!d->base_comid)
		return OPAL_ERR_PROTOCOL;
	dev->comid = d->base_comid;
	dev->disc = *d;
	dev->have_disc = true;
	return 0;
}

int opal_ensure_comid(struct opal_dev *dev)
{
	struct opal_discovery d;

	if (dev->have_disc)
		return 0;
	return opal_discovery0(dev, &d);
}

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
	rc = tp_send(dev, TCG_PROTOCOL_1, dev->comid, io, xfer);
	/* The frame may hold a PIN: gone from the stack whatever happened. */
	explicit_bzero(io, sizeof(io));
	if (rc)
		return rc;
	deadline = now_ms() + dev->timeout_ms;
	for (;;) {
		struct opal_frame in;

		memset(io, 0, sizeof(io));
		rc = tp_recv(dev, TCG_PROTOCOL_1, dev->comid, io, sizeof(io));
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
static int ensure_props(struct opal_dev *dev)
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
	rc = tp_send(dev, TCG_PROTOCOL_2, dev->comid, req, sizeof(req));
	if (rc)
		return rc;
	deadline = now_ms() + dev->timeout_ms;
	for (;;) {
		memset(resp, 0, sizeof(resp));
		rc = tp_recv(dev, TCG_PROTOCOL_2, dev->comid, resp, sizeof(resp));
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

static int start_session_once(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
			      const struct opal_key *key, bool write, struct opal_session **out);

int opal_start_session(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
		       const struct opal_key *key, bool write, struct opal_session **out)
{
	int rc = start_session_once(dev, sp, auth, key, write, out);

	/*
	 * SP_BUSY: a session is open on the TPer (one a crashed host left
	 * behind, with MaxSessions 1). When allowed, reset the stack once and
	 * try again.
	 */
	if (rc == OPAL_ST_SP_BUSY && dev->reset_on_busy && !opal_stack_reset(dev))
		rc = start_session_once(dev, sp, auth, key, write, out);
	/* Authentication refused, told apart from a right the authority lacks. */
	if (rc == OPAL_ST_NOT_AUTHORIZED && auth && key)
		rc = OPAL_ERR_AUTH;
	return rc;
}

static int start_session_once(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
			      const struct opal_key *key, bool write, struct opal_session **out)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	struct opal_resp *r;
	struct opal_session *s;
	uint64_t got_hsn = 0, tsn = 0;
	uint32_t hsn;
	int rc;

	*out = NULL;
	rc = opal_ensure_comid(dev);
	if (!rc)
		rc = ensure_props(dev);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	hsn = dev->next_hsn++;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_STARTSESSION);
	opal_put_uint(&b, hsn);
	opal_put_uid(&b, sp);
	opal_put_uint(&b, write ? 1 : 0);
	if (auth && key) {
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 0);	/* HostChallenge */
		opal_put_bytes(&b, key->data, key->len);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 3);	/* HostSigningAuthority */
		opal_put_uid(&b, auth);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_call_end(&b, 0);
	if (b.overflow) {
		rc = OPAL_ERR_INVAL;
		goto out;
	}
	rc = opal_exchange(dev, dev->send_max, 0, 0, b.data, b.len, r);
	if (rc)
		goto out;
	rc = opal_resp_parse(r);
	if (rc)
		goto out;
	if (r->status) {
		rc = r->status;
		goto out;
	}
	/* F8 SMUID SyncSession [ HostSessionID SPSessionID (optional names) ] */
	if (!r->call || !opal_uid_eq(&r->method, &OPAL_M_SYNCSESSION) || r->results != 3 ||
	    opal_resp_uint(r, 0, &got_hsn) || opal_resp_uint(r, 1, &tsn) || got_hsn != hsn ||
	    tsn == 0 || tsn > UINT32_MAX) {
		rc = OPAL_ERR_PROTOCOL;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = OPAL_ERR_NOMEM;
		goto out;
	}
	s->dev = dev;
	s->hsn = hsn;
	s->tsn = (uint32_t)tsn;
	*out = s;
out:
	explicit_bzero(mem, sizeof(mem));
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

int opal_end_session(struct opal_session *s)
{
	static const uint8_t eos = OPAL_TOK_ENDOFSESSION;
	struct opal_resp *r;
	int rc;

	if (!s)
		return 0;
	if (s->closed) {
		free(s);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	rc = r ? opal_exchange(s->dev, s->dev->send_max, s->tsn, s->hsn, &eos, 1, r) :
		 OPAL_ERR_NOMEM;
	if (!rc && (r->raw_len < 1 || r->raw[0] != OPAL_TOK_ENDOFSESSION))
		rc = OPAL_ERR_PROTOCOL;
	free(r);
	free(s);
	return rc;
}

static int opal_session_call_untraced(struct opal_session *s, struct opal_buf *b,
				      struct opal_resp *r);

void opal_dev_set_trace(struct opal_dev *dev, FILE *f)
{
	dev->trace = f;
}

/* "call 0000000800000001.0000000600000017 -> 0x00": the UIDs of a call, never its arguments. */
static void trace_call(const struct opal_dev *dev, const struct opal_buf *b, int rc)
{
	if (!dev->trace || b->len < 19 || b->data[0] != OPAL_TOK_CALL || b->data[1] != 0xa8 ||
	    b->data[10] != 0xa8)
		return;
	fputs("opal: call ", dev->trace);
	for (int i = 2; i < 10; i++)
		fprintf(dev->trace, "%02x", b->data[i]);
	fputc('.', dev->trace);
	for (int i = 11; i < 19; i++)
		fprintf(dev->trace, "%02x", b->data[i]);
	fprintf(dev->trace, " -> %s\n", opal_strerror(rc));
}

int opal_session_call(struct opal_session *s, struct opal_buf *b, struct opal_resp *r)
{
	int rc = opal_session_call_untraced(s, b, r);

	trace_call(s->dev, b, rc);
	return rc;
}

static int opal_session_call_untraced(struct opal_session *s, struct opal_buf *b,
				      struct opal_resp *r)
{
	int rc;

	if (b->overflow)
		return OPAL_ERR_INVAL;
	rc = opal_exchange(s->dev, s->dev->send_max, s->tsn, s->hsn, b->data, b->len, r);
	if (rc)
		return rc;
	rc = opal_resp_parse(r);
	if (rc)
		return rc;
	/*
	 * Inside a session a method's reply is a plain result list; a call
	 * form is the session manager's CloseSession (the TPer aborted the
	 * session, e.g. on a timeout), never a success.
	 */
	if (r->call && opal_uid_eq(&r->method, &OPAL_M_CLOSESESSION)) {
		s->closed = true;
		return OPAL_ERR_SESSION_CLOSED;
	}
	if (r->call)
		return OPAL_ERR_PROTOCOL;
	return r->status;
}

int opal_authenticate(struct opal_session *s, const opal_uid *auth, const struct opal_key *key)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_THISSP, &OPAL_M_AUTHENTICATE);
	opal_put_uid(&b, auth);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 0);	/* Challenge */
	opal_put_bytes(&b, key->data, key->len);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	rc = opal_session_call(s, &b, r);
	if (!rc) {
		uint64_t ok;

		/* One result, a boolean (Core Spec 5.3.4.1.1). */
		if (opal_resp_count(r) != 1 || opal_resp_uint(r, 0, &ok) || ok > 1)
			rc = OPAL_ERR_PROTOCOL;
		else if (!ok)
			rc = OPAL_ERR_AUTH;
	}
	explicit_bzero(mem, sizeof(mem));
	free(r);
	return rc;
}

/*
 * The results list of a reply, value by value at its own level: result k
 * is an atom or a whole list. Counting stops at a malformed list.
 */
size_t opal_resp_result(const struct opal_resp *r, size_t k)
{
	const struct opal_tokens *t = &r->t;
	size_t end, i;

	if (r->results >= t->n || !opal_tok_is(&t->tok[r->results], OPAL_TOK_STARTLIST))
		return 0;
	end = opal_tok_skip(t, r->results);
	if (!end)
		return 0;
	for (i = r->results + 1; i + 1 < end; k--) {
		const struct opal_token *x = &t->tok[i];
		size_t next;

		if (x->type == OPAL_ATOM_CONTROL && !opal_tok_is(x, OPAL_TOK_STARTLIST) &&
		    !opal_tok_is(x, OPAL_TOK_STARTNAME))
			return 0;
		if (!k)
			return i;
		next = x->type == OPAL_ATOM_CONTROL ? opal_tok_skip(t, i) : i + 1;
		if (!next || next >= end)
			return 0;
		i = next;
	}
	return 0;
}

size_t opal_resp_count(const struct opal_resp *r)
{
	size_t n = 0;

	while (opal_resp_result(r, n))
		n++;
	return n;
}

int opal_resp_uint(const struct opal_resp *r, size_t k, uint64_t *v)
{
	size_t i = opal_resp_result(r, k);

	if (!i || r->t.tok[i].type != OPAL_ATOM_UINT)
		return OPAL_ERR_PROTOCOL;
	*v = r->t.tok[i].uint;
	return 0;
}

int opal_resp_bytes(const struct opal_resp *r, size_t k, const uint8_t **p, size_t *n)
{
	size_t i = opal_resp_result(r, k);

	if (!i || r->t.tok[i].type != OPAL_ATOM_BYTES)
		return OPAL_ERR_PROTOCOL;
	*p = r->t.tok[i].bytes;
	*n = r->t.tok[i].len;
	return 0;
}

/*
 * A Get result is one row: [ [ {col value} {col value} ... ] ]. Walk the
 * row's named values at their own level (a value may itself be a list: a
 * reset list, an ACE expression), so nothing nested is taken for a column;
 * a row that is not a list of names is malformed and yields no column.
 */
size_t opal_resp_column(const struct opal_resp *r, unsigned col)
{
	const struct opal_tokens *t = &r->t;
	size_t row = r->results + 1, end;

	if (row >= t->n || !opal_tok_is(&t->tok[r->results], OPAL_TOK_STARTLIST) ||
	    !opal_tok_is(&t->tok[row], OPAL_TOK_STARTLIST))
		return 0;
	end = opal_tok_skip(t, row);
	if (!end)
		return 0;
	for (size_t i = row + 1; i + 1 < end;) {
		size_t next = opal_tok_skip(t, i), vend;

		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || !next || next >= end ||
		    i + 3 >= next)
			return 0;
		if (t->tok[i + 1].type == OPAL_ATOM_UINT && t->tok[i + 1].uint == col) {
			vend = opal_tok_is(&t->tok[i + 2], OPAL_TOK_STARTLIST) ?
			       opal_tok_skip(t, i + 2) : i + 3;
			return vend + 1 == next ? i + 2 : 0;
		}
		i = next;
	}
	return 0;
}

int opal_resp_column_uint(const struct opal_resp *r, unsigned col, uint64_t *v)
{
	size_t i = opal_resp_column(r, col);

	if (!i || r->t.tok[i].type != OPAL_ATOM_UINT)
		return OPAL_ERR_PROTOCOL;
	*v = r->t.tok[i].uint;
	return 0;
}

int opal_resp_column_bytes(const struct opal_resp *r, unsigned col, const uint8_t **p,
			   size_t *n)
{
	size_t i = opal_resp_column(r, col);

	if (!i || r->t.tok[i].type != OPAL_ATOM_BYTES)
		return OPAL_ERR_PROTOCOL;
	*p = r->t.tok[i].bytes;
	*n = r->t.tok[i].len;
	return 0;
}

void opal_put_get_cols(struct opal_buf *b, const opal_uid *obj, unsigned first, unsigned last)
{
	opal_put_call_begin(b, obj, &OPAL_M_GET);
	opal_put_control(b, OPAL_TOK_STARTLIST);
	opal_put_named_uint(b, 3, first);	/* startColumn */
	opal_put_named_uint(b, 4, last);	/* endColumn */
	opal_put_control(b, OPAL_TOK_ENDLIST);
	opal_put_call_end(b, 0);
}

int opal_get_columns(struct opal_session *s, const opal_uid *obj, unsigned first,
		     unsigned last, struct opal_resp *r)
{
	uint8_t mem[256];
	struct opal_buf b;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_get_cols(&b, obj, first, last);
	return opal_session_call(s, &b, r);
}

int opal_get_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col,
			 uint64_t *v)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, obj, col, col, r);
	if (!rc)
		rc = opal_resp_column_uint(r, col, v);
	free(r);
	return rc;
}

int opal_get_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  uint8_t *out, size_t cap, size_t *len)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	const uint8_t *p;
	size_t n;
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, obj, col, col, r);
	if (!rc)
		rc = opal_resp_column_bytes(r, col, &p, &n);
	if (!rc && n > cap)
		rc = OPAL_ERR_PROTOCOL;
	if (!rc) {
		memcpy(out, p, n);
		*len = n;
	}
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

void opal_put_set_begin(struct opal_buf *b, const opal_uid *obj)
{
	opal_put_call_begin(b, obj, &OPAL_M_SET);
	opal_put_control(b, OPAL_TOK_STARTNAME);
	opal_put_uint(b, 1);	/* Values */
	opal_put_control(b, OPAL_TOK_STARTLIST);
}

void opal_put_set_end(struct opal_buf *b)
{
	opal_put_control(b, OPAL_TOK_ENDLIST);
	opal_put_control(b, OPAL_TOK_ENDNAME);
	opal_put_call_end(b, 0);
}

int opal_call_simple(struct opal_session *s, struct opal_buf *b)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_session_call(s, b, r);
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

int opal_set_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col, uint64_t v)
{
	uint8_t mem[256];
	struct opal_buf b;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, obj);
	opal_put_named_uint(&b, col, v);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_set_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  const void *p, size_t n)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	int rc;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, obj);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, col);
	opal_put_bytes(&b, p, n);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_set_end(&b);
	rc = opal_call_simple(s, &b);
	explicit_bzero(mem, sizeof(mem));
	return rc;
}

void opal_session_drop(struct opal_session *s)
{
	free(s);
}

/* Room in a ComPacket of max bytes for a byte atom next to overhead bytes. */
static size_t atom_room(size_t max, size_t overhead)
{
	/* Frame headers, payload padding, other tokens, the atom's header. */
	size_t fixed = OPAL_FRAME_HDRS + 3 + overhead + 4;

	return max > fixed ? max - fixed : 0;
}

size_t opal_session_call_room(const struct opal_session *s, size_t overhead)
{
	size_t room = atom_room(s->dev->send_max, overhead);
	size_t token = s->dev->token_max > 4 ? s->dev->token_max - 4 : 0;

	return room < token ? room : token;
}

size_t opal_session_reply_room(const struct opal_session *s, size_t overhead)
{
	return atom_room(s->dev->reply_max, overhead);
}
