// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stack Reset from the host side: a session another host left open makes
 * StartSession answer SP_BUSY; opal_stack_reset clears it, and a device
 * set to reset on busy does so by itself, once.
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

static const struct opal_key KEY = { (const uint8_t *)"0123456789abcdef", 16 };

/* Two hosts on one drive: each opal_dev talks to the same sedsim. */
static int sim_send(void *ctx, uint8_t proto, uint16_t comid, const void *buf, size_t len)
{
	return sedsim_if_send(ctx, proto, comid, buf, len);
}

static int sim_recv(void *ctx, uint8_t proto, uint16_t comid, void *buf, size_t len)
{
	return sedsim_if_recv(ctx, proto, comid, buf, len);
}

static const struct opal_transport_ops shared_ops = { "shared", sim_send, sim_recv, NULL, NULL };

struct fx {
	char dir[64];
	struct sedsim *sim;
	struct opal_dev *a, *b;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sedsim_config cfg = { .blocks = 4096, .serial = "RESET01", .try_limit = 5 };

	strcpy(f->dir, "/tmp/test_opal_reset.XXXXXX");
	if (!mkdtemp(f->dir) || sedsim_create(f->dir, &cfg) || sedsim_open(f->dir, true, &f->sim))
		return -1;
	f->a = opal_dev_new(&shared_ops, f->sim);
	f->b = opal_dev_new(&shared_ops, f->sim);
	if (!f->a || !f->b)
		return -1;
	opal_dev_set_timeout(f->a, 300);
	opal_dev_set_timeout(f->b, 300);
	if (opal_take_ownership(f->a, &KEY) || opal_activate_locking_sp(f->a, &KEY))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	opal_dev_free(f->a);
	opal_dev_free(f->b);
	sedsim_close(f->sim);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	free(f);
	return system(cmd) ? -1 : 0;
}

static void test_busy_then_reset(void **state)
{
	struct fx *f = *state;
	struct opal_session *stale, *s;
	opal_uid g = opal_uid_locking_range(0);
	uint64_t v;

	/* Host A opens a session and goes away without ending it. */
	assert_int_equal(opal_admin1_session(f->a, &KEY, &stale), 0);
	/* Host B: the TPer is busy. */
	assert_int_equal(opal_admin1_session(f->b, &KEY, &s), OPAL_ST_SP_BUSY);
	/* An explicit Stack Reset clears it. */
	assert_int_equal(opal_stack_reset(f->b), 0);
	assert_int_equal(opal_admin1_session(f->b, &KEY, &s), 0);
	assert_int_equal(opal_get_column_uint(s, &g, OPAL_COL_READ_LOCK_ENABLED, &v), 0);
	/* A's session is gone: its calls get no answer. */
	assert_int_not_equal(opal_get_column_uint(stale, &g, OPAL_COL_READ_LOCK_ENABLED, &v), 0);
	opal_session_drop(stale);
	/* B leaves its session open; A, set to reset on busy, gets in by itself. */
	assert_int_equal(opal_admin1_session(f->a, &KEY, &stale), OPAL_ST_SP_BUSY);
	opal_dev_set_reset_on_busy(f->a, true);
	assert_int_equal(opal_admin1_session(f->a, &KEY, &stale), 0);
	assert_int_equal(opal_end_session(stale), 0);
	opal_session_drop(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_busy_then_reset, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
