// SPDX-License-Identifier: GPL-2.0-only
/*
 * What to measure, in which order: cryptsetup's default rows, or one cipher
 * across drivers and request sizes; fills the report the writers print.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cryptbench.h"

/* The rows of `cryptsetup benchmark` (cryptsetup 2.6), in its order. */
static const struct {
	const char *spec;
	unsigned int key_bits;
} default_ciphers[] = {
	{ "aes-cbc", 128 }, { "serpent-cbc", 128 }, { "twofish-cbc", 128 },
	{ "aes-cbc", 256 }, { "serpent-cbc", 256 }, { "twofish-cbc", 256 },
	{ "aes-xts", 256 }, { "serpent-xts", 256 }, { "twofish-xts", 256 },
	{ "aes-xts", 512 }, { "serpent-xts", 512 }, { "twofish-xts", 512 },
};

static const struct {
	const char *type;
	const char *hash;
} default_pbkdfs[] = {
	{ "pbkdf2", "sha1" }, { "pbkdf2", "sha256" }, { "pbkdf2", "sha512" },
	{ "pbkdf2", "ripemd160" }, { "pbkdf2", "whirlpool" },
	{ "argon2i", NULL }, { "argon2id", NULL },
};

#define N_ELEM(a) (sizeof(a) / sizeof((a)[0]))

static void progress(const struct cb_run_hooks *hooks, const char *what,
		     unsigned int done, unsigned int total)
{
	if (hooks && hooks->progress)
		hooks->progress(hooks->ctx, what, done, total);
}

void cb_report_free(struct cb_report *rep)
{
	free(rep->pbkdf);
	free(rep->results);
	memset(rep, 0, sizeof(*rep));
}

static void fill_driver(struct cb_result *r, const struct cb_alg_list *procs,
			const char *kname, const char *driver)
{
	const struct cb_alg *def = cb_alg_default(procs, kname);
	const struct cb_alg *a = driver ? cb_alg_by_driver(procs, driver) : def;

	snprintf(r->driver, sizeof(r->driver), "%s",
		 a ? a->driver : driver ? driver : kname);
	r->priority = a ? a->priority : -1;
	r->is_default = def && a && !strcmp(def->driver, a->driver);
}

/*
 * Once AF_ALG works: through libkcapi, or without crypto_user directly,
 * said in one line. Driver names, priorities and the default come from
 * /proc/crypto either way.
 */
static void add_notice(struct cb_report *rep, const char *line)
{
	size_t i;

	for (i = 0; i < CB_MAX_NOTICES; i++) {
		if (!rep->notice[i][0]) {
			snprintf(rep->notice[i], sizeof(rep->notice[i]), "%s", line);
			return;
		}
	}
}

static void check_crypto_user(struct cb_report *rep)
{
	rep->crypto_user_checked = true;
	rep->crypto_user = cb_crypto_user_available();
	if (!rep->crypto_user)
		add_notice(rep, CB_NOTICE_NO_CRYPTO_USER);
}

/*
 * The engine share needs xts_offload's counters, in debugfs: with the
 * module loaded (measuring xts(aes) may have loaded it) and the counters
 * out of reach, the share column is empty, and one line says why.
 */
static void check_offload_counters(struct cb_report *rep)
{
	char line[CB_NOTICE_MAX];

	if (cb_offload_check(CB_OFFLOAD_STATS_DIR, CB_OFFLOAD_MODULE_DIR,
			     CB_DEBUGFS_DIR, line, sizeof(line)))
		add_notice(rep, line);
}

static int measure_result(struct cb_result *r, const struct cb_job *job,
			  unsigned int repeat, const struct cb_alg_list *procs,
			  struct cb_error *err)
{
	unsigned int i;

	for (i = 0; i < repeat; i++) {
		struct cb_sample enc, dec;

		if (cb_measure(job, &enc, &dec, procs, err))
			return -1;
		cb_result_add_sample(r, &enc, &dec);
	}
	cb_result_finish(r);
	r->available = true;
	return 0;
}

static enum cb_exit run_default(const struct cb_options *o, struct cb_report *rep,
				const struct cb_run_hooks *hooks, struct cb_error *err)
{
	struct cb_alg_list procs = { 0 };
	struct cb_error first = { .code = CB_EXIT_OK };
	unsigned int total = N_ELEM(default_pbkdfs) + N_ELEM(default_ciphers);
	unsigned int step = 0, available = 0;
	size_t i;

	/*
	 * AF_ALG first: cryptsetup prints its PBKDF rows before it finds no
	 * AF_ALG, tens of seconds of work for a table that then says nothing
	 * of the ciphers asked about. Without it: the error alone, at once.
	 */
	if (cb_afalg_check(err))
		return err->code;
	rep->compat = true;
	rep->pbkdf = calloc(N_ELEM(default_pbkdfs), sizeof(*rep->pbkdf));
	rep->results = calloc(N_ELEM(default_ciphers), sizeof(*rep->results));
	if (!rep->pbkdf || !rep->results) {
		cb_error_set(err, CB_EXIT_RUNTIME, "out of memory: free some memory");
		return CB_EXIT_RUNTIME;
	}
	for (i = 0; i < N_ELEM(default_pbkdfs); i++) {
		progress(hooks, default_pbkdfs[i].hash ? default_pbkdfs[i].hash :
			 default_pbkdfs[i].type, ++step, total);
		cb_pbkdf_run(&rep->pbkdf[i], default_pbkdfs[i].type,
			     default_pbkdfs[i].hash, 256);
		rep->n_pbkdf++;
	}

	check_crypto_user(rep);
	cb_proc_crypto_read(NULL, &procs);
	for (i = 0; i < N_ELEM(default_ciphers); i++) {
		struct cb_result *r = &rep->results[rep->n_results++];
		struct cb_cipher c;
		struct cb_error e = { .code = CB_EXIT_OK };
		struct cb_job job = {
			.request_size = 1u << 20,
			.threads = 1,
			.queue_depth = 1,
			.seconds = o->seconds,
			.zero_copy = !o->copy,
			.direct = !rep->crypto_user,
			.offload_dir = CB_OFFLOAD_STATS_DIR,
		};

		progress(hooks, default_ciphers[i].spec, ++step, total);
		cb_cipher_parse(default_ciphers[i].spec,
				default_ciphers[i].key_bits, &c, NULL);
		snprintf(r->cipher, sizeof(r->cipher), "%s", c.spec);
		r->key_bits = c.key_bits;
		r->request_size = job.request_size;
		r->threads = 1;
		r->queue_depth = 1;
		r->zero_copy = job.zero_copy;
		r->priority = -1;
		snprintf(r->driver, sizeof(r->driver), "%s", c.kname);
		job.alg = c.kname;
		job.key_bytes = c.key_bits / 8;
		if (measure_result(r, &job, 1, &procs, &e)) {
			/* cryptsetup prints N/A for a cipher the kernel lacks. */
			if (e.code != CB_EXIT_CIPHER && first.code == CB_EXIT_OK)
				first = e;
			continue;
		}
		available++;
	}
	/* Now every measured cipher is instantiated: name its driver. */
	cb_alg_list_free(&procs);
	if (cb_proc_crypto_read(NULL, &procs) == 0) {
		for (i = 0; i < rep->n_results; i++) {
			struct cb_result *r = &rep->results[i];
			const struct cb_alg *def = cb_alg_default(&procs, r->driver);

			if (def) {
				snprintf(r->driver, sizeof(r->driver), "%s", def->driver);
				r->priority = def->priority;
				r->is_default = true;
			}
		}
	}
	cb_alg_list_free(&procs);
	if (first.code != CB_EXIT_OK) {
		*err = first;
		return first.code;
	}
	if (!available) {
		cb_error_set(err, CB_EXIT_NO_AFALG,
			     "no cipher available through AF_ALG: run `modprobe algif_skcipher`");
		return CB_EXIT_NO_AFALG;
	}
	return CB_EXIT_OK;
}

/* Pick the implementations to measure; names point into procs or opts. */
static enum cb_exit pick_drivers(const struct cb_options *o, const struct cb_cipher *c,
				 const struct cb_alg_list *procs, bool direct,
				 const char **names, size_t *n, struct cb_error *err)
{
	const struct cb_alg *list[CB_MAX_DRIVERS];
	size_t i;

	*n = 0;
	if (o->all_drivers) {
		size_t k = cb_alg_drivers(procs, c->kname, list, CB_MAX_DRIVERS);

		for (i = 0; i < k; i++)
			names[(*n)++] = list[i]->driver;
		if (!k)
			names[(*n)++] = NULL;	/* /proc/crypto silent: generic */
		return CB_EXIT_OK;
	}
	if (!o->n_drivers) {
		names[(*n)++] = NULL;		/* the kernel's default */
		return CB_EXIT_OK;
	}
	for (i = 0; i < o->n_drivers; i++) {
		const struct cb_alg *a = cb_alg_by_driver(procs, o->drivers[i]);

		if (a && strcmp(a->name, c->kname)) {
			cb_error_set(err, CB_EXIT_CIPHER,
				     "driver '%s' implements %s, not %s: pick a driver of %s from /proc/crypto",
				     o->drivers[i], a->name, c->kname, c->kname);
			return CB_EXIT_CIPHER;
		}
		if (!a && cb_probe(o->drivers[i], c->key_bits / 8, direct, procs, err))
			return err->code;
		names[(*n)++] = o->drivers[i];
	}
	return CB_EXIT_OK;
}

static enum cb_exit run_cipher(const struct cb_options *o, struct cb_report *rep,
			       const struct cb_run_hooks *hooks, struct cb_error *err)
{
	struct cb_alg_list procs = { 0 };
	const char *drivers[CB_MAX_DRIVERS];
	struct cb_cipher c;
	double cs_enc = 0, cs_dec = 0;
	bool have_cs = false;
	char cs_driver[CB_NAME_MAX] = "";
	size_t n_drivers = 0, d, s;
	unsigned int step = 0, total;
	enum cb_exit rc;
	int probe;

	rep->single = true;
	if (cb_cipher_parse(o->cipher, o->key_bits, &c, err))
		return err->code;
	if (cb_afalg_check(err))
		return err->code;
	check_crypto_user(rep);
	cb_proc_crypto_read(NULL, &procs);
	/* Instantiate the generic name so /proc/crypto lists its drivers. */
	probe = cb_probe(c.kname, c.key_bits / 8, !rep->crypto_user, &procs, err);
	if (probe) {
		/* Name what the user typed, not only the kernel name built. */
		if (probe == -ENOENT && err->code == CB_EXIT_CIPHER)
			cb_cipher_unknown(&c, err);
		cb_alg_list_free(&procs);
		return err->code;
	}
	cb_alg_list_free(&procs);
	cb_proc_crypto_read(NULL, &procs);

	rc = pick_drivers(o, &c, &procs, !rep->crypto_user, drivers, &n_drivers, err);
	if (rc != CB_EXIT_OK)
		goto out;
	/* Probing named drivers may have instantiated more entries. */
	if (o->n_drivers) {
		struct cb_alg_list fresh;

		if (cb_proc_crypto_read(NULL, &fresh) == 0) {
			/* Names in drivers[] point into o->drivers here. */
			cb_alg_list_free(&procs);
			procs = fresh;
		}
	}
	rep->results = calloc(n_drivers * o->n_request_sizes, sizeof(*rep->results));
	if (!rep->results) {
		cb_error_set(err, CB_EXIT_RUNTIME, "out of memory: free some memory");
		rc = CB_EXIT_RUNTIME;
		goto out;
	}
	total = (unsigned int)(n_drivers * o->n_request_sizes) +
		(o->compare_cryptsetup ? 1 : 0);
	if (o->compare_cryptsetup) {
		const struct cb_alg *def = cb_alg_default(&procs, c.kname);
		int r;

		progress(hooks, "cryptsetup", ++step, total);
		r = cb_cryptsetup_cipher(&c, &cs_enc, &cs_dec);
		if (r < 0) {
			cb_error_set(err, CB_EXIT_RUNTIME,
				     "crypt_benchmark %s %u bits failed: %s: check that cryptsetup benchmark runs",
				     c.spec, c.key_bits, strerror(-r));
			rc = CB_EXIT_RUNTIME;
			goto out;
		}
		have_cs = true;
		snprintf(cs_driver, sizeof(cs_driver), "%s", def ? def->driver : c.kname);
	}
	for (d = 0; d < n_drivers; d++) {
		for (s = 0; s < o->n_request_sizes; s++) {
			struct cb_result *r = &rep->results[rep->n_results];
			char what[CB_NAME_MAX + 32], sz[24];
			struct cb_job job = {
				.alg = drivers[d] ? drivers[d] : c.kname,
				.key_bytes = c.key_bits / 8,
				.request_size = o->request_sizes[s],
				.threads = o->threads,
				.queue_depth = o->queue_depth,
				.seconds = o->seconds,
				.zero_copy = !o->copy,
				.direct = !rep->crypto_user,
				.offload_dir = CB_OFFLOAD_STATS_DIR,
			};

			snprintf(r->cipher, sizeof(r->cipher), "%s", c.spec);
			r->key_bits = c.key_bits;
			r->request_size = job.request_size;
			r->threads = job.threads;
			r->queue_depth = job.queue_depth;
			r->zero_copy = job.zero_copy;
			fill_driver(r, &procs, c.kname, drivers[d]);
			cb_format_size(job.request_size, sz, sizeof(sz));
			snprintf(what, sizeof(what), "%s %s", r->driver, sz);
			progress(hooks, what, ++step, total);
			if (measure_result(r, &job, o->repeat, &procs, err)) {
				rc = err->code;
				goto out;
			}
			if (have_cs) {
				r->has_cryptsetup = true;
				r->cs_enc = cs_enc;
				r->cs_dec = cs_dec;
				snprintf(r->cs_driver, sizeof(r->cs_driver), "%s", cs_driver);
			}
			rep->n_results++;
		}
	}
	rc = CB_EXIT_OK;
out:
	cb_alg_list_free(&procs);
	return rc;
}

enum cb_exit cb_run(const struct cb_options *o, struct cb_report *rep,
		    const struct cb_run_hooks *hooks, struct cb_error *err)
{
	enum cb_exit rc;

	memset(rep, 0, sizeof(*rep));
	/* Errors are reported once, by us, in one line. */
	cb_quiet_backends();
	rep->repeat = o->repeat;
	rep->seconds = o->seconds;
	if (!o->cipher)
		rc = run_default(o, rep, hooks, err);
	else
		rc = run_cipher(o, rep, hooks, err);
	if (rep->n_results)
		check_offload_counters(rep);
	return rc;
}
