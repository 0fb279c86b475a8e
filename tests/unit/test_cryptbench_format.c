// SPDX-License-Identifier: GPL-2.0-only
/*
 * cryptbench output: cryptsetup's table (reference lines are real
 * `cryptsetup benchmark` 2.6 output), the extended table, JSON, CSV.
 */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cryptbench.h"

static char *render(int (*writer)(FILE *, const struct cb_report *),
		    const struct cb_report *rep)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(writer(f, rep), 0);
	fclose(f);
	return buf;
}

static void set_result(struct cb_result *r, const char *cipher, unsigned int bits,
		       double enc, double dec)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->cipher, sizeof(r->cipher), "%s", cipher);
	r->key_bits = bits;
	r->available = true;
	r->n_samples = 1;
	r->enc_samples[0] = enc;
	r->dec_samples[0] = dec;
	r->cpu_enc = r->cpu_dec = -1;
	cb_stat_compute(r->enc_samples, 1, &r->enc);
	cb_stat_compute(r->dec_samples, 1, &r->dec);
	r->request_size = 1u << 20;
	r->threads = 1;
	r->queue_depth = 1;
	r->zero_copy = true;
}

static void test_compat_table(void **state)
{
	struct cb_pbkdf_result pb[3];
	struct cb_result res[3];
	struct cb_report rep = { .compat = true, .repeat = 1 };
	char *out;
	const char *expect =
		"# Tests are approximate using memory only (no storage IO).\n"
		"PBKDF2-sha1      1277193 iterations per second for 256-bit key\n"
		"PBKDF2-ripemd160  614640 iterations per second for 256-bit key\n"
		"argon2i       4 iterations, 246473 memory, 4 parallel threads (CPUs) for 256-bit key (requested 2000 ms time)\n"
		"#     Algorithm |       Key |      Encryption |      Decryption\n"
		"        aes-xts        256b      5346.1 MiB/s      5346.6 MiB/s\n"
		"    serpent-cbc        128b               N/A               N/A\n"
		"        aes-xts        512b      4901.7 MiB/s      4965.9 MiB/s\n";

	(void)state;
	memset(pb, 0, sizeof(pb));
	strcpy(pb[0].type, "pbkdf2");
	strcpy(pb[0].hash, "sha1");
	pb[0].available = true;
	pb[0].iterations = 1277193;
	pb[0].key_bits = 256;
	pb[1] = pb[0];
	strcpy(pb[1].hash, "ripemd160");
	pb[1].iterations = 614640;
	strcpy(pb[2].type, "argon2i");
	pb[2].available = true;
	pb[2].iterations = 4;
	pb[2].memory_kb = 246473;
	pb[2].threads = 4;
	pb[2].time_ms = 2000;
	pb[2].key_bits = 256;
	set_result(&res[0], "aes-xts", 256, 5346.1, 5346.6);
	set_result(&res[1], "serpent-cbc", 128, 0, 0);
	res[1].available = false;
	set_result(&res[2], "aes-xts", 512, 4901.7, 4965.9);
	rep.pbkdf = pb;
	rep.n_pbkdf = 3;
	rep.results = res;
	rep.n_results = 3;
	out = render(cb_write_table, &rep);
	assert_string_equal(out, expect);
	free(out);
}

static void test_pbkdf_na(void **state)
{
	struct cb_pbkdf_result pb[2];
	struct cb_report rep = { .compat = true, .pbkdf = pb, .n_pbkdf = 2 };
	char *out;

	(void)state;
	memset(pb, 0, sizeof(pb));
	strcpy(pb[0].type, "pbkdf2");
	strcpy(pb[0].hash, "whirlpool");
	strcpy(pb[1].type, "argon2id");
	out = render(cb_write_table, &rep);
	assert_string_equal(out,
			    "# Tests are approximate using memory only (no storage IO).\n"
			    "PBKDF2-whirlpool     N/A\n"
			    "argon2id   N/A\n");
	free(out);
}

static struct cb_report ext_report(struct cb_result *res)
{
	struct cb_report rep = { .single = true, .repeat = 3, .seconds = 1.0 };
	const double enc[3] = { 210.0, 200.0, 190.0 };
	const double dec[3] = { 220.0, 220.0, 220.0 };

	set_result(&res[0], "aes-xts", 256, 0, 0);
	memcpy(res[0].enc_samples, enc, sizeof(enc));
	memcpy(res[0].dec_samples, dec, sizeof(dec));
	res[0].n_samples = 3;
	cb_stat_compute(enc, 3, &res[0].enc);
	cb_stat_compute(dec, 3, &res[0].dec);
	strcpy(res[0].driver, "xts-aes-offload");
	res[0].is_default = true;
	res[0].priority = 1000;
	res[0].request_size = 4096;
	res[0].queue_depth = 8;
	res[0].cpu_enc = 1.25;
	res[0].cpu_dec = 2.5;
	res[0].has_engine = true;
	res[0].engine_share = 0.75;
	res[0].has_cryptsetup = true;
	strcpy(res[0].cs_driver, "xts-aes-offload");
	res[0].cs_enc = 181.8;
	res[0].cs_dec = 200.0;

	set_result(&res[1], "aes-xts", 256, 150.0, 151.0);
	strcpy(res[1].driver, "xts-aes-aesni");
	res[1].priority = 401;
	res[1].zero_copy = false;
	res[1].has_engine = true;
	res[1].engine_share = 0.0;
	res[1].cpu_enc = 6.0;
	res[1].cpu_dec = 6.5;
	rep.results = res;
	rep.n_results = 2;
	return rep;
}

static void test_extended_table(void **state)
{
	struct cb_result res[2];
	struct cb_report rep = ext_report(res);
	char *out, *line2, *line3;

	(void)state;
	out = render(cb_write_table, &rep);
	/* cryptsetup's one-cipher header (width 11), then our columns */
	line2 = strchr(out, '\n') + 1;
	assert_memory_equal(line2,
			    "# Algorithm |       Key |      Encryption |      Decryption |",
			    strlen("# Algorithm |       Key |      Encryption |      Decryption |"));
	line3 = strchr(line2, '\n') + 1;
	/* the row starts exactly like `cryptsetup benchmark -c aes-xts -s 256` */
	assert_memory_equal(line3, "    aes-xts        256b       200.0 MiB/s       220.0 MiB/s",
			    strlen("    aes-xts        256b       200.0 MiB/s       220.0 MiB/s"));
	assert_non_null(strstr(line3, "     4096"));
	assert_non_null(strstr(line3, "vmsplice"));
	assert_non_null(strstr(line3, "  1.25/2.50  "));
	/* every compound column is one blank-free field */
	assert_null(strstr(line3, "/ "));
	assert_null(strstr(line3, " /"));
	assert_non_null(strstr(line3, " 75.0%"));
	/* spread (210 - 190) / 200 = 10 %, 0 % */
	assert_non_null(strstr(line3, " 10.0/0.0%"));
	/* cryptsetup figures and the ratio 200 / 181.8 = 1.10, 220 / 200 = 1.10 */
	assert_non_null(strstr(line3, "181.8/200.0"));
	assert_non_null(strstr(line3, "1.10/1.10"));
	assert_non_null(strstr(line3, "*xts-aes-offload\n"));
	assert_non_null(strstr(out, "sendmsg"));
	assert_non_null(strstr(out, "  0.0%"));
	assert_non_null(strstr(out, "  xts-aes-aesni\n"));
	/* header columns line up with the row's */
	assert_int_equal(strchr(line2, '\n') - line2 > 0, 1);
	free(out);
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

static void test_json(void **state)
{
	struct cb_result res[2];
	struct cb_pbkdf_result pb;
	struct cb_report rep = ext_report(res);
	json_object *root, *arr, *r, *cs;
	char *out;

	(void)state;
	memset(&pb, 0, sizeof(pb));
	strcpy(pb.type, "argon2id");
	pb.available = true;
	pb.iterations = 4;
	pb.memory_kb = 1048576;
	pb.threads = 2;
	pb.time_ms = 2000;
	pb.key_bits = 256;
	rep.pbkdf = &pb;
	rep.n_pbkdf = 1;
	out = render(cb_write_json, &rep);
	root = json_tokener_parse(out);
	assert_non_null(root);
	assert_string_equal(json_object_get_string(get(root, "tool")), "cryptbench");
	assert_int_equal(json_object_get_int(get(root, "repeat")), 3);
	arr = get(root, "pbkdf");
	assert_int_equal(json_object_array_length(arr), 1);
	r = json_object_array_get_idx(arr, 0);
	assert_int_equal(json_object_get_int(get(r, "memory_kb")), 1048576);
	assert_int_equal(json_object_get_int(get(r, "iterations")), 4);
	assert_int_equal(json_object_get_int(get(r, "parallel_threads")), 2);
	assert_int_equal(json_object_get_int(get(r, "requested_time_ms")), 2000);

	arr = get(root, "ciphers");
	assert_int_equal(json_object_array_length(arr), 2);
	r = json_object_array_get_idx(arr, 0);
	assert_string_equal(json_object_get_string(get(r, "cipher")), "aes-xts");
	assert_int_equal(json_object_get_int(get(r, "key_bits")), 256);
	assert_string_equal(json_object_get_string(get(r, "driver")), "xts-aes-offload");
	assert_true(json_object_get_boolean(get(r, "default")));
	assert_int_equal(json_object_get_int(get(r, "priority")), 1000);
	assert_int_equal(json_object_get_int(get(r, "request_size")), 4096);
	assert_int_equal(json_object_get_int(get(r, "queue_depth")), 8);
	assert_string_equal(json_object_get_string(get(r, "access")), "vmsplice");
	assert_float_equal(json_object_get_double(get(get(r, "encryption_mib_s"), "median")), 200.0, 1e-9);
	assert_float_equal(json_object_get_double(get(get(r, "encryption_mib_s"), "min")), 190.0, 1e-9);
	assert_float_equal(json_object_get_double(get(get(r, "encryption_mib_s"), "max")), 210.0, 1e-9);
	assert_float_equal(json_object_get_double(get(get(r, "encryption_mib_s"), "spread_pct")), 10.0, 1e-9);
	assert_int_equal(json_object_array_length(get(get(r, "encryption_mib_s"), "samples")), 3);
	assert_float_equal(json_object_get_double(get(get(r, "decryption_mib_s"), "median")), 220.0, 1e-9);
	assert_float_equal(json_object_get_double(get(r, "cpu_s_per_gib_encryption")), 1.25, 1e-9);
	assert_float_equal(json_object_get_double(get(r, "cpu_s_per_gib_decryption")), 2.5, 1e-9);
	assert_float_equal(json_object_get_double(get(r, "engine_share")), 0.75, 1e-9);
	cs = get(r, "cryptsetup");
	assert_string_equal(json_object_get_string(get(cs, "driver")), "xts-aes-offload");
	assert_true(json_object_get_boolean(get(cs, "same_driver")));
	assert_float_equal(json_object_get_double(get(cs, "encryption_mib_s")), 181.8, 1e-9);
	assert_float_equal(json_object_get_double(get(cs, "ratio_encryption")), 200.0 / 181.8, 1e-9);
	assert_float_equal(json_object_get_double(get(cs, "ratio_decryption")), 1.1, 1e-9);

	r = json_object_array_get_idx(arr, 1);
	assert_string_equal(json_object_get_string(get(r, "access")), "sendmsg");
	assert_false(json_object_get_boolean(get(r, "default")));
	assert_float_equal(json_object_get_double(get(r, "engine_share")), 0.0, 1e-12);
	/* absent figures are null, never a made-up number */
	assert_null(get(r, "cryptsetup"));
	json_object_put(root);
	free(out);
}

/* Whether libkcapi could be used: null until AF_ALG was there to try. */
static void test_json_crypto_user(void **state)
{
	struct cb_result res[2];
	struct cb_report rep = ext_report(res);
	json_object *root;
	char *out;

	(void)state;
	out = render(cb_write_json, &rep);
	root = json_tokener_parse(out);
	assert_non_null(root);
	assert_null(get(root, "crypto_user"));
	json_object_put(root);
	free(out);
	rep.crypto_user_checked = true;
	rep.crypto_user = false;
	out = render(cb_write_json, &rep);
	root = json_tokener_parse(out);
	assert_non_null(root);
	assert_true(json_object_is_type(get(root, "crypto_user"), json_type_boolean));
	assert_false(json_object_get_boolean(get(root, "crypto_user")));
	/* driver details come from /proc/crypto either way */
	assert_string_equal(json_object_get_string(get(json_object_array_get_idx(get(root, "ciphers"), 0), "driver")),
			    "xts-aes-offload");
	json_object_put(root);
	free(out);
	rep.crypto_user = true;
	out = render(cb_write_json, &rep);
	root = json_tokener_parse(out);
	assert_true(json_object_get_boolean(get(root, "crypto_user")));
	json_object_put(root);
	free(out);
}

static size_t count_fields(const char *line)
{
	size_t n = 1;

	for (; *line && *line != '\n'; line++)
		n += *line == ',';
	return n;
}

static void test_csv(void **state)
{
	struct cb_result res[2];
	struct cb_report rep = ext_report(res);
	char *out, *row1, *row2;

	(void)state;
	out = render(cb_write_csv, &rep);
	row1 = strchr(out, '\n') + 1;
	row2 = strchr(row1, '\n') + 1;
	assert_int_equal(count_fields(out), 25);
	assert_int_equal(count_fields(row1), 25);
	assert_int_equal(count_fields(row2), 25);
	assert_memory_equal(out, "cipher,key_bits,driver,default,", 31);
	assert_memory_equal(row1,
			    "aes-xts,256,xts-aes-offload,1,1000,4096,1,8,vmsplice,1,3,200,190,210,220,220,220,1.25,2.5,0.75,xts-aes-offload,181.8,200,",
			    strlen("aes-xts,256,xts-aes-offload,1,1000,4096,1,8,vmsplice,1,3,200,190,210,220,220,220,1.25,2.5,0.75,xts-aes-offload,181.8,200,"));
	/* no cryptsetup reference: empty fields */
	assert_non_null(strstr(row2, ",0,,,,,\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compat_table),
		cmocka_unit_test(test_pbkdf_na),
		cmocka_unit_test(test_extended_table),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_crypto_user),
		cmocka_unit_test(test_csv),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
