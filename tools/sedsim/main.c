// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim: create and operate a virtual Opal 2 drive kept in a directory.
 *   sedsim create DIR [--blocks N] [--serial S] [--try-limit N] [--vendor V] [--wwn W]
 *   sedsim power-cycle DIR      apply LockOnReset as a power cycle does
 *   sedsim psid DIR             print the PSID (the drive label)
 *   sedsim read DIR LBA COUNT   user data to stdout (fails on locked ranges)
 *   sedsim write DIR LBA COUNT  user data from stdin
 *   sedsim serve DIR NAME       TCMU handler for configfs core/user_N/NAME
 *   sedsim serve-nvme DIR [--port N] [--nqn NQN] [--trace FILE]   NVMe/TCP target on 127.0.0.1
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sedsim.h"

enum { EXIT_USAGE = 1, EXIT_IO = 2, EXIT_LOCKED = 3 };

static int usage(void)
{
	fputs("Usage: sedsim create DIR [--blocks N] [--serial S] [--try-limit N]\n"
	      "                          [--vendor V] [--wwn naa.HEX]\n"
	      "       sedsim power-cycle DIR | psid DIR\n"
	      "       sedsim read DIR LBA COUNT | write DIR LBA COUNT\n"
	      "       sedsim serve DIR NAME\n"
	      "       sedsim serve-nvme DIR [--port N] [--nqn NQN] [--trace FILE]\n", stderr);
	return EXIT_USAGE;
}

static bool num(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static int io(const char *dir, const char *lba_s, const char *count_s, bool write)
{
	struct sedsim *sim;
	uint64_t lba, count;
	uint8_t buf[SEDSIM_BLOCK];
	int rc;

	if (!num(lba_s, &lba) || !num(count_s, &count))
		return usage();
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

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	if (!strcmp(argv[1], "create")) {
		struct sedsim_config cfg = { .blocks = 2048, .serial = "SEDSIM0001" };
		uint64_t v;
		int rc;

		for (int i = 3; i < argc; i += 2) {
			if (i + 1 >= argc)
				return usage();
			if (!strcmp(argv[i], "--blocks") && num(argv[i + 1], &v) && v)
				cfg.blocks = v;
			else if (!strcmp(argv[i], "--serial"))
				cfg.serial = argv[i + 1];
			else if (!strcmp(argv[i], "--try-limit") && num(argv[i + 1], &v) && v <= 100)
				cfg.try_limit = (uint32_t)v;
			else if (!strcmp(argv[i], "--vendor"))
				cfg.vendor = argv[i + 1];
			else if (!strcmp(argv[i], "--wwn"))
				cfg.wwn = argv[i + 1];
			else
				return usage();
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
	if (!strcmp(argv[1], "serve") && argc == 4)
		return sedsim_serve_tcmu(argv[2], argv[3], 10);
	if (!strcmp(argv[1], "serve-nvme")) {
		const char *nqn = SEDSIM_NVME_NQN, *trace = NULL;
		uint64_t port = SEDSIM_NVME_PORT;

		for (int i = 3; i < argc; i += 2) {
			if (i + 1 >= argc)
				return usage();
			if (!strcmp(argv[i], "--port") && num(argv[i + 1], &port) && port && port <= 65535)
				continue;
			if (!strcmp(argv[i], "--nqn") && *argv[i + 1])
				nqn = argv[i + 1];
			else if (!strcmp(argv[i], "--trace") && *argv[i + 1])
				trace = argv[i + 1];
			else
				return usage();
		}
		return sedsim_serve_nvme_tcp(argv[2], (uint16_t)port, nqn, trace);
	}
	if ((!strcmp(argv[1], "read") || !strcmp(argv[1], "write")) && argc == 5)
		return io(argv[2], argv[3], argv[4], !strcmp(argv[1], "write"));
	return usage();
}
