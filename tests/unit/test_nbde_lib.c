// SPDX-License-Identifier: GPL-2.0-only
/*
 * lib/nbde's policy against a fake drive and a fake clock: the try ledger
 * (over entries and runs; a drive with TryLimit 5 is never locked out by
 * the agent), keys nobody typed counted too, the accepted key offered
 * before anyone is asked again, empty answers, the recovery key read as
 * Crockford's base32, the prompt's words, the S3 rule and the deadlines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "nbde.h"

#define ADMIN_PIN "abcde-fghjk-mnpqr-stvwx-yz012"
#define USER_PIN "user-two-pin"

struct fake {
	uint64_t now;
	/* the drive */
	unsigned int try_limit;
	unsigned int tries[3];		/* refusals since the last success, by user */
	bool locked_out[3];
	unsigned int offered;		/* keys offered, right or wrong */
	unsigned int unlocks;		/* ranges unlocked */
	bool save_seen[3];		/* an unlock asked the kernel to keep the key */
	bool present;
	uint64_t appears_at;		/* the device shows up then */
	/* the person */
	const char *answers[32];
	size_t nanswers, asked;
	char prompts[32][512];
	/* key sources */
	const char *clevis_key;		/* NULL: clevis fails */
	unsigned int clevis_calls;
	const char *file_key;		/* NULL: the key file is missing */
	char log[8192];
};

static uint64_t f_now(void *arg)
{
	return ((struct fake *)arg)->now;
}

static void f_sleep(void *arg, uint64_t ms)
{
	((struct fake *)arg)->now += ms;
}

static void f_log(void *arg, const char *entry, const char *msg)
{
	struct fake *f = arg;
	size_t l = strlen(f->log);

	snprintf(f->log + l, sizeof(f->log) - l, "%s: %s\n", entry, msg);
}

static int f_find(void *arg, const struct opaltab_entry *e, char *path, size_t cap)
{
	struct fake *f = arg;

	if (!f->present && f->now < f->appears_at)
		return -ENOENT;
	snprintf(path, cap, "/dev/fake-%s", e->dev);
	return 0;
}

static int f_info(void *arg, const struct opaltab_entry *e, const char *path,
		  struct nbde_drive_info *out)
{
	(void)arg;
	(void)e;
	(void)path;
	memset(out, 0, sizeof(*out));
	snprintf(out->serial, sizeof(out->serial), "SN0042");
	return 0;
}

static int f_lock(void *arg, const struct nbde_unlock_rq *rq, const struct secret *key, bool unlock,
		  struct nbde_unlock_out *out)
{
	struct fake *f = arg;
	const char *want = rq->user ? USER_PIN : ADMIN_PIN;
	unsigned int u = rq->user > 2 ? 2 : rq->user;

	memset(out, 0, sizeof(*out));
	out->can_save = true;
	f->offered++;
	if (f->locked_out[u]) {
		out->status = NBDE_DRIVE_LOCKED_OUT;
		snprintf(out->why, sizeof(out->why), "locked out");
		return -1;
	}
	if (key->len != strlen(want) || memcmp(key->data, want, key->len)) {
		out->status = NBDE_DRIVE_REFUSED;
		snprintf(out->why, sizeof(out->why), "authentication failed");
		if (++f->tries[u] >= f->try_limit)
			f->locked_out[u] = true;
		return -1;
	}
	f->tries[u] = 0;
	f->unlocks += unlock ? rq->entry->nranges : 0;
	f->save_seen[u] |= rq->save;
	out->saved = rq->save;
	out->status = NBDE_DRIVE_OK;
	return 0;
}

static int put(struct secret *out, const char *s)
{
	out->len = strlen(s);
	memcpy(out->data, s, out->len);
	return 0;
}

static int f_clevis(void *arg, const char *jwe, unsigned int timeout_s, struct secret *out,
		    char *why, size_t whylen)
{
	struct fake *f = arg;

	(void)jwe;
	f->clevis_calls++;
	if (!f->clevis_key) {
		f->now += (uint64_t)timeout_s * 1000;
		snprintf(why, whylen, "Error communicating with server");
		return -1;
	}
	return put(out, f->clevis_key);
}

static int f_key_file(void *arg, const char *path, struct secret *out, char *why, size_t whylen)
{
	struct fake *f = arg;

	if (!f->file_key) {
		snprintf(why, whylen, "key file %s: No such file or directory", path);
		return -ENOENT;
	}
	return put(out, f->file_key);
}

/* Scripted answers; "" is Enter alone, NULL (past the end) a prompt left unanswered. */
static int f_ask(void *arg, const char *prompt, uint64_t end, struct secret *out, int wake_fd)
{
	struct fake *f = arg;
	const char *a;

	(void)wake_fd;
	if (f->asked < 32)
		snprintf(f->prompts[f->asked], sizeof(f->prompts[0]), "%s", prompt);
	a = f->asked < f->nanswers ? f->answers[f->asked] : NULL;
	f->asked++;
	if (!a) {
		f->now = end;
		return -ETIMEDOUT;
	}
	f->now += 1000;
	put(out, a);
	return out->len ? 0 : -ENODATA;
}

static void fake_ops(struct fake *f, struct nbde_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->arg = f;
	ops->now_ms = f_now;
	ops->sleep_ms = f_sleep;
	ops->log = f_log;
	ops->find_device = f_find;
	ops->drive_info = f_info;
	ops->lock_ranges = f_lock;
	ops->clevis = f_clevis;
	ops->key_file = f_key_file;
	ops->ask = f_ask;
}

static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->now = 1000000;
	f->try_limit = 5;
	f->present = true;
}

static void answers(struct fake *f, ...)
{
	va_list ap;
	const char *a;

	f->nanswers = 0;
	f->asked = 0;
	va_start(ap, f);
	while ((a = va_arg(ap, const char *)) && f->nanswers < 32)
		f->answers[f->nanswers++] = !strcmp(a, "<enter>") ? "" : a;
	va_end(ap);
}

/* Entries as the table would give them. */
static struct opaltab_entry entry(const char *name, unsigned int range, enum opaltab_key k,
				  unsigned int user)
{
	struct opaltab_entry e;

	memset(&e, 0, sizeof(e));
	snprintf(e.name, sizeof(e.name), "%s", name);
	snprintf(e.dev, sizeof(e.dev), "nvme0n1");
	e.ranges[0] = range;
	e.nranges = 1;
	e.key_kind = k;
	snprintf(e.key_path, sizeof(e.key_path), "/etc/fdekit/%s.key", name);
	e.user = user;
	e.save = true;
	e.timeout_s = 30;
	e.retry = 3;
	e.prompt_tries = 3;
	e.fallback_prompt = true;
	return e;
}

static int run(struct fake *f, struct opaltab_entry *v, size_t n, const char *ledger,
	       bool no_prompt, struct nbde_result *res)
{
	struct nbde_request rq = { 0 };
	struct nbde_ops ops;

	fake_ops(f, &ops);
	rq.entries = v;
	rq.nentries = n;
	rq.ledger_dir = ledger;
	rq.no_prompt = no_prompt;
	rq.prompt_timeout_s = 120;
	return nbde_run(&rq, &ops, res);
}

static char ledger_dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(ledger_dir, sizeof(ledger_dir), "/tmp/test_nbde_lib.XXXXXX");
	assert_non_null(mkdtemp(ledger_dir));
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ledger_dir);
	return system(cmd);
}

/* 1: Enter alone asks again and spends nothing. */
static void test_empty_answer(void **state)
{
	struct opaltab_entry v[1] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	answers(&f, "<enter>", "<enter>", ADMIN_PIN, NULL);
	assert_int_equal(run(&f, v, 1, NULL, false, &res), 0);
	assert_int_equal(res.entries[0].status, NBDE_UNLOCKED);
	assert_int_equal(f.asked, 3);
	assert_int_equal(f.offered, 1);		/* the empty answers reached no drive */
	assert_int_equal(res.entries[0].refused, 0);
	assert_non_null(strstr(f.log, "empty answer: nothing was tried"));
	nbde_result_free(&res);
}

/*
 * 2: two prompt entries on one drive, every answer wrong, three runs of
 * the agent in one boot (dracut's stages): never more than prompt-tries
 * refusals in all, so TryLimit 5 is never reached and a try is left.
 */
static void test_ledger_entries_and_runs(void **state)
{
	struct opaltab_entry v[2] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0),
				      entry("home", 2, OPALTAB_KEY_PROMPT, 0) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	for (int runs = 0; runs < 3; runs++) {
		answers(&f, "wrong1", "wrong2", "wrong3", "wrong4", "wrong5", "wrong6", NULL);
		assert_int_equal(run(&f, v, 2, ledger_dir, false, &res), 1);
		assert_int_equal(res.failed, 2);
		nbde_result_free(&res);
	}
	assert_int_equal(f.tries[0], 3);
	assert_false(f.locked_out[0]);
	assert_int_equal(f.offered, 3);
	assert_non_null(strstr(f.log, "not asking again"));
	/* A person keeps the drive's last tries: the right key still works. */
	assert_int_equal(f.try_limit - f.tries[0], 2);
}

/* Without a ledger directory the count still spans the entries of one run. */
static void test_ledger_in_memory(void **state)
{
	struct opaltab_entry v[2] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0),
				      entry("home", 2, OPALTAB_KEY_PROMPT, 0) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	answers(&f, "a", "b", "c", "d", "e", "f", NULL);
	assert_int_equal(run(&f, v, 2, NULL, false, &res), 1);
	assert_int_equal(f.tries[0], 3);
	assert_int_equal(res.entries[1].status, NBDE_TRIES_SPENT);
	nbde_result_free(&res);
}

/* 3: the recovery key the drive took for range 1 opens range 2 without asking. */
static void test_accepted_key_reused(void **state)
{
	struct opaltab_entry v[2] = { entry("root", 1, OPALTAB_KEY_CLEVIS, 2),
				      entry("home", 2, OPALTAB_KEY_CLEVIS, 2) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	answers(&f, ADMIN_PIN, NULL);
	assert_int_equal(run(&f, v, 2, ledger_dir, false, &res), 0);
	assert_int_equal(f.asked, 1);
	assert_int_equal(f.unlocks, 2);
	assert_int_equal(res.entries[1].key, NBDE_KEY_REUSED);
	nbde_result_free(&res);
}

/* 15: unattended keys count too, and stop while a person still has a try. */
static void test_unattended_counted(void **state)
{
	struct opaltab_entry v[2] = { entry("a", 1, OPALTAB_KEY_FILE, 0),
				      entry("b", 2, OPALTAB_KEY_FILE, 0) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	f.try_limit = 4;
	f.file_key = "stale-key";
	for (int runs = 0; runs < 3; runs++) {
		assert_int_equal(run(&f, v, 2, ledger_dir, true, &res), 1);
		nbde_result_free(&res);
	}
	/* prompt-tries 3: unattended keys stop at 2, one typed try left of the budget. */
	assert_int_equal(f.tries[0], 2);
	assert_false(f.locked_out[0]);
	/* Then the person: one typo, then the right key; never locked out. */
	answers(&f, "typo", ADMIN_PIN, NULL);
	assert_int_equal(run(&f, v, 1, ledger_dir, false, &res), 1);
	assert_int_equal(f.tries[0], 3);
	assert_int_equal(res.entries[0].status, NBDE_REFUSED);
	assert_int_equal(f.asked, 1);
	assert_false(f.locked_out[0]);
	nbde_result_free(&res);
}

/* 6: the recovery key typed in capitals, without dashes, with i/l/o for 1/0. */
static void test_recovery_reading(void **state)
{
	struct opaltab_entry v[1] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	answers(&f, "ABCDEFGHJKMNPQRSTVWXYZOI2", NULL);
	assert_int_equal(run(&f, v, 1, NULL, false, &res), 0);
	assert_int_equal(f.offered, 1);
	nbde_result_free(&res);
	fake_init(&f);
	answers(&f, "abcde fghjk mnpqr stvwx yzOl2", NULL);
	assert_int_equal(run(&f, v, 1, NULL, false, &res), 0);
	nbde_result_free(&res);
}

static int canon(const char *in, char *out)
{
	struct secret *a = secret_new(), *b = secret_new();
	int rc;

	assert_non_null(a);
	assert_non_null(b);
	put(a, in);
	rc = nbde_recovery_canonical(a, b);
	if (rc) {
		memcpy(out, b->data, b->len);
		out[b->len] = 0;
	}
	secret_free(a);
	secret_free(b);
	return rc;
}

static void test_recovery_shapes(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(canon("abcde-fghjk-mnpqr-stvwx-yz012", out), 1);
	assert_string_equal(out, "abcde-fghjk-mnpqr-stvwx-yz012");
	assert_int_equal(canon("ABCDE-FGHJK-MNPQR-STVWX-YZ012", out), 1);
	assert_string_equal(out, "abcde-fghjk-mnpqr-stvwx-yz012");
	assert_int_equal(canon("abcdefghjkmnpqrstvwxyz012", out), 1);
	assert_string_equal(out, "abcde-fghjk-mnpqr-stvwx-yz012");
	assert_int_equal(canon("iIlLo-OoOoO-00000-11111-22222", out), 1);
	assert_string_equal(out, "11110-00000-00000-11111-22222");
	/* Not its shape: tried exactly as typed. */
	assert_int_equal(canon("correct horse battery staple", out), 0);
	assert_int_equal(canon("abcde-fghjk-mnpqr-stvwx-yz01", out), 0);	/* 24 symbols */
	assert_int_equal(canon("abcde-fghjk-mnpqr-stvwx-yz0123", out), 0);
	assert_int_equal(canon("abcdefghjkmnpqrstvwxyz01u", out), 0);	/* u is no symbol */
	assert_int_equal(canon("abc-defghjk-mnpqr-stvwx-yz012", out), 0);	/* a dash inside a group */
	assert_int_equal(canon("abcde-fghjkmnpqr-stvwx-yz012", out), 0);	/* groups, then none */
	assert_int_equal(canon("", out), 0);
}

/* 12: the prompt says what it wants, for which drive and range, and the tries left. */
static void test_prompt_words(void **state)
{
	struct opaltab_entry v[1] = { entry("root", 1, OPALTAB_KEY_CLEVIS, 2) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	answers(&f, "typo", ADMIN_PIN, NULL);
	assert_int_equal(run(&f, v, 1, NULL, false, &res), 0);
	assert_string_equal(f.prompts[0],
			    "Recovery key (Admin1) for drive SN0042, range 1 (root; 3 tries left this boot)");
	assert_string_equal(f.prompts[1],
			    "Recovery key (Admin1) for drive SN0042, range 1 (root; 2 tries left this boot)");
	assert_int_equal(f.clevis_calls, 1);	/* one attempt before the prompt */
	nbde_result_free(&res);
}

/* 16: Admin1's key is never saved for S3; a user's is. */
static void test_no_admin_save(void **state)
{
	struct opaltab_entry v[2] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0),
				      entry("data", 2, OPALTAB_KEY_CLEVIS, 2) };
	struct nbde_result res;
	struct fake f;

	(void)state;
	fake_init(&f);
	f.clevis_key = USER_PIN;
	answers(&f, ADMIN_PIN, NULL);
	assert_int_equal(run(&f, v, 2, NULL, false, &res), 0);
	assert_false(f.save_seen[0]);
	assert_true(res.entries[0].save_withheld);
	assert_false(res.entries[0].saved);
	assert_true(f.save_seen[2]);
	assert_true(res.entries[1].saved);
	nbde_result_free(&res);
}

/* Deadlines: a device that never comes; a prompt nobody answers. */
static void test_deadlines(void **state)
{
	struct opaltab_entry v[1] = { entry("root", 1, OPALTAB_KEY_PROMPT, 0) };
	struct nbde_request rq = { 0 };
	struct nbde_result res;
	struct nbde_ops ops;
	struct fake f;
	uint64_t t0;

	(void)state;
	fake_init(&f);
	f.present = false;
	f.appears_at = UINT64_MAX;
	v[0].timeout_s = 5;
	t0 = f.now;
	assert_int_equal(run(&f, v, 1, NULL, false, &res), 1);
	assert_int_equal(res.entries[0].status, NBDE_NO_DEVICE);
	assert_true(f.now - t0 >= 5000 && f.now - t0 <= 5400);
	nbde_result_free(&res);

	/* Nobody answers: the prompt ends at the bound plus the prompt budget. */
	fake_init(&f);
	answers(&f, NULL);
	fake_ops(&f, &ops);
	rq.entries = v;
	rq.nentries = 1;
	rq.have_deadline = true;
	rq.deadline_s = 10;
	rq.prompt_timeout_s = 60;
	t0 = f.now;
	assert_int_equal(nbde_run(&rq, &ops, &res), 1);
	assert_int_equal(res.entries[0].status, NBDE_NO_KEY);
	assert_string_equal(res.entries[0].error, "no passphrase given in time");
	assert_int_equal(f.now - t0, 70000);
	assert_int_equal(f.offered, 0);
	nbde_result_free(&res);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_empty_answer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_entries_and_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ledger_in_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_accepted_key_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unattended_counted, setup, teardown),
		cmocka_unit_test(test_recovery_reading),
		cmocka_unit_test(test_recovery_shapes),
		cmocka_unit_test(test_prompt_words),
		cmocka_unit_test(test_no_admin_save),
		cmocka_unit_test(test_deadlines),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
