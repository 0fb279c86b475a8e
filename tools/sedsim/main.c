// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim: create and operate a virtual Opal 2 drive kept in a directory.
 *   sedsim create DIR [--blocks N] [--serial S] [--try-limit N] [--vendor V] [--wwn W]
 *                     [--lock-on-reset power-cycle|power-cycle,hardware-reset]
 *   sedsim power-cycle DIR      apply LockOnReset as a power cycle does
 *   sedsim hw-reset DIR         apply LockOnReset as a TCG Hardware Reset does
 *   sedsim psid DIR             print the PSID (the drive label)
 *   sedsim read DIR LBA COUNT   user data to stdout (fails on locked ranges)
 *   sedsim write DIR LBA COUNT  user data from stdin
 *   sedsim serve DIR NAME       TCMU handler for configfs core/user_N/NAME
 *   sedsim serve-nvme DIR [--port N] [--nqn NQN] [--trace FILE]   NVMe/TCP target on 127.0.0.1
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sedsim.h"

enum { EXIT_USAGE = 1, EXIT_IO = 2, EXIT_LOCKED = 3 };

static void usage(FILE *o)
{
	fputs("Usage: sedsim create DIR [--blocks N] [--serial S] [--try-limit N]\n"
	      "                          [--vendor V] [--wwn naa.HEX] [--lock-on-reset TYPES]\n"
	      "       sedsim power-cycle DIR | hw-reset DIR | psid DIR\n"
	      "       sedsim read DIR LBA COUNT | write DIR LBA COUNT\n"
	      "       sedsim serve DIR NAME\n"
	      "       sedsim serve-nvme DIR [--port N] [--nqn NQN] [--trace FILE]\n"
	      "       sedsim --help | --version\n"
	      "A virtual TCG Opal 2 drive kept in the directory DIR (see sedsim(8)).\n"
	      "  --blocks N       media size in 512-byte blocks (default 2048)\n"
	      "  --serial S       serial number, up to 20 characters (default SEDSIM0001)\n"
	      "  --try-limit N    every PIN's TryLimit: 1 to 100, or 0 for no limit (default 5)\n"
	      "  --vendor V       the SCSI face's vendor, 1 to 8 characters (default FDEKIT)\n"
	      "  --wwn naa.HEX    the SCSI face's NAA designator (default: from the serial)\n"
	      "  --lock-on-reset TYPES  the reset types LockOnReset and DoneOnReset take:\n"
	      "                   power-cycle,hardware-reset (default) or power-cycle\n"
	      "  --port N         serve-nvme: the TCP port on 127.0.0.1 (default 4420)\n"
	      "  --nqn NQN        serve-nvme: the subsystem NQN\n"
	      "  --trace FILE     serve-nvme: log every command to FILE\n"
	      "Exit status: 0 ok, 1 usage, 2 I/O or no such drive, 3 the range is locked.\n", o);
}

/* One line saying what is wrong with the command line; exit status 1. */
static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("sedsim: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(": see sedsim --help\n", stderr);
	return EXIT_USAGE;
}

static bool num(const char *s, uint64_t *v)
{
	return opal_parse_u64(s, 0, UINT64_MAX, v);
}

static int io(const char *dir, const char *lba_s, const char *count_s, bool write)
{
	struct sedsim *sim;
	uint64_t lba, count;
	uint8_t buf[SEDSIM_BLOCK];
	int rc;

	if (!num(lba_s, &lba))
		return bad_usage("%s: LBA '%s' is not a block number", write ? "write" : "read", lba_s);
	if (!num(count_s, &count))
		return bad_usage("%s: COUNT '%s' is not a number of blocks", write ? "write" : "read",
				 count_s);
	rc = sedsim_open(dir, false, &sim);
	if (rc) {
		fprintf(stderr, "sedsim: cannot open %s: %s: create it with `sedsim create`\n", dir,
			strerror(-rc));
		return EXIT_IO;
	}
	for (uint64_t i = 0; i < count; i++) {
		enum sedsim_io_status st;

		if (write && fread(buf, 1, sizeof(buf), stdin) != sizeof(buf)) {
			fprintf(stderr, "sedsim: write: short input at block %" PRIu64 ": give whole 512-byte blocks\n", lba + i);
			sedsim_close(sim);
			return EXIT_IO;
		}
		st = write ? sedsim_write(sim, lba + i, 1, buf) : sedsim_read(sim, lba + i, 1, buf);
		if (st) {
			fprintf(stderr, "sedsim: %s LBA %" PRIu64 ": %s\n", write ? "write" : "read", lba + i,
				st == SEDSIM_IO_LOCKED ? "data protection error: range locked: unlock it first" :
				st == SEDSIM_IO_RANGE ? "beyond the end of the media" : "I/O error");
			sedsim_close(sim);
			return st == SEDSIM_IO_LOCKED ? EXIT_LOCKED : EXIT_IO;
		}
		if (!write && fwrite(buf, 1, sizeof(buf), stdout) != sizeof(buf)) {
			sedsim_close(sim);
			return EXIT_IO;
		}
	}
	sedsim_close(sim);
	return 0;
}

/* Options come in pairs: the name, then its value. */
static bool option_value(int argc, char **argv, int i, const char *cmd)
{
	if (strncmp(argv[i], "--", 2)) {
		bad_usage("%s: unexpected argument '%s'", cmd, argv[i]);
		return false;
	}
	if (i + 1 >= argc) {
		bad_usage("%s: %s needs a value", cmd, argv[i]);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("sedsim %s\n", FDEKIT_VERSION);
		return 0;
	}
	if (argc < 2)
		return bad_usage("no command given");
	if (strcmp(argv[1], "create") && strcmp(argv[1], "power-cycle") && strcmp(argv[1], "psid") &&
	    strcmp(argv[1], "hw-reset") &&
	    strcmp(argv[1], "read") && strcmp(argv[1], "write") && strcmp(argv[1], "serve") &&
	    strcmp(argv[1], "serve-nvme"))
		return bad_usage("unknown command '%s'", argv[1]);
	if (argc < 3)
		return bad_usage("%s: needs the drive's directory", argv[1]);
	if (!strcmp(argv[1], "create")) {
		struct sedsim_config cfg = { .blocks = 2048, .serial = "SEDSIM0001" };
		uint64_t v;
		int rc;

		for (int i = 3; i < argc; i += 2) {
			const char *o = argv[i], *val;

			if (!option_value(argc, argv, i, "create"))
				return EXIT_USAGE;
			val = argv[i + 1];
			if (!strcmp(o, "--blocks")) {
				if (!num(val, &v) || !v)
					return bad_usage("create: --blocks '%s': give a positive number of 512-byte blocks", val);
				cfg.blocks = v;
			} else if (!strcmp(o, "--serial")) {
				if (!*val || strlen(val) > OPAL_SERIAL_MAX)
					return bad_usage("create: --serial '%s': give 1 to %d characters", val,
							 OPAL_SERIAL_MAX);
				cfg.serial = val;
			} else if (!strcmp(o, "--try-limit")) {
				if (!num(val, &v) || v > 100)
					return bad_usage("create: --try-limit '%s': give 1 to 100, or 0 for no limit", val);
				cfg.try_limit = (uint32_t)v;
				cfg.no_try_limit = !v;
			} else if (!strcmp(o, "--vendor")) {
				cfg.vendor = val;
			} else if (!strcmp(o, "--wwn")) {
				cfg.wwn = val;
			} else if (!strcmp(o, "--lock-on-reset")) {
				if (strcmp(val, "power-cycle") && strcmp(val, "power-cycle,hardware-reset"))
					return bad_usage("create: --lock-on-reset '%s': give power-cycle,hardware-reset or power-cycle", val);
				cfg.no_hw_reset = !strcmp(val, "power-cycle");
			} else {
				return bad_usage("create: unknown option '%s'", o);
			}
		}
		if (cfg.vendor && !sedsim_valid_vendor(cfg.vendor)) {
			fprintf(stderr, "sedsim: --vendor '%s': give 1 to 8 printable ASCII characters, not starting with a blank\n",
				cfg.vendor);
			return EXIT_USAGE;
		}
		if (cfg.wwn && sedsim_parse_wwn(cfg.wwn, (uint8_t[16]){ 0 }, &(size_t){ 0 })) {
			fprintf(stderr, "sedsim: --wwn '%s': give an NAA designator: 16 hex digits starting with 2, 3 or 5, or 32 starting with 6 (\"naa.\" in front or not), not all zero\n",
				cfg.wwn);
			return EXIT_USAGE;
		}
		rc = sedsim_create(argv[2], &cfg);
		if (rc) {
			fprintf(stderr, "sedsim: cannot create a drive in %s: %s: give an existing empty directory\n",
				argv[2], strerror(-rc));
			return EXIT_IO;
		}
		return 0;
	}
	if (!strcmp(argv[1], "power-cycle") || !strcmp(argv[1], "psid")) {
		struct sedsim *sim;
		char psid[64];
		int rc;

		if (!strcmp(argv[1], "psid")) {
			rc = sedsim_read_psid(argv[2], psid, sizeof(psid));
			if (!rc)
				printf("%s\n", psid);
		} else {
			rc = sedsim_open(argv[2], true, &sim);
			sedsim_close(sim);
		}
		if (rc) {
			fprintf(stderr, "sedsim: %s %s: %s: create it with `sedsim create`\n", argv[1],
				argv[2], strerror(-rc));
			return EXIT_IO;
		}
		return 0;
	}
	if (!strcmp(argv[1], "hw-reset")) {
		struct sedsim *sim;
		int rc;

		if (argc != 3)
			return bad_usage("hw-reset: give DIR alone");
		rc = sedsim_open(argv[2], false, &sim);
		if (!rc)
			rc = sedsim_hw_reset(sim);
		sedsim_close(sim);
		if (rc) {
			fprintf(stderr, "sedsim: hw-reset %s: %s: create it with `sedsim create`\n",
				argv[2], strerror(-rc));
			return EXIT_IO;
		}
		return 0;
	}
	if (!strcmp(argv[1], "serve")) {
		if (argc != 4)
			return bad_usage("serve: give DIR and the TCMU device's NAME (configfs core/user_N/NAME)");
		return sedsim_serve_tcmu(argv[2], argv[3], 10);
	}
	if (!strcmp(argv[1], "serve-nvme")) {
		const char *nqn = SEDSIM_NVME_NQN, *trace = NULL;
		uint64_t port = SEDSIM_NVME_PORT;

		for (int i = 3; i < argc; i += 2) {
			const char *o = argv[i], *val;

			if (!option_value(argc, argv, i, "serve-nvme"))
				return EXIT_USAGE;
			val = argv[i + 1];
			if (!strcmp(o, "--port")) {
				if (!num(val, &port) || !port || port > 65535)
					return bad_usage("serve-nvme: --port '%s': give 1 to 65535", val);
			} else if (!strcmp(o, "--nqn") || !strcmp(o, "--trace")) {
				if (!*val)
					return bad_usage("serve-nvme: %s needs a value", o);
				*(!strcmp(o, "--nqn") ? &nqn : &trace) = val;
			} else {
				return bad_usage("serve-nvme: unknown option '%s'", o);
			}
		}
		return sedsim_serve_nvme_tcp(argv[2], (uint16_t)port, nqn, trace);
	}
	if (argc != 5)
		return bad_usage("%s: give DIR LBA COUNT", argv[1]);
	return io(argv[2], argv[3], argv[4], !strcmp(argv[1], "write"));
}
