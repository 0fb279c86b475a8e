/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cryptbench: benchmark of kernel ciphers through AF_ALG (libkcapi).
 *
 * This header is the whole API of the library behind the cryptbench tool:
 * option parsing, /proc/crypto and /proc/stat parsing, statistics, the
 * result model, the table/JSON/CSV writers, and the measurement itself.
 * No function keeps process-global state.
 */
#ifndef CRYPTBENCH_H
#define CRYPTBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit codes of the tool, documented in cryptbench(8). */
enum cb_exit {
	CB_EXIT_OK = 0,
	CB_EXIT_USAGE = 1,	/* bad option or argument */
	CB_EXIT_CIPHER = 2,	/* unknown cipher or driver, invalid key size */
	CB_EXIT_NO_AFALG = 3,	/* AF_ALG (or a part of it) not available */
	CB_EXIT_PERM = 4,	/* permission denied */
	CB_EXIT_RUNTIME = 5,	/* measurement or output failed */
};

#define CB_NAME_MAX	128
#define CB_MAX_REPEAT	100
#define CB_MAX_THREADS	256
#define CB_MAX_QDEPTH	64	/* requests in flight per thread */
#define CB_MAX_SOCKETS	1024	/* threads x queue depth */
#define CB_MAX_SIZES	16
#define CB_MAX_DRIVERS	16
#define CB_MAX_REQUEST	(64u << 20)
/*
 * libkcapi sends an AIO request's data before it reads any: it must fit
 * the AF_ALG socket buffer and the splice pipe (64 KiB).
 */
#define CB_MAX_AIO_BYTES	(64u << 10)
/* Notices: lines on stderr about what is missing, not errors. */
#define CB_MAX_NOTICES	2
#define CB_NOTICE_MAX	240

/* One error: a single line "what failed: what to do" and its exit code. */
struct cb_error {
	enum cb_exit code;
	char msg[320];
};

void cb_error_set(struct cb_error *err, enum cb_exit code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ---- cipher names and key sizes ---------------------------------------- */

/* "aes-xts" (cryptsetup spelling) and its kernel name "xts(aes)". */
struct cb_cipher {
	char cipher[32];	/* aes */
	char mode[32];		/* xts */
	char spec[72];		/* aes-xts */
	char kname[72];		/* xts(aes) */
	char given[CB_NAME_MAX];	/* as the user typed it: aes-xts-plain64 */
	unsigned int key_bits;	/* total key bits, as cryptsetup counts them */
};

/*
 * Parse "cipher-mode[-ivgen]" and check the key size. Key bits are the total
 * key as in cryptsetup: aes-xts 256 is AES-128-XTS, 512 is AES-256-XTS.
 * Returns 0, or -1 with err set (CB_EXIT_CIPHER).
 */
int cb_cipher_parse(const char *spec, unsigned int key_bits,
		    struct cb_cipher *out, struct cb_error *err);

/*
 * The kernel has no cipher by C's kernel name: an error (CB_EXIT_CIPHER)
 * naming what the user typed, the kernel name built from it, and the forms
 * cryptbench accepts.
 */
void cb_cipher_unknown(const struct cb_cipher *c, struct cb_error *err);

/* ---- options ------------------------------------------------------------ */

enum cb_format { CB_FMT_TABLE, CB_FMT_JSON, CB_FMT_CSV };

struct cb_options {
	const char *cipher;		/* NULL: cryptsetup's default rows */
	unsigned int key_bits;		/* 0: 256 as cryptsetup */
	const char *drivers[CB_MAX_DRIVERS];	/* point into driver_names */
	char driver_names[CB_MAX_DRIVERS][CB_NAME_MAX];
	size_t n_drivers;
	bool all_drivers;
	size_t request_sizes[CB_MAX_SIZES];
	size_t n_request_sizes;		/* 0: one 1 MiB request size */
	unsigned int threads;		/* 1 */
	unsigned int queue_depth;	/* 1: synchronous */
	double seconds;			/* per direction and sample, 1.0 */
	unsigned int repeat;		/* 1 */
	bool compare_cryptsetup;
	bool copy;			/* sendmsg copy mode instead of vmsplice */
	enum cb_format format;
	bool help;
	bool version;
};

/*
 * Parse argv into opts (defaults filled in). Returns 0, or -1 with err set
 * (CB_EXIT_USAGE or CB_EXIT_CIPHER). Uses getopt_long: resets optind.
 */
int cb_options_parse(int argc, char *const argv[], struct cb_options *opts,
		     struct cb_error *err);

/* "512", "4096", "64K", "1M", "1MiB" (binary units) -> bytes; 0 on success. */
int cb_parse_size(const char *s, size_t *bytes);

/* "512,4096,1M" -> sizes; 0 on success, -1 on a bad entry or too many. */
int cb_parse_size_list(const char *s, size_t *sizes, size_t max, size_t *n);

/* Human size for tables: 512, 4K, 64K, 1M (exact binary multiples only). */
void cb_format_size(size_t bytes, char *buf, size_t len);

void cb_usage(FILE *out, const char *prog);

/* ---- /proc/crypto -------------------------------------------------------- */

struct cb_alg {
	char name[CB_NAME_MAX];
	char driver[CB_NAME_MAX];
	char module[64];
	char type[32];
	char selftest[16];
	int priority;
	bool internal;
	bool async;
	unsigned int min_keysize;
	unsigned int max_keysize;
	unsigned int ivsize;
	unsigned int blocksize;
};

struct cb_alg_list {
	struct cb_alg *algs;
	size_t n;
};

/* Parse the text of /proc/crypto. Returns 0, or -errno. */
int cb_proc_crypto_parse(const char *text, struct cb_alg_list *list);
int cb_proc_crypto_read(const char *path, struct cb_alg_list *list);
void cb_alg_list_free(struct cb_alg_list *list);

/* The entry with this driver name, or NULL. */
const struct cb_alg *cb_alg_by_driver(const struct cb_alg_list *list,
				      const char *driver);
/* True if the name appears as a name or a driver. */
bool cb_alg_known(const struct cb_alg_list *list, const char *name);
/*
 * The implementation the kernel picks for a generic name: the highest
 * priority usable (not internal, self-test not failed) entry; the first in
 * /proc/crypto order wins a tie, as the kernel's lookup does.
 */
const struct cb_alg *cb_alg_default(const struct cb_alg_list *list,
				    const char *name);
/*
 * Every usable skcipher driver for a generic name, highest priority first
 * (stable for equal priorities). Returns the count written to out.
 */
size_t cb_alg_drivers(const struct cb_alg_list *list, const char *name,
		      const struct cb_alg **out, size_t max);
/*
 * The skcipher entry an AF_ALG bind of ALG gets: the implementation of
 * that driver name, else the kernel's default for ALG as a generic name.
 * NULL if /proc/crypto does not list it.
 */
const struct cb_alg *cb_alg_bound(const struct cb_alg_list *list,
				  const char *alg);

/* ---- system counters ----------------------------------------------------- */

/* Busy jiffies from the "cpu " line of /proc/stat text. 0 or -EINVAL. */
int cb_proc_stat_busy(const char *text, uint64_t *busy_ticks);
/* Read /proc/stat (or path) and return busy CPU seconds of all CPUs. */
int cb_cpu_busy_seconds(const char *path, double *seconds);

/*
 * The xts_offload module's total counters: in debugfs, which must be
 * mounted, and which only root can read.
 */
#define CB_DEBUGFS_DIR "/sys/kernel/debug"
#define CB_OFFLOAD_STATS_DIR CB_DEBUGFS_DIR "/xts_offload/stats"
#define CB_OFFLOAD_MODULE_DIR "/sys/module/xts_offload"
/* Read counter NAME from DIR; 0, or -errno (-ENOENT: no module). */
int cb_offload_counter(const char *dir, const char *name, uint64_t *value);
/*
 * Whether the module's counters in DIR can be read. 0 when they can, or
 * when the module is not loaded (no MODULE_DIR): nothing to say. Otherwise
 * -errno, and in msg the one line saying why (debugfs not mounted on
 * DEBUGFS, or the counters not readable) and that the engine share is not
 * measured (no "cryptbench: " prefix).
 */
int cb_offload_check(const char *dir, const char *module_dir,
		     const char *debugfs, char *msg, size_t len);

/* ---- statistics ---------------------------------------------------------- */

struct cb_stat {
	double median;
	double min;
	double max;
	unsigned int n;
};

void cb_stat_compute(const double *samples, unsigned int n, struct cb_stat *st);
/* (max - min) / median in percent; 0 for n < 2 or a zero median. */
double cb_stat_spread_pct(const struct cb_stat *st);
/* MiB/s from bytes and seconds; 0 if seconds <= 0. */
double cb_mib_per_s(uint64_t bytes, double seconds);
/* CPU seconds per GiB processed; -1 if nothing was processed. */
double cb_cpu_s_per_gib(double cpu_seconds, uint64_t bytes);

/* ---- result model -------------------------------------------------------- */

struct cb_result {
	char cipher[72];		/* aes-xts */
	unsigned int key_bits;
	char driver[CB_NAME_MAX];	/* implementation measured */
	bool is_default;		/* the kernel's pick for the name */
	int priority;			/* -1 unknown */
	size_t request_size;
	unsigned int threads;
	unsigned int queue_depth;
	bool zero_copy;
	bool available;			/* false: N/A row */
	unsigned int n_samples;
	double enc_samples[CB_MAX_REPEAT];	/* MiB/s */
	double dec_samples[CB_MAX_REPEAT];
	double cpu_enc_samples[CB_MAX_REPEAT];	/* CPU s/GiB */
	double cpu_dec_samples[CB_MAX_REPEAT];
	double engine_samples[CB_MAX_REPEAT];	/* 0..1 */
	struct cb_stat enc;
	struct cb_stat dec;
	double cpu_enc;			/* CPU s/GiB, median; < 0 unknown */
	double cpu_dec;
	bool has_engine;		/* offload counters present */
	double engine_share;		/* 0..1, bytes done by the engine */
	bool has_cryptsetup;
	char cs_driver[CB_NAME_MAX];	/* what libcryptsetup measured */
	double cs_enc;			/* MiB/s */
	double cs_dec;
};

/* Ratio cryptbench / cryptsetup; 0 when the reference is missing. */
double cb_ratio(double ours, double reference);

struct cb_pbkdf_result {
	char type[16];			/* pbkdf2, argon2i, argon2id */
	char hash[16];			/* PBKDF2 only */
	bool available;
	uint32_t iterations;
	uint32_t memory_kb;
	uint32_t threads;
	uint32_t time_ms;
	unsigned int key_bits;
};

struct cb_report {
	bool compat;			/* cryptsetup's layout, no extra columns */
	bool crypto_user_checked;	/* AF_ALG worked, crypto_user looked for */
	bool crypto_user;		/* NETLINK_CRYPTO there: libkcapi used */
	char notice[CB_MAX_NOTICES][CB_NOTICE_MAX]; /* lines for stderr, or empty */
	bool single;			/* --cipher: cryptsetup's one-cipher header */
	unsigned int repeat;
	double seconds;
	struct cb_pbkdf_result *pbkdf;
	size_t n_pbkdf;
	struct cb_result *results;
	size_t n_results;
};

/* Writers: 0 on success, -1 on an output error. */
int cb_write_table(FILE *out, const struct cb_report *rep);
int cb_write_json(FILE *out, const struct cb_report *rep);
/* --json after a failure: {"tool", "error", "exit_code"} in the results' place. */
int cb_write_json_error(FILE *out, const struct cb_error *err);
int cb_write_csv(FILE *out, const struct cb_report *rep);

/* ---- measurement (AF_ALG, libkcapi) -------------------------------------- */

struct cb_job {
	const char *alg;		/* name given to AF_ALG: generic or driver */
	unsigned int key_bytes;
	size_t request_size;
	unsigned int threads;
	unsigned int queue_depth;
	double seconds;
	bool zero_copy;
	bool direct;			/* no crypto_user: AF_ALG without libkcapi */
	const char *offload_dir;	/* counters to read; NULL: none */
};

struct cb_sample {
	uint64_t bytes;
	double seconds;
	double cpu_seconds;
	bool has_engine;
	uint64_t engine_bytes;
};

/* Keep libkcapi from printing its own error lines. */
void cb_quiet_backends(void);

/* Check that AF_ALG sockets can be created; 0 or -1 with err set. */
int cb_afalg_check(struct cb_error *err);

/*
 * Whether a NETLINK_CRYPTO socket opens (crypto_user loaded or loadable).
 * libkcapi cannot bind a cipher without it; cryptbench then drives AF_ALG
 * itself, with IV and block sizes from /proc/crypto.
 */
bool cb_crypto_user_available(void);
/* The one line saying so (no "cryptbench: " prefix). */
#define CB_NOTICE_NO_CRYPTO_USER \
	"crypto_user not available (`modprobe crypto_user`): libkcapi cannot bind ciphers without it; " \
	"using AF_ALG directly, IV and block sizes from /proc/crypto"

/*
 * Map a libkcapi/AF_ALG error for ALG to an exit code and one-line message.
 * procs (may be NULL) tells an unknown name from a missing algif_skcipher.
 */
void cb_afalg_error(int rc, const char *alg, const char *what,
		    const struct cb_alg_list *procs, struct cb_error *err);

/*
 * Instantiate ALG once (key of key_bytes) so /proc/crypto lists it.
 * Returns 0, or the failing step's -errno with err set (-ENOENT: the kernel
 * has no such name).
 */
int cb_probe(const char *alg, unsigned int key_bytes, bool direct,
	     const struct cb_alg_list *procs, struct cb_error *err);

/*
 * One encryption and one decryption sample of JOB with one random key.
 * Returns 0, or -1 with err set.
 */
int cb_measure(const struct cb_job *job, struct cb_sample *enc,
	       struct cb_sample *dec, const struct cb_alg_list *procs,
	       struct cb_error *err);

/* Fill the figures of RES from samples (called after every repeat). */
void cb_result_add_sample(struct cb_result *res, const struct cb_sample *enc,
			  const struct cb_sample *dec);
void cb_result_finish(struct cb_result *res);

/* ---- libcryptsetup references -------------------------------------------- */

/* cryptsetup's PBKDF rows (crypt_benchmark_pbkdf), same parameters. */
void cb_pbkdf_run(struct cb_pbkdf_result *res, const char *type,
		  const char *hash, unsigned int key_bits);
/* crypt_benchmark for cipher/mode, 1 MiB buffer as cryptsetup; 0 or -errno. */
int cb_cryptsetup_cipher(const struct cb_cipher *c, double *enc_mibs,
			 double *dec_mibs);

/* ---- the whole run ------------------------------------------------------- */

struct cb_run_hooks {
	/* Called before each measurement; for a progress indication. */
	void (*progress)(void *ctx, const char *what, unsigned int done,
			 unsigned int total);
	void *ctx;
};

/*
 * Measure what OPTS ask for into REP (free with cb_report_free). On failure
 * returns the exit code with err set; REP may hold rows worth printing
 * (cryptsetup's default table prints N/A rows before the error).
 */
enum cb_exit cb_run(const struct cb_options *opts, struct cb_report *rep,
		    const struct cb_run_hooks *hooks, struct cb_error *err);
void cb_report_free(struct cb_report *rep);

#endif /* CRYPTBENCH_H */
