// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network-bound unlock: key slots sealed with Clevis, and unlock-all, the
 * boot-time unlock of every drive in the unlock table.
 *
 * A key slot is a User authority of the Locking SP with a random 32-byte
 * PIN, allowed to lock and unlock a range; the PIN is sealed by
 * `clevis encrypt` (tang, tpm2, sss) into a JWE that is safe to keep in the
 * clear. Admin1's key is never replaced: it stays the recovery key.
 *
 * Secrets travel only through pipes: to clevis encrypt on its stdin, from
 * clevis decrypt on its stdout, into mlock'ed memory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "opalctl-cmd.h"
#include "opaltab.h"

#define SLOT_PIN_BYTES 32
#define KEYS_DIR "/etc/fdekit/keys"
/* Each step of a Tang exchange (curl inside clevis-decrypt-tang). */
#define CURL_CONNECT_TIMEOUT 5

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------ children */

/*
 * Run argv with stdin from in_fd (or, when in_fd < 0, from the bytes
 * in_data through a pipe), stdout into out_fd (or, when out_fd < 0, into
 * capture), stderr inherited. Killed, with its process group, after
 * timeout_ms. Returns the exit status (0..255), 128+signal, or -errno
 * (-ETIMEDOUT when killed for the timeout).
 */
struct child_io {
	int in_fd;
	const uint8_t *in_data;
	size_t in_len;
	int out_fd;
	struct secret *capture;
	const char *curl_home;	/* CURL_HOME for the child, or NULL */
};

static int run_child(char *const argv[], struct child_io *io, uint64_t timeout_ms)
{
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, status = 0, rc = 0;
	uint64_t end = now_ms() + timeout_ms;
	pid_t pid;

	if ((io->in_fd < 0 && pipe2(inp, O_CLOEXEC)) || (io->out_fd < 0 && pipe2(outp, O_CLOEXEC)))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		goto out;
	}
	if (pid == 0) {
		setpgid(0, 0);
		if (dup2(io->in_fd >= 0 ? io->in_fd : inp[0], 0) < 0 ||
		    dup2(io->out_fd >= 0 ? io->out_fd : outp[1], 1) < 0)
			_exit(126);
		if (io->curl_home)
			setenv("CURL_HOME", io->curl_home, 1);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(pid, pid);
	if (io->in_fd < 0) {
		close(inp[0]);
		inp[0] = -1;
		/* A PIN fits in the pipe's buffer: no deadlock with the child. */
		if (io->in_len && write(inp[1], io->in_data, io->in_len) != (ssize_t)io->in_len)
			rc = -EIO;
		close(inp[1]);
		inp[1] = -1;
	}
	if (io->out_fd < 0) {
		close(outp[1]);
		outp[1] = -1;
		for (;;) {
			struct pollfd p = { .fd = outp[0], .events = POLLIN };
			uint64_t t = now_ms();
			ssize_t n;

			if (t >= end) {
				rc = -ETIMEDOUT;
				break;
			}
			n = poll(&p, 1, (int)(end - t));
			if (n < 0 && errno == EINTR)
				continue;
			if (n == 0)
				continue;
			n = read(outp[0], io->capture->data + io->capture->len,
				 io->capture->cap - io->capture->len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			io->capture->len += (size_t)n;
			if (io->capture->len == io->capture->cap) {
				rc = -EFBIG;
				break;
			}
		}
	}
	/* Wait for the exit, bounded; kill the whole group at the deadline. */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			rc = rc ? rc : -errno;
			break;
		}
		if (rc == -ETIMEDOUT || rc == -EFBIG || now_ms() >= end) {
			kill(-pid, SIGKILL);
			waitpid(pid, &status, 0);
			if (!rc)
				rc = -ETIMEDOUT;
			break;
		}
		usleep(20000);
	}
	if (!rc)
		rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	for (int i = 0; i < 2; i++) {
		if (inp[i] >= 0)
			close(inp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	return rc;
}

/*
 * A directory holding a .curlrc that bounds every curl call of the Tang
 * pin (clevis-decrypt-tang runs curl with no timeout: curl's default
 * connect timeout is 300 s). Returns 0 and the directory in dir.
 */
static int curl_home(char *dir, size_t cap, unsigned int max_s)
{
	char rc_path[PATH_MAX];
	const char *base = access("/run", W_OK) ? "/tmp" : "/run";
	FILE *f;

	snprintf(dir, cap, "%s/fdekit-curl.XXXXXX", base);
	if (!mkdtemp(dir))
		return -errno;
	snprintf(rc_path, sizeof(rc_path), "%s/.curlrc", dir);
	f = fopen(rc_path, "w");
	if (!f)
		return -errno;
	fprintf(f, "connect-timeout = %u\nmax-time = %u\n",
		CURL_CONNECT_TIMEOUT < max_s ? CURL_CONNECT_TIMEOUT : max_s, max_s ? max_s : 1);
	fclose(f);
	return 0;
}

static void curl_home_remove(const char *dir)
{
	char rc_path[PATH_MAX];

	snprintf(rc_path, sizeof(rc_path), "%s/.curlrc", dir);
	unlink(rc_path);
	rmdir(dir);
}

/* clevis decrypt < jwe: the PIN into out. Returns 0 or a reason. */
static int clevis_decrypt(const char *jwe, unsigned int timeout_s, struct secret *out,
			  char *why, size_t whylen)
{
	char *const argv[] = { (char *)"clevis", (char *)"decrypt", NULL };
	struct child_io io = { .out_fd = -1, .capture = out };
	char home[64];
	int fd, rc;

	out->len = 0;
	fd = open(jwe, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "cannot open %s: %s", jwe, strerror(errno));
		return -errno;
	}
	io.in_fd = fd;
	rc = curl_home(home, sizeof(home), timeout_s);
	if (!rc) {
		io.curl_home = home;
		rc = run_child(argv, &io, (uint64_t)timeout_s * 1000);
		curl_home_remove(home);
	}
	close(fd);
	if (rc == -ETIMEDOUT)
		snprintf(why, whylen, "clevis decrypt did not finish within %u s", timeout_s);
	else if (rc == 127)
		snprintf(why, whylen, "clevis is not installed (or not in the initramfs)");
	else if (rc)
		snprintf(why, whylen, "clevis decrypt failed (exit %d): the key server is unreachable or no longer has the key (rotated and deleted: rebind the slot), the TPM is busy, or this machine cannot open the JWE", rc);
	else if (!out->len || out->len > OPAL_PIN_MAX)
		snprintf(why, whylen, "clevis decrypt gave %zu bytes, not a PIN", out->len);
	else
		return 0;
	explicit_bzero(out->data, out->cap);
	out->len = 0;
	return rc ? rc : -EINVAL;
}

/* ---------------------------------------------------------- key slots */

/* The drive's name in file names: its serial number, or the device's name. */
static void drive_id(struct ctx *c, char *out, size_t cap)
{
	char serial[OPAL_SERIAL_MAX + 1] = "";
	const char *base = strrchr(c->devpath, '/');
	size_t n = 0;

	if (c->dev->opal && !opal_dev_serial(c->dev->opal, serial))
		serial[OPAL_SERIAL_MAX] = 0;
	else
		serial[0] = 0;
	for (const char *p = serial; *p && n + 1 < cap; p++) {
		if (*p == ' ')
			continue;
		out[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
	}
	if (!n) {
		base = base ? base + 1 : c->devpath;
		for (const char *p = base; *p && n + 1 < cap; p++)
			out[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
	}
	out[n] = 0;
}

static void default_jwe(struct ctx *c, unsigned int user, char *out, size_t cap)
{
	char id[64];

	drive_id(c, id, sizeof(id));
	snprintf(out, cap, "%s/%s-user%u.jwe", KEYS_DIR, id, user);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, mode) && errno != EEXIST ? -errno : 0;
}

static bool slot_free(const struct opalctl_access *acc, unsigned int user)
{
	opal_uid u = opal_uid_user(user);

	if (user > acc->nusers || acc->user_enabled[user])
		return false;
	for (unsigned int n = 0; n < acc->nranges; n++) {
		const struct opal_range_access *a = &acc->range[n].ace;

		if (opal_ace_has(&a->rdlocked, &u) || opal_ace_has(&a->wrlocked, &u))
			return false;
	}
	return true;
}

static int read_access(struct ctx *c, struct opal_session *s, struct opalctl_access *acc)
{
	int rc = opalctl_read_access(s, acc);

	return rc ? fail_opal(c, "reading users and ACEs", rc, NULL, NULL) : 0;
}

int cmd_bind(struct ctx *c)
{
	unsigned int range = c->range < 0 ? 0 : (unsigned int)c->range, user = 0;
	struct opalctl_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL, *pin = NULL;
	struct opal_session *s = NULL;
	char jwe[PATH_MAX], tmp[PATH_MAX + 8], id[64];
	int rc, fd = -1;

	if (!acc)
		return fail(c, EXIT_DRIVE, "bind: out of memory");
	if (!c->pin || (strcmp(c->pin, "tang") && strcmp(c->pin, "tpm2") && strcmp(c->pin, "sss"))) {
		free(acc);
		return fail(c, EXIT_USAGE, "bind: needs --pin tang, tpm2 or sss");
	}
	if (!c->pin_config) {
		free(acc);
		return fail(c, EXIT_USAGE, "bind: needs --config JSON (the pin's configuration, as for `clevis encrypt %s`)",
			    c->pin);
	}
	/* 1. Pick a free slot: a user neither enabled nor named by any ACE. */
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (!rc && (range >= acc->nranges || !acc->range[range].configured))
		rc = fail(c, EXIT_USAGE, "bind: range %u is not configured on %s: set it up first (`opalctl setup --range %u ...`)",
			  range, c->devpath, range);
	for (unsigned int u = 1; !rc && !user && u <= acc->nusers; u++)
		if (slot_free(acc, u))
			user = u;
	if (!rc && !user)
		rc = fail(c, EXIT_DRIVE, "bind: no free key slot: all %u users are enabled or named in an ACE (remove one with `opalctl unbind`)",
			  acc->nusers);
	if (s) {
		opal_end_session(s);
		s = NULL;
	}
	if (rc)
		goto out;
	/* 2. A random PIN, sealed before the drive is touched. */
	pin = secret_new();
	if (!pin || RAND_bytes(pin->data, SLOT_PIN_BYTES) != 1) {
		rc = fail(c, EXIT_KEYFILE, "bind: no locked memory or random bytes for the slot key");
		goto out;
	}
	pin->len = SLOT_PIN_BYTES;
	if (c->jwe)
		snprintf(jwe, sizeof(jwe), "%s", c->jwe);
	else
		default_jwe(c, user, jwe, sizeof(jwe));
	if (!access(jwe, F_OK)) {
		rc = fail(c, EXIT_REFUSED, "bind: %s exists: remove it or give --jwe FILE", jwe);
		goto out;
	}
	if (!c->jwe && mkdir_p(KEYS_DIR, 0700)) {
		rc = fail(c, EXIT_KEYFILE, "bind: cannot create %s: %s", KEYS_DIR, strerror(errno));
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", jwe);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = fail(c, EXIT_KEYFILE, "bind: cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	{
		char *const argv[] = { (char *)"clevis", (char *)"encrypt", (char *)c->pin,
				       (char *)c->pin_config, NULL };
		struct child_io io = { .in_fd = -1, .in_data = pin->data, .in_len = pin->len,
				       .out_fd = fd };

		if (c->verbose)
			fprintf(c->err, "opalctl: bind: clevis encrypt %s '%s' for User%u\n", c->pin,
				c->pin_config, user);
		rc = run_child(argv, &io, 120000);
	}
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	fd = -1;
	if (rc) {
		unlink(tmp);
		rc = fail(c, EXIT_KEYFILE, "bind: clevis encrypt %s failed (%s): check --config and that the %s server/device answers",
			  c->pin, rc < 0 ? strerror(-rc) : rc == 127 ? "clevis not installed" : "see its message above",
			  c->pin);
		goto out;
	}
	/* 3. The slot: enable the user, give it the PIN, grant it the range. */
	{
		struct opal_key k = key_of(key), p = key_of(pin);

		rc = opal_admin1_session(c->dev->opal, &k, &s);
		if (!rc)
			rc = opal_user_set_pin(s, user, &p);
		if (!rc)
			rc = opal_user_set_enabled(s, user, true);
		if (!rc)
			rc = opal_grant_user(s, user, range, true);
		if (rc && s) {
			/* Leave no half-made slot behind. */
			opal_revoke_user(s, user, range);
			opal_user_set_enabled(s, user, false);
		}
		if (s) {
			int end = opal_end_session(s);

			rc = rc ? rc : end;
			s = NULL;
		}
	}
	if (rc) {
		unlink(tmp);
		rc = fail_opal(c, "bind: setting up the user", rc, NULL, NULL);
		goto out;
	}
	if (rename(tmp, jwe)) {
		rc = fail(c, EXIT_KEYFILE, "bind: User%u is set up but %s cannot be renamed to %s: %s: rename it by hand",
			  user, tmp, jwe, strerror(errno));
		goto out;
	}
	drive_id(c, id, sizeof(id));
	{
		char line[PATH_MAX + 128];

		snprintf(line, sizeof(line), "NAME serial=%s %u clevis:%s user=%u", id, range, jwe, user);
		json_object_object_add(c->jout, "slot", json_object_new_int((int)user));
		json_object_object_add(c->jout, "range", json_object_new_int((int)range));
		json_object_object_add(c->jout, "pin", json_object_new_string(c->pin));
		json_object_object_add(c->jout, "jwe", json_object_new_string(jwe));
		json_object_object_add(c->jout, "opaltab", json_object_new_string(line));
		json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	}
out:
	if (fd >= 0)
		close(fd);
	secret_free(pin);
	secret_free(key);
	free(acc);
	return rc;
}

void text_bind(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: key slot User%" PRId64 " bound to range %" PRId64 " with clevis %s; sealed key in %s\n",
		res_str(res, "device"), res_int(res, "slot"), res_int(res, "range"),
		res_str(res, "pin"), res_str(res, "jwe"));
	fprintf(c->out, "opaltab line (name it): %s\n", res_str(res, "opaltab"));
}

int cmd_unbind(struct ctx *c)
{
	struct opalctl_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL, *scrap = secret_new();
	struct opal_session *s = NULL;
	unsigned int user = (unsigned int)c->slot;
	char jwe[PATH_MAX];
	bool had_jwe;
	int rc;

	if (!acc || !scrap) {
		free(acc);
		secret_free(scrap);
		return fail(c, EXIT_DRIVE, "unbind: out of memory");
	}
	if (!user) {
		free(acc);
		secret_free(scrap);
		return fail(c, EXIT_USAGE, "unbind: needs --slot N (the user number `opalctl slots` shows)");
	}
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (!rc && user > acc->nusers)
		rc = fail(c, EXIT_USAGE, "unbind: the drive has %u users, no User%u", acc->nusers, user);
	if (!rc) {
		/*
		 * Revoke its ACE entries, give it a PIN nobody knows (a sealed
		 * copy of the old one must never work again), disable it.
		 */
		struct opal_key p = { scrap->data, SLOT_PIN_BYTES };
		int orc = 0;

		scrap->len = SLOT_PIN_BYTES;
		if (RAND_bytes(scrap->data, SLOT_PIN_BYTES) != 1)
			orc = OPAL_ERR_NOMEM;
		for (unsigned int n = 0; !orc && n < acc->nranges; n++)
			if (acc->range[n].configured)
				orc = opal_revoke_user(s, user, n);
		if (!orc)
			orc = opal_user_set_pin(s, user, &p);
		if (!orc)
			orc = opal_user_set_enabled(s, user, false);
		if (orc)
			rc = fail_opal(c, "unbind: removing the user", orc, NULL, NULL);
	}
	if (s) {
		int end = opal_end_session(s);

		if (!rc && end)
			rc = fail_opal(c, "unbind: ending the session", end, NULL, NULL);
	}
	secret_free(key);
	secret_free(scrap);
	free(acc);
	if (rc)
		return rc;
	if (c->jwe)
		snprintf(jwe, sizeof(jwe), "%s", c->jwe);
	else
		default_jwe(c, user, jwe, sizeof(jwe));
	had_jwe = !access(jwe, F_OK);
	if (had_jwe && unlink(jwe))
		return fail(c, EXIT_KEYFILE, "unbind: User%u removed, but %s stays: %s", user, jwe,
			    strerror(errno));
	json_object_object_add(c->jout, "slot", json_object_new_int((int)user));
	json_object_object_add(c->jout, "jwe_removed", had_jwe ? json_object_new_string(jwe) : NULL);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_unbind(struct ctx *c, json_object *res)
{
	bool had_jwe = res_get(res, "jwe_removed");

	fprintf(c->out, "%s: key slot User%" PRId64 " removed%s%s\n", res_str(res, "device"),
		res_int(res, "slot"), had_jwe ? "; deleted " : "", res_str(res, "jwe_removed"));
}

/* The clevis pin of a JWE: its protected header's clevis.pin. */
static void jwe_pin(const char *path, char *out, size_t cap)
{
	char buf[8192], hdr[4096];
	unsigned char raw[4096];
	FILE *f = fopen(path, "r");
	size_t n = 0, k;
	int len;
	json_object *j = NULL, *cl, *pin;
	json_tokener *tok;

	snprintf(out, cap, "?");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	k = strcspn(buf, ".");
	if (k == n || k >= sizeof(hdr) - 4)
		return;
	/* base64url without padding -> base64 */
	for (size_t i = 0; i < k; i++)
		hdr[i] = buf[i] == '-' ? '+' : buf[i] == '_' ? '/' : buf[i];
	while (k % 4)
		hdr[k++] = '=';
	hdr[k] = 0;
	len = EVP_DecodeBlock(raw, (unsigned char *)hdr, (int)k);
	if (len <= 0)
		return;
	tok = json_tokener_new();
	j = tok ? json_tokener_parse_ex(tok, (const char *)raw, len) : NULL;
	if (tok)
		json_tokener_free(tok);
	if (j && json_object_object_get_ex(j, "clevis", &cl) &&
	    json_object_object_get_ex(cl, "pin", &pin))
		snprintf(out, cap, "%s", json_object_get_string(pin));
	json_object_put(j);
}

/* The JWE an unlock table entry for this drive names for user, if any. */
static void table_jwe(struct ctx *c, const struct opaltab_entry *tab, size_t n, unsigned int user,
		      char *out, size_t cap)
{
	char id[64], dev[PATH_MAX], other[PATH_MAX];

	drive_id(c, id, sizeof(id));
	if (!realpath(c->devpath, dev))
		snprintf(dev, sizeof(dev), "%s", c->devpath);
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct opaltab_entry *e = &tab[i];

		if (e->key_kind != OPALTAB_KEY_CLEVIS || e->user != user)
			continue;
		if ((e->dev_kind == OPALTAB_DEV_PATH && realpath(e->dev, other) && !strcmp(other, dev)) ||
		    (e->dev_kind == OPALTAB_DEV_SERIAL && !strcmp(e->dev, id))) {
			snprintf(out, cap, "%s", e->key_path);
			return;
		}
	}
}

int cmd_slots(struct ctx *c)
{
	struct opalctl_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL;
	struct opal_session *s = NULL;
	struct opaltab_entry *tab = NULL;
	size_t ntab = 0;
	json_object *arr;
	int rc;
	FILE *tf = fopen(c->table ? c->table : OPALTAB_DEFAULT, "r");

	if (tf) {
		char err[320];

		if (opaltab_parse(tf, &tab, &ntab, err, sizeof(err)))
			warn(c, "%s: %s: sealed keys named there are not shown",
			     c->table ? c->table : OPALTAB_DEFAULT, err);
		fclose(tf);
	}

	if (!acc)
		return fail(c, EXIT_DRIVE, "slots: out of memory");
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (s)
		opal_end_session(s);
	secret_free(key);
	if (rc) {
		free(tab);
		free(acc);
		return rc;
	}
	arr = json_object_new_array();
	json_object_object_add(c->jout, "slots", arr);
	for (unsigned int u = 0; u <= acc->nusers; u++) {
		opal_uid a = u ? opal_uid_user(u) : OPAL_UID_ADMINS;
		json_object *o, *rr = json_object_new_array(), *ro = json_object_new_array();
		char jwe[PATH_MAX], pin[32] = "", name[16];
		bool any = false;

		for (unsigned int n = 0; n < acc->nranges; n++) {
			const struct opal_range_access *x = &acc->range[n].ace;
			bool rd, wr;

			if (!acc->range[n].configured)
				continue;
			rd = opal_ace_has(&x->rdlocked, &a);
			wr = opal_ace_has(&x->wrlocked, &a);
			if (!rd && !wr)
				continue;
			any = true;
			json_object_array_add(rr, json_object_new_int((int)n));
			if (!wr)
				json_object_array_add(ro, json_object_new_int((int)n));
		}
		if (u && !acc->user_enabled[u] && !any) {
			json_object_put(rr);
			json_object_put(ro);
			continue;
		}
		jwe[0] = 0;
		if (u) {
			table_jwe(c, tab, ntab, u, jwe, sizeof(jwe));
			if (!jwe[0])
				default_jwe(c, u, jwe, sizeof(jwe));
			if (access(jwe, R_OK))
				jwe[0] = 0;
			else
				jwe_pin(jwe, pin, sizeof(pin));
		}
		if (u)
			snprintf(name, sizeof(name), "User%u", u);
		else
			snprintf(name, sizeof(name), "Admins");
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int((int)u));
		json_object_object_add(o, "authority", json_object_new_string(name));
		json_object_object_add(o, "enabled", jbool(!u || acc->user_enabled[u]));
		json_object_object_add(o, "ranges", rr);
		json_object_object_add(o, "jwe", jwe[0] ? json_object_new_string(jwe) : NULL);
		json_object_object_add(o, "pin", pin[0] ? json_object_new_string(pin) : NULL);
		/* Ranges it may lock for reading only (no write lock control). */
		json_object_object_add(o, "read_only_ranges", ro);
		json_object_array_add(arr, o);
	}
	free(tab);
	free(acc);
	return 0;
}

/* One slot: "Admins" (slot 0) is Admin1's recovery key, the others users. */
static void slot_text(FILE *out, json_object *o)
{
	json_object *rr = res_get(o, "ranges"), *ro = res_get(o, "read_only_ranges");
	char ranges[64] = "-";
	size_t rl = 0;

	for (size_t i = 0; i < res_count(rr); i++) {
		int n = json_object_get_int(json_object_array_get_idx(rr, i));
		bool read_only = false;

		for (size_t j = 0; j < res_count(ro); j++)
			read_only |= json_object_get_int(json_object_array_get_idx(ro, j)) == n;
		rl += (size_t)snprintf(ranges + rl, sizeof(ranges) - rl, "%s%d%s", rl ? "," : "", n,
				       read_only ? "(ro)" : "");
		if (rl >= sizeof(ranges))
			rl = sizeof(ranges) - 1;
	}
	if (!res_int(o, "slot")) {
		fprintf(out, "Admins   ranges %-12s recovery key (Admin1)\n", ranges);
		return;
	}
	fprintf(out, "User%-4" PRId64 " ranges %-12s %s", res_int(o, "slot"), ranges,
		res_bool(o, "enabled") ? "enabled" : "disabled");
	if (res_get(o, "jwe"))
		fprintf(out, ", clevis %s in %s\n", res_str(o, "pin"), res_str(o, "jwe"));
	else
		fprintf(out, ", no sealed key here\n");
}

void text_slots(struct ctx *c, json_object *res)
{
	json_object *arr = res_get(res, "slots");

	for (size_t i = 0; i < res_count(arr); i++)
		slot_text(c->out, json_object_array_get_idx(arr, i));
}

/* ---------------------------------------------------------- unlock-all */

struct deadline {
	uint64_t end;	/* 0: none */
};

static uint64_t remaining_ms(const struct deadline *d, uint64_t want)
{
	uint64_t t = now_ms();

	if (!d->end)
		return want;
	if (t >= d->end)
		return 0;
	return d->end - t < want ? d->end - t : want;
}

static bool read_attr(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(out, 1, cap - 1, f);
	fclose(f);
	out[n] = 0;
	while (n && isspace((unsigned char)out[n - 1]))
		out[--n] = 0;
	return true;
}

static const char *trim_left(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* A WWN compares with or without its "naa."/"eui."/"nvme." style prefix. */
static bool wwn_match(const char *have, const char *want)
{
	const char *h = strchr(have, '.'), *w = strchr(want, '.');

	return !strcasecmp(have, want) || (h && !strcasecmp(h + 1, want)) ||
	       (w && !strcasecmp(have, w + 1)) || (h && w && !strcasecmp(h + 1, w + 1));
}

/* The whole-disk block device with this serial number or WWN, now. */
static bool find_disk(const struct opaltab_entry *e, char *path, size_t cap)
{
	DIR *d = opendir("/sys/class/block");
	struct dirent *de;
	bool found = false;

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		char p[512], v[256];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/sys/class/block/%s/partition", de->d_name);
		if (!access(p, F_OK))
			continue;
		if (e->dev_kind == OPALTAB_DEV_SERIAL) {
			snprintf(p, sizeof(p), "/sys/class/block/%s/device/serial", de->d_name);
			found = read_attr(p, v, sizeof(v)) && !strcmp(trim_left(v), e->dev);
		} else {
			snprintf(p, sizeof(p), "/sys/class/block/%s/wwid", de->d_name);
			if (!read_attr(p, v, sizeof(v))) {
				snprintf(p, sizeof(p), "/sys/class/block/%s/device/wwid", de->d_name);
				if (!read_attr(p, v, sizeof(v)))
					continue;
			}
			found = wwn_match(trim_left(v), e->dev);
		}
		if (found)
			snprintf(path, cap, "/dev/%s", de->d_name);
	}
	closedir(d);
	return found;
}

static bool wait_device(const struct opaltab_entry *e, const struct deadline *dl, char *path,
			size_t cap)
{
	uint64_t end = now_ms() + remaining_ms(dl, (uint64_t)e->timeout_s * 1000);

	for (;;) {
		if (e->dev_kind == OPALTAB_DEV_PATH) {
			if (!access(e->dev, F_OK)) {
				snprintf(path, cap, "%s", e->dev);
				return true;
			}
		} else if (find_disk(e, path, cap)) {
			return true;
		}
		if (now_ms() >= end)
			return false;
		usleep(200000);
	}
}

/*
 * How long a passphrase prompt waits: a person is asked, so not cut short
 * by what the automatic attempts used of the deadline; at most
 * --prompt-timeout (default 120 s), or what is left of the deadline when
 * that is longer.
 */
static uint64_t prompt_ms(const struct ctx *c, const struct deadline *dl)
{
	uint64_t own = (uint64_t)(c->prompt_timeout_s ? c->prompt_timeout_s : 120) * 1000;
	uint64_t left = remaining_ms(dl, UINT64_MAX);

	return dl->end && left > own ? left : own;
}

/* Ask for a passphrase: --askpass, else the terminal with echo off. */
static int ask_passphrase(struct ctx *c, const char *prompt, const struct deadline *dl,
			  struct secret *out)
{
	out->len = 0;
	if (c->askpass) {
		char *const argv[] = { (char *)c->askpass, (char *)prompt, NULL };
		struct child_io io = { .in_fd = 0, .out_fd = -1, .capture = out };
		int rc = run_child(argv, &io, prompt_ms(c, dl));

		if (rc) {
			explicit_bzero(out->data, out->cap);
			out->len = 0;
			return rc < 0 ? rc : -EIO;
		}
	} else {
		int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
		int rc;

		if (fd < 0)
			fd = dup(fileno(c->in));
		if (fd < 0)
			return -errno;
		rc = secret_read_line(out, fd, prompt, (unsigned int)prompt_ms(c, dl));
		close(fd);
		if (rc)
			return rc;
	}
	/* A passphrase loses one trailing newline, as a text key file does. */
	if (out->len && out->data[out->len - 1] == '\n')
		out->len--;
	return out->len ? 0 : -ENODATA;
}

static bool named(const struct ctx *c, const char *name)
{
	for (unsigned int i = 0; i < c->nnames; i++)
		if (!strcmp(c->names[i], name))
			return true;
	return false;
}

/*
 * Unlock the entry's ranges on path with key as user. Returns the exit
 * code of the first range that failed (0: all unlocked); *saved says
 * whether the kernel keeps the key for S3.
 */
static int unlock_ranges(struct ctx *c, const struct opaltab_entry *e, const char *path,
			 unsigned int user, const struct opal_key *k, bool *saved)
{
	int rc = 0;

	*saved = false;
	for (unsigned int i = 0; !rc && i < e->nranges; i++) {
		struct ctx sub = *c;
		char why[160];

		/* The entry's line is its result: a range's own goes nowhere. */
		sub.jout = json_object_new_object();
		sub.command = NULL;
		sub.devpath = path;
		sub.transport = e->transport[0] ? e->transport : c->transport;
		sub.range = (int)e->ranges[i];
		sub.user = (int)user;
		sub.read_only = e->readonly;
		sub.keep_mbr = e->keep_mbr;
		sub.save = false;
		rc = opalctl_dev_open(path, sub.transport, c->timeout_ms, true, &sub.dev, why,
				      sizeof(why));
		if (rc) {
			rc = fail(&sub, EXIT_DEVICE, "%s: cannot open %s: %s", e->name, path, why);
			json_object_put(sub.jout);
			break;
		}
		/* S3: only the kernel can keep the key; elsewhere say it is not kept. */
		sub.save = e->save && sub.dev->be.ops->can_save;
		rc = opalctl_lock_unlock(&sub, k, true, sub.jout);
		*saved = sub.save;
		opalctl_dev_close(sub.dev);
		json_object_put(sub.jout);
	}
	return rc;
}

static const char *key_kind_name(enum opaltab_key k)
{
	return k == OPALTAB_KEY_CLEVIS ? "clevis" : k == OPALTAB_KEY_FILE ? "key file" : "passphrase";
}

/* An entry that failed before the unlock: why, in res. */
static int entry_failed(json_object *res, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int entry_failed(json_object *res, int code, const char *fmt, ...)
{
	char why[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	json_object_object_add(res, "error", json_object_new_string(why));
	return code;
}

/*
 * One entry: device, key, unlock; what happened goes into res ("name",
 * "ranges", "unlocked", and "device", "key", "authority", the S3 state
 * once known; "error" when it failed before the drive was asked).
 * Returns 0 or an exit code.
 */
static int unlock_entry(struct ctx *c, const struct opaltab_entry *e, const struct deadline *dl,
			json_object *res)
{
	char path[300], why[600] = "", prompt[400], ranges[40] = "", auth[16];
	json_object *jr = json_object_new_array();
	struct secret *key;
	enum opaltab_key used = e->key_kind;
	unsigned int user = e->user;
	bool have_key = false, saved = false;
	int rc = 0;

	json_object_object_add(res, "name", json_object_new_string(e->name));
	json_object_object_add(res, "ranges", jr);
	json_object_object_add(res, "unlocked", jbool(false));
	for (unsigned int i = 0, l = 0; i < e->nranges; i++) {
		json_object_array_add(jr, json_object_new_int((int)e->ranges[i]));
		if (l < sizeof(ranges))
			l += (unsigned int)snprintf(ranges + l, sizeof(ranges) - l, "%s%u",
						    i ? "," : "", e->ranges[i]);
	}
	key = secret_new();
	if (!key)
		return entry_failed(res, EXIT_KEYFILE, "no locked memory for the key");
	if (!wait_device(e, dl, path, sizeof(path))) {
		secret_free(key);
		return entry_failed(res, EXIT_DEVICE, "device %s%s not found within %u s",
				    e->dev_kind == OPALTAB_DEV_SERIAL ? "serial=" :
				    e->dev_kind == OPALTAB_DEV_WWN ? "wwn=" : "",
				    e->dev, e->timeout_s);
	}
	json_object_object_add(res, "device", json_object_new_string(path));
	if (e->key_kind == OPALTAB_KEY_CLEVIS) {
		/*
		 * Retry only getting the key (server down, TPM busy), with
		 * backoff. A key the drive refuses is never retried: every try
		 * counts against the authority's TryLimit.
		 */
		for (unsigned int attempt = 0; attempt <= e->retry; attempt++) {
			uint64_t left = remaining_ms(dl, (uint64_t)e->timeout_s * 1000);
			unsigned int backoff = 1u << (attempt < 4 ? attempt : 4);

			if (!left) {
				snprintf(why, sizeof(why), "deadline reached");
				break;
			}
			if (!clevis_decrypt(e->key_path, (unsigned int)((left + 999) / 1000), key, why,
					    sizeof(why))) {
				have_key = true;
				break;
			}
			fprintf(c->err, "opalctl: %s: attempt %u of %u: %s\n", e->name, attempt + 1,
				e->retry + 1, why);
			if (access(e->key_path, R_OK))
				break;	/* no JWE to read: waiting will not bring it */
			if (attempt < e->retry && remaining_ms(dl, backoff * 1000u) >= backoff * 1000u)
				sleep(backoff);
		}
	} else if (e->key_kind == OPALTAB_KEY_FILE) {
		int r = keyfile_mode_ok(c, e->key_path) ? -EPERM : secret_read(key, e->key_path, c->in);

		if (r || key->len > OPAL_PIN_MAX)
			snprintf(why, sizeof(why), "key file %s: %s", e->key_path,
				 r ? strerror(-r) : "longer than a PIN");
		else
			have_key = true;
	}
	if (!have_key && (e->key_kind == OPALTAB_KEY_PROMPT || e->fallback_prompt) && !c->no_prompt) {
		/* The passphrase is the recovery key unless the entry is a user's prompt. */
		if (e->key_kind != OPALTAB_KEY_PROMPT)
			user = 0;
		snprintf(prompt, sizeof(prompt), "Passphrase for %s (%s, range %s)", e->name, path,
			 ranges);
		if (!ask_passphrase(c, prompt, dl, key)) {
			have_key = true;
			used = OPALTAB_KEY_PROMPT;
		} else if (!why[0]) {
			snprintf(why, sizeof(why), "no passphrase given");
		}
	}
	if (!have_key) {
		secret_free(key);
		return entry_failed(res, EXIT_KEYFILE, "%s",
				    why[0] ? why : "no key source left (prompting is off)");
	}
	snprintf(auth, sizeof(auth), "%s%u", user ? "User" : "Admin", user ? user : 1);
	json_object_object_add(res, "key", json_object_new_string(key_kind_name(used)));
	json_object_object_add(res, "authority", json_object_new_string(auth));
	{
		struct opal_key k = key_of(key);

		rc = unlock_ranges(c, e, path, user, &k, &saved);
	}
	secret_free(key);
	if (rc)
		return rc;	/* the drive refused: why is on stderr */
	json_object_object_add(res, "unlocked", jbool(true));
	json_object_object_add(res, "saved_for_resume", jbool(saved));
	json_object_object_add(res, "save_requested", jbool(e->save));
	return 0;
}

/* One entry's line, from what unlock_entry put into res. */
static void unlock_entry_text(FILE *o, json_object *res)
{
	json_object *jr = res_get(res, "ranges");
	const char *name = res_str(res, "name");
	char ranges[40] = "";

	for (size_t i = 0, l = 0; i < res_count(jr) && l < sizeof(ranges); i++)
		l += (size_t)snprintf(ranges + l, sizeof(ranges) - l, "%s%d", i ? "," : "",
				      json_object_get_int(json_object_array_get_idx(jr, i)));
	if (res_bool(res, "unlocked"))
		fprintf(o, "%s: %s range %s unlocked (%s, %s%s)\n", name, res_str(res, "device"), ranges,
			res_str(res, "key"), res_str(res, "authority"),
			res_bool(res, "saved_for_resume") ? ", saved for S3 resume" :
			res_bool(res, "save_requested") ? ", not saved for S3: no kernel sed-opal" : "");
	else if (res_get(res, "error"))
		fprintf(o, "%s: failed: %s\n", name, res_str(res, "error"));
	else
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s; not retried)\n", name,
			res_str(res, "device"), ranges, res_str(res, "key"), res_str(res, "authority"));
}

int cmd_unlock_all(struct ctx *c)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	struct opaltab_entry *v = NULL;
	struct deadline dl = { 0 };
	size_t n = 0;
	unsigned int failed = 0;
	json_object *entries;
	char err[320];
	FILE *f;

	f = fopen(table, "r");
	if (!f)
		return fail(c, EXIT_USAGE, "unlock-all: cannot open %s: %s: give --table FILE", table,
			    strerror(errno));
	if (opaltab_parse(f, &v, &n, err, sizeof(err))) {
		fclose(f);
		return fail(c, EXIT_USAGE, "unlock-all: %s: %s: fix the table (see opaltab(5))", table, err);
	}
	fclose(f);
	for (unsigned int i = 0; i < c->nnames; i++) {
		bool known = false;

		for (size_t j = 0; j < n; j++)
			known |= !strcmp(v[j].name, c->names[i]);
		if (!known) {
			free(v);
			return fail(c, EXIT_USAGE, "unlock-all: no entry named '%s' in %s", c->names[i], table);
		}
	}
	if (c->deadline_s)
		dl.end = now_ms() + (uint64_t)c->deadline_s * 1000;
	json_object_object_add(c->jout, "table", json_object_new_string(table));
	entries = json_object_new_array();
	json_object_object_add(c->jout, "entries", entries);
	for (size_t i = 0; i < n; i++) {
		json_object *o;

		if (c->nnames ? !named(c, v[i].name) : v[i].noauto)
			continue;
		o = json_object_new_object();
		json_object_array_add(entries, o);
		if (unlock_entry(c, &v[i], &dl, o))
			failed++;
		/*
		 * Each entry's line as soon as it is done (at boot an entry can
		 * take minutes), by the renderer of one entry: unlock-all is
		 * text only (CMD_TEXT_ONLY), text_unlock_all adds the rest.
		 */
		unlock_entry_text(c->out, o);
		fflush(c->out);
	}
	free(v);
	return failed ? EXIT_INCOMPLETE : 0;
}

/* The entries' lines are printed as each is done; what is left to say. */
void text_unlock_all(struct ctx *c, json_object *res)
{
	if (!res_count(res_get(res, "entries")))
		fprintf(c->out, "%s: no entry to unlock\n", res_str(res, "table"));
}
