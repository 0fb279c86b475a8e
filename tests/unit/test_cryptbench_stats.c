// SPDX-License-Identifier: GPL-2.0-only
/* cryptbench statistics and units. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cryptbench.h"

#define MIB (1024.0 * 1024.0)
#define GIB (1024.0 * 1024.0 * 1024.0)

static void test_median_odd_even(void **state)
{
	const double odd[] = { 5.0, 1.0, 3.0 };
	const double even[] = { 4.0, 1.0, 3.0, 2.0 };
	const double one[] = { 7.5 };
	struct cb_stat st;

	(void)state;
	cb_stat_compute(odd, 3, &st);
	assert_true(st.median == 3.0);
	assert_true(st.min == 1.0);
	assert_true(st.max == 5.0);
	assert_int_equal(st.n, 3);
	cb_stat_compute(even, 4, &st);
	assert_true(st.median == 2.5);
	assert_true(st.min == 1.0);
	assert_true(st.max == 4.0);
	cb_stat_compute(one, 1, &st);
	assert_true(st.median == 7.5);
	assert_true(cb_stat_spread_pct(&st) == 0.0);
	cb_stat_compute(one, 0, &st);
	assert_int_equal(st.n, 0);
	assert_true(st.median == 0.0);
	/* the input is not reordered */
	assert_true(odd[0] == 5.0 && odd[1] == 1.0);
}

static void test_spread(void **state)
{
	const double s[] = { 190.0, 200.0, 210.0 };
	struct cb_stat st;

	(void)state;
	cb_stat_compute(s, 3, &st);
	/* (210 - 190) / 200 = 10 % */
	assert_float_equal(cb_stat_spread_pct(&st), 10.0, 1e-9);
}

static void test_units(void **state)
{
	(void)state;
	/* 1 GiB in 4 s = 256 MiB/s (binary units, as cryptsetup) */
	assert_float_equal(cb_mib_per_s((uint64_t)GIB, 4.0), 256.0, 1e-9);
	assert_float_equal(cb_mib_per_s(3 * (uint64_t)MIB, 0.5), 6.0, 1e-9);
	assert_true(cb_mib_per_s(100, 0.0) == 0.0);
	/* 2 CPU seconds for 512 MiB = 4 s/GiB */
	assert_float_equal(cb_cpu_s_per_gib(2.0, 512 * (uint64_t)MIB), 4.0, 1e-9);
	assert_true(cb_cpu_s_per_gib(1.0, 0) < 0);
	assert_true(cb_cpu_s_per_gib(-1.0, 100) < 0);
	assert_float_equal(cb_ratio(220.0, 200.0), 1.1, 1e-9);
	assert_true(cb_ratio(1.0, 0.0) == 0.0);
}

static void test_result_samples(void **state)
{
	struct cb_result r;
	struct cb_sample enc = { 0 }, dec = { 0 };
	unsigned int i;

	(void)state;
	memset(&r, 0, sizeof(r));
	/* three samples: 100, 300, 200 MiB/s encryption; engine did 3/4 */
	for (i = 0; i < 3; i++) {
		double mibs = i == 0 ? 100 : i == 1 ? 300 : 200;

		enc.bytes = (uint64_t)(mibs * MIB);
		enc.seconds = 1.0;
		enc.cpu_seconds = 0.5;
		enc.has_engine = true;
		enc.engine_bytes = enc.bytes * 3 / 4;
		dec.bytes = 64 * (uint64_t)MIB;
		dec.seconds = 0.5;
		dec.cpu_seconds = -1.0;
		dec.has_engine = true;
		dec.engine_bytes = dec.bytes * 3 / 4;
		cb_result_add_sample(&r, &enc, &dec);
	}
	cb_result_finish(&r);
	assert_int_equal(r.n_samples, 3);
	assert_float_equal(r.enc.median, 200.0, 1e-6);
	assert_float_equal(r.enc.min, 100.0, 1e-6);
	assert_float_equal(r.enc.max, 300.0, 1e-6);
	assert_float_equal(r.dec.median, 128.0, 1e-6);
	/* 0.5 CPU s for 200 MiB: 2.56 s/GiB */
	assert_float_equal(r.cpu_enc, 0.5 / (200.0 / 1024.0), 1e-6);
	assert_true(r.cpu_dec < 0);
	assert_true(r.has_engine);
	assert_float_equal(r.engine_share, 0.75, 1e-6);
}

static void test_result_no_engine(void **state)
{
	struct cb_result r;
	struct cb_sample enc = { .bytes = 1024, .seconds = 1, .cpu_seconds = 0 };
	struct cb_sample dec = enc;

	(void)state;
	memset(&r, 0, sizeof(r));
	cb_result_add_sample(&r, &enc, &dec);
	cb_result_finish(&r);
	assert_false(r.has_engine);
	assert_float_equal(r.cpu_enc, 0.0, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_odd_even),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_result_samples),
		cmocka_unit_test(test_result_no_engine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
