// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedopal-ioctl: issue ONE of the kernel's sed-opal ioctls on a block device,
 * exactly as the arguments say, and report what the kernel returned. A test
 * client for the guest tests: it has no policy of its own (no hashing, no
 * retries, no checks the kernel does not do), so a test sees the kernel's
 * behaviour and the bytes the kernel's sed-opal sends.
 *
 *   sedopal-ioctl DEV COMMAND [OPTIONS]
 *
 * Keys: --key-file F is the key of the authority the kernel authenticates
 * as (Admin1 unless --who says otherwise); --new-key-file F is the new PIN
 * for set-pw. The file's bytes are the PIN as they are (at most 255, the
 * size of opal_key.key_len); "-" reads it from standard input (for one of
 * the two only). Keys never appear on the command line or in the output.
 *
 * Exit status: 0 success; 1 usage; 2 device or key file unusable; 3 the
 * ioctl failed with an errno (or is missing from this build's headers);
 * 4 the ioctl returned a positive value, the TCG method status of the
 * failing step (1 Not Authorized, 0x12 Authority Locked Out, ...).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/sed-opal.h>

#define EXIT_USAGE 1
#define EXIT_DEVICE 2
#define EXIT_ERRNO 3
#define EXIT_TCG 4

/* The largest PIN struct opal_key carries (key_len is a __u8). */
#define KEY_MAX 255

struct opts {
	const char *dev, *cmd;
	const char *key_file, *new_key_file;
	int who;		/* OPAL_ADMIN1 or N for UserN; -1 when not given */
	int user;		/* --user N; -1 when not given */
	int range;		/* --range R; -1 when not given */
	int state;		/* OPAL_RO, OPAL_RW, OPAL_LK; 0 when not given */
	bool save, keep_grk;
};

/* Key buffers live in one locked page, wiped at exit. */
struct keys {
	uint8_t key[KEY_MAX + 1], new_key[KEY_MAX + 1];
	size_t key_len, new_key_len;
};

static struct keys *keys;

static void wipe_keys(void)
{
	if (keys) {
		explicit_bzero(keys, sizeof(*keys));
		munlock(keys, sizeof(*keys));
	}
}

static void usage(FILE *o)
{
	fprintf(o,
		"Usage: sedopal-ioctl DEV COMMAND [OPTIONS]\n"
		"Issue one sed-opal ioctl on the block device DEV.\n"
		"\n"
		"Commands:\n"
		"  get-status                             IOC_OPAL_GET_STATUS\n"
		"  get-geometry                           IOC_OPAL_GET_GEOMETRY\n"
		"  get-lr-status --who W --range R        IOC_OPAL_GET_LR_STATUS (key of W)\n"
		"  activate-user --user N                 IOC_OPAL_ACTIVATE_USR (Admin1 key)\n"
		"  set-pw --user N [--who W]              IOC_OPAL_SET_PW: UserN's PIN becomes\n"
		"                                         --new-key-file, in a session of W\n"
		"                                         (default admin1) with --key-file\n"
		"  add-user-to-lr --user N --range R --state ro|rw\n"
		"                                         IOC_OPAL_ADD_USR_TO_LR (Admin1 key)\n"
		"  lock-unlock --who W --range R --state lk|ro|rw [--save]\n"
		"                                         IOC_OPAL_LOCK_UNLOCK (key of W); with\n"
		"                                         --save, then IOC_OPAL_SAVE of the same\n"
		"  save --who W --range R --state lk|ro|rw\n"
		"                                         IOC_OPAL_SAVE only (no drive access)\n"
		"  revert-lsp [--keep-global-range-key]   IOC_OPAL_REVERT_LSP (Admin1 key);\n"
		"                                         keep: options = OPAL_PRESERVE\n"
		"\n"
		"Options:\n"
		"  --key-file F       key of the authenticating authority (\"-\": stdin)\n"
		"  --new-key-file F   set-pw: the new PIN (\"-\": stdin)\n"
		"  --who W            admin1 or userN (N = 1..9)\n"
		"  --user N           the user the command acts on (1..9)\n"
		"  --range R          locking range (0 = global)\n"
		"  --state S          lk, ro or rw (enum opal_lock_state)\n"
		"\n"
		"Exit: 0 ok, 1 usage, 2 device or key file, 3 errno (or ioctl missing\n"
		"from this build), 4 TCG method status returned by the kernel.\n");
}

static int num_arg(const char *s, int lo, int hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "sedopal-ioctl: bad %s '%s' (%d..%d)\n", what, s, lo, hi);
		exit(EXIT_USAGE);
	}
	return (int)v;
}

static int who_arg(const char *s)
{
	if (!strcmp(s, "admin1"))
		return OPAL_ADMIN1;
	if (!strncmp(s, "user", 4))
		return num_arg(s + 4, OPAL_USER1, OPAL_USER9, "user in --who");
	fprintf(stderr, "sedopal-ioctl: --who must be admin1 or user1..user9, not '%s'\n", s);
	exit(EXIT_USAGE);
}

static int state_arg(const char *s)
{
	if (!strcmp(s, "lk"))
		return OPAL_LK;
	if (!strcmp(s, "ro"))
		return OPAL_RO;
	if (!strcmp(s, "rw"))
		return OPAL_RW;
	fprintf(stderr, "sedopal-ioctl: --state must be lk, ro or rw, not '%s'\n", s);
	exit(EXIT_USAGE);
}

static __attribute__((unused)) const char *state_name(unsigned s)
{
	switch (s) {
	case OPAL_LK: return "lk";
	case OPAL_RO: return "ro";
	case OPAL_RW: return "rw";
	default: return "unknown";
	}
}

static void parse(int argc, char **argv, struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->who = o->user = o->range = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool has_val = i + 1 < argc;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "--save")) {
			o->save = true;
		} else if (!strcmp(a, "--keep-global-range-key")) {
			o->keep_grk = true;
		} else if (a[0] == '-' && a[1] == '-') {
			if (!has_val) {
				fprintf(stderr, "sedopal-ioctl: %s needs a value\n", a);
				exit(EXIT_USAGE);
			}
			const char *v = argv[++i];

			if (!strcmp(a, "--key-file"))
				o->key_file = v;
			else if (!strcmp(a, "--new-key-file"))
				o->new_key_file = v;
			else if (!strcmp(a, "--who"))
				o->who = who_arg(v);
			else if (!strcmp(a, "--user"))
				o->user = num_arg(v, OPAL_USER1, OPAL_USER9, "--user");
			else if (!strcmp(a, "--range"))
				o->range = num_arg(v, 0, OPAL_MAX_LRS - 1, "--range");
			else if (!strcmp(a, "--state"))
				o->state = state_arg(v);
			else {
				fprintf(stderr, "sedopal-ioctl: unknown option %s\n", a);
				exit(EXIT_USAGE);
			}
		} else if (!o->dev) {
			o->dev = a;
		} else if (!o->cmd) {
			o->cmd = a;
		} else {
			fprintf(stderr, "sedopal-ioctl: unexpected argument '%s'\n", a);
			exit(EXIT_USAGE);
		}
	}
	if (!o->dev || !o->cmd) {
		usage(stderr);
		exit(EXIT_USAGE);
	}
	if (o->key_file && o->new_key_file && !strcmp(o->key_file, "-") &&
	    !strcmp(o->new_key_file, "-")) {
		fprintf(stderr, "sedopal-ioctl: only one key may come from stdin\n");
		exit(EXIT_USAGE);
	}
}

static void need(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "sedopal-ioctl: this command needs %s\n", what);
		exit(EXIT_USAGE);
	}
}

/* Read the whole key file (or stdin) into buf; at most KEY_MAX bytes. */
static void read_key(const char *path, uint8_t *buf, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	size_t n = 0;

	if (fd < 0) {
		fprintf(stderr, "sedopal-ioctl: cannot open key file %s: %s\n", path, strerror(errno));
		exit(EXIT_DEVICE);
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, KEY_MAX + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fprintf(stderr, "sedopal-ioctl: reading key file %s: %s\n", path,
				strerror(errno));
			exit(EXIT_DEVICE);
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > KEY_MAX) {
			fprintf(stderr, "sedopal-ioctl: key file %s: more than %d bytes\n", path,
				KEY_MAX);
			exit(EXIT_DEVICE);
		}
	}
	if (fd != STDIN_FILENO)
		close(fd);
	*len = n;
}

static void set_key(struct opal_key *k, const uint8_t *key, size_t len, int lr)
{
	memset(k, 0, sizeof(*k));
	k->lr = (__u8)(lr < 0 ? 0 : lr);
	k->key_len = (__u8)len;
	/* key_type (6.6+ headers) stays 0: OPAL_INCLUDED, the key is key[]. */
	memcpy(k->key, key, len);
}

static const char *tcg_status_name(int st)
{
	static const char *const names[] = {
		"SUCCESS", "NOT_AUTHORIZED", "OBSOLETE", "SP_BUSY", "SP_FAILED",
		"SP_DISABLED", "SP_FROZEN", "NO_SESSIONS_AVAILABLE", "UNIQUENESS_CONFLICT",
		"INSUFFICIENT_SPACE", "INSUFFICIENT_ROWS", "INVALID_FUNCTION",
		"INVALID_PARAMETER", "INVALID_REFERENCE", "OBSOLETE", "TPER_MALFUNCTION",
		"TRANSACTION_FAILURE", "RESPONSE_OVERFLOW", "AUTHORITY_LOCKED_OUT",
	};

	if (st >= 0 && st < (int)(sizeof(names) / sizeof(names[0])))
		return names[st];
	if (st == 0x3f)
		return "FAIL";
	if (st == 0x89)
		return "no method status in the reply (kernel DTAERROR_NO_METHOD_STATUS)";
	return "unknown";
}

/* The ioctl's result as an exit status, reported on stderr when not 0. */
static int report(const char *name, int ret)
{
	if (ret == 0)
		return 0;
	if (ret < 0) {
		int e = errno;

		fprintf(stderr, "sedopal-ioctl: %s: errno %d (%s)\n", name, e, strerror(e));
		return EXIT_ERRNO;
	}
	fprintf(stderr, "sedopal-ioctl: %s: TCG status %d (0x%02x %s)\n", name, ret, ret,
		tcg_status_name(ret));
	return EXIT_TCG;
}

static __attribute__((unused)) int missing(const char *name)
{
	fprintf(stderr, "sedopal-ioctl: %s: not in this build's linux/sed-opal.h\n", name);
	return EXIT_ERRNO;
}

#define DO(fd, req, arg) report(#req, ioctl(fd, req, arg))

static int cmd_get_status(int fd)
{
#ifdef IOC_OPAL_GET_STATUS
	struct opal_status st;
	int rc;

	memset(&st, 0, sizeof(st));
	rc = DO(fd, IOC_OPAL_GET_STATUS, &st);
	if (rc)
		return rc;
	printf("flags=0x%x\n", st.flags);
	printf("supported=%d\n", !!(st.flags & OPAL_FL_SUPPORTED));
	printf("locking_supported=%d\n", !!(st.flags & OPAL_FL_LOCKING_SUPPORTED));
	printf("locking_enabled=%d\n", !!(st.flags & OPAL_FL_LOCKING_ENABLED));
	printf("locked=%d\n", !!(st.flags & OPAL_FL_LOCKED));
	printf("mbr_enabled=%d\n", !!(st.flags & OPAL_FL_MBR_ENABLED));
	printf("mbr_done=%d\n", !!(st.flags & OPAL_FL_MBR_DONE));
#ifdef OPAL_FL_SUM_SUPPORTED
	printf("sum_supported=%d\n", !!(st.flags & OPAL_FL_SUM_SUPPORTED));
#endif
	return 0;
#else
	(void)fd;
	return missing("IOC_OPAL_GET_STATUS");
#endif
}

static int cmd_get_geometry(int fd)
{
#ifdef IOC_OPAL_GET_GEOMETRY
	struct opal_geometry g;
	int rc;

	memset(&g, 0, sizeof(g));
	rc = DO(fd, IOC_OPAL_GET_GEOMETRY, &g);
	if (rc)
		return rc;
	printf("align=%u\n", g.align);
	printf("logical_block_size=%u\n", g.logical_block_size);
	printf("alignment_granularity=%" PRIu64 "\n", (uint64_t)g.alignment_granularity);
	printf("lowest_aligned_lba=%" PRIu64 "\n", (uint64_t)g.lowest_aligned_lba);
	return 0;
#else
	(void)fd;
	return missing("IOC_OPAL_GET_GEOMETRY");
#endif
}

static int cmd_get_lr_status(int fd, const struct opts *o)
{
#ifdef IOC_OPAL_GET_LR_STATUS
	struct opal_lr_status s;
	int rc;

	need(o->who >= 0 && o->range >= 0 && o->key_file, "--who, --range and --key-file");
	memset(&s, 0, sizeof(s));
	s.session.who = (__u32)o->who;
	set_key(&s.session.opal_key, keys->key, keys->key_len, o->range);
	rc = DO(fd, IOC_OPAL_GET_LR_STATUS, &s);
	explicit_bzero(&s.session, sizeof(s.session));
	if (rc)
		return rc;
	printf("range_start=%" PRIu64 "\n", (uint64_t)s.range_start);
	printf("range_length=%" PRIu64 "\n", (uint64_t)s.range_length);
	printf("RLE=%u\n", s.RLE);
	printf("WLE=%u\n", s.WLE);
	printf("l_state=%s\n", state_name(s.l_state));
	return 0;
#else
	(void)fd;
	(void)o;
	return missing("IOC_OPAL_GET_LR_STATUS");
#endif
}

static int cmd_activate_user(int fd, const struct opts *o)
{
	struct opal_session_info s;
	int rc;

	need(o->user > 0 && o->key_file, "--user and --key-file (Admin1)");
	memset(&s, 0, sizeof(s));
	s.who = (__u32)o->user;
	set_key(&s.opal_key, keys->key, keys->key_len, 0);
	rc = DO(fd, IOC_OPAL_ACTIVATE_USR, &s);
	explicit_bzero(&s, sizeof(s));
	return rc;
}

static int cmd_set_pw(int fd, const struct opts *o)
{
	struct opal_new_pw p;
	int rc;

	need(o->user > 0 && o->key_file && o->new_key_file, "--user, --key-file and --new-key-file");
	memset(&p, 0, sizeof(p));
	p.session.who = (__u32)(o->who < 0 ? OPAL_ADMIN1 : o->who);
	set_key(&p.session.opal_key, keys->key, keys->key_len, 0);
	p.new_user_pw.who = (__u32)o->user;
	set_key(&p.new_user_pw.opal_key, keys->new_key, keys->new_key_len, 0);
	rc = DO(fd, IOC_OPAL_SET_PW, &p);
	explicit_bzero(&p, sizeof(p));
	return rc;
}

static void lock_unlock_arg(struct opal_lock_unlock *lk, int who, const struct opts *o)
{
	memset(lk, 0, sizeof(*lk));
	lk->session.who = (__u32)who;
	lk->l_state = (__u32)o->state;
	set_key(&lk->session.opal_key, keys->key, keys->key_len, o->range);
}

static int cmd_add_user_to_lr(int fd, const struct opts *o)
{
	struct opal_lock_unlock lk;
	int rc;

	need(o->user > 0 && o->range >= 0 && o->state && o->key_file,
	     "--user, --range, --state and --key-file (Admin1)");
	lock_unlock_arg(&lk, o->user, o);
	rc = DO(fd, IOC_OPAL_ADD_USR_TO_LR, &lk);
	explicit_bzero(&lk, sizeof(lk));
	return rc;
}

static int cmd_lock_unlock(int fd, const struct opts *o, bool lock_unlock, bool save)
{
	struct opal_lock_unlock lk;
	int rc = 0;

	need(o->who >= 0 && o->range >= 0 && o->state && o->key_file,
	     "--who, --range, --state and --key-file");
	lock_unlock_arg(&lk, o->who, o);
	if (lock_unlock)
		rc = DO(fd, IOC_OPAL_LOCK_UNLOCK, &lk);
	if (!rc && save)
		rc = DO(fd, IOC_OPAL_SAVE, &lk);
	explicit_bzero(&lk, sizeof(lk));
	return rc;
}

static int cmd_revert_lsp(int fd, const struct opts *o)
{
#ifdef IOC_OPAL_REVERT_LSP
	struct opal_revert_lsp r;
	int rc;

	need(o->key_file != NULL, "--key-file (Admin1)");
	memset(&r, 0, sizeof(r));
	set_key(&r.key, keys->key, keys->key_len, 0);
	r.options = o->keep_grk ? OPAL_PRESERVE : 0;
	rc = DO(fd, IOC_OPAL_REVERT_LSP, &r);
	explicit_bzero(&r, sizeof(r));
	return rc;
#else
	(void)fd;
	(void)o;
	return missing("IOC_OPAL_REVERT_LSP");
#endif
}

int main(int argc, char **argv)
{
	struct opts o;
	int fd, rc;

	parse(argc, argv, &o);
	keys = mmap(NULL, sizeof(*keys), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (keys == MAP_FAILED) {
		perror("sedopal-ioctl: mmap");
		return EXIT_DEVICE;
	}
	if (mlock(keys, sizeof(*keys)))
		fprintf(stderr, "sedopal-ioctl: warning: cannot lock key memory: %s\n",
			strerror(errno));
	atexit(wipe_keys);
	if (o.key_file)
		read_key(o.key_file, keys->key, &keys->key_len);
	if (o.new_key_file)
		read_key(o.new_key_file, keys->new_key, &keys->new_key_len);

	fd = open(o.dev, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "sedopal-ioctl: cannot open %s: %s\n", o.dev, strerror(errno));
		return EXIT_DEVICE;
	}
	if (!strcmp(o.cmd, "get-status"))
		rc = cmd_get_status(fd);
	else if (!strcmp(o.cmd, "get-geometry"))
		rc = cmd_get_geometry(fd);
	else if (!strcmp(o.cmd, "get-lr-status"))
		rc = cmd_get_lr_status(fd, &o);
	else if (!strcmp(o.cmd, "activate-user"))
		rc = cmd_activate_user(fd, &o);
	else if (!strcmp(o.cmd, "set-pw"))
		rc = cmd_set_pw(fd, &o);
	else if (!strcmp(o.cmd, "add-user-to-lr"))
		rc = cmd_add_user_to_lr(fd, &o);
	else if (!strcmp(o.cmd, "lock-unlock"))
		rc = cmd_lock_unlock(fd, &o, true, o.save);
	else if (!strcmp(o.cmd, "save"))
		rc = cmd_lock_unlock(fd, &o, false, true);
	else if (!strcmp(o.cmd, "revert-lsp"))
		rc = cmd_revert_lsp(fd, &o);
	else {
		fprintf(stderr, "sedopal-ioctl: unknown command '%s'\n", o.cmd);
		rc = EXIT_USAGE;
	}
	close(fd);
	return rc;
}
