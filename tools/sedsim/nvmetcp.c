// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim as an NVMe/TCP target (NVMe/TCP transport 1.0, NVMe-oF 1.1, NVMe
 * base 1.4 subset): one I/O controller with one namespace, the drive, on
 * 127.0.0.1. Any NVMe host driver enables sed-opal for a controller whose
 * Identify data reports Security Send/Receive (OACS bit 0), fabrics ones
 * included, so the kernel's own sed-opal can drive the simulator here,
 * which it cannot behind TCMU.
 *
 * One thread per TCP connection (the admin queue and each I/O queue are
 * separate connections); one lock serialises the drive and the controller
 * table. No digests, no TLS, no authentication.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sedsim-internal.h"

/* PDU types and flags (NVMe/TCP transport specification 1.0, 3.6). */
enum {
	PDU_ICREQ = 0x00,
	PDU_ICRESP = 0x01,
	PDU_H2C_TERM = 0x02,
	PDU_C2H_TERM = 0x03,
	PDU_CMD = 0x04,
	PDU_RSP = 0x05,
	PDU_H2C_DATA = 0x06,
	PDU_C2H_DATA = 0x07,
	PDU_R2T = 0x09,
};

#define F_HDGST 0x01
#define F_DDGST 0x02
#define F_DATA_LAST 0x04

#define HDR_LEN 8
#define IC_LEN 128
#define CMD_HLEN (HDR_LEN + 64)
#define RSP_LEN (HDR_LEN + 16)
#define DATA_HLEN 24		/* H2CData, C2HData, R2T, termination requests */

#define MAXH2CDATA (128u << 10)
#define MDTS_SHIFT 5		/* 2^5 pages of 4 KiB: 128 KiB per command */
#define MAX_XFER (4096u << MDTS_SHIFT)
#define INCAPSULE (8192u)	/* in-capsule data on every queue (admin: 8 KiB fixed by hosts) */
#define QUEUE_ENTRIES 128
#define MAX_CTRLS 8
#define KAS_100MS 10

/* NVMe status codes, as (SCT << 8) | SC. */
enum {
	SC_SUCCESS = 0x000,
	SC_INVALID_OPCODE = 0x001,
	SC_INVALID_FIELD = 0x002,
	SC_DATA_XFER_ERROR = 0x004,
	SC_INTERNAL = 0x006,
	SC_INVALID_NS = 0x00b,
	SC_CMD_SEQ_ERROR = 0x00c,
	SC_SGL_LENGTH_INVALID = 0x00f,
	SC_LBA_RANGE = 0x080,
	SC_CONNECT_INVALID_PARAM = 0x182,
	SC_WRITE_FAULT = 0x280,
	SC_READ_ERROR = 0x281,
	SC_ACCESS_DENIED = 0x286,
	SC_DNR = 0x4000,
};

/* Controller properties (NVMe-oF 1.1, 3.5; base 1.4, 3.1). */
enum { PROP_CAP = 0x00, PROP_VS = 0x08, PROP_CC = 0x14, PROP_CSTS = 0x1c, PROP_NSSR = 0x20 };
#define CC_EN 0x1u
#define CC_SHN(cc) (((cc) >> 14) & 3)
#define CSTS_RDY 0x1u
#define CSTS_SHST_DONE (2u << 2)
#define CSTS_NSSRO (1u << 4)
#define CAP_NSSRS (1ull << 36)
#define NSSR_RESET 0x4E564D65u	/* "NVMe" */

struct ctrl {
	bool used;
	uint16_t cntlid;
	uint32_t cc, csts;
	uint32_t kato_ms;
	uint32_t aec;
	uint32_t queues;	/* Number of Queues result: NCQA << 16 | NSQA, 0-based */
	uint32_t resets;	/* Controller Level Resets so far: each deletes the I/O queues */
};

struct target {
	struct sedsim *sim;
	pthread_mutex_t lock;	/* sim, ctrl[] */
	const char *nqn;
	char sn[20], nguid[16];
	struct ctrl ctrl[MAX_CTRLS];
	uint16_t next_cntlid;
};

/* A write waiting for its data after our R2T. */
struct pending {
	bool used;
	uint8_t sqe[64];
	uint8_t *buf;
	uint32_t len, got;
};

struct conn {
	struct target *t;
	int fd;
	bool ic_done;
	bool connected;
	uint16_t qid;
	uint16_t cntlid;
	uint16_t sqhd;
	uint16_t sq_entries;	/* SQSIZE + 1 from Connect; SQHD wraps here */
	uint32_t ctrl_resets;	/* an I/O queue: its controller's resets when it connected */
	uint8_t *pdu;		/* one received PDU */
	struct pending pend[QUEUE_ENTRIES];
};

/* A command being executed: data in or out, and what to answer. */
struct cmd {
	const uint8_t *sqe;
	uint8_t *data;
	uint32_t len;		/* data buffer size (the SGL length) */
	uint32_t out;		/* controller-to-host bytes produced */
	uint64_t result;
	uint16_t status;
	bool no_reply;		/* Asynchronous Event Request: stays outstanding */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static inline void le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void le32(uint8_t *p, uint32_t v)
{
	le16(p, (uint16_t)v);
	le16(p + 2, (uint16_t)(v >> 16));
}

static inline void le64(uint8_t *p, uint64_t v)
{
	le32(p, (uint32_t)v);
	le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return get_le16(p) | ((uint32_t)get_le16(p + 2) << 16);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | ((uint64_t)get_le32(p + 4) << 32);
}

static inline uint32_t cdw(const uint8_t *sqe, unsigned n)
{
	return get_le32(sqe + 4 * n);
}

/* Space-padded ASCII field. */
static void pad(uint8_t *p, const char *s, size_t n)
{
	size_t l = strnlen(s, n);

	memset(p, ' ', n);
	memcpy(p, s, l);
}

static bool read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void hdr(uint8_t *p, uint8_t type, uint8_t flags, uint8_t hlen, uint8_t pdo, uint32_t plen)
{
	p[0] = type;
	p[1] = flags;
	p[2] = hlen;
	p[3] = pdo;
	le32(p + 4, plen);
}

/* ----------------------------------------------------------- responses */

static bool send_rsp(struct conn *c, const uint8_t *sqe, uint16_t status, uint64_t result)
{
	uint8_t r[RSP_LEN] = { 0 };

	hdr(r, PDU_RSP, 0, RSP_LEN, 0, RSP_LEN);
	le64(r + 8, result);
	/* Before Connect has sized the queue, the largest size we accept. */
	c->sqhd = (uint16_t)((c->sqhd + 1) % (c->sq_entries ? c->sq_entries : QUEUE_ENTRIES));
	le16(r + 16, c->sqhd);
	le16(r + 18, c->qid);
	memcpy(r + 20, sqe + 2, 2);	/* command identifier, as the host set it */
	le16(r + 22, (uint16_t)(status << 1));
	return write_full(c->fd, r, sizeof(r));
}

static bool send_c2h(struct conn *c, const uint8_t *sqe, const uint8_t *data, uint32_t len)
{
	for (uint32_t off = 0; off < len;) {
		uint32_t n = len - off < MAXH2CDATA ? len - off : MAXH2CDATA;
		uint8_t h[DATA_HLEN] = { 0 };

		hdr(h, PDU_C2H_DATA, off + n == len ? F_DATA_LAST : 0, DATA_HLEN, DATA_HLEN,
		    DATA_HLEN + n);
		memcpy(h + 8, sqe + 2, 2);
		le32(h + 12, off);
		le32(h + 16, n);
		if (!write_full(c->fd, h, sizeof(h)) || !write_full(c->fd, data + off, n))
			return false;
		off += n;
	}
	return true;
}

/* ------------------------------------------------------------- fabrics */

static struct ctrl *find_ctrl(struct target *t, uint16_t cntlid)
{
	for (unsigned i = 0; i < MAX_CTRLS; i++)
		if (t->ctrl[i].used && t->ctrl[i].cntlid == cntlid)
			return &t->ctrl[i];
	return NULL;
}

static void connect_cmd(struct conn *c, struct cmd *m)
{
	struct target *t = c->t;
	const uint8_t *d = m->data;
	uint16_t qid = get_le16(m->sqe + 42);
	uint16_t sqsize = get_le16(m->sqe + 44);	/* 0-based */
	char subnqn[257], hostnqn[257];
	struct ctrl *ct = NULL;

	if (c->connected || get_le16(m->sqe + 40) != 0) {	/* record format 0 */
		m->status = SC_INVALID_FIELD | SC_DNR;
		return;
	}
	if (m->len < 1024) {
		m->status = SC_SGL_LENGTH_INVALID | SC_DNR;
		return;
	}
	if (sqsize == 0 || sqsize > QUEUE_ENTRIES - 1) {
		/* Invalid parameter in the command, at the SQSIZE offset; CAP.MQES bounds it. */
		m->status = SC_CONNECT_INVALID_PARAM | SC_DNR;
		m->result = 44;
		return;
	}
	memcpy(subnqn, d + 256, 256);
	subnqn[256] = 0;
	memcpy(hostnqn, d + 512, 256);
	hostnqn[256] = 0;
	if (strcmp(subnqn, t->nqn)) {
		/* Invalid parameter in the data, at the SUBNQN offset. */
		m->status = SC_CONNECT_INVALID_PARAM | SC_DNR;
		m->result = (1u << 16) | 256;
		fprintf(stderr, "sedsim: connect from %s to unknown subsystem %s\n", hostnqn, subnqn);
		return;
	}
	if (qid == 0) {
		for (unsigned i = 0; i < MAX_CTRLS && !ct; i++) {
			if (!t->ctrl[i].used) {
				ct = &t->ctrl[i];
				memset(ct, 0, sizeof(*ct));
				ct->used = true;
				ct->cntlid = t->next_cntlid;
				t->next_cntlid = (uint16_t)(t->next_cntlid % 0xffef + 1);
				ct->kato_ms = get_le32(m->sqe + 48);
				ct->queues = (7u << 16) | 7u;
			}
		}
		if (!ct) {
			m->status = SC_CONNECT_INVALID_PARAM | SC_DNR;
			m->result = (1u << 16) | 16;
			return;
		}
		fprintf(stderr, "sedsim: controller %u for %s\n", ct->cntlid, hostnqn);
	} else {
		ct = find_ctrl(t, get_le16(d + 16));
		if (!ct || qid > (ct->queues & 0xffff) + 1u) {
			/* Invalid: the QID in the command, or the CNTLID in the data. */
			m->status = SC_CONNECT_INVALID_PARAM | SC_DNR;
			m->result = ct ? 42 : (1u << 16) | 16;
			return;
		}
	}
	c->connected = true;
	c->ctrl_resets = ct->resets;
	c->sq_entries = (uint16_t)(sqsize + 1);
	c->qid = qid;
	c->cntlid = ct->cntlid;
	m->result = ct->cntlid;
}

/*
 * NVM Subsystem Reset (base 1.4, 7.3.1): a Controller Level Reset of every
 * controller (disabled, I/O refused until the host enables one again;
 * CSTS.NSSRO says why) and, for the drive, a TCG Hardware Reset: the TCG
 * Storage Interface Interactions Specification maps an NVM Subsystem Reset
 * to Hardware Reset and a Controller Reset (CC.EN 1 to 0) to no TCG reset
 * at all, so a write of CC never touches the drive.
 */
static void subsystem_reset(struct target *t)
{
	for (unsigned i = 0; i < MAX_CTRLS; i++) {
		if (!t->ctrl[i].used)
			continue;
		t->ctrl[i].cc = 0;
		t->ctrl[i].csts = CSTS_NSSRO;
		t->ctrl[i].resets++;
	}
	if (sedsim_hw_reset(t->sim))
		fprintf(stderr, "sedsim: NVM Subsystem Reset: cannot save the drive's state\n");
	fprintf(stderr, "sedsim: NVM Subsystem Reset (a TCG Hardware Reset of the drive)\n");
}

static void property(struct conn *c, struct cmd *m, bool set)
{
	struct ctrl *ct = find_ctrl(c->t, c->cntlid);
	uint32_t off = get_le32(m->sqe + 44);
	bool wide = m->sqe[40] & 1;
	uint64_t v = get_le64(m->sqe + 48);

	if (!ct || c->qid) {
		m->status = SC_CMD_SEQ_ERROR | SC_DNR;
		return;
	}
	if (set) {
		if (off == PROP_NSSR && !wide) {
			/* Any other value has no effect (base 1.4, 3.1.14). */
			if ((uint32_t)v == NSSR_RESET)
				subsystem_reset(c->t);
			return;
		}
		if (off != PROP_CC || wide) {
			m->status = SC_INVALID_FIELD | SC_DNR;
			return;
		}
		/* A Controller Reset (EN 1 to 0) deletes the I/O queues, nothing more. */
		if ((ct->cc & CC_EN) && !((uint32_t)v & CC_EN))
			ct->resets++;
		ct->cc = (uint32_t)v;
		/*
		 * RDY follows EN; SHST reports a finished shutdown only while
		 * SHN asks for one (nothing to flush: done at once), so a
		 * controller enabled again after a shutdown no longer shows it.
		 */
		ct->csts = (ct->cc & CC_EN ? CSTS_RDY : 0) |
			   (CC_SHN(ct->cc) ? CSTS_SHST_DONE : 0);
		return;
	}
	switch (off) {
	case PROP_CAP:
		/* MQES, CQR, TO 10 s, NSSRS, CSS: NVM only, MPSMIN = MPSMAX = 4 KiB. */
		m->result = (QUEUE_ENTRIES - 1) | (1u << 16) | (20u << 24) | CAP_NSSRS | (1ull << 37);
		break;
	case PROP_VS:
		m->result = 0x00010300;
		break;
	case PROP_CC:
		m->result = ct->cc;
		break;
	case PROP_CSTS:
		m->result = ct->csts;
		break;
	case PROP_NSSR:		/* reads as 0 */
		m->result = 0;
		break;
	default:
		m->status = SC_INVALID_FIELD | SC_DNR;
	}
}

static void fabrics(struct conn *c, struct cmd *m)
{
	switch (m->sqe[4]) {
	case 0x01:
		connect_cmd(c, m);
		return;
	case 0x00:
	case 0x04:
		if (!c->connected)
			break;
		property(c, m, m->sqe[4] == 0x00);
		return;
	default:
		if (!c->connected)
			break;
		m->status = SC_INVALID_OPCODE | SC_DNR;
		return;
	}
	m->status = SC_CMD_SEQ_ERROR | SC_DNR;
}

/* --------------------------------------------------------------- admin */

static void identify_ctrl(struct target *t, uint16_t cntlid, uint8_t *d)
{
	/* VID, SSVID: none, as fabrics targets report. */
	memcpy(d + 4, t->sn, 20);
	pad(d + 24, "sedsim Opal 2", 40);
	pad(d + 64, "0001", 8);
	d[76] = 0;			/* CMIC: one controller, no multipath */
	d[77] = MDTS_SHIFT;
	le16(d + 78, cntlid);
	le32(d + 80, 0x00010300);	/* VER 1.3 */
	d[111] = 1;			/* CNTRLTYPE: I/O controller */
	le16(d + 256, 0x0001);		/* OACS: Security Send/Receive */
	d[258] = 3;			/* ACL */
	d[259] = 3;			/* AERL */
	d[260] = 0x02;			/* FRMW: one slot */
	d[262] = 0;			/* ELPE: one error log entry */
	le16(d + 320, KAS_100MS);
	d[512] = 0x66;			/* SQES */
	d[513] = 0x44;			/* CQES */
	le16(d + 514, QUEUE_ENTRIES);	/* MAXCMD */
	le32(d + 516, 1);		/* NN */
	le16(d + 520, 0);		/* ONCS: nothing optional */
	d[525] = 0;			/* VWC: none, every write is stable */
	/* SGLS: SGLs supported, in-capsule data with offsets (transport data blocks). */
	le32(d + 536, (1u << 0) | (1u << 20));
	memcpy(d + 768, t->nqn, strnlen(t->nqn, 255));
	le32(d + 1792, (64 + INCAPSULE) / 16);	/* IOCCSZ */
	le32(d + 1796, 16 / 16);		/* IORCSZ */
	le16(d + 1800, 0);			/* ICDOFF */
	d[1802] = 0;				/* FCATT: dynamic controller model */
	d[1803] = 1;				/* MSDBD */
	le16(d + 2048, 900);		/* power state 0: 9 W */
}

static void identify_ns(struct target *t, uint8_t *d)
{
	uint64_t blocks = sedsim_blocks(t->sim);

	le64(d + 0, blocks);	/* NSZE */
	le64(d + 8, blocks);	/* NCAP */
	le64(d + 16, blocks);	/* NUSE */
	d[25] = 0;		/* NLBAF: one format */
	d[26] = 0;		/* FLBAS: format 0 */
	memcpy(d + 104, t->nguid, 16);
	d[130] = 9;		/* LBAF0: 512-byte data, no metadata */
}

static void identify(struct conn *c, struct cmd *m)
{
	struct target *t = c->t;
	uint8_t cns = (uint8_t)cdw(m->sqe, 10);
	uint8_t csi = (uint8_t)(cdw(m->sqe, 11) >> 24);
	uint32_t nsid = cdw(m->sqe, 1);

	if (m->len < 4096) {
		m->status = SC_SGL_LENGTH_INVALID | SC_DNR;
		return;
	}
	m->out = 4096;
	switch (cns) {
	case 0x00:	/* namespace */
		if (nsid != 1) {
			m->status = SC_INVALID_NS | SC_DNR;
			return;
		}
		identify_ns(t, m->data);
		return;
	case 0x01:	/* controller */
		identify_ctrl(t, c->cntlid, m->data);
		return;
	case 0x02:	/* active namespaces above nsid */
		if (nsid >= 0xfffffffe) {
			m->status = SC_INVALID_NS | SC_DNR;
			return;
		}
		if (nsid < 1)
			le32(m->data, 1);
		return;
	case 0x03:	/* namespace identification descriptors: the NGUID */
		if (nsid != 1) {
			m->status = SC_INVALID_NS | SC_DNR;
			return;
		}
		m->data[0] = 2;
		m->data[1] = 16;
		memcpy(m->data + 4, t->nguid, 16);
		return;
	case 0x05:	/* NVM command set specific namespace: nothing beyond the base */
		if (nsid != 1) {
			m->status = SC_INVALID_NS | SC_DNR;
			return;
		}
		/* fall through */
	case 0x06:	/* NVM command set specific controller: no limits */
		if (csi != 0)
			break;
		return;
	default:
		break;
	}
	m->out = 0;
	m->status = SC_INVALID_FIELD | SC_DNR;
}

static void features(struct conn *c, struct cmd *m, bool set)
{
	struct ctrl *ct = find_ctrl(c->t, c->cntlid);
	uint8_t fid = (uint8_t)cdw(m->sqe, 10);
	uint32_t v = cdw(m->sqe, 11);

	if (!ct) {
		m->status = SC_CMD_SEQ_ERROR | SC_DNR;
		return;
	}
	switch (fid) {
	case 0x07:	/* Number of Queues */
		if (set) {
			uint32_t sq = v & 0xffff, cq = v >> 16;

			if (sq == 0xffff || cq == 0xffff) {
				m->status = SC_INVALID_FIELD | SC_DNR;
				return;
			}
			ct->queues = ((cq < 7 ? cq : 7) << 16) | (sq < 7 ? sq : 7);
		}
		m->result = ct->queues;
		return;
	case 0x0b:	/* Asynchronous Event Configuration */
		if (set)
			ct->aec = v;
		m->result = ct->aec;
		return;
	case 0x0f:	/* Keep Alive Timer */
		if (set)
			ct->kato_ms = v;
		m->result = ct->kato_ms;
		return;
	default:
		m->status = SC_INVALID_FIELD | SC_DNR;
	}
}

static void get_log(struct cmd *m)
{
	uint8_t lid = (uint8_t)cdw(m->sqe, 10);
	uint64_t numd = ((cdw(m->sqe, 10) >> 16) | ((uint64_t)(cdw(m->sqe, 11) & 0xffff) << 16)) + 1;

	if (numd * 4 > m->len) {
		m->status = SC_SGL_LENGTH_INVALID | SC_DNR;
		return;
	}
	switch (lid) {
	case 0x01:	/* error information: no errors */
	case 0x02:	/* SMART / health: all zero, nothing to report */
	case 0x03:	/* firmware slot information */
	case 0x04:	/* changed namespace list: none */
		m->out = (uint32_t)numd * 4;
		return;
	default:
		m->status = SC_INVALID_FIELD | SC_DNR;
	}
}

static void security(struct target *t, struct cmd *m, bool recv)
{
	uint32_t dw10 = cdw(m->sqe, 10);
	uint8_t proto = (uint8_t)(dw10 >> 24);
	uint16_t spsp = (uint16_t)(dw10 >> 8);
	uint32_t len = cdw(m->sqe, 11);	/* AL or TL */
	int rc;

	if (len > m->len) {
		m->status = SC_SGL_LENGTH_INVALID | SC_DNR;
		return;
	}
	rc = recv ? sedsim_if_recv(t->sim, proto, spsp, m->data, len) :
		    sedsim_if_send(t->sim, proto, spsp, m->data, len);
	if (rc) {
		m->status = SC_INVALID_FIELD | SC_DNR;
		return;
	}
	if (recv)
		m->out = len;
}

static void admin(struct conn *c, struct cmd *m)
{
	switch (m->sqe[0]) {
	case 0x02:
		get_log(m);
		return;
	case 0x06:
		identify(c, m);
		return;
	case 0x08:	/* Abort: never aborted, commands finish on their own */
		m->result = 1;
		return;
	case 0x09:
	case 0x0a:
		features(c, m, m->sqe[0] == 0x09);
		return;
	case 0x0c:	/* Asynchronous Event Request: we have no events */
		m->no_reply = true;
		return;
	case 0x18:	/* Keep Alive */
		return;
	case 0x81:
	case 0x82:
		security(c->t, m, m->sqe[0] == 0x82);
		return;
	default:
		m->status = SC_INVALID_OPCODE | SC_DNR;
	}
}

/* ----------------------------------------------------------------- I/O */

static void io(struct conn *c, struct cmd *m)
{
	uint8_t op = m->sqe[0];
	uint32_t nsid = cdw(m->sqe, 1);
	uint64_t slba = cdw(m->sqe, 10) | ((uint64_t)cdw(m->sqe, 11) << 32);
	uint32_t nlb = (cdw(m->sqe, 12) & 0xffff) + 1;
	enum sedsim_io_status st;

	if (op == 0x00) {	/* Flush: writes are stable already */
		if (nsid != 1 && nsid != 0xffffffff)
			m->status = SC_INVALID_NS | SC_DNR;
		return;
	}
	if (op != 0x01 && op != 0x02) {
		m->status = SC_INVALID_OPCODE | SC_DNR;
		return;
	}
	if (nsid != 1) {
		m->status = SC_INVALID_NS | SC_DNR;
		return;
	}
	if ((uint64_t)nlb * SEDSIM_BLOCK > m->len) {
		m->status = SC_SGL_LENGTH_INVALID | SC_DNR;
		return;
	}
	st = op == 0x01 ? sedsim_write(c->t->sim, slba, nlb, m->data) :
			  sedsim_read(c->t->sim, slba, nlb, m->data);
	switch (st) {
	case SEDSIM_IO_OK:
		if (op == 0x02)
			m->out = nlb * SEDSIM_BLOCK;
		return;
	case SEDSIM_IO_LOCKED:
		m->status = SC_ACCESS_DENIED | SC_DNR;
		return;
	case SEDSIM_IO_RANGE:
		m->status = SC_LBA_RANGE | SC_DNR;
		return;
	default:
		m->status = (op == 0x01 ? SC_WRITE_FAULT : SC_READ_ERROR) | SC_DNR;
	}
}

/* ------------------------------------------------------------ commands */

/* Bits 1:0 of an opcode give the data direction: 01 to the controller, 10 from it. */
static unsigned direction(const uint8_t *sqe)
{
	return (sqe[0] == 0x7f ? sqe[4] : sqe[0]) & 3;
}

/*
 * Admin and I/O commands need a live, enabled controller: the admin queue's
 * connection may have closed (freeing the controller) while I/O queues of it
 * stay connected, a host must not send them before CC.EN is set, and a
 * controller reset since an I/O queue's Connect deleted that queue.
 */
static bool ctrl_ready(struct conn *c)
{
	const struct ctrl *ct = find_ctrl(c->t, c->cntlid);

	/* An I/O queue from before a Controller Level Reset is gone with it. */
	return ct && (ct->cc & CC_EN) && (ct->csts & CSTS_RDY) &&
	       (c->qid == 0 || c->ctrl_resets == ct->resets);
}

static bool execute(struct conn *c, const uint8_t *sqe, uint8_t *data, uint32_t len)
{
	struct cmd m = { .sqe = sqe, .data = data, .len = len };
	bool ok = true;

	pthread_mutex_lock(&c->t->lock);
	if (sqe[0] == 0x7f)
		fabrics(c, &m);
	else if (!c->connected || !ctrl_ready(c))
		m.status = SC_CMD_SEQ_ERROR | SC_DNR;
	else if (c->qid == 0)
		admin(c, &m);
	else
		io(c, &m);
	pthread_mutex_unlock(&c->t->lock);
	if (m.no_reply)
		return true;
	if (!m.status && m.out)
		ok = send_c2h(c, sqe, data, m.out > len ? len : m.out);
	return ok && send_rsp(c, sqe, m.status, m.result);
}

static bool send_r2t(struct conn *c, const uint8_t *sqe, uint16_t ttag, uint32_t len)
{
	uint8_t h[DATA_HLEN] = { 0 };

	hdr(h, PDU_R2T, 0, DATA_HLEN, 0, DATA_HLEN);
	memcpy(h + 8, sqe + 2, 2);
	le16(h + 10, ttag);
	le32(h + 12, 0);
	le32(h + 16, len);
	return write_full(c->fd, h, sizeof(h));
}

static bool capsule(struct conn *c, uint32_t plen)
{
	const uint8_t *p = c->pdu, *sqe = p + HDR_LEN;
	uint8_t pdo = p[3];
	uint32_t sgl_len = get_le32(sqe + 32);
	uint32_t inl = 0, len;
	uint8_t *buf;
	bool ok;

	if (pdo) {
		if (pdo < CMD_HLEN || pdo > plen)
			return false;
		inl = plen - pdo;
	} else if (plen != CMD_HLEN) {
		return false;
	}
	if (sgl_len > MAX_XFER || inl > sgl_len ||
	    (inl && (direction(sqe) != 1 || inl != sgl_len)))
		return send_rsp(c, sqe, SC_SGL_LENGTH_INVALID | SC_DNR, 0);
	len = sgl_len;
	if (direction(sqe) == 1 && len && !inl) {
		/* Data too big for the capsule: ask for it with an R2T. */
		for (uint16_t i = 0; i < QUEUE_ENTRIES; i++) {
			struct pending *w = &c->pend[i];

			if (w->used)
				continue;
			w->buf = malloc(len);
			if (!w->buf)
				return send_rsp(c, sqe, SC_INTERNAL, 0);
			w->used = true;
			memcpy(w->sqe, sqe, 64);
			w->len = len;
			w->got = 0;
			return send_r2t(c, sqe, i, len);
		}
		return false;	/* more outstanding commands than the queue holds */
	}
	buf = calloc(1, len ? len : 1);
	if (!buf)
		return send_rsp(c, sqe, SC_INTERNAL, 0);
	if (inl)
		memcpy(buf, p + pdo, inl);
	ok = execute(c, sqe, buf, len);
	free(buf);
	return ok;
}

static bool h2c_data(struct conn *c, uint32_t plen)
{
	const uint8_t *p = c->pdu;
	uint16_t ttag = get_le16(p + 10);
	uint32_t off = get_le32(p + 12), n = get_le32(p + 16);
	uint8_t pdo = p[3];
	struct pending *w;
	bool ok;

	if (ttag >= QUEUE_ENTRIES || !c->pend[ttag].used)
		return false;
	w = &c->pend[ttag];
	if (memcmp(p + 8, w->sqe + 2, 2) || pdo < DATA_HLEN || pdo > plen || plen - pdo != n ||
	    off != w->got || n > w->len - w->got)
		return false;
	memcpy(w->buf + off, p + pdo, n);
	w->got += n;
	/*
	 * LAST marks the final PDU of the R2T's data, no earlier and no later:
	 * an early one would leave the command waiting for data that never
	 * comes, so both mismatches are fatal to the connection.
	 */
	if (!(p[1] & F_DATA_LAST) != (w->got < w->len))
		return false;
	if (w->got < w->len)
		return true;
	ok = execute(c, w->sqe, w->buf, w->len);
	free(w->buf);
	w->buf = NULL;
	w->used = false;
	return ok;
}

static bool icreq(struct conn *c, uint32_t plen)
{
	const uint8_t *p = c->pdu;
	uint8_t r[IC_LEN] = { 0 };

	if (c->ic_done || plen != IC_LEN || get_le16(p + 8) != 0 || p[11] != 0)
		return false;	/* PFV 0 only; no header or data digests */
	hdr(r, PDU_ICRESP, 0, IC_LEN, 0, IC_LEN);
	le16(r + 8, 0);		/* PFV */
	r[10] = 0;		/* CPDA */
	r[11] = 0;		/* digests: none */
	le32(r + 12, MAXH2CDATA);
	c->ic_done = true;
	return write_full(c->fd, r, sizeof(r));
}

/* One PDU from the host; false closes the connection. */
static bool pdu(struct conn *c)
{
	uint8_t *p = c->pdu;
	uint32_t plen, max;
	uint8_t hlen;

	if (!read_full(c->fd, p, HDR_LEN))
		return false;
	hlen = p[2];
	plen = get_le32(p + 4);
	if (p[1] & (F_HDGST | F_DDGST))
		return false;
	switch (p[0]) {
	case PDU_ICREQ:
		max = IC_LEN;
		if (hlen != IC_LEN)
			return false;
		break;
	case PDU_CMD:
		max = CMD_HLEN + INCAPSULE;
		if (hlen != CMD_HLEN || !c->ic_done)
			return false;
		break;
	case PDU_H2C_DATA:
		max = DATA_HLEN + MAXH2CDATA;
		if (hlen != DATA_HLEN || !c->ic_done)
			return false;
		break;
	default:	/* H2CTermReq, or anything a host must not send */
		return false;
	}
	if (plen < hlen || plen > max || !read_full(c->fd, p + HDR_LEN, plen - HDR_LEN))
		return false;
	switch (p[0]) {
	case PDU_ICREQ:
		return icreq(c, plen);
	case PDU_CMD:
		return capsule(c, plen);
	default:
		return h2c_data(c, plen);
	}
}

static void *conn_thread(void *arg)
{
	struct conn *c = arg;

	while (!stop && pdu(c))
		;
	close(c->fd);
	pthread_mutex_lock(&c->t->lock);
	if (c->connected && c->qid == 0) {
		struct ctrl *ct = find_ctrl(c->t, c->cntlid);

		if (ct)
			ct->used = false;
	}
	pthread_mutex_unlock(&c->t->lock);
	for (unsigned i = 0; i < QUEUE_ENTRIES; i++)
		free(c->pend[i].buf);
	free(c->pdu);
	free(c);
	return NULL;
}

static void start_conn(struct target *t, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));
	pthread_attr_t attr;
	pthread_t th;
	int one = 1;

	if (c)
		c->pdu = malloc(DATA_HLEN + MAXH2CDATA);
	if (!c || !c->pdu) {
		if (c)
			free(c);
		close(fd);
		return;
	}
	c->t = t;
	c->fd = fd;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, conn_thread, c)) {
		close(fd);
		free(c->pdu);
		free(c);
	}
	pthread_attr_destroy(&attr);
}

/* Identities derived from the serial, stable across restarts of the drive. */
static void identities(struct target *t)
{
	const char *serial = sedsim_serial(t->sim);
	uint64_t h = 1469598103934665603ull;	/* FNV-1a */

	memcpy(t->sn, serial, 20);
	for (unsigned i = 0; i < 20; i++)
		h = (h ^ (uint8_t)serial[i]) * 1099511628211ull;
	be64((uint8_t *)t->nguid, h);
	be64((uint8_t *)t->nguid + 8, h * 1099511628211ull ^ 0x5344);
}

int sedsim_serve_nvme_tcp(const char *dir, uint16_t port, const char *nqn, const char *trace)
{
	FILE *tf = NULL;
	/* Static: detached connection threads may outlive this function's return. */
	static struct target t;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct sigaction sig = { .sa_handler = on_signal };
	int lfd, one = 1, rc;

	if (strlen(nqn) > 223) {
		fprintf(stderr, "sedsim: NQN longer than 223 bytes: give a shorter --nqn\n");
		return 1;
	}
	memset(&t, 0, sizeof(t));
	t.nqn = nqn;
	t.next_cntlid = 1;
	rc = sedsim_open(dir, true, &t.sim);
	if (rc) {
		fprintf(stderr, "sedsim: cannot open %s: %s: create it with `sedsim create`\n", dir,
			strerror(-rc));
		return 2;
	}
	if (trace) {
		tf = fopen(trace, "a");
		if (!tf) {
			fprintf(stderr, "sedsim: cannot open trace file %s: %s\n", trace,
				strerror(errno));
			sedsim_close(t.sim);
			return 2;
		}
		setvbuf(tf, NULL, _IOLBF, 0);
		sedsim_set_trace(t.sim, tf);
	}
	identities(&t);
	pthread_mutex_init(&t.lock, NULL);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 16)) {
		fprintf(stderr, "sedsim: cannot listen on 127.0.0.1:%u: %s: bring up lo or pick another --port\n",
			port, strerror(errno));
		if (lfd >= 0)
			close(lfd);
		sedsim_close(t.sim);
		return 2;
	}
	sigaction(SIGTERM, &sig, NULL);
	sigaction(SIGINT, &sig, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, "sedsim: serving %s on 127.0.0.1:%u as %s\n", dir, port, nqn);
	while (!stop) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		int fd;

		rc = poll(&p, 1, 200);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			start_conn(&t, fd);
	}
	close(lfd);
	/*
	 * Connection threads may still run: take the lock for good so none is
	 * inside the drive, close it, and let the process exit end them.
	 */
	pthread_mutex_lock(&t.lock);
	sedsim_close(t.sim);
	return 0;
}
