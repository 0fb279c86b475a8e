// SPDX-License-Identifier: GPL-2.0-only
/*
 * Child processes with bounded time, and Clevis: seal, open, and read a
 * JWE's protected header (clevis.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "nbde-clevis.h"
#include "opal.h"

/* ------------------------------------------------------------ children */

/* spawn_group_shared(): children stay in this process's group. */
static bool group_shared;

void spawn_group_shared(void)
{
	group_shared = true;
}

/* Where a program named without a slash is looked for, in this order. */
static const char *const program_dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin" };

/*
 * What a child may take from this process's environment, when set: the
 * TPM the tpm2 pin talks to (tpm2-tools 4 and 5: TPM2TOOLS_TCTI; 3:
 * TPM2TOOLS_TCTI_NAME, TPM2TOOLS_DEVICE_FILE, TPM2TOOLS_SOCKET_ADDRESS and
 * _PORT; the Rust tpm2 pin: TCTI; newer TSS: TSS2_TCTI), the tools' and
 * the TSS's other settings (TPM2TOOLS_ENABLE_ERRATA, TSS2_LOG,
 * TSS2_LOGFILE, TSS2_FAPICONF), and where temporary files go. Nothing
 * else: no proxy, no curl or shell start-up files, no search path.
 */
static const char *const passed_env[] = {
	"TPM2TOOLS_TCTI", "TPM2TOOLS_TCTI_NAME", "TPM2TOOLS_DEVICE_FILE",
	"TPM2TOOLS_SOCKET_ADDRESS", "TPM2TOOLS_SOCKET_PORT", "TPM2TOOLS_ENABLE_ERRATA",
	"TCTI", "TSS2_TCTI", "TSS2_LOG", "TSS2_LOGFILE", "TSS2_FAPICONF", "TMPDIR",
};

#define CHILD_PATH "/usr/sbin:/usr/bin:/sbin:/bin"
#define ENV_MAX (4 + sizeof(passed_env) / sizeof(passed_env[0]) + 1)

/*
 * The file a child runs: a path as given (made absolute), a bare name
 * from program_dirs. 0, or -ENOENT when there is no such program.
 */
static int program_path(const char *name, char *out, size_t cap)
{
	struct stat st;

	if (name[0] == '/') {
		return (size_t)snprintf(out, cap, "%s", name) < cap ? 0 : -ENAMETOOLONG;
	} else if (strchr(name, '/')) {
		/* Relative to where we are, as exec would take it. */
		if (!getcwd(out, cap))
			return -errno;
		if (strlen(out) + 1 + strlen(name) >= cap)
			return -ENAMETOOLONG;
		strcat(strcat(out, "/"), name);
		return 0;
	}
	if (!*name)
		return -ENOENT;
	for (size_t i = 0; i < sizeof(program_dirs) / sizeof(program_dirs[0]); i++) {
		if ((size_t)snprintf(out, cap, "%s/%s", program_dirs[i], name) >= cap)
			return -ENAMETOOLONG;
		if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return 0;
	}
	return -ENOENT;
}

/* The child's whole environment, in env (ENV_MAX entries); strings in home_buf. */
static void child_env(const struct child_io *io, const char **env, char *home_buf, size_t cap)
{
	size_t n = 0, half = cap / 2;

	env[n++] = "PATH=" CHILD_PATH;
	env[n++] = "LC_ALL=C";
	if (io->curl_home) {
		/* curl reads CURL_HOME/.curlrc, else HOME/.curlrc: both the bounded one. */
		snprintf(home_buf, half, "HOME=%s", io->curl_home);
		snprintf(home_buf + half, cap - half, "CURL_HOME=%s", io->curl_home);
		env[n++] = home_buf;
		env[n++] = home_buf + half;
	} else {
		env[n++] = "HOME=/";
	}
	for (size_t i = 0; i < sizeof(passed_env) / sizeof(passed_env[0]); i++) {
		size_t len = strlen(passed_env[i]);

		for (char **e = environ; e && *e; e++) {
			if (!strncmp(*e, passed_env[i], len) && (*e)[len] == '=') {
				env[n++] = *e;
				break;
			}
		}
	}
	env[n] = NULL;
}

/* Signal pid's process group, or pid alone while it has none of its own yet. */
static void kill_group(pid_t pid, int sig)
{
	if (kill(-pid, sig) && errno == ESRCH)
		kill(pid, sig);
}

/*
 * In the child, before exec: every signal back to its default action
 * (opalctl ignores SIGPIPE, and a caller may ignore others), the mask
 * emptied last, and no core file (the child holds the PIN).
 */
static void child_reset(void)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct rlimit none = { 0, 0 };
	sigset_t empty;

	sigemptyset(&dfl.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);	/* EINVAL for KILL, STOP and libc's own */
	setrlimit(RLIMIT_CORE, &none);
	sigemptyset(&empty);
	sigprocmask(SIG_SETMASK, &empty, NULL);
}

pid_t spawn_child(char *const argv[], const struct child_io *io, int *out_pipe)
{
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, rc = 0;
	char prog[PATH_MAX], homes[2 * PATH_MAX + 32];
	const char *env[ENV_MAX];
	sigset_t all, old;
	pid_t pid;

	rc = program_path(argv[0], prog, sizeof(prog));
	if (rc)
		return rc;
	child_env(io, env, homes, sizeof(homes));
	if ((io->in_fd < 0 && pipe2(inp, O_CLOEXEC)) || (io->out_fd < 0 && pipe2(outp, O_CLOEXEC))) {
		rc = -errno;
		goto fail;
	}
	/* No handler of this process may run in the child before it is reset. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	if (pid == 0) {
		/* A session of its own has no terminal to ask on (or stop for). */
		if (io->no_tty ? setsid() < 0 : !group_shared && setpgid(0, 0) < 0)
			_exit(126);
		if (dup2(io->in_fd >= 0 ? io->in_fd : inp[0], 0) < 0 ||
		    dup2(io->out_fd >= 0 ? io->out_fd : outp[1], 1) < 0)
			_exit(126);
		child_reset();
		execve(prog, argv, (char *const *)env);
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* Also here, so that killing the group works before the child ran. */
	if (!io->no_tty && !group_shared)
		setpgid(pid, pid);
	if (io->in_fd < 0) {
		close(inp[0]);
		/* A PIN fits in the pipe's buffer: no deadlock with the child. */
		if (io->in_len && write(inp[1], io->in_data, io->in_len) != (ssize_t)io->in_len)
			kill_group(pid, SIGKILL);
		close(inp[1]);
	}
	if (io->out_fd < 0) {
		close(outp[1]);
		*out_pipe = outp[0];
	}
	return pid;
fail:
	for (int i = 0; i < 2; i++) {
		if (inp[i] >= 0)
			close(inp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	return rc;
}

int reap_child(pid_t pid, uint64_t end, bool kill_now)
{
	int status = 0;

	for (;;) {
		siginfo_t si = { 0 };
		int w = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);

		if (!w && si.si_pid == pid) {
			/*
			 * Exited, not yet reaped (its pid, so its group's, not
			 * free for reuse): what it left running goes now, such
			 * as a curl of the tang pin writing into the next
			 * command's stderr.
			 */
			kill(-pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		if (w < 0 && errno != EINTR)
			return -errno;
		if (kill_now || nbde_now_ms() >= end) {
			kill_group(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return kill_now ? 128 + SIGKILL : -ETIMEDOUT;
		}
		usleep(20000);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * Read fd into capture until end of file, end (monotonic ms), or capture
 * full; given up as soon as wake_fd (>= 0) is readable. Returns 0,
 * 1 (woken), -ETIMEDOUT or -EFBIG.
 */
int capture_output(int fd, struct secret *capture, uint64_t end, int wake_fd)
{
	for (;;) {
		int rc = wait_readable(fd, wake_fd, end);
		ssize_t n;

		if (rc)
			return rc;
		n = read(fd, capture->data + capture->len, capture->cap - capture->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		capture->len += (size_t)n;
		if (capture->len == capture->cap)
			return -EFBIG;
	}
}

/*
 * Run argv with stdin from in_fd (or, when in_fd < 0, from the bytes
 * in_data through a pipe), stdout into out_fd (or, when out_fd < 0, into
 * capture), stderr inherited. Killed, with its process group, after
 * timeout_ms. Returns the exit status (0..255), 128+signal, or -errno
 * (-ETIMEDOUT when killed for the timeout).
 */
int run_child(char *const argv[], struct child_io *io, uint64_t timeout_ms)
{
	uint64_t end = nbde_now_ms() + timeout_ms;
	int out = -1, rc = 0, st;
	pid_t pid = spawn_child(argv, io, &out);

	if (pid == -ENOENT)
		return 127;	/* as a shell says it: no such program */
	if (pid < 0)
		return pid;
	if (out >= 0) {
		rc = capture_output(out, io->capture, end, -1);
		close(out);
	}
	st = reap_child(pid, end, rc != 0);
	return rc ? rc : st;
}

/*
 * A directory holding a .curlrc that bounds every curl call of the Tang
 * pin (clevis-decrypt-tang runs curl with no timeout: curl's default
 * connect timeout is 300 s). Returns 0 and the directory in dir.
 */
/* curl_home_shared(): the one directory this process's curl calls use. */
static char shared_home[64];

void curl_home_shared(const char *dir)
{
	snprintf(shared_home, sizeof(shared_home), "%s", dir);
}

int curl_home(char *dir, size_t cap, unsigned int max_s)
{
	char rc_path[PATH_MAX];
	const char *base = access("/run", W_OK) ? "/tmp" : "/run";
	FILE *f;

	if (shared_home[0]) {
		snprintf(dir, cap, "%s", shared_home);
	} else {
		snprintf(dir, cap, "%s/fdekit-curl.XXXXXX", base);
		if (!mkdtemp(dir))
			return -errno;
	}
	snprintf(rc_path, sizeof(rc_path), "%s/.curlrc", dir);
	f = fopen(rc_path, "w");
	if (!f)
		return -errno;
	fprintf(f, "connect-timeout = %u\nmax-time = %u\n",
		CURL_CONNECT_TIMEOUT < max_s ? CURL_CONNECT_TIMEOUT : max_s, max_s ? max_s : 1);
	fclose(f);
	return 0;
}

void curl_home_remove(const char *dir)
{
	char rc_path[PATH_MAX];

	if (shared_home[0] && !strcmp(dir, shared_home))
		return;	/* its owner removes it */
	snprintf(rc_path, sizeof(rc_path), "%s/.curlrc", dir);
	unlink(rc_path);
	rmdir(dir);
}

/* Why clevis decrypt failed, into why; out wiped. */
static int decrypt_result(int rc, unsigned int timeout_s, struct secret *out, size_t max,
			  char *why, size_t whylen)
{
	if (rc == -ETIMEDOUT)
		snprintf(why, whylen, "clevis decrypt did not finish within %u s", timeout_s);
	else if (rc == 127)
		snprintf(why, whylen, "clevis is not installed (or not in the initramfs)");
	else if (rc)
		snprintf(why, whylen, "clevis decrypt failed (exit %d): the key server is unreachable or no longer has the key (rotated and deleted: rebind the slot), the TPM is busy, or this machine cannot open the JWE", rc);
	else if (!out->len || out->len > max)
		snprintf(why, whylen, "clevis decrypt gave %zu bytes, not a %s", out->len,
			 max == OPAL_PIN_MAX ? "PIN" : "secret");
	else
		return 0;
	explicit_bzero(out->data, out->cap);
	out->len = 0;
	return rc ? rc : -EINVAL;
}

/* clevis decrypt with io's stdin, every curl call bounded. */
static int decrypt_io(struct child_io *io, unsigned int timeout_s, struct secret *out)
{
	char *const argv[] = { (char *)"clevis", (char *)"decrypt", NULL };
	char home[64];
	int rc;

	out->len = 0;
	io->out_fd = -1;
	io->capture = out;
	rc = curl_home(home, sizeof(home), timeout_s);
	if (rc)
		return rc;
	io->curl_home = home;
	rc = run_child(argv, io, (uint64_t)timeout_s * 1000);
	curl_home_remove(home);
	return rc;
}

int clevis_decrypt(const char *jwe, unsigned int timeout_s, struct secret *out,
		   char *why, size_t whylen)
{
	struct child_io io = { 0 };
	int fd, rc;

	out->len = 0;
	fd = open(jwe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %s: %s", jwe, strerror(errno));
		return -errno;
	}
	io.in_fd = fd;
	rc = decrypt_io(&io, timeout_s, out);
	close(fd);
	return decrypt_result(rc, timeout_s, out, OPAL_PIN_MAX, why, whylen);
}

int clevis_decrypt_text(const char *jwe, size_t len, unsigned int timeout_s, struct secret *out,
			char *why, size_t whylen)
{
	struct child_io io = { .in_fd = -1, .in_data = (const uint8_t *)jwe, .in_len = len };

	if (len > 65536) {
		snprintf(why, whylen, "a JWE of %zu bytes: too long", len);
		return -EFBIG;
	}
	return decrypt_result(decrypt_io(&io, timeout_s, out), timeout_s, out, out->cap - 1, why,
			      whylen);
}

int clevis_encrypt(const char *pin, const char *config, const struct secret *plain, int out_fd,
		   unsigned int timeout_s)
{
	char *const argv[] = { (char *)"clevis", (char *)"encrypt", (char *)pin, (char *)config,
			       NULL };
	struct child_io io = { .in_fd = -1, .in_data = plain->data, .in_len = plain->len,
			       .out_fd = out_fd, .no_tty = true };
	char home[64];
	int rc = curl_home(home, sizeof(home), timeout_s);

	if (rc)
		return rc;
	io.curl_home = home;
	rc = run_child(argv, &io, (uint64_t)timeout_s * 1000);
	curl_home_remove(home);
	return rc;
}

/* ------------------------------------------------------------- JWEs */

char *clevis_jwe_read(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int c;

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return NULL;
	}
	while ((c = getc(f)) != EOF) {
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (n + 1 >= cap) {
			char *b = cap >= (1u << 20) ? NULL : realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			buf = b;
			cap *= 2;
		}
		buf[n++] = (char)c;
	}
	fclose(f);
	buf[n] = 0;
	return buf;
}

int b64url_decode(const char *in, size_t inlen, unsigned char **out, size_t *outlen)
{
	size_t k = inlen, pad;
	char *b64 = malloc(inlen + 4);
	unsigned char *raw = malloc(inlen + 4);
	int len;

	if (!b64 || !raw || inlen % 4 == 1)
		goto fail;
	for (size_t i = 0; i < inlen; i++) {
		char ch = in[i];

		if (!isalnum((unsigned char)ch) && ch != '-' && ch != '_')
			goto fail;
		b64[i] = ch == '-' ? '+' : ch == '_' ? '/' : ch;
	}
	while (k % 4)
		b64[k++] = '=';
	b64[k] = 0;
	pad = k - inlen;
	len = k ? EVP_DecodeBlock(raw, (unsigned char *)b64, (int)k) : 0;
	if (len < 0 || (size_t)len < pad)
		goto fail;
	free(b64);
	*out = raw;
	*outlen = (size_t)len - pad;
	return 0;
fail:
	free(b64);
	free(raw);
	return -1;
}

void b64url_encode(const unsigned char *in, size_t n, char *out, size_t cap)
{
	size_t need = 4 * ((n + 2) / 3) + 1, k;

	if (cap < need) {
		if (cap)
			out[0] = 0;
		return;
	}
	EVP_EncodeBlock((unsigned char *)out, in, (int)n);
	k = strlen(out);
	while (k && out[k - 1] == '=')
		out[--k] = 0;
	for (size_t i = 0; i < k; i++)
		out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
}

json_object *clevis_jwe_header(const char *text)
{
	json_object *j = NULL, *outer = NULL, *prot;
	const char *p = text;
	unsigned char *raw;
	size_t k, len;

	if (text[0] == '{') {
		/* The JSON serialization: its "protected" member. */
		outer = json_tokener_parse(text);
		if (!outer || !json_object_object_get_ex(outer, "protected", &prot) ||
		    !json_object_is_type(prot, json_type_string)) {
			json_object_put(outer);
			return NULL;
		}
		p = json_object_get_string(prot);
	}
	k = strcspn(p, ".");
	if (!b64url_decode(p, k, &raw, &len)) {
		json_tokener *tok = json_tokener_new();

		j = tok ? json_tokener_parse_ex(tok, (const char *)raw, (int)len) : NULL;
		if (tok)
			json_tokener_free(tok);
		free(raw);
	}
	json_object_put(outer);
	if (j && !json_object_is_type(j, json_type_object)) {
		json_object_put(j);
		j = NULL;
	}
	return j;
}

void clevis_jwe_pin(const char *path, char *out, size_t cap)
{
	char *text = clevis_jwe_read(path);
	json_object *h = text ? clevis_jwe_header(text) : NULL, *cl, *pin;

	snprintf(out, cap, "?");
	if (h && json_object_object_get_ex(h, "clevis", &cl) &&
	    json_object_object_get_ex(cl, "pin", &pin) && json_object_is_type(pin, json_type_string))
		snprintf(out, cap, "%s", json_object_get_string(pin));
	json_object_put(h);
	free(text);
}

int file_sha256_hex(const char *path, char *hex)
{
	unsigned char buf[4096], dig[32];
	EVP_MD_CTX *m = EVP_MD_CTX_new();
	FILE *f = fopen(path, "r");
	unsigned int dl = 0;
	size_t n;
	int rc = -EIO;

	if (!f || !m || EVP_DigestInit_ex(m, EVP_sha256(), NULL) != 1)
		goto out;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (EVP_DigestUpdate(m, buf, n) != 1)
			goto out;
	if (ferror(f) || EVP_DigestFinal_ex(m, dig, &dl) != 1 || dl != sizeof(dig))
		goto out;
	for (size_t i = 0; i < sizeof(dig); i++)
		sprintf(hex + 2 * i, "%02x", dig[i]);
	rc = 0;
out:
	if (f)
		fclose(f);
	EVP_MD_CTX_free(m);
	return rc;
}
