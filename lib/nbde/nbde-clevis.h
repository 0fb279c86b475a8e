/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Child processes with bounded time (clevis, curl), and what opalctl asks
 * of Clevis: seal a secret, open a JWE, read a JWE's protected header.
 * Secrets travel only through pipes, never argv or the environment.
 */
#ifndef FDEKIT_NBDE_CLEVIS_H
#define FDEKIT_NBDE_CLEVIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "nbde-secret.h"

/* Each step of a Tang exchange (curl inside clevis' tang pin). */
#define CURL_CONNECT_TIMEOUT 5

/* What a child reads and where its output goes. */
struct child_io {
	int in_fd;
	const uint8_t *in_data;
	size_t in_len;
	int out_fd;
	struct secret *capture;
	const char *curl_home;	/* HOME and CURL_HOME for the child, or NULL (HOME=/) */
	bool no_tty;		/* a session of its own: no terminal to ask on */
};

/*
 * Start argv as io says, in a process group of its own. When io->out_fd
 * < 0 its stdout is a pipe whose read end goes to *out_pipe; when
 * io->in_fd < 0, io->in_data (at most a pipe's buffer) is written to its
 * stdin. Returns the pid or -errno (-ENOENT: no such program).
 *
 * argv[0] is a path, or a bare name looked for in /usr/sbin, /usr/bin,
 * /sbin and /bin only (never $PATH). The child gets an environment of its
 * own: PATH=/usr/sbin:/usr/bin:/sbin:/bin, LC_ALL=C, HOME (and CURL_HOME)
 * the curl_home directory or HOME=/, and, when set here, only the TPM's
 * selection and settings (TPM2TOOLS_TCTI, TPM2TOOLS_TCTI_NAME,
 * TPM2TOOLS_DEVICE_FILE, TPM2TOOLS_SOCKET_ADDRESS, TPM2TOOLS_SOCKET_PORT,
 * TPM2TOOLS_ENABLE_ERRATA, TCTI, TSS2_TCTI, TSS2_LOG, TSS2_LOGFILE,
 * TSS2_FAPICONF) and TMPDIR. Every signal has its default action, none is
 * blocked, and RLIMIT_CORE is 0 (it may hold a PIN).
 */
pid_t spawn_child(char *const argv[], const struct child_io *io, int *out_pipe);
/*
 * From now on this process's children (and theirs: clevis's curl) stay in
 * its process group, unless io->no_tty: a background worker whose whole
 * group is killed as one when it is no longer needed.
 */
void spawn_group_shared(void);
/*
 * Wait for pid's exit until end (monotonic ms); at end, or at once when
 * kill_now, its whole group is killed. When it exits, what is left of its
 * group (a curl clevis started) is killed before it is reaped. Returns the
 * exit status (0..255), 128+signal, or -ETIMEDOUT when it had to be
 * killed for the time.
 */
int reap_child(pid_t pid, uint64_t end, bool kill_now);
/*
 * Read fd into capture until end of file, end (monotonic ms), or capture
 * full; given up as soon as wake_fd (>= 0) is readable. Returns 0,
 * 1 (woken), -ETIMEDOUT or -EFBIG.
 */
int capture_output(int fd, struct secret *capture, uint64_t end, int wake_fd);
/*
 * Run argv with stdin from in_fd (or, when in_fd < 0, from the bytes
 * in_data through a pipe), stdout into out_fd (or, when out_fd < 0, into
 * capture), stderr inherited. Killed, with its process group, after
 * timeout_ms. Returns the exit status (0..255; 127 when there is no such
 * program), 128+signal, or -errno (-ETIMEDOUT when killed for the timeout).
 */
int run_child(char *const argv[], struct child_io *io, uint64_t timeout_ms);
/*
 * A directory holding a .curlrc that bounds every curl call to max_s
 * seconds (clevis' tang pin runs curl with no timeout: curl's default
 * connect timeout is 300 s). Returns 0 and the directory in dir.
 */
int curl_home(char *dir, size_t cap, unsigned int max_s);
void curl_home_remove(const char *dir);
/*
 * From now on every curl_home() of this process is dir (made by the
 * caller's curl_home(), and removed by it): a background worker that may
 * be killed at any time leaves no directory of its own behind.
 */
void curl_home_shared(const char *dir);

/*
 * clevis decrypt < the JWE file: the PIN into out. Returns 0, or non-zero
 * with a reason in why.
 */
int clevis_decrypt(const char *jwe, unsigned int timeout_s, struct secret *out,
		   char *why, size_t whylen);
/*
 * The same for a JWE in memory (len bytes, at most 64 KiB) whose secret
 * need not be a PIN (an sss share).
 */
int clevis_decrypt_text(const char *jwe, size_t len, unsigned int timeout_s, struct secret *out,
			char *why, size_t whylen);
/*
 * clevis encrypt PIN CONFIG < plain > out_fd, bounded by timeout_s (every
 * Tang exchange too), in a session of its own: it has no terminal to ask
 * a trust question on, so a configuration that would need one fails
 * instead of waiting for an answer. Returns run_child's result (0: sealed).
 */
int clevis_encrypt(const char *pin, const char *config, const struct secret *plain, int out_fd,
		   unsigned int timeout_s);

/*
 * A JWE file's text (compact, or the JSON serialization), malloc'ed and
 * NUL-terminated, blanks and newlines dropped. NULL and errno on failure.
 */
char *clevis_jwe_read(const char *path);
/* The protected header of a JWE's text, parsed; NULL when it has none. */
json_object *clevis_jwe_header(const char *text);
/* The Clevis pin a JWE file names ("?" when it is not a Clevis JWE). */
void clevis_jwe_pin(const char *path, char *out, size_t cap);
/* base64url (unpadded) to bytes; malloc'ed (*out, *outlen), 0 or -1. */
int b64url_decode(const char *in, size_t inlen, unsigned char **out, size_t *outlen);
/* bytes to base64url without padding, into out (cap >= 4 * (n + 2) / 3 + 1). */
void b64url_encode(const unsigned char *in, size_t n, char *out, size_t cap);

/* The SHA-256 of a file's bytes in hex (65 bytes with the NUL): 0 or -EIO. */
int file_sha256_hex(const char *path, char *hex);

#endif
