// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim's SCSI face (what TCMU hands it in a guest): the CDBs the sd
 * driver sends at probe, SECURITY PROTOCOL IN/OUT carrying a whole Opal
 * session driven by lib/opal, and DATA PROTECT on locked ranges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "opal-wire.h"
#include "sedsim.h"

#define BLOCKS 1024

struct fx {
	char dir[64];
	struct sedsim *sim;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sedsim_config cfg = { .blocks = BLOCKS, .serial = "SCSISERIAL" };

	strcpy(f->dir, "/tmp/test_sedsim_scsi.XXXXXX");
	if (!mkdtemp(f->dir) || sedsim_create(f->dir, &cfg) || sedsim_open(f->dir, true, &f->sim))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	sedsim_close(f->sim);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static struct sedsim_scsi_cmd exec(struct sedsim *sim, const uint8_t *cdb, size_t cdb_len,
				   uint8_t *buf, size_t len)
{
	struct sedsim_scsi_cmd c = { .cdb = cdb, .cdb_len = cdb_len, .buf = buf, .len = len };

	assert_int_equal(sedsim_scsi_exec(sim, &c), 0);
	return c;
}

static void test_probe_cdbs(void **state)
{
	struct fx *f = *state;
	uint8_t buf[512];
	struct sedsim_scsi_cmd c;

	c = exec(f->sim, (uint8_t[]){ 0x12, 0, 0, 0, 96, 0 }, 6, buf, 96);
	assert_int_equal(c.status, 0);
	assert_int_equal(buf[0], 0);
	assert_true(buf[2] >= 5);	/* SPC-3 or later: sd asks for opcodes */
	c = exec(f->sim, (uint8_t[]){ 0x12, 1, 0x80, 0, 255, 0 }, 6, buf, 255);
	assert_int_equal(c.status, 0);
	assert_memory_equal(buf + 4, "          SCSISERIAL", 20);	/* right-aligned */
	c = exec(f->sim, (uint8_t[]){ 0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0 }, 10, buf, 8);
	assert_int_equal(c.status, 0);
	assert_memory_equal(buf, ((uint8_t[]){ 0, 0, 0x03, 0xff, 0, 0, 0x02, 0 }), 8);
	c = exec(f->sim, (uint8_t[]){ 0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0 }, 16, buf, 32);
	assert_int_equal(c.status, 0);
	assert_int_equal(buf[7], 0xff);
	assert_int_equal(buf[6], 0x03);
	/* REPORT SUPPORTED OPERATION CODES, one command: A2 and B5 supported. */
	for (unsigned op = 0xa2; op; op = op == 0xa2 ? 0xb5 : 0) {
		uint8_t cdb[12] = { 0xa3, 0x0c, 0x01, (uint8_t)op, 0, 0, 0, 0, 2, 0, 0, 0 };

		c = exec(f->sim, cdb, 12, buf, 512);
		assert_int_equal(c.status, 0);
		assert_int_equal(buf[1] & 0x07, 3);
	}
	{
		uint8_t cdb[12] = { 0xa3, 0x0c, 0x01, 0x42, 0, 0, 0, 0, 2, 0, 0, 0 };

		c = exec(f->sim, cdb, 12, buf, 512);
		assert_int_equal(buf[1] & 0x07, 1);	/* UNMAP: not supported */
	}
	/* Unknown opcode: ILLEGAL REQUEST, invalid command operation code. */
	c = exec(f->sim, (uint8_t[]){ 0xc7, 0, 0, 0, 0, 0 }, 6, buf, 0);
	assert_int_equal(c.status, 2);
	assert_int_equal(c.sense[2], 0x05);
	assert_int_equal(c.sense[12], 0x20);
}

/* lib/opal over CDBs: the path sed-opal and SG_IO take in a guest. */
static int scsi_send(void *ctx, uint8_t p, uint16_t sp, const void *buf, size_t len)
{
	uint8_t cdb[12] = { 0xb5, p, (uint8_t)(sp >> 8), (uint8_t)sp, 0, 0,
			    (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, 0, 0 };
	struct sedsim_scsi_cmd c = { .cdb = cdb, .cdb_len = 12, .buf = (uint8_t *)buf, .len = len };

	sedsim_scsi_exec(ctx, &c);
	return c.status ? -5 : 0;
}

static int scsi_recv(void *ctx, uint8_t p, uint16_t sp, void *buf, size_t len)
{
	uint8_t cdb[12] = { 0xa2, p, (uint8_t)(sp >> 8), (uint8_t)sp, 0, 0,
			    (uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len, 0, 0 };
	struct sedsim_scsi_cmd c = { .cdb = cdb, .cdb_len = 12, .buf = buf, .len = len };

	sedsim_scsi_exec(ctx, &c);
	return c.status ? -5 : 0;
}

static void test_opal_over_cdbs(void **state)
{
	struct fx *f = *state;
	static const struct opal_transport_ops ops = { "cdb", scsi_send, scsi_recv, NULL, NULL };
	struct opal_dev *dev = opal_dev_new(&ops, f->sim);
	const struct opal_key k = { (const uint8_t *)"scsi-key", 8 };
	struct opal_range r = { .n = 1, .start = 512, .length = 256, .read_lock_enabled = true,
				.write_lock_enabled = true, .lock_on_reset = true };
	struct opal_discovery d;
	uint8_t data[4096], back[4096];
	struct sedsim_scsi_cmd c;
	uint8_t rd10[10] = { 0x28, 0, 0, 0, 0x02, 0x00, 0, 0, 8, 0 };	/* LBA 512, 8 blocks */
	uint8_t wr10[10] = { 0x2a, 0, 0, 0, 0x02, 0x00, 0, 0, 8, 0 };

	memset(data, 0xc3, sizeof(data));
	assert_int_equal(opal_discovery0(dev, &d), 0);
	assert_true(d.opal2);
	assert_int_equal(opal_take_ownership(dev, &k), 0);
	assert_int_equal(opal_activate_locking_sp(dev, &k), 0);
	assert_int_equal(opal_setup_range(dev, &k, &r), 0);
	/* Written after the range exists: a new range has its own key. */
	c = exec(f->sim, wr10, 10, data, sizeof(data));
	assert_int_equal(c.status, 0);
	assert_int_equal(opal_lock_unlock(dev, 0, &k, 1, OPAL_LOCKED), 0);
	c = exec(f->sim, rd10, 10, back, sizeof(back));
	assert_int_equal(c.status, 2);
	assert_int_equal(c.sense[2], 0x07);	/* DATA PROTECT */
	assert_int_equal(c.sense[12], 0x20);
	c = exec(f->sim, wr10, 10, data, sizeof(data));
	assert_int_equal(c.status, 2);
	/* LBA 0 is in the unlocked global range. */
	c = exec(f->sim, (uint8_t[]){ 0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, 10, back, 512);
	assert_int_equal(c.status, 0);
	assert_int_equal(opal_lock_unlock(dev, 0, &k, 1, OPAL_UNLOCKED_RW), 0);
	c = exec(f->sim, rd10, 10, back, sizeof(back));
	assert_int_equal(c.status, 0);
	assert_int_equal(c.data_len, sizeof(back));
	assert_memory_equal(back, data, sizeof(data));
	/* Beyond the end. */
	c = exec(f->sim, (uint8_t[]){ 0x28, 0, 0, 0, 0x04, 0x00, 0, 0, 1, 0 }, 10, back, 512);
	assert_int_equal(c.status, 2);
	assert_int_equal(c.sense[2], 0x05);
	opal_dev_free(dev);
}

/*
 * SECURITY PROTOCOL OUT/IN with protocol 2 (ComID management) reach the
 * TPer: a STACK_RESET through CDBs aborts a session opened through CDBs.
 */
static void test_stack_reset_over_cdbs(void **state)
{
	struct fx *f = *state;
	static const struct opal_transport_ops ops = { "cdb", scsi_send, scsi_recv, NULL, NULL };
	struct opal_dev *dev = opal_dev_new(&ops, f->sim);
	struct opal_session *s1, *s2;
	uint8_t req[512] = { 0x10, 0x00, 0, 0, 0, 0, 0, 2 }, r[512];
	static const uint8_t done[16] = { 0x10, 0x00, 0, 0, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 0 };

	assert_non_null(dev);
	assert_int_equal(opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s1), 0);
	assert_int_equal(opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s2),
			 OPAL_ST_SP_BUSY);
	assert_int_equal(scsi_send(f->sim, 2, 0x1000, req, sizeof(req)), 0);
	memset(r, 0xee, sizeof(r));
	assert_int_equal(scsi_recv(f->sim, 2, 0x1000, r, sizeof(r)), 0);
	assert_memory_equal(r, done, sizeof(done));
	assert_int_equal(opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s2), 0);
	assert_int_equal(opal_end_session(s2), 0);
	free(s1);
	/* An unknown request code: CHECK CONDITION. */
	req[7] = 9;
	assert_int_equal(scsi_send(f->sim, 2, 0x1000, req, sizeof(req)), -5);
	opal_dev_free(dev);
}

/* INQUIRY's sense: ILLEGAL REQUEST, INVALID FIELD IN CDB. */
static void expect_invalid_field(struct sedsim *sim, const uint8_t *cdb)
{
	uint8_t buf[256];
	struct sedsim_scsi_cmd c = exec(sim, cdb, 6, buf, sizeof(buf));

	assert_int_equal(c.status, 2);
	assert_int_equal(c.sense[2], 0x05);
	assert_int_equal(c.sense[12], 0x24);
	assert_int_equal(c.data_len, 0);
}

/*
 * A drive made with a vendor and a WWN: the standard data and VPD pages
 * 0x00, 0x80 and 0x83 as SPC-4 lays them out (what the kernel keeps in
 * sysfs vpd_pg80/vpd_pg83 and renders as wwid), kept across a reopen.
 */
static void test_inquiry_identity(void **state)
{
	struct fx *f = *state;
	struct sedsim_config cfg = { .blocks = 64, .serial = "ZA1234560000C1234ABC",
				     .vendor = "SEAGATE", .wwn = "naa.5000C500A1B2C3D4" };
	static const uint8_t naa[8] = { 0x50, 0x00, 0xc5, 0x00, 0xa1, 0xb2, 0xc3, 0xd4 };
	char dir[64];
	struct sedsim *sim;
	struct sedsim_scsi_cmd c;
	uint8_t buf[512];

	(void)f;
	strcpy(dir, "/tmp/test_sedsim_scsi_id.XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(sedsim_create(dir, &cfg), 0);
	for (int pass = 0; pass < 2; pass++) {
		assert_int_equal(sedsim_open(dir, true, &sim), 0);
		c = exec(sim, (uint8_t[]){ 0x12, 0, 0, 0, 96, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.data_len, 96);
		assert_memory_equal(buf + 8, "SEAGATE sedsim Opal 2   0001", 28);

		c = exec(sim, (uint8_t[]){ 0x12, 1, 0x00, 0, 255, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.status, 0);
		assert_int_equal(c.data_len, 7);
		assert_memory_equal(buf, ((uint8_t[]){ 0, 0x00, 0, 3, 0x00, 0x80, 0x83 }), 7);

		c = exec(sim, (uint8_t[]){ 0x12, 1, 0x80, 0, 255, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.data_len, 24);
		assert_memory_equal(buf, ((uint8_t[]){ 0, 0x80, 0, 20 }), 4);
		assert_memory_equal(buf + 4, "ZA1234560000C1234ABC", 20);

		c = exec(sim, (uint8_t[]){ 0x12, 1, 0x83, 0, 255, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.status, 0);
		assert_int_equal(c.data_len, 4 + 12 + 48);
		assert_memory_equal(buf, ((uint8_t[]){ 0, 0x83, 0, 60 }), 4);
		/* NAA: binary code set, LU association, designator type 3. */
		assert_memory_equal(buf + 4, ((uint8_t[]){ 0x01, 0x03, 0, 8 }), 4);
		assert_memory_equal(buf + 8, naa, 8);
		/* T10 vendor ID: ASCII, LU association, type 1. */
		assert_memory_equal(buf + 16, ((uint8_t[]){ 0x02, 0x01, 0, 44 }), 4);
		assert_memory_equal(buf + 20, "SEAGATE sedsim Opal 2   ZA1234560000C1234ABC", 44);

		/* The allocation length cuts the data, not the page length. */
		c = exec(sim, (uint8_t[]){ 0x12, 1, 0x83, 0, 4, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.status, 0);
		assert_int_equal(c.data_len, 4);
		assert_int_equal(buf[3], 60);
		sedsim_close(sim);
	}

	/* Strict as firmware: page code without EVPD, CmdDt, reserved bits, absent pages. */
	assert_int_equal(sedsim_open(dir, true, &sim), 0);
	expect_invalid_field(sim, (uint8_t[]){ 0x12, 0, 0x80, 0, 255, 0 });
	expect_invalid_field(sim, (uint8_t[]){ 0x12, 2, 0, 0, 255, 0 });
	expect_invalid_field(sim, (uint8_t[]){ 0x12, 0x21, 0x80, 0, 255, 0 });
	expect_invalid_field(sim, (uint8_t[]){ 0x12, 1, 0xb0, 0, 255, 0 });
	expect_invalid_field(sim, (uint8_t[]){ 0x12, 1, 0x89, 0, 255, 0 });
	sedsim_close(sim);
	snprintf((char *)buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system((char *)buf), 0);
}

/* The page 0x83 NAA of a drive made with cfg, or -1 when sedsim_create refuses cfg. */
static int naa_of(const struct sedsim_config *cfg, uint8_t *naa, size_t *len, bool drop_identity)
{
	char dir[64], cmd[128];
	struct sedsim *sim;
	struct sedsim_scsi_cmd c;
	uint8_t buf[256];
	int rc;

	strcpy(dir, "/tmp/test_sedsim_scsi_naa.XXXXXX");
	assert_non_null(mkdtemp(dir));
	rc = sedsim_create(dir, cfg);
	if (!rc && drop_identity) {
		/* A drive from before the identity file: the defaults. */
		snprintf(cmd, sizeof(cmd), "%s/identity", dir);
		assert_int_equal(unlink(cmd), 0);
	}
	if (!rc) {
		assert_int_equal(sedsim_open(dir, false, &sim), 0);
		c = exec(sim, (uint8_t[]){ 0x12, 1, 0x83, 0, 255, 0 }, 6, buf, sizeof(buf));
		assert_int_equal(c.status, 0);
		*len = buf[7];
		memcpy(naa, buf + 8, *len);
		c = exec(sim, (uint8_t[]){ 0x12, 0, 0, 0, 36, 0 }, 6, buf, sizeof(buf));
		assert_memory_equal(buf + 8, "FDEKIT  ", 8);
		sedsim_close(sim);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return rc ? -1 : 0;
}

/* Default WWNs: NAA 5, one per serial, the same with or without the identity file. */
static void test_wwn_defaults_and_refusals(void **state)
{
	struct sedsim_config a = { .blocks = 64, .serial = "SAMEVENDOR1" };
	struct sedsim_config b = { .blocks = 64, .serial = "SAMEVENDOR2" };
	uint8_t na[16], nb[16], na_old[16];
	size_t la, lb, la_old;

	(void)state;
	assert_int_equal(naa_of(&a, na, &la, false), 0);
	assert_int_equal(naa_of(&b, nb, &lb, false), 0);
	assert_int_equal(naa_of(&a, na_old, &la_old, true), 0);
	assert_int_equal(la, 8);
	assert_int_equal(na[0] >> 4, 5);
	assert_memory_not_equal(na, nb, 8);
	assert_int_equal(la_old, 8);
	assert_memory_equal(na, na_old, 8);

	/* NAA 6 takes 16 bytes. */
	a.wwn = "6001405fde000001aabbccddeeff0011";
	assert_int_equal(naa_of(&a, na, &la, false), 0);
	assert_int_equal(la, 16);
	assert_memory_equal(na, ((uint8_t[]){ 0x60, 0x01, 0x40, 0x5f, 0xde, 0, 0, 1, 0xaa, 0xbb,
					       0xcc, 0xdd, 0xee, 0xff, 0x00, 0x11 }), 16);

	/* What SPC-4 reserves, and what does not fit its NAA: refused. */
	for (const char *const *w = (const char *const[]){ "naa.4000c500a1b2c3d4",
			"5000c500a1b2c3", "5000c500a1b2c3d4aa", "0x5000000000000000",
			"6001405fde000001", "5000c500a1b2c3d4 ", "naa.", "5000c500a1b2c3dg", NULL };
	     *w; w++) {
		a.wwn = *w;
		assert_int_equal(naa_of(&a, na, &la, false), -1);
	}
	a.wwn = NULL;
	for (const char *const *v = (const char *const[]){ "", " LEADING", "NINECHARS", "T\tAB",
			NULL }; *v; v++) {
		a.vendor = *v;
		assert_int_equal(naa_of(&a, na, &la, false), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_cdbs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opal_over_cdbs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_reset_over_cdbs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inquiry_identity, setup, teardown),
		cmocka_unit_test(test_wwn_defaults_and_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
