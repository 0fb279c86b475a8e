// SPDX-License-Identifier: GPL-2.0-only
/*
 * nvme-subsys-reset: ask the kernel's NVMe driver for an NVM Subsystem
 * Reset of the controller behind /dev/nvmeN (NVME_IOCTL_SUBSYS_RESET, what
 * `nvme subsystem-reset` does). The driver writes "NVMe" to the NSSR
 * register (a Property Set over fabrics) and schedules a reset of its own
 * controller; this returns once the request is made, not once the
 * controller is live again.
 *
 *   nvme-subsys-reset /dev/nvmeN
 *
 * Exit status: 0 requested; 1 usage; 2 the device cannot be opened; 3 the
 * ioctl failed (ENOTTY: the controller does not report NSSRS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/nvme_ioctl.h>

int main(int argc, char **argv)
{
	int fd, rc;

	if (argc != 2) {
		fprintf(stderr, "usage: nvme-subsys-reset /dev/nvmeN\n");
		return 1;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "nvme-subsys-reset: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	rc = ioctl(fd, NVME_IOCTL_SUBSYS_RESET);
	if (rc < 0) {
		fprintf(stderr, "nvme-subsys-reset: %s: NVME_IOCTL_SUBSYS_RESET: %s\n", argv[1],
			strerror(errno));
		close(fd);
		return 3;
	}
	close(fd);
	return 0;
}
