// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/opal operations against the in-process sedsim drive: sessions,
 * ownership, activation, ranges, lock/unlock with real media I/O, TryLimit
 * lockout, LockOnReset, GenKey, MBR shadowing, DataStore, reverts, the
 * Properties exchange and the limits it sets, and the NVMe transport through
 * its libnvme seam.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <libnvme.h>

#include "opal-backend.h"
#include "opal-wire.h"
#include "sedsim.h"

#define BLOCKS 4096

struct fx {
	char dir[64];
	struct sedsim *sim;
	struct opal_dev *dev;
};

static const struct opal_key KEY = { (const uint8_t *)"0123456789abcdef", 16 };
static const struct opal_key BAD = { (const uint8_t *)"wrong-key", 9 };

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sedsim_config cfg = { .blocks = BLOCKS, .serial = "TESTSERIAL01", .try_limit = 3 };

	strcpy(f->dir, "/tmp/test_sedsim.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	if (sedsim_create(f->dir, &cfg) || sedsim_open(f->dir, true, &f->sim))
		return -1;
	f->dev = sedsim_opal_dev(f->sim);
	opal_dev_set_timeout(f->dev, 2000);
	*state = f;
	return f->dev ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	opal_dev_free(f->dev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static void fill(uint8_t *b, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed + i * 7);
}

static uint32_t be32_at(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void own_and_activate(struct fx *f)
{
	assert_int_equal(opal_take_ownership(f->dev, &KEY), 0);
	assert_int_equal(opal_activate_locking_sp(f->dev, &KEY), 0);
}

static void test_factory_msid_and_discovery(void **state)
{
	struct fx *f = *state;
	struct opal_discovery d;
	uint8_t msid[OPAL_PIN_MAX];
	size_t n;
	uint64_t lc;

	assert_int_equal(opal_discovery0(f->dev, &d), 0);
	assert_true(d.opal2 && d.locking && d.geometry && d.datastore);
	assert_int_equal(d.base_comid, SEDSIM_BASE_COMID);
	assert_int_equal(d.locking_flags & OPAL_LF_ENABLED, 0);
	assert_int_equal(opal_get_msid(f->dev, msid, sizeof(msid), &n), 0);
	assert_int_equal(n, 32);
	assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
	assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED_INACTIVE);
	/* Factory SID PIN is the MSID: a session as SID with it works. */
	{
		struct opal_key k = { msid, n };
		struct opal_session *s;

		assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &k,
						    false, &s), 0);
		assert_int_equal(opal_end_session(s), 0);
	}
}

static void test_session_auth(void **state)
{
	struct fx *f = *state;
	struct opal_session *s;
	uint8_t pin[OPAL_PIN_MAX];
	size_t n;

	own_and_activate(f);
	/* Wrong key at StartSession: the TPer says NOT_AUTHORIZED (OPAL_ERR_AUTH), no session. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &BAD, true, &s),
			 OPAL_ERR_AUTH);
	assert_null(s);
	/* Authenticate inside an anonymous session: False, then True. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, NULL, NULL, false, &s), 0);
	{
		opal_uid a1 = opal_uid_admin(1);

		assert_int_equal(opal_authenticate(s, &a1, &BAD), OPAL_ERR_AUTH);
		assert_int_equal(opal_authenticate(s, &a1, &KEY), 0);
	}
	/* Even Admin1 cannot read a PIN other than the MSID's. */
	{
		opal_uid c = opal_uid_c_pin_admin(1);

		assert_int_equal(opal_get_column_bytes(s, &c, OPAL_COL_PIN, pin, sizeof(pin), &n),
				 OPAL_ST_NOT_AUTHORIZED);
	}
	/* Read-only session: Set refused. */
	{
		opal_uid g = opal_uid_locking_range(0);

		assert_int_equal(opal_set_column_uint(s, &g, OPAL_COL_READ_LOCKED, 1),
				 OPAL_ST_NOT_AUTHORIZED);
	}
	assert_int_equal(opal_end_session(s), 0);
	/* Locking SP sessions are refused before activation... after revert. */
	assert_int_equal(opal_revert_tper(f->dev, &KEY), 0);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, NULL, NULL, false, &s),
			 OPAL_ST_INVALID_PARAMETER);
}

static void test_global_lock_unlock_io(void **state)
{
	struct fx *f = *state;
	struct opal_range r = { .n = 0, .read_lock_enabled = true, .write_lock_enabled = true,
				.lock_on_reset = true }, g;
	uint8_t data[8 * SEDSIM_BLOCK], back[8 * SEDSIM_BLOCK];
	struct opal_discovery d;

	fill(data, sizeof(data), 1);
	assert_int_equal(sedsim_write(f->sim, 100, 8, data), SEDSIM_IO_OK);
	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 0, &g), 0);
	assert_true(g.read_lock_enabled && g.write_lock_enabled && g.lock_on_reset);
	assert_false(g.read_locked || g.write_locked);
	assert_int_equal(g.start, 0);	/* the global range: 0 and 0, as drives report it */
	assert_int_equal(g.length, 0);

	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_LOCKED), 0);
	assert_int_equal(sedsim_read(f->sim, 100, 8, back), SEDSIM_IO_LOCKED);
	assert_int_equal(sedsim_write(f->sim, 100, 1, data), SEDSIM_IO_LOCKED);
	assert_int_equal(opal_discovery0(f->dev, &d), 0);
	assert_true(d.locking_flags & OPAL_LF_LOCKED);

	assert_int_equal(opal_lock_unlock(f->dev, 0, &BAD, 0, OPAL_UNLOCKED_RW),
			 OPAL_ERR_AUTH);
	assert_int_equal(sedsim_read(f->sim, 100, 8, back), SEDSIM_IO_LOCKED);

	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RO), 0);
	assert_int_equal(sedsim_read(f->sim, 100, 8, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(sedsim_write(f->sim, 100, 1, data), SEDSIM_IO_LOCKED);

	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(sedsim_write(f->sim, 100, 1, data), SEDSIM_IO_OK);

	/* Power cycle: LockOnReset relocks; the data is still there after unlock. */
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(sedsim_read(f->sim, 100, 8, back), SEDSIM_IO_LOCKED);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(sedsim_read(f->sim, 100, 8, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
}

static void test_ranges(void **state)
{
	struct fx *f = *state;
	struct opal_range r = { .n = 1, .start = 1024, .length = 1024, .read_lock_enabled = true,
				.write_lock_enabled = true, .lock_on_reset = true }, g;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	fill(data, sizeof(data), 9);
	own_and_activate(f);
	for (unsigned n = 1; n <= 8; n++) {
		struct opal_range q = r;

		q.n = n;
		q.start = (n - 1) * 256;
		q.length = 256;
		q.lock_on_reset = n != 8;
		assert_int_equal(opal_setup_range(f->dev, &KEY, &q), 0);
	}
	assert_int_equal(opal_get_range(f->dev, &KEY, 8, &g), 0);
	assert_int_equal(g.start, 7 * 256);
	assert_int_equal(g.length, 256);
	assert_false(g.lock_on_reset);
	/* Overlap with range 1 is refused, and nothing changes. */
	r.n = 2;
	r.start = 96;
	r.length = 16;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_get_range(f->dev, &KEY, 2, &g), 0);
	assert_int_equal(g.start, 256);
	/* Beyond the end of the media. */
	r.start = BLOCKS - 8;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), OPAL_ST_INVALID_PARAMETER);
	/* A ninth range does not exist. */
	assert_int_equal(opal_get_range(f->dev, &KEY, 9, &g), OPAL_ST_INVALID_PARAMETER);

	/* Lock range 3 only: LBA 600 fails, LBA 0 (range 1) works. */
	assert_int_equal(sedsim_write(f->sim, 600, 1, data), SEDSIM_IO_OK);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 3, OPAL_LOCKED), 0);
	assert_int_equal(sedsim_read(f->sim, 600, 1, back), SEDSIM_IO_LOCKED);
	assert_int_equal(sedsim_read(f->sim, 0, 1, back), SEDSIM_IO_OK);
	/* Range 8 has no LockOnReset: a power cycle leaves it unlocked. */
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(sedsim_read(f->sim, 7 * 256, 1, back), SEDSIM_IO_OK);
	assert_int_equal(sedsim_read(f->sim, 0, 1, back), SEDSIM_IO_LOCKED);
	/* GenKey on range 3 destroys its data. */
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 3, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(sedsim_read(f->sim, 600, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(opal_erase_range(f->dev, &KEY, 3), 0);
	assert_int_equal(sedsim_read(f->sim, 600, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, data, sizeof(data));
}

/*
 * Level 0 Discovery's Geometry feature says AlignmentRequired, 8 blocks,
 * lowest aligned LBA 0; a range off that grid is refused and changes
 * nothing, whichever column is off.
 */
static void test_range_alignment(void **state)
{
	struct fx *f = *state;
	struct opal_range r = { .n = 1, .start = 1024, .length = 64 }, g;
	struct opal_session *s;
	opal_uid r1 = opal_uid_locking_range(1);
	uint8_t l0[512];
	const uint8_t *geo = NULL;

	/*
	 * The Geometry descriptor read from the bytes, not through lib/opal's
	 * parser (go-tcg-storage's ReadGeometryFeature: ALIGN byte, 7
	 * reserved, LogicalBlockSize u32, AlignmentGranularity u64,
	 * LowestAlignedLBA u64).
	 */
	assert_int_equal(sedsim_if_recv(f->sim, 1, 1, l0, sizeof(l0)), 0);
	for (size_t off = 48; off + 4 <= 4 + be32_at(l0); off += 4 + l0[off + 3])
		if (l0[off] == 0x00 && l0[off + 1] == 0x03)
			geo = l0 + off;
	assert_non_null(geo);
	assert_int_equal(geo[3], 28);
	assert_int_equal(geo[4] & 1, 1);
	assert_int_equal(be32_at(geo + 12), 512);
	assert_int_equal(be32_at(geo + 16), 0);
	assert_int_equal(be32_at(geo + 20), 8);
	assert_int_equal(be32_at(geo + 24), 0);
	assert_int_equal(be32_at(geo + 28), 0);
	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
	r.start = 1028;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), OPAL_ST_INVALID_PARAMETER);
	r.start = 2048;
	r.length = 60;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), OPAL_ST_INVALID_PARAMETER);
	/* One column alone off the grid. */
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &r1, OPAL_COL_RANGE_LENGTH, 65),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_set_column_uint(s, &r1, OPAL_COL_RANGE_START, 1), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_set_column_uint(s, &r1, OPAL_COL_RANGE_START, 8), 0);
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 1, &g), 0);
	assert_int_equal(g.start, 8);
	assert_int_equal(g.length, 64);
}

static void test_lockout(void **state)
{
	struct fx *f = *state;
	opal_uid c = opal_uid_c_pin_admin(1), u1 = opal_uid_user(1), cu1 = opal_uid_c_pin_user(1);
	struct opal_key ukey = { (const uint8_t *)"user-one", 8 };
	struct opal_session *s;
	uint64_t tries, limit;

	own_and_activate(f);
	for (int i = 0; i < 2; i++)
		assert_int_equal(opal_lock_unlock(f->dev, 0, &BAD, 0, OPAL_UNLOCKED_RW),
				 OPAL_ERR_AUTH);
	/* Tries are not Anybody's to read (ACE_C_PIN_Admins_Get_All_NOPIN)... */
	assert_int_equal(opal_tries_left(f->dev, &OPAL_UID_LOCKINGSP, &c, &tries, &limit),
			 OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_tries_left(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_C_PIN_SID, &tries, &limit),
			 OPAL_ST_NOT_AUTHORIZED);
	/* ... an admin reads them (which resets Admin1's own count: it authenticated). */
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &c, OPAL_COL_TRY_LIMIT, &limit), 0);
	assert_int_equal(limit, 3);
	assert_int_equal(opal_user_set_enabled(s, 1, true), 0);
	assert_int_equal(opal_user_set_pin(s, 1, &ukey), 0);
	/* TryLimit is read-only; no PIN but the MSID's is ever readable. */
	assert_int_equal(opal_set_column_uint(s, &c, OPAL_COL_TRY_LIMIT, 100), OPAL_ST_NOT_AUTHORIZED);
	{
		uint8_t pin[OPAL_PIN_MAX];
		size_t n;

		assert_int_equal(opal_get_column_bytes(s, &cu1, OPAL_COL_PIN, pin, sizeof(pin), &n),
				 OPAL_ST_NOT_AUTHORIZED);
	}
	assert_int_equal(opal_end_session(s), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(opal_lock_unlock(f->dev, 1, &BAD, 0, OPAL_UNLOCKED_RW),
				 OPAL_ERR_AUTH);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &cu1, OPAL_COL_TRIES, &tries), 0);
	assert_int_equal(tries, 3);
	assert_int_equal(opal_end_session(s), 0);
	/* A user reads no C_PIN, not even its own tries. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u1, &ukey, false, &s),
			 OPAL_ST_AUTHORITY_LOCKED_OUT);
	for (int i = 0; i < 3; i++)
		assert_int_equal(opal_lock_unlock(f->dev, 0, &BAD, 0, OPAL_UNLOCKED_RW),
				 OPAL_ERR_AUTH);
	/* Locked out: even the right key fails until a power cycle. */
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RW),
			 OPAL_ST_AUTHORITY_LOCKED_OUT);
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u1, &ukey, false, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &cu1, OPAL_COL_TRIES, &tries), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_end_session(s), 0);
	/* The SID's own tries, in a SID session. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &KEY, false, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_C_PIN_SID, OPAL_COL_TRIES, &tries), 0);
	assert_int_equal(tries, 0);
	assert_int_equal(opal_end_session(s), 0);
}

/* TryLimit 0 is no limit (Core Spec C_PIN): failed tries never lock out. */
static void test_no_try_limit(void **state)
{
	struct fx *f = *state;
	struct sedsim_config cfg = { .blocks = BLOCKS, .serial = "NOLIMIT", .no_try_limit = true };
	char dir[64] = "/tmp/test_sedsim_nolimit.XXXXXX", cmd[128];
	opal_uid c = opal_uid_c_pin_admin(1);
	struct opal_session *s;
	struct sedsim *sim;
	struct opal_dev *dev;
	uint64_t limit, tries;

	(void)f;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sedsim_create(dir, &cfg), 0);
	assert_int_equal(sedsim_open(dir, true, &sim), 0);
	dev = sedsim_opal_dev(sim);
	assert_non_null(dev);
	assert_int_equal(opal_take_ownership(dev, &KEY), 0);
	assert_int_equal(opal_activate_locking_sp(dev, &KEY), 0);
	for (int i = 0; i < 12; i++)
		assert_int_equal(opal_lock_unlock(dev, 0, &BAD, 0, OPAL_UNLOCKED_RW),
				 OPAL_ERR_AUTH);
	assert_int_equal(opal_admin1_session(dev, &KEY, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &c, OPAL_COL_TRY_LIMIT, &limit), 0);
	assert_int_equal(limit, 0);
	assert_int_equal(opal_get_column_uint(s, &c, OPAL_COL_TRIES, &tries), 0);
	assert_int_equal(tries, 0);	/* reset by this session's authentication */
	assert_int_equal(opal_end_session(s), 0);
	opal_dev_free(dev);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_user_ace(void **state)
{
	struct fx *f = *state;
	struct opal_key ukey = { (const uint8_t *)"user-one", 8 };
	opal_uid u1 = opal_uid_user(1), cu1 = opal_uid_c_pin_user(1), ace = opal_uid_ace_rdlocked(0);
	opal_uid a1 = opal_uid_admin(1);
	struct opal_session *s;
	uint8_t mem[256];
	struct opal_buf b;

	own_and_activate(f);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &a1, &KEY, true, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &u1, OPAL_COL_AUTHORITY_ENABLED, 1), 0);
	assert_int_equal(opal_set_column_bytes(s, &cu1, OPAL_COL_PIN, ukey.data, ukey.len), 0);
	assert_int_equal(opal_end_session(s), 0);
	/* User1 is not in the ACE yet. */
	assert_int_equal(opal_lock_unlock(f->dev, 1, &ukey, 0, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	/* Add User1 to ACE_Locking_GlobalRange_Set_RdLocked, as the kernel does. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &a1, &KEY, true, &s), 0);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &ace, &OPAL_M_SET);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 1);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, OPAL_COL_ACE_BOOLEAN_EXPR);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_bytes(&b, OPAL_UID_HALF_AUTHORITY_OBJ_REF.b, 4);
	opal_put_uid(&b, &u1);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	{
		struct opal_resp *r = test_calloc(1, sizeof(*r));

		assert_int_equal(opal_session_call(s, &b, r), 0);
		test_free(r);
	}
	assert_int_equal(opal_end_session(s), 0);
	/* Read lock allowed now; write lock still not (WriteLocked ACE unchanged). */
	assert_int_equal(opal_lock_unlock(f->dev, 1, &ukey, 0, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u1, &ukey, true, &s), 0);
	{
		opal_uid g = opal_uid_locking_range(0);

		assert_int_equal(opal_set_column_uint(s, &g, OPAL_COL_READ_LOCKED, 1), 0);
		assert_int_equal(opal_set_column_uint(s, &g, OPAL_COL_WRITE_LOCKED, 1),
				 OPAL_ST_NOT_AUTHORIZED);
	}
	assert_int_equal(opal_end_session(s), 0);
}

/* ---------------------------------------------------- users and ACEs */

/* The spec's bytes (Opal SSC 2.01, 4.3.1.6; the kernel's add_user_to_lr). */
static void test_ace_uids(void **state)
{
	static const uint8_t g_rd[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe0, 0x00 };
	static const uint8_t r1_rd[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe0, 0x01 };
	static const uint8_t r1_wr[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe8, 0x01 };
	static const uint8_t r8_wr[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe8, 0x08 };
	static const uint8_t r1_get[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xd0, 0x01 };
	opal_uid u;

	(void)state;
	u = opal_uid_ace_rdlocked(0);
	assert_memory_equal(u.b, g_rd, 8);
	u = opal_uid_ace_rdlocked(1);
	assert_memory_equal(u.b, r1_rd, 8);
	u = opal_uid_ace_wrlocked(1);
	assert_memory_equal(u.b, r1_wr, 8);
	u = opal_uid_ace_wrlocked(8);
	assert_memory_equal(u.b, r8_wr, 8);
	u = opal_uid_ace(OPAL_ACE_GET_RANGE, 1);
	assert_memory_equal(u.b, r1_get, 8);
}

/* Range 1 over LBAs [64, 128), range 2 over [128, 192). */
static void two_ranges(struct fx *f)
{
	struct opal_range r = { .n = 1, .start = 64, .length = 64, .read_lock_enabled = true,
				.write_lock_enabled = true, .lock_on_reset = true };

	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
	r.n = 2;
	r.start = 128;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
}

static void enable_user(struct fx *f, unsigned n, const struct opal_key *pin)
{
	struct opal_session *s;
	bool en = true;

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_user_get_enabled(s, n, &en), 0);
	assert_false(en);
	assert_int_equal(opal_user_set_enabled(s, n, true), 0);
	assert_int_equal(opal_user_set_pin(s, n, pin), 0);
	assert_int_equal(opal_user_get_enabled(s, n, &en), 0);
	assert_true(en);
	assert_int_equal(opal_end_session(s), 0);
}

/*
 * Grant User1 range 1: it may lock and unlock range 1 and read its state,
 * not range 2 nor the global range; Admin1 keeps its own control through
 * the Admins class; revoke takes it all back.
 */
static void test_grant_revoke(void **state)
{
	struct fx *f = *state;
	struct opal_key u1key = { (const uint8_t *)"slot-one-pin", 12 };
	opal_uid u1 = opal_uid_user(1);
	struct opal_range_access acc;
	struct opal_session *s;
	uint64_t v;
	uint8_t blk[SEDSIM_BLOCK];

	two_ranges(f);
	enable_user(f, 1, &u1key);
	assert_int_equal(opal_lock_unlock(f->dev, 1, &u1key, 1, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_grant_user(s, 1, 1, true), 0);
	assert_int_equal(opal_grant_user(s, 1, 1, true), 0);	/* idempotent */
	assert_int_equal(opal_range_access(s, 1, &acc), 0);
	assert_int_equal(acc.rdlocked.n, 2);
	assert_true(opal_ace_has(&acc.rdlocked, &OPAL_UID_ADMINS));
	assert_true(opal_ace_has(&acc.rdlocked, &u1));
	assert_int_equal(acc.wrlocked.n, 2);
	assert_int_equal(opal_range_access(s, 2, &acc), 0);
	assert_int_equal(acc.rdlocked.n, 1);
	assert_true(opal_ace_has(&acc.rdlocked, &OPAL_UID_ADMINS));
	assert_int_equal(opal_end_session(s), 0);

	assert_int_equal(opal_lock_unlock(f->dev, 1, &u1key, 1, OPAL_LOCKED), 0);
	assert_int_equal(sedsim_read(f->sim, 64, 1, blk), SEDSIM_IO_LOCKED);
	assert_int_equal(opal_lock_unlock(f->dev, 1, &u1key, 2, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_lock_unlock(f->dev, 1, &u1key, 0, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	/* User1 reads range 1's state (Get_RangeStartToActiveKey), not range 2's. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u1, &u1key, false, &s), 0);
	{
		opal_uid r1 = opal_uid_locking_range(1), r2 = opal_uid_locking_range(2);

		assert_int_equal(opal_get_column_uint(s, &r1, OPAL_COL_READ_LOCKED, &v), 0);
		assert_int_equal(v, 1);
		assert_int_equal(opal_get_column_uint(s, &r2, OPAL_COL_READ_LOCKED, &v),
				 OPAL_ST_NOT_AUTHORIZED);
	}
	assert_int_equal(opal_end_session(s), 0);
	/* Admin1 still unlocks range 1. */
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 1, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(sedsim_read(f->sim, 64, 1, blk), SEDSIM_IO_OK);

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_revoke_user(s, 1, 1), 0);
	assert_int_equal(opal_range_access(s, 1, &acc), 0);
	assert_int_equal(acc.rdlocked.n, 1);
	assert_false(opal_ace_has(&acc.rdlocked, &u1));
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(opal_lock_unlock(f->dev, 1, &u1key, 1, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
}

/* A Set of an ACE's BooleanExpr from raw elements (half-UID, value). */
struct ace_elem {
	bool op;		/* Boolean operator (value = v) or authority (uid) */
	uint64_t v;
	opal_uid uid;
};

static int set_ace_raw(struct fx *f, const uint8_t ace_uid[8], const struct ace_elem *e, size_t n)
{
	struct opal_resp *r = test_calloc(1, sizeof(*r));
	struct opal_session *s;
	uint8_t mem[512];
	struct opal_buf b;
	opal_uid ace;
	int rc;

	memcpy(ace.b, ace_uid, 8);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &ace, &OPAL_M_SET);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 1);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, OPAL_COL_ACE_BOOLEAN_EXPR);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	for (size_t i = 0; i < n; i++) {
		static const uint8_t auth_ref[4] = { 0, 0, 0x0c, 0x05 }, bool_ace[4] = { 0, 0, 0x04, 0x0e };

		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_bytes(&b, e[i].op ? bool_ace : auth_ref, 4);
		if (e[i].op)
			opal_put_uint(&b, e[i].v);
		else
			opal_put_uid(&b, &e[i].uid);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	rc = opal_session_call(s, &b, r);
	test_free(r);
	assert_int_equal(opal_end_session(s), 0);
	return rc;
}

/*
 * The drive side, with UIDs written as the spec prints them: the ACE
 * 00 00 00 08 00 03 E0 01 is range 1's (not the global range's, not range
 * 2's), an admin the ACE does not name may no longer set ReadLocked, and
 * malformed expressions are refused.
 */
static void test_ace_drive_side(void **state)
{
	static const uint8_t r1_rd[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe0, 0x01 };
	static const uint8_t r9_rd[8] = { 0, 0, 0, 0x08, 0, 0x03, 0xe0, 0x09 };
	struct fx *f = *state;
	struct opal_key u2key = { (const uint8_t *)"user-two", 8 };
	struct ace_elem only_u2[] = { { .uid = opal_uid_user(2) } };
	struct ace_elem and_expr[] = { { .uid = opal_uid_user(2) }, { .uid = opal_uid_admin(1) },
				       { .op = true, .v = 0 } };
	struct ace_elem no_op[] = { { .uid = opal_uid_user(2) }, { .uid = opal_uid_admin(1) } };
	struct ace_elem op_first[] = { { .op = true, .v = 1 }, { .uid = opal_uid_user(2) } };
	struct ace_elem sid[] = { { .uid = OPAL_UID_SID } };
	struct ace_elem or_expr[] = { { .uid = opal_uid_user(2) }, { .uid = opal_uid_admin(1) },
				      { .op = true, .v = 1 } };
	struct opal_session *s;
	opal_uid rng1 = opal_uid_locking_range(1);

	two_ranges(f);
	enable_user(f, 2, &u2key);
	assert_int_equal(set_ace_raw(f, r1_rd, only_u2, 1), 0);
	assert_int_equal(opal_lock_unlock(f->dev, 2, &u2key, 2, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_lock_unlock(f->dev, 2, &u2key, 0, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	/* Read lock of range 1 as User2: allowed; write lock: Admins only still. */
	{
		opal_uid u2 = opal_uid_user(2);

		assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &u2key, true, &s), 0);
		assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_READ_LOCKED, 1), 0);
		assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_WRITE_LOCKED, 1),
				 OPAL_ST_NOT_AUTHORIZED);
		assert_int_equal(opal_end_session(s), 0);
	}
	/* Admin1 is not in range 1's RdLocked ACE any more: refused. */
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_READ_LOCKED, 0), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_WRITE_LOCKED, 0), 0);
	assert_int_equal(opal_end_session(s), 0);
	/* Malformed or unsupported expressions, and an ACE past the last range. */
	assert_int_equal(set_ace_raw(f, r1_rd, and_expr, 3), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_ace_raw(f, r1_rd, no_op, 2), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_ace_raw(f, r1_rd, op_first, 2), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_ace_raw(f, r1_rd, sid, 1), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_ace_raw(f, r9_rd, only_u2, 1), OPAL_ST_INVALID_PARAMETER);
	/* User2 OR Admin1 (postfix): both may set ReadLocked again. */
	assert_int_equal(set_ace_raw(f, r1_rd, or_expr, 3), 0);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 1, OPAL_UNLOCKED_RW), 0);
	{
		opal_uid u2 = opal_uid_user(2);

		assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &u2key, true, &s), 0);
		assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_READ_LOCKED, 1), 0);
		assert_int_equal(opal_end_session(s), 0);
	}
}

static void test_mbr_shadow(void **state)
{
	struct fx *f = *state;
	uint8_t img[3 * SEDSIM_BLOCK], back[SEDSIM_BLOCK], data[SEDSIM_BLOCK];
	struct opal_mbr_state m;

	fill(img, sizeof(img), 3);
	fill(data, sizeof(data), 77);
	assert_int_equal(sedsim_write(f->sim, 1, 1, data), SEDSIM_IO_OK);
	own_and_activate(f);
	assert_int_equal(opal_mbr_write(f->dev, &KEY, 0, img, sizeof(img)), 0);
	assert_int_equal(opal_mbr_set(f->dev, &KEY, 1, 0), 0);
	assert_int_equal(opal_mbr_get(f->dev, &KEY, &m), 0);
	assert_true(m.enable && !m.done);
	/* Shadowed: LBA 1 reads the shadow MBR, writes fail. */
	assert_int_equal(sedsim_read(f->sim, 1, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, img + SEDSIM_BLOCK, SEDSIM_BLOCK);
	assert_int_equal(sedsim_write(f->sim, 1, 1, data), SEDSIM_IO_LOCKED);
	/* Done: the real media again. */
	assert_int_equal(opal_mbr_set(f->dev, &KEY, -1, 1), 0);
	assert_int_equal(sedsim_read(f->sim, 1, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, SEDSIM_BLOCK);
	/* MBRDoneOnReset: shadowed again after a power cycle. */
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(sedsim_read(f->sim, 1, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, img + SEDSIM_BLOCK, SEDSIM_BLOCK);
}

/* Bytes the file at dir/name really occupies on disk. */
static uint64_t allocated(const struct fx *f, const char *name, uint64_t *size)
{
	char path[128];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", f->dir, name);
	assert_int_equal(stat(path, &sb), 0);
	*size = (uint64_t)sb.st_size;
	return (uint64_t)sb.st_blocks * 512;
}

/*
 * The shadow MBR is as large as real drives have it (128 MiB), the
 * DataStore 10 MiB, both announced in their Table rows; their files stay
 * sparse when written far in and are emptied by truncation on Revert.
 */
static void test_byte_tables_sized_and_sparse(void **state)
{
	struct fx *f = *state;
	uint8_t img[4096], back[4096];
	struct opal_session *s;
	uint64_t v, size;
	char path[128];
	int fd;

	assert_true(allocated(f, "mbr", &size) < (1u << 20));
	assert_int_equal(size, 128u << 20);
	assert_true(allocated(f, "datastore", &size) < (1u << 20));
	assert_int_equal(size, 10u << 20);
	own_and_activate(f);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_TABLE_MBR, OPAL_COL_TABLE_ROWS, &v), 0);
	assert_int_equal(v, 128u << 20);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_TABLE_MBR, 13, &v), 0);	/* MandatoryWriteGranularity */
	assert_int_equal(v, 1);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_TABLE_MBR, 14, &v), 0);	/* RecommendedAccessGranularity */
	assert_int_equal(v, SEDSIM_BLOCK);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_TABLE_DATASTORE, OPAL_COL_TABLE_ROWS, &v), 0);
	assert_int_equal(v, 10u << 20);
	assert_int_equal(opal_end_session(s), 0);
	/* The last 4 KiB of the table: written, and the file still sparse. */
	fill(img, sizeof(img), 13);
	assert_int_equal(opal_mbr_write(f->dev, &KEY, (128u << 20) - sizeof(img), img, sizeof(img)), 0);
	assert_int_equal(opal_mbr_write(f->dev, &KEY, 128u << 20, img, 1), OPAL_ST_INVALID_PARAMETER);
	assert_true(allocated(f, "mbr", &size) < (1u << 20));
	snprintf(path, sizeof(path), "%s/mbr", f->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, back, sizeof(back), (128 << 20) - sizeof(back)), sizeof(back));
	assert_memory_equal(back, img, sizeof(img));
	/* Revert empties it by truncation: zeroes, nothing allocated. */
	assert_int_equal(opal_revert_tper(f->dev, &KEY), 0);
	assert_int_equal(pread(fd, back, sizeof(back), (128 << 20) - sizeof(back)), sizeof(back));
	close(fd);
	memset(img, 0, sizeof(img));
	assert_memory_equal(back, img, sizeof(img));
	assert_true(allocated(f, "mbr", &size) < 64 * 1024);
	assert_int_equal(size, 128u << 20);
}

static void test_datastore_random(void **state)
{
	struct fx *f = *state;
	uint8_t in[3000], out[3000], r1[48], r2[48];

	fill(in, sizeof(in), 5);
	own_and_activate(f);
	assert_int_equal(opal_datastore_write(f->dev, &KEY, 100, in, sizeof(in)), 0);
	assert_int_equal(opal_datastore_read(f->dev, &KEY, 100, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(opal_datastore_read(f->dev, &BAD, 100, out, 10), OPAL_ERR_AUTH);
	assert_int_equal(opal_datastore_write(f->dev, &KEY, SEDSIM_DATASTORE_SIZE - 1, in, 2),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_random(f->dev, r1, sizeof(r1)), 0);
	assert_int_equal(opal_random(f->dev, r2, sizeof(r2)), 0);
	assert_memory_not_equal(r1, r2, sizeof(r1));
}

static void test_reverts(void **state)
{
	struct fx *f = *state;
	struct opal_range r = { .n = 0, .read_lock_enabled = true, .write_lock_enabled = true };
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK], ds[16];
	char psid[64];
	struct opal_key pk;
	uint64_t lc;

	fill(data, sizeof(data), 11);
	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
	assert_int_equal(sedsim_write(f->sim, 10, 1, data), SEDSIM_IO_OK);
	assert_int_equal(opal_datastore_write(f->dev, &KEY, 0, "secretsecret", 12), 0);

	/* RevertSP: Locking SP back to Manufactured-Inactive, data gone, SID kept. */
	assert_int_equal(opal_revert_locking_sp(f->dev, &KEY, false), 0);
	assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
	assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED_INACTIVE);
	assert_int_equal(sedsim_read(f->sim, 10, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, data, sizeof(data));
	assert_int_equal(opal_activate_locking_sp(f->dev, &KEY), 0);
	assert_int_equal(opal_datastore_read(f->dev, &KEY, 0, ds, 12), 0);
	assert_memory_not_equal(ds, "secretsecret", 12);

	/* Revert as SID with a wrong key fails; with the right one, factory state. */
	assert_int_equal(opal_revert_tper(f->dev, &BAD), OPAL_ERR_AUTH);
	assert_int_equal(opal_revert_tper(f->dev, &KEY), 0);
	assert_int_equal(opal_take_ownership(f->dev, &KEY), 0);	/* SID = MSID again */

	/* PSID revert with the label's PSID. */
	assert_int_equal(opal_activate_locking_sp(f->dev, &KEY), 0);
	assert_int_equal(sedsim_write(f->sim, 10, 1, data), SEDSIM_IO_OK);
	assert_int_equal(sedsim_read_psid(f->dir, psid, sizeof(psid)), 0);
	pk.data = (const uint8_t *)psid;
	pk.len = strlen(psid);
	assert_int_equal(opal_psid_revert(f->dev, &BAD), OPAL_ERR_AUTH);
	assert_int_equal(opal_psid_revert(f->dev, &pk), 0);
	assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
	assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED_INACTIVE);
	assert_int_equal(sedsim_read(f->sim, 10, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, data, sizeof(data));
}

/*
 * A call's payload exactly as the kernel's sed-opal sent it: RevertSP
 * with KeepGlobalRangeKey (tests/unit/golden/kernel-6.12/revert-lsp-keep.hex
 * and revert-lsp.hex), sent in an Admin1 session. The TPer ends the
 * session after a successful RevertSP.
 */
static const char REVERTSP_KEEP[] = "f8a80000000000000001a80000000600000011f0f28306000001f3f1f9f0000000f1";
static const char REVERTSP_NOKEEP[] = "f8a80000000000000001a80000000600000011f0f28306000000f3f1f9f0000000f1";

/* One call in a session: its method status (or a lib/opal error). */
static int call_status(struct opal_session *s, struct opal_buf *b)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	assert_non_null(r);
	rc = opal_session_call(s, b, r);
	free(r);
	return rc;
}

static int call_hex(struct opal_session *s, const char *hex)
{
	uint8_t mem[256];
	struct opal_buf b;

	opal_buf_init(&b, mem, sizeof(mem));
	for (size_t i = 0; hex[2 * i]; i++) {
		unsigned v;

		assert_int_equal(sscanf(hex + 2 * i, "%2x", &v), 1);
		mem[i] = (uint8_t)v;
		b.len = i + 1;
	}
	return call_status(s, &b);
}

static int revertsp_hex(struct fx *f, const char *hex)
{
	struct opal_session *s;
	int rc;

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	rc = call_hex(s, hex);
	if (rc)
		assert_int_equal(opal_end_session(s), 0);
	else
		free(s);	/* the TPer ended it: nothing to send */
	return rc;
}

/*
 * RevertSP honours KeepGlobalRangeKey: the global range keeps its key and
 * data, the other ranges are reverted and rekeyed; refused while the
 * global range is locked; a later Admin SP Revert leaves the kept data.
 */
static void test_revertsp_keep(void **state)
{
	struct fx *f = *state;
	struct opal_range g = { .n = 0, .read_lock_enabled = true, .write_lock_enabled = true };
	uint8_t d0[SEDSIM_BLOCK], d1[SEDSIM_BLOCK], back[SEDSIM_BLOCK];
	uint64_t lc;

	fill(d0, sizeof(d0), 31);
	fill(d1, sizeof(d1), 47);
	two_ranges(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &g), 0);
	assert_int_equal(sedsim_write(f->sim, 8, 1, d0), SEDSIM_IO_OK);	/* global range */
	assert_int_equal(sedsim_write(f->sim, 64, 1, d1), SEDSIM_IO_OK);	/* range 1 */
	/* Global range read- and write-locked: FAIL, nothing changes (Opal SSC 5.1.3). */
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_LOCKED), 0);
	assert_int_equal(revertsp_hex(f, REVERTSP_KEEP), OPAL_ST_FAIL);
	assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
	assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED);
	/* Read-unlocked (still write-locked) is enough to keep the key. */
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RO), 0);
	/* Malformed: KeepGlobalRangeKey 2, an unknown parameter. */
	assert_int_equal(revertsp_hex(f, "f8a80000000000000001a80000000600000011f0f28306000002f3f1f9f0000000f1"),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(revertsp_hex(f, "f8a80000000000000001a80000000600000011f0f28306000101f3f1f9f0000000f1"),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(revertsp_hex(f, REVERTSP_KEEP), 0);
	assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
	assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED_INACTIVE);
	assert_int_equal(sedsim_read(f->sim, 8, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, d0, sizeof(d0));
	assert_int_equal(sedsim_read(f->sim, 64, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, d1, sizeof(d1));
	/* The Admin SP's Revert of a drive whose Locking SP is inactive keeps it too. */
	assert_int_equal(opal_revert_tper(f->dev, &KEY), 0);
	assert_int_equal(sedsim_read(f->sim, 8, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, d0, sizeof(d0));
	/* Without keep (the kernel sends KeepGlobalRangeKey = 0): the global range too. */
	own_and_activate(f);
	assert_int_equal(revertsp_hex(f, REVERTSP_NOKEEP), 0);
	assert_int_equal(sedsim_read(f->sim, 8, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, d0, sizeof(d0));
}

/*
 * Erase of a locking range: a new key (the data is gone), the locking of
 * the range reset (enabled and locked flags False), its place kept.
 */
static void test_erase_method(void **state)
{
	struct fx *f = *state;
	uint8_t d1[SEDSIM_BLOCK], back[SEDSIM_BLOCK], mem[64];
	opal_uid r1 = opal_uid_locking_range(1);
	struct opal_session *s;
	struct opal_range r;
	struct opal_buf b;

	fill(d1, sizeof(d1), 5);
	two_ranges(f);
	assert_int_equal(sedsim_write(f->sim, 64, 1, d1), SEDSIM_IO_OK);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 1, OPAL_LOCKED), 0);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &r1, &OPAL_M_ERASE);
	opal_put_uint(&b, 1);		/* Erase takes no parameters */
	opal_put_call_end(&b, 0);
	assert_int_equal(call_status(s, &b), OPAL_ST_INVALID_PARAMETER);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &r1, &OPAL_M_ERASE);
	opal_put_call_end(&b, 0);
	assert_int_equal(call_status(s, &b), 0);
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 1, &r), 0);
	assert_int_equal(r.start, 64);
	assert_int_equal(r.length, 64);
	assert_false(r.read_lock_enabled || r.write_lock_enabled || r.read_locked || r.write_locked);
	assert_int_equal(sedsim_read(f->sim, 64, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, d1, sizeof(d1));
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(sedsim_read(f->sim, 64, 1, back), SEDSIM_IO_OK);
}

/* ------------------------------------------- Next, GetACL, byte reads */

static const uint8_t LOCKING_TABLE[8] = { 0, 0, 0x08, 0x02, 0, 0, 0, 0 };
static const uint8_t ACCESS_CONTROL[8] = { 0, 0, 0, 0x07, 0, 0, 0, 0 };
static const uint8_t M_NEXT[8] = { 0, 0, 0, 0x06, 0, 0, 0, 0x08 };
static const uint8_t M_GETACL[8] = { 0, 0, 0, 0x06, 0, 0, 0, 0x0d };

/*
 * One call (invoking, method, parameters as raw bytes); its status, and
 * the reply's payload must begin with want (want_len bytes) when given.
 */
static int raw_call(struct opal_session *s, const uint8_t inv[8], const uint8_t meth[8],
		    const uint8_t *params, size_t plen, const uint8_t *want, size_t want_len)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	uint8_t mem[256];
	struct opal_buf b;
	opal_uid i, m;
	int rc;

	assert_non_null(r);
	memcpy(i.b, inv, 8);
	memcpy(m.b, meth, 8);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &i, &m);
	assert_true(b.len + plen < sizeof(mem));
	memcpy(mem + b.len, params, plen);
	b.len += plen;
	opal_put_call_end(&b, 0);
	rc = opal_session_call(s, &b, r);
	if (!rc && want) {
		assert_true(r->raw_len >= want_len);
		assert_memory_equal(r->raw, want, want_len);
	}
	free(r);
	return rc;
}

#define ROW(n) 0xa8, 0, 0, 0x08, 0x02, 0, (n) ? 0x03 : 0, 0, (n) ? (n) : 1
#define ACE(b6, b7) 0xa8, 0, 0, 0, 0x08, 0, 0x03, b6, b7

/* Next enumerates the Locking table's rows, as independent tools do. */
static void test_next_locking_table(void **state)
{
	struct fx *f = *state;
	static const uint8_t all[] = { 0xf0, 0xf0, ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5),
				       ROW(6), ROW(7), ROW(8), 0xf1, 0xf1, 0xf9, 0xf0, 0, 0, 0, 0xf1 };
	static const uint8_t two[] = { 0xf0, 0xf0, ROW(1), ROW(2), 0xf1, 0xf1, 0xf9, 0xf0, 0, 0, 0, 0xf1 };
	static const uint8_t none[] = { 0xf0, 0xf0, 0xf1, 0xf1, 0xf9, 0xf0, 0, 0, 0, 0xf1 };
	/* Where = global range, Count = 2; Where = range 8; Where = MBRControl. */
	static const uint8_t p_two[] = { 0xf2, 0x00, 0xa8, 0, 0, 0x08, 0x02, 0, 0, 0, 1, 0xf3,
					 0xf2, 0x01, 0x02, 0xf3 };
	static const uint8_t p_last[] = { 0xf2, 0x00, 0xa8, 0, 0, 0x08, 0x02, 0, 0x03, 0, 8, 0xf3 };
	static const uint8_t p_bad_where[] = { 0xf2, 0x00, 0xa8, 0, 0, 0x08, 0x03, 0, 0, 0, 1, 0xf3 };
	static const uint8_t p_bad_name[] = { 0xf2, 0x02, 0x01, 0xf3 };
	struct opal_session *s;

	own_and_activate(f);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, NULL, NULL, false, &s), 0);
	assert_int_equal(raw_call(s, LOCKING_TABLE, M_NEXT, NULL, 0, all, sizeof(all)), 0);
	assert_int_equal(raw_call(s, LOCKING_TABLE, M_NEXT, p_two, sizeof(p_two), two, sizeof(two)), 0);
	assert_int_equal(raw_call(s, LOCKING_TABLE, M_NEXT, p_last, sizeof(p_last), none, sizeof(none)), 0);
	assert_int_equal(raw_call(s, LOCKING_TABLE, M_NEXT, p_bad_where, sizeof(p_bad_where), NULL, 0),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(raw_call(s, LOCKING_TABLE, M_NEXT, p_bad_name, sizeof(p_bad_name), NULL, 0),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_end_session(s), 0);
}

/* GetACL: the ACE UIDs of an (object, method) pair, as the SSC preconfigures them. */
static void test_getacl(void **state)
{
	struct fx *f = *state;
	static const uint8_t r1_set[] = { 0xa8, 0, 0, 0x08, 0x02, 0, 0x03, 0, 0x01,
					  0xa8, 0, 0, 0, 0x06, 0, 0, 0, 0x17 };
	static const uint8_t r1_set_acl[] = { 0xf0, 0xf0, ACE(0xf0, 0x01), ACE(0xe0, 0x01),
					      ACE(0xe8, 0x01), 0xf1, 0xf1, 0xf9, 0xf0, 0, 0, 0, 0xf1 };
	static const uint8_t g_set[] = { 0xa8, 0, 0, 0x08, 0x02, 0, 0, 0, 0x01,
					 0xa8, 0, 0, 0, 0x06, 0, 0, 0, 0x17 };
	static const uint8_t g_set_acl[] = { 0xf0, 0xf0, ACE(0xf0, 0x00), ACE(0xe0, 0x00),
					     ACE(0xe8, 0x00), 0xf1, 0xf1 };
	static const uint8_t g_get[] = { 0xa8, 0, 0, 0x08, 0x02, 0, 0, 0, 0x01,
					 0xa8, 0, 0, 0, 0x06, 0, 0, 0, 0x16 };
	static const uint8_t g_get_acl[] = { 0xf0, 0xf0, ACE(0xd0, 0x00), 0xf1, 0xf1 };
	static const uint8_t u2_pin[] = { 0xa8, 0, 0, 0, 0x0b, 0, 0x03, 0, 0x02,
					  0xa8, 0, 0, 0, 0x06, 0, 0, 0, 0x17 };
	static const uint8_t u2_pin_acl[] = { 0xf0, 0xf0, ACE(0xa8, 0x02), 0xf1, 0xf1 };
	static const uint8_t next[] = { 0xa8, 0, 0, 0x08, 0x02, 0, 0, 0, 0,
					0xa8, 0, 0, 0, 0x06, 0, 0, 0, 0x08 };
	static const uint8_t next_acl[] = { 0xf0, 0xf0, 0xa8, 0, 0, 0, 0x08, 0, 0, 0, 0x01, 0xf1, 0xf1 };
	static const uint8_t r1_random[] = { 0xa8, 0, 0, 0x08, 0x02, 0, 0x03, 0, 0x01,
					     0xa8, 0, 0, 0, 0x06, 0, 0, 0x06, 0x01 };
	struct opal_session *s;

	own_and_activate(f);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, NULL, NULL, false, &s), 0);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, r1_set, sizeof(r1_set), r1_set_acl,
				  sizeof(r1_set_acl)), 0);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, g_set, sizeof(g_set), g_set_acl,
				  sizeof(g_set_acl)), 0);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, g_get, sizeof(g_get), g_get_acl,
				  sizeof(g_get_acl)), 0);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, u2_pin, sizeof(u2_pin), u2_pin_acl,
				  sizeof(u2_pin_acl)), 0);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, next, sizeof(next), next_acl,
				  sizeof(next_acl)), 0);
	/* No ACL for a method the object does not have; one parameter is not enough. */
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, r1_random, sizeof(r1_random), NULL, 0),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(raw_call(s, ACCESS_CONTROL, M_GETACL, r1_set, 9, NULL, 0),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_end_session(s), 0);
}

/* A Get of bytes [first, last] of a byte table: its status, and the data's atom header. */
static int get_bytes(struct opal_session *s, const opal_uid *table, uint64_t first, uint64_t last,
		     size_t *got)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	uint8_t mem[128];
	struct opal_buf b;
	int rc;

	assert_non_null(r);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, table, &OPAL_M_GET);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_named_uint(&b, 1, first);	/* startRow */
	opal_put_named_uint(&b, 2, last);	/* endRow */
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_call_end(&b, 0);
	rc = opal_session_call(s, &b, r);
	*got = 0;
	if (!rc && r->raw_len > 3 && r->raw[0] == 0xf0 && (r->raw[1] & 0xf8) == 0xd0)
		*got = ((size_t)(r->raw[1] & 0x07) << 8) | r->raw[2];	/* medium atom */
	free(r);
	return rc;
}

/*
 * A Get of a byte table returns as much as the ComPacket limit allows
 * (2048 - 56 bytes of headers - 10 of reply tokens = 1982 bytes), and the
 * limit follows the host's MaxComPacketSize from Properties. The MBR and
 * MBRControl are readable by anybody, the DataStore by admins only.
 */
static void test_table_get_limits(void **state)
{
	struct fx *f = *state;
	const struct opal_host_props small = { 1024, 1024, 1004, 968, 1, 1, 1 };
	struct opal_props *p = calloc(1, sizeof(*p));
	struct opal_session *s;
	size_t got;
	uint64_t v;

	assert_non_null(p);
	own_and_activate(f);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(get_bytes(s, &OPAL_UID_DATASTORE, 0, 1975, &got), 0);
	assert_int_equal(got, 1976);
	assert_int_equal(get_bytes(s, &OPAL_UID_MBR, 100, 100 + 1981, &got), 0);
	assert_int_equal(got, 1982);
	assert_int_equal(get_bytes(s, &OPAL_UID_MBR, 0, 1982, &got), OPAL_ST_RESPONSE_OVERFLOW);
	assert_int_equal(opal_end_session(s), 0);
	/* Anybody reads the MBR and MBRControl, not the DataStore; LockingInfo's alignment. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, NULL, NULL, false, &s), 0);
	assert_int_equal(get_bytes(s, &OPAL_UID_MBR, 0, 511, &got), 0);
	assert_int_equal(got, 512);
	assert_int_equal(get_bytes(s, &OPAL_UID_DATASTORE, 0, 511, &got), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE, &v), 0);
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_LOCKING_INFO, 7, &v), 0);
	assert_int_equal(v, 1);		/* AlignmentRequired */
	assert_int_equal(opal_get_column_uint(s, &OPAL_UID_LOCKING_INFO, 9, &v), 0);
	assert_int_equal(v, 8);		/* AlignmentGranularity */
	assert_int_equal(opal_end_session(s), 0);
	/* A host that takes 1 KiB: 1024 - 56 - 10 = 958 bytes. */
	assert_int_equal(opal_properties(f->dev, &small, p), 0);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(get_bytes(s, &OPAL_UID_MBR, 0, 957, &got), 0);
	assert_int_equal(got, 958);
	assert_int_equal(get_bytes(s, &OPAL_UID_MBR, 0, 958, &got), OPAL_ST_RESPONSE_OVERFLOW);
	assert_int_equal(opal_end_session(s), 0);
	free(p);
}

/* Set a reset list column (LockOnReset, DoneOnReset) to vals; its status. */
static int set_reset_list(struct fx *f, const opal_uid *obj, unsigned col, const uint64_t *vals,
			  size_t n, bool bytes)
{
	struct opal_session *s;
	uint8_t mem[128];
	struct opal_buf b;
	int rc;

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, obj, &OPAL_M_SET);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 1);		/* Values */
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, col);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	for (size_t i = 0; i < n; i++)
		opal_put_uint(&b, vals[i]);
	if (bytes)
		opal_put_bytes(&b, "\0", 1);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	rc = call_status(s, &b);
	assert_int_equal(opal_end_session(s), 0);
	return rc;
}

/*
 * LockOnReset and DoneOnReset take the sets the Opal SSC allows (4.3.5.2.2,
 * 4.3.5.3.1) that this drive has: { }, { 0 } and { 0, 1 } (Hardware Reset,
 * optional in the SSC) in either order. Programmatic (no TPER_RESET here),
 * HotPlug, Hardware Reset without Power Cycle, a repeated type, a type past
 * 31 or a non-integer are refused, and change nothing.
 */
static void test_reset_lists(void **state)
{
	struct fx *f = *state;
	opal_uid g = opal_uid_locking_range(0);
	static const uint64_t pc[] = { 0 }, prog[] = { 0, 3 }, hw[] = { 1 }, twice[] = { 0, 0 },
			      pc_hw[] = { 0, 1 }, hw_pc[] = { 1, 0 }, all[] = { 0, 1, 3 },
			      hotplug[] = { 0, 2 }, big[] = { 0, 33 }, hw_twice[] = { 0, 1, 1 };
	struct opal_range r;
	struct opal_mbr_state m;
	struct opal_discovery d;

	own_and_activate(f);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, NULL, 0, false), 0);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, prog, 2, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, hw, 1, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, twice, 2, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, all, 3, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, hotplug, 2, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, big, 2, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, hw_twice, 3, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, pc, 1, true),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(opal_get_range(f->dev, &KEY, 0, &r), 0);
	assert_false(r.lock_on_reset);
	assert_int_equal(r.lock_on_reset_types, 0);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, pc, 1, false), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 0, &r), 0);
	assert_true(r.lock_on_reset);
	assert_int_equal(r.lock_on_reset_types, OPAL_RESET_POWER_CYCLE);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, hw_pc, 2, false), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 0, &r), 0);
	assert_int_equal(r.lock_on_reset_types, OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE);
	assert_int_equal(set_reset_list(f, &g, OPAL_COL_LOCK_ON_RESET, pc_hw, 2, false), 0);
	assert_int_equal(set_reset_list(f, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE_ON_RESET, prog, 2,
					false), OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(f, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE_ON_RESET, NULL, 0,
					false), 0);
	assert_int_equal(set_reset_list(f, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE_ON_RESET, pc_hw, 2,
					false), 0);
	assert_int_equal(opal_mbr_get(f->dev, &KEY, &m), 0);
	/* Level 0: Locking feature version 3, HW Reset for LOR/DOR Supported. */
	assert_int_equal(opal_discovery0(f->dev, &d), 0);
	assert_true(d.lock_on_reset_hw);
	assert_true(d.locking_flags & 0x80);
}

/* A second drive, in its own directory under the fixture's, with cfg. */
static struct opal_dev *other_drive(struct fx *f, const char *name,
				    const struct sedsim_config *cfg, struct sedsim **sim)
{
	char dir[128];
	struct opal_dev *dev;

	snprintf(dir, sizeof(dir), "%s/%s", f->dir, name);
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(sedsim_create(dir, cfg), 0);
	assert_int_equal(sedsim_open(dir, true, sim), 0);
	dev = sedsim_opal_dev(*sim);
	assert_non_null(dev);
	opal_dev_set_timeout(dev, 2000);
	return dev;
}

/*
 * A TCG Hardware Reset locks the ranges whose LockOnReset holds Hardware
 * Reset and leaves those with Power Cycle alone unlocked; MBR Done clears
 * when DoneOnReset holds it; open sessions end. A power cycle then locks
 * both ranges, as before.
 */
static void test_hw_reset(void **state)
{
	struct fx *f = *state;
	struct opal_range hw = { .n = 1, .start = 0, .length = 256, .read_lock_enabled = true,
				 .write_lock_enabled = true, .lock_on_reset = true,
				 .lock_on_reset_types = OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE };
	struct opal_range pc = { .n = 2, .start = 256, .length = 256, .read_lock_enabled = true,
				 .write_lock_enabled = true, .lock_on_reset = true }, g;
	static const uint64_t pc_hw[] = { 0, 1 };
	uint8_t back[SEDSIM_BLOCK];
	struct opal_mbr_state m;
	struct opal_session *s;

	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &hw), 0);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &pc), 0);
	assert_int_equal(opal_get_range(f->dev, &KEY, 1, &g), 0);
	assert_int_equal(g.lock_on_reset_types, OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE);
	assert_int_equal(opal_get_range(f->dev, &KEY, 2, &g), 0);
	assert_int_equal(g.lock_on_reset_types, OPAL_RESET_POWER_CYCLE);
	assert_int_equal(set_reset_list(f, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE_ON_RESET, pc_hw, 2,
					false), 0);
	assert_int_equal(opal_mbr_set(f->dev, &KEY, -1, 1), 0);
	assert_int_equal(sedsim_read(f->sim, 0, 1, back), SEDSIM_IO_OK);
	assert_int_equal(sedsim_read(f->sim, 256, 1, back), SEDSIM_IO_OK);

	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(sedsim_hw_reset(f->sim), 0);
	/* The session ended with the reset: the drive no longer knows it. */
	assert_int_not_equal(opal_range_read(s, 1, &g), 0);
	(void)opal_end_session(s);	/* frees it; the TPer has nothing to end */
	assert_int_equal(sedsim_read(f->sim, 0, 1, back), SEDSIM_IO_LOCKED);
	assert_int_equal(sedsim_read(f->sim, 256, 1, back), SEDSIM_IO_OK);
	assert_int_equal(opal_mbr_get(f->dev, &KEY, &m), 0);
	assert_false(m.done);

	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(sedsim_read(f->sim, 256, 1, back), SEDSIM_IO_LOCKED);
}

/*
 * Firmware with Power Cycle alone (--lock-on-reset power-cycle) refuses a
 * set with Hardware Reset, in LockOnReset and DoneOnReset, clears the
 * Locking feature's HW Reset bit, and keeps being so when reopened. The
 * protocol backend's range setup then falls back to { Power Cycle }.
 */
static void test_no_hw_reset_firmware(void **state)
{
	struct fx *f = *state;
	struct sedsim_config cfg = { .blocks = BLOCKS, .serial = "PCONLY", .try_limit = 3,
				     .no_hw_reset = true };
	static const uint64_t pc_hw[] = { 0, 1 };
	struct opal_range r = { .n = 1, .start = 0, .length = 256, .read_lock_enabled = true,
				.write_lock_enabled = true, .lock_on_reset = true,
				.lock_on_reset_types = OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE };
	struct opal_range back;
	struct opal_backend be;
	struct opal_discovery d;
	struct sedsim *sim;
	struct opal_dev *dev = other_drive(f, "pconly", &cfg, &sim);
	opal_uid g = opal_uid_locking_range(0);
	struct fx other = { .sim = sim, .dev = dev };
	uint8_t buf[SEDSIM_BLOCK];
	int back_rc = -1;

	assert_false(sedsim_hw_reset_supported(sim));
	assert_true(sedsim_hw_reset_supported(f->sim));
	assert_int_equal(opal_discovery0(dev, &d), 0);
	assert_false(d.lock_on_reset_hw);
	own_and_activate(&other);
	assert_int_equal(set_reset_list(&other, &g, OPAL_COL_LOCK_ON_RESET, pc_hw, 2, false),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(set_reset_list(&other, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_DONE_ON_RESET,
					pc_hw, 2, false), OPAL_ST_INVALID_PARAMETER);
	/* Asked directly, the whole Set is refused; through the backend, the fallback. */
	assert_int_equal(opal_setup_range(dev, &KEY, &r), OPAL_ST_INVALID_PARAMETER);
	opal_backend_protocol(&be, dev);
	assert_int_equal(be.ops->range_setup(&be, &KEY, &r, &back, &back_rc), 0);
	assert_int_equal(back_rc, 0);
	assert_true(back.read_lock_enabled && back.lock_on_reset);
	assert_int_equal(back.lock_on_reset_types, OPAL_RESET_POWER_CYCLE);
	assert_int_equal(sedsim_hw_reset(sim), 0);
	assert_int_equal(sedsim_read(sim, 0, 1, buf), SEDSIM_IO_OK);
	assert_int_equal(sedsim_power_cycle(sim), 0);
	assert_int_equal(sedsim_read(sim, 0, 1, buf), SEDSIM_IO_LOCKED);
	opal_dev_free(dev);

	/* Reopened, still Power Cycle alone. */
	{
		char dir[128];

		snprintf(dir, sizeof(dir), "%s/pconly", f->dir);
		assert_int_equal(sedsim_open(dir, false, &sim), 0);
		assert_false(sedsim_hw_reset_supported(sim));
		sedsim_close(sim);
	}
	/* On a drive that takes it, the backend sets both. */
	own_and_activate(f);
	opal_backend_protocol(&be, f->dev);
	assert_int_equal(be.ops->range_setup(&be, &KEY, &r, &back, &back_rc), 0);
	assert_int_equal(back.lock_on_reset_types, OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE);
}

/* Activate on the Locking SP as SID with raw parameters; its status. */
static int activate_raw(struct fx *f, const uint8_t *params, size_t n)
{
	static const uint8_t lsp[8] = { 0, 0, 0x02, 0x05, 0, 0, 0, 0x02 };
	static const uint8_t m_activate[8] = { 0, 0, 0, 0x06, 0, 0, 0x02, 0x03 };
	struct opal_session *s;
	int rc;

	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &KEY, true, &s),
			 0);
	rc = raw_call(s, lsp, m_activate, params, n, NULL, 0);
	assert_int_equal(opal_end_session(s), 0);
	return rc;
}

/* The SUM feature descriptor's flags byte (ANY 1, ALL 2, Policy 4), from the raw bytes. */
static int sum_flags(struct fx *f)
{
	uint8_t l0[512];

	assert_int_equal(sedsim_if_recv(f->sim, 1, 1, l0, sizeof(l0)), 0);
	for (size_t off = 48; off + 4 <= 4 + be32_at(l0); off += 4 + l0[off + 3])
		if (l0[off] == 0x02 && l0[off + 1] == 0x01) {
			assert_int_equal(l0[off + 3], 12);
			assert_int_equal(be32_at(l0 + off + 4), 9);	/* Locking objects supported */
			return l0[off + 8];
		}
	fail_msg("no Single User Mode feature");
	return -1;
}

#define LR(n) 0xa8, 0, 0, 0x08, 0x02, 0, (n) ? 0x03 : 0, 0, (n) ? (n) : 1
#define SUM_LIST 0xf2, 0x83, 0x06, 0x00, 0x00
#define SUM_POLICY 0xf2, 0x83, 0x06, 0x00, 0x01

/*
 * Single User Mode: Activate's selection list is parsed strictly; the
 * ranges it names belong to their users (range n to User n+1, with an
 * empty PIN): the admins lose them, the owner locks, configures and erases
 * them, and RangeStartRangeLengthPolicy decides who places them.
 */
static void test_single_user_mode(void **state)
{
	struct fx *f = *state;
	static const uint8_t not_a_row[] = { SUM_LIST, 0xf0, 0xa8, 0, 0, 0x08, 0x03, 0, 0, 0, 1, 0xf1, 0xf3 };
	static const uint8_t twice[] = { SUM_LIST, 0xf0, LR(1), LR(1), 0xf1, 0xf3 };
	static const uint8_t empty[] = { SUM_LIST, 0xf0, 0xf1, 0xf3 };
	static const uint8_t bare_row[] = { SUM_LIST, LR(1), 0xf3 };
	static const uint8_t number[] = { SUM_LIST, 0x01, 0xf3 };
	static const uint8_t ds_sizes[] = { 0xf2, 0x83, 0x06, 0x00, 0x03, 0xf0, 0x82, 0x10, 0x00, 0xf1, 0xf3 };
	static const uint8_t bad_policy[] = { SUM_LIST, 0xf0, LR(1), 0xf1, 0xf3, SUM_POLICY, 0x02, 0xf3 };
	static const uint8_t policy_alone[] = { SUM_POLICY, 0x00, 0xf3 };
	static const uint8_t r1_r2[] = { SUM_LIST, 0xf0, LR(1), LR(2), 0xf1, 0xf3, SUM_POLICY, 0x00, 0xf3 };
	static const uint8_t table_admins[] = { SUM_LIST, 0xa8, 0, 0, 0x08, 0x02, 0, 0, 0, 0, 0xf3,
						SUM_POLICY, 0x01, 0xf3 };
	const uint8_t *bad[] = { not_a_row, twice, empty, bare_row, number, ds_sizes, bad_policy,
				 policy_alone };
	const size_t bad_len[] = { sizeof(not_a_row), sizeof(twice), sizeof(empty), sizeof(bare_row),
				   sizeof(number), sizeof(ds_sizes), sizeof(bad_policy),
				   sizeof(policy_alone) };
	struct opal_key none = { (const uint8_t *)"", 0 }, u2key = { (const uint8_t *)"two", 3 };
	struct opal_range r1 = { .n = 1, .start = 64, .length = 64, .read_lock_enabled = true,
				 .write_lock_enabled = true };
	opal_uid u2 = opal_uid_user(2), rng1 = opal_uid_locking_range(1), cu2 = opal_uid_c_pin_user(2);
	uint8_t d[SEDSIM_BLOCK], back[SEDSIM_BLOCK];
	struct opal_session *s;
	uint64_t lc;

	fill(d, sizeof(d), 3);
	assert_int_equal(opal_take_ownership(f->dev, &KEY), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (activate_raw(f, bad[i], bad_len[i]) != OPAL_ST_INVALID_PARAMETER)
			fail_msg("malformed Activate %zu accepted", i);
		assert_int_equal(opal_locking_sp_lifecycle(f->dev, &lc), 0);
		assert_int_equal(lc, OPAL_LIFECYCLE_MANUFACTURED_INACTIVE);
	}
	assert_int_equal(sum_flags(f), 0);
	assert_int_equal(activate_raw(f, r1_r2, sizeof(r1_r2)), 0);
	assert_int_equal(sum_flags(f), 0x01);	/* ANY */
	/* Admin1 manages range 3, not range 1 nor User2. */
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r1), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 1, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	r1.n = 3;
	r1.start = 256;
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r1), 0);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_user_set_pin(s, 2, &u2key), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_user_set_enabled(s, 2, false), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_end_session(s), 0);
	/* User2, with the empty PIN SUM gives it, owns range 1 (policy 0: places it too). */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &none, true, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_RANGE_START, 64), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_RANGE_LENGTH, 64), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_READ_LOCK_ENABLED, 1), 0);
	assert_int_equal(opal_set_column_bytes(s, &cu2, OPAL_COL_PIN, u2key.data, u2key.len), 0);
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(sedsim_write(f->sim, 64, 1, d), SEDSIM_IO_OK);
	assert_int_equal(opal_lock_unlock(f->dev, 2, &u2key, 1, OPAL_LOCKED), 0);
	assert_int_equal(sedsim_read(f->sim, 64, 1, back), SEDSIM_IO_LOCKED);
	assert_int_equal(opal_lock_unlock(f->dev, 2, &u2key, 2, OPAL_LOCKED), OPAL_ST_NOT_AUTHORIZED);
	/* The owner erases its range: new key, unlocked, and its PIN empty again. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &u2key, true, &s), 0);
	assert_int_equal(raw_call(s, rng1.b, (const uint8_t[]){ 0, 0, 0, 0x06, 0, 0, 0x08, 0x03 }, NULL,
				  0, NULL, 0), 0);
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(sedsim_read(f->sim, 64, 1, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, d, sizeof(d));
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &none, false, &s), 0);
	assert_int_equal(opal_end_session(s), 0);
	/* Back to factory; the whole Locking table in SUM, Admins place the ranges. */
	assert_int_equal(opal_revert_locking_sp(f->dev, &KEY, false), 0);
	assert_int_equal(activate_raw(f, table_admins, sizeof(table_admins)), 0);
	assert_int_equal(sum_flags(f), 0x07);	/* ANY, ALL, Policy */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_LOCKINGSP, &u2, &none, true, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_RANGE_START, 64), OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_WRITE_LOCK_ENABLED, 1), 0);
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(opal_admin1_session(f->dev, &KEY, &s), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_RANGE_LENGTH, 64), 0);
	assert_int_equal(opal_set_column_uint(s, &rng1, OPAL_COL_WRITE_LOCK_ENABLED, 0),
			 OPAL_ST_NOT_AUTHORIZED);
	assert_int_equal(opal_end_session(s), 0);
}

static void test_state_persists(void **state)
{
	struct fx *f = *state;
	struct opal_range r = { .n = 0, .read_lock_enabled = true, .write_lock_enabled = true,
				.lock_on_reset = true };
	struct sedsim *sim2;
	struct opal_dev *dev2;
	uint8_t back[SEDSIM_BLOCK];

	own_and_activate(f);
	assert_int_equal(opal_setup_range(f->dev, &KEY, &r), 0);
	assert_int_equal(opal_lock_unlock(f->dev, 0, &KEY, 0, OPAL_UNLOCKED_RW), 0);
	/* Reopen without power cycle: still unlocked; with: locked. */
	assert_int_equal(sedsim_open(f->dir, false, &sim2), 0);
	assert_int_equal(sedsim_read(sim2, 0, 1, back), SEDSIM_IO_OK);
	sedsim_close(sim2);
	assert_int_equal(sedsim_open(f->dir, true, &sim2), 0);
	assert_int_equal(sedsim_read(sim2, 0, 1, back), SEDSIM_IO_LOCKED);
	dev2 = sedsim_opal_dev(sim2);
	assert_int_equal(opal_lock_unlock(dev2, 0, &KEY, 0, OPAL_UNLOCKED_RW), 0);
	assert_int_equal(sedsim_read(sim2, 0, 1, back), SEDSIM_IO_OK);
	opal_dev_free(dev2);
}

/* ------------------------------------------------------- Properties */

/*
 * A transport between lib/opal and the simulator that watches what the host
 * sends (transfer sizes, token sizes, Properties calls) and can replace the
 * TPer's Properties reply with a scripted one.
 */
struct spy {
	struct sedsim *sim;
	unsigned sends;
	unsigned props_calls;
	size_t max_send;		/* largest IF-SEND transfer */
	size_t max_token;		/* largest token sent, header included */
	bool props_pending;		/* the last send was SMUID.Properties */
	const uint8_t *props_reply;	/* NULL: the simulator's own reply */
	size_t props_reply_len;
	bool close_armed;		/* answer the next in-session call with CloseSession */
	bool close_pending;
	uint32_t tsn, hsn;
};

static size_t token_size(const struct opal_token *t)
{
	if (t->type != OPAL_ATOM_BYTES)
		return t->type == OPAL_ATOM_CONTROL ? 1 : 9;
	return t->len + (t->len < 16 ? 1 : t->len < 2048 ? 2 : 4);
}

static int spy_send(void *ctx, uint8_t proto, uint16_t comid, const void *buf, size_t len)
{
	static struct opal_token tok[OPAL_MAX_TOKENS];
	struct opal_tokens t = { tok, 0, OPAL_MAX_TOKENS };
	struct spy *sp = ctx;
	struct opal_frame f;

	if (proto == 1 && comid == SEDSIM_BASE_COMID) {
		sp->sends++;
		if (len > sp->max_send)
			sp->max_send = len;
		assert_int_equal(opal_frame_parse(buf, len, &f), 0);
		assert_int_equal(opal_tokens_parse(f.payload, f.payload_len, &t), 0);
		for (size_t i = 0; i < t.n; i++)
			if (token_size(&tok[i]) > sp->max_token)
				sp->max_token = token_size(&tok[i]);
		sp->props_pending = f.tsn == 0 && t.n > 2 && tok[2].type == OPAL_ATOM_BYTES &&
				    tok[2].len == 8 && !memcmp(tok[2].bytes, OPAL_M_PROPERTIES.b, 8);
		sp->props_calls += sp->props_pending;
		if (sp->close_armed && f.tsn && t.n && !opal_tok_is(&tok[0], OPAL_TOK_ENDOFSESSION)) {
			sp->close_armed = false;
			sp->close_pending = true;
			sp->tsn = f.tsn;
			sp->hsn = f.hsn;
		}
	}
	return sedsim_if_send(sp->sim, proto, comid, buf, len);
}

static int spy_recv(void *ctx, uint8_t proto, uint16_t comid, void *buf, size_t len)
{
	struct spy *sp = ctx;
	int rc = sedsim_if_recv(sp->sim, proto, comid, buf, len);

	if (!rc && proto == 1 && comid == SEDSIM_BASE_COMID && sp->close_pending) {
		/* F8 SMUID CloseSession F0 HSN TSN F1 F9 F0 0 0 0 F1 */
		struct opal_frame f = { .comid = comid, .tsn = sp->tsn, .hsn = sp->hsn };
		uint8_t mem[64];
		struct opal_buf b;

		sp->close_pending = false;
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_CLOSESESSION);
		opal_put_uint(&b, sp->hsn);
		opal_put_uint(&b, sp->tsn);
		opal_put_call_end(&b, 0);
		memset(buf, 0, len);
		assert_true(opal_frame_build(buf, len, &f, b.data, b.len) > 0);
	}
	if (!rc && proto == 1 && comid == SEDSIM_BASE_COMID && sp->props_pending &&
	    sp->props_reply) {
		struct opal_frame f = { .comid = comid };

		sp->props_pending = false;
		memset(buf, 0, len);
		assert_true(opal_frame_build(buf, len, &f, sp->props_reply, sp->props_reply_len) > 0);
	}
	return rc;
}

static const struct opal_transport_ops spy_ops = { "spy", spy_send, spy_recv, NULL, NULL };

static struct opal_dev *spy_dev(struct spy *sp, struct sedsim *sim)
{
	struct opal_dev *dev;

	memset(sp, 0, sizeof(*sp));
	sp->sim = sim;
	dev = opal_dev_new(&spy_ops, sp);
	assert_non_null(dev);
	opal_dev_set_timeout(dev, 2000);
	return dev;
}

/* A Properties reply with the TPer list t and, when h, the host echo h. */
static size_t props_reply(uint8_t *mem, size_t cap, const struct opal_prop_out *t, size_t nt,
			  const struct opal_prop_out *h, size_t nh)
{
	struct opal_buf b;

	opal_buf_init(&b, mem, cap);
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_prop_list(&b, t, nt);
	if (h) {
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 0);
		opal_put_prop_list(&b, h, nh);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_call_end(&b, 0);
	assert_false(b.overflow);
	return b.len;
}

static uint64_t prop(const struct opal_prop_list *l, enum opal_prop p)
{
	uint64_t v = UINT64_MAX;

	if (!opal_prop_get(l, p, &v))
		fail_msg("property %s missing", opal_prop_name(p));
	return v;
}

static void test_properties_values(void **state)
{
	struct fx *f = *state;
	struct opal_props *p = calloc(1, sizeof(*p));
	const struct opal_host_props smaller = { 1536, 1536, 1516, 1480, 1, 1, 1 };
	const struct opal_host_props no_host = { 0 };
	const struct opal_host_props too_big = { .max_compacket_size = 4096 };

	assert_non_null(p);
	/* The simulator's real buffer sizes, and our proposal echoed back. */
	assert_int_equal(opal_properties(f->dev, NULL, p), 0);
	assert_int_equal(p->tper.n, 10);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_COMPACKET_SIZE), OPAL_IO_BUFFER);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE), OPAL_IO_BUFFER);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_PACKET_SIZE), 2028);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_IND_TOKEN_SIZE), 1992);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_PACKETS), 1);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_SUBPACKETS), 1);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_METHODS), 1);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_SESSIONS), 1);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_AUTHENTICATIONS), 2);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_TRANSACTION_LIMIT), 0);
	assert_string_equal(p->tper.pair[0].name, "MaxComPacketSize");
	assert_true(p->have_host);
	assert_int_equal(p->host.n, 7);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_COMPACKET_SIZE), OPAL_IO_BUFFER);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_IND_TOKEN_SIZE), 1992);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_METHODS), 1);
	/* The echo is min(host's proposal, the TPer's own)... */
	assert_int_equal(opal_properties(f->dev, &smaller, p), 0);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_COMPACKET_SIZE), 1536);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_PACKET_SIZE), 1516);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_IND_TOKEN_SIZE), 1480);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_COMPACKET_SIZE), OPAL_IO_BUFFER);
	/* ... from both sides: a TPer with smaller buffers says so. */
	assert_int_equal(sedsim_set_max_compacket(f->sim, 1024), 0);
	assert_int_equal(opal_properties(f->dev, NULL, p), 0);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_COMPACKET_SIZE), 1024);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_IND_TOKEN_SIZE), 1024 - OPAL_FRAME_HDRS);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_COMPACKET_SIZE), 1024);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_PACKET_SIZE), 1004);
	{
		/* And means it: a larger IF-SEND transfer fails. */
		uint8_t big[OPAL_IO_BUFFER] = { 0 };

		assert_int_equal(sedsim_if_send(f->sim, 1, SEDSIM_BASE_COMID, big, 1025), -EINVAL);
		assert_int_equal(sedsim_if_send(f->sim, 1, SEDSIM_BASE_COMID, big, 1024), 0);
	}
	assert_int_equal(sedsim_set_max_compacket(f->sim, OPAL_IO_BUFFER), 0);
	/* No HostProperties proposed: the reply has none, and that is fine. */
	assert_int_equal(opal_properties(f->dev, &no_host, p), 0);
	assert_false(p->have_host);
	assert_int_equal(p->host.n, 0);
	assert_int_equal(p->tper.n, 10);
	/* Proposing more than this library can receive is refused locally. */
	assert_int_equal(opal_properties(f->dev, &too_big, p), OPAL_ERR_INVAL);
	assert_int_equal(sedsim_set_max_compacket(f->sim, 512), -EINVAL);
	free(p);
}

/* A TPer with 1 KiB buffers: big transfers are split, a call too big is not sent. */
static void test_properties_small_tper(void **state)
{
	struct fx *f = *state;
	uint8_t in[3000], out[3000], pin[1500];
	opal_uid a1 = opal_uid_admin(1), c1 = opal_uid_c_pin_admin(1);
	struct opal_session *s;
	struct spy sp;
	struct opal_dev *dev;
	unsigned sends;

	fill(in, sizeof(in), 9);
	memset(pin, 'p', sizeof(pin));
	assert_int_equal(sedsim_set_max_compacket(f->sim, 1024), 0);
	dev = spy_dev(&sp, f->sim);
	assert_int_equal(opal_take_ownership(dev, &KEY), 0);
	assert_int_equal(opal_activate_locking_sp(dev, &KEY), 0);
	assert_int_equal(opal_datastore_write(dev, &KEY, 7, in, sizeof(in)), 0);
	assert_int_equal(opal_datastore_read(dev, &KEY, 7, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(opal_mbr_write(dev, &KEY, 0, in, sizeof(in)), 0);
	assert_int_equal(sp.props_calls, 1);	/* once per device */
	assert_true(sp.max_send <= 1024);
	assert_true(sp.max_send >= 512);
	/* One token of 1500 bytes cannot fit: refused before anything is sent. */
	assert_int_equal(opal_start_session(dev, &OPAL_UID_LOCKINGSP, &a1, &KEY, true, &s), 0);
	sends = sp.sends;
	assert_int_equal(opal_set_column_bytes(s, &c1, OPAL_COL_PIN, pin, sizeof(pin)),
			 OPAL_ERR_TOO_LARGE);
	assert_int_equal(sp.sends, sends);
	/* Nor do many small tokens adding up to more than 1 KiB. */
	{
		uint8_t mem[OPAL_IO_BUFFER];
		struct opal_buf b;
		struct opal_resp *r = calloc(1, sizeof(*r));

		assert_non_null(r);
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &c1, &OPAL_M_SET);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 1);	/* Values */
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		for (unsigned i = 0; i < 12; i++) {
			opal_put_control(&b, OPAL_TOK_STARTNAME);
			opal_put_uint(&b, 100 + i);
			opal_put_bytes(&b, pin, 90);
			opal_put_control(&b, OPAL_TOK_ENDNAME);
		}
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_call_end(&b, 0);
		assert_true(b.len > 1024 && b.len < OPAL_IO_BUFFER - OPAL_FRAME_HDRS);
		assert_int_equal(opal_session_call(s, &b, r), OPAL_ERR_TOO_LARGE);
		assert_int_equal(sp.sends, sends);
		free(r);
	}
	assert_int_equal(opal_end_session(s), 0);
	opal_dev_free(dev);

	/* The same call reaches a TPer with the full 2 KiB (which rejects the PIN). */
	assert_int_equal(sedsim_set_max_compacket(f->sim, OPAL_IO_BUFFER), 0);
	dev = spy_dev(&sp, f->sim);
	assert_int_equal(opal_start_session(dev, &OPAL_UID_LOCKINGSP, &a1, &KEY, true, &s), 0);
	sends = sp.sends;
	assert_int_equal(opal_set_column_bytes(s, &c1, OPAL_COL_PIN, pin, sizeof(pin)),
			 OPAL_ST_INVALID_PARAMETER);
	assert_int_equal(sp.sends, sends + 1);
	assert_int_equal(sp.max_send, OPAL_IO_BUFFER);
	assert_int_equal(opal_end_session(s), 0);
	opal_dev_free(dev);
}

/* A host that takes only 1 KiB replies: the TPer answers within that, reads are split. */
static void test_properties_host_limits(void **state)
{
	struct fx *f = *state;
	const struct opal_host_props small = { 1024, 1024, 1004, 968, 1, 1, 1 };
	struct opal_props *p = calloc(1, sizeof(*p));
	uint8_t in[3000], out[3000];

	assert_non_null(p);
	fill(in, sizeof(in), 3);
	assert_int_equal(opal_properties(f->dev, &small, p), 0);
	assert_int_equal(prop(&p->host, OPAL_PROP_MAX_COMPACKET_SIZE), 1024);
	own_and_activate(f);
	assert_int_equal(opal_datastore_write(f->dev, &KEY, 0, in, sizeof(in)), 0);
	assert_int_equal(opal_datastore_read(f->dev, &KEY, 0, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	free(p);
}

static const struct opal_prop_out SIM_TPER[] = {
	{ "MaxComPacketSize", 2048 }, { "MaxResponseComPacketSize", 2048 },
	{ "MaxPacketSize", 2028 }, { "MaxIndTokenSize", 300 }, { "MaxPackets", 1 },
	{ "MaxSubpackets", 1 }, { "MaxMethods", 1 }, { "VendorThing", 5 },
};

/* MaxIndTokenSize smaller than the ComPacket allows: table writes use smaller atoms. */
static void test_properties_token_limit(void **state)
{
	struct fx *f = *state;
	uint8_t reply[512], in[3000], out[3000];
	struct opal_props *p = calloc(1, sizeof(*p));
	struct spy sp;
	struct opal_dev *dev;

	assert_non_null(p);
	fill(in, sizeof(in), 21);
	own_and_activate(f);
	dev = spy_dev(&sp, f->sim);
	/* A reply without the HostProperties part. */
	sp.props_reply = reply;
	sp.props_reply_len = props_reply(reply, sizeof(reply), SIM_TPER, 8, NULL, 0);
	assert_int_equal(opal_properties(dev, NULL, p), 0);
	assert_false(p->have_host);
	assert_int_equal(prop(&p->tper, OPAL_PROP_MAX_IND_TOKEN_SIZE), 300);
	assert_string_equal(p->tper.pair[7].name, "VendorThing");
	sp.max_token = 0;
	assert_int_equal(opal_datastore_write(dev, &KEY, 0, in, sizeof(in)), 0);
	assert_int_equal(opal_datastore_read(dev, &KEY, 0, out, sizeof(out)), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_true(sp.max_token <= 300);
	assert_true(sp.max_token > 200);	/* chunks as large as allowed */
	assert_int_equal(sp.props_calls, 1);
	/* A single token above the limit is refused, not sent. */
	{
		opal_uid a1 = opal_uid_admin(1), c1 = opal_uid_c_pin_admin(1);
		uint8_t pin[400];
		struct opal_session *s;
		unsigned sends;

		memset(pin, 'p', sizeof(pin));
		assert_int_equal(opal_start_session(dev, &OPAL_UID_LOCKINGSP, &a1, &KEY, true, &s), 0);
		sends = sp.sends;
		assert_int_equal(opal_set_column_bytes(s, &c1, OPAL_COL_PIN, pin, sizeof(pin)),
				 OPAL_ERR_TOO_LARGE);
		assert_int_equal(sp.sends, sends);
		assert_int_equal(opal_end_session(s), 0);
	}
	opal_dev_free(dev);
	free(p);
}

/* Replies that are refused or malformed: an error, then the Opal minimum sizes. */
static void test_properties_bad_replies(void **state)
{
	struct fx *f = *state;
	struct opal_props *p = calloc(1, sizeof(*p));
	static const struct opal_prop_out long_name[] = {
		{ "MaxComPacketSizeButMuchLongerThanAnyName", 1024 },
	};
	static const struct opal_prop_out two[] = { { "MaxComPacketSize", 1024 }, { "MaxPackets", 1 } };
	uint8_t replies[5][512], msid[OPAL_PIN_MAX];
	size_t lens[5], n;
	int want[5];
	struct opal_buf b;

	assert_non_null(p);
	/* 0: truncated in the middle of the TPer list. */
	lens[0] = props_reply(replies[0], sizeof(replies[0]), SIM_TPER, 8, NULL, 0) / 2;
	want[0] = OPAL_ERR_PROTOCOL;
	/* 1: a value of the wrong type (a byte string where a uinteger goes). */
	opal_buf_init(&b, replies[1], sizeof(replies[1]));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_bytes(&b, "MaxComPacketSize", 16);
	opal_put_bytes(&b, "\x04\x00", 2);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_call_end(&b, 0);
	lens[1] = b.len;
	want[1] = OPAL_ERR_PROTOCOL;
	/* 2: a name longer than OPAL_PROP_NAME_MAX. */
	lens[2] = props_reply(replies[2], sizeof(replies[2]), long_name, 1, NULL, 0);
	want[2] = OPAL_ERR_PROTOCOL;
	/* 3: HostProperties that are not a list of pairs: [ 5 ]. */
	opal_buf_init(&b, replies[3], sizeof(replies[3]));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_prop_list(&b, two, 2);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 0);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_uint(&b, 5);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	lens[3] = b.len;
	want[3] = OPAL_ERR_PROTOCOL;
	/* 4: the TPer refuses Properties. */
	opal_buf_init(&b, replies[4], sizeof(replies[4]));
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	opal_put_call_end(&b, OPAL_ST_INVALID_PARAMETER);
	lens[4] = b.len;
	want[4] = OPAL_ST_INVALID_PARAMETER;

	for (unsigned i = 0; i < 5; i++) {
		struct spy sp;
		struct opal_dev *dev = spy_dev(&sp, f->sim);

		sp.props_reply = replies[i];
		sp.props_reply_len = lens[i];
		assert_int_equal(opal_properties(dev, NULL, p), want[i]);
		assert_int_equal(p->tper.n, 0);
		/* Sessions still work, at the fixed sizes, asking only once more. */
		assert_int_equal(opal_get_msid(dev, msid, sizeof(msid), &n), 0);
		assert_int_equal(opal_get_msid(dev, msid, sizeof(msid), &n), 0);
		assert_int_equal(sp.props_calls, 2);
		assert_int_equal(sp.max_send, OPAL_IO_BUFFER);
		opal_dev_free(dev);
	}
	free(p);
}

/* ---------------------------------------------- NVMe transport via seam */

static struct sedsim *seam_sim;
static unsigned seam_calls;

static int seam_send(struct nvme_security_send_args *a)
{
	/* What the transport puts in the command, checked field by field. */
	assert_int_equal(a->args_size, sizeof(*a));
	assert_int_equal(a->nssf, 0);
	assert_int_equal(a->tl, a->data_len);
	seam_calls++;
	return sedsim_if_send(seam_sim, a->secp, (uint16_t)(a->spsp1 << 8 | a->spsp0), a->data,
			      a->data_len) ? -1 : 0;
}

static int seam_recv(struct nvme_security_receive_args *a)
{
	assert_int_equal(a->args_size, sizeof(*a));
	assert_int_equal(a->al, a->data_len);
	seam_calls++;
	return sedsim_if_recv(seam_sim, a->secp, (uint16_t)(a->spsp1 << 8 | a->spsp0), a->data,
			      a->data_len) ? -1 : 0;
}

static int seam_identify(int fd, struct nvme_id_ctrl *id)
{
	(void)fd;
	memset(id->sn, ' ', sizeof(id->sn));
	memcpy(id->sn, sedsim_serial(seam_sim), sizeof(id->sn));
	return 0;
}

static void test_nvme_seam(void **state)
{
	struct fx *f = *state;
	const struct opal_nvme_seam seam = { seam_send, seam_recv, seam_identify };
	struct opal_dev *nv;
	struct opal_discovery d;
	char serial[OPAL_SERIAL_MAX];

	seam_sim = f->sim;
	seam_calls = 0;
	assert_int_equal(opal_nvme_from_fd(-1, &seam, &nv), 0);
	assert_string_equal(opal_dev_transport(nv), "nvme");
	assert_int_equal(opal_discovery0(nv, &d), 0);
	assert_true(d.opal2);
	assert_int_equal(opal_take_ownership(nv, &KEY), 0);
	assert_int_equal(opal_activate_locking_sp(nv, &KEY), 0);
	assert_int_equal(opal_lock_unlock(nv, 0, &BAD, 0, OPAL_LOCKED), OPAL_ERR_AUTH);
	assert_int_equal(opal_dev_serial(nv, serial), 0);
	assert_memory_equal(serial, "TESTSERIAL01        ", OPAL_SERIAL_MAX);
	assert_true(seam_calls > 10);
	opal_dev_free(nv);
}

/* ------------------------------------------- ComID management, sessions */

/*
 * A HANDLE_COMID_REQUEST through IF-SEND protocol 2 and its answer through
 * IF-RECV protocol 2, as go-tcg-storage sends it (pkg/core/core.go: a
 * 512-byte transfer, ComID, extension, request code; the answer's data
 * length at bytes 10-11, the data from byte 12).
 */
static int comid_request(struct sedsim *sim, uint16_t comid, uint16_t ext, uint32_t code,
			 uint8_t out[64])
{
	uint8_t req[512] = { (uint8_t)(comid >> 8), (uint8_t)comid, (uint8_t)(ext >> 8), (uint8_t)ext,
			     (uint8_t)(code >> 24), (uint8_t)(code >> 16), (uint8_t)(code >> 8),
			     (uint8_t)code };
	int rc = sedsim_if_send(sim, 2, comid, req, sizeof(req));

	if (rc)
		return rc;
	return sedsim_if_recv(sim, 2, comid, out, 64);
}

/* The bytes of a STACK_RESET answer: ComID 0x1000, code 2, 4 bytes of data, status. */
static void expect_stack_reset(const uint8_t *r, uint32_t status)
{
	static const uint8_t head[12] = { 0x10, 0x00, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4 };

	assert_memory_equal(r, head, sizeof(head));
	assert_int_equal(be32_at(r + 12), status);
}

/*
 * MaxSessions 1, honestly: a second StartSession is refused with SP_BUSY
 * while the first one is open, and the first one keeps working; a
 * STACK_RESET aborts it (its packets get no answer any more) and frees the
 * TPer for a new session.
 */
static void test_sp_busy_and_stack_reset(void **state)
{
	struct fx *f = *state;
	struct opal_session *s1, *s2;
	uint8_t msid[OPAL_PIN_MAX], r[64];
	size_t n;

	opal_dev_set_timeout(f->dev, 300);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s1), 0);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s2),
			 OPAL_ST_SP_BUSY);
	assert_null(s2);
	/* A wrong PIN does not even get tried: no try is burnt while busy. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &BAD, false,
					    &s2), OPAL_ST_SP_BUSY);
	assert_int_equal(opal_get_column_bytes(s1, &OPAL_UID_C_PIN_MSID, OPAL_COL_PIN, msid,
					       sizeof(msid), &n), 0);
	/* VERIFY_COMID_VALID: 34 bytes of data, state 3 (Associated) while in a session. */
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 1, r), 0);
	assert_memory_equal(r, ((uint8_t[]){ 0x10, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 34 }), 12);
	assert_int_equal(be32_at(r + 12), 3);
	/* STACK_RESET: Success, and the open session is gone. */
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 2, r), 0);
	expect_stack_reset(r, 0);
	/* No answer for the aborted session (lib/opal: "no reply"). */
	assert_int_not_equal(opal_get_column_bytes(s1, &OPAL_UID_C_PIN_MSID, OPAL_COL_PIN, msid,
						   sizeof(msid), &n), 0);
	assert_int_not_equal(opal_end_session(s1), 0);
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 1, r), 0);
	assert_int_equal(be32_at(r + 12), 2);	/* Issued: no session */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s2), 0);
	assert_int_equal(opal_end_session(s2), 0);
	/* A power cycle ends a session too. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s1), 0);
	assert_int_equal(sedsim_power_cycle(f->sim), 0);
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s2), 0);
	assert_int_equal(opal_end_session(s2), 0);
	free(s1);	/* the TPer forgot it: nothing to end */
}

/* STACK_RESET drops a response the host has not fetched yet. */
static void test_stack_reset_drops_response(void **state)
{
	struct fx *f = *state;
	struct opal_frame fr = { .comid = SEDSIM_BASE_COMID };
	uint8_t mem[64], pkt[OPAL_IO_BUFFER], in[OPAL_IO_BUFFER], r[64];
	struct opal_buf b;
	size_t len;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_call_end(&b, 0);
	len = opal_frame_build(pkt, sizeof(pkt), &fr, b.data, b.len);
	assert_true(len > 0);
	assert_int_equal(sedsim_if_send(f->sim, 1, SEDSIM_BASE_COMID, pkt, len), 0);
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 2, r), 0);
	expect_stack_reset(r, 0);
	assert_int_equal(sedsim_if_recv(f->sim, 1, SEDSIM_BASE_COMID, in, sizeof(in)), 0);
	assert_int_equal(be32_at(in + 16), 0);	/* ComPacket length 0: nothing pending */
	/* Without a reset the reply is there. */
	assert_int_equal(sedsim_if_send(f->sim, 1, SEDSIM_BASE_COMID, pkt, len), 0);
	assert_int_equal(sedsim_if_recv(f->sim, 1, SEDSIM_BASE_COMID, in, sizeof(in)), 0);
	assert_true(be32_at(in + 16) > 0);
}

/* What ComID management refuses, and what it answers for a ComID it does not have. */
static void test_comid_requests_strict(void **state)
{
	struct fx *f = *state;
	struct opal_session *s;
	uint8_t r[64], req[8] = { 0x10, 0, 0, 0, 0, 0, 0, 2 };

	/* Nothing asked: NO_RESPONSE_AVAILABLE (request code 0, no data). */
	assert_int_equal(sedsim_if_recv(f->sim, 2, SEDSIM_BASE_COMID, r, sizeof(r)), 0);
	assert_memory_equal(r, ((uint8_t[]){ 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }), 12);
	/* Unknown request code, ComID not the one addressed, a short request. */
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 3, r), -EINVAL);
	assert_int_equal(sedsim_if_send(f->sim, 2, SEDSIM_BASE_COMID + 1, req, sizeof(req)),
			 -EINVAL);
	assert_int_equal(sedsim_if_send(f->sim, 2, SEDSIM_BASE_COMID, req, 7), -EINVAL);
	/* Another ComID: Invalid, and its STACK_RESET fails without touching ours. */
	assert_int_equal(opal_start_session(f->dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s), 0);
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID + 1, 0, 1, r), 0);
	assert_int_equal(r[1], 0x01);
	assert_int_equal(be32_at(r + 12), 0);
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID + 1, 0, 2, r), 0);
	assert_int_equal(be32_at(r + 12), 1);
	assert_int_equal(opal_end_session(s), 0);
	/* The answer is read once. */
	assert_int_equal(comid_request(f->sim, SEDSIM_BASE_COMID, 0, 1, r), 0);
	assert_int_equal(sedsim_if_recv(f->sim, 2, SEDSIM_BASE_COMID, r, sizeof(r)), 0);
	assert_int_equal(be32_at(r + 4), 0);
}

/* A TPer that never answers: the host gives up at its timeout. */
static int mute_send(void *ctx, uint8_t p, uint16_t s, const void *b, size_t n)
{
	(void)ctx; (void)p; (void)s; (void)b; (void)n;
	return 0;
}

static int mute_recv(void *ctx, uint8_t p, uint16_t s, void *b, size_t n)
{
	uint8_t *o = b;

	(void)p;
	memset(b, 0, n);
	if (s == 1)
		return sedsim_if_recv(ctx, 1, 1, b, n);	/* discovery works */
	o[4] = (uint8_t)(s >> 8);
	o[5] = (uint8_t)s;
	o[11] = 1;	/* "outstanding data", forever */
	return 0;
}

/* A TPer that aborts the session (CloseSession) in place of a reply: an error. */
static void test_drive_closes_session(void **state)
{
	struct fx *f = *state;
	struct spy sp;
	struct opal_dev *dev = spy_dev(&sp, f->sim);
	struct opal_session *s;
	opal_uid g = opal_uid_locking_range(0);
	unsigned sends;

	own_and_activate(f);
	assert_int_equal(opal_admin1_session(dev, &KEY, &s), 0);
	sp.close_armed = true;
	assert_int_equal(opal_set_column_uint(s, &g, OPAL_COL_READ_LOCK_ENABLED, 1),
			 OPAL_ERR_SESSION_CLOSED);
	assert_false(sp.close_pending);
	/* Nothing is sent to end a session the TPer ended. */
	sends = sp.sends;
	assert_int_equal(opal_end_session(s), 0);
	assert_int_equal(sp.sends, sends);
	opal_dev_free(dev);
}

/* The trace holds every call and reply, with no PIN in it. */
static void test_trace_masks_pins(void **state)
{
	struct fx *f = *state;
	FILE *tf = tmpfile();
	char line[8192], keyhex[2 * 16 + 1], mask[2 * 16 + 1];
	unsigned in = 0, out = 0, masked = 0;

	assert_non_null(tf);
	for (size_t i = 0; i < KEY.len; i++) {
		snprintf(keyhex + 2 * i, 3, "%02x", KEY.data[i]);
		snprintf(mask + 2 * i, 3, "%02x", 'x');
	}
	sedsim_set_trace(f->sim, tf);
	own_and_activate(f);	/* MSID read, SID PIN set, sessions with PINs */
	sedsim_set_trace(f->sim, NULL);
	rewind(tf);
	while (fgets(line, sizeof(line), tf)) {
		assert_null(strstr(line, keyhex));
		in += line[0] == '>';
		out += line[0] == '<';
		masked += strstr(line, mask) != NULL;
	}
	fclose(tf);
	assert_true(in > 4);
	assert_int_equal(in, out);
	assert_true(masked >= 2);	/* the Set of the SID PIN, StartSession as SID */
}

static void test_timeout(void **state)
{
	struct fx *f = *state;
	static const struct opal_transport_ops mute = { "mute", mute_send, mute_recv, NULL, NULL };
	struct opal_dev *dev = opal_dev_new(&mute, f->sim);
	struct opal_session *s;

	opal_dev_set_timeout(dev, 200);
	assert_int_equal(opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s),
			 OPAL_ERR_TIMEOUT);
	opal_dev_free(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_factory_msid_and_discovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_session_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_lock_unlock_io, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_alignment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lockout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_try_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reset_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hw_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_hw_reset_firmware, setup, teardown),
		cmocka_unit_test_setup_teardown(test_single_user_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_ace, setup, teardown),
		cmocka_unit_test(test_ace_uids),
		cmocka_unit_test_setup_teardown(test_grant_revoke, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ace_drive_side, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbr_shadow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_datastore_random, setup, teardown),
		cmocka_unit_test_setup_teardown(test_byte_tables_sized_and_sparse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reverts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_next_locking_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_getacl, setup, teardown),
		cmocka_unit_test_setup_teardown(test_table_get_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revertsp_keep, setup, teardown),
		cmocka_unit_test_setup_teardown(test_erase_method, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties_small_tper, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties_host_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties_token_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_properties_bad_replies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nvme_seam, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drive_closes_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trace_masks_pins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sp_busy_and_stack_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_reset_drops_response, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comid_requests_strict, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
