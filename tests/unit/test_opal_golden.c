// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opal and sedsim against the bytes the kernel's own sed-opal sent
 * (tests/unit/golden/kernel-6.12, see its README): an implementation that
 * is not ours, so a mistake lib/opal and sedsim share cannot pass here.
 *
 * - Encoder: the same operation done through lib/opal puts the very same
 *   method call on the wire as the kernel did.
 * - Parser: the kernel's calls, replayed byte for byte into sedsim, are
 *   accepted and do what they mean (User1 may then lock range 1).
 *
 * Every PIN in the golden files reads as 32 'x' bytes: the drive here uses
 * that PIN for Admin1 and User1 so the replayed sessions authenticate.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "opal-wire.h"
#include "sedsim.h"

#define BLOCKS 8192
#define MAX_CALLS 16

static const char *golden_dir;
static uint8_t xpin[32];
static const struct opal_key XKEY = { xpin, sizeof(xpin) };

/* One golden file: its requests (tsn 0 = session manager). */
struct golden {
	size_t n;
	uint32_t tsn[MAX_CALLS];
	uint8_t *p[MAX_CALLS];
	size_t len[MAX_CALLS];
};

static void golden_load(const char *name, struct golden *g)
{
	char path[512], line[16384];
	FILE *f;

	memset(g, 0, sizeof(*g));
	snprintf(path, sizeof(path), "%s/%s.hex", golden_dir, name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open %s", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned tsn, hsn;
		char hex[16384];
		size_t n;

		if (line[0] != '>')
			continue;
		assert_int_equal(sscanf(line, "> %u %u %16383s", &tsn, &hsn, hex), 3);
		assert_true(g->n < MAX_CALLS);
		n = strlen(hex) / 2;
		g->p[g->n] = test_malloc(n);
		for (size_t i = 0; i < n; i++) {
			unsigned v;

			assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
			g->p[g->n][i] = (uint8_t)v;
		}
		g->len[g->n] = n;
		g->tsn[g->n] = tsn;
		g->n++;
	}
	fclose(f);
	assert_true(g->n > 0);
}

static void golden_free(struct golden *g)
{
	for (size_t i = 0; i < g->n; i++)
		test_free(g->p[i]);
}

/* The i-th in-session method call (not StartSession, not EndOfSession). */
static size_t golden_call(const struct golden *g, size_t i)
{
	for (size_t k = 0; k < g->n; k++) {
		if (!g->tsn[k] || g->p[k][0] == OPAL_TOK_ENDOFSESSION)
			continue;
		if (i-- == 0)
			return k;
	}
	fail_msg("golden file has too few calls");
	return 0;
}

/* A transport that records the payload of every in-session call it passes on. */
struct rec {
	struct sedsim *sim;
	size_t n;
	uint8_t p[MAX_CALLS][2048];
	size_t len[MAX_CALLS];
};

static int rec_send(void *ctx, uint8_t proto, uint16_t comid, const void *buf, size_t len)
{
	struct rec *r = ctx;
	struct opal_frame f;

	if (proto == 1 && !opal_frame_parse(buf, len, &f) && f.tsn && f.payload_len &&
	    f.payload[0] != OPAL_TOK_ENDOFSESSION && r->n < MAX_CALLS) {
		memcpy(r->p[r->n], f.payload, f.payload_len);
		r->len[r->n++] = f.payload_len;
	}
	return sedsim_if_send(r->sim, proto, comid, buf, len);
}

static int rec_recv(void *ctx, uint8_t proto, uint16_t comid, void *buf, size_t len)
{
	struct rec *r = ctx;

	return sedsim_if_recv(r->sim, proto, comid, buf, len);
}

static const struct opal_transport_ops rec_ops = { "rec", rec_send, rec_recv, NULL, NULL };

struct fx {
	char dir[64];
	struct sedsim *sim;
	struct opal_dev *dev;
	struct rec *rec;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sedsim_config cfg = { .blocks = BLOCKS, .serial = "GOLDEN01", .try_limit = 5 };
	struct opal_range r = { .n = 1, .start = 2048, .length = 2048, .read_lock_enabled = true,
				.write_lock_enabled = true, .lock_on_reset = true };

	memset(xpin, 'x', sizeof(xpin));
	strcpy(f->dir, "/tmp/test_golden.XXXXXX");
	if (!f || !mkdtemp(f->dir) || sedsim_create(f->dir, &cfg) ||
	    sedsim_open(f->dir, true, &f->sim))
		return -1;
	f->rec = calloc(1, sizeof(*f->rec));
	f->rec->sim = f->sim;
	f->dev = opal_dev_new(&rec_ops, f->rec);
	if (!f->dev)
		return -1;
	opal_dev_set_timeout(f->dev, 2000);
	if (opal_take_ownership(f->dev, &XKEY) || opal_activate_locking_sp(f->dev, &XKEY) ||
	    opal_setup_range(f->dev, &XKEY, &r))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	opal_dev_free(f->dev);
	sedsim_close(f->sim);
	free(f->rec);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	free(f);
	return system(cmd) ? -1 : 0;
}

/* The last call lib/opal sent equals call i of the golden file name. */
static void expect_call(struct fx *f, const char *name, size_t i)
{
	struct golden g;
	size_t k;

	golden_load(name, &g);
	k = golden_call(&g, i);
	assert_true(f->rec->n > 0);
	assert_int_equal(f->rec->len[f->rec->n - 1], g.len[k]);
	assert_memory_equal(f->rec->p[f->rec->n - 1], g.p[k], g.len[k]);
	golden_free(&g);
}

/* lib/opal's calls for the operations the kernel ran, byte for byte. */
static void test_encoder_matches_kernel(void **state)
{
	struct fx *f = *state;
	opal_uid a1 = opal_uid_admin(1), u1 = opal_uid_user(1);
	struct opal_ace only_u1 = { 1, { u1 } }, a1_u1 = { 2, { a1, u1 } };
	struct opal_session *s;

	assert_int_equal(opal_admin1_session(f->dev, &XKEY, &s), 0);
	assert_int_equal(opal_user_set_enabled(s, 1, true), 0);
	expect_call(f, "activate-user1", 0);
	assert_int_equal(opal_user_set_pin(s, 1, &XKEY), 0);
	expect_call(f, "set-pw-user1", 0);
	/* IOC_OPAL_ADD_USR_TO_LR: RdLocked or WrLocked := the user, then StartToKey. */
	{
		opal_uid ace = opal_uid_ace(OPAL_ACE_WRLOCKED, 1);

		assert_int_equal(opal_ace_set(s, &ace, &only_u1), 0);
		expect_call(f, "add-user1-lr1-rw", 0);
		ace = opal_uid_ace(OPAL_ACE_GET_RANGE, 1);
		assert_int_equal(opal_ace_set(s, &ace, &a1_u1), 0);
		expect_call(f, "add-user1-lr1-rw", 1);
		ace = opal_uid_ace(OPAL_ACE_RDLOCKED, 1);
		assert_int_equal(opal_ace_set(s, &ace, &only_u1), 0);
		expect_call(f, "add-user1-lr1-ro", 0);
		ace = opal_uid_ace(OPAL_ACE_RDLOCKED, 0);
		assert_int_equal(opal_ace_set(s, &ace, &only_u1), 0);
		expect_call(f, "add-user1-lr0-ro", 0);
		ace = opal_uid_ace(OPAL_ACE_GET_RANGE, 0);
		assert_int_equal(opal_ace_set(s, &ace, &a1_u1), 0);
		expect_call(f, "add-user1-lr0-ro", 1);
	}
	assert_int_equal(opal_end_session(s), 0);
	/* IOC_OPAL_LOCK_UNLOCK as User1. */
	assert_int_equal(opal_lock_session(f->dev, 1, &XKEY, &s), 0);
	assert_int_equal(opal_set_lock(s, 1, OPAL_LOCKED), 0);
	expect_call(f, "lock-unlock-user1-lr1-lk", 0);
	assert_int_equal(opal_set_lock(s, 1, OPAL_UNLOCKED_RW), 0);
	expect_call(f, "lock-unlock-user1-lr1-rw", 0);
	assert_int_equal(opal_end_session(s), 0);
	/* IOC_OPAL_REVERT_LSP with OPAL_PRESERVE: RevertSP[KeepGlobalRangeKey = 1]. */
	assert_int_equal(opal_revert_locking_sp(f->dev, &XKEY, true), 0);
	expect_call(f, "revert-lsp-keep", 0);
}

/*
 * Replay a golden file's requests into sedsim as they were sent: the
 * session manager's StartSession first, then the session's calls with the
 * TSN this drive hands out. Returns the method status of each call.
 */
static void replay(struct fx *f, const char *name, int *status, size_t *n)
{
	struct golden g;
	uint32_t tsn = 0;
	struct opal_token tok[512];

	golden_load(name, &g);
	*n = 0;
	for (size_t k = 0; k < g.n; k++) {
		struct opal_frame fr = { .comid = SEDSIM_BASE_COMID, .hsn = g.tsn[k] ? 65 : 0,
					 .tsn = g.tsn[k] ? tsn : 0 };
		uint8_t out[2048], in[2048];
		struct opal_tokens t = { tok, 0, 512 };
		size_t len = opal_frame_build(out, sizeof(out), &fr, g.p[k], g.len[k]);
		struct opal_frame rf;
		size_t end;

		assert_true(len > 0);
		assert_int_equal(sedsim_if_send(f->sim, 1, SEDSIM_BASE_COMID, out, len), 0);
		assert_int_equal(sedsim_if_recv(f->sim, 1, SEDSIM_BASE_COMID, in, sizeof(in)), 0);
		assert_int_equal(opal_frame_parse(in, sizeof(in), &rf), 0);
		if (g.p[k][0] == OPAL_TOK_ENDOFSESSION) {
			assert_int_equal(rf.payload[0], OPAL_TOK_ENDOFSESSION);
			continue;
		}
		assert_int_equal(opal_tokens_parse(rf.payload, rf.payload_len, &t), 0);
		/* The status list follows the results list (or the call's parameters). */
		end = opal_tok_is(&tok[0], OPAL_TOK_CALL) ? opal_tok_skip(&t, 3) : opal_tok_skip(&t, 0);
		assert_true(end > 0 && end + 2 < t.n);
		status[(*n)++] = (int)tok[end + 2].uint;
		if (!g.tsn[k] && !tok[end + 2].uint)
			tsn = (uint32_t)tok[5].uint;	/* SyncSession HSN TSN */
	}
	golden_free(&g);
}

static void expect_replay_ok(struct fx *f, const char *name)
{
	int st[MAX_CALLS];
	size_t n;

	replay(f, name, st, &n);
	for (size_t i = 0; i < n; i++)
		if (st[i])
			fail_msg("%s: call %zu refused with status 0x%02x", name, i, st[i]);
}

/* sedsim takes the kernel's calls, and they mean what the kernel means. */
static void test_sedsim_accepts_kernel(void **state)
{
	struct fx *f = *state;
	uint8_t blk[SEDSIM_BLOCK];
	struct opal_session *s;
	opal_uid r1 = opal_uid_locking_range(1);
	uint64_t v;

	expect_replay_ok(f, "activate-user1");
	expect_replay_ok(f, "set-pw-user1");
	/* Before the grant, User1 may not lock range 1. */
	assert_int_equal(opal_lock_unlock(f->dev, 1, &XKEY, 1, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	expect_replay_ok(f, "add-user1-lr1-ro");
	expect_replay_ok(f, "add-user1-lr1-rw");
	/* The kernel's lock as User1, then its GET_LR_STATUS as User1. */
	expect_replay_ok(f, "lock-unlock-user1-lr1-lk");
	assert_int_equal(sedsim_read(f->sim, 2048, 1, blk), SEDSIM_IO_LOCKED);
	assert_int_equal(sedsim_read(f->sim, 0, 1, blk), SEDSIM_IO_OK);
	expect_replay_ok(f, "get-lr-status-user1-lr1");
	expect_replay_ok(f, "lock-unlock-user1-lr1-rw");
	assert_int_equal(sedsim_read(f->sim, 2048, 1, blk), SEDSIM_IO_OK);
	/* The ACE the kernel wrote names User1 alone: Admin1 lost lock control. */
	assert_int_equal(opal_admin1_session(f->dev, &XKEY, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &r1, OPAL_COL_WRITE_LOCKED, 1), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_get_column_uint(s, &r1, OPAL_COL_READ_LOCKED, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(opal_end_session(s), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_encoder_matches_kernel, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sedsim_accepts_kernel, setup, teardown),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_opal_golden GOLDEN_DIR\n");
		return 1;
	}
	golden_dir = argv[1];
	return cmocka_run_group_tests(tests, NULL, NULL);
}
