// SPDX-License-Identifier: GPL-2.0-only
/*
 * opalctl commands end to end against an in-process sedsim drive: exit
 * codes, human and JSON output, and the failure paths (wrong key with tries
 * left, lockout, locked-range I/O, refusals without --yes-destroy-data).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Before cmocka.h, whose fail() macro would rename opalctl's fail(). */
#include "opalctl-cmd.h"
#include <cmocka.h>
#include <json-c/json.h>

#include "nbde-clevis.h"
#include "opal.h"
#include "opalctl.h"
#include "sedsim.h"

struct fx {
	char dir[64];
	char drive[96], key[96], key2[96], bad[96], psid[96], pw[96];
	char out[16384], err[4096];
};

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
}

/* Run opalctl with a NULL-terminated argument list; capture output. */
static int run(struct fx *f, const char *stdin_text, ...)
{
	char *argv[32];
	int argc = 0, rc;
	va_list ap;
	FILE *in, *out, *err;
	size_t n;

	argv[argc++] = (char *)"opalctl";
	va_start(ap, stdin_text);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	in = tmpfile();
	out = tmpfile();
	err = tmpfile();
	if (stdin_text && stdin_text[0] == '@') {
		/* "@path": feed that file's bytes (binary keys) as stdin. */
		FILE *src = fopen(stdin_text + 1, "rb");
		char buf[4096];

		assert_non_null(src);
		n = fread(buf, 1, sizeof(buf), src);
		fclose(src);
		assert_int_equal(fwrite(buf, 1, n, in), n);
	} else if (stdin_text) {
		fputs(stdin_text, in);
	}
	rewind(in);
	rc = opalctl_run(argc, argv, in, out, err);
	rewind(out);
	rewind(err);
	n = fread(f->out, 1, sizeof(f->out) - 1, out);
	f->out[n] = 0;
	n = fread(f->err, 1, sizeof(f->err) - 1, err);
	f->err[n] = 0;
	fclose(in);
	fclose(out);
	fclose(err);
	return rc;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct sedsim_config cfg = { .blocks = 2048, .serial = "CLISERIAL", .try_limit = 3 };

	strcpy(f->dir, "/tmp/test_opalctl.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->drive, sizeof(f->drive), "%s/drive", f->dir);
	snprintf(f->key, sizeof(f->key), "%s/key", f->dir);
	snprintf(f->key2, sizeof(f->key2), "%s/key2", f->dir);
	snprintf(f->bad, sizeof(f->bad), "%s/bad", f->dir);
	snprintf(f->psid, sizeof(f->psid), "%s/psid", f->dir);
	snprintf(f->pw, sizeof(f->pw), "%s/pw", f->dir);
	if (mkdir(f->drive, 0700) || sedsim_create(f->drive, &cfg))
		return -1;
	write_file(f->bad, "not the key", 11);
	write_file(f->pw, "hunter2\n", 8);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static enum sedsim_io_status read_block(struct fx *f, uint64_t lba, void *buf)
{
	struct sedsim *sim;
	enum sedsim_io_status st;

	assert_int_equal(sedsim_open(f->drive, false, &sim), 0);
	st = sedsim_read(sim, lba, 1, buf);
	sedsim_close(sim);
	return st;
}

static void write_block(struct fx *f, uint64_t lba, const void *buf)
{
	struct sedsim *sim;

	assert_int_equal(sedsim_open(f->drive, false, &sim), 0);
	assert_int_equal(sedsim_write(sim, lba, 1, buf), SEDSIM_IO_OK);
	sedsim_close(sim);
}

static void power_cycle(struct fx *f)
{
	struct sedsim *sim;

	assert_int_equal(sedsim_open(f->drive, true, &sim), 0);
	sedsim_close(sim);
}

static json_object *json_out(struct fx *f)
{
	json_object *j = json_tokener_parse(f->out);

	assert_non_null(j);
	return j;
}

static void setup_drive(struct fx *f)
{
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "--keyfile", f->key, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "Locking SP active"));
}

static void test_usage(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run(f, NULL, NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "frobnicate", f->drive, NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "--keyfile"));
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--range", "9", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "--help", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "psid-revert"));
	assert_int_equal(run(f, NULL, "discover", "/nonexistent/dev", NULL), EXIT_DEVICE);
	/* Not a disk: refused at open, saying what it is (not sent "through scsi"). */
	assert_int_equal(run(f, NULL, "discover", "/dev/null", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "/dev/null: a character device that is neither an NVMe controller nor a SCSI generic device"));
	assert_int_equal(run(f, NULL, "status", f->bad, "--transport", "scsi", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "a regular file, not a disk"));
	assert_int_equal(run(f, NULL, "discover", f->drive, "-t", "bogus", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "--transport bogus: use auto"));
	assert_int_equal(run(f, NULL, "discover", f->drive, "--transport", "carrier-pigeon", NULL),
			 EXIT_USAGE);
	/* One line, "what failed: what to do". */
	assert_non_null(strchr(f->err, '\n'));
	assert_ptr_equal(strchr(f->err, '\n'), f->err + strlen(f->err) - 1);
}

static void test_discover_status(void **state)
{
	struct fx *f = *state;
	json_object *j, *v;

	assert_int_equal(run(f, NULL, "discover", f->drive, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "Opal 2"));
	/* The TPer properties follow the Level 0 features. */
	assert_non_null(strstr(f->out, "TPer properties:\n  MaxComPacketSize           2048\n"));
	assert_true(strstr(f->out, "TPer properties:") > strstr(f->out, "DataStore:"));
	assert_non_null(strstr(f->out, "  MaxIndTokenSize            1992\n"));
	assert_int_equal(run(f, NULL, "--json", "discover", f->drive, NULL), EXIT_OK);
	j = json_out(f);
	assert_true(json_object_object_get_ex(j, "ssc", &v));
	assert_string_equal(json_object_get_string(v), "Opal 2");
	assert_true(json_object_object_get_ex(j, "locking_enabled", &v));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(j, "properties", &v));
	assert_true(json_object_is_type(v, json_type_object));
	{
		json_object *x;

		assert_true(json_object_object_get_ex(v, "MaxComPacketSize", &x));
		assert_int_equal(json_object_get_int64(x), 2048);
		assert_true(json_object_object_get_ex(v, "MaxSessions", &x));
		assert_int_equal(json_object_get_int64(x), 1);
		assert_true(json_object_object_get_ex(j, "host_properties", &v));
		assert_true(json_object_object_get_ex(v, "MaxPacketSize", &x));
		assert_int_equal(json_object_get_int64(x), 2028);
	}
	json_object_put(j);

	setup_drive(f);
	assert_int_equal(run(f, NULL, "status", f->drive, "--json", "--keyfile", f->key, NULL), EXIT_OK);
	j = json_out(f);
	assert_true(json_object_object_get_ex(j, "locking_enabled", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(j, "locking_sp", &v));
	assert_string_equal(json_object_get_string(v), "active");
	assert_true(json_object_object_get_ex(j, "tries_left", &v));
	assert_int_equal(json_object_get_int(v), 3);
	assert_true(json_object_object_get_ex(j, "ranges", &v));
	assert_int_equal(json_object_array_length(v), 1);
	{
		json_object *r = json_object_array_get_idx(v, 0), *x;

		assert_true(json_object_object_get_ex(r, "read_lock_enabled", &x));
		assert_true(json_object_get_boolean(x));
		assert_true(json_object_object_get_ex(r, "lock_on_reset", &x));
		assert_true(json_object_get_boolean(x));
	}
	/* MBRControl, read with the key, under the names Level 0 uses. */
	assert_false(json_object_object_get_ex(j, "mbr_control_enable", &v));
	assert_true(json_object_object_get_ex(j, "mbr_enabled", &v));
	assert_false(json_object_get_boolean(v));
	json_object_put(j);
	/* Human status shows the range. */
	assert_int_equal(run(f, NULL, "status", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "global"));
	assert_non_null(strstr(f->out, "tries left:       3 of 3"));
}

static void test_lock_unlock_cycle(void **state)
{
	struct fx *f = *state;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];
	char at[128];

	memset(data, 0x3c, sizeof(data));
	write_block(f, 5, data);
	setup_drive(f);
	/* Setup leaves the range unlocked until the next power cycle. */
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	power_cycle(f);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);

	/*
	 * Wrong key: exit 4. A drive that follows the Opal SSC lets nobody but
	 * admins read the tries left, so the message warns instead.
	 */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "--keyfile", f->bad, NULL), EXIT_AUTH);
	assert_non_null(strstr(f->err, "authentication failed"));
	assert_non_null(strstr(f->err, "each wrong key uses up one of the authority's tries"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);

	/* Key from stdin (binary, as keygen writes it). */
	snprintf(at, sizeof(at), "@%s", f->key);
	assert_int_equal(run(f, at, "unlock", f->drive, "--keyfile", "-", "--read-only", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "read-only"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(run(f, "@/dev/null", "lock", f->drive, "--keyfile", "-", NULL), EXIT_KEYFILE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--json", NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *v, *r;

		/* One range: a list of one, like --all. */
		assert_true(json_object_object_get_ex(j, "ranges", &v));
		assert_int_equal(json_object_array_length(v), 1);
		r = json_object_array_get_idx(v, 0);
		assert_true(json_object_object_get_ex(r, "state", &v));
		assert_string_equal(json_object_get_string(v), "read-write");
		json_object_put(j);
	}
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	/* --save needs the kernel. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--save", NULL),
			 EXIT_UNSUPPORTED);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
}

static void test_lockout(void **state)
{
	struct fx *f = *state;

	setup_drive(f);
	for (int i = 0; i < 3; i++)
		assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->bad, NULL), EXIT_AUTH);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_LOCKED_OUT);
	assert_non_null(strstr(f->err, "locked out"));
	power_cycle(f);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_OK);
}

static void test_range_setup_and_erase(void **state)
{
	struct fx *f = *state;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	memset(data, 0x99, sizeof(data));
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_KEYFILE);	/* never overwrites */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", NULL), EXIT_USAGE);
	/* A geometry without --range would set up the global range (the whole disk): refused. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--start", "1024", "--length",
			     "512", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "give --range N"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--length", "512", "--global",
			     NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "--global and --length exclude each other"));
	assert_int_equal(run(f, NULL, "discover", f->drive, "--json", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"locking_enabled\":false"));	/* nothing was set up */
	/* The whole disk only when named; a new range only once its data loss is confirmed. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "say which range to lock: --global (the whole disk"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start", "1024",
			     "--length", "512", NULL), EXIT_REFUSED);
	assert_non_null(strstr(f->err, "range 2 is new: it gets a media key of its own, so the data now in LBA 1024-1535"));
	assert_non_null(strstr(f->err, "add --yes-destroy-data"));
	assert_int_equal(run(f, NULL, "discover", f->drive, "--json", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"locking_enabled\":false"));	/* not even owned */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start", "1024",
			     "--length", "512", "--yes-destroy-data", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "range 2"));
	write_block(f, 1100, data);
	write_block(f, 10, data);
	power_cycle(f);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_LOCKED);
	assert_int_equal(read_block(f, 10, back), SEDSIM_IO_OK);	/* global not locked */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "-r", "2", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	/* erase-range refuses without confirmation, says what it destroys. */
	assert_int_equal(run(f, NULL, "erase-range", f->drive, "-k", f->key, "-r", "2", NULL),
			 EXIT_REFUSED);
	assert_non_null(strstr(f->err, "destroys all data in locking range 2"));
	assert_int_equal(run(f, NULL, "erase-range", f->drive, "-k", f->key, "-r", "2",
			     "--yes-destroy-data", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, data, sizeof(data));
	assert_int_equal(read_block(f, 10, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
}

static void test_change_key(void **state)
{
	struct fx *f = *state;

	setup_drive(f);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->key, NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->bad, "--new-keyfile", f->key2,
			     NULL), EXIT_AUTH);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->key, "--new-keyfile", f->key2,
			     NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_AUTH);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, NULL), EXIT_OK);
	/* The SID changed too: revert needs the new key. */
	assert_int_equal(run(f, NULL, "revert", f->drive, "-k", f->key, "--yes-destroy-data", NULL),
			 EXIT_AUTH);
	assert_int_equal(run(f, NULL, "revert", f->drive, "-k", f->key2, "--yes-destroy-data", NULL),
			 EXIT_OK);
}

static void test_mbr(void **state)
{
	struct fx *f = *state;
	char img[96];
	uint8_t mbr[SEDSIM_BLOCK], back[SEDSIM_BLOCK];
	json_object *j, *v;

	memset(mbr, 0x55, sizeof(mbr));
	snprintf(img, sizeof(img), "%s/mbr.img", f->dir);
	write_file(img, mbr, sizeof(mbr));
	setup_drive(f);
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--write", img, "--enable", NULL),
			 EXIT_OK);
	assert_int_equal(read_block(f, 0, back), SEDSIM_IO_OK);
	assert_memory_equal(back, mbr, sizeof(mbr));
	assert_int_equal(run(f, NULL, "--json", "status", f->drive, NULL), EXIT_OK);
	j = json_out(f);
	assert_true(json_object_object_get_ex(j, "mbr_enabled", &v));
	assert_true(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(j, "mbr_done", &v));
	assert_false(json_object_get_boolean(v));
	json_object_put(j);
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--done", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 0, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, mbr, sizeof(mbr));
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--disable", "--not-done", NULL),
			 EXIT_OK);
	/* With the shadow MBR on, unlock sets Done (unless --keep-mbr). */
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--enable", "--not-done", NULL),
			 EXIT_OK);
	power_cycle(f);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--keep-mbr", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 0, back), SEDSIM_IO_OK);
	assert_memory_equal(back, mbr, sizeof(mbr));
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(read_block(f, 0, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, mbr, sizeof(mbr));
}

/*
 * mbr --write streams an image of any size the table holds (3 MiB and a
 * bit, not a multiple of anything) and refuses a larger one; the shadow
 * then shows the whole image, its last block included.
 */
static void test_mbr_large_image(void **state)
{
	struct fx *f = *state;
	struct sedsim_config cfg = { .blocks = 16384, .serial = "BIGMBR", .try_limit = 3 };
	size_t size = 3 * 1024 * 1024 + 700;
	uint8_t *img = malloc(size), back[SEDSIM_BLOCK], want[SEDSIM_BLOCK];
	char path[96], big[96], drive[96];
	struct sedsim *sim;
	FILE *fp;

	assert_non_null(img);
	for (size_t i = 0; i < size; i++)
		img[i] = (uint8_t)(i * 7 + i / 4096);
	snprintf(drive, sizeof(drive), "%s/big", f->dir);
	assert_int_equal(mkdir(drive, 0700), 0);
	assert_int_equal(sedsim_create(drive, &cfg), 0);
	snprintf(path, sizeof(path), "%s/mbr.img", f->dir);
	write_file(path, img, size);
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", drive, "--global", "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "mbr", drive, "-k", f->key, "--write", path, "--enable", NULL),
			 EXIT_OK);
	assert_int_equal(sedsim_open(drive, false, &sim), 0);
	/* The last, partial block of the image, then zeros. */
	memset(want, 0, sizeof(want));
	memcpy(want, img + (size / SEDSIM_BLOCK) * SEDSIM_BLOCK, size % SEDSIM_BLOCK);
	assert_int_equal(sedsim_read(sim, size / SEDSIM_BLOCK, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, want, sizeof(want));
	assert_int_equal(sedsim_read(sim, 4096, 1, back), SEDSIM_IO_OK);
	assert_memory_equal(back, img + 4096 * SEDSIM_BLOCK, sizeof(back));
	sedsim_close(sim);
	/* Larger than the table: refused, nothing written. */
	snprintf(big, sizeof(big), "%s/huge.img", f->dir);
	fp = fopen(big, "wb");
	assert_non_null(fp);
	assert_int_equal(ftruncate(fileno(fp), (off_t)1 << 31), 0);
	fclose(fp);
	assert_int_equal(run(f, NULL, "mbr", drive, "-k", f->key, "--write", big, NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "the drive's shadow MBR holds 1 to"));
	free(img);
}

static void test_revert_psid(void **state)
{
	struct fx *f = *state;
	char psid[64];
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	memset(data, 0x42, sizeof(data));
	setup_drive(f);
	write_block(f, 3, data);
	assert_int_equal(run(f, NULL, "psid-revert", f->drive, "--psid-file", f->bad, NULL),
			 EXIT_REFUSED);
	assert_non_null(strstr(f->err, "erases ALL data"));
	assert_int_equal(run(f, NULL, "psid-revert", f->drive, "--psid-file", f->bad,
			     "--yes-destroy-data", NULL), EXIT_AUTH);
	assert_int_equal(sedsim_read_psid(f->drive, psid, sizeof(psid)), 0);
	strcat(psid, "\n");	/* as copied from a label into a file */
	write_file(f->psid, psid, strlen(psid));
	assert_int_equal(run(f, NULL, "psid-revert", f->drive, "--psid-file", f->psid,
			     "--yes-destroy-data", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 3, back), SEDSIM_IO_OK);
	assert_memory_not_equal(back, data, sizeof(data));
	/* Factory again: setup works with a new key. */
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->key2, NULL), EXIT_OK);
}

static void test_sedutil_hash(void **state)
{
	struct fx *f = *state;

	/* A drive set up with a sedutil-hashed password... */
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->pw, "--hash", "sedutil", NULL), EXIT_OK);
	power_cycle(f);
	/* ...does not take the raw password bytes as the PIN... */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, NULL), EXIT_AUTH);
	/* ...but the hashed one; also from stdin without the newline. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, "--hash", "sedutil", NULL), EXIT_OK);
	assert_int_equal(run(f, "hunter2", "lock", f->drive, "-k", "-", "--hash", "sedutil", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, "--hash", "bogus", NULL), EXIT_USAGE);
	/* The SHA-512 variant derives another PIN. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, "--hash", "sedutil-sha512",
			     NULL), EXIT_AUTH);
}

/* --hash sedutil-sha512 end to end; an empty password is an empty PIN. */
static void test_sedutil512_hash(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->pw, "--hash", "sedutil-sha512", NULL),
			 EXIT_OK);
	power_cycle(f);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, "--hash", "sedutil", NULL),
			 EXIT_AUTH);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->pw, "--hash", "sedutil-sha512",
			     NULL), EXIT_OK);
	/* A long --hash none key is refused, and the message says why. */
	write_file(f->key2, "0123456789abcdef0123456789abcdef!", 33);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, NULL), EXIT_KEYFILE);
	assert_non_null(strstr(f->err, "an Opal PIN is at most 32 bytes"));
	/* An empty password: the empty PIN (sedsim refuses it as Admin1's key). */
	write_file(f->key2, "\n", 1);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--hash", "sedutil", NULL),
			 EXIT_AUTH);
}

static void test_keyfile_errors(void **state)
{
	struct fx *f = *state;
	char empty[96], big[96];
	uint8_t blob[64];

	memset(blob, 1, sizeof(blob));
	snprintf(empty, sizeof(empty), "%s/empty", f->dir);
	snprintf(big, sizeof(big), "%s/big", f->dir);
	write_file(empty, "", 0);
	write_file(big, blob, sizeof(blob));
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", empty, NULL), EXIT_KEYFILE);
	assert_non_null(strstr(f->err, "empty"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", big, NULL), EXIT_KEYFILE);
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", "/nonexistent", NULL), EXIT_KEYFILE);
	/* The key never appears in output. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->pw, NULL), EXIT_OK);
	assert_null(strstr(f->out, "hunter2"));
	assert_null(strstr(f->err, "hunter2"));
}

static const char *man_page;

/* Every long option of the man page is in --help, and the other way round. */
static void test_help_matches_man(void **state)
{
	struct fx *f = *state;
	char man[65536], opt[64];
	FILE *m = fopen(man_page, "r");
	size_t n, checked = 0;

	assert_non_null(m);
	n = fread(man, 1, sizeof(man) - 1, m);
	fclose(m);
	man[n] = 0;
	assert_int_equal(run(f, NULL, "--help", NULL), EXIT_OK);
	for (const char *p = man; (p = strstr(p, "*--")); p += 3) {
		size_t k = strcspn(p + 1, "* ");

		if (k >= sizeof(opt))
			continue;
		memcpy(opt, p + 1, k);
		opt[k] = 0;
		if (!strstr(f->out, opt))
			fail_msg("man page option %s missing from --help", opt);
		checked++;
	}
	for (const char *p = f->out; (p = strstr(p, " --")); p += 3) {
		size_t k = strcspn(p + 1, " ,=\n]|.`");

		memcpy(opt, p + 1, k < sizeof(opt) - 1 ? k : sizeof(opt) - 1);
		opt[k < sizeof(opt) - 1 ? k : sizeof(opt) - 1] = 0;
		if (!strstr(man, opt))
			fail_msg("--help option %s missing from the man page", opt);
	}
	assert_true(checked > 20);
}

/* The own options of a command's --help ("Options:" up to "Common options:"). */
static bool help_lists(const char *help, const char *opt)
{
	const char *b = strstr(help, "\nOptions:\n"), *e = strstr(help, "\nCommon options:\n");
	char pat[64];

	if (!b || !e)
		return false;
	snprintf(pat, sizeof(pat), "--%s ", opt);
	for (const char *p = b; (p = strstr(p, pat)) && p < e; p++)
		return true;
	snprintf(pat, sizeof(pat), "--%s\n", opt);
	for (const char *p = b; (p = strstr(p, pat)) && p < e; p++)
		return true;
	return false;
}

/* The man page's line for cmd in COMMANDS or KEY SLOTS: "*cmd*..." at a line start. */
static const char *man_entry(const char *man, const char *cmd, char *line, size_t size)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), "\n*%s*", cmd);
	p = strstr(man, pat);
	if (!p)
		return NULL;
	p++;
	n = strcspn(p, "\n");
	if (n >= size)
		n = size - 1;
	memcpy(line, p, n);
	line[n] = 0;
	return line;
}

/* "--opt" in text as a whole word (followed by none of [a-z-]). */
static bool names_opt(const char *text, const char *opt)
{
	char pat[64];
	size_t l;

	l = (size_t)snprintf(pat, sizeof(pat), "--%s", opt);
	for (const char *p = text; (p = strstr(p, pat)); p += l) {
		char nx = p[l];

		if (!(nx >= 'a' && nx <= 'z') && nx != '-')
			return true;
	}
	return false;
}

/*
 * Each command's --help lists exactly its own options, its synopsis names
 * each of them, and the man page's line for the command names the same.
 */
static void test_cmd_help_matches_man(void **state)
{
	struct fx *f = *state;
	static char man[65536];
	char line[512], head[96];
	size_t n, ncmd;
	const struct opalctl_cmd *cmds = opalctl_commands(&ncmd);
	FILE *m = fopen(man_page, "r");

	assert_non_null(m);
	n = fread(man, 1, sizeof(man) - 1, m);
	fclose(m);
	man[n] = 0;
	assert_true(ncmd > 20);
	for (size_t i = 0; i < ncmd; i++) {
		const struct opalctl_cmd *cmd = &cmds[i];

		assert_int_equal(run(f, NULL, cmd->name, "--help", NULL), EXIT_OK);
		snprintf(head, sizeof(head), "Usage: opalctl %s", cmd->name);
		if (strncmp(f->out, head, strlen(head)))
			fail_msg("%s --help: starts with '%.40s'", cmd->name, f->out);
		if (!man_entry(man, cmd->name, line, sizeof(line)))
			fail_msg("%s: no entry in the man page", cmd->name);
		for (int o = OPT_NONE + 1; o < OPT_COUNT; o++) {
			const char *name = opalctl_opt_name((enum opalctl_opt)o);
			bool own = opalctl_cmd_own(cmd, (enum opalctl_opt)o);

			if (own != help_lists(f->out, name))
				fail_msg("%s --help: --%s %s", cmd->name, name,
					 own ? "missing" : "listed, but the command does not take it");
			if (own != names_opt(cmd->synopsis, name))
				fail_msg("%s synopsis: --%s %s", cmd->name, name,
					 own ? "missing" : "named, but the command does not take it");
			if (own != names_opt(line, name))
				fail_msg("man page, %s: --%s %s", cmd->name, name,
					 own ? "missing" : "named, but the command does not take it");
		}
	}
	/* No command name: an error, not the general help. */
	assert_int_equal(run(f, NULL, "frobnicate", "--help", NULL), EXIT_USAGE);
	/*
	 * The first recipe sets up a range, not the whole disk, with a recovery
	 * key a person can type.
	 */
	{
		const char *ex = strstr(man, "\n# EXAMPLES\n"), *setup, *keygen;

		assert_non_null(ex);
		setup = strstr(ex, "opalctl setup ");
		keygen = strstr(ex, "opalctl keygen --passphrase ");
		assert_non_null(setup);
		assert_non_null(keygen);
		assert_true(keygen < setup);
		n = strcspn(setup, "\n");
		if (setup[n - 1] == '\\')
			n += 1 + strcspn(setup + n + 1, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, setup);
		if (!strstr(line, "--range ") || strstr(line, "--global"))
			fail_msg("EXAMPLES' first setup is not a range: %s", line);
	}
}

/* A value set_option accepts for each option that takes one. */
static const char *valid_arg(const char *opt)
{
	static const struct { const char *opt, *arg; } v[] = {
		{ "range", "1" }, { "user", "1" }, { "slot", "1" }, { "hash", "none" },
		{ "transport", "auto" }, { "timeout", "1000" }, { "deadline", "1" },
		{ "prompt-timeout", "1" }, { "start", "0" }, { "length", "1" },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(v[i].opt, opt))
			return v[i].arg;
	return "x";
}

/* Every command refuses every option it does not take, before touching anything. */
static void test_options_not_taken(void **state)
{
	struct fx *f = *state;
	size_t ncmd, refused = 0;
	const struct opalctl_cmd *cmds = opalctl_commands(&ncmd);
	char want[128];

	for (size_t i = 0; i < ncmd; i++) {
		const struct opalctl_cmd *cmd = &cmds[i];
		const char *arg = (cmd->flags & CMD_NEEDS_DEV) ? f->drive : NULL;

		for (int o = OPT_NONE + 1; o < OPT_COUNT; o++) {
			const char *name = opalctl_opt_name((enum opalctl_opt)o);
			char opt[64];
			int rc;

			if (opalctl_cmd_takes(cmd, (enum opalctl_opt)o))
				continue;
			snprintf(opt, sizeof(opt), "--%s", name);
			if (opalctl_opt_has_arg((enum opalctl_opt)o))
				rc = arg ? run(f, NULL, cmd->name, arg, opt, valid_arg(name), NULL) :
					   run(f, NULL, cmd->name, opt, valid_arg(name), NULL);
			else
				rc = arg ? run(f, NULL, cmd->name, arg, opt, NULL) :
					   run(f, NULL, cmd->name, opt, NULL);
			snprintf(want, sizeof(want), "%s does not take --%s", cmd->name, name);
			if (rc != EXIT_USAGE || !strstr(f->err, want))
				fail_msg("opalctl %s %s: exit %d, '%s'", cmd->name, opt, rc, f->err);
			refused++;
		}
	}
	assert_true(refused > 500);
	/* Nothing was done to the drive by any of them. */
	assert_int_equal(run(f, NULL, "--json", "discover", f->drive, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"locking_enabled\":false"));
}

/* The cases: what used to be ignored or last-one-wins. */
static void test_option_conflicts(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run(f, NULL, "discover", f->drive, "--yes-destroy-data", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "discover does not take --yes-destroy-data"));
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--read-only", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "lock does not take --read-only"));
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--slot", "3", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--pin", "tang", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--who", "sid", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--enable", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--enable", "--disable", NULL),
			 EXIT_USAGE);
	assert_non_null(strstr(f->err, "--enable and --disable exclude each other"));
	assert_int_equal(run(f, NULL, "mbr", f->drive, "-k", f->key, "--not-done", "--done", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--all", "-r", "1", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock-all", "--no-prompt", "--askpass", "/bin/true", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "-r", "1", "--range", "2",
			     NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "--range given twice"));
	/* Keys only where a key is read; the drive options only where a drive is. */
	assert_int_equal(run(f, NULL, "discover", f->drive, "--hash", "sedutil", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "keygen", f->key, "--timeout", "10", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "check-table", "-t", "nvme", NULL), EXIT_USAGE);
	/* A command's help: its options, not the others'. */
	assert_int_equal(run(f, NULL, "setup", "--help", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "--start LBA"));
	assert_null(strstr(f->out, "--pin"));
	assert_int_equal(run(f, NULL, "--help", "lock", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "Usage: opalctl lock DEV"));
	assert_null(strstr(f->out, "--save"));
	/* Nothing was set up by any of it. */
	assert_int_equal(run(f, NULL, "--json", "discover", f->drive, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"locking_enabled\":false"));
}

static void test_more_options(void **state)
{
	struct fx *f = *state;

	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->key, "--global",
			     "--transport", "sedsim", "--timeout", "5000", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "status", f->drive, "--timeout", "0", NULL), EXIT_USAGE);
	/* User1 is not enabled: authentication fails. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--user", "1", NULL), EXIT_AUTH);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--user", "10", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->key, "--new-keyfile", f->key2,
			     "--who", "admin1", NULL), EXIT_OK);
	/* Admin1 changed, SID not: revert still takes the old key. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->key, "--new-keyfile", f->key2,
			     "--who", "nobody", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "revert", f->drive, "-k", f->key, "--yes-destroy-data", NULL),
			 EXIT_OK);
	assert_int_equal(run(f, NULL, "--json", "scan", NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *v;

		assert_true(json_object_object_get_ex(j, "devices", &v));
		json_object_put(j);
	}
}

/* Users as key slots: enable, key, grant, access, unlock as the user, revoke. */
static void test_users_and_access(void **state)
{
	struct fx *f = *state;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	memset(data, 0x5a, sizeof(data));
	write_block(f, 1100, data);
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "1024", "--length", "512", "--yes-destroy-data", NULL), EXIT_OK);
	write_block(f, 1100, data);
	assert_int_equal(run(f, NULL, "grant", f->drive, "-k", f->key, "--range", "1", NULL),
			 EXIT_USAGE);
	assert_int_equal(run(f, NULL, "user-enable", f->drive, "-k", f->key, "--user", "2", NULL),
			 EXIT_OK);
	assert_int_equal(run(f, NULL, "user-key", f->drive, "-k", f->key, "--user", "2",
			     "--new-keyfile", f->key2, NULL), EXIT_OK);
	/* Not granted yet: the user authenticates but may not lock range 1 (not a wrong key). */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key2, "--user", "2", "--range", "1",
			     NULL), EXIT_DENIED);
	assert_non_null(strstr(f->err, "not authorized: the key was accepted, but this authority may not do it"));
	assert_non_null(strstr(f->err, "no try was used"));
	assert_null(strstr(f->err, "wrong key"));
	/* A wrong key is told apart: exit 4, and it says each one uses a try. */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--user", "2", "--range", "1",
			     NULL), EXIT_AUTH);
	assert_non_null(strstr(f->err, "authentication failed"));
	assert_non_null(strstr(f->err, "each wrong key uses up one of the authority's tries"));
	assert_int_equal(run(f, NULL, "grant", f->drive, "-k", f->key, "--user", "2", "--range",
			     "1", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "--json", "access", f->drive, "-k", f->key, NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *ranges, *r1, *rd, *users;

		assert_true(json_object_object_get_ex(j, "ranges", &ranges));
		assert_int_equal(json_object_array_length(ranges), 2);
		r1 = json_object_array_get_idx(ranges, 1);
		assert_true(json_object_object_get_ex(r1, "read_lock", &rd));
		assert_int_equal(json_object_array_length(rd), 2);
		assert_string_equal(json_object_get_string(json_object_array_get_idx(rd, 0)), "Admins");
		assert_string_equal(json_object_get_string(json_object_array_get_idx(rd, 1)), "User2");
		assert_true(json_object_object_get_ex(j, "enabled_users", &users));
		assert_int_equal(json_object_get_int(json_object_array_get_idx(users, 0)), 2);
		json_object_put(j);
	}
	/* The user locks (verified: it may read the range) and unlocks range 1. */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key2, "--user", "2", "--range", "1",
			     NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "locked (verified)"));
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_LOCKED);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--user", "2", "--range",
			     "1", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	/* --all: every range the authority may read that locks. */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key2, "--user", "2", "--all", NULL),
			 EXIT_OK);
	assert_non_null(strstr(f->out, "range 1 locked (verified)"));
	assert_null(strstr(f->out, "range 0"));
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_LOCKED);
	assert_int_equal(run(f, NULL, "--json", "unlock", f->drive, "-k", f->key, "--all", NULL),
			 EXIT_OK);
	{
		json_object *j = json_out(f), *arr;

		assert_true(json_object_object_get_ex(j, "ranges", &arr));
		assert_int_equal(json_object_array_length(arr), 1);	/* global range: no locking */
		json_object_put(j);
	}
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--all", "--range", "1", NULL),
			 EXIT_USAGE);
	/* Not the global range, and Admin1 keeps its own control of range 1. */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key2, "--user", "2", NULL), EXIT_DENIED);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--range", "1", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "revoke", f->drive, "-k", f->key, "--user", "2", "--range",
			     "1", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--user", "2", "--range",
			     "1", NULL), EXIT_DENIED);
	assert_int_equal(run(f, NULL, "user-disable", f->drive, "-k", f->key, "--user", "2", NULL),
			 EXIT_OK);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--user", "2", "--range",
			     "1", NULL), EXIT_AUTH);
	/* Commands the kernel cannot run are refused with --transport ioctl. */
	assert_int_equal(run(f, NULL, "grant", f->drive, "-k", f->key, "--user", "2", "--range",
			     "1", "--transport", "ioctl", NULL), EXIT_UNSUPPORTED);
	assert_non_null(strstr(f->err, "the kernel's sed-opal has no such operation"));
	assert_int_equal(run(f, NULL, "msid", f->drive, NULL), EXIT_OK);
	assert_int_equal(strlen(f->out), 33);
}

/* lock fails, saying why, on a range that cannot lock. */
static void test_lock_verifies(void **state)
{
	struct fx *f = *state;

	setup_drive(f);	/* the global range, read/write locking enabled */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--range", "3", NULL),
			 EXIT_DRIVE);
	assert_non_null(strstr(f->err, "range 3 is not configured"));
	/* Unaligned for this drive (8-block granularity): refused before sending. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start",
			     "100", "--length", "50", NULL), EXIT_USAGE);
	assert_non_null(strstr(f->err, "e.g. --start 104 --length 48"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start",
			     "104", "--length", "48", "--yes-destroy-data", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--range", "2", "--json",
			     NULL), EXIT_OK);
	/* range-disable: unlocked, and a lock fails saying locking is off. */
	assert_int_equal(run(f, NULL, "range-disable", f->drive, "-k", f->key, "--range", "2",
			     NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--range", "2", NULL),
			 EXIT_DRIVE);
	assert_non_null(strstr(f->err, "range 2 does not lock"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start",
			     "104", "--length", "48", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, "--range", "2", "--json",
			     NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *v;

		assert_true(json_object_object_get_ex(j, "ranges", &v));
		assert_true(json_object_object_get_ex(json_object_array_get_idx(v, 0), "verified", &v));
		assert_true(json_object_get_boolean(v));
		json_object_put(j);
	}
}

static void write_table(struct fx *f, const char *path, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	write_file(path, buf, strlen(buf));
	(void)f;
}

/*
 * unlock-all with key files and passphrases: one line per entry, noauto,
 * --name, a wrong key not retried, a missing device bounded by its timeout.
 */
static void test_unlock_all(void **state)
{
	struct fx *f = *state;
	char tab[128], askpass[128], bad_ask[128], ok_ask[160];
	uint8_t back[SEDSIM_BLOCK];

	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(askpass, sizeof(askpass), "%s/askpass", f->dir);
	setup_drive(f);
	power_cycle(f);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
	write_table(f, tab, "# test\n\nroot %s 0 keyfile:%s transport=sedsim\n"
		    "later %s 0 keyfile:%s noauto,transport=sedsim\n", f->drive, f->key, f->drive,
		    f->bad);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--no-prompt", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "root: "));
	assert_non_null(strstr(f->out, "range 0 unlocked (key file, Admin1"));
	assert_null(strstr(f->out, "later"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	/* Run again (a warm reboot): nothing locked, so nothing to do, no key used. */
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--name", "later",
			     "--no-prompt", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "later: "));
	assert_non_null(strstr(f->out, "range 0 already unlocked"));
	/* A named noauto entry with a wrong key: one try, no retry, exit 11. */
	power_cycle(f);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--name", "later",
			     "--no-prompt", NULL), EXIT_INCOMPLETE);
	assert_non_null(strstr(f->out, "later: failed"));
	assert_non_null(strstr(f->out, "range 0 not unlocked (key file as Admin1; not retried; 1 of Admin1's 3 tries used this boot)"));
	assert_non_null(strstr(f->err, "authentication failed"));
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--name", "nope", NULL),
			 EXIT_USAGE);
	/* The passphrase prompt through --askpass (its stdout is the key). */
	power_cycle(f);
	snprintf(ok_ask, sizeof(ok_ask), "#!/bin/sh\ncat '%s'; echo\n", f->key);
	write_file(askpass, ok_ask, strlen(ok_ask));
	assert_int_equal(chmod(askpass, 0700), 0);
	write_table(f, tab, "root %s 0 prompt transport=sedsim\n", f->drive);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--no-prompt", NULL),
			 EXIT_INCOMPLETE);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass, NULL),
			 EXIT_OK);
	assert_non_null(strstr(f->out, "(passphrase, Admin1"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	/* A clevis key that cannot be had falls back to the passphrase. */
	power_cycle(f);
	write_table(f, tab, "root %s 0 clevis:%s/none.jwe transport=sedsim,retry=0\n", f->drive,
		    f->dir);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass, NULL),
			 EXIT_OK);
	assert_non_null(strstr(f->out, "(passphrase, Admin1"));
	power_cycle(f);
	write_table(f, tab, "root %s 0 clevis:%s/none.jwe transport=sedsim,retry=0,fallback=fail\n",
		    f->drive, f->dir);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass, NULL),
			 EXIT_INCOMPLETE);
	/* The prompt has a bound of its own: a person who never answers... */
	power_cycle(f);
	write_table(f, tab, "root %s 0 prompt transport=sedsim\n", f->drive);
	write_file(askpass, "#!/bin/sh\nsleep 30\n", 20);
	assert_int_equal(chmod(askpass, 0700), 0);
	{
		time_t t0 = time(NULL);

		assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass,
				     "--prompt-timeout", "1", NULL), EXIT_INCOMPLETE);
		assert_true(time(NULL) - t0 <= 5);
	}
	/* ...and one the deadline does not cut short once it has passed. */
	snprintf(ok_ask, sizeof(ok_ask), "#!/bin/sh\nsleep 2; cat '%s'; echo\n", f->key);
	write_file(askpass, ok_ask, strlen(ok_ask));
	assert_int_equal(chmod(askpass, 0700), 0);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass,
			     "--deadline", "1", NULL), EXIT_OK);
	/* A device that never appears: bounded by the entry's timeout. */
	snprintf(bad_ask, sizeof(bad_ask), "%s/missing", f->dir);
	write_table(f, tab, "gone %s 0 keyfile:%s timeout=1\n", bad_ask, f->key);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, NULL), EXIT_INCOMPLETE);
	assert_non_null(strstr(f->out, "gone: failed: device"));
	assert_non_null(strstr(f->out, "not found within 1 s"));
}

/* The unlock table parser: what it accepts, and a reason for what it refuses. */
static void test_opaltab_errors(void **state)
{
	struct fx *f = *state;
	char tab[128];
	static const char *const bad[][2] = {
		{ "a /dev/x 1\n", "needs NAME DEVICE RANGES KEY" },
		{ "a dev/x 1 prompt\n", "device 'dev/x'" },
		{ "a /dev/x 9 prompt\n", "range '9'" },
		{ "a /dev/x 1,1 prompt\n", "given twice" },
		{ "a /dev/x 1 clevis:rel.jwe\n", "absolute path" },
		{ "a /dev/x 1 password\n", "key 'password'" },
		{ "a /dev/x 1 prompt user=0\n", "user=0" },
		{ "a /dev/x 1 prompt timeout=0\n", "timeout=0" },
		{ "a /dev/x 1 prompt fallback=maybe\n", "fallback=maybe" },
		{ "a /dev/x 1 prompt frobnicate\n", "unknown option 'frobnicate'" },
		{ "a /dev/x 1 prompt save x\n", "too many fields" },
		{ "a /dev/x 1 prompt\na serial=X 2 prompt\n", "line 2: name 'a' used twice" },
		{ "a serial= 1 prompt\n", "empty or too long" },
	};

	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_file(tab, bad[i][0], strlen(bad[i][0]));
		/* check-table refuses it, naming the entry and the reason... */
		assert_int_equal(run(f, NULL, "check-table", "--table", tab, NULL), EXIT_TABLE);
		if (!strstr(f->err, bad[i][1]) || !strstr(f->err, "entry 'a'"))
			fail_msg("table '%s': expected entry 'a' and '%s' in: %s", bad[i][0], bad[i][1],
				 f->err);
		/* ...and at boot the entry fails alone, said on its line. */
		assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--no-prompt", NULL),
				 EXIT_INCOMPLETE);
		if (!strstr(f->out, "failed: bad entry: ") || !strstr(f->out, bad[i][1]))
			fail_msg("table '%s': expected the bad entry's line with '%s' in: %s", bad[i][0],
				 bad[i][1], f->out);
	}
	/* A table that cannot be read at all: the table's own exit status, and what to do. */
	assert_int_equal(run(f, NULL, "check-table", "--table", "/nonexistent/opaltab", NULL),
			 EXIT_TABLE);
	assert_non_null(strstr(f->err, "write the table (see opaltab(5)) or give --table FILE"));
	assert_int_equal(run(f, NULL, "unlock-all", "--table", "/nonexistent/opaltab", NULL),
			 EXIT_TABLE);
	/* Good, with every option; nothing to do: all noauto. */
	write_table(f, tab, "x wwn=naa.5000 0,3 keyfile:/k user=3,save,nosave,timeout=5,retry=0,"
		    "readonly,fallback=fail,noauto,keep-mbr,transport=nvme # comment\n");
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "no entry to unlock"));
	assert_int_equal(run(f, NULL, "check-table", "--table", tab, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "1 entry, all good"));
	assert_int_equal(run(f, NULL, "check-table", "--table", tab, "--boot", NULL), EXIT_OK);
	assert_null(strstr(f->out, "wwn=naa.5000"));	/* noauto: not for the initramfs */
}

/*
 * One bad entry fails alone: the others are still unlocked at boot, a bad
 * noauto entry is only reported, and check-table names each bad entry and
 * prints the initramfs' table (no noauto entries) only for a good table.
 */
static void test_opaltab_entry_by_entry(void **state)
{
	struct fx *f = *state;
	char tab[128];
	uint8_t back[SEDSIM_BLOCK];

	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	setup_drive(f);
	power_cycle(f);
	write_table(f, tab, "root %s 0 keyfile:%s transport=sedsim # the root\n"
		    "data serial=NOPE 1 keyfile:%s timout=5\n"
		    "spare serial=NOPE 2 keyfile:%s noauto,frobnicate\n", f->drive, f->key, f->key,
		    f->key);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--no-prompt", NULL),
			 EXIT_INCOMPLETE);
	assert_non_null(strstr(f->out, "root: "));
	assert_non_null(strstr(f->out, "range 0 unlocked (key file, Admin1"));
	assert_non_null(strstr(f->out, "data: failed: bad entry: line 2: unknown option 'timout=5'"));
	assert_null(strstr(f->out, "spare"));
	assert_non_null(strstr(f->err, "entry 'spare' (noauto) is bad: line 3: unknown option 'frobnicate'"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);

	assert_int_equal(run(f, NULL, "check-table", "--table", tab, "--boot", NULL), EXIT_TABLE);
	assert_int_equal(f->out[0], 0);	/* no table for an image from a bad one */
	assert_non_null(strstr(f->err, "entry 'data': line 2: unknown option 'timout=5'"));
	assert_non_null(strstr(f->err, "entry 'spare' (noauto): line 3: unknown option 'frobnicate'"));
	assert_non_null(strstr(f->err, "2 of 3 entries are bad"));

	write_table(f, tab, "root %s 0 keyfile:%s transport=sedsim # the root\n"
		    "\tspare  serial=NOPE 2 keyfile:%s noauto\n"
		    "data serial=NOPE 1 keyfile:%s timeout=5   \n", f->drive, f->key, f->key, f->key);
	assert_int_equal(run(f, NULL, "check-table", "--table", tab, "--boot", NULL), EXIT_OK);
	{
		char want[512];

		snprintf(want, sizeof(want), "\nroot %s 0 keyfile:%s transport=sedsim\n"
			 "data serial=NOPE 1 keyfile:%s timeout=5\n", f->drive, f->key, f->key);
		if (!strstr(f->out, want) || strstr(f->out, "spare"))
			fail_msg("check-table --boot printed:\n%s\nwant the lines:%s", f->out, want);
	}
	/* --json: the same lines as a list. */
	assert_int_equal(run(f, NULL, "--json", "check-table", "--table", tab, "--boot", NULL),
			 EXIT_OK);
	{
		json_object *j = json_out(f), *lines;

		assert_true(json_object_object_get_ex(j, "boot", &lines));
		assert_int_equal(json_object_array_length(lines), 2);
		json_object_put(j);
	}
}

/* An executable script at path. */
static void write_script(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void write_script(const char *path, const char *fmt, ...)
{
	char body[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(body, sizeof(body), fmt, ap);
	va_end(ap);
	write_file(path, body, strlen(body));
	assert_int_equal(chmod(path, 0700), 0);
}

/*
 * The fallback prompt: after the drive refuses the entry's key, after no
 * time is left for the automatic steps (--deadline 0), again after a
 * refused passphrase, and never more than prompt-tries= times (the
 * fixture's TryLimit is 3: Admin1 must not be locked out).
 */
static void test_unlock_all_fallbacks(void **state)
{
	struct fx *f = *state;
	char tab[128], ask[128], count[128], statedir[128];
	uint8_t back[SEDSIM_BLOCK];

	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(ask, sizeof(ask), "%s/askpass", f->dir);
	snprintf(count, sizeof(count), "%s/asked", f->dir);
	setup_drive(f);

	/* The drive refuses the key file's key (a stale one): the prompt unlocks. */
	power_cycle(f);
	/* The key file holds random bytes: one newline more, which the prompt drops. */
	write_script(ask, "#!/bin/sh\necho x >>'%s'\ncat '%s'; echo\n", count, f->key);
	write_table(f, tab, "root %s 0 keyfile:%s transport=sedsim\n", f->drive, f->bad);
	snprintf(statedir, sizeof(statedir), "%s/run/fdekit", f->dir);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask,
			     "--state-dir", statedir, NULL), EXIT_OK);
	/* What the sleep guard reads: unlocked, with no key the kernel replays. */
	{
		char path[256], want[256], got[512] = "";
		FILE *sf;
		size_t n;

		snprintf(path, sizeof(path), "%s/root", statedir);
		sf = fopen(path, "r");
		assert_non_null(sf);
		n = fread(got, 1, sizeof(got) - 1, sf);
		fclose(sf);
		got[n] = 0;
		snprintf(want, sizeof(want), "device=%s\nranges=0\nalready_unlocked=no\n"
			 "saved_for_resume=no\nresume_unlocks=no\nkey=passphrase\n", f->drive);
		assert_string_equal(got, want);
	}
	assert_non_null(strstr(f->err, "the drive refused the key file key for Admin1: asking for the recovery key"));
	assert_non_null(strstr(f->out, "range 0 unlocked (passphrase, Admin1"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
	/* ...and with fallback=fail it is not asked. */
	power_cycle(f);
	write_table(f, tab, "root %s 0 keyfile:%s transport=sedsim,fallback=fail\n", f->drive, f->bad);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, NULL),
			 EXIT_INCOMPLETE);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);

	/* No time left for the automatic steps: straight to the prompt. */
	write_table(f, tab, "root %s 0 clevis:%s/none.jwe transport=sedsim\n", f->drive, f->dir);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--deadline", "0",
			     "--askpass", ask, NULL), EXIT_OK);
	assert_non_null(strstr(f->err, "no time left"));
	assert_non_null(strstr(f->out, "range 0 unlocked (passphrase, Admin1"));

	/* A mistyped passphrase is asked again. */
	power_cycle(f);
	unlink(count);
	write_script(ask, "#!/bin/sh\necho x >>'%s'\n"
		     "if [ $(wc -l <'%s') -lt 2 ]; then echo typo; else cat '%s'; echo; fi\n",
		     count, count, f->key);
	write_table(f, tab, "root %s 0 prompt transport=sedsim\n", f->drive);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, NULL), EXIT_OK);
	assert_non_null(strstr(f->err, "passphrase refused (1 of 3; each uses one of Admin1's tries)"));
	assert_non_null(strstr(f->out, "range 0 unlocked (passphrase, Admin1"));

	/* Never more than prompt-tries= refusals: Admin1 keeps a try. */
	power_cycle(f);
	write_script(ask, "#!/bin/sh\necho typo\n");
	write_table(f, tab, "root %s 0 prompt transport=sedsim,prompt-tries=2\n", f->drive);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, NULL),
			 EXIT_INCOMPLETE);
	assert_non_null(strstr(f->err, "2 of Admin1's tries used this boot (prompt-tries=2): not asking again"));
	assert_non_null(strstr(f->out, "range 0 not unlocked (passphrase as Admin1: 2 refused; 2 of Admin1's 2 tries used this boot)"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
}

/*
 * setup on a drive already set up never tries the MSID again (each try
 * burns one of the SID's), and moving a configured range needs consent.
 */
static void test_setup_policy(void **state)
{
	struct fx *f = *state;

	setup_drive(f);
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->key, "-v", NULL), EXIT_OK);
	assert_non_null(strstr(f->err, "ownership left alone"));
	/*
	 * Wrong keys, as many as the TryLimit (3): Admin1 refuses them; were
	 * the SID asked (the MSID, the key) it would be locked out now.
	 */
	for (int i = 0; i < 3; i++)
		assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->bad, NULL), EXIT_AUTH);
	assert_int_equal(run(f, NULL, "change-key", f->drive, "-k", f->key, "--new-keyfile", f->key,
			     "--who", "sid", NULL), EXIT_OK);
	power_cycle(f);	/* Admin1's lockout ends */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "64", "--length", "64", "--yes-destroy-data", NULL), EXIT_OK);
	/* The same geometry again destroys nothing: no confirmation. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "64", "--length", "64", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "256", "--length", "64", NULL), EXIT_REFUSED);
	assert_non_null(strstr(f->err, "covers LBA 64-127 now; moving it to LBA 256-319"));
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "256", "--length", "64", "--yes-destroy-data", "--json", NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *v;

		assert_true(json_object_object_get_ex(j, "lock_on_reset", &v));
		assert_true(json_object_get_boolean(v));
		json_object_put(j);
	}
}

/* A key file others may read is refused unless --insecure-keyfile. */
static void test_keyfile_mode(void **state)
{
	struct fx *f = *state;

	setup_drive(f);
	assert_int_equal(chmod(f->key, 0644), 0);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_KEYFILE);
	assert_non_null(strstr(f->err, "can be read or written by group or others (mode 0644)"));
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--insecure-keyfile", NULL),
			 EXIT_OK);
	assert_int_equal(chmod(f->key, 0400), 0);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, NULL), EXIT_OK);
}

/* revert --keep-data: the Locking SP goes, the global range's data stays. */
static void test_revert_keep_data(void **state)
{
	struct fx *f = *state;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	memset(data, 0x42, sizeof(data));
	setup_drive(f);
	write_block(f, 7, data);
	assert_int_equal(run(f, NULL, "revert", f->drive, "-k", f->key, "--keep-data", NULL),
			 EXIT_REFUSED);
	assert_non_null(strstr(f->err, "the global range's data is kept"));
	/* Locked: drives refuse to keep a locked global range; opalctl unlocks first. */
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "revert", f->drive, "-k", f->key, "--keep-data",
			     "--yes-destroy-data", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 7, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	assert_int_equal(run(f, NULL, "--json", "status", f->drive, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"locking_sp\":\"inactive\""));
	/* The SID keeps its key: setup again takes it, without the MSID. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->key, NULL), EXIT_OK);
	assert_int_equal(read_block(f, 7, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
}

/* setup --sum: the range belongs to User N+1 alone; Admin1 cannot unlock it. */
/* A TCG Hardware Reset of the drive (on NVMe: an NVM Subsystem Reset). */
static void hw_reset(struct fx *f)
{
	struct sedsim *sim;

	assert_int_equal(sedsim_open(f->drive, false, &sim), 0);
	assert_int_equal(sedsim_hw_reset(sim), 0);
	sedsim_close(sim);
}

/* setup's LockOnReset, from its JSON: "power-cycle,hardware-reset" or the like. */
static void setup_lock_on_reset(struct fx *f, char *out, size_t cap)
{
	json_object *j, *l;
	size_t n = 0;

	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "64", "--length", "64", "--yes-destroy-data", "--json", NULL), EXIT_OK);
	j = json_out(f);
	assert_true(json_object_object_get_ex(j, "lock_on_reset_on", &l));
	out[0] = 0;
	for (size_t i = 0; i < json_object_array_length(l); i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "",
				      json_object_get_string(json_object_array_get_idx(l, i)));
	assert_true(json_object_object_get_ex(j, "lock_on_reset", &l));
	assert_true(json_object_get_boolean(l));
	json_object_put(j);
}

/*
 * setup asks for LockOnReset = { Power Cycle, Hardware Reset }: the range
 * then locks at a hardware reset as at a power cycle. A drive that refuses
 * Hardware Reset (optional in the Opal SSC) gets { Power Cycle }, and setup
 * says which: such a range stays unlocked through a hardware reset.
 */
static void test_setup_lock_on_reset(void **state)
{
	struct fx *f = *state;
	struct sedsim_config pc_only = { .blocks = 2048, .serial = "CLISERIAL", .try_limit = 3,
					 .no_hw_reset = true };
	uint8_t buf[SEDSIM_BLOCK];
	char lor[64], cmd[600];

	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	setup_lock_on_reset(f, lor, sizeof(lor));
	assert_string_equal(lor, "power-cycle,hardware-reset");
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "64", "--length", "64", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "locks at power-off and at hardware reset"));
	assert_int_equal(run(f, NULL, "status", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "range 1: LBA 64+64 RLE=1 WLE=1 read-locked=0 write-locked=0 lock-on-reset=power-cycle,hardware-reset"));
	assert_int_equal(read_block(f, 64, buf), SEDSIM_IO_OK);
	hw_reset(f);
	assert_int_equal(read_block(f, 64, buf), SEDSIM_IO_LOCKED);
	assert_int_equal(read_block(f, 0, buf), SEDSIM_IO_OK);	/* the global range: not lock-enabled */

	/* Firmware with Power Cycle alone: the fallback. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", f->drive, f->drive);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(sedsim_create(f->drive, &pc_only), 0);
	setup_lock_on_reset(f, lor, sizeof(lor));
	assert_string_equal(lor, "power-cycle");
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "64", "--length", "64", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "read/write locking enabled, locks at power-off; shadow MBR disabled"));
	assert_int_equal(run(f, NULL, "status", f->drive, "-k", f->key, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "lock-on-reset=power-cycle\n"));
	hw_reset(f);
	assert_int_equal(read_block(f, 64, buf), SEDSIM_IO_OK);
	power_cycle(f);
	assert_int_equal(read_block(f, 64, buf), SEDSIM_IO_LOCKED);
}

static void test_setup_sum(void **state)
{
	struct fx *f = *state;
	uint8_t data[SEDSIM_BLOCK], back[SEDSIM_BLOCK];

	memset(data, 0x77, sizeof(data));
	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "512", "--length", "512", "--sum", NULL), EXIT_USAGE);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "512", "--length", "512", "--sum", "--new-keyfile", f->key2, "--json",
			     "--yes-destroy-data", NULL), EXIT_OK);
	{
		json_object *j = json_out(f), *v;

		assert_true(json_object_object_get_ex(j, "single_user_mode_owner", &v));
		assert_int_equal(json_object_get_int(v), 2);
		json_object_put(j);
	}
	write_block(f, 600, data);
	assert_int_equal(run(f, NULL, "lock", f->drive, "-k", f->key2, "--user", "2", "--range", "1",
			     NULL), EXIT_OK);
	assert_int_equal(read_block(f, 600, back), SEDSIM_IO_LOCKED);
	/* Admin1 may not unlock the owner's range: its key is right, the right is the owner's. */
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--range", "1", NULL),
			 EXIT_DENIED);
	assert_int_equal(read_block(f, 600, back), SEDSIM_IO_LOCKED);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--user", "2", "--range",
			     "1", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 600, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
	/*
	 * The mode is chosen at activation only: run again, setup --sum
	 * changes nothing and says so, pointing at nothing destructive.
	 */
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "512", "--length", "512", "--sum", "--new-keyfile", f->key2, NULL),
			 EXIT_USAGE);
	assert_non_null(strstr(f->err, "already set up"));
	assert_non_null(strstr(f->err, "nothing was changed"));
	assert_null(strstr(f->err, "revert"));
	assert_int_equal(read_block(f, 600, back), SEDSIM_IO_OK);
	assert_memory_equal(back, data, sizeof(data));
}

/* ---- text and JSON: two renderings of one result ---- */

static json_object *jget(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		fail_msg("no \"%s\" in the JSON result", key);
	return v;
}

static const char *jstr(json_object *o, const char *key)
{
	return json_object_get_string(jget(o, key));
}

static long long jint(json_object *o, const char *key)
{
	return (long long)json_object_get_int64(jget(o, key));
}

static int jflag(json_object *o, const char *key)
{
	return json_object_get_boolean(jget(o, key));
}

static const char *yn(int v)
{
	return v ? "yes" : "no";
}

/* The last text output holds this line, whole. */
static void expect_line(struct fx *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void expect_line(struct fx *f, const char *fmt, ...)
{
	char line[1024], *at;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	at = strstr(f->out, line);
	if (!at || (at != f->out && at[-1] != '\n') || at[strlen(line)] != '\n')
		fail_msg("text output lacks the line '%s':\n%s", line, f->out);
}

/* Run the command with --json, then in text; returns the JSON result. */
#define run_both(f, ...) run_both_(f, __VA_ARGS__, NULL)

static json_object *run_both_(struct fx *f, const char *cmd, ...)
{
	char *argv[24];
	int argc = 0;
	json_object *j;
	va_list ap;

	va_start(ap, cmd);
	while (argc < 22 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc] = NULL;
	assert_int_equal(run(f, NULL, "--json", cmd, argv[0], argv[1], argv[2], argv[3], argv[4],
			     argv[5], argv[6], argv[7], argv[8], argv[9], argv[10], argv[11], NULL),
			 EXIT_OK);
	j = json_out(f);
	assert_int_equal(run(f, NULL, cmd, argv[0], argv[1], argv[2], argv[3], argv[4], argv[5],
			     argv[6], argv[7], argv[8], argv[9], argv[10], argv[11], NULL), EXIT_OK);
	return j;
}

/* status with the Admin1 key: every value of its JSON shows in its text. */
/* A LockOnReset list of the JSON (lock_on_reset_on) as the text gives it: "a,b" or "none". */
static const char *reset_list_text(json_object *o, char *out, size_t cap)
{
	json_object *l = jget(o, "lock_on_reset_on");
	size_t n = 0;

	out[0] = 0;
	for (size_t i = 0; i < json_object_array_length(l); i++)
		n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "",
				      json_object_get_string(json_object_array_get_idx(l, i)));
	return n ? out : "none";
}

static void check_status(struct fx *f, json_object *j)
{
	json_object *feat = jget(j, "features"), *ranges = jget(j, "ranges");
	const char *fl = strstr(f->out, "features:");

	expect_line(f, "device:           %s (%s)", jstr(j, "device"), jstr(j, "transport"));
	expect_line(f, "SSC:              %s", jstr(j, "ssc"));
	assert_non_null(fl);
	assert_true(json_object_array_length(feat) > 3);
	for (size_t i = 0; i < json_object_array_length(feat); i++) {
		char word[40], *w = word;

		*w++ = ' ';
		for (const char *p = json_object_get_string(json_object_array_get_idx(feat, i)); *p; p++)
			if (*p != ' ')
				*w++ = *p;
		*w = 0;
		if (!strstr(fl, word) || strstr(fl, word) > strchr(fl, '\n'))
			fail_msg("feature%s not in the text's features line:\n%s", word, f->out);
	}
	expect_line(f, "locking:          supported=%s enabled=%s locked=%s media-encryption=%s",
		    yn(jflag(j, "locking_supported")), yn(jflag(j, "locking_enabled")),
		    yn(jflag(j, "locked")), yn(jflag(j, "media_encryption")));
	expect_line(f, "shadow MBR:       enabled=%s done=%s", yn(jflag(j, "mbr_enabled")),
		    yn(jflag(j, "mbr_done")));
	expect_line(f, "ComID:            0x%04llx (%lld)", jint(j, "base_comid"), jint(j, "num_comids"));
	expect_line(f, "authorities:      %lld admins, %lld users", jint(j, "admin_authorities"),
		    jint(j, "user_authorities"));
	expect_line(f, "geometry:         block %lld bytes, alignment %lld blocks from LBA %lld",
		    jint(j, "logical_block_size"), jint(j, "alignment_granularity"),
		    jint(j, "lowest_aligned_lba"));
	expect_line(f, "DataStore:        %lld table(s), %lld bytes", jint(j, "datastore_max_tables"),
		    jint(j, "datastore_max_size"));
	assert_string_equal(jstr(j, "locking_sp"), "active");
	expect_line(f, "Locking SP:       active");
	expect_line(f, "tries left:       %lld of %lld (%s)", jint(j, "tries_left"),
		    jint(j, "tries_limit"), jstr(j, "tries_authority"));
	expect_line(f, "ranges:");
	assert_int_equal(json_object_array_length(ranges), 2);
	for (size_t i = 0; i < json_object_array_length(ranges); i++) {
		json_object *r = json_object_array_get_idx(ranges, i);
		char head[96];

		if (jint(r, "range"))
			snprintf(head, sizeof(head), "  range %lld: LBA %lld+%lld ", jint(r, "range"),
				 jint(r, "start"), jint(r, "length"));
		else
			snprintf(head, sizeof(head), "  global           ");
		char lor[64];

		expect_line(f, "%sRLE=%d WLE=%d read-locked=%d write-locked=%d lock-on-reset=%s", head,
			    jflag(r, "read_lock_enabled"), jflag(r, "write_lock_enabled"),
			    jflag(r, "read_locked"), jflag(r, "write_locked"),
			    reset_list_text(r, lor, sizeof(lor)));
	}
	expect_line(f, "MBRControl:       enable=%s done=%s", yn(jflag(j, "mbr_enabled")),
		    yn(jflag(j, "mbr_done")));
}

/* access: each range's ACEs and the enabled users, as the JSON names them. */
static void check_access(struct fx *f, json_object *j)
{
	json_object *ranges = jget(j, "ranges"), *users = jget(j, "enabled_users");
	char list[256];
	size_t l = 0;

	assert_int_equal(json_object_array_length(ranges), 2);
	for (size_t i = 0; i < json_object_array_length(ranges); i++) {
		json_object *r = json_object_array_get_idx(ranges, i);
		static const char *const ace[] = { "read_lock", "write_lock" };
		char names[2][128];

		for (int a = 0; a < 2; a++) {
			json_object *n = jget(r, ace[a]);

			names[a][0] = 0;
			for (size_t k = 0; k < json_object_array_length(n); k++)
				snprintf(names[a] + strlen(names[a]), sizeof(names[a]) - strlen(names[a]),
					 "%s%s", k ? " " : "",
					 json_object_get_string(json_object_array_get_idx(n, k)));
		}
		expect_line(f, "range %lld%s:\n  read lock:  %s\n  write lock: %s", jint(r, "range"),
			    jint(r, "range") ? "" : " (global)", names[0], names[1]);
	}
	assert_int_equal(json_object_array_length(users), 1);
	for (size_t i = 0; i < json_object_array_length(users); i++)
		l += (size_t)snprintf(list + l, sizeof(list) - l, " User%d",
				      json_object_get_int(json_object_array_get_idx(users, i)));
	expect_line(f, "enabled users:%s", list);
}

/* slots: each slot's ranges ("(ro)": read lock control only), state and sealed key. */
static void check_slots(struct fx *f, json_object *j)
{
	json_object *slots = jget(j, "slots");
	int sealed = 0;

	assert_int_equal(json_object_array_length(slots), 2);
	for (size_t i = 0; i < json_object_array_length(slots); i++) {
		json_object *o = json_object_array_get_idx(slots, i), *rr = jget(o, "ranges");
		json_object *ro = jget(o, "read_only_ranges");
		char ranges[64] = "-";
		size_t l = 0;

		for (size_t k = 0; k < json_object_array_length(rr); k++) {
			int n = json_object_get_int(json_object_array_get_idx(rr, k)), only = 0;

			for (size_t m = 0; m < json_object_array_length(ro); m++)
				only |= json_object_get_int(json_object_array_get_idx(ro, m)) == n;
			l += (size_t)snprintf(ranges + l, sizeof(ranges) - l, "%s%d%s", l ? "," : "", n,
					      only ? "(ro)" : "");
		}
		if (!jint(o, "slot")) {
			assert_string_equal(jstr(o, "authority"), "Admins");
			expect_line(f, "Admins   ranges %-12s recovery key (Admin1)", ranges);
		} else if (json_object_get_type(jget(o, "jwe")) == json_type_string) {
			sealed++;
			expect_line(f, "%-8s ranges %-12s %s, clevis %s in %s", jstr(o, "authority"),
				    ranges, jflag(o, "enabled") ? "enabled" : "disabled",
				    jstr(o, "pin"), jstr(o, "jwe"));
		} else {
			expect_line(f, "%-8s ranges %-12s %s, no sealed key here", jstr(o, "authority"),
				    ranges, jflag(o, "enabled") ? "enabled" : "disabled");
		}
	}
	assert_int_equal(sealed, 1);
}

static void check_lock_unlock(struct fx *f, const char *dev, json_object *r)
{
	const char *st = jstr(r, "state");
	json_object *v = NULL;

	expect_line(f, "%s: range %lld %s%s", dev, jint(r, "range"),
		    !strcmp(st, "locked") ? "locked" : !strcmp(st, "read-only") ?
		    "unlocked read-only" : "unlocked",
		    json_object_object_get_ex(r, "verified", &v) && json_object_get_boolean(v) ?
		    " (verified)" : "");
}

/*
 * Text and JSON are two renderings of one result: whatever a command's
 * JSON says, its text says too (setup, status with the key, unlock and
 * lock --all, access, slots), and a failed status still shows, in text,
 * the discovery it made before the key was refused.
 */
static void test_text_matches_json(void **state)
{
	struct fx *f = *state;
	char jwe[128], tab[128], line[256];
	json_object *j, *arr;

	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	j = run_both(f, "setup", f->drive, "-k", f->key, "--range", "1", "--start", "1024",
		     "--length", "512", "--yes-destroy-data");
	assert_int_equal(jint(j, "range"), 1);
	/* The in-process drive takes Hardware Reset: setup sets both. */
	assert_string_equal(reset_list_text(j, line, sizeof(line)), "power-cycle,hardware-reset");
	assert_true(jflag(j, "lock_on_reset"));
	expect_line(f, "%s: Locking SP active; range %lld (LBA %lld+%lld) read/write locking enabled, %s; shadow MBR disabled",
		    jstr(j, "device"), jint(j, "range"), jint(j, "start"), jint(j, "length"),
		    "locks at power-off and at hardware reset");
	json_object_put(j);

	power_cycle(f);
	j = run_both(f, "unlock", f->drive, "-k", f->key, "--range", "1", "--read-only");
	arr = jget(j, "ranges");
	assert_int_equal(json_object_array_length(arr), 1);
	assert_string_equal(jstr(json_object_array_get_idx(arr, 0), "state"), "read-only");
	check_lock_unlock(f, jstr(j, "device"), json_object_array_get_idx(arr, 0));
	json_object_put(j);
	/* Range 1 read-only: write-locked, not read-locked; the global range does not lock. */
	j = run_both(f, "status", f->drive, "-k", f->key);
	check_status(f, j);
	json_object_put(j);
	j = run_both(f, "lock", f->drive, "-k", f->key, "--all");
	arr = jget(j, "ranges");
	assert_int_equal(json_object_array_length(arr), 1);	/* the global range does not lock */
	check_lock_unlock(f, jstr(j, "device"), json_object_array_get_idx(arr, 0));
	json_object_put(j);

	assert_int_equal(run(f, NULL, "user-enable", f->drive, "-k", f->key, "--user", "2", NULL),
			 EXIT_OK);
	assert_int_equal(run(f, NULL, "user-key", f->drive, "-k", f->key, "--user", "2",
			     "--new-keyfile", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "grant", f->drive, "-k", f->key, "--user", "2", "--range", "1",
			     "--read-only", NULL), EXIT_OK);
	j = run_both(f, "access", f->drive, "-k", f->key);
	check_access(f, j);
	json_object_put(j);

	/* A sealed key the unlock table names (its header says pin "tang"). */
	snprintf(jwe, sizeof(jwe), "%s/user2.jwe", f->dir);
	write_file(jwe, "eyJjbGV2aXMiOnsicGluIjoidGFuZyJ9fQ.a.b.c.d", 42);
	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(line, sizeof(line), "slot serial=CLISERIAL 1 clevis:%s user=2\n", jwe);
	write_file(tab, line, strlen(line));
	j = run_both(f, "slots", f->drive, "-k", f->key, "--table", tab);
	check_slots(f, j);
	json_object_put(j);

	/* A wrong key: the text keeps what status found before the refusal. */
	assert_int_equal(run(f, NULL, "status", f->drive, "-k", f->bad, NULL), EXIT_AUTH);
	expect_line(f, "SSC:              Opal 2");
	expect_line(f, "Locking SP:       active");
	assert_null(strstr(f->out, "ranges:"));
	assert_non_null(strstr(f->err, "status: authenticating as Admin1"));
	/* ...and the JSON is the error object alone. */
	assert_int_equal(run(f, NULL, "--json", "status", f->drive, "-k", f->bad, NULL), EXIT_AUTH);
	j = json_out(f);
	assert_int_equal(jint(j, "exit_code"), EXIT_AUTH);
	assert_false(json_object_object_get_ex(j, "ssc", NULL));
	json_object_put(j);
}


/*
 * keygen --passphrase: a key to type (Crockford base32, 5 groups of 5), and
 * typed at the boot prompt as written it unlocks the drive it was set on.
 */
static void test_keygen_passphrase(void **state)
{
	struct fx *f = *state;
	char pp[64], tab[128], askpass[128], script[256], other[96];
	uint8_t back[SEDSIM_BLOCK];
	struct stat st;
	FILE *k;
	size_t n;

	unlink(f->key);
	assert_int_equal(run(f, NULL, "keygen", f->key, "--passphrase", "--json", NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "\"bytes\":29"));
	assert_non_null(strstr(f->out, "\"bits\":125"));
	assert_int_equal(stat(f->key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0400);
	k = fopen(f->key, "r");
	assert_non_null(k);
	n = fread(pp, 1, sizeof(pp) - 1, k);
	fclose(k);
	pp[n] = 0;
	assert_int_equal(n, 29);
	for (size_t i = 0; i < n; i++) {
		if (i % 6 == 5)
			assert_int_equal(pp[i], '-');
		else if (!strchr("0123456789abcdefghjkmnpqrstvwxyz", pp[i]) || !pp[i])
			fail_msg("keygen --passphrase: '%c' at %zu of '%s'", pp[i], i, pp);
	}
	/* A second key differs; an existing file is never overwritten. */
	snprintf(other, sizeof(other), "%s/other.key", f->dir);
	assert_int_equal(run(f, NULL, "keygen", "--passphrase", other, NULL), EXIT_OK);
	assert_non_null(strstr(f->out, "a key to type (29 characters, 125 random bits)"));
	k = fopen(other, "r");
	assert_non_null(k);
	assert_int_equal(fread(script, 1, 29, k), 29);
	fclose(k);
	assert_memory_not_equal(script, pp, 29);
	assert_int_equal(run(f, NULL, "keygen", "--passphrase", other, NULL), EXIT_KEYFILE);
	/* Set up with it; at the boot prompt it is typed (a line) and unlocks. */
	assert_int_equal(run(f, NULL, "setup", f->drive, "--global", "-k", f->key, NULL), EXIT_OK);
	power_cycle(f);
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(askpass, sizeof(askpass), "%s/askpass", f->dir);
	snprintf(script, sizeof(script), "#!/bin/sh\nprintf '%%s\\n' '%s'\n", pp);
	write_file(askpass, script, strlen(script));
	assert_int_equal(chmod(askpass, 0700), 0);
	write_table(f, tab, "root %s 0 prompt transport=sedsim\n", f->drive);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass, NULL),
			 EXIT_OK);
	assert_non_null(strstr(f->out, "(passphrase, Admin1"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
}

/*
 * A slot's key that is right for a user the range is not granted to: not
 * a wrong key (no try counted, exit 14 from lock and unlock), and at boot
 * the entry falls back to the recovery key as for a refused key.
 */
static void test_not_authorized(void **state)
{
	struct fx *f = *state;
	char tab[128], askpass[128], script[256];
	uint8_t back[SEDSIM_BLOCK];

	assert_int_equal(run(f, NULL, "keygen", f->key, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "keygen", f->key2, NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--global", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "user-enable", f->drive, "-k", f->key, "--user", "4", NULL),
			 EXIT_OK);
	assert_int_equal(run(f, NULL, "user-key", f->drive, "-k", f->key, "--user", "4",
			     "--new-keyfile", f->key2, NULL), EXIT_OK);
	power_cycle(f);
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key2, "--user", "4", NULL),
			 EXIT_DENIED);
	assert_non_null(strstr(f->err, "no try was used"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_LOCKED);
	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(askpass, sizeof(askpass), "%s/askpass", f->dir);
	snprintf(script, sizeof(script), "#!/bin/sh\ncat '%s'\n", f->key);
	write_file(askpass, script, strlen(script));
	assert_int_equal(chmod(askpass, 0700), 0);
	write_table(f, tab, "data %s 0 keyfile:%s user=4,transport=sedsim\n", f->drive, f->key2);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", askpass, NULL),
			 EXIT_OK);
	assert_non_null(strstr(f->err, "User4 may not unlock range 0 (the key was right"));
	assert_non_null(strstr(f->out, "(passphrase, Admin1"));
	assert_int_equal(read_block(f, 5, back), SEDSIM_IO_OK);
}

/* ------------------------------------------------------ child processes */

/* argv as opalctl runs clevis (run_child, no curl home unless given): its stdout into out. */
static int child_output(char *const argv[], const char *curl_home, char *out, size_t cap)
{
	struct secret buf = { .data = (uint8_t *)out, .cap = cap - 1 };
	struct child_io io = { .in_fd = -1, .out_fd = -1, .capture = &buf, .curl_home = curl_home };
	int rc = run_child(argv, &io, 10000);

	out[buf.len] = 0;
	return rc;
}

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

/* Whether line (a whole line) is in text. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/*
 * A child (clevis, curl, an askpass) gets no $PATH search, none of this
 * process's environment but the TPM's selection and TMPDIR, every signal
 * at its default action and none blocked, and no core dumps. What it
 * runs directly is asked (a shell would change its signals itself).
 */
static void test_child_environment(void **state)
{
	struct fx *f = *state;
	char bin[128], probe[160], path[4096], out[8192], home[128], tmpdir[128];
	const char *old_path = getenv("PATH");
	struct rlimit core;
	struct sigaction ign = { .sa_handler = SIG_IGN }, saved[3];
	static const int ignored[] = { SIGPIPE, SIGINT, SIGHUP };
	sigset_t block, old_mask;
	unsigned long long blk = 1, sig_ign = 1;
	const char *p;

	/* A program only $PATH has is not found; nor is a fake sh taken. */
	snprintf(bin, sizeof(bin), "%s/bin", f->dir);
	assert_int_equal(mkdir(bin, 0700), 0);
	snprintf(probe, sizeof(probe), "%s/fdekit-probe", bin);
	write_script(probe, "#!/bin/sh\necho probe ran\n");
	snprintf(probe, sizeof(probe), "%s/sh", bin);
	write_script(probe, "#!/bin/sh\necho fake sh\n");
	snprintf(path, sizeof(path), "%s:%s", bin, old_path ? old_path : "/usr/bin:/bin");
	snprintf(home, sizeof(home), "%s/home", f->dir);
	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", f->dir);
	setenv("PATH", path, 1);
	setenv("http_proxy", "http://127.0.0.1:9", 1);
	setenv("HOME", home, 1);
	setenv("CURL_HOME", home, 1);
	setenv("FDEKIT_TEST_OTHER", "not for children", 1);
	setenv("TPM2TOOLS_TCTI", "swtpm:host=127.0.0.1,port=1", 1);
	setenv("TCTI", "swtpm:port=1", 1);
	setenv("TSS2_LOG", "all+none", 1);
	setenv("TMPDIR", f->dir, 1);
	assert_int_equal(child_output(ARGV("fdekit-probe"), NULL, out, sizeof(out)), 127);
	assert_int_equal(child_output(ARGV("sh", "-c", "echo real sh"), NULL, out, sizeof(out)), 0);
	if (strcmp(out, "real sh\n"))
		fail_msg("sh was looked up in $PATH: %s", out);
	assert_int_equal(child_output(ARGV("env"), NULL, out, sizeof(out)), 0);
	if (!has_line(out, "PATH=/usr/sbin:/usr/bin:/sbin:/bin") || !has_line(out, "LC_ALL=C") ||
	    !has_line(out, "HOME=/") || !has_line(out, "TPM2TOOLS_TCTI=swtpm:host=127.0.0.1,port=1") ||
	    !has_line(out, "TCTI=swtpm:port=1") || !has_line(out, "TSS2_LOG=all+none") ||
	    !has_line(out, tmpdir))
		fail_msg("the child's environment lacks what it needs:\n%s", out);
	if (strstr(out, "http_proxy") || strstr(out, "CURL_HOME") || strstr(out, "FDEKIT_TEST_OTHER") ||
	    strstr(out, home))
		fail_msg("the child got this process's environment:\n%s", out);
	/* With a curl_home, HOME and CURL_HOME are it (its bounded .curlrc). */
	assert_int_equal(child_output(ARGV("env"), "/run/fdekit-curl.test", out, sizeof(out)), 0);
	if (!has_line(out, "HOME=/run/fdekit-curl.test") ||
	    !has_line(out, "CURL_HOME=/run/fdekit-curl.test"))
		fail_msg("HOME and CURL_HOME are not the curl home:\n%s", out);
	setenv("PATH", old_path ? old_path : "/usr/bin:/bin", 1);
	unsetenv("http_proxy");
	unsetenv("CURL_HOME");
	unsetenv("FDEKIT_TEST_OTHER");
	unsetenv("TPM2TOOLS_TCTI");
	unsetenv("TCTI");
	unsetenv("TSS2_LOG");
	unsetenv("TMPDIR");

	/* Signals ignored and blocked here, core dumps allowed here. */
	for (size_t i = 0; i < 3; i++)
		sigaction(ignored[i], &ign, &saved[i]);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	getrlimit(RLIMIT_CORE, &core);
	{
		struct rlimit more = { core.rlim_max, core.rlim_max };

		setrlimit(RLIMIT_CORE, &more);
	}
	assert_int_equal(child_output(ARGV("grep", "-E", "^(Sig(Blk|Ign):|Max core file size)",
					   "/proc/self/status", "/proc/self/limits"), NULL, out,
				      sizeof(out)), 0);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	for (size_t i = 0; i < 3; i++)
		sigaction(ignored[i], &saved[i], NULL);
	setrlimit(RLIMIT_CORE, &core);
	p = strstr(out, "SigBlk:");
	if (p)
		blk = strtoull(p + 7, NULL, 16);
	p = strstr(out, "SigIgn:");
	if (p)
		sig_ign = strtoull(p + 7, NULL, 16);
	if (blk || sig_ign)
		fail_msg("the child kept blocked or ignored signals:\n%s", out);
	p = strstr(out, "Max core file size");
	if (!p || strtoul(p + 18, NULL, 10) != 0 || !strchr("0123456789", p[18 + strspn(p + 18, " ")]))
		fail_msg("the child may dump core:\n%s", out);
}

/*
 * What a child leaves running in its process group (a curl the tang pin
 * started) is killed when the child exits, before anything else runs.
 */
static void test_child_group_killed(void **state)
{
	char out[256];
	pid_t left;
	bool gone = false;

	(void)state;
	assert_int_equal(child_output(ARGV("sh", "-c", "sleep 30 </dev/null >/dev/null 2>&1 & echo $!"),
				      NULL, out, sizeof(out)), 0);
	left = (pid_t)atoi(out);
	assert_true(left > 0);
	/* Killed, it is reaped by whoever adopted it: gone, or a zombie. */
	for (int i = 0; i < 100 && !gone; i++) {
		char stat_path[64], st[256] = "";
		FILE *sf;

		snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)left);
		sf = fopen(stat_path, "r");
		if (!sf) {
			gone = true;
			break;
		}
		if (!fgets(st, sizeof(st), sf))
			st[0] = 0;
		fclose(sf);
		gone = strstr(st, ") Z ") != NULL;
		if (!gone)
			usleep(10000);
	}
	if (!gone) {
		kill(left, SIGKILL);
		fail_msg("the child's background process %d was left running", (int)left);
	}
}

/* opalctl ignores SIGPIPE: a reader that died (clevis) is an error, not its end. */
static void test_sigpipe_ignored(void **state)
{
	struct fx *f = *state;
	int status = 0;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int p[2];

		signal(SIGPIPE, SIG_DFL);
		run(f, NULL, "--help", NULL);
		if (pipe(p))
			_exit(2);
		close(p[0]);
		_exit(write(p[1], "x", 1) < 0 && errno == EPIPE ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("opalctl was killed by signal %d writing to a closed pipe", WTERMSIG(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * clevis encrypt (no_tty) runs in a session of its own: no controlling
 * terminal to ask a trust question on, so it cannot wait for an answer.
 */
static void test_child_no_tty(void **state)
{
	struct secret buf;
	char out[1024], *p;
	int pid, pgrp, session, tty;

	(void)state;
	buf = (struct secret){ .data = (uint8_t *)out, .cap = sizeof(out) - 1 };
	{
		struct child_io io = { .in_fd = -1, .out_fd = -1, .capture = &buf, .no_tty = true };

		assert_int_equal(run_child(ARGV("cat", "/proc/self/stat"), &io, 10000), 0);
	}
	out[buf.len] = 0;
	p = strrchr(out, ')');
	assert_non_null(p);
	pid = atoi(out);
	assert_int_equal(sscanf(p + 2, "%*c %*d %d %d %d", &pgrp, &session, &tty), 3);
	if (session != pid || pgrp != pid || tty != 0)
		fail_msg("pid %d: group %d, session %d, terminal %d: not a session of its own", pid,
			 pgrp, session, tty);
}

/*
 * A NUL byte in the table refuses its line alone ("contains a NUL byte"),
 * the lines after it read as they are: it is not the line's end, with the
 * rest of that line taken for the next one and the next one dropped.
 */
static void test_opaltab_nul(void **state)
{
	struct fx *f = *state;
	static const char tab_text[] = "a serial=A 1 prompt\n"
				       "b serial=B 1 prompt\0 x serial=X 2 prompt\n"
				       "c serial=C 2 prompt noauto\n"
				       "# a comment\0\n";
	char tab[128];

	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	write_file(tab, tab_text, sizeof(tab_text) - 1);
	assert_int_equal(run(f, NULL, "check-table", "--table", tab, NULL), EXIT_TABLE);
	if (!strstr(f->err, "entry 'b': line 2: contains a NUL byte") ||
	    !strstr(f->err, "entry 'line 4': line 4: contains a NUL byte") ||
	    !strstr(f->err, "2 of 4 entries are bad") || strstr(f->err, "entry 'c'") ||
	    strstr(f->err, "entry 'x'") || strstr(f->err, "entry 'a'"))
		fail_msg("check-table said:\n%s%s", f->out, f->err);
}

/*
 * unlock-all as a person at a console meets it (answers scripted through
 * --askpass), on a drive whose Admin1 has TryLimit 5: an Enter alone asks
 * again; two entries on one drive and every answer wrong, run three times
 * as dracut's stages do, never lock Admin1 out; the recovery key the
 * drive took is not asked again for its other range; the recovery key
 * typed in capitals without dashes is the same key; stale key files with
 * nobody at the console leave the person a try; a prompt that runs out
 * of time ends with SIGTERM.
 */
static void person_answers(struct fx *f, const char *answers)
{
	char path[160];

	snprintf(path, sizeof(path), "%s/answers", f->dir);
	write_file(path, answers, strlen(answers));
	snprintf(path, sizeof(path), "%s/asked", f->dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/prompts", f->dir);
	unlink(path);
}

static int person_asked(struct fx *f)
{
	char path[160], buf[64] = "";
	FILE *c;

	snprintf(path, sizeof(path), "%s/asked", f->dir);
	c = fopen(path, "r");
	if (!c)
		return 0;
	if (!fgets(buf, sizeof(buf), c))
		buf[0] = 0;
	fclose(c);
	return atoi(buf);
}

static void test_unlock_all_person(void **state)
{
	struct fx *f = *state;
	struct sedsim_config cfg = { .blocks = 2048, .serial = "PERSON5", .try_limit = 5 };
	char tab[160], ask[160], st[160], cmd[400], key[64] = "", typed[64];
	uint8_t back[SEDSIM_BLOCK];
	size_t n = 0;
	FILE *k;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir '%s'", f->drive, f->drive);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(sedsim_create(f->drive, &cfg), 0);
	snprintf(tab, sizeof(tab), "%s/opaltab", f->dir);
	snprintf(ask, sizeof(ask), "%s/askpass", f->dir);
	snprintf(st, sizeof(st), "%s/run", f->dir);
	assert_int_equal(run(f, NULL, "keygen", f->key, "--passphrase", NULL), EXIT_OK);
	k = fopen(f->key, "r");
	assert_non_null(k);
	assert_non_null(fgets(key, sizeof(key), k));
	fclose(k);
	key[strcspn(key, "\n")] = 0;
	assert_int_equal(strlen(key), 29);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "1", "--start",
			     "1024", "--length", "512", "--yes-destroy-data", NULL), EXIT_OK);
	assert_int_equal(run(f, NULL, "setup", f->drive, "-k", f->key, "--range", "2", "--start",
			     "1536", "--length", "512", "--yes-destroy-data", NULL), EXIT_OK);
	/* The person: line N of answers is the Nth answer; the prompts are kept. */
	write_script(ask, "#!/bin/sh\nn=$(( $(cat '%s/asked' 2>/dev/null || echo 0) + 1 ))\n"
		     "echo $n >'%s/asked'\nprintf '%%s\\n' \"$1\" >>'%s/prompts'\n"
		     "sed -n \"${n}p\" '%s/answers'\n", f->dir, f->dir, f->dir, f->dir);
	write_table(f, tab, "root %s 1 prompt transport=sedsim\nhome %s 2 prompt transport=sedsim\n",
		    f->drive, f->drive);

	/* 1 and 3: Enter twice, then the key: asked three times, for range 1 only. */
	power_cycle(f);
	snprintf(cmd, sizeof(cmd), "\n\n%s\n", key);
	person_answers(f, cmd);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, "--state-dir",
			     st, NULL), EXIT_OK);
	assert_int_equal(person_asked(f), 3);
	assert_non_null(strstr(f->err, "empty answer: nothing was tried"));
	assert_non_null(strstr(f->out, "root: "));
	assert_non_null(strstr(f->out, "range 2 unlocked (accepted key, Admin1"));
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);
	assert_int_equal(read_block(f, 1600, back), SEDSIM_IO_OK);
	{
		char path[200], prompts[1024] = "";
		FILE *p;

		snprintf(path, sizeof(path), "%s/prompts", f->dir);
		p = fopen(path, "r");
		assert_non_null(p);
		n = fread(prompts, 1, sizeof(prompts) - 1, p);
		prompts[n] = 0;
		fclose(p);
		assert_non_null(strstr(prompts, "Recovery key (Admin1) for drive "));
		assert_non_null(strstr(prompts, "range 1 (root; 3 tries left this boot)"));
	}

	/* 2: every answer wrong, three runs in one boot: 3 refusals in all, Admin1 keeps 2. */
	power_cycle(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", st);
	assert_int_equal(system(cmd), 0);
	for (int runs = 0; runs < 3; runs++) {
		person_answers(f, "wrong\nwrong\nwrong\nwrong\nwrong\nwrong\n");
		assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask,
				     "--state-dir", st, NULL), EXIT_INCOMPLETE);
		assert_int_equal(person_asked(f), runs ? 0 : 3);
	}
	assert_non_null(strstr(f->err, "3 of Admin1's tries used this boot (prompt-tries=3): not asking again"));
	assert_int_equal(run(f, NULL, "unlock", f->drive, "-k", f->key, "--range", "1", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);

	/* 6: the recovery key in capitals and without its dashes. */
	power_cycle(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", st);
	assert_int_equal(system(cmd), 0);
	for (size_t i = 0, j = 0; i <= strlen(key); i++)
		if (key[i] != '-')
			typed[j++] = (char)(key[i] >= 'a' && key[i] <= 'z' ? key[i] - 'a' + 'A' : key[i]);
	snprintf(cmd, sizeof(cmd), "%s\n", typed);
	person_answers(f, cmd);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, "--state-dir",
			     st, NULL), EXIT_OK);
	assert_int_equal(person_asked(f), 1);
	assert_int_equal(read_block(f, 1600, back), SEDSIM_IO_OK);

	/* 15: stale key files, nobody at the console, three runs: Admin1 keeps its tries. */
	power_cycle(f);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", st);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(chmod(f->bad, 0600), 0);
	write_table(f, tab, "a %s 1 keyfile:%s transport=sedsim\nb %s 2 keyfile:%s transport=sedsim\n",
		    f->drive, f->bad, f->drive, f->bad);
	for (int runs = 0; runs < 3; runs++)
		assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--no-prompt",
				     "--state-dir", st, NULL), EXIT_INCOMPLETE);
	assert_non_null(strstr(f->err, "what is left is kept for the person at the console"));
	/* Then the person, with the right key: it works, and still with a try to spare. */
	snprintf(cmd, sizeof(cmd), "%s\n", key);
	person_answers(f, cmd);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, "--state-dir",
			     st, "--name", "a", NULL), EXIT_OK);
	assert_int_equal(read_block(f, 1100, back), SEDSIM_IO_OK);

	/* 4: a prompt nobody answers ends with SIGTERM, so the agent can take its request down. */
	power_cycle(f);
	write_table(f, tab, "root %s 1 prompt transport=sedsim\n", f->drive);
	write_script(ask, "#!/bin/sh\ntrap 'echo term >\"%s/term\"; exit 1' TERM\nsleep 30 &\nwait\n",
		     f->dir);
	assert_int_equal(run(f, NULL, "unlock-all", "--table", tab, "--askpass", ask, "--deadline", "0",
			     "--prompt-timeout", "2", NULL), EXIT_INCOMPLETE);
	snprintf(cmd, sizeof(cmd), "test -s '%s/term'", f->dir);
	assert_int_equal(system(cmd), 0);
	assert_non_null(strstr(f->out, "no passphrase given in time"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_usage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discover_status, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_unlock_cycle, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lockout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_setup_and_erase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_change_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbr, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mbr_large_image, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revert_psid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sedutil_hash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sedutil512_hash, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyfile_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_help_matches_man, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cmd_help_matches_man, setup, teardown),
		cmocka_unit_test_setup_teardown(test_options_not_taken, setup, teardown),
		cmocka_unit_test_setup_teardown(test_option_conflicts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_more_options, setup, teardown),
		cmocka_unit_test_setup_teardown(test_users_and_access, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lock_verifies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlock_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opaltab_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opaltab_entry_by_entry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlock_all_fallbacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_policy, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyfile_mode, setup, teardown),
		cmocka_unit_test_setup_teardown(test_revert_keep_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_sum, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_lock_on_reset, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_matches_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keygen_passphrase, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_authorized, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unlock_all_person, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_environment, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_group_killed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sigpipe_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_child_no_tty, setup, teardown),
		cmocka_unit_test_setup_teardown(test_opaltab_nul, setup, teardown),
	};

	if (argc != 2) {
		fprintf(stderr, "usage: test_opalctl opalctl.8.scd\n");
		return 1;
	}
	man_page = argv[1];

	return cmocka_run_group_tests(tests, NULL, NULL);
}
