// SPDX-License-Identifier: GPL-2.0-only
/* cryptbench option parsing, cipher names, key sizes and size lists. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cryptbench.h"

#define ARGV(...) ((char *[]){ "cryptbench", __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ "cryptbench", __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(o, e, ...) cb_options_parse(ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), o, e)

static void test_defaults(void **state)
{
	char *argv[] = { "cryptbench", NULL };
	struct cb_options o;
	struct cb_error e;

	(void)state;
	assert_int_equal(cb_options_parse(1, argv, &o, &e), 0);
	assert_null(o.cipher);
	assert_int_equal(o.key_bits, 256);
	assert_int_equal(o.n_request_sizes, 1);
	assert_int_equal(o.request_sizes[0], 1048576);
	assert_int_equal(o.threads, 1);
	assert_int_equal(o.queue_depth, 1);
	assert_int_equal(o.repeat, 1);
	assert_true(o.seconds == 1.0);
	assert_false(o.compare_cryptsetup);
	assert_false(o.copy);
	assert_false(o.all_drivers);
	assert_int_equal(o.format, CB_FMT_TABLE);
}

static void test_full_command(void **state)
{
	struct cb_options o;
	struct cb_error e;

	(void)state;
	assert_int_equal(PARSE(&o, &e, "--cipher", "aes-xts", "--key", "512",
			       "--all-drivers", "--request-size", "512,4096,64K,1M",
			       "--threads", "2", "--time", "0.5",
			       "--repeat", "3", "--compare-cryptsetup", "--copy",
			       "--json"), 0);
	assert_string_equal(o.cipher, "aes-xts");
	assert_int_equal(o.key_bits, 512);
	assert_true(o.all_drivers);
	assert_int_equal(o.n_request_sizes, 4);
	assert_int_equal(o.request_sizes[0], 512);
	assert_int_equal(o.request_sizes[1], 4096);
	assert_int_equal(o.request_sizes[2], 65536);
	assert_int_equal(o.request_sizes[3], 1048576);
	assert_int_equal(o.threads, 2);
	assert_int_equal(o.queue_depth, 1);
	assert_true(o.seconds == 0.5);
	assert_int_equal(o.repeat, 3);
	assert_true(o.compare_cryptsetup);
	assert_true(o.copy);
	assert_int_equal(o.format, CB_FMT_JSON);
}

static void test_short_options_and_drivers(void **state)
{
	struct cb_options o;
	struct cb_error e;

	(void)state;
	assert_int_equal(PARSE(&o, &e, "-c", "aes-xts", "-s", "256", "-d",
			       "xts-aes-aesni,xts-aes-offload", "-d", "xts-aes-generic",
			       "-r", "4096", "-t", "1", "-q", "1", "-n", "2", "--csv"), 0);
	assert_int_equal(o.n_drivers, 3);
	assert_string_equal(o.drivers[0], "xts-aes-aesni");
	assert_string_equal(o.drivers[1], "xts-aes-offload");
	assert_string_equal(o.drivers[2], "xts-aes-generic");
	assert_int_equal(o.format, CB_FMT_CSV);
	/* --key-size is accepted as in cryptsetup */
	assert_int_equal(PARSE(&o, &e, "--cipher", "aes-cbc", "--key-size", "128"), 0);
	assert_int_equal(o.key_bits, 128);
}

static void test_help_version(void **state)
{
	struct cb_options o;
	struct cb_error e;

	(void)state;
	assert_int_equal(PARSE(&o, &e, "--help"), 0);
	assert_true(o.help);
	assert_int_equal(PARSE(&o, &e, "-V"), 0);
	assert_true(o.version);
}

static void expect_error(int rc, const struct cb_error *e, enum cb_exit code,
			 const char *needle)
{
	assert_int_equal(rc, -1);
	assert_int_equal(e->code, code);
	assert_non_null(strstr(e->msg, needle));
	/* one line, "what failed: what to do" */
	assert_null(strchr(e->msg, '\n'));
	assert_non_null(strchr(e->msg, ':'));
}

static void test_usage_errors(void **state)
{
	struct cb_options o;
	struct cb_error e;

	(void)state;
	expect_error(PARSE(&o, &e, "--bogus"), &e, CB_EXIT_USAGE, "--bogus");
	expect_error(PARSE(&o, &e, "--cipher"), &e, CB_EXIT_USAGE, "needs an argument");
	expect_error(PARSE(&o, &e, "extra"), &e, CB_EXIT_USAGE, "extra");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "--json", "--csv"), &e,
		     CB_EXIT_USAGE, "--csv");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-a", "-d", "x"), &e,
		     CB_EXIT_USAGE, "--all-drivers");
	expect_error(PARSE(&o, &e, "--all-drivers"), &e, CB_EXIT_USAGE, "--cipher");
	expect_error(PARSE(&o, &e, "--key", "512"), &e, CB_EXIT_USAGE, "--cipher");
	expect_error(PARSE(&o, &e, "--compare-cryptsetup"), &e, CB_EXIT_USAGE, "--cipher");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-t", "0"), &e, CB_EXIT_USAGE, "--threads");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-q", "65"), &e, CB_EXIT_USAGE, "--queue-depth");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-n", "0"), &e, CB_EXIT_USAGE, "--repeat");
	/* AIO: one request must fit the socket buffer */
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-q", "2"), &e, CB_EXIT_USAGE, "--queue-depth");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-q", "2", "-r", "4096,128K"), &e,
		     CB_EXIT_USAGE, "64 KiB");
	assert_int_equal(PARSE(&o, &e, "-c", "aes-xts", "-q", "64", "-r", "512,4096,64K"), 0);
	/* one socket per request in flight */
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-t", "32", "-q", "64", "-r", "4096"), &e,
		     CB_EXIT_USAGE, "1024 sockets");
	assert_int_equal(PARSE(&o, &e, "-c", "aes-xts", "-t", "16", "-q", "64", "-r", "4096"), 0);
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "--time", "0"), &e, CB_EXIT_USAGE, "--time");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "--time", "abc"), &e, CB_EXIT_USAGE, "--time");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "-r", "512,,4096"), &e,
		     CB_EXIT_USAGE, "--request-size");
	expect_error(PARSE(&o, &e, "-c", "aes-xts", "--key", "x"), &e,
		     CB_EXIT_CIPHER, "key size");
}

static void test_size_parsing(void **state)
{
	size_t v, list[CB_MAX_SIZES], n;

	(void)state;
	assert_int_equal(cb_parse_size("512", &v), 0);
	assert_int_equal(v, 512);
	assert_int_equal(cb_parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cb_parse_size("64KiB", &v), 0);
	assert_int_equal(v, 65536);
	assert_int_equal(cb_parse_size("1M", &v), 0);
	assert_int_equal(v, 1048576);
	assert_int_equal(cb_parse_size("2MB", &v), 0);
	assert_int_equal(v, 2097152);
	assert_int_equal(cb_parse_size("64M", &v), 0);
	assert_int_equal(v, 64u << 20);
	assert_int_equal(cb_parse_size("65M", &v), -1);
	assert_int_equal(cb_parse_size("1G", &v), -1);
	assert_int_equal(cb_parse_size("0", &v), -1);
	assert_int_equal(cb_parse_size("-1", &v), -1);
	assert_int_equal(cb_parse_size("1X", &v), -1);
	assert_int_equal(cb_parse_size("", &v), -1);
	assert_int_equal(cb_parse_size("K", &v), -1);

	assert_int_equal(cb_parse_size_list("512,4096,1M", list, CB_MAX_SIZES, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(list[2], 1048576);
	assert_int_equal(cb_parse_size_list("512,", list, CB_MAX_SIZES, &n), -1);
	assert_int_equal(cb_parse_size_list(",512", list, CB_MAX_SIZES, &n), -1);
	assert_int_equal(cb_parse_size_list("", list, CB_MAX_SIZES, &n), -1);
	assert_int_equal(cb_parse_size_list("1,2,3", list, 2, &n), -1);
}

static void test_format_size(void **state)
{
	char b[24];

	(void)state;
	cb_format_size(512, b, sizeof(b));
	assert_string_equal(b, "512");
	cb_format_size(4096, b, sizeof(b));
	assert_string_equal(b, "4096");
	cb_format_size(65536, b, sizeof(b));
	assert_string_equal(b, "64K");
	cb_format_size(1048576, b, sizeof(b));
	assert_string_equal(b, "1M");
	cb_format_size(1536 * 1024, b, sizeof(b));
	assert_string_equal(b, "1536K");
	cb_format_size(1000, b, sizeof(b));
	assert_string_equal(b, "1000");
}

static void test_cipher_names(void **state)
{
	struct cb_cipher c;
	struct cb_error e;

	(void)state;
	assert_int_equal(cb_cipher_parse("aes-xts", 256, &c, &e), 0);
	assert_string_equal(c.cipher, "aes");
	assert_string_equal(c.mode, "xts");
	assert_string_equal(c.spec, "aes-xts");
	assert_string_equal(c.kname, "xts(aes)");
	assert_int_equal(c.key_bits, 256);
	/* the IV generator does not change the cipher */
	assert_int_equal(cb_cipher_parse("aes-xts-plain64", 512, &c, &e), 0);
	assert_string_equal(c.spec, "aes-xts");
	assert_string_equal(c.kname, "xts(aes)");
	assert_int_equal(cb_cipher_parse("aes-cbc-essiv:sha256", 128, &c, &e), 0);
	assert_string_equal(c.kname, "cbc(aes)");
	assert_int_equal(cb_cipher_parse("serpent-xts", 512, &c, &e), 0);
	assert_string_equal(c.kname, "xts(serpent)");
	/* unknown to the table: the kernel decides */
	assert_int_equal(cb_cipher_parse("foo-bar", 200, &c, &e), 0);
	assert_string_equal(c.kname, "bar(foo)");

	expect_error(cb_cipher_parse("aes", 256, &c, &e), &e, CB_EXIT_CIPHER, "cipher-mode");
	expect_error(cb_cipher_parse("-xts", 256, &c, &e), &e, CB_EXIT_CIPHER, "cipher-mode");
	expect_error(cb_cipher_parse("aes-", 256, &c, &e), &e, CB_EXIT_CIPHER, "cipher-mode");
	expect_error(cb_cipher_parse("a(s)-xts", 256, &c, &e), &e, CB_EXIT_CIPHER, "cipher-mode");
	expect_error(cb_cipher_parse("foo-bar", 12, &c, &e), &e, CB_EXIT_CIPHER, "multiple of 8");
}

static void test_key_sizes(void **state)
{
	struct cb_cipher c;
	struct cb_error e;

	(void)state;
	/* total key bits: XTS doubles, 384 is AES-192-XTS */
	assert_int_equal(cb_cipher_parse("aes-xts", 384, &c, &e), 0);
	assert_int_equal(cb_cipher_parse("aes-xts", 512, &c, &e), 0);
	assert_int_equal(cb_cipher_parse("aes-cbc", 192, &c, &e), 0);
	assert_int_equal(cb_cipher_parse("aes-lrw", 384, &c, &e), 0);
	expect_error(cb_cipher_parse("aes-xts", 128, &c, &e), &e, CB_EXIT_CIPHER,
		     "256, 384, 512");
	expect_error(cb_cipher_parse("aes-xts", 1024, &c, &e), &e, CB_EXIT_CIPHER,
		     "invalid key size 1024");
	expect_error(cb_cipher_parse("aes-cbc", 512, &c, &e), &e, CB_EXIT_CIPHER,
		     "128, 192, 256");
	expect_error(cb_cipher_parse("sm4-xts", 512, &c, &e), &e, CB_EXIT_CIPHER,
		     "256");
}

static void test_error_mapping(void **state)
{
	const char text[] = "name : xts(aes)\ndriver : xts-aes-aesni\npriority : 401\n";
	struct cb_alg_list procs;
	struct cb_error e;

	(void)state;
	assert_int_equal(cb_proc_crypto_parse(text, &procs), 0);
	/* unknown name: exit 2; a name the kernel has: algif_skcipher missing */
	cb_afalg_error(-ENOENT, "xts(nonesuch)", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_CIPHER);
	cb_afalg_error(-ENOENT, "xts-aes-aesni", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_NO_AFALG);
	assert_non_null(strstr(e.msg, "modprobe algif_skcipher"));
	cb_afalg_error(-EAFNOSUPPORT, "xts(aes)", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_NO_AFALG);
	assert_non_null(strstr(e.msg, "modprobe af_alg"));
	cb_afalg_error(-EPROTONOSUPPORT, "xts(aes)", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_NO_AFALG);
	assert_non_null(strstr(e.msg, "modprobe crypto_user"));
	cb_afalg_error(-EACCES, "xts(aes)", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_PERM);
	cb_afalg_error(-EPERM, "xts(aes)", "AF_ALG bind", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_PERM);
	cb_afalg_error(-EINVAL, "xts(aes)", "setkey", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_CIPHER);
	cb_afalg_error(-EBUSY, "xts(aes)", "encryption with", &procs, &e);
	assert_int_equal(e.code, CB_EXIT_RUNTIME);
	assert_non_null(strstr(e.msg, "encryption with xts(aes) failed"));
	cb_alg_list_free(&procs);
}

/* The unknown-cipher error names what was typed, not only the kernel name. */
static void test_unknown_cipher_names_input(void **state)
{
	struct cb_cipher c;
	struct cb_error e;

	(void)state;
	assert_int_equal(cb_cipher_parse("no-such-cipher", 256, &c, &e), 0);
	assert_string_equal(c.kname, "such(no)");
	assert_string_equal(c.given, "no-such-cipher");
	cb_cipher_unknown(&c, &e);
	assert_int_equal(e.code, CB_EXIT_CIPHER);
	assert_non_null(strstr(e.msg, "unknown cipher 'no-such-cipher' (kernel name 'such(no)')"));
	/* the forms accepted, in one line */
	assert_non_null(strstr(e.msg, "cipher-mode[-ivgen]"));
	assert_null(strchr(e.msg, '\n'));
	assert_int_equal(cb_cipher_parse("aes-xts-plain64", 512, &c, &e), 0);
	assert_string_equal(c.given, "aes-xts-plain64");
	cb_cipher_unknown(&c, &e);
	assert_non_null(strstr(e.msg, "'aes-xts-plain64' (kernel name 'xts(aes)')"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_full_command),
		cmocka_unit_test(test_short_options_and_drivers),
		cmocka_unit_test(test_help_version),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_size_parsing),
		cmocka_unit_test(test_format_size),
		cmocka_unit_test(test_cipher_names),
		cmocka_unit_test(test_key_sizes),
		cmocka_unit_test(test_error_mapping),
		cmocka_unit_test(test_unknown_cipher_names_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
