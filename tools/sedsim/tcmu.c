// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim behind the kernel's TCMU (target_core_user): the userspace handler
 * for a user-backed LUN. It maps /dev/uioN, takes SCSI commands from the
 * command ring and answers them with sedsim_scsi_exec. Starting the handler
 * is a power-on of the drive (LockOnReset applies).
 */
#include <dirent.h>
#include <inttypes.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* glibc already defines struct iovec; the uapi header would redefine it. */
#define iovec tcmu_iovec
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"	/* flexible array in a union */
#include <linux/target_core_user.h>
#pragma GCC diagnostic pop
#undef iovec

#include "sedsim.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* /sys/class/uio/uioN/name is "tcm-user/<hba>/<name>/<config>". */
static int find_uio(const char *name, char *dev, size_t devlen, uint64_t *size)
{
	DIR *d = opendir("/sys/class/uio");
	struct dirent *e;
	int found = -ENOENT;

	if (!d)
		return -errno;
	while (found && (e = readdir(d))) {
		char path[512], buf[512], *p;
		FILE *f;

		if (strncmp(e->d_name, "uio", 3))
			continue;
		snprintf(path, sizeof(path), "/sys/class/uio/%s/name", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		p = fgets(buf, sizeof(buf), f);
		fclose(f);
		if (!p || strncmp(buf, "tcm-user/", 9))
			continue;
		p = strchr(buf + 9, '/');
		if (!p || strncmp(p + 1, name, strlen(name)) || p[1 + strlen(name)] != '/')
			continue;
		snprintf(path, sizeof(path), "/sys/class/uio/%s/maps/map0/size", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%" SCNx64, size) == 1) {
			snprintf(dev, devlen, "/dev/%s", e->d_name);
			found = 0;
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

static size_t cdb_length(uint8_t op)
{
	switch (op >> 5) {
	case 0: return 6;
	case 1:
	case 2: return 10;
	case 4: return 16;
	case 5: return 12;
	default: return 16;
	}
}

static bool data_out(uint8_t op)
{
	return op == 0x0a || op == 0x2a || op == 0x8a || op == 0xb5;
}

static void handle(struct sedsim *sim, uint8_t *map, struct tcmu_mailbox *mb,
		   struct tcmu_cmd_entry *ent)
{
	const uint8_t *cdb = map + ent->req.cdb_off;
	struct sedsim_scsi_cmd c = { 0 };
	uint32_t iov_cnt = ent->req.iov_cnt;
	const uint8_t *iov_raw = (const uint8_t *)ent + offsetof(struct tcmu_cmd_entry, req.iov);
	struct tcmu_iovec iov[64];
	size_t total = 0, off = 0;
	uint8_t cdbcopy[16];

	if (iov_cnt > 64) {
		ent->rsp.scsi_status = 0x08;	/* BUSY: sd retries with less */
		return;
	}
	/* The ring entry is packed: copy the iovecs out before use. */
	memcpy(iov, iov_raw, iov_cnt * sizeof(iov[0]));

	c.cdb_len = cdb_length(cdb[0]);
	memcpy(cdbcopy, cdb, c.cdb_len);
	c.cdb = cdbcopy;
	for (uint32_t i = 0; i < iov_cnt; i++)
		total += iov[i].iov_len;
	c.buf = calloc(1, total ? total : 1);
	c.len = total;
	if (!c.buf) {
		ent->rsp.scsi_status = 0x08;	/* BUSY */
		return;
	}
	if (data_out(cdb[0]))
		for (uint32_t i = 0; i < iov_cnt; i++) {
			memcpy(c.buf + off, map + (uintptr_t)iov[i].iov_base, iov[i].iov_len);
			off += iov[i].iov_len;
		}
	sedsim_scsi_exec(sim, &c);
	if (!data_out(cdb[0])) {
		off = 0;
		for (uint32_t i = 0; i < iov_cnt && off < c.data_len; i++) {
			size_t n = iov[i].iov_len < c.data_len - off ? iov[i].iov_len : c.data_len - off;

			memcpy(map + (uintptr_t)iov[i].iov_base, c.buf + off, n);
			off += n;
		}
	}
	/* rsp overlays req: everything needed from req was read above. */
	ent->rsp.scsi_status = c.status;
	if (c.status == 0x02)
		memcpy(ent->rsp.sense_buffer, c.sense, sizeof(c.sense));
	if (!data_out(cdb[0]) && (mb->flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN)) {
		ent->hdr.uflags |= TCMU_UFLAG_READ_LEN;
		ent->rsp.read_len = (uint32_t)c.data_len;
	}
	explicit_bzero(c.buf, c.len);
	free(c.buf);
}

int sedsim_serve_tcmu(const char *dir, const char *name, unsigned int wait_s)
{
	struct sedsim *sim;
	char dev[300];
	uint64_t size = 0;
	uint8_t *map;
	struct tcmu_mailbox *mb;
	struct sigaction sa = { .sa_handler = on_signal };
	int fd, rc;

	rc = sedsim_open(dir, true, &sim);
	if (rc) {
		fprintf(stderr, "sedsim: cannot open %s: %s: create it with `sedsim create`\n", dir,
			strerror(-rc));
		return 2;
	}
	/* The uio device appears once configfs `enable` is written. */
	for (unsigned int i = 0; (rc = find_uio(name, dev, sizeof(dev), &size)) && i < wait_s * 10; i++)
		usleep(100000);
	if (rc) {
		fprintf(stderr, "sedsim: no TCMU device named %s under /sys/class/uio: create and enable core/user_N/%s in configfs first\n",
			name, name);
		sedsim_close(sim);
		return 2;
	}
	fd = open(dev, O_RDWR | O_CLOEXEC);
	map = fd < 0 ? MAP_FAILED : mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "sedsim: cannot map %s: %s\n", dev, strerror(errno));
		if (fd >= 0)
			close(fd);
		sedsim_close(sim);
		return 2;
	}
	mb = (struct tcmu_mailbox *)map;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fprintf(stderr, "sedsim: serving %s on %s\n", dir, dev);
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint32_t irq;

		/*
		 * Commands queued before we opened the device raised their
		 * event already: look at the ring at start and on every
		 * timeout, not only on events.
		 */
		rc = poll(&p, 1, 200);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0 && read(fd, &irq, sizeof(irq)) != sizeof(irq))
			continue;
		if (__atomic_load_n(&mb->cmd_tail, __ATOMIC_ACQUIRE) ==
		    __atomic_load_n(&mb->cmd_head, __ATOMIC_ACQUIRE))
			continue;
		for (;;) {
			uint32_t tail = __atomic_load_n(&mb->cmd_tail, __ATOMIC_ACQUIRE);
			uint32_t head = __atomic_load_n(&mb->cmd_head, __ATOMIC_ACQUIRE);
			struct tcmu_cmd_entry *ent;
			uint32_t len;

			if (tail == head)
				break;
			ent = (struct tcmu_cmd_entry *)(map + mb->cmdr_off + tail);
			len = ent->hdr.len_op & ~(uint32_t)TCMU_OP_MASK;
			if ((ent->hdr.len_op & TCMU_OP_MASK) == TCMU_OP_CMD)
				handle(sim, map, mb, ent);
			else if ((ent->hdr.len_op & TCMU_OP_MASK) != TCMU_OP_PAD)
				ent->hdr.uflags |= TCMU_UFLAG_UNKNOWN_OP;
			__atomic_store_n(&mb->cmd_tail, (tail + len) % mb->cmdr_size, __ATOMIC_RELEASE);
		}
		irq = 0;
		if (write(fd, &irq, sizeof(irq)) != sizeof(irq))
			break;
	}
	munmap(map, size);
	close(fd);
	sedsim_close(sim);
	return 0;
}
