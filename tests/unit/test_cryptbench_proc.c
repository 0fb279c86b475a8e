// SPDX-License-Identifier: GPL-2.0-only
/* cryptbench: /proc/crypto and /proc/stat parsing, offload counters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cryptbench.h"

/* Layout of the kernel's /proc/crypto (crypto/proc.c, skcipher show). */
static const char proc_crypto[] =
	"name         : __xts(aes)\n"
	"driver       : __xts-aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 401\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : yes\n"
	"type         : skcipher\n"
	"async        : no\n"
	"blocksize    : 16\n"
	"min keysize  : 32\n"
	"max keysize  : 64\n"
	"ivsize       : 16\n"
	"chunksize    : 16\n"
	"walksize     : 16\n"
	"\n"
	"name         : xts(aes)\n"
	"driver       : xts(ecb(aes-generic))\n"
	"module       : kernel\n"
	"priority     : 100\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"async        : no\n"
	"blocksize    : 16\n"
	"min keysize  : 32\n"
	"max keysize  : 64\n"
	"ivsize       : 16\n"
	"chunksize    : 16\n"
	"walksize     : 16\n"
	"\n"
	"name         : xts(aes)\n"
	"driver       : xts-aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 401\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"async        : yes\n"
	"blocksize    : 16\n"
	"min keysize  : 32\n"
	"max keysize  : 64\n"
	"ivsize       : 16\n"
	"chunksize    : 16\n"
	"walksize     : 16\n"
	"\n"
	"name         : xts(aes)\n"
	"driver       : xts-aes-broken\n"
	"module       : broken\n"
	"priority     : 5000\n"
	"refcnt       : 1\n"
	"selftest     : failed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"async        : yes\n"
	"\n"
	"name         : xts(aes)\n"
	"driver       : xts-aes-offload\n"
	"module       : xts_offload\n"
	"priority     : 1000\n"
	"refcnt       : 2\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"async        : yes\n"
	"blocksize    : 16\n"
	"min keysize  : 32\n"
	"max keysize  : 64\n"
	"ivsize       : 16\n"
	"chunksize    : 16\n"
	"walksize     : 16\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-first\n"
	"module       : a\n"
	"priority     : 500\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-second\n"
	"module       : b\n"
	"priority     : 500\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : aes\n"
	"driver       : aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 300\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : cipher\n"
	"blocksize    : 16\n"
	"min keysize  : 16\n"
	"max keysize  : 32\n"
	"\n";

static void test_parse_fields(void **state)
{
	struct cb_alg_list l;
	const struct cb_alg *a;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse(proc_crypto, &l), 0);
	assert_int_equal(l.n, 8);
	a = cb_alg_by_driver(&l, "xts-aes-aesni");
	assert_non_null(a);
	assert_string_equal(a->name, "xts(aes)");
	assert_string_equal(a->module, "aesni_intel");
	assert_string_equal(a->type, "skcipher");
	assert_string_equal(a->selftest, "passed");
	assert_int_equal(a->priority, 401);
	assert_false(a->internal);
	assert_true(a->async);
	assert_int_equal(a->min_keysize, 32);
	assert_int_equal(a->max_keysize, 64);
	assert_int_equal(a->ivsize, 16);
	assert_int_equal(a->blocksize, 16);
	a = cb_alg_by_driver(&l, "__xts-aes-aesni");
	assert_non_null(a);
	assert_true(a->internal);
	assert_false(a->async);
	assert_null(cb_alg_by_driver(&l, "xts-aes-none"));
	assert_true(cb_alg_known(&l, "xts(aes)"));
	assert_true(cb_alg_known(&l, "xts-aes-offload"));
	assert_false(cb_alg_known(&l, "xts(serpent)"));
	cb_alg_list_free(&l);
}

static void test_default_driver(void **state)
{
	struct cb_alg_list l;
	const struct cb_alg *a;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse(proc_crypto, &l), 0);
	/* failed self-test (5000) and internal entries never win */
	a = cb_alg_default(&l, "xts(aes)");
	assert_non_null(a);
	assert_string_equal(a->driver, "xts-aes-offload");
	/* equal priority: the first listed, as the kernel's lookup */
	a = cb_alg_default(&l, "cbc(aes)");
	assert_non_null(a);
	assert_string_equal(a->driver, "cbc-aes-first");
	/* a plain cipher is not an skcipher */
	assert_null(cb_alg_default(&l, "aes"));
	assert_null(cb_alg_default(&l, "xts(serpent)"));
	cb_alg_list_free(&l);
}

static void test_all_drivers(void **state)
{
	const struct cb_alg *out[CB_MAX_DRIVERS];
	struct cb_alg_list l;
	size_t n;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse(proc_crypto, &l), 0);
	n = cb_alg_drivers(&l, "xts(aes)", out, CB_MAX_DRIVERS);
	assert_int_equal(n, 3);
	assert_string_equal(out[0]->driver, "xts-aes-offload");
	assert_string_equal(out[1]->driver, "xts-aes-aesni");
	assert_string_equal(out[2]->driver, "xts(ecb(aes-generic))");
	n = cb_alg_drivers(&l, "cbc(aes)", out, CB_MAX_DRIVERS);
	assert_int_equal(n, 2);
	assert_string_equal(out[0]->driver, "cbc-aes-first");
	assert_string_equal(out[1]->driver, "cbc-aes-second");
	n = cb_alg_drivers(&l, "xts(aes)", out, 1);
	assert_int_equal(n, 1);
	cb_alg_list_free(&l);
}

/*
 * Without crypto_user the IV and block sizes of what a bind gets come from
 * here: a driver name gets that driver, a generic name the kernel's pick.
 */
static void test_bound_entry(void **state)
{
	struct cb_alg_list l;
	const struct cb_alg *a;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse(proc_crypto, &l), 0);
	a = cb_alg_bound(&l, "xts-aes-aesni");
	assert_non_null(a);
	assert_string_equal(a->driver, "xts-aes-aesni");
	assert_int_equal(a->ivsize, 16);
	assert_int_equal(a->blocksize, 16);
	a = cb_alg_bound(&l, "xts(aes)");
	assert_non_null(a);
	assert_string_equal(a->driver, "xts-aes-offload");
	assert_int_equal(a->ivsize, 16);
	/* a driver that is not an skcipher, and a name not listed: none */
	assert_null(cb_alg_bound(&l, "aes-aesni"));
	assert_null(cb_alg_bound(&l, "xts(serpent)"));
	assert_null(cb_alg_bound(NULL, "xts(aes)"));
	cb_alg_list_free(&l);
}

static void test_parse_edge_cases(void **state)
{
	struct cb_alg_list l;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse("", &l), 0);
	assert_int_equal(l.n, 0);
	cb_alg_list_free(&l);
	/* no trailing blank line, no final newline */
	assert_int_equal(cb_proc_crypto_parse("name : a\ndriver : a-x\npriority : 7", &l), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.algs[0].priority, 7);
	cb_alg_list_free(&l);
	/* entries not separated by a blank line still split at "name" */
	assert_int_equal(cb_proc_crypto_parse("name : a\ndriver : a-x\nname : b\ndriver : b-x\n", &l), 0);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.algs[1].driver, "b-x");
	cb_alg_list_free(&l);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/cb-crypto-XXXXXX";
	struct cb_alg_list l;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, proc_crypto, strlen(proc_crypto)),
			 (ssize_t)strlen(proc_crypto));
	close(fd);
	assert_int_equal(cb_proc_crypto_read(path, &l), 0);
	assert_int_equal(l.n, 8);
	cb_alg_list_free(&l);
	unlink(path);
	assert_true(cb_proc_crypto_read("/nonexistent/crypto", &l) < 0);
}

static void test_proc_stat(void **state)
{
	const char text[] =
		"cpu  100 20 300 4000 50 6 7 8 9 10\n"
		"cpu0 50 10 150 2000 25 3 3 4 0 0\n"
		"intr 12345\n";
	uint64_t busy;

	(void)state;
	/* user+nice+system+irq+softirq+steal; idle and iowait excluded */
	assert_int_equal(cb_proc_stat_busy(text, &busy), 0);
	assert_int_equal(busy, 100 + 20 + 300 + 6 + 7 + 8);
	/* older kernels without steal */
	assert_int_equal(cb_proc_stat_busy("cpu  1 2 3 4 5 6 7\n", &busy), 0);
	assert_int_equal(busy, 1 + 2 + 3 + 6 + 7);
	/* the line may come later */
	assert_int_equal(cb_proc_stat_busy("x 1\ncpu  1 1 1 1 1 1 1 1\n", &busy), 0);
	assert_int_equal(busy, 6);
	assert_int_equal(cb_proc_stat_busy("cpu0 1 2 3\n", &busy), -EINVAL);
	assert_int_equal(cb_proc_stat_busy("cpu  1 2\n", &busy), -EINVAL);
}

static void test_cpu_seconds_live(void **state)
{
	double a, b;
	volatile unsigned long spin = 0;
	unsigned long i;

	(void)state;
	/* busy time of all CPUs never decreases and grows while we spin */
	assert_int_equal(cb_cpu_busy_seconds(NULL, &a), 0);
	for (i = 0; i < 200000000UL; i++)
		spin += i;
	assert_int_equal(cb_cpu_busy_seconds(NULL, &b), 0);
	assert_true(b > a);
}

static void test_offload_counter(void **state)
{
	char dir[] = "/tmp/cb-stats-XXXXXX", path[64];
	uint64_t v = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/bytes", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("123456789012\n", f);
	fclose(f);
	assert_int_equal(cb_offload_counter(dir, "bytes", &v), 0);
	assert_true(v == 123456789012ULL);
	assert_int_equal(cb_offload_counter(dir, "requests", &v), -ENOENT);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("12x\n", f);
	fclose(f);
	assert_int_equal(cb_offload_counter(dir, "bytes", &v), -EINVAL);
	unlink(path);
	rmdir(dir);
}

/*
 * With the module loaded and its counters out of reach: one line saying
 * why. Without the module, or with readable counters: nothing.
 */
static void test_offload_check(void **state)
{
	char top[] = "/tmp/cb-check-XXXXXX", mod[64], stats[64], path[80];
	char msg[CB_NOTICE_MAX];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(mod, sizeof(mod), "%s/module", top);
	snprintf(stats, sizeof(stats), "%s/stats", top);

	/* No module: nothing to say, debugfs or not. */
	assert_int_equal(cb_offload_check(stats, mod, top, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");

	/* The module, no debugfs on the mount point (a plain directory). */
	assert_int_equal(mkdir(mod, 0755), 0);
	assert_int_equal(cb_offload_check(stats, mod, top, msg, sizeof(msg)), -ENOENT);
	assert_null(strchr(msg, '\n'));
	assert_non_null(strstr(msg, "xts_offload is loaded but debugfs is not mounted"));
	assert_non_null(strstr(msg, "engine share not measured"));
	assert_non_null(strstr(msg, top));

	/* Counters there but unreadable ("bytes" is a directory). */
	assert_int_equal(mkdir(stats, 0755), 0);
	snprintf(path, sizeof(path), "%s/bytes", stats);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_not_equal(cb_offload_check(stats, mod, top, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "counters in"));
	assert_non_null(strstr(msg, stats));
	assert_non_null(strstr(msg, "engine share not measured"));
	rmdir(path);

	/* Readable counters. */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("0\n", f);
	fclose(f);
	assert_int_equal(cb_offload_check(stats, mod, top, msg, sizeof(msg)), 0);
	assert_string_equal(msg, "");
	unlink(path);
	rmdir(stats);
	rmdir(mod);
	rmdir(top);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),
		cmocka_unit_test(test_default_driver),
		cmocka_unit_test(test_all_drivers),
		cmocka_unit_test(test_bound_entry),
		cmocka_unit_test(test_parse_edge_cases),
		cmocka_unit_test(test_read_file),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_cpu_seconds_live),
		cmocka_unit_test(test_offload_counter),
		cmocka_unit_test(test_offload_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
