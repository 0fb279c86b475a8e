// SPDX-License-Identifier: GPL-2.0-only
/*
 * cryptbench command line: cipher names, key sizes, size lists, options.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cryptbench.h"

void cb_error_set(struct cb_error *err, enum cb_exit code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

/* Key sizes (bits) of one block cipher key; 0 ends a list. */
struct cipher_keys {
	const char *name;
	unsigned int bits[4];
};

static const struct cipher_keys known_ciphers[] = {
	{ "aes", { 128, 192, 256, 0 } },
	{ "serpent", { 128, 192, 256, 0 } },
	{ "twofish", { 128, 192, 256, 0 } },
	{ "camellia", { 128, 192, 256, 0 } },
	{ "sm4", { 128, 0 } },
};

/*
 * Total key bits for one cipher key of BITS in MODE: XTS carries two
 * keys, LRW one key plus a 128-bit tweak key.
 */
static unsigned int mode_key_bits(const char *mode, unsigned int bits)
{
	if (!strcmp(mode, "xts"))
		return 2 * bits;
	if (!strcmp(mode, "lrw"))
		return bits + 128;
	return bits;
}

static int valid_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int cb_cipher_parse(const char *spec, unsigned int key_bits,
		    struct cb_cipher *out, struct cb_error *err)
{
	const char *dash, *mode, *end;
	size_t clen, mlen;
	size_t i;

	memset(out, 0, sizeof(*out));
	dash = spec ? strchr(spec, '-') : NULL;
	if (!dash) {
		cb_error_set(err, CB_EXIT_CIPHER,
			     "unknown cipher '%s': give cipher-mode, e.g. aes-xts",
			     spec ? spec : "");
		return -1;
	}
	clen = (size_t)(dash - spec);
	mode = dash + 1;
	/* An IV generator (aes-xts-plain64, aes-cbc-essiv:sha256) is ignored. */
	end = strchr(mode, '-');
	mlen = end ? (size_t)(end - mode) : strlen(mode);
	if (clen == 0 || clen >= sizeof(out->cipher) || mlen == 0 ||
	    mlen >= sizeof(out->mode)) {
		cb_error_set(err, CB_EXIT_CIPHER,
			     "unknown cipher '%s': give cipher-mode, e.g. aes-xts",
			     spec);
		return -1;
	}
	snprintf(out->given, sizeof(out->given), "%s", spec);
	memcpy(out->cipher, spec, clen);
	memcpy(out->mode, mode, mlen);
	if (!valid_name(out->cipher) || !valid_name(out->mode)) {
		cb_error_set(err, CB_EXIT_CIPHER,
			     "unknown cipher '%s': give cipher-mode, e.g. aes-xts",
			     spec);
		return -1;
	}
	snprintf(out->spec, sizeof(out->spec), "%s-%s", out->cipher, out->mode);
	snprintf(out->kname, sizeof(out->kname), "%s(%s)", out->mode,
		 out->cipher);

	if (key_bits == 0 || key_bits % 8 || key_bits > 4096) {
		cb_error_set(err, CB_EXIT_CIPHER,
			     "invalid key size %u bits for %s: use a multiple of 8, e.g. 256 or 512",
			     key_bits, out->spec);
		return -1;
	}
	for (i = 0; i < sizeof(known_ciphers) / sizeof(known_ciphers[0]); i++) {
		const struct cipher_keys *k = &known_ciphers[i];
		char valid[64] = "";
		size_t j;

		if (strcmp(k->name, out->cipher))
			continue;
		for (j = 0; j < 4 && k->bits[j]; j++) {
			unsigned int total = mode_key_bits(out->mode, k->bits[j]);
			size_t used = strlen(valid);

			if (total == key_bits) {
				out->key_bits = key_bits;
				return 0;
			}
			snprintf(valid + used, sizeof(valid) - used, "%s%u",
				 j ? ", " : "", total);
		}
		cb_error_set(err, CB_EXIT_CIPHER,
			     "invalid key size %u bits for %s: use one of %s (total key bits, as cryptsetup)",
			     key_bits, out->spec, valid);
		return -1;
	}
	/* Unknown to us: the kernel decides at setkey time. */
	out->key_bits = key_bits;
	return 0;
}

void cb_cipher_unknown(const struct cb_cipher *c, struct cb_error *err)
{
	cb_error_set(err, CB_EXIT_CIPHER,
		     "unknown cipher '%s' (kernel name '%s'): give cipher-mode[-ivgen] as cryptsetup does, e.g. aes-xts, aes-xts-plain64, serpent-cbc; see /proc/crypto or load the cipher's module",
		     c->given, c->kname);
}

int cb_parse_size(const char *s, size_t *bytes)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	default:
		break;
	}
	if (mult > 1 && *end == 'i')
		end++;
	if (*end == 'B')
		end++;
	if (*end)
		return -1;
	if (v == 0 || v > CB_MAX_REQUEST / mult)
		return -1;
	*bytes = (size_t)(v * mult);
	return 0;
}

int cb_parse_size_list(const char *s, size_t *sizes, size_t max, size_t *n)
{
	char buf[256], *tok, *save = NULL;
	size_t count = 0;

	if (!s || strlen(s) >= sizeof(buf) || !*s)
		return -1;
	strcpy(buf, s);
	if (buf[strlen(buf) - 1] == ',' || buf[0] == ',' || strstr(buf, ",,"))
		return -1;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (count == max)
			return -1;
		if (cb_parse_size(tok, &sizes[count]))
			return -1;
		count++;
	}
	*n = count;
	return 0;
}

void cb_format_size(size_t bytes, char *buf, size_t len)
{
	if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
		snprintf(buf, len, "%zuM", bytes >> 20);
	else if (bytes >= (1u << 10) && bytes % (1u << 10) == 0 &&
		 bytes >= (64u << 10))
		snprintf(buf, len, "%zuK", bytes >> 10);
	else
		snprintf(buf, len, "%zu", bytes);
}

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0.01) || v > 3600)
		return -1;
	*out = v;
	return 0;
}

static int add_drivers(struct cb_options *o, const char *list,
		       struct cb_error *err)
{
	const char *p = list;

	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);

		if (o->n_drivers == CB_MAX_DRIVERS) {
			cb_error_set(err, CB_EXIT_USAGE,
				     "too many drivers: give at most %d",
				     CB_MAX_DRIVERS);
			return -1;
		}
		if (len == 0 || len >= CB_NAME_MAX) {
			cb_error_set(err, CB_EXIT_USAGE,
				     "invalid driver name in '%s': see /proc/crypto",
				     list);
			return -1;
		}
		memcpy(o->driver_names[o->n_drivers], p, len);
		o->driver_names[o->n_drivers][len] = '\0';
		o->drivers[o->n_drivers] = o->driver_names[o->n_drivers];
		o->n_drivers++;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

enum {
	OPT_COMPARE = 0x100,
	OPT_COPY,
	OPT_JSON,
	OPT_CSV,
	OPT_TIME,
};

static const struct option long_opts[] = {
	{ "cipher", required_argument, NULL, 'c' },
	{ "key", required_argument, NULL, 's' },
	{ "key-size", required_argument, NULL, 's' },
	{ "driver", required_argument, NULL, 'd' },
	{ "all-drivers", no_argument, NULL, 'a' },
	{ "request-size", required_argument, NULL, 'r' },
	{ "threads", required_argument, NULL, 't' },
	{ "queue-depth", required_argument, NULL, 'q' },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "repeat", required_argument, NULL, 'n' },
	{ "compare-cryptsetup", no_argument, NULL, OPT_COMPARE },
	{ "copy", no_argument, NULL, OPT_COPY },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int cb_options_parse(int argc, char *const argv[], struct cb_options *o,
		     struct cb_error *err)
{
	bool json = false, csv = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->threads = 1;
	o->queue_depth = 1;
	o->seconds = 1.0;
	o->repeat = 1;

	optind = 0;	/* full re-initialisation (glibc), also for tests */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:s:d:ar:t:q:n:hV", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'c':
			o->cipher = optarg;
			break;
		case 's':
			if (parse_uint(optarg, 1, 4096, &o->key_bits)) {
				cb_error_set(err, CB_EXIT_CIPHER,
					     "invalid key size '%s': give total key bits, e.g. 256 or 512",
					     optarg);
				return -1;
			}
			break;
		case 'd':
			if (add_drivers(o, optarg, err))
				return -1;
			break;
		case 'a':
			o->all_drivers = true;
			break;
		case 'r':
			if (cb_parse_size_list(optarg, o->request_sizes,
					       CB_MAX_SIZES, &o->n_request_sizes)) {
				cb_error_set(err, CB_EXIT_USAGE,
					     "invalid --request-size '%s': give a list like 512,4096,64K,1M (at most %d, up to 64M)",
					     optarg, CB_MAX_SIZES);
				return -1;
			}
			break;
		case 't':
			if (parse_uint(optarg, 1, CB_MAX_THREADS, &o->threads)) {
				cb_error_set(err, CB_EXIT_USAGE,
					     "invalid --threads '%s': give 1 to %d",
					     optarg, CB_MAX_THREADS);
				return -1;
			}
			break;
		case 'q':
			if (parse_uint(optarg, 1, CB_MAX_QDEPTH, &o->queue_depth)) {
				cb_error_set(err, CB_EXIT_USAGE,
					     "invalid --queue-depth '%s': give 1 to %d",
					     optarg, CB_MAX_QDEPTH);
				return -1;
			}
			break;
		case OPT_TIME:
			if (parse_seconds(optarg, &o->seconds)) {
				cb_error_set(err, CB_EXIT_USAGE,
					     "invalid --time '%s': give seconds from 0.01 to 3600",
					     optarg);
				return -1;
			}
			break;
		case 'n':
			if (parse_uint(optarg, 1, CB_MAX_REPEAT, &o->repeat)) {
				cb_error_set(err, CB_EXIT_USAGE,
					     "invalid --repeat '%s': give 1 to %d",
					     optarg, CB_MAX_REPEAT);
				return -1;
			}
			break;
		case OPT_COMPARE:
			o->compare_cryptsetup = true;
			break;
		case OPT_COPY:
			o->copy = true;
			break;
		case OPT_JSON:
			json = true;
			break;
		case OPT_CSV:
			csv = true;
			break;
		case 'h':
			o->help = true;
			return 0;
		case 'V':
			o->version = true;
			return 0;
		case ':':
			cb_error_set(err, CB_EXIT_USAGE,
				     "option '%s' needs an argument: see --help",
				     argv[optind - 1]);
			return -1;
		default:
			cb_error_set(err, CB_EXIT_USAGE,
				     "unknown option '%s': see --help",
				     argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		cb_error_set(err, CB_EXIT_USAGE,
			     "unexpected argument '%s': see --help", argv[optind]);
		return -1;
	}
	if (json && csv) {
		cb_error_set(err, CB_EXIT_USAGE,
			     "--json and --csv exclude each other: pick one");
		return -1;
	}
	o->format = json ? CB_FMT_JSON : csv ? CB_FMT_CSV : CB_FMT_TABLE;
	if (o->all_drivers && o->n_drivers) {
		cb_error_set(err, CB_EXIT_USAGE,
			     "--driver and --all-drivers exclude each other: pick one");
		return -1;
	}
	if (!o->cipher) {
		const char *needs = o->key_bits ? "--key" :
			o->all_drivers ? "--all-drivers" :
			o->n_drivers ? "--driver" :
			o->n_request_sizes ? "--request-size" :
			o->threads > 1 ? "--threads" :
			o->queue_depth > 1 ? "--queue-depth" :
			o->compare_cryptsetup ? "--compare-cryptsetup" :
			o->repeat > 1 ? "--repeat" : NULL;

		if (needs) {
			cb_error_set(err, CB_EXIT_USAGE,
				     "%s needs --cipher: e.g. --cipher aes-xts",
				     needs);
			return -1;
		}
	}
	if (!o->key_bits)
		o->key_bits = 256;
	if (!o->n_request_sizes) {
		o->request_sizes[0] = 1u << 20;
		o->n_request_sizes = 1;
	}
	if (o->threads * o->queue_depth > CB_MAX_SOCKETS) {
		cb_error_set(err, CB_EXIT_USAGE,
			     "--threads %u times --queue-depth %u is above %d sockets: lower one of them",
			     o->threads, o->queue_depth, CB_MAX_SOCKETS);
		return -1;
	}
	if (o->queue_depth > 1) {
		size_t i;

		for (i = 0; i < o->n_request_sizes; i++) {
			if (o->request_sizes[i] <= CB_MAX_AIO_BYTES)
				continue;
			cb_error_set(err, CB_EXIT_USAGE,
				     "--queue-depth with %zu-byte requests: AIO requests are at most %u KiB (AF_ALG socket buffer), lower --request-size",
				     o->request_sizes[i], CB_MAX_AIO_BYTES >> 10);
			return -1;
		}
	}
	return 0;
}

void cb_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"Usage: %s [OPTION]...\n"
		"Benchmark kernel ciphers through AF_ALG (libkcapi). Without options,\n"
		"print the rows of `cryptsetup benchmark` in its format and units.\n"
		"\n"
		"  -c, --cipher SPEC         cipher-mode as in cryptsetup, e.g. aes-xts\n"
		"  -s, --key BITS            total key bits (aes-xts: 256 = AES-128-XTS,\n"
		"                            512 = AES-256-XTS); default 256\n"
		"  -d, --driver NAME[,NAME]  measure these implementations (/proc/crypto)\n"
		"  -a, --all-drivers         every implementation of the cipher, side by side;\n"
		"                            '*' marks the kernel's default\n"
		"  -r, --request-size LIST   bytes per request, e.g. 512,4096,64K,1M\n"
		"                            (default 1M)\n"
		"  -t, --threads N           parallel submitters, one AF_ALG socket each\n"
		"  -q, --queue-depth N       requests in flight per thread (libkcapi AIO,\n"
		"                            one socket each; at most %d, requests up to\n"
		"                            %u KiB); 1 = synchronous\n"
		"      --time SECONDS        measuring time per direction and sample (1)\n"
		"  -n, --repeat N            samples; median and spread are printed\n"
		"      --compare-cryptsetup  also run libcryptsetup's crypt_benchmark and\n"
		"                            print the ratio cryptbench/cryptsetup\n"
		"      --copy                copy data with sendmsg (cryptsetup's way)\n"
		"                            instead of zero-copy vmsplice\n"
		"      --json                JSON output (no progress indication)\n"
		"      --csv                 CSV output\n"
		"  -h, --help                this help\n"
		"  -V, --version             version\n"
		"\n"
		"Figures: MiB/s (2^20 bytes per second), CPU seconds per GiB counted on\n"
		"all CPUs from /proc/stat, engine share of xts-aes-offload from its\n"
		"counters. Exit status: 0 ok, 1 usage, 2 unknown cipher/driver or\n"
		"invalid key size, 3 AF_ALG not available, 4 permission denied,\n"
		"5 runtime failure. See cryptbench(8).\n",
		prog, CB_MAX_QDEPTH, CB_MAX_AIO_BYTES >> 10);
}
